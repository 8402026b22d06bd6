"""Draw detections on an image (Pillow only; runs on the PYNQ 3.x image)."""
from __future__ import annotations

import os

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["class_color", "draw_detections"]

# darknet image.c: colors[6][3] and get_color(), the per-class palette of draw_detections
_COLORS = ((1, 0, 1), (0, 0, 1), (0, 1, 1), (0, 1, 0), (1, 1, 0), (1, 0, 0))


def _get_color(c: int, x: int, max_: int) -> float:
    ratio = (x / max_) * 5
    i, j = int(np.floor(ratio)), int(np.ceil(ratio))
    ratio -= i
    return (1 - ratio) * _COLORS[i][c] + ratio * _COLORS[j][c]


def class_color(class_id: int, num_classes: int = 80) -> tuple:
    """darknet's per-class color: ``offset = class_id*123457 % classes``, RGB from ``get_color`` (0..255 ints)."""
    num_classes = max(int(num_classes), int(class_id) + 1, 1)
    offset = int(class_id) * 123457 % num_classes
    return tuple(int(round(255 * _get_color(ch, offset, num_classes))) for ch in (2, 1, 0))


def draw_detections(img_u8: np.ndarray, detections, out_path=None, num_classes: int = 80) -> Image.Image:
    """Draw boxes and ``"label score"`` captions (Pillow default font) in darknet's per-class colors.

    Args:
        img_u8: uint8 [H, W, 3] RGB image (the original, not the network input).
        detections: list of dicts with ``"label"``, ``"class_id"``, ``"score"``, ``"box"`` ([x1, y1, x2, y2]
            pixels of this image), as returned by :func:`host.yolo.detect`.
        out_path: if given, the drawing is saved there as PNG (str or os.PathLike).
        num_classes: size of the palette (80 for COCO).
    Returns:
        PIL.Image.Image (mode RGB) with the drawing; the input array is not modified.
    Raises:
        ValueError: img_u8 is not uint8 [H, W, 3]; OSError: the PNG cannot be written.
    """
    a = np.asarray(img_u8)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"draw_detections expects uint8 [H, W, 3], got {a.dtype} {a.shape}")
    im = Image.fromarray(np.ascontiguousarray(a), "RGB")
    d = ImageDraw.Draw(im)
    font = ImageFont.load_default()
    h, w = a.shape[:2]
    lw = max(1, int(round(h * 0.006)))           # darknet: width = im.h * .006
    for det in detections:
        x1, y1, x2, y2 = (float(v) for v in det["box"])
        x1, x2 = sorted((min(max(x1, 0), w - 1), min(max(x2, 0), w - 1)))
        y1, y2 = sorted((min(max(y1, 0), h - 1), min(max(y2, 0), h - 1)))
        color = class_color(int(det.get("class_id", 0)), num_classes)
        d.rectangle([x1, y1, x2, y2], outline=color, width=lw)
        text = f"{det['label']} {float(det['score']):.2f}"
        tb = d.textbbox((0, 0), text, font=font)
        tw, th = tb[2] - tb[0], tb[3] - tb[1]
        ty = y1 - th - 4 if y1 - th - 4 >= 0 else y1
        d.rectangle([x1, ty, x1 + tw + 4, ty + th + 4], fill=color)
        d.text((x1 + 2, ty + 2 - tb[1]), text, fill=(0, 0, 0), font=font)
    if out_path is not None:
        im.save(os.fspath(out_path), format="PNG")
    return im

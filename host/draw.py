"""Draw detections on an image (Pillow only; runs on the PYNQ 3.x image)."""
from __future__ import annotations

import os

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .fileio import atomic_path

__all__ = ["class_color", "draw_detections", "label_boxes"]

# darknet image.c: colors[6][3] and get_color(), the per-class palette of draw_detections
_COLORS = ((1, 0, 1), (0, 0, 1), (0, 1, 1), (0, 1, 0), (1, 1, 0), (1, 0, 0))
_PAD = 2                                          # pixels of label background around the caption text


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


def _caption(det) -> str:
    return f"{det['label']} {float(det['score']):.2f}"


def _clip_box(det, w: int, h: int) -> tuple:
    x1, y1, x2, y2 = (float(v) for v in det["box"])
    x1, x2 = sorted((min(max(x1, 0), w - 1), min(max(x2, 0), w - 1)))
    y1, y2 = sorted((min(max(y1, 0), h - 1), min(max(y2, 0), h - 1)))
    return x1, y1, x2, y2


def label_boxes(detections, img_w: int, img_h: int, font=None) -> list:
    """Where :func:`draw_detections` puts each caption: rectangles that do not overlap each other and lie inside
    the image whenever that is possible.

    For each detection, in the given order, the first candidate that overlaps no earlier caption is taken: just
    above the box, just below it, inside its top edge, inside its bottom edge (left-aligned with the box); the same
    four moved one caption width left, then right; then all of these moved up or down by k caption heights,
    k = 1, 2, ... (nearest first). Every candidate is clamped into the image. If all overlap (more captions than
    the image can hold), the one with the least overlap area is used.

    Args:
        detections: list of dicts with ``"label"``, ``"score"``, ``"box"`` ([x1, y1, x2, y2] image pixels).
        img_w, img_h: image size in pixels.
        font: Pillow font the captions are drawn with (default ``ImageFont.load_default()``).
    Returns:
        list of (x1, y1, x2, y2) int rectangles, one per detection, end-exclusive pixels: the caption's filled
        background (text plus a 2-pixel margin).
    """
    font = font or ImageFont.load_default()
    d = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    placed = []
    for det in detections:
        bx1, by1, bx2, by2 = _clip_box(det, img_w, img_h)
        tb = d.textbbox((0, 0), _caption(det), font=font)
        lw, lh = int(tb[2] - tb[0]) + 2 * _PAD, int(tb[3] - tb[1]) + 2 * _PAD
        lw, lh = min(lw, img_w), min(lh, img_h)
        x0 = int(round(bx1))
        bases = [int(round(by1)) - lh, int(round(by2)) + 1, int(round(by1)), int(round(by2)) + 1 - lh]
        shifts = [0] + [s for k in range(1, img_h // max(lh, 1) + 2) for s in (-k * lh, k * lh)]
        xy = np.array([(x0 + dx, y + sy) for sy in shifts for dx in (0, -lw, lw) for y in bases], np.int64)
        xy[:, 0] = np.clip(xy[:, 0], 0, img_w - lw)
        xy[:, 1] = np.clip(xy[:, 1], 0, img_h - lh)
        rects = np.concatenate([xy, xy + (lw, lh)], axis=1)                       # [M, 4] candidates, in order
        if placed:
            q = np.array(placed, np.int64)                                         # [N, 4] labels so far
            ix = np.minimum(rects[:, None, 2], q[None, :, 2]) - np.maximum(rects[:, None, 0], q[None, :, 0])
            iy = np.minimum(rects[:, None, 3], q[None, :, 3]) - np.maximum(rects[:, None, 1], q[None, :, 1])
            ov = (np.maximum(ix, 0) * np.maximum(iy, 0)).sum(axis=1)             # [M] overlap area
            free = np.flatnonzero(ov == 0)
            best = tuple(int(v) for v in rects[free[0] if free.size else int(np.argmin(ov))])
        else:
            best = tuple(int(v) for v in rects[0])
        placed.append(best)
    return placed


def draw_detections(img_u8: np.ndarray, detections, out_path=None, num_classes: int = 80) -> Image.Image:
    """Draw boxes and ``"label score"`` captions (Pillow default font) in darknet's per-class colors; captions are
    placed by :func:`label_boxes` so they do not overlap each other and stay inside the image.

    Args:
        img_u8: uint8 [H, W, 3] RGB image (the original, not the network input).
        detections: list of dicts with ``"label"``, ``"class_id"``, ``"score"``, ``"box"`` ([x1, y1, x2, y2]
            pixels of this image), as returned by :func:`host.yolo.detect`.
        out_path: if given, the drawing is saved there as PNG (str or os.PathLike), atomically
            (:func:`host.fileio.atomic_path`: the old file stays whole if the write fails).
        num_classes: size of the palette (the model's class count; 80 for COCO).
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
        color = class_color(int(det.get("class_id", 0)), num_classes)
        d.rectangle(_clip_box(det, w, h), outline=color, width=lw)
    for det, (x1, y1, x2, y2) in zip(detections, label_boxes(detections, w, h, font)):
        color = class_color(int(det.get("class_id", 0)), num_classes)
        d.rectangle([x1, y1, x2 - 1, y2 - 1], fill=color)
        tb = d.textbbox((0, 0), _caption(det), font=font)
        d.text((x1 + _PAD - tb[0], y1 + _PAD - tb[1]), _caption(det), fill=(0, 0, 0), font=font)
    if out_path is not None:
        with atomic_path(os.fspath(out_path)) as tmp:      # (a reader never sees half a PNG)
            im.save(tmp, format="PNG")
    return im

"""Detections from the output of a YOLO ONNX export whose decode is part of the graph (run on the host by
:func:`host.tail.run_tail`, then decoded here: :class:`host.decode.Decoder`), as the YOLOv5, YOLOX and YOLOv8
exporters write it:

* ``"obj"`` -- YOLOv5 (``models/yolo.py`` ``Detect`` in export mode) and YOLOX (``decode_in_inference``): float
  [1, N, 5 + classes] per candidate: centre x, centre y, width, height in network-input pixels, objectness, class
  probabilities (sigmoid already applied). The score of class j is ``objectness * p_j`` (YOLOv5
  ``non_max_suppression``: ``conf = obj_conf * cls_conf``, candidates with ``objectness > conf_thres``).
* ``"noobj"`` -- YOLOv8 (Ultralytics ``Detect`` with DFL): float [1, 4 + classes, N]: the same box fields, then
  the class probabilities, no objectness.

The boxes are mapped from the network input to the original image by undoing the pre-processing the export's
entry names (``resize``, :data:`host.preprocess.RESIZE_MODES`): Ultralytics' centred letterbox (YOLOv5, YOLOv8),
YOLOX's top-left letterbox, or darknet's stretch (the two axes' ratios).
Per-class greedy NMS and the detection list are those of the darknet path (:func:`host.yolo.nms`,
:func:`host.yolo.listing`). numpy only (PYNQ image).
"""
from __future__ import annotations

import numpy as np

from .preprocess import boxes_to_image
from .yolo import listing, nms

FORMATS = ("obj", "noobj")


def output_format(shape, classes: int) -> str | None:
    """The export format of an output of shape ``shape`` for ``classes`` classes: ``"obj"`` for [1, N, 5 + classes],
    ``"noobj"`` for [1, 4 + classes, N], None for anything else."""
    shape = [int(d) for d in shape]
    if len(shape) != 3 or shape[0] != 1:
        return None
    if shape[2] == 5 + classes:
        return "obj"
    if shape[1] == 4 + classes:
        return "noobj"
    return None


def detect_exported(out: np.ndarray, fmt: str, net_w: int, net_h: int, img_w: int, img_h: int, names,
                    thresh: float = 0.25, nms_thresh: float = 0.45, resize: str = "stretch") -> list:
    """Detections of one frame from an export's decoded output.

    Args:
        out: float [1, N, 5 + classes] (``fmt="obj"``) or [1, 4 + classes, N] (``"noobj"``), see the module text.
        fmt: one of :data:`FORMATS` (:func:`output_format` chooses it from the shape).
        net_w, net_h: network input size in pixels; img_w, img_h: the original image's.
        names: class names, at least ``classes`` of them.
        thresh: score threshold (objectness first, for ``"obj"``); nms_thresh: IoU threshold of the per-class NMS.
        resize: how the image became the input (:data:`host.preprocess.RESIZE_MODES`), undone on the boxes.
    Returns:
        the list of :func:`host.yolo.listing`: ``{"label", "class_id", "score", "box": [x1, y1, x2, y2]}`` in pixels
        of the original image, sorted by score.
    Raises:
        ValueError: an unknown format, an output of another shape, or too few names.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; one of {FORMATS}")
    a = np.asarray(out, np.float32)
    if a.ndim != 3 or a.shape[0] != 1:
        raise ValueError(f"exported YOLO output must be [1, N, 5 + classes] or [1, 4 + classes, N], got {a.shape}")
    a = a[0] if fmt == "obj" else a[0].T
    nc = a.shape[1] - (5 if fmt == "obj" else 4)
    if nc < 1 or len(names) < nc:
        raise ValueError(f"{len(names)} class names for an output of {a.shape[1]} fields ({fmt}: {nc} classes)")
    if fmt == "obj":
        keep = a[:, 4] > np.float32(thresh)
        probs = a[keep, 5:] * a[keep, 4:5]
    else:
        keep = a[:, 4:].max(axis=1) > np.float32(thresh)
        probs = a[keep, 4:].copy()
    if not keep.any():
        return []
    c = a[keep, :4]
    boxes = boxes_to_image(np.stack([c[:, 0] - c[:, 2] / 2, c[:, 1] - c[:, 3] / 2, c[:, 0] + c[:, 2] / 2,
                                     c[:, 1] + c[:, 3] / 2], axis=1), img_w, img_h, net_w, net_h, resize)
    probs[probs <= np.float32(thresh)] = 0.0
    return listing(boxes, nms(boxes, probs, nms_thresh), names, thresh, img_w, img_h)


def load_consts(path) -> dict:
    """The host tail's constants ({name: array}) from the package's ``tail_consts.npz``."""
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


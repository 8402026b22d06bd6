"""Host-side YOLO post-processing: decode the raw head tensors, darknet NMS, detection list.

Follows AlexeyAB darknet (``src/yolo_layer.c``, ``src/box.c``, ``src/image.c``) with ``new_coords=0`` (the
YOLOv4-tiny cfg):

* ``forward_yolo_layer``: logistic on x, y, objectness and class logits; ``x = x*scale_x_y - 0.5*(scale_x_y-1)``;
* ``get_yolo_box``: ``bx = (col + x)/W``, ``by = (row + y)/H``, ``bw = exp(tw)*anchor_w/net_w``,
  ``bh = exp(th)*anchor_h/net_h`` (relative to the network input; clipped to 10,000, a box wider than any image,
  so that a head of any magnitude gives finite boxes: darknet's float ``exp`` would give inf);
* ``get_yolo_detections``: keep a (cell, anchor) if ``objectness > thresh``; ``prob[j] = objectness*sigmoid(cls_j)``
  set to 0 where ``<= thresh``; ``correct_yolo_boxes`` without letterbox leaves the relative box unchanged;
* ``do_nms_sort``: per class, sort by that class's probability, zero the later boxes overlapping a kept one;
* ``draw_detections_v3``: print every class whose probability exceeds ``thresh``; box corners clipped to
  ``[0, im.w-1] x [0, im.h-1]``.

:func:`decode` reads a float head whole; :func:`decode_codes` reads a quantized one's candidates only (the objectness
codes against an integer gate, :func:`sigmoid_gate`, then the channels of the (cell, anchor) pairs above it) and gives
the same result bit for bit (:mod:`host.decode`).

Runs on the PYNQ 3.x image: numpy only (no onnx, scipy, cv2 or ``generator``). Vectorized; the only Python loops
are over heads, over classes that have a candidate, and over the (few) candidates of one class in greedy NMS.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["YoloHead", "decode", "decode_cells", "decode_codes", "sigmoid_gate", "code_range", "nms", "detect",
           "check_heads", "finish", "listing"]


@dataclass
class YoloHead:
    """Parameters of one darknet ``[yolo]`` layer.

    anchors: every anchor of the cfg as (w, h) in network-input pixels (darknet ``l.biases``);
    mask: indices into ``anchors`` used by this head, in channel order; classes: number of classes;
    scale_x_y: darknet ``scale_x_y`` (1.05 in yolov4-tiny.cfg, 1.0 = plain YOLOv3 decoding).
    """
    anchors: list = field(default_factory=list)
    mask: list = field(default_factory=list)
    classes: int = 80
    scale_x_y: float = 1.0

    def __post_init__(self):
        self.anchors = [(float(a[0]), float(a[1])) for a in self.anchors]
        self.mask = [int(m) for m in self.mask]
        self.classes = int(self.classes)
        self.scale_x_y = float(self.scale_x_y)
        if not self.mask:
            raise ValueError("YoloHead.mask is empty")
        if any(m < 0 or m >= len(self.anchors) for m in self.mask):
            raise ValueError(f"YoloHead.mask {self.mask} indexes outside {len(self.anchors)} anchors")
        if self.classes < 1:
            raise ValueError(f"YoloHead.classes must be >= 1, got {self.classes}")

    @classmethod
    def from_dict(cls, d: dict) -> "YoloHead":
        """Build from ``{"anchors": [[w, h], ...], "mask": [...], "classes": n, "scale_x_y": s}``.

        ``scale_x_y`` defaults to 1.0 when absent; other keys are ignored. Raises KeyError for a missing
        ``anchors``/``mask``/``classes`` and ValueError for inconsistent values.
        """
        return cls(anchors=d["anchors"], mask=d["mask"], classes=d["classes"],
                   scale_x_y=d.get("scale_x_y", 1.0))

    @property
    def channels(self) -> int:
        """Channels of the head's conv output: ``len(mask) * (5 + classes)``."""
        return len(self.mask) * (5 + self.classes)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # darknet logistic_activate: 1./(1. + exp(-x)); float32 in, float32 out (no overflow warnings)
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x))).astype(np.float32, copy=False)


def _as_nchw(head: np.ndarray, yh: YoloHead) -> np.ndarray:
    a = np.asarray(head, dtype=np.float32)
    if a.ndim == 3:
        a = a[None]
    if a.ndim != 4 or a.shape[0] != 1 or a.shape[1] != yh.channels:
        raise ValueError(f"YOLO head must be [1, {yh.channels}, H, W] (len(mask)*(5+classes)), got {a.shape}")
    return a


def decode(head: np.ndarray, yh: YoloHead, net_w: int, net_h: int, img_w: int, img_h: int,
           obj_thresh: float):
    """Decode one raw YOLO head, as darknet's ``forward_yolo_layer`` + ``get_yolo_detections``.

    Args:
        head: float [1, len(mask)*(5+classes), H, W] (NCHW raw conv output; [C, H, W] also accepted); channel
            layout per anchor ``a``: ``a*(5+classes) + {0: tx, 1: ty, 2: tw, 3: th, 4: obj, 5+j: class j}``.
        yh: the head's :class:`YoloHead`.
        net_w, net_h: network input size in pixels (anchors are in these pixels).
        img_w, img_h: original image size in pixels (no letterbox: relative coords are scaled by these).
        obj_thresh: keep (cell, anchor) pairs with ``objectness > obj_thresh``; class probabilities
            ``objectness*sigmoid(cls)`` that are ``<= obj_thresh`` are set to 0 (darknet).
    Returns:
        boxes: float32 [N, 4] x1, y1, x2, y2 in pixels of the original image (not clipped to it; finite: a
            width or height beyond 10,000 network inputs, which covers the image anyway, is clipped to that);
        objectness: float32 [N] in (obj_thresh, 1];
        class_probs: float32 [N, classes] in [0, 1].
        Rows are in darknet's order: cell index ``row*W + col`` major, anchor minor. A head of any magnitude
        (inf included) decodes without numpy warnings; a (cell, anchor) whose box has a NaN is dropped, a NaN
        class logit gives probability 0.
    Raises:
        ValueError: wrong head shape.
    """
    a = _as_nchw(head, yh)
    _, _, H, W = a.shape
    na, nc = len(yh.mask), yh.classes
    # [cell, anchor, 5+classes] view in darknet's detection order (i = row*W + col, then n)
    p = a[0].reshape(na, 5 + nc, H * W).transpose(2, 0, 1)
    obj = _sigmoid(p[:, :, 4])                                       # [HW, na]
    keep = obj > np.float32(obj_thresh)
    cell, anc = np.nonzero(keep)                                     # row-major -> (i, n) order
    return decode_cells(p[cell, anc], obj[cell, anc], cell, anc, W, H, yh, net_w, net_h, img_w, img_h, obj_thresh)


def decode_cells(sel: np.ndarray, objectness: np.ndarray, cell: np.ndarray, anc: np.ndarray, W: int, H: int,
                 yh: YoloHead, net_w: int, net_h: int, img_w: int, img_h: int, obj_thresh: float):
    """The boxes and class probabilities of the chosen (cell, anchor) pairs of one head (the second half of
    :func:`decode`, shared with :func:`decode_codes`).

    Args:
        sel: float32 [N, 5 + classes]: the raw (dequantized) channels of each pair, in the head's channel order.
        objectness: float32 [N], ``sigmoid(sel[:, 4])``, each above ``obj_thresh``.
        cell: int [N] cell index ``row * W + col``; anc: int [N] anchor index into ``yh.mask``.
        W, H: the head's width and height in cells; the rest as :func:`decode`.
    Returns:
        (boxes, objectness, class_probs) as :func:`decode`, rows in the order given (a pair with a NaN box
        dropped).
    """
    nc, n = yh.classes, int(cell.size)
    if n == 0:
        return (np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros((0, nc), np.float32))
    s = np.float32(yh.scale_x_y)
    xy = _sigmoid(sel[:, 0:2]) * s - np.float32(0.5 * (yh.scale_x_y - 1.0))
    col = (cell % W).astype(np.float32)
    row = (cell // W).astype(np.float32)
    bx = (col + xy[:, 0]) / np.float32(W)
    by = (row + xy[:, 1]) / np.float32(H)
    anchors = np.asarray(yh.anchors, dtype=np.float64)[np.asarray(yh.mask)[anc]]   # [N, 2]
    bw = _box_size(sel[:, 2], anchors[:, 0], net_w)
    bh = _box_size(sel[:, 3], anchors[:, 1], net_h)
    fw, fh = np.float32(img_w), np.float32(img_h)
    boxes = np.empty((n, 4), np.float32)
    boxes[:, 0] = (bx - bw / 2) * fw
    boxes[:, 1] = (by - bh / 2) * fh
    boxes[:, 2] = (bx + bw / 2) * fw
    boxes[:, 3] = (by + bh / 2) * fh
    probs = objectness[:, None] * _sigmoid(sel[:, 5:])
    probs[~(probs > np.float32(obj_thresh))] = 0.0                  # (a NaN logit: 0 too)
    ok = np.isfinite(boxes).all(axis=1)                              # (only a NaN in the head is not)
    if not ok.all():
        boxes, objectness, probs = boxes[ok], objectness[ok], probs[ok]
    return boxes, objectness, probs


def code_range(dtype) -> tuple[int, int]:
    """(lo, hi): the codes :func:`sigmoid_gate` enumerates for heads of integer ``dtype``: its own range for 8
    and 16 bits, the int16 range for a wider type (the accelerator writes int8 or int16 heads; a wider array, e.g. the
    golden flow's int64 heads, holds those values)."""
    info = np.iinfo(dtype if np.dtype(dtype).itemsize <= 2 else np.int16)
    return int(info.min), int(info.max)


def sigmoid_gate(scale, zero_point: int, thresh: float, lo: int, hi: int) -> np.ndarray:
    """The integer gate of a score that is the sigmoid of a quantized value (a darknet head's objectness, an
    export's sigmoid score): per channel the smallest code ``q`` in ``[lo, hi]`` whose score
    ``sigmoid((q - zero_point) * scale)``, computed in float32 exactly as the float path computes it
    (:meth:`host.decode.Decoder.dequantize`, then :func:`_sigmoid` or the host tail's Sigmoid), exceeds ``thresh``.

    Every code is evaluated (256, or 65,536 for int16: once per threshold), so a code below the gate never passes,
    whatever the rounding of ``exp``. Outside ``[lo, hi]`` (only in an array wider than the head's precision) the
    sigmoid being non-decreasing decides: ``hi + 1`` when no code passes, ``lo - 2**40`` (no gate) when ``lo``
    passes already or the scale is not finite and positive; the exact float test on the candidates decides then.

    Args:
        scale: float32 [n], each channel's scale; zero_point: the head's zero point.
        thresh: the threshold (darknet ``-thresh``); lo, hi: the code range (:func:`code_range`).
    Returns:
        int64 [n].
    """
    s = np.asarray(scale, np.float32).reshape(-1)
    codes = np.arange(lo, hi + 1, dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        passing = _sigmoid((codes.astype(np.float32)[None, :] - zero_point) * s[:, None]) > np.float32(thresh)
    gate = np.where(passing.any(axis=1), lo + passing.argmax(axis=1), hi + 1).astype(np.int64)
    gate[~(np.isfinite(s) & (s > 0)) | passing[:, 0]] = lo - (1 << 40)
    return gate


def decode_codes(q: np.ndarray, yh: YoloHead, scale, zero_point: int, gate: np.ndarray, net_w: int, net_h: int,
                 img_w: int, img_h: int, obj_thresh: float):
    """:func:`decode` of a quantized head that reads only its candidates: the objectness channels of every cell,
    compared with the integer ``gate`` (:func:`sigmoid_gate`), then the ``5 + classes`` channels of the (cell,
    anchor) pairs at or above it, dequantized as :meth:`host.decode.Decoder.dequantize` does and kept where the
    float objectness exceeds ``obj_thresh`` (the exact test of :func:`decode`). The result equals :func:`decode` of
    the dequantized head bit for bit (the same float32 operations on the same values; rows in the same order).

    Args:
        q: integer [C, H, W] or [1, C, H, W] with ``C = yh.channels`` (any strides: the driver's [C, H, W] view of
            the accelerator's NHWC output; only ``na * H * W + N * (5 + classes)`` elements are read).
        yh: the head's :class:`YoloHead`; scale: float32 [C] (one per channel) or a number; zero_point: the head's.
        gate: int [na], the smallest code per anchor that can pass; the rest as :func:`decode`.
    Returns:
        (boxes, objectness, class_probs) as :func:`decode`.
    Raises:
        ValueError: wrong head shape.
    """
    q = q[0] if q.ndim == 4 and q.shape[0] == 1 else q
    if q.ndim != 3 or q.shape[0] != yh.channels:
        raise ValueError(f"YOLO head must be [1, {yh.channels}, H, W] (len(mask)*(5+classes)), got {q.shape}")
    _, H, W = q.shape
    na, nf = len(yh.mask), 5 + yh.classes
    s = np.broadcast_to(np.asarray(scale, np.float32).reshape(-1), (q.shape[0],))
    obj_q = q[np.arange(na) * nf + 4]                                # [na, H, W]: the only full read
    cand = (obj_q >= np.asarray(gate).reshape(na, 1, 1)).reshape(na, H * W).T
    cell, anc = np.nonzero(cand)                                     # row-major -> (i, n) order, as decode
    if cell.size:
        ch = anc[:, None] * nf + np.arange(nf)                       # [N, 5+classes]
        sel = (q[ch, (cell // W)[:, None], (cell % W)[:, None]].astype(np.float32) - zero_point) * s[ch]
        obj = _sigmoid(sel[:, 4])
        keep = obj > np.float32(obj_thresh)
        if not keep.all():
            cell, anc, sel, obj = cell[keep], anc[keep], sel[keep], obj[keep]
    else:
        sel, obj = np.zeros((0, nf), np.float32), np.zeros(0, np.float32)
    return decode_cells(sel, obj, cell, anc, W, H, yh, net_w, net_h, img_w, img_h, obj_thresh)


#: bound of the exponent of darknet's ``exp(tw) * anchor / net``: beyond it a box is wider than any image already
_MAX_EXP = 80.0
#: bound of a box's size relative to the network input: the box is then at least 10,000 images wide, so it covers
#: the whole image wherever its centre is (``scale_x_y`` up to 1000, as the manifest allows, moves the centre by at
#: most about 500 images), and its corners in pixels stay finite in float32 for any image size
_MAX_REL_BOX = 1e4


def _box_size(t: np.ndarray, anchor: np.ndarray, net: int) -> np.ndarray:
    """float32 [N]: darknet's ``exp(t) * anchor / net`` (box width or height relative to the network input) for
    raw ``t`` float32 [N] and ``anchor`` float64 [N] (pixels of the network input), computed in float64 with the
    exponent clipped to :data:`_MAX_EXP` and the result to :data:`_MAX_REL_BOX`, so that a head of any magnitude
    (a manifest's scale or zero point changed) gives finite boxes and no overflow; unchanged for any box up to
    10,000 network inputs wide."""
    with np.errstate(over="ignore"):        # (an anchor near the float64 limit: inf, then clipped)
        size = np.exp(np.minimum(t.astype(np.float64), _MAX_EXP)) * anchor / net
    return np.minimum(size, _MAX_REL_BOX).astype(np.float32)


def _iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU [N, M] of x1, y1, x2, y2 boxes (darknet box_iou semantics: no +1, no overlap -> 0)."""
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.where((iw > 0) & (ih > 0), iw * ih, 0.0)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    out = np.zeros_like(inter)
    np.divide(inter, union, out=out, where=union > 0)
    return out


_FULL_IOU_MAX = 512   # up to this many boxes one N x N IoU matrix serves every class


def nms(boxes: np.ndarray, probs: np.ndarray, iou_thresh: float = 0.45) -> np.ndarray:
    """Per-class greedy NMS, darknet's ``do_nms_sort`` (box.c).

    For each class k: order the boxes by ``probs[:, k]`` descending (stable, so ties keep detection order);
    walk them; a box whose ``probs[i, k]`` is still non-zero zeroes ``probs[j, k]`` of every later box j with
    ``IoU(i, j) > iou_thresh``. Boxes with probability 0 for k never suppress anything for k.
    (darknet also drops ``objectness == 0`` detections first; :func:`decode` never returns those.)
    The IoU matrix is computed vectorized (once for all boxes, or per class when there are very many boxes);
    only the inherently sequential greedy walk loops, over the candidates of one class.

    Args:
        boxes: float [N, 4] x1, y1, x2, y2 (any consistent unit; IoU is scale invariant).
        probs: float [N, classes] (0 = not a candidate).
        iou_thresh: overlap above which a lower-scored box is suppressed.
    Returns:
        a new float32 [N, classes] array with suppressed entries set to 0.
    Raises:
        ValueError: mismatched shapes.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    out = np.array(probs, dtype=np.float32, copy=True)
    if out.ndim != 2 or out.shape[0] != boxes.shape[0]:
        raise ValueError(f"nms: boxes {boxes.shape} and probs {out.shape} do not match")
    cand = out > 0
    classes = np.nonzero(cand.sum(axis=0) > 1)[0]                  # classes with >= 2 candidates
    if classes.size == 0:
        return out
    if boxes.shape[0] <= _FULL_IOU_MAX:
        over_all = _iou_matrix(boxes, boxes) > iou_thresh
        # classes where at least one pair of candidates overlaps: diag(C^T triu(O, 1) C) > 0
        c = cand[:, classes].astype(np.float32)
        pairs = ((np.triu(over_all, 1).astype(np.float32) @ c) * c).sum(axis=0)
        classes = classes[pairs > 0]
    else:
        over_all = None
    for k in classes.tolist():
        idx = np.nonzero(cand[:, k])[0]
        idx = idx[np.argsort(-out[idx, k], kind="stable")]
        if over_all is not None:
            over = over_all[idx][:, idx]
        else:
            over = _iou_matrix(boxes[idx], boxes[idx]) > iou_thresh
        alive = np.ones(idx.size, dtype=bool)
        for i in range(idx.size - 1):
            if alive[i]:
                alive[i + 1:] &= ~over[i, i + 1:]
        out[idx[~alive], k] = 0.0
    return out


def detect(heads, yolo_heads, net_w: int, net_h: int, img_w: int, img_h: int, names,
           thresh: float = 0.25, nms_thresh: float = 0.45) -> list:
    """Full darknet post-processing of one frame: decode every head, NMS, list the detections.

    Args:
        heads: list of float arrays [1, len(mask)*(5+classes), H, W] (raw conv outputs, NCHW), one per YOLO
            layer, in the same order as ``yolo_heads`` (for yolov4-tiny: the 13x13 head, then the 26x26 head).
        yolo_heads: list of :class:`YoloHead` (or dicts accepted by :meth:`YoloHead.from_dict`).
        net_w, net_h: network input size; img_w, img_h: original image size (pixels).
        names: class names, ``len(names) >= classes``.
        thresh: detection threshold (objectness and class probability, darknet ``-thresh``).
        nms_thresh: IoU threshold of :func:`nms`.
    Returns:
        list of ``{"label": str, "class_id": int, "score": float, "box": [x1, y1, x2, y2]}``, one per
        (box, class) pair whose probability exceeds ``thresh`` after NMS, sorted by score descending (stable).
        Boxes are floats in pixels of the original image, clipped to ``[0, img_w-1] x [0, img_h-1]`` as darknet's
        ``draw_detections_v3`` does.
    Raises:
        ValueError: heads and yolo_heads differ in number, a head has the wrong shape, heads disagree on the
            number of classes, or ``names`` is too short.
    """
    yolo_heads = check_heads(len(heads), yolo_heads, names)
    parts = [decode(h, y, net_w, net_h, img_w, img_h, thresh) for h, y in zip(heads, yolo_heads)]
    return finish(parts, names, thresh, nms_thresh, img_w, img_h)


def check_heads(n_heads: int, yolo_heads, names) -> list:
    """The :class:`YoloHead` list of ``yolo_heads`` (dicts converted), checked against ``n_heads`` head tensors and
    ``names``. Raises ValueError as :func:`detect`."""
    yolo_heads = [y if isinstance(y, YoloHead) else YoloHead.from_dict(y) for y in yolo_heads]
    if n_heads != len(yolo_heads):
        raise ValueError(f"{n_heads} head tensors but {len(yolo_heads)} YoloHead descriptions")
    classes = {y.classes for y in yolo_heads}
    if len(classes) != 1:
        raise ValueError(f"YOLO heads disagree on the number of classes: {sorted(classes)}")
    nc = classes.pop()
    if len(names) < nc:
        raise ValueError(f"{len(names)} class names for {nc} classes")
    return yolo_heads


def finish(parts: list, names, thresh: float, nms_thresh: float, img_w: int, img_h: int) -> list:
    """The detection list of :func:`detect` from every head's :func:`decode` (or :func:`decode_codes`) result, in
    head order: concatenated, :func:`nms`, :func:`listing`."""
    boxes = np.concatenate([p[0] for p in parts])
    probs = np.concatenate([p[2] for p in parts])
    if boxes.shape[0] == 0:
        return []
    return listing(boxes, nms(boxes, probs, nms_thresh), names, thresh, img_w, img_h)


def listing(boxes: np.ndarray, probs: np.ndarray, names, thresh: float, img_w: int, img_h: int) -> list:
    """The detection list of boxes float [N, 4] (x1, y1, x2, y2, pixels of the original image) and class
    probabilities float [N, classes] after NMS: one entry per (box, class) with probability above ``thresh``,
    sorted by score descending (stable), boxes clipped to the image as darknet's ``draw_detections_v3`` does."""
    bi, ci = np.nonzero(probs > np.float32(thresh))
    if bi.size == 0:
        return []
    scores = probs[bi, ci]
    order = np.argsort(-scores, kind="stable")
    bi, ci, scores = bi[order], ci[order], scores[order]
    clipped = boxes[bi].astype(np.float64)
    clipped[:, 0::2] = np.clip(clipped[:, 0::2], 0.0, max(img_w - 1, 0))
    clipped[:, 1::2] = np.clip(clipped[:, 1::2], 0.0, max(img_h - 1, 0))
    return [{"label": names[c], "class_id": int(c), "score": float(s), "box": [float(v) for v in b]}
            for c, s, b in zip(ci.tolist(), scores.tolist(), clipped.tolist())]

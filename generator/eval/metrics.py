"""Detection accuracy: IoU and PASCAL-VOC-style average precision / mAP; the SQNR of a tensor and of a YOLO
output's box and score parts apart (numpy only).

Conventions (those of the VOC 2010+ devkit ``VOCevaldet`` / ``voc_eval.py`` with ``use_07_metric=False``):

* boxes are ``[x1, y1, x2, y2]`` in continuous pixel coordinates; area = ``(x2-x1)*(y2-y1)`` (no "+1");
* per class, all predictions of all images are ranked by score descending (stable: ties keep input order);
  each prediction is matched to the ground-truth box of the same class in the same image with the highest IoU;
  it is a true positive if that IoU is ``>= iou_thresh`` and that GT box is not matched yet, otherwise a false
  positive (a duplicate on an already-matched GT is a false positive; it does not fall back to another GT);
* AP = area under the all-point interpolated precision envelope
  (``p_interp(r) = max_{r' >= r} p(r')``, summed over the recall steps);
* mAP = mean AP over the classes that have at least one ground-truth box. Classes that only appear in the
  predictions (no GT box anywhere) are ignored -- they have no defined recall; their false positives do not
  lower the mAP. A class with GT but no prediction has AP 0.

Inputs are per-image lists of dicts: predictions ``{"label", "score", "box", ...}`` (as ``host.yolo.detect``
returns), ground truth ``{"label", "box", ...}``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["iou", "average_precision", "mean_average_precision", "box_agreement", "sqnr_db",
           "box_score_parts", "split_sqnr"]


def iou(box, boxes) -> np.ndarray:
    """IoU of one box with many.

    Args:
        box: [4] x1, y1, x2, y2; boxes: [N, 4] (or [4]).
    Returns:
        float64 [N] in 0..1 (0 where the union is empty / degenerate).
    """
    b = np.asarray(box, dtype=np.float64).reshape(4)
    bs = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    iw = np.clip(np.minimum(b[2], bs[:, 2]) - np.maximum(b[0], bs[:, 0]), 0.0, None)
    ih = np.clip(np.minimum(b[3], bs[:, 3]) - np.maximum(b[1], bs[:, 1]), 0.0, None)
    inter = iw * ih
    area_b = max(b[2] - b[0], 0.0) * max(b[3] - b[1], 0.0)
    area_bs = np.clip(bs[:, 2] - bs[:, 0], 0.0, None) * np.clip(bs[:, 3] - bs[:, 1], 0.0, None)
    union = area_b + area_bs - inter
    out = np.zeros(bs.shape[0], dtype=np.float64)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def _voc_ap(tp: np.ndarray, n_gt: int) -> float:
    """All-point interpolated AP from the ranked TP flags (1 = TP, 0 = FP) and the number of GT boxes."""
    if tp.size == 0:
        return 0.0
    ctp = np.cumsum(tp, dtype=np.float64)
    cfp = np.cumsum(1.0 - tp, dtype=np.float64)
    rec = ctp / n_gt
    prec = ctp / (ctp + cfp)
    mrec = np.concatenate([[0.0], rec, [1.0]])
    mpre = np.concatenate([[0.0], prec, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]          # precision envelope
    i = np.nonzero(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def _check(preds_per_image, gts_per_image):
    if len(preds_per_image) != len(gts_per_image):
        raise ValueError(f"{len(preds_per_image)} prediction lists but {len(gts_per_image)} ground-truth lists")


def average_precision(preds, gts, iou_thresh: float = 0.5) -> dict:
    """VOC-style AP per class.

    Args:
        preds: list (one per image) of lists of prediction dicts with ``"label"``, ``"score"``, ``"box"``.
        gts: list (one per image, same length) of lists of GT dicts with ``"label"``, ``"box"``.
        iou_thresh: minimum IoU (inclusive) for a true positive.
    Returns:
        ``{label: AP}`` for every label with at least one GT box (labels seen only in predictions are absent).
    Raises:
        ValueError: the two lists differ in length.
    """
    _check(preds, gts)
    gt_by_class: dict = {}            # label -> {image index: boxes [M, 4]}
    for im, g in enumerate(gts):
        for d in g:
            gt_by_class.setdefault(d["label"], {}).setdefault(im, []).append(d["box"])
    pred_by_class: dict = {}          # label -> list of (score, image index, box)
    for im, p in enumerate(preds):
        for d in p:
            if d["label"] in gt_by_class:
                pred_by_class.setdefault(d["label"], []).append((float(d["score"]), im, d["box"]))
    out = {}
    for label, per_img in gt_by_class.items():
        gt_boxes = {im: np.asarray(b, dtype=np.float64).reshape(-1, 4) for im, b in per_img.items()}
        used = {im: np.zeros(len(b), dtype=bool) for im, b in gt_boxes.items()}
        n_gt = sum(len(b) for b in gt_boxes.values())
        cand = pred_by_class.get(label, [])
        order = np.argsort(-np.asarray([c[0] for c in cand], dtype=np.float64), kind="stable")
        tp = np.zeros(len(cand), dtype=np.float64)
        for rank, k in enumerate(order):
            _, im, box = cand[k]
            if im not in gt_boxes:
                continue
            ov = iou(box, gt_boxes[im])
            j = int(np.argmax(ov))
            if ov[j] >= iou_thresh and not used[im][j]:
                used[im][j] = True
                tp[rank] = 1.0
        out[label] = _voc_ap(tp, n_gt)
    return out


def mean_average_precision(preds_per_image, gts_per_image, iou_thresh: float = 0.5) -> float:
    """mAP@iou_thresh: mean of :func:`average_precision` over the classes with at least one GT box.

    Classes with predictions but no GT are ignored (see the module docstring). Returns ``nan`` when there is no
    GT box at all (nothing to measure). Raises ValueError when the two lists differ in length.
    """
    aps = average_precision(preds_per_image, gts_per_image, iou_thresh)
    if not aps:
        return float("nan")
    return float(np.mean(list(aps.values())))


def box_agreement(preds, refs, thresh: float = 0.25, score_tol: float = 0.1) -> dict:
    """How well one image's detections ``preds`` reproduce the reference detections ``refs`` (e.g. int8 against
    the near-float int16 model). Every reference box with score >= ``thresh`` may pair with one prediction of the
    same label whose score is within ``score_tol`` of its own and whose box overlaps it (IoU > 0); each prediction
    pairs with one reference box at most. Pairs are taken greedily by descending IoU over all eligible
    (reference, prediction) pairs (ties: the higher reference score first), so a reference box never takes a
    prediction that lies elsewhere in the image while another reference box covers it.

    ``preds`` / ``refs``: lists of {"label", "score", "box" [x0, y0, x1, y1]} (pixels). Returns {"mean_iou": mean
    IoU over the reference boxes (1.0 when there are none), "matched": reference boxes with a partner, "boxes":
    reference boxes, "max_score_diff": largest |score difference| of the pairs, "ious": the IoU of each reference
    box in descending score order (0 without a partner)}.
    """
    ref = sorted((r for r in refs if r["score"] >= thresh), key=lambda r: -r["score"])
    pairs = []
    for i, r in enumerate(ref):
        cand = [j for j, p in enumerate(preds) if p["label"] == r["label"] and abs(p["score"] - r["score"]) <= score_tol]
        if cand:
            v = iou(r["box"], [preds[j]["box"] for j in cand])
            pairs += [(-float(v[k]), i, j) for k, j in enumerate(cand) if v[k] > 0]
    ious, partner = [0.0] * len(ref), {}
    for neg_v, i, j in sorted(pairs):
        if i not in partner and j not in partner.values():
            partner[i] = j
            ious[i] = -neg_v
    diffs = [abs(preds[j]["score"] - ref[i]["score"]) for i, j in partner.items()]
    return {"mean_iou": float(np.mean(ious)) if ious else 1.0, "matched": len(partner), "boxes": len(ref),
            "max_score_diff": float(max(diffs)) if diffs else 0.0, "ious": ious}


def sqnr_db(ref, got) -> float:
    """SQNR of ``got`` against ``ref`` (any shapes of the same number of elements): 10 log10(sum ref^2 /
    sum (ref - got)^2) in dB over all elements, in float64; +inf when they are equal. Raises ValueError for
    different sizes or an all-zero reference."""
    ref = np.asarray(ref, np.float64).ravel()
    got = np.asarray(got, np.float64).ravel()
    if ref.size != got.size:
        raise ValueError(f"{got.size} values against {ref.size}")
    sig, noise = float(np.sum(ref ** 2)), float(np.sum((ref - got) ** 2))
    if sig == 0:
        raise ValueError("the reference is all zeros")
    return float("inf") if noise == 0 else 10 * np.log10(sig / noise)


#: the YOLO output layouts :func:`box_score_parts` splits: the two export formats of :mod:`host.exported`
#: and a raw darknet head
LAYOUTS = ("obj", "noobj", "darknet")


def box_score_parts(out, layout: str, head=None, net_w: int = 0, net_h: int = 0) -> tuple:
    """The box coordinates and the scores of one YOLO output, apart.

    Args:
        out: ``"noobj"`` (YOLOv8 export): float [1, 4 + classes, N], rows centre x, centre y, width, height in
            network-input pixels, then the class probabilities (after the sigmoid); ``"obj"`` (YOLOv5 / YOLOX
            export): [1, N, 5 + classes], columns the same four box fields, objectness, class probabilities;
            ``"darknet"``: a raw head [1, len(mask) * (5 + classes), H, W] (per anchor tx, ty, tw, th, objectness
            logit, class logits), decoded by darknet's rules (:func:`host.yolo.decode` with no threshold).
        layout: one of :data:`LAYOUTS`.
        head: the :class:`host.yolo.YoloHead` of a ``"darknet"`` head; net_w, net_h: its network input size.
    Returns:
        (boxes float64 [N, 4], scores float64 [N, S]): for the exports their box fields (pixels of the network
        input) and score fields (objectness if any, then the class probabilities); for a darknet head, per
        (cell, anchor) the box corners x1, y1, x2, y2 in network-input pixels and the scores objectness then
        objectness x sigmoid(class logit), darknet's class probabilities.
    Raises:
        ValueError: an unknown layout, an output of another shape, a darknet head without ``head``.
    """
    a = np.asarray(out, np.float64)
    if layout == "darknet":
        from host.yolo import decode

        if head is None or net_w <= 0 or net_h <= 0:
            raise ValueError("a darknet head is split with its YoloHead and the network input size")
        boxes, obj, probs = decode(a, head, net_w, net_h, net_w, net_h, obj_thresh=-np.inf)
        return boxes.astype(np.float64), np.concatenate([obj[:, None], probs], axis=1).astype(np.float64)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown output layout {layout!r}; one of {LAYOUTS}")
    if a.ndim != 3 or a.shape[0] != 1 or (a.shape[2] if layout == "obj" else a.shape[1]) < 5:
        raise ValueError(f"a {layout!r} output must be [1, N, 5 + classes] (obj) or [1, 4 + classes, N] (noobj), "
                         f"got {a.shape}")
    rows = a[0] if layout == "obj" else a[0].T
    return rows[:, :4], rows[:, 4:]


def split_sqnr(ref, got, layout: str, head=None, net_w: int = 0, net_h: int = 0) -> dict:
    """SQNR in dB (:func:`sqnr_db`) of the box coordinates and of the scores of ``got`` against ``ref``, split by
    :func:`box_score_parts` (same arguments). Returns {"boxes": dB, "scores": dB}, None for a part whose reference
    is all zeros. Raises ValueError as :func:`box_score_parts` or for outputs of different sizes."""
    rb, rs = box_score_parts(ref, layout, head, net_w, net_h)
    gb, gs = box_score_parts(got, layout, head, net_w, net_h)
    return {k: (sqnr_db(r, g) if np.any(r) else None) for k, r, g in (("boxes", rb, gb), ("scores", rs, gs))}

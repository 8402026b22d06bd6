"""The darknet YOLO decode (``host/yolo.py``) on heads of any magnitude: a manifest whose head scale or zero point
is changed within the ranges the driver accepts (scale up to 1e30, any zero point of the element type) gives
dequantized heads far beyond what a network produces; ``exp(tw)`` must not overflow into infinite boxes, NMS must
not see inf - inf, and the scores must stay in [0, 1]. Numpy warnings are errors here (an overflow is one)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from host.yolo import YoloHead, decode, detect

ANCHORS = [(10, 14), (23, 27), (37, 58), (81, 82), (135, 169), (344, 319)]
HEAD = YoloHead(ANCHORS, [3, 4, 5], 2, 1.05)
NET, IMG_W, IMG_H = 64, 200, 150


def _head(tw_th: float, h: int = 2, w: int = 3) -> np.ndarray:
    """[1, 3 * 7, h, w] head: every (cell, anchor) certain (objectness and class logits 10), tw = th = ``tw_th``."""
    a = np.zeros((3, 7, h, w), np.float32)
    a[:, 0:2] = 0.3
    a[:, 2:4] = tw_th
    a[:, 4:] = 10.0
    return a.reshape(1, 21, h, w)


def _check(boxes, obj, probs, dets):
    assert np.isfinite(boxes).all(), boxes
    assert np.isfinite(obj).all() and ((obj >= 0) & (obj <= 1)).all()
    assert np.isfinite(probs).all() and ((probs >= 0) & (probs <= 1)).all()
    for d in dets:
        assert all(np.isfinite(d["box"])) and 0 <= d["score"] <= 1, d


@pytest.mark.parametrize("tw_th", [85.0, 1e6, 3e38, np.inf])
def test_huge_box_logits_decode_to_finite_boxes(tw_th):
    """tw = th from just past float32's exp range (85: the box's pixels overflow float32) to inf: finite boxes
    (each covers the whole image: its listed box is the image), no numpy warning, scores in [0, 1]."""
    head = _head(tw_th)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boxes, obj, probs = decode(head, HEAD, NET, NET, IMG_W, IMG_H, 0.25)
        dets = detect([head], [HEAD], NET, NET, IMG_W, IMG_H, ["a", "b"])
    assert boxes.shape == (18, 4)
    _check(boxes, obj, probs, dets)
    assert (boxes[:, 0] <= 0).all() and (boxes[:, 2] >= IMG_W - 1).all()
    assert dets and all(d["box"] == [0.0, 0.0, IMG_W - 1.0, IMG_H - 1.0] for d in dets)


def test_head_dequantized_with_a_huge_scale():
    """What the driver computes for a manifest head of scale 1e29 (the limit is 1e30) and zero point -128: int8
    values (v - zp) * scale; the detections are finite and their scores in [0, 1]."""
    q = np.random.default_rng(7).integers(-128, 128, size=(1, 21, 4, 4)).astype(np.int8)
    head = (q.astype(np.float32) + np.float32(128)) * np.float32(1e29)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boxes, obj, probs = decode(head, HEAD, NET, NET, IMG_W, IMG_H, 0.25)
        dets = detect([head], [HEAD], NET, NET, IMG_W, IMG_H, ["a", "b"])
    assert boxes.shape[0] > 0 and dets
    _check(boxes, obj, probs, dets)


def test_nan_in_a_head_gives_no_nan_box_or_score():
    """A NaN box logit drops that (cell, anchor); a NaN class logit gives probability 0 (neither reaches NMS or the
    listing as a NaN)."""
    head = _head(1.0)
    v = head.reshape(3, 7, 2, 3)
    v[0, 2, 0, 0] = np.nan          # tw of anchor 0 at cell (0, 0)
    v[1, 5, 1, 2] = np.nan          # class 0 of anchor 1 at cell (1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boxes, obj, probs = decode(head, HEAD, NET, NET, IMG_W, IMG_H, 0.25)
        dets = detect([head], [HEAD], NET, NET, IMG_W, IMG_H, ["a", "b"])
    assert boxes.shape == (17, 4)
    _check(boxes, obj, probs, dets)

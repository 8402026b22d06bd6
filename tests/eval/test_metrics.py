"""Detection metrics (generator/eval/metrics.py): IoU and (mean) average precision on hand-computed cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

from generator.eval.metrics import average_precision, iou, mean_average_precision


def _d(label, box, score=None):
    d = {"label": label, "box": list(box)}
    if score is not None:
        d["score"] = score
    return d


def test_iou_hand_values():
    np.testing.assert_allclose(iou([0, 0, 10, 10], [[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]]),
                               [1.0, 50 / 150, 0.0])


def test_map_perfect():
    gts = [[_d("dog", [0, 0, 10, 10]), _d("cat", [20, 20, 40, 40])], [_d("dog", [5, 5, 50, 50])]]
    preds = [[_d(g["label"], g["box"], 0.9) for g in im] for im in gts]
    assert mean_average_precision(preds, gts) == pytest.approx(1.0)


def test_map_fp_ranked_above_tp():
    # one GT, predictions: FP (score 0.9, no overlap) then TP (0.8).
    # ranked: FP -> P=0/1, R=0 ; TP -> P=1/2, R=1. Envelope at R=1 is 0.5 -> AP = 1.0 * 0.5 = 0.5
    gts = [[_d("dog", [0, 0, 10, 10])]]
    preds = [[_d("dog", [50, 50, 60, 60], 0.9), _d("dog", [0, 0, 10, 10], 0.8)]]
    assert average_precision(preds, gts) == {"dog": pytest.approx(0.5)}
    # two GT, ranked TP(0.9), FP(0.8), TP(0.7): (R,P) = (.5,1), (.5,.5), (1,2/3)
    # AP = 0.5*1 + 0.5*(2/3) = 0.8333...
    gts = [[_d("dog", [0, 0, 10, 10]), _d("dog", [100, 100, 120, 120])]]
    preds = [[_d("dog", [0, 0, 10, 10], 0.9), _d("dog", [50, 50, 60, 60], 0.8), _d("dog", [100, 100, 120, 121], 0.7)]]
    assert mean_average_precision(preds, gts) == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_map_missed_gt_duplicates_and_ignored_classes():
    # two GT dogs, only one found: R=0.5 at P=1 -> AP 0.5 ; cat GT never predicted -> AP 0 ;
    # "bird" predicted but has no GT -> ignored. mAP = (0.5 + 0) / 2 = 0.25
    gts = [[_d("dog", [0, 0, 10, 10]), _d("dog", [30, 30, 40, 40]), _d("cat", [60, 60, 70, 70])]]
    preds = [[_d("dog", [0, 0, 10, 10], 0.9), _d("bird", [60, 60, 70, 70], 0.95)]]
    ap = average_precision(preds, gts)
    assert ap == {"dog": pytest.approx(0.5), "cat": 0.0}
    assert mean_average_precision(preds, gts) == pytest.approx(0.25)
    # a duplicate of an already-matched GT is a FP: TP(0.9), dup FP(0.8) with one GT -> AP 1.0 (FP after full recall)
    gts = [[_d("dog", [0, 0, 10, 10])]]
    preds = [[_d("dog", [0, 0, 10, 10], 0.9), _d("dog", [0, 0, 10, 11], 0.8)]]
    assert mean_average_precision(preds, gts) == pytest.approx(1.0)
    # a loose box ranked first: IoU 100/300 = 1/3 < 0.5 -> FP (P=0), then the exact box TP (R=1, P=1/2): AP 0.5
    preds = [[_d("dog", [0, 0, 10, 30], 0.95), _d("dog", [0, 0, 10, 10], 0.9)]]
    assert mean_average_precision(preds, gts) == pytest.approx(0.5)
    # predictions in another image do not match
    gts = [[_d("dog", [0, 0, 10, 10])], []]
    preds = [[], [_d("dog", [0, 0, 10, 10], 0.9)]]
    assert mean_average_precision(preds, gts) == pytest.approx(0.0)
    assert math.isnan(mean_average_precision([[]], [[]]))
    with pytest.raises(ValueError):
        mean_average_precision([[]], [])


def test_box_agreement_pairs_same_label_within_the_score_tolerance():
    """Reference boxes at score >= 0.25: A [0, 0, 10, 10] 0.9 pairs with the dog box shifted by 1 (IoU 90/110; the
    exact copy is a cat, another label); B [20, 20, 30, 30] 0.5 has only a partner 0.2 lower in score, so its
    IoU counts 0; C at 0.2 is below the threshold. Mean (90/110 + 0) / 2."""
    from generator.eval.metrics import box_agreement
    refs = [{"label": "dog", "score": 0.9, "box": [0, 0, 10, 10]},
            {"label": "dog", "score": 0.5, "box": [20, 20, 30, 30]},
            {"label": "dog", "score": 0.2, "box": [40, 40, 50, 50]}]
    preds = [{"label": "cat", "score": 0.9, "box": [0, 0, 10, 10]},
             {"label": "dog", "score": 0.85, "box": [1, 0, 11, 10]},
             {"label": "dog", "score": 0.3, "box": [20, 20, 30, 30]}]
    a = box_agreement(preds, refs)
    assert a["boxes"] == 2 and a["matched"] == 1
    assert a["ious"] == pytest.approx([90 / 110, 0.0])
    assert a["mean_iou"] == pytest.approx(45 / 110)
    assert a["max_score_diff"] == pytest.approx(0.05)
    assert box_agreement(preds, [])["mean_iou"] == 1.0


def test_box_agreement_never_pairs_boxes_that_do_not_overlap():
    """The VOC image's two weak chairs (int16 scores 0.285 and 0.266, int8 0.183 and 0.241): the first chair's
    only overlapping int8 box is 0.102 lower in score (outside the tolerance), so it has no partner -- it must not
    take the second chair's int8 box elsewhere in the image (IoU 0), which would leave the second chair without
    its own partner. A prediction that two reference boxes overlap goes to the one it overlaps more."""
    from generator.eval.metrics import box_agreement
    refs = [{"label": "chair", "score": 0.285, "box": [1.2, 88.2, 96.2, 183.6]},
            {"label": "chair", "score": 0.266, "box": [92.6, 197.7, 141.5, 255.3]}]
    preds = [{"label": "chair", "score": 0.183, "box": [0.6, 87.6, 95.7, 183.7]},
             {"label": "chair", "score": 0.241, "box": [93.1, 198.2, 141.3, 254.6]}]
    a = box_agreement(preds, refs)
    assert a["matched"] == 1 and a["ious"][0] == 0.0 and a["ious"][1] > 0.95
    # overlap decides between two reference boxes that could take the same prediction
    refs = [{"label": "dog", "score": 0.9, "box": [0, 0, 10, 10]}, {"label": "dog", "score": 0.85, "box": [5, 0, 15, 10]}]
    preds = [{"label": "dog", "score": 0.88, "box": [5, 0, 15, 10]}, {"label": "dog", "score": 0.86, "box": [0, 0, 10, 10]}]
    assert box_agreement(preds, refs)["ious"] == pytest.approx([1.0, 1.0])

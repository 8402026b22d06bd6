"""``invoke accuracy`` on the official YOLOv4-tiny over the 10 shipped real images (about three minutes: a slow
test, ``invoke test --slow``): the quantization meets its targets -- int8-asym per-channel at least 0.97 mAP@0.5
against the float model, per-channel at least per-tensor in every mode, int16 equal to float, and on every image
the int8-asym boxes overlap the int16 (near-float) boxes by a mean IoU of at least 0.94 -- and the per-layer SQNR
plots are written."""
import pytest


@pytest.mark.slow
def test_accuracy_table_meets_the_quantization_targets(tmp_path):
    from generator.flows.accuracy import accuracy_table

    res = accuracy_table("zcu19eg", tmp_path, log=lambda *a: None)
    rows = {r["config"]: r for r in res["rows"]}
    assert rows["int8-asym-pc"]["map_vs_float"] >= 0.97
    for mode in ("int16-sym", "int8-asym", "int8-sym"):
        assert rows[f"{mode}-pc"]["map_vs_float"] >= rows[f"{mode}-pt"]["map_vs_float"], mode
    assert rows["int16-sym-pc"]["map_vs_float"] == 1.0 and rows["int16-sym-pt"]["map_vs_float"] == 1.0
    agree = res["box_agreement"]["int8-asym-pc"]
    assert len(agree) == 10 and min(a["mean_iou"] for a in agree.values()) >= 0.94, \
        {k: round(a["mean_iou"], 3) for k, a in agree.items()}
    assert rows["int8-asym-pc"]["sqnr_mean"] > rows["int8-asym-pc, no equalization"]["sqnr_mean"]
    assert (tmp_path / "sqnr.png").stat().st_size > 10_000 and (tmp_path / "sqnr_calibration.png").is_file()

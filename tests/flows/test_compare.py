"""``invoke compare`` (generator/flows/compare.py): float (onnxruntime) against the quantized program on the golden
simulator. Its SQNR figures are re-derived here from other executors (the numpy float reference of the float graph,
the layer-level integer reference, which equals golden bit for bit), int16 must beat int8 by the precision it adds,
the box / score split of a YOLO output equals numpy sums over the channels the layout names, and the command's
last line is the minimum SQNR over the layers and the outputs (whole, boxes, scores)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from generator import ROOT_DIR
from generator.frontend.modelgen import Builder
from generator.eval.metrics import box_score_parts, split_sqnr
from generator.flows.compare import compare_flow, sqnr_db
from generator.flows.request import ModelSource, Target, compile_request

INVOKE = str(Path(sys.executable).parent / "invoke")


@pytest.fixture(scope="module")
def small_onnx(tmp_path_factory):
    b = Builder([1, 3, 32, 32], seed=5)
    y = b.maxpool(b.leaky(b.conv("x", 16, k=3, s=2)))
    z = b.leaky(b.conv(y, 24, k=3))
    p = tmp_path_factory.mktemp("cmp") / "small.onnx"
    p.write_bytes(b.model([b.conv(z, 8, k=1), b.conv(y, 6, k=1)]).SerializeToString())
    return p


def test_sqnr_db_definition():
    ref = np.array([3.0, -4.0])
    assert sqnr_db(ref, ref + np.array([0.3, 0.4])) == pytest.approx(10 * np.log10(25 / 0.25))
    assert sqnr_db(ref, ref) == float("inf")
    with pytest.raises(ValueError, match="3 values against 2"):
        sqnr_db(ref, np.zeros(3))


def test_compare_against_independent_executors(small_onnx, tmp_path):
    """Every output's SQNR equals the one computed from the float graph in numpy and the integer reference's
    outputs; int16 gains at least 30 dB over int8 on every output."""
    from generator.exec import run_graph
    from generator.ref.float_ref import run_float
    from generator.flows.inputs import real_image
    from generator.flows.pipeline import compile_model, net_size, quantize_image
    from host.preprocess import darknet_resize

    got = {}
    for q in ("int8-asym", "int16-sym"):
        r = compare_flow(Target(quant=q), ModelSource(str(small_onnx)), image="bus", out=tmp_path / q,
                         log=lambda *a: None)
        got[q] = r
        assert (tmp_path / q / "compare.md").read_text().strip().splitlines()[-1] == f"min SQNR: {r.min_sqnr:.1f} dB"
        assert (tmp_path / q / "sqnr.png").stat().st_size > 1000
        c = compile_model("zcu19eg", q, model=str(small_onnx), progress=False)
        img = real_image("bus")
        w, h = net_size(c.qgraph)
        x = darknet_resize(img, w, h).transpose(2, 0, 1)[None]
        fl = run_float(c.graph, {c.graph.inputs[0]: x})
        qo = run_graph("ref", c.qgraph, quantize_image(c, img))
        assert set(r.outputs) == set(c.qgraph.outputs)
        for o in c.qgraph.outputs:
            t = c.qgraph.tensors[o]
            deq = (qo[o].astype(np.float64) - t.zero_point) * t.deq_scale
            assert r.outputs[o] == pytest.approx(sqnr_db(fl[o], deq), abs=0.01)
        assert r.min_sqnr == min([*r.layers.values(), *r.outputs.values()]) and r.layers and r.detections is None
        assert r.parts == {}
    for o in got["int8-asym"].outputs:   # int16 spends part of its 8 extra bits on headroom (INT16_SQNR_DB)
        assert got["int16-sym"].outputs[o] > got["int8-asym"].outputs[o] + 15


def _db(ref, got) -> float:
    """10 log10(sum ref^2 / sum (ref - got)^2), written out here (not the project's sqnr_db)."""
    ref, got = np.asarray(ref, np.float64), np.asarray(got, np.float64)
    return float(10 * np.log10(np.sum(ref ** 2) / np.sum((ref - got) ** 2)))


def _sig(v):
    return 1 / (1 + np.exp(-np.asarray(v, np.float64)))


def test_split_sqnr_of_export_outputs_is_the_sqnr_of_their_channels():
    """An export output with known box fields (pixels, hundreds) and score fields (0..1): the split SQNRs are the
    numpy SQNRs of exactly those channels, for YOLOv8's [1, 4 + nc, N] and YOLOv5's [1, N, 5 + nc]."""
    rng = np.random.default_rng(3)
    nc, n = 3, 200
    box = rng.uniform(0, 640, (4, n))
    score = rng.uniform(0, 1, (nc, n))
    ref = np.concatenate([box, score])[None]                       # noobj: rows 0..3 boxes, 4.. scores
    got = ref + np.concatenate([rng.normal(0, 2.0, (4, n)), rng.normal(0, 0.05, (nc, n))])[None]
    r = split_sqnr(ref, got, "noobj")
    assert r["boxes"] == pytest.approx(_db(box, got[0, :4]), abs=1e-9)
    assert r["scores"] == pytest.approx(_db(score, got[0, 4:]), abs=1e-9)
    assert r["boxes"] > r["scores"] + 15 and sqnr_db(ref, got) > r["scores"] + 15  # (the whole hides the scores)
    obj = rng.uniform(0, 1, (n, 1))
    ref5 = np.concatenate([box.T, obj, score.T], axis=1)[None]     # obj: columns 0..3 boxes, 4 objectness, 5.. classes
    got5 = ref5 + rng.normal(0, 0.01, ref5.shape)
    r5 = split_sqnr(ref5, got5, "obj")
    assert r5["boxes"] == pytest.approx(_db(ref5[0, :, :4], got5[0, :, :4]), abs=1e-9)
    assert r5["scores"] == pytest.approx(_db(ref5[0, :, 4:], got5[0, :, 4:]), abs=1e-9)
    with pytest.raises(ValueError, match="unknown output layout"):
        split_sqnr(ref, got, "yolo")


def test_split_sqnr_of_a_darknet_head_decodes_it_by_darknets_rules():
    """A raw darknet head [1, A (5 + nc), H, W]: boxes are darknet's decoded corners in network pixels, scores the
    objectness and objectness x sigmoid(class), per (cell, anchor) -- decoded here independently in numpy."""
    from host.yolo import YoloHead

    rng = np.random.default_rng(4)
    yh = YoloHead(anchors=[(10, 14), (23, 27), (37, 58)], mask=[1, 2], classes=2, scale_x_y=1.05)
    H = W = 4
    net = 128
    ref = rng.normal(0, 1.5, (1, 2 * 7, H, W))
    got = ref + rng.normal(0, 0.05, ref.shape)

    def decode(a):
        p = a[0].reshape(2, 7, H * W)                              # [anchor, field, cell]
        col, row = np.arange(H * W) % W, np.arange(H * W) // W
        boxes, scores = [], []
        for k, m in enumerate(yh.mask):
            cx = (col + _sig(p[k, 0]) * 1.05 - 0.025) / W * net
            cy = (row + _sig(p[k, 1]) * 1.05 - 0.025) / H * net
            bw, bh = np.exp(p[k, 2]) * yh.anchors[m][0], np.exp(p[k, 3]) * yh.anchors[m][1]
            boxes.append(np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], 1))
            obj = _sig(p[k, 4])
            scores.append(np.concatenate([obj[:, None], obj[:, None] * _sig(p[k, 5:]).T], 1))
        order = lambda v: np.stack(v, 1).reshape(H * W * 2, -1)    # darknet's order: cell major, anchor minor
        return order(boxes), order(scores)

    (rb, rs), (gb, gs) = decode(ref), decode(got)
    b, sc = box_score_parts(ref, "darknet", yh, net, net)
    assert np.allclose(b, rb, rtol=1e-5, atol=1e-3) and np.allclose(sc, rs, atol=1e-6)
    r = split_sqnr(ref, got, "darknet", yh, net, net)
    assert r["boxes"] == pytest.approx(_db(rb, gb), abs=0.01)
    assert r["scores"] == pytest.approx(_db(rs, gs), abs=0.01)


def test_compare_splits_a_yolov8_output_as_numpy_does(tmp_path, monkeypatch):
    """A YOLOv8n-shaped export (random weights, decode on the host): compare's box and score SQNRs of its output
    equal numpy's over the output's first 4 and last nc rows, the float output from onnxruntime directly and the
    quantized one from the layer-level integer reference and the host tail; compare.json carries them, the mAP
    headline and a min SQNR over layers, outputs and parts."""
    import json

    import onnxruntime as ort

    from generator.eval.conformance import host_outputs
    from generator.exec import run_graph
    from generator.flows.inputs import real_image
    from generator.flows import compare
    from generator.flows.pipeline import model_input, quantize_image
    from generator.frontend.yolo_family import build

    m = build("yolov8n", 96, "silu", 17, classes=5, seed=2)
    path = tmp_path / "v8.onnx"
    path.write_bytes(m.SerializeToString())
    out = m.graph.output[0].name
    compiled = []
    monkeypatch.setattr(compare, "compile_request", lambda *a, **k: compiled.append(compile_request(*a, **k))
                        or compiled[-1])   # (the program compare ran, to run it again in the integer reference)
    r = compare_flow(source=ModelSource(str(path)), image="bus", out=tmp_path / "r", log=lambda *a: None)
    c = compiled[0]
    img = real_image("bus")
    x = model_input(c.qgraph, img).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run([out], {"images": x})[0]
    qo = run_graph("ref", c.qgraph, quantize_image(c, img))
    got = host_outputs(c.qgraph, {o: qo[o][0] for o in c.qgraph.outputs}, x)[out]
    assert r.parts[out]["boxes"] == pytest.approx(_db(want[0, :4], got[0, :4]), abs=0.01)
    assert r.parts[out]["scores"] == pytest.approx(_db(want[0, 4:], got[0, 4:]), abs=0.01)
    j = json.loads((tmp_path / "r" / "compare.json").read_text())
    assert j["output_parts"][out] == pytest.approx(r.parts[out]) and "map50" in j and j["detections"] is not None
    figs = [*j["layers"].values(), *j["outputs"].values(), *j["output_parts"][out].values()]
    assert j["min_sqnr_db"] == min(figs) == r.min_sqnr
    md = (tmp_path / "r" / "compare.md").read_text().splitlines()
    assert md[2].startswith("detection agreement: mAP@0.5 of the quantized detections against the float ones: ")
    assert md[-1] == f"min SQNR: {r.min_sqnr:.1f} dB"


def test_compare_command_on_the_shipped_detector(tmp_path):
    """`invoke compare` on the official YOLOv4-tiny: the detection agreement first, per-layer and per-output SQNR
    with the heads' boxes and scores apart, the last line the minimum over all of them (compare.json's)."""
    import json

    r = subprocess.run([INVOKE, "compare", "--image", "bus", "--out", str(tmp_path)], cwd=ROOT_DIR,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    m = re.fullmatch(r"min SQNR: (\d+\.\d) dB", lines[-1])
    j = json.loads((tmp_path / "compare.json").read_text())
    assert any(ln.startswith("| conv_0 | ") for ln in lines)
    dm = re.search(r"^detection agreement: mAP@0.5 of the quantized detections against the float ones: (\d\.\d+)",
                   r.stdout, re.M)
    assert dm and float(dm.group(1)) >= 0.9 and j["map50"] == pytest.approx(float(dm.group(1)), abs=5e-4)
    assert set(j["output_parts"]) == set(j["outputs"]) and min(j["layers"].values()) > 20
    figs = [*j["layers"].values(), *j["outputs"].values(), *(v for p in j["output_parts"].values() for v in p.values())]
    assert m and float(m.group(1)) == round(min(figs), 1) == round(j["min_sqnr_db"], 1)

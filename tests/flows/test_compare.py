"""``invoke compare`` (generator/flows/compare.py): float (onnxruntime) against the quantized program on the golden
simulator. Its SQNR figures are re-derived here from other executors (the numpy float reference of the float graph,
the layer-level integer reference, which equals golden bit for bit), int16 must beat int8 by the precision it adds,
and the command's last line is the minimum output SQNR."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from generator import ROOT_DIR
from generator.frontend.modelgen import Builder
from generator.flows.compare import compare_flow, sqnr_db

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
    from generator.exec.float_ref import run_float
    from generator.flows.inputs import real_image
    from generator.flows.pipeline import compile_model, net_size, quantize_image
    from host.preprocess import darknet_resize

    got = {}
    for q in ("int8-asym", "int16-sym"):
        r = compare_flow(model=str(small_onnx), image="bus", quant=q, out=tmp_path / q, log=lambda *a: None)
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
        assert r.min_sqnr == min(r.outputs.values()) and r.layers and r.detections is None
    for o in got["int8-asym"].outputs:   # int16 spends part of its 8 extra bits on headroom (INT16_SQNR_DB)
        assert got["int16-sym"].outputs[o] > got["int8-asym"].outputs[o] + 15


def test_compare_command_on_the_shipped_detector():
    """`invoke compare` on the official YOLOv4-tiny: per-layer and per-output SQNR, the detections agree, the
    last line is the minimum output SQNR."""
    r = subprocess.run([INVOKE, "compare", "--image", "bus"], cwd=ROOT_DIR, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    m = re.fullmatch(r"min SQNR: (\d+\.\d) dB", lines[-1])
    assert m and float(m.group(1)) > 20
    assert any(ln.startswith("| conv_0 | ") for ln in lines)
    dm = re.search(r"mAP@0.5 of the quantized against the float ones: (\d\.\d+)", r.stdout)
    assert dm and float(dm.group(1)) >= 0.9

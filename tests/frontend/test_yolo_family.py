"""YOLOv5n-, YOLOX-nano- and YOLOv8n-shaped graphs (generator/frontend/yolo_family.py, random weights, the structure
PyTorch exports at opset 12 and 17, decode included) through the loader, the passes, the compiler and the host:
the accelerator part compiles for zcu19eg and the golden simulator equals the independent integer reference bit for
bit; the decode runs on the host and the quantized decoded output is close to onnxruntime's; the detections come
from the decoded output by the family's rule. Their SiLUs (Sigmoid x Mul, as exported) run through POST's
activation table; the LeakyReLU variants compile too."""
from __future__ import annotations

import numpy as np
import pytest

from generator.exec import run_golden
from generator.ref.int_ref import compare_ddr
from generator.eval.conformance import host_outputs
from generator.frontend.modelgen import ort_run
from generator.frontend.onnx_loader import load_onnx
from generator.frontend.yolo_family import FAMILIES, build
from helpers import tiered
from generator.ir.graph import GraphError
from host.exported import detect_exported, output_format

SIZE = 96


#: the default tier: each family once, opset 12 and LeakyReLU once each; every combination in --slow
FAMILY_DEFAULT = [("yolov8n", "silu", 12), ("yolov5n", "silu", 17), ("yolov5n", "leaky", 17), ("yolox_nano", "silu", 17)]


@pytest.mark.parametrize("family,act,opset", tiered([(f, a, o) for f in FAMILIES
                                                     for a, o in (("silu", 12), ("silu", 17), ("leaky", 17))],
                                                    FAMILY_DEFAULT))
def test_family_graph_compiles_bit_exact_and_decodes_on_the_host(family, opset, act):
    from helpers import compile_small, quantize_input, run_both, sqnr_db

    m = build(family, SIZE, act, opset, classes=20, seed=opset)
    out = m.graph.output[0].name
    gq, prog, xs, iref = compile_small(m, "int8-asym", with_ref=True)
    assert list(gq.metadata["host_tail_outputs"]) == [out]
    x = xs[0]
    gold, ref, res = run_both(gq, prog, x)
    for o in gq.outputs:
        assert np.array_equal(gold[o], ref[o]), f"{family}: {o} golden != reference"
    xq = quantize_input(gq, x)
    _, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
    got = host_outputs(gq, gold, x)[out]
    want = ort_run(m, x)[out]
    assert got.shape == want.shape
    assert sqnr_db(want, got) > 15, f"{family} opset {opset}: decoded output SQNR {sqnr_db(want, got):.1f} dB"
    fmt = output_format(want.shape, 20)
    assert fmt == ("noobj" if family == "yolov8n" else "obj")
    names = [f"c{i}" for i in range(20)]
    for v in (want, got):   # detections of the float and the quantized decode: the list format, inside the image
        for d in detect_exported(v, fmt, SIZE, SIZE, 320, 240, names, thresh=0.05):
            assert 0 <= d["box"][0] <= d["box"][2] <= 319 and 0 <= d["box"][1] <= d["box"][3] <= 239
            assert d["label"] == names[d["class_id"]] and d["score"] > 0.05
    assert res.cycles > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_every_silu_runs_in_a_table_layer_and_the_decode_on_the_host(family):
    """Every Sigmoid x Mul of the network becomes the SiLU table of the layer before it (none left as a copy
    layer, no product of two tensors refused); the decode's Sigmoids stay in the host tail."""
    from generator.ir.passes import run_all

    m = build(family, 64, "silu", 17, classes=4)
    silu = [n for n in m.graph.node if n.op_type == "Mul" and any(
        p.op_type == "Sigmoid" and p.output[0] in n.input and p.input[0] in n.input for p in m.graph.node)]
    g = load_onnx(m)
    tail_sig = [n for n in g.metadata["host_tail"] if n["op"] == "Sigmoid"]
    fused = run_all(g)
    acts = [n.attrs["macro"] for n in fused.macro_nodes()]
    assert sum(a.act == "silu" for a in acts) == len(silu) and all(a.kind == "conv" for a in acts if a.act == "silu")
    assert tail_sig and not [n.name for n in fused.nodes if n.op in ("Sigmoid", "Mul", "Act")]


def _encode(boxes, fmt, nc, n=50, seed=0):
    """A decoded export output holding ``boxes`` ((cx, cy, w, h, class, score) in network pixels) among ``n``
    candidates of low score."""
    rng = np.random.default_rng(seed)
    a = np.zeros((n, (5 if fmt == "obj" else 4) + nc), np.float32)
    a[:, :4] = rng.uniform(10, 50, (n, 4))
    a[:, 4:] = rng.uniform(0, 0.05, (n, a.shape[1] - 4))
    for i, (cx, cy, w, h, c, s) in enumerate(boxes):
        a[i, :4] = cx, cy, w, h
        if fmt == "obj":
            a[i, 4], a[i, 5 + c] = 0.9, s / 0.9
        else:
            a[i, 4 + c] = s
    return a[None] if fmt == "obj" else a.T[None]


@pytest.mark.parametrize("fmt", ["obj", "noobj"])
def test_exported_output_decodes_known_boxes(fmt):
    """Known boxes in the export formats come back scaled to the image (net 64x64 -> image 128x96), scored by the
    family's rule (objectness x class probability for YOLOv5/YOLOX), overlapping duplicates of one class
    suppressed, others kept."""
    boxes = [(32, 32, 16, 8, 2, 0.8), (33, 32, 16, 8, 2, 0.6), (33, 32, 16, 8, 1, 0.5), (10, 50, 6, 6, 0, 0.3)]
    dets = detect_exported(_encode(boxes, fmt, 3), fmt, 64, 64, 128, 96, ["a", "b", "c"])
    assert [(d["label"], round(d["score"], 4)) for d in dets] == [("c", 0.8), ("b", 0.5), ("a", 0.3)]
    np.testing.assert_allclose(dets[0]["box"], [48, 42, 80, 54], atol=1e-3)
    np.testing.assert_allclose(dets[2]["box"], [14, 70.5, 26, 79.5], atol=1e-3)
    assert output_format([1, 50, 8], 3) == "obj" and output_format([1, 7, 50], 3) == "noobj"
    with pytest.raises(ValueError, match="2 class names"):
        detect_exported(_encode(boxes, fmt, 3), fmt, 64, 64, 128, 96, ["a", "b"])


def _tiny_program(family, mode="int8-asym"):
    from generator.exec import runtime
    from generator.exec.rtl import TINY
    from helpers import board, compile_small, quantize_input

    gq, prog, xs = compile_small(build(family, 64, "silu", 17, classes=4, seed=3), mode, True, board(**TINY))
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    return prog, ddr, bases


@pytest.mark.parametrize("family,mode", [(f, "int8-asym") for f in FAMILIES] + [("yolov5n", "int16-sym")])
def test_family_on_tiny_csim_equals_golden(family, mode):
    """The whole 64x64 SiLU network on the TINY array (buffers that force tiling): the HLS kernel compiled with g++
    writes the golden simulator's DDR image byte for byte (the activation tables: int8 lookup, int16
    interpolation)."""
    from generator.exec import run_program
    from generator.exec.rtl import TINY
    from helpers import board, shared_executor

    prog, ddr, bases = _tiny_program(family, mode)
    gold = run_program("golden", prog, ddr, bases)
    run = shared_executor("csim", board(**TINY)).run(prog, ddr, bases)
    assert run.status == 0 and gold.status == 0
    assert np.array_equal(run.ddr, gold.ddr), f"{family}: C-simulation differs from the golden simulator"


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_family_on_tiny_rtl_equals_golden(family):
    """The same on the RTL under Verilator (1.5 to 3 minutes each here)."""
    from generator.exec import run_program
    from generator.exec.rtl import BUILD, TINY
    from helpers import board, shared_executor

    prog, ddr, bases = _tiny_program(family)
    gold = run_program("golden", prog, ddr, bases)
    run = shared_executor("rtl", board(**TINY), "tiny").run(prog, ddr, bases, case=BUILD / "tiny" / "cases" / family)
    assert not run.timeout and run.status == 0 and gold.status == 0
    assert np.array_equal(run.ddr, gold.ddr), f"{family}: RTL differs from the golden simulator"

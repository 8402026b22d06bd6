"""Nearest x2 upsampling in every form the ONNX opsets and exporters write it (Upsample of opsets 7-9; Resize with
scales only in opset 10, with the required roi in 11-12, with sizes instead of scales, without roi from 13; the
half_pixel / round_prefer_ceil mode PyTorch writes for nn.Upsample), followed by a five-input Concat: each compiles,
the golden simulator equals the integer reference bit for bit and is within int8 quantization error of
onnxruntime."""
import numpy as np
import pytest
from onnx import helper as h

from generator.frontend.modelgen import Builder, ort_run


def _resize(b, c, opset, form):
    roi = b.const(np.zeros(0, np.float32), "roi") if opset < 13 else ""
    scales = b.const(np.array([1, 1, 2, 2], np.float32), "sc")
    if form == "upsample":
        return h.make_node("Upsample", [c, scales], ["up"], mode="nearest")
    if form == "scales_only":
        return h.make_node("Resize", [c, scales], ["up"], mode="nearest")
    if form == "sizes":
        sizes = b.const(np.array([1, 6, 12, 10], np.int64), "sz")
        empty = b.const(np.zeros(0, np.float32), "e") if opset < 13 else ""
        return h.make_node("Resize", [c, roi, empty, sizes], ["up"], mode="nearest")
    return h.make_node("Resize", [c, roi, scales], ["up"], mode="nearest",
                       coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")


@pytest.mark.parametrize("opset,form", [(9, "upsample"), (10, "scales_only"), (11, "sizes"), (12, "half_pixel"),
                                        (13, "sizes"), (17, "half_pixel")])
def test_upsample_forms_and_many_input_concat(opset, form):
    from helpers import compile_small, run_both, sqnr_db

    b = Builder([1, 4, 6, 5], seed=1, opset=opset)
    c = b.leaky(b.conv("x", 6, k=3))
    b.nodes.append(_resize(b, c, opset, form))
    b.shapes["up"] = [1, 6, 12, 10]
    many = b.concat(b.conv("up", 3, k=1), "up", b.conv("up", 2, k=1), b.conv("up", 5, k=1), b.conv("up", 1, k=1))
    m = b.model([b.conv(many, 4, k=1)])
    gq, prog, xs = compile_small(m, "int8-asym")
    gold, ref, _ = run_both(gq, prog, xs[0])
    o = gq.outputs[0]
    assert np.array_equal(gold[o], ref[o])
    t = gq.tensors[o]
    want = ort_run(m, xs[0])[m.graph.output[0].name][0]
    assert sqnr_db(want, (ref[o] - t.zero_point) * t.deq_scale) > 30

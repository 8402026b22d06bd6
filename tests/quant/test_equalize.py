"""Activation-range equalization (generator/quant/equalize.py): the equalized float graph computes the same function,
only regions between homogeneous convolutions are scaled, the gains follow (S / s_c) ** alpha, and on a network
whose channels span very different ranges the int8 program gets closer to the float model with it than without
(golden simulator == layer reference in both)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from generator.ref.float_ref import run_float
from generator.frontend.modelgen import Builder
from generator.frontend.onnx_loader import load_onnx
from generator.ir import passes
from generator.quant.equalize import MAX_GAIN, channel_spans, eligible_regions, equalize, gains, tensor_gains


def _model(imbalance=True):
    """conv(leaky) -> max-pool -> conv(leaky) -> conv(linear) output, a side branch through a Sigmoid copy layer;
    the first conv's output channels scaled by 1 .. 100 (``imbalance``)."""
    b = Builder([1, 3, 16, 16], seed=3)
    a = b.leaky(b.conv("x", 12, k=3))
    p = b.maxpool(a)
    c = b.leaky(b.conv(p, 16, k=3))
    out = b.conv(c, 6, k=1)
    side = b.conv(b.act(b.conv(p, 8, k=1), "Sigmoid"), 4, k=1)
    m = b.model([out, side])
    if imbalance:
        w = m.graph.initializer[0]
        arr = numpy_helper.to_array(w) * np.logspace(0, 2, 12, dtype=np.float32).reshape(-1, 1, 1, 1)
        w.CopyFrom(numpy_helper.from_array(arr.astype(np.float32), w.name))
    return m


def _graph_and_images(m, n=4):
    g = passes.run_all(load_onnx(m))
    rng = np.random.default_rng(1)
    return g, [rng.random((1, 3, 16, 16)).astype(np.float32) for _ in range(n)]


def test_equalized_graph_computes_the_same_function():
    g, xs = _graph_and_images(_model())
    ge, done = equalize(g, channel_spans(g, xs), alpha=0.5)
    assert done and max(float(t.max()) for t in done.values()) > 2
    for x in xs[:2]:
        a, b = run_float(g, {g.inputs[0]: x}), run_float(ge, {ge.inputs[0]: x})
        for o in g.outputs:
            np.testing.assert_allclose(b[o], a[o], rtol=1e-4, atol=1e-4 * float(np.abs(a[o]).max()))


def test_only_regions_between_homogeneous_convolutions_are_eligible():
    """The pooled first activation is read by a conv only: eligible; the Sigmoid layer's region (a table
    activation writes it) and the graph outputs are not."""
    g, _ = _graph_and_images(_model())
    el = eligible_regions(g)
    for o in g.outputs:
        assert g.tensors[o].region not in el
    for n in g.macro_nodes():
        m = n.attrs["macro"]
        r = g.tensors[n.outputs[0]].region
        if m.act not in ("linear", "relu", "leaky") or m.kind != "conv":
            assert r not in el, (n.name, m.act, m.kind)
    assert el, "the leaky conv -> conv regions must be eligible"


def test_gains_follow_the_span_ratio():
    t = gains(np.array([-1.0, 0.0, 0.0, 0.0]), np.array([3.0, 1.0, 1e-9, 0.0]), alpha=0.5)
    assert t[0] == 1.0 and t[1] == pytest.approx(2.0) and t[2] == MAX_GAIN and t[3] == 1.0


@pytest.mark.parametrize("mode", ["int8-asym", "int8-sym"])
def test_equalization_brings_int8_closer_to_float(mode):
    from helpers import board, sqnr_db

    from generator.codegen import compile_program
    from generator.exec import run_golden, run_graph
    from generator.quant.quantize import QuantConfig, calibrate, quantize
    from generator.quant.ranges import channel_ranges, collect_histograms
    from generator.spec.hw import HwConfig

    g, xs = _graph_and_images(_model(), n=6)
    cfg = QuantConfig.from_mode(mode, True)
    hw = HwConfig.from_board(board(), cfg.bits)
    ge, _ = equalize(g, channel_spans(g, xs), alpha=0.5)
    x = np.random.default_rng(9).random((1, 3, 16, 16)).astype(np.float32)
    want = run_float(g, {g.inputs[0]: x})
    got_sqnr = []
    for gg in (g, ge):
        ranges = calibrate(gg, xs, progress=False)
        gq = quantize(gg, ranges, cfg, hw.acc_bits, channel_ranges=channel_ranges(collect_histograms(gg, xs, ranges)))
        t = gq.tensors[gq.inputs[0]]
        xq = np.clip(np.floor(x[0].astype(np.float64) / t.scale + 0.5) + t.zero_point, cfg.qmin, cfg.qmax)
        gold, _, _, _ = run_golden(compile_program(gq, hw), gq, xq.astype(np.int64))
        ref = run_graph("ref", gq, xq.astype(np.int64))
        o = gq.outputs[0]
        assert np.array_equal(gold[o], ref[o][0])
        deq = (gold[o] - gq.tensors[o].zero_point) * gq.tensors[o].deq_scale / tensor_gains(gq, o).reshape(-1, 1, 1)
        got_sqnr.append(sqnr_db(want[o][0], deq))
    assert got_sqnr[1] > got_sqnr[0] + 2.0, got_sqnr

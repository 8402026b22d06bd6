"""Fake-quantized float execution (generator/quant/fakequant.py): with every error source off it is the float graph,
with every source on the layer-level integer reference, and each source alone costs what it should."""
from __future__ import annotations

import numpy as np
import pytest

from generator.exec import run_graph
from generator.ref.float_ref import run_float
from generator.frontend.modelgen import Builder
from generator.frontend.onnx_loader import load_onnx
from generator.ir import passes
from generator.quant.fakequant import SOURCES, layer_sqnr, run_fake_quant
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.quant.ranges import collect_histograms, select_ranges
from helpers import quantize_input


@pytest.fixture(scope="module", params=["int8-asym", "int16-sym"])
def net(request):
    """SiLU and LeakyReLU convolutions, a max-pool, a concat and an upsample, quantized per channel from four
    random images; a fifth image for the checks."""
    b = Builder([1, 4, 16, 16], seed=11)
    a = b.act(b.conv("x", 8, k=3), "silu")
    p = b.maxpool(b.leaky(b.conv(a, 8, k=3)), 2, 2)
    u = b.upsample(b.act(b.conv(p, 6, k=1), "silu"), 2)
    y = b.conv(b.concat(a, u), 5, k=1)
    g = passes.run_all(load_onnx(b.model([y])))
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((1, 4, 16, 16)).astype(np.float32) for _ in range(5)]
    cfg = QuantConfig.from_mode(request.param)
    stats = collect_histograms(g, xs[:4], calibrate(g, xs[:4], progress=False))
    ranges, headroom, choices = select_ranges(stats, cfg, inputs=g.inputs)
    return g, quantize(g, ranges, cfg, 48, headroom=headroom, calibration=choices), xs[4]


def test_every_source_off_is_the_float_graph(net):
    g, gq, x = net
    got = run_fake_quant(g, gq, x, off=SOURCES)
    ref = run_float(g, {g.inputs[0]: x}, keep_all=True)
    for n in gq.macro_nodes():
        o = n.outputs[0]
        assert np.allclose(got[o], ref[o][0], rtol=1e-5, atol=1e-5), n.name


def test_every_source_on_is_the_integer_reference(net):
    """Each layer's fake-quantized output equals the dequantized output of the layer-level integer reference on the
    same input (float rounding may move a value on a rounding boundary by one step: at most one in a thousand)."""
    g, gq, x = net
    got = run_fake_quant(g, gq, x)
    regions = run_graph("ref", gq, quantize_input(gq, x), keep_regions=True)["regions"]
    for n in gq.macro_nodes():
        for o in n.outputs:
            t = gq.tensors[o]
            q = regions[t.region][t.ch_offset:t.ch_offset + t.shape[1]]
            steps = np.abs((q - t.zero_point) - got[o] / t.deq_scale)
            assert steps.max() < 1 + 1e-6 and np.mean(steps > 1e-6) <= 1e-3, n.name


def test_each_source_alone_costs_less_than_all_and_an_exact_layer_gains(net):
    """Per layer, switching off any one source does not lower the SQNR by more than rounding luck (0.5 dB), the
    mean over layers rises; keeping every layer exact leaves only the input's rounding (above 40 dB in int8)."""
    g, gq, x = net
    base = layer_sqnr(g, gq, x)
    for s in SOURCES:
        less = layer_sqnr(g, gq, x, off=(s,))
        assert all(less[k] >= base[k] - 0.5 for k in base), s
        assert np.mean(list(less.values())) > np.mean(list(base.values())), s
    names = [n.name for n in gq.macro_nodes()]
    exact = layer_sqnr(g, gq, x, exact=names)
    assert min(exact.values()) > 40


def test_unknown_source_is_refused(net):
    g, gq, x = net
    with pytest.raises(ValueError, match="unknown error source"):
        run_fake_quant(g, gq, x, off=("bias",))

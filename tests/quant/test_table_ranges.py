"""The pre-activation range of a table-activation layer tied to its output range (generator/quant/table_ranges.py):
checked against a bisection of the function and the compiler's scale rule written out here, and by the integer
reference's error on the layer."""
from __future__ import annotations

import numpy as np
import pytest

from generator.exec import run_graph
from generator.ref.float_ref import PRE_ACT, run_float
from generator.frontend.modelgen import Builder
from generator.frontend.onnx_loader import load_onnx
from generator.ir import passes
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.quant.ranges import collect_histograms, select_ranges
from generator.quant.table_ranges import GRID, METHOD, tie_table_ranges
from helpers import quantize_input, sqnr_db


def _silu(x):
    return x / (1.0 + np.exp(-x))


def _bisect(f, lo, hi, y, steps=200):
    """The x in [lo, hi] with f(x) = y for an f increasing there (f(lo) < y <= f(hi))."""
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < y else (lo, mid)
    return 0.5 * (lo + hi)


def _top(lo, hi):
    """The largest value of an int8 asymmetric region with range [lo, hi] (the range widened to hold 0; the zero
    point rounded and clamped to [-128, 127])."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = (hi - lo) / 255
    zp = int(np.clip(round(-128 - lo / s), -128, 127))
    return (127 - zp) * s


@pytest.fixture(scope="module")
def silu_net():
    """Conv (weights 6x the default draw) -> SiLU -> Conv, calibrated on six random images with a negative mean:
    most pre-activations lie in SiLU's curved negative part, a few reach far up."""
    b = Builder([1, 6, 12, 12], seed=7)
    y = b.conv(b.act(b.conv("x", 10, k=3, scale=6.0 / np.sqrt(54)), "silu"), 5, k=1)
    g = passes.run_all(load_onnx(b.model([y])))
    rng = np.random.default_rng(2)
    xs = [(rng.standard_normal((1, 6, 12, 12)) - 0.4).astype(np.float32) for _ in range(6)]
    ranges = calibrate(g, xs, progress=False)
    stats = collect_histograms(g, xs, ranges)
    layer = next(n for n in g.macro_nodes() if n.attrs["macro"].act == "silu")
    return g, xs, stats, layer


def test_tied_range_is_the_calibrated_minimum_and_where_silu_reaches_the_output_top(silu_net):
    """int8, the output region's range cut to 60 % of its top (as an MSE choice does): the pre-activation range
    becomes [calibrated minimum, x_top], x_top solving silu(x) = the output region's largest value (bisection,
    within one grid step); every other range is the one given; the choice records the method it replaced. int16
    keeps every range."""
    g, _, stats, layer = silu_net
    cfg = QuantConfig.from_mode("int8-asym")
    ranges, headroom, choices = select_ranges(stats, cfg, inputs=g.inputs)
    key, reg = PRE_ACT.format(layer.name), g.tensors[layer.outputs[0]].region
    ranges[reg] = (ranges[reg][0], 0.6 * ranges[reg][1])
    tied, ch = tie_table_ranges(g, stats, ranges, choices, cfg, headroom)
    s = stats[key]
    top = _top(*ranges[reg])
    x_top = _bisect(_silu, 0.0, s["hi"], top)
    assert x_top < 0.7 * s["hi"]
    assert tied[key][0] == s["lo"]
    assert abs(tied[key][1] - x_top) <= (s["hi"] - s["lo"]) / (GRID - 1)
    assert {k: v for k, v in tied.items() if k != key} == {k: v for k, v in ranges.items() if k != key}
    assert ch[key]["method"] == METHOD and ch[key]["was"] == choices[key]["method"]
    assert ch[key]["lo"] == tied[key][0] and ch[key]["hi"] == tied[key][1]
    cfg16 = QuantConfig.from_mode("int16-sym")
    r16 = select_ranges(stats, cfg16, inputs=g.inputs)
    assert tie_table_ranges(g, stats, r16[0], r16[2], cfg16, r16[1]) == (r16[0], r16[2])


def test_an_output_range_beyond_the_function_keeps_the_calibrated_maximum(silu_net):
    """When the output region's range reaches beyond what the function reaches on the calibrated
    pre-activations (a region shared with wider writers), the upper end is the calibrated maximum."""
    g, _, stats, layer = silu_net
    cfg = QuantConfig.from_mode("int8-asym")
    ranges, headroom, choices = select_ranges(stats, cfg, inputs=g.inputs)
    reg, key = g.tensors[layer.outputs[0]].region, PRE_ACT.format(layer.name)
    ranges[reg] = (ranges[reg][0], 3.0 * _silu(stats[key]["hi"]))
    tied, _ = tie_table_ranges(g, stats, ranges, choices, cfg, headroom)
    assert tied[key] == (stats[key]["lo"], stats[key]["hi"])


def test_tied_range_lowers_the_layer_error_of_a_range_clipped_in_the_curved_part(silu_net):
    """A pre-activation range whose lower end lies inside SiLU's curved part (-2.5) and whose upper end lies well
    below the output's top, as per-tensor SQNR choices give: the SiLU layer's integer output (layer-level
    reference) against the float values on the calibration images is at least 3 dB closer with the tied range."""
    g, xs, stats, layer = silu_net
    cfg = QuantConfig.from_mode("int8-asym")
    ranges, headroom, choices = select_ranges(stats, cfg, inputs=g.inputs)
    key, out = PRE_ACT.format(layer.name), layer.outputs[0]
    assert stats[key]["lo"] < -5
    clipped = dict(ranges, **{key: (-2.5, 0.6 * ranges[key][1])})
    tied, _ = tie_table_ranges(g, stats, clipped, choices, cfg, headroom)

    def layer_sqnr(r):
        gq = quantize(g, r, cfg, 32, headroom=headroom)
        t = gq.tensors[out]
        got, want = [], []
        for x in xs:
            regions = run_graph("ref", gq, quantize_input(gq, x), keep_regions=True)["regions"]
            q = regions[t.region][t.ch_offset:t.ch_offset + t.shape[1]]
            got.append((q - t.zero_point) * t.scale)
            want.append(run_float(g, {g.inputs[0]: x}, keep_all=True)[out][0])
        return sqnr_db(np.array(want), np.array(got))

    assert layer_sqnr(tied) > layer_sqnr(clipped) + 3.0


def test_a_table_layer_without_its_pre_activation_statistics_is_named(silu_net):
    from generator.quant.quantize import QuantError

    g, _, stats, layer = silu_net
    cfg = QuantConfig.from_mode("int8-asym")
    ranges, headroom, choices = select_ranges(stats, cfg, inputs=g.inputs)
    partial = {k: v for k, v in stats.items() if k != PRE_ACT.format(layer.name)}
    with pytest.raises(QuantError, match=f"layer {layer.name}: no calibrated pre-activation range"):
        tie_table_ranges(g, partial, ranges, choices, cfg, headroom)

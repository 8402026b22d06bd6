"""Activation calibration (generator/quant/ranges.py), bias correction (generator/quant/bias.py) and per-channel
output scales, checked against direct numpy computations on the samples themselves."""
import numpy as np
import pytest

from generator.exec import run_graph
from generator.ref.float_ref import run_float
from generator.frontend.modelgen import Builder
from generator.ir import passes
from generator.frontend.onnx_loader import load_onnx
from generator.quant.bias import correct_bias
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.quant.ranges import (BINS, INT16_SQNR_DB, candidates, collect_histograms, channel_ranges,
                                    select_ranges)
from helpers import compiled_model, quantize_input


def _stats(x: np.ndarray) -> dict:
    """Region statistics of samples x as collect_histograms builds them (one image)."""
    lo, hi = float(x.min()), float(x.max())
    h, _ = np.histogram(x, bins=BINS, range=(lo, hi))
    return {"lo": lo, "hi": hi, "hist": h.tolist(), "image_lo": [lo], "image_hi": [hi]}


def _sample_sqnr(x, lo, hi, cfg, headroom=1.0) -> float:
    """SQNR (dB) of the samples quantized with range [lo, hi] (the compiler's scale / zero-point rule)."""
    from generator.quant.quantize import _act_params
    s, zp = _act_params(lo, hi, cfg, headroom)
    deq = (np.clip(np.round(x / s) + zp, cfg.qmin, cfg.qmax) - zp) * s
    return 10 * np.log10(np.sum(x ** 2) / np.sum((x - deq) ** 2))


@pytest.fixture(scope="module")
def heavy_tailed():
    """Laplace samples (the shape of conv activations) with a few large outliers."""
    rng = np.random.default_rng(3)
    return np.concatenate([rng.laplace(0.5, 1.0, 1_000_000), [20.0, -15.0, 18.0]])


@pytest.mark.parametrize("mode", ["int8-asym", "int8-sym"])
def test_each_method_gives_its_range_and_the_choice_is_the_best_on_the_samples(heavy_tailed, mode):
    """minmax is the samples' range, percentile their 0.01 / 99.99 % quantiles (within a bin), mse and kl clip
    the outliers; the chosen method's range quantizes the samples themselves at least as well as every other
    candidate (within 0.2 dB: the histogram stands for the samples) and far better than min/max."""
    x, cfg = heavy_tailed, QuantConfig.from_mode(mode)
    s = _stats(x)
    c = candidates(s, cfg)
    assert c["minmax"] == (x.min(), x.max())
    bw = (x.max() - x.min()) / BINS
    assert abs(c["percentile"][0] - np.percentile(x, 0.01)) <= 2 * bw
    assert abs(c["percentile"][1] - np.percentile(x, 99.99)) <= 2 * bw
    for m in ("mse", "kl"):   # both clip the outliers
        assert c[m][1] < 0.9 * x.max()
    ranges, _, choices = select_ranges({"r": s}, cfg)
    got = _sample_sqnr(x, *ranges["r"], cfg)
    assert all(got >= _sample_sqnr(x, *v, cfg) - 0.2 for v in c.values())
    assert got > _sample_sqnr(x, *c["minmax"], cfg) + 2
    assert choices["r"]["method"] in c and abs(choices["r"]["sqnr_db"][choices["r"]["method"]] - got) < 0.5


def test_int16_headroom_keeps_the_stated_sqnr(heavy_tailed):
    """int16 keeps min/max widened by the derived headroom; the samples quantized with it have the SQNR that the
    headroom is derived from (INT16_SQNR_DB)."""
    cfg = QuantConfig.from_mode("int16-sym")
    s = _stats(heavy_tailed)
    ranges, headroom, choices = select_ranges({"r": s}, cfg)
    assert choices["r"]["method"] == "minmax" and headroom["r"] > 4
    assert _sample_sqnr(heavy_tailed, *ranges["r"], cfg, headroom["r"]) == pytest.approx(INT16_SQNR_DB, abs=0.5)
    with pytest.raises(ValueError, match="calibration method 'entropy'"):
        select_ranges({"r": s}, cfg, method="entropy")


def _head_model():
    """A conv 'head' (graph output, linear) whose 6 output channels have ranges from about 0.1 to 100."""
    b = Builder([1, 4, 8, 8], seed=11)
    y = b.conv("x", 6, k=3)
    m = b.model([y])
    import onnx
    for init in m.graph.initializer:
        a = onnx.numpy_helper.to_array(init).copy()
        if a.ndim == 4:
            a *= np.array([0.02, 0.2, 1, 5, 20, 60], np.float32)[:, None, None, None]
            init.CopyFrom(onnx.numpy_helper.from_array(a, init.name))
    return passes.run_all(load_onnx(m))


@pytest.mark.parametrize("mode", ["int8-asym", "int8-sym"])
def test_per_channel_output_scales_serve_every_channel_of_a_head(mode):
    """A graph output only the host reads gets one scale per channel (from its calibrated per-channel ranges):
    dequantized through Tensor.deq_scale, every channel's SQNR against the float graph is at least 30 dB, where
    one scale for the tensor leaves the narrow channels below 20 dB."""
    g = _head_model()
    rng = np.random.default_rng(0)
    xs = [rng.random((1, 4, 8, 8)).astype(np.float32) for _ in range(3)]
    ranges = calibrate(g, xs, progress=False)
    chans = channel_ranges(collect_histograms(g, xs, ranges))
    assert list(chans) == [g.tensors[g.outputs[0]].region]
    cfg = QuantConfig.from_mode(mode)
    out = g.outputs[0]
    worst = {}
    for per_ch in (True, False):
        gq = quantize(g, ranges, cfg, 32, channel_ranges=chans if per_ch else None)
        t = gq.tensors[out]
        assert (t.channel_scales is not None) == per_ch
        y = run_graph("ref", gq, quantize_input(gq, xs[0]))[out][0]
        deq = (y - t.zero_point) * t.deq_scale
        ref = run_float(g, {g.inputs[0]: xs[0]})[out][0].astype(np.float64)
        snr = [10 * np.log10(np.sum(ref[c] ** 2) / np.sum((ref[c] - deq[c]) ** 2)) for c in range(6)]
        worst[per_ch] = min(snr)
    assert worst[True] >= 30 and worst[False] < 20


def test_bias_correction_removes_the_mean_shift_of_quantization():
    """A convolution over inputs with a large mean, quantized to int8 per tensor: the mean of each output channel's
    error (dequantized integer output - float output, on the calibration images) shrinks at least fourfold once
    the bias is corrected; the correction is recorded per layer."""
    b = Builder([1, 16, 10, 10], seed=2)
    y = b.conv("x", 8, k=3)
    g = passes.run_all(load_onnx(b.model([y])))
    rng = np.random.default_rng(1)
    xs = [(0.8 + 0.4 * rng.random((1, 16, 10, 10))).astype(np.float32) for _ in range(4)]
    ranges = calibrate(g, xs, progress=False)
    cfg = QuantConfig.from_mode("int8-asym", per_channel=False)
    gq = quantize(g, ranges, cfg, 32)
    gc = correct_bias(gq, g, xs, 32)
    out = g.outputs[0]

    def mean_err(q):
        t = q.tensors[out]
        e = 0.0
        for x in xs:
            y = run_graph("ref", q, quantize_input(q, x))[out][0]
            e = e + ((y - t.zero_point) * t.deq_scale - run_float(g, {g.inputs[0]: x})[out][0]).mean(axis=(1, 2))
        return np.abs(e / len(xs))

    before, after = mean_err(gq), mean_err(gc)
    assert after.max() * 4 < before.max()
    assert set(gc.metadata["bias_correction"]) == {n.name for n in gc.macro_nodes()}


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_yolo_parameters_match_the_independent_reference(mode):
    """YOLOv4-tiny as the compile pipeline quantizes it (per-region calibration method and headroom, per-channel
    head scales), without bias correction: every scale, zero point, integer weight, bias and multiplier equals
    what the independent integer reference derives from the same ranges; with bias correction only biases
    differ."""
    from generator.ref.int_ref import IndependentRef
    from generator.flows.pipeline import calibration_ranges, compile_model

    c = compile_model("zcu19eg", mode, progress=False, bias_correction=False)
    stats = calibration_ranges(c.graph, c.model_path, progress=False, stats=True)
    ranges, headroom, _ = select_ranges(stats, c.quant, inputs=c.graph.inputs)
    ref = IndependentRef(c.graph, ranges, c.quant.bits, c.quant.symmetric, True, headroom=headroom,
                         channel_ranges=channel_ranges(stats))
    assert ref.check_params(c.qgraph) == []
    assert sum(t.channel_scales is not None for t in c.qgraph.tensors.values()) == 2   # the two heads
    cb = compiled_model("zcu19eg", mode)
    bad = ref.check_params(cb.qgraph)
    assert bad and all("folded bias differs" in b for b in bad)

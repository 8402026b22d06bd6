"""Activation-range calibration methods, chosen per tensor (region) by the SQNR of its quantized values.

After :func:`generator.quant.quantize.calibrate` has found every region's [min, max] on the calibration images,
:func:`collect_histograms` runs the float graph over the same images again and records, per region, a histogram of
its values (:data:`BINS` bins over [min, max]) and each image's own [min, max]. From these, for one quantization
configuration, :func:`select_ranges` computes candidate ranges:

* ``minmax``: the calibrated [min, max];
* ``percentile``: the :data:`PERCENTILE` / 100 - :data:`PERCENTILE` quantiles (ONNX Runtime's percentile
  calibrator; Wu et al., "Integer Quantization for Deep Learning Inference", arXiv:2004.09602, sec. 4.1);
* ``mse``: the range, among [min, max] scaled by :data:`MSE_GRID` factors at each end, whose quantized values
  have the least squared error (Banner et al., "Post training 4-bit quantization", NeurIPS 2019; Wu et al. 4.1);
* ``kl``: TensorRT's entropy calibration (Migacz, "8-bit Inference with TensorRT", GTC 2017): the clipped
  histogram P and its quantization to the configuration's levels Q, the range minimizing KL(P || Q);

quantizes the histogram with each (through the same scale / zero-point rule as the compiler) and keeps the one whose
quantized values have the highest SQNR against the float values, ``10 log10(sum x^2 / sum (x - deq(q(x)))^2)``
over all calibration images. The graph input keeps its known range. int16 keeps ``minmax`` (its resolution
leaves nothing to gain from clipping) with a derived headroom: per region the largest factor by which one
calibration image widened the range of the others (a leave-one-out estimate of how far an unseen image reaches
beyond the calibrated range), so images brighter than the calibration set do not saturate.
"""
from __future__ import annotations

import numpy as np

from generator.ref.float_ref import run_float
from generator.ir.graph import Graph
from generator.quant.quantize import QuantError, _act_params, channel_output_regions

#: histogram bins per region over its calibrated [min, max] (TensorRT and ONNX Runtime use 2048)
BINS = 2048
#: percentile calibration: the lower / upper quantile in percent
PERCENTILE = 99.99
#: MSE search: factors on each end of [min, max]
MSE_GRID = np.concatenate([np.linspace(1.0, 0.5, 26), np.linspace(0.48, 0.1, 20)])

#: int16: the SQNR (dB) of every region's calibration values that its headroom keeps (:func:`int16_headroom`)
INT16_SQNR_DB = 66.0
#: calibration methods in the order they are tried (ties keep the earlier one)
METHODS = ("minmax", "percentile", "mse", "kl")


def collect_histograms(g: Graph, images, ranges: dict) -> dict:
    """Second calibration pass: per region, the histogram of its float values over ``ranges[region]`` and each
    image's [min, max].

    Args:
        g: fused float graph; images: list of float32 [1, C, H, W] inputs (the ones :func:`calibrate` saw);
        ranges: {region: (min, max)} from :func:`generator.quant.quantize.calibrate`.
    Returns: {region: {"lo", "hi", "hist": [BINS] ints, "image_lo": [...], "image_hi": [...]}} (JSON-able); the
        regions of :func:`generator.quant.quantize.channel_output_regions` add "ch_lo", "ch_hi" (per channel).
    Raises: QuantError naming the region when a range or a calibration value is not finite (NaN or +-inf: weights
        or an input that overflow float32), :func:`check_finite`.
    """
    for r, (lo, hi) in ranges.items():
        check_finite(r, lo, hi)
    out = {r: {"lo": float(lo), "hi": float(hi), "hist": np.zeros(BINS, np.int64), "image_lo": [], "image_hi": []}
           for r, (lo, hi) in ranges.items()}
    per_ch = set(channel_output_regions(g)) & set(out)
    for x in images:
        seen = {}
        for name, v in run_float(g, {g.inputs[0]: x}, keep_all=True).items():
            t = g.tensors.get(name)
            key = t.region if t is not None else name     # a region, or a table layer's pre-activation values
            if key is None or key not in out:
                continue
            s = out[key]
            v_lo, v_hi = float(v.min()), float(v.max())
            check_finite(key, v_lo, v_hi, f"on calibration image {len(s['image_lo'])}")
            h, _ = np.histogram(v, bins=BINS, range=(s["lo"], s["hi"] if s["hi"] > s["lo"] else s["lo"] + 1e-8))
            s["hist"] += h
            lo, hi = seen.get(key, (np.inf, -np.inf))
            seen[key] = (min(lo, v_lo), max(hi, v_hi))
            if key in per_ch:
                c_lo, c_hi = v.min(axis=(0, 2, 3)), v.max(axis=(0, 2, 3))
                s["ch_lo"] = np.minimum(s.get("ch_lo", c_lo), c_lo)
                s["ch_hi"] = np.maximum(s.get("ch_hi", c_hi), c_hi)
        for r, (lo, hi) in seen.items():
            out[r]["image_lo"].append(lo)
            out[r]["image_hi"].append(hi)
    for s in out.values():
        for k in ("hist", "ch_lo", "ch_hi"):
            if k in s:
                s[k] = np.asarray(s[k]).tolist()
    return out


def check_finite(region: str, lo: float, hi: float, when: str = "") -> None:
    """Raise QuantError when a calibration statistic of ``region`` (its [lo, hi]) is not finite: one line naming
    the region (``when``: e.g. "on calibration image 3"), so that no NaN range reaches ``np.histogram`` or a
    scale."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise QuantError(f"region {region}: calibration values {'' if not when else when + ' '}span [{lo}, {hi}], "
                         f"not finite numbers (NaN or infinity: weights or inputs that overflow float32); cannot "
                         f"choose a quantization range")


def channel_ranges(stats: dict) -> dict:
    """{region: (min [C], max [C])} of the regions whose statistics carry per-channel ranges."""
    return {r: (s["ch_lo"], s["ch_hi"]) for r, s in stats.items() if "ch_lo" in s}


def loo_headroom(s: dict) -> float:
    """Leave-one-out headroom of one region's statistics: max over images i of span(all) / span(all but i), span
    the range width including 0 (1.0 with fewer than two images)."""
    lo, hi = np.array(s["image_lo"]), np.array(s["image_hi"])
    if len(lo) < 2:
        return 1.0
    span = max(s["hi"], 0.0) - min(s["lo"], 0.0)
    worst = 1.0
    for i in range(len(lo)):
        rest = max(np.delete(hi, i).max(), 0.0) - min(np.delete(lo, i).min(), 0.0)
        if rest > 0:
            worst = max(worst, span / rest)
    return float(worst)


def int16_headroom(s: dict, cfg) -> tuple[float, float]:
    """Headroom of a region at 16 bits: the largest factor on its [min, max] that keeps the rounding noise of its
    calibration values :data:`INT16_SQNR_DB` below their power (noise of step d: d^2 / 12), at least 1; returns
    (headroom, the SQNR in dB it leaves).
    int16 has resolution to spare: the bits beyond that SQNR guard against images beyond the calibrated range."""
    x, n = _centers(s)
    power = float(np.sum(n * x * x) / max(n.sum(), 1.0))
    lo, hi = min(s["lo"], 0.0), max(s["hi"], 0.0)
    step = max(abs(lo), hi) / cfg.qmax if cfg.symmetric else (hi - lo) / (cfg.qmax - cfg.qmin)
    target = np.sqrt(12.0 * power / 10 ** (INT16_SQNR_DB / 10))
    h = float(max(1.0, target / max(step, 1e-30)))
    return h, float(10 * np.log10(max(12.0 * power, 1e-30) / max((h * step) ** 2, 1e-30)))


def _centers(s: dict) -> tuple[np.ndarray, np.ndarray]:
    """Bin centers and counts (float64) of a region's histogram."""
    edges = np.linspace(s["lo"], s["hi"], BINS + 1)
    return 0.5 * (edges[1:] + edges[:-1]), np.asarray(s["hist"], np.float64)


def fake_quant(x: np.ndarray, scale: float, zp: int, qmin: int, qmax: int) -> np.ndarray:
    """deq(q(x)): x [any] float64 -> float64, q = clamp(round(x / scale) + zp, qmin, qmax); ``scale`` and ``zp``
    scalars or arrays broadcasting with ``x`` (the result has the broadcast shape; computed in place in it)."""
    q = np.divide(x, scale)
    np.round(q, out=q)
    q += zp
    np.clip(q, qmin, qmax, out=q)
    q -= zp
    q *= scale
    return q


def hist_sqnr(s: dict, lo: float, hi: float, cfg) -> float:
    """SQNR (dB) of the region's histogram quantized with the range [lo, hi] under ``cfg`` (bin centers stand for
    their values)."""
    x, n = _centers(s)
    scale, zp = _act_params(lo, hi, cfg, 1.0)
    err = np.sum(n * (x - fake_quant(x, scale, zp, cfg.qmin, cfg.qmax)) ** 2)
    sig = np.sum(n * x * x)
    return float(10 * np.log10(max(sig, 1e-30) / max(err, 1e-30)))


def _percentile(s: dict) -> tuple[float, float]:
    """[lower, upper] PERCENTILE quantiles of the histogram (bin edges)."""
    n = np.asarray(s["hist"], np.float64)
    cdf = np.cumsum(n) / max(n.sum(), 1.0)
    edges = np.linspace(s["lo"], s["hi"], BINS + 1)
    q = 1.0 - PERCENTILE / 100.0
    return float(edges[np.searchsorted(cdf, q)]), float(edges[min(np.searchsorted(cdf, 1.0 - q) + 1, BINS)])


def _mse(s: dict, cfg) -> tuple[float, float]:
    """The range [lo * a, hi * b] (a, b in MSE_GRID; a = b for symmetric) of least quantization error: the
    :func:`hist_sqnr` of every pair, the histogram quantized for a block of pairs at once ([pairs, BINS] arrays; the
    same float64 operations per element as :func:`hist_sqnr`, so the same values)."""
    best, rng = -np.inf, (s["lo"], s["hi"])
    pairs = [(a, a) for a in MSE_GRID] if cfg.symmetric else [(a, b) for a in MSE_GRID[::3] for b in MSE_GRID]
    x, n = _centers(s)
    sig = np.sum(n * x * x)
    for k in range(0, len(pairs), 64):
        rngs = [(s["lo"] * a, s["hi"] * b) for a, b in pairs[k:k + 64]]
        params = [_act_params(float(lo), float(hi), cfg, 1.0) for lo, hi in rngs]   # (the same values, faster)
        scale = np.array([p[0] for p in params], np.float64)[:, None]
        zp = np.array([p[1] for p in params], np.float64)[:, None]
        d = np.subtract(x, fake_quant(x, scale, zp, cfg.qmin, cfg.qmax))
        np.square(d, out=d)
        d *= n
        errs = np.sum(d, axis=1)                   # = np.sum(n * (x - deq(q(x))) ** 2) of each pair
        for r, err in zip(rngs, errs):
            q = float(10 * np.log10(max(sig, 1e-30) / max(err, 1e-30)))
            if q > best:
                best, rng = q, r
    return rng


def _kl(s: dict, cfg) -> tuple[float, float]:
    """TensorRT entropy calibration generalized to a signed histogram: windows [lo, hi] * t of the calibrated
    range (t from 1 down to 1/16, the window's bins merged into the configuration's levels), minimizing
    KL(P || Q) of the clipped histogram P (outliers added to the edge bins) and its quantized expansion Q."""
    n = np.asarray(s["hist"], np.float64)
    levels = cfg.qmax - cfg.qmin + 1
    edges = np.linspace(s["lo"], s["hi"], BINS + 1)
    best, rng = np.inf, (s["lo"], s["hi"])
    for t in np.linspace(1.0, 1.0 / 16, 61):
        i0 = int(np.searchsorted(edges, s["lo"] * t, side="right")) - 1
        i1 = int(np.searchsorted(edges, s["hi"] * t, side="left"))
        i0, i1 = max(i0, 0), min(max(i1, i0 + 1), BINS)
        if i1 - i0 < levels:
            break
        p = n[i0:i1].copy()
        p[0] += n[:i0].sum()
        p[-1] += n[i1:].sum()
        idx = np.arange(i1 - i0) * levels // (i1 - i0)
        nz = (n[i0:i1] > 0).astype(np.float64)
        tot = np.bincount(idx, weights=n[i0:i1], minlength=levels)
        cnt = np.bincount(idx, weights=nz, minlength=levels)
        q = np.where(nz > 0, tot[idx] / np.maximum(cnt[idx], 1), 0.0)
        ps, qs = p / max(p.sum(), 1e-30), q / max(q.sum(), 1e-30)
        m = ps > 0
        kl = float(np.sum(ps[m] * np.log(ps[m] / np.maximum(qs[m], 1e-12))))
        if kl < best:
            best, rng = kl, (float(edges[i0]), float(edges[i1]))
    return rng


def candidates(s: dict, cfg) -> dict:
    """{method: (lo, hi)} for the region statistics ``s`` under ``cfg`` (see the module docstring)."""
    return {"minmax": (s["lo"], s["hi"]), "percentile": _percentile(s), "mse": _mse(s, cfg), "kl": _kl(s, cfg)}


def select_ranges(stats: dict, cfg, inputs=(), method: str = "auto") -> tuple[dict, dict, dict]:
    """Per region, the calibration method and range for quantization configuration ``cfg``.

    Args:
        stats: :func:`collect_histograms` output; inputs: graph-input regions (their range is kept, no headroom);
        method: ``auto`` (per region the candidate of highest SQNR; int16: minmax) or one of :data:`METHODS`.
    Returns: (ranges {region: (lo, hi)}, headroom {region: factor}, choices {region: {"method", "lo", "hi",
        "headroom", "sqnr_db": {method: dB}}}) -- choices go into the manifest.
    Raises: ValueError for an unknown method; QuantError for a region whose statistics are not finite
        (:func:`check_finite`).
    """
    if method != "auto" and method not in METHODS:
        raise ValueError(f"calibration method {method!r}: choose auto or one of {', '.join(METHODS)}")
    ranges, headroom, choices = {}, {}, {}
    for r, s in stats.items():
        check_finite(r, s["lo"], s["hi"])
        if r in inputs:
            ranges[r], headroom[r] = (s["lo"], s["hi"]), 1.0
            choices[r] = {"method": "input", "lo": s["lo"], "hi": s["hi"], "headroom": 1.0}
            continue
        if "ch_lo" in s and cfg.per_channel:   # per-channel output scales from the channels' min / max
            ranges[r] = (s["lo"], s["hi"])
            headroom[r] = int16_headroom(s, cfg)[0] if cfg.bits == 16 else 1.0
            choices[r] = {"method": "minmax per channel", "lo": s["lo"], "hi": s["hi"],
                          "headroom": round(headroom[r], 4)}
            continue
        if cfg.bits == 16:
            cand = {"minmax": (s["lo"], s["hi"])}
            headroom[r], q = int16_headroom(s, cfg)
            sq = {"minmax": q}
        else:
            cand = candidates(s, cfg) if method == "auto" else {method: candidates(s, cfg)[method]}
            headroom[r] = 1.0
            sq = {k: hist_sqnr(s, *v, cfg) for k, v in cand.items()}
        pick = max(cand, key=lambda k: (sq[k], -METHODS.index(k)))
        ranges[r] = tuple(float(v) for v in cand[pick])
        choices[r] = {"method": pick, "lo": ranges[r][0], "hi": ranges[r][1], "headroom": round(headroom[r], 4),
                      "sqnr_db": {k: round(v, 2) for k, v in sq.items()}}
    return ranges, headroom, choices


def calibration_summary(qg: Graph) -> str:
    """The calibration of a quantized graph in a few words: the count of each method chosen over its regions (e.g.
    ``mse 16, minmax per channel 2``, from ``metadata["calibration"]``) and whether its biases were corrected;
    ``-`` when the graph records none."""
    ch = [v["method"] for v in qg.metadata.get("calibration", {}).values() if v["method"] != "input"]
    counts = {m: ch.count(m) for m in dict.fromkeys(sorted(ch, key=lambda m: -ch.count(m)))}
    text = ", ".join(f"{m} {k}" for m, k in counts.items()) or "-"
    return text + ("; bias corrected" if "bias_correction" in qg.metadata else "")

"""The MSE calibration search (generator/quant/ranges.py: _mse), which quantizes the histogram for blocks of range
pairs at once, against the plain search: every pair's hist_sqnr in turn, the first best kept."""
from __future__ import annotations

import numpy as np
import pytest

from generator.quant.quantize import QuantConfig
from generator.quant.ranges import BINS, MSE_GRID, _mse, hist_sqnr


def _plain_mse(s, cfg):
    best, rng = -np.inf, (s["lo"], s["hi"])
    pairs = [(a, a) for a in MSE_GRID] if cfg.symmetric else [(a, b) for a in MSE_GRID[::3] for b in MSE_GRID]
    for a, b in pairs:
        q = hist_sqnr(s, s["lo"] * a, s["hi"] * b, cfg)
        if q > best:
            best, rng = q, (s["lo"] * a, s["hi"] * b)
    return rng


def _stats(x):
    lo, hi = float(x.min()), float(x.max())
    return {"lo": lo, "hi": hi, "hist": np.histogram(x, bins=BINS, range=(lo, hi))[0].tolist()}


@pytest.mark.parametrize("mode", ["int8-asym", "int8-sym", "int16-asym", "int16-sym"])
def test_mse_equals_the_plain_search(mode):
    cfg = QuantConfig.from_mode(mode, True)
    rng = np.random.default_rng(3)
    samples = [rng.standard_normal(20_000) * 3,                              # symmetric, long tails
               np.abs(rng.standard_cauchy(20_000)).clip(0, 300),            # one-sided, heavy tail
               rng.exponential(1.0, 20_000) - 0.278,                         # SiLU-like: small negative side
               np.r_[rng.standard_normal(5_000), [40.0]],                   # one outlier
               np.zeros(100)]                                                # empty range
    for x in samples:
        s = _stats(x)
        got = _mse(s, cfg)
        assert got == _plain_mse(s, cfg) and all(type(v) is type(r) for v, r in zip(got, _plain_mse(s, cfg)))

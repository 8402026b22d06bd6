"""The input domain of each POST activation table, chosen for the table rather than for storage.

A layer with a table activation (:data:`generator.ir.activations.TABLE_ACTIVATIONS`: SiLU, Sigmoid, HardSwish, GELU,
...) requantizes its accumulator into the table's input domain (scale s_t, zero point zp_t), and the table maps
that domain to the output (:func:`generator.quant.quantize.activation_table`): 256 direct entries in int8, 256
linearly interpolated segments in int16. Every unit of the domain's width is resolution lost where the function
is curved, so :func:`table_domain` chooses it for the table:

* **no storage headroom**: the int16 headroom of a region (:func:`generator.quant.ranges.int16_headroom`, 2x to
  11x wider than the calibrated range) would widen every segment by the same factor; the domain starts from the
  calibrated pre-activation range itself;
* **flat ends cut off**: where the function stays within :data:`FLAT_TOL_STEPS` of an output step of its value
  at an end of that range (SiLU, GELU, Mish, Softplus below about -8; Sigmoid, Tanh, HardSigmoid at both ends;
  HardSwish below -3), the domain ends where the function leaves that band; POST's clamp maps everything beyond
  onto the end's value, exact to within half an output step;
* **the identity above the table** (POST ``id_above``, :data:`generator.spec.isa.ID_SHIFT_MAX`): a function whose
  upper side is the identity (SiLU, GELU, Mish, Softplus, ELU, HardSwish) up to the top of the output's range
  gets a table over its curved part only, [lo, X] with X where |f(x) - x| stays within the same band, at the
  input scale s_t = s_out / 2^k (k the largest that still spans [lo, X], at most ID_SHIFT_MAX); above the window
  POST maps the value to the output grid by a shift, exactly. Without this, the table of a YOLOv8n layer whose
  pre-activations reach 90 spends 90 % of its segments on the straight part and the int16 headroom of the
  linear side (values beyond the calibration set) would be lost at the table's end.
* the domain is asymmetric in every mode (its zero point is POST's own, independent of the storage's).

The policy is shared by the quantizer (:func:`generator.quant.quantize.quantize`) and the independent integer
reference (:class:`generator.ref.int_ref.IndependentRef`), which derive their arithmetic (multipliers, tables)
each on their own from it.
"""
from __future__ import annotations

import math

import numpy as np

from generator.spec.isa import ID_SHIFT_MAX

#: points at which a function is sampled to find its flat ends and the start of its identity part
GRID = 8193
#: an end is flat (or the identity holds) where the function stays within this fraction of an output step
FLAT_TOL_STEPS = 0.25


def flat_trimmed(f, lo: float, hi: float, tol: float) -> tuple[float, float]:
    """The range [lo', hi'] within [lo, hi] left after cutting off the ends where ``f`` (a vectorized float64
    function) stays within ``tol`` (real units) of its value at that end; each cut keeps the sample where the
    function leaves the band. A function constant within ``tol`` over the whole range keeps [lo, hi]. Sampled on
    :data:`GRID` points. Raises ValueError for lo >= hi or tol <= 0."""
    if not (lo < hi) or not tol > 0:
        raise ValueError(f"flat_trimmed needs lo < hi and tol > 0, got [{lo}, {hi}], tol {tol}")
    x = np.linspace(lo, hi, GRID)
    y = f(x)
    out_lo = np.nonzero(np.abs(y - y[0]) > tol)[0]
    out_hi = np.nonzero(np.abs(y - y[-1]) > tol)[0]
    if out_lo.size == 0:
        return float(lo), float(hi)
    i0 = max(int(out_lo[0]) - 1, 0)
    i1 = min(int(out_hi[-1]) + 1, GRID - 1)
    return float(x[i0]), float(x[max(i1, i0 + 1)])


def identity_start(f, top: float, tol: float) -> float | None:
    """The smallest x >= 0 from which |f(x) - x| <= ``tol`` up to ``top`` (sampled on :data:`GRID` points), or
    None when the function is not the identity within ``tol`` at ``top`` (or top <= 0)."""
    if not top > 0:
        return None
    x = np.linspace(0.0, top, GRID)
    off = np.nonzero(np.abs(f(x) - x) > tol)[0]
    if off.size and off[-1] == GRID - 1:
        return None
    return 0.0 if off.size == 0 else float(x[min(int(off[-1]) + 1, GRID - 1)])


def table_domain(f, lo: float, hi: float, out: tuple, bits: int, floor: float) -> tuple[float, int, tuple | None]:
    """The input domain of one layer's activation table (see the module docstring).

    Args:
        f: the activation, float64 array -> float64 array (``TABLE_ACTIVATIONS[act]`` with its parameters bound).
        lo, hi: the calibrated pre-activation range (real units).
        out: (scale, zero point) of the layer's output (one scale: a table layer's output is per tensor).
        bits: 8 or 16.
        floor: the smallest table scale the requantization allows (a real multiplier at most 2^13).
    Returns: (s_t, zp_t, identity): the domain's scale (float) and zero point (int, within the precision's range),
        and (id_shift, zp_id) for POST's identity above the window, or None (the table covers the whole range and
        values beyond it clamp).
    """
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    levels = qmax - qmin + 1
    s_out, zp_out = float(out[0]), int(out[1])
    tol = FLAT_TOL_STEPS * s_out
    lo2, hi2 = flat_trimmed(f, lo, hi, tol) if hi > lo and tol > 0 else (lo, hi)
    lo2, hi2 = min(lo2, 0.0), max(hi2, 0.0)
    x_id = identity_start(f, (qmax - zp_out) * s_out, tol) if tol > 0 else None
    if x_id is not None and levels * s_out >= x_id - lo2 > 0:
        k = min(int(math.floor(math.log2(levels * s_out / (x_id - lo2)))), ID_SHIFT_MAX)
        while k >= 0 and s_out / 2 ** k < floor:
            k -= 1
        if k >= 0:
            s_t = s_out / 2 ** k
            return s_t, int(np.clip(round(qmin - lo2 / s_t), qmin, qmax)), (k, zp_out)
    s_t = max(max(hi2 - lo2, 1e-8) / (levels - 1), floor)
    return s_t, int(np.clip(round(qmin - lo2 / s_t), qmin, qmax)), None

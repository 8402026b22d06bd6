"""The pre-activation range of each table-activation layer, tied to the layer's own output range (int8).

A layer with a table activation (SiLU, GELU, Sigmoid, ...: :data:`generator.ir.activations.TABLE_ACTIVATIONS`) has two
calibrated ranges: its output region's, and its values before the activation (key
``PRE_ACT.format(layer)``), from which :func:`generator.ref.tables.table_domain` derives the table's input domain.
:func:`generator.quant.ranges.select_ranges` chooses each by the SQNR of its own values, independently, so the two
disagree: on the DocLayNet YOLOv8n (57 SiLU layers, ``auto`` ranges) 32 pre-activation ranges end below at -6.9
to -2.9, inside SiLU's curved part (the table's own flat cut lies at -7.5 to -3.7), and the upper ends lie below
the output range's top by 5 % (median over the 57), by more than 13 % for one in ten, by 60 % at worst. Both are
errors of the table's output, not of its input:

* a lower end inside the curved part maps every value below it onto f(lo) (SiLU(-4) = -0.07, 2 to 3 output steps
  away from the values near 0 it stands for), an error of the same sign on every such value, which the next
  convolution sums coherently, unlike rounding noise; :func:`generator.ref.tables.table_domain` cuts a flat
  lower end off itself, within a quarter output step;
* an upper end below the output's top clamps values the output could hold (when the table has no identity above
  it), one above it spends table entries on values the output clamps anyway.

:func:`tie_table_ranges` therefore sets, for every table layer of an 8-bit quantization, the pre-activation range
to [calibrated minimum, x_top], x_top the smallest calibrated pre-activation at which the function reaches the top
of the layer's output range (the top of its chosen range, within the grid of :data:`GRID` points; the calibrated
maximum when the function stays below it there). int16 keeps its ranges (min/max: its tables have 256
interpolated segments and no clipping to trade).

Measured on the DocLayNet YOLOv8n (57 SiLU layers), int8-asym, with the compile pipeline's other steps as they are
(``auto`` ranges, bias correction) and this step after :func:`generator.quant.ranges.select_ranges`, by
``invoke compare --model doclaynet --image page|bus --quant int8-asym`` (golden simulator): lowest layer SQNR
12.5 -> 14.5 dB on the page and 15.8 -> 17.2 dB on bus, mean layer SQNR 17.1 -> 18.4 and 22.0 -> 22.3 dB,
detections against float mAP@0.5 0.816 -> 0.894 on the page (bus 1.000 both). YOLOv4-tiny has no table
activation: unchanged.
"""
from __future__ import annotations

import numpy as np

from generator.ref.float_ref import PRE_ACT
from generator.ir.activations import TABLE_ACTIVATIONS
from generator.ir.graph import Graph
from generator.quant.quantize import QuantError, _act_params

#: points at which the function is sampled over the calibrated pre-activation range to find x_top
GRID = 8193
#: the method name recorded in ``metadata["calibration"]`` for a tied pre-activation range
METHOD = "tied to output"


def output_top(lo: float, hi: float, cfg, headroom: float = 1.0) -> float:
    """The largest real value an activation region with range [lo, hi] holds under ``cfg``: ``(qmax - zp)
    scale`` with the compiler's scale / zero-point rule (:func:`generator.quant.quantize._act_params`)."""
    s, zp = _act_params(lo, hi, cfg, headroom)
    return float((cfg.qmax - zp) * s)


def top_crossing(f, lo: float, hi: float, top: float) -> float:
    """The smallest x of :data:`GRID` points over [lo, hi] with f(x) >= ``top`` (``f``: float64 array -> float64
    array), or ``hi`` when f stays below ``top`` on them or is already there at ``lo`` (then every value maps to
    the top and the range does not matter). Raises ValueError for lo >= hi."""
    if not lo < hi:
        raise ValueError(f"top_crossing needs lo < hi, got [{lo}, {hi}]")
    x = np.linspace(lo, hi, GRID)
    above = np.nonzero(f(x) >= top)[0]
    return float(x[above[0]]) if above.size and above[0] > 0 else float(hi)


def tie_table_ranges(g: Graph, stats: dict, ranges: dict, choices: dict, cfg,
                     headroom: dict | None = None, region_bits: dict | None = None) -> tuple[dict, dict]:
    """Ranges and choices with every table layer's pre-activation range tied to its output range (module
    docstring); unchanged for a 16-bit ``cfg`` or a graph without table activations.

    Args:
        g: the fused float graph the ranges were calibrated on; stats: the calibration statistics
            (:func:`generator.quant.ranges.collect_histograms`: per key ``lo``, ``hi``); ranges, choices: the
            output of :func:`generator.quant.ranges.select_ranges` for ``cfg``; headroom: its per-region headroom
            (None: 1); region_bits: {region: bits} of a mixed-precision graph (None: ``cfg.bits`` everywhere):
            only tables writing an 8-bit region are tied.
    Returns: (ranges, choices), new dicts; a tied key's choice records ``method`` :data:`METHOD`, the new ``lo`` /
        ``hi`` and the method it replaces (``was``).
    Raises: QuantError naming the layer when its pre-activation or output region has no calibrated range.
    """
    ranges, choices = dict(ranges), dict(choices)
    for n in g.macro_nodes():
        m = n.attrs["macro"]
        if m.act not in TABLE_ACTIVATIONS:
            continue
        key, reg = PRE_ACT.format(n.name), g.tensors[n.outputs[0]].region
        if (region_bits or {}).get(reg, cfg.bits) != 8:
            continue
        if key not in stats or reg not in ranges:
            raise QuantError(f"layer {n.name}: no calibrated {'pre-activation' if key not in stats else 'output'} "
                             f"range to tie its {m.act} table's input range to")
        lo, hi = float(stats[key]["lo"]), float(stats[key]["hi"])
        top = output_top(*ranges[reg], cfg, 1.0 if headroom is None else headroom.get(reg, 1.0))
        f = lambda x, m=m: TABLE_ACTIVATIONS[m.act](np.asarray(x, np.float64), m.alpha, m.beta)   # noqa: E731
        new = (lo, top_crossing(f, lo, hi, top) if hi > lo else hi)
        ranges[key] = new
        was = choices.get(key, {})
        choices[key] = {**was, "method": METHOD, "lo": new[0], "hi": new[1], "was": was.get("method")}
    return ranges, choices

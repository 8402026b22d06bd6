"""Activation scales and zero points of the DDR regions (part of :mod:`generator.quant.quantize`): one (scale, zero
point) per region from its calibrated range, per-channel scales for the YOLO heads only the host reads, and the
scale floors that keep every layer's real requantization multiplier within :data:`MAX_REAL_MULT`. ``cfg`` is a
:class:`generator.quant.quantize.QuantConfig` (bits, symmetric, qmin / qmax)."""
from __future__ import annotations

import numpy as np

from generator.ir.activations import TABLE_ACTIVATIONS
from generator.ir.graph import Graph
from generator.kinds import kind_of


#: largest real requantization multiplier a layer may need (M * 2^-s with s >= 1 reaches 2^14; one bit of margin)
MAX_REAL_MULT = 2.0 ** 13


def _act_params(lo: float, hi: float, cfg, headroom: float,
                min_scale: float = 0.0) -> tuple[float, int]:
    """(scale, zero point) of an activation range [lo, hi] (widened to include 0, times ``headroom``); the scale
    is at least ``min_scale``; symmetric configurations get zero point 0."""
    lo, hi = min(lo, 0.0) * headroom, max(hi, 0.0) * headroom
    if cfg.symmetric:
        a = max(abs(lo), abs(hi), 1e-8)
        return max(a / cfg.qmax, min_scale), 0
    scale = max(max(hi - lo, 1e-8) / (cfg.qmax - cfg.qmin), min_scale)
    zp = int(np.clip(round(cfg.qmin - lo / scale), cfg.qmin, cfg.qmax))
    return scale, zp


def channel_output_regions(g: Graph) -> list[str]:
    """Regions that may take per-channel scales: the region of a graph output that holds that tensor alone (whole
    region), written as the first output of a Macro node with weights (a convolution) and read by no node. Only the host reads them
    (dequantizing per channel), and the requantization multiplier is per output channel anyway, so per-channel
    output scales cost no hardware. The YOLO heads: their box channels (a few units wide) share a tensor with
    class logits tens of units wide."""
    out = []
    for o in g.outputs:
        t = g.tensors[o]
        n = g.producer(o)
        if (t.region is None or n is None or n.op != "Macro" or not kind_of(n.attrs["macro"]).has_weights
                or n.attrs["macro"].act in TABLE_ACTIVATIONS   # one table per layer: one output scale
                or n.outputs[0] != o or g.consumers(o)
                or t.ch_offset != 0 or t.shape[1] != g.regions[t.region].channels):
            continue
        if not any(u.region == t.region and u.name != o for u in g.tensors.values()):
            out.append(t.region)
    return out


def _channel_params(lo, hi, cfg, headroom: float, floor) -> tuple[np.ndarray, int]:
    """(scales float64 [C], zero point 0) of a per-channel region with ranges [lo[c], hi[c]]: symmetric per
    channel, ``scale[c] = max(|lo[c]|, |hi[c]|) * headroom / qmax``, at least ``floor[c]``, in every mode. A
    channel's range from a handful of calibration images misses what they do not show (the logit of a class none
    of them contains never turned positive, and clipping it there would cap that class's score); its magnitude
    bounds both signs."""
    a = np.maximum(np.abs(np.asarray(lo, np.float64)), np.abs(np.asarray(hi, np.float64))) * headroom
    return np.maximum(np.maximum(a, 1e-8) / cfg.qmax, floor), 0


def _scale_floors(g: Graph, ranges: dict, cfg_of, headroom) -> None:
    """Raise output-region scales so that no layer needs a real multiplier above :data:`MAX_REAL_MULT`: a region
    whose calibrated range is (almost) empty, e.g. a ReLU output that was never positive, would otherwise need
    a left shift. In graph order, every region written by a layer gets at least
    ``s_in * max_c(s_w[c]) * max(1, alpha) / MAX_REAL_MULT`` (max_c(s_w[c]): the kind's
    :meth:`generator.kinds.base.LayerKind.factor_scale_max`; copy layers: 1, emul layers: the second factor's scale);
    its zero point follows. ``cfg_of(region)``: the region's :class:`QuantConfig`."""
    for n in g.macro_nodes():
        m = n.attrs["macro"]
        s_in = g.regions[g.tensors[n.inputs[0]].region].scale
        wmax = cfg_of(g.tensors[n.inputs[0]].region).qmax
        smax = kind_of(m).factor_scale_max(g, n, wmax, lambda t: g.regions[g.tensors[t].region].scale)
        floor = s_in * smax * (max(1.0, m.alpha) if m.act == "leaky" else 1.0) / MAX_REAL_MULT
        for o in n.outputs:
            reg = g.regions[g.tensors[o].region]
            if reg.scale < floor:
                reg.scale, reg.zero_point = _act_params(*ranges[reg.name], cfg_of(reg.name), headroom(reg.name),
                                                        floor)


def _per_channel_output(g: Graph, t, rng: tuple, floor: np.ndarray, cfg,
                        headroom: float) -> tuple[np.ndarray, int]:
    """Set per-channel scales on output tensor ``t`` and its region (``scale`` None) from ranges ``rng`` = (min
    [C], max [C]); returns (scales float64 [C], zero point)."""
    sc, zp = _channel_params(rng[0], rng[1], cfg, headroom, floor)
    for obj in (t, g.regions[t.region]):
        obj.scale, obj.channel_scales, obj.zero_point = None, sc, zp
    return sc, zp

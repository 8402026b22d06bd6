"""Fake-quantized float execution of a quantized graph, with each source of quantization error switchable: where a
network loses in int8, and how much a layer in higher precision would give back.

:func:`run_fake_quant` executes the Macro layers of a quantized graph (:func:`generator.quant.quantize.quantize`) in
float64 on the float graph's structure, applying at each layer the roundings the integer program makes:

* ``weights``: the dequantized integer weights ``w_q s_w`` and the integer bias (input zero point folded back out,
  bias correction included) instead of the float ones;
* ``table_in``: a table activation's input rounded and clamped to the table's domain (``table_scale``,
  ``zp_out`` of the layer's parameters; above the window, POST's identity: rounded to the domain's step, not
  clamped);
* ``acts``: the requantization (the accumulator's low ``pre_shift`` bits dropped, the 16-bit multipliers) and
  every output rounded and clamped to its region's grid (scale or per-channel scales, zero point).

A layer named in ``exact`` keeps all three in float (a stand-in for that layer in a wider precision; the biases
of the layers after it keep their bias correction, measured for the quantized one). With every source on, the
result is the layer-level integer reference's (:func:`generator.ref.layer_ref.run_quantized`, bit for bit the
golden simulator's) dequantized, up to float rounding at rounding boundaries (YOLOv4-tiny, int8-asym, bus.jpg: at
most 0.3 % of a layer's values differ, by at most 2 steps; the DocLayNet YOLOv8n, int8-asym, page and bus: every
layer's SQNR against onnxruntime within 0.06 dB of ``invoke compare``'s). :func:`layer_sqnr` reports per layer the
SQNR of the fake-quantized values against a float run of the same graph.
"""
from __future__ import annotations

import numpy as np

from generator.ref.float_ref import run_float
from generator.ir.activations import TABLE_ACTIVATIONS, activation
from generator.ref.kernels import maxpool2d, table_activate, upsample_nearest
from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.quant.quantize import require_quantized

#: the error sources :func:`run_fake_quant` can switch off
SOURCES = ("weights", "table_in", "acts")


def fake_quant(v: np.ndarray, scale, zp: int, qmin: int, qmax: int) -> np.ndarray:
    """deq(q(v)) in float64: ``(clamp(floor(v / scale + 1/2) + zp, qmin, qmax) - zp) scale`` (round half up, as
    POST); ``scale`` a float or per-channel float64 [C, 1, 1] (v [C, H, W])."""
    return (np.clip(np.floor(v / scale + 0.5) + zp, qmin, qmax) - zp) * scale


def _weights(fg: Graph, qg: Graph, n, on: bool) -> tuple[np.ndarray, np.ndarray]:
    """(weights [OC, IC, KH, KW], bias [OC]) of layer ``n`` (a kind with weights), float64: the float graph's, or (``on``) the
    dequantized integer ones (bias: ``(B + zp_in sum(w_q)) s_in s_w``, the zero point's fold undone)."""
    m, q = n.attrs["macro"], n.attrs["q"]
    if not on:
        return fg.const(m.weight).astype(np.float64), fg.const(m.bias).astype(np.float64).reshape(-1)
    t = qg.tensors[n.inputs[0]]
    s_w = np.asarray(q["s_w"], np.float64)
    oc = q["w"].shape[0]
    b = (q["bias"] + t.zero_point * q["w"].reshape(oc, -1).sum(axis=1)) * t.scale * s_w
    return q["w"] * s_w.reshape(-1, 1, 1, 1), b


def _requantized(qg: Graph, n, pre: np.ndarray, k: int = 0) -> np.ndarray:
    """Layer ``n``'s pre-activation values (float64 [C, H, W]) as POST's requantization for its output ``k`` scales
    them: the accumulator's low ``pre_shift`` bits dropped (``(acc + bias) >> pre_shift``; its unit is s_in s_w, s_w
    the second factor's scale for emul, 1 for copy) and that output's 16-bit multiplier ``M 2^-s`` in place of the
    real one (s_in s_w / s_target, s_target the table's input scale or the output's), per channel and sign
    (LeakyReLU's negative side has its own)."""
    m, q = n.attrs["macro"], n.attrs["q"]
    p = q if k == 0 else q["side"][k - 1]
    unit = qg.tensors[n.inputs[0]].scale * np.asarray(q["s_w"], np.float64).reshape(-1, 1, 1)
    ps = np.asarray(q.get("pre_shift", 0), np.int64).reshape(-1, 1, 1)
    if ps.any():
        pre = np.floor(pre / (unit * 2.0 ** ps)) * (unit * 2.0 ** ps)
    target = q.get("table_scale")   # (a table layer's extra outputs share its table, quantize._output_params)
    target = qg.tensors[n.outputs[k]].deq_scale if target is None else target
    r = (unit / np.asarray(target, np.float64)).reshape(-1, 1, 1)

    def gain(mk, sk, factor):
        mult = np.asarray(p[mk], np.float64).reshape(-1, 1, 1)
        return np.where(mult > 0, mult * 2.0 ** -np.asarray(p[sk], np.float64).reshape(-1, 1, 1) / (r * factor), 1.0)

    pos = gain("mult_pos", "shift_pos", 1.0)
    neg = gain("mult_neg", "shift_neg", m.alpha) if q["use_neg"] and m.act == "leaky" else pos
    return pre * np.where(pre >= 0, pos, neg)


def _activate(qg: Graph, n, pre: np.ndarray, table_in: bool, acts: bool) -> np.ndarray:
    """Layer ``n``'s activation of its pre-activation values (float64 [C, H, W]). A table activation with
    ``table_in``: its input rounded to the table's domain, clamped to its window (above it, POST's identity:
    rounded, not clamped), then with ``acts`` POST's own table (:func:`generator.ref.kernels.table_activate`,
    dequantized: the output's rounding, and int16's interpolation, included), else the float function."""
    m, q = n.attrs["macro"], n.attrs["q"]
    if m.act not in TABLE_ACTIVATIONS or not table_in or q.get("table") is None:
        return activation(pre, m.act, m.alpha, m.beta)
    s_t, zp_t, idn = q["table_scale"], q["zp_out"], q.get("identity")
    p = np.floor(pre / s_t + 0.5) + zp_t
    if acts:
        t = qg.tensors[n.outputs[0]]
        y = table_activate(p.astype(np.int64), q["table"], q["qmin"], q["qmax"],
                           None if idn is None else (idn[0], zp_t, idn[1]))
        return (y - t.zero_point) * t.deq_scale
    x = (np.clip(p, q["qmin"], q["qmax"]) - zp_t) * s_t
    if idn is not None:
        x = np.where(p > q["qmax"], (p - zp_t) * s_t, x)
    return activation(x, m.act, m.alpha, m.beta)


def _store(qg: Graph, regions: dict, name: str, v: np.ndarray, q: dict, on: bool) -> None:
    """Write tensor ``name``'s values (float64 [C, H, W]) into its region's channels, on its grid when ``on``."""
    t = qg.tensors[name]
    if on:   # (the tensor's own precision: a graph input's may differ from its reader's output precision)
        b = int(t.dtype[3:]) if t.dtype in ("int8", "int16") else None
        lo, hi = (-(1 << (b - 1)), (1 << (b - 1)) - 1) if b else (q["qmin"], q["qmax"])
        v = fake_quant(v, t.deq_scale, t.zero_point, lo, hi)
    regions[t.region][t.ch_offset:t.ch_offset + t.shape[1]] = v


def run_fake_quant(fg: Graph, qg: Graph, x: np.ndarray, exact=(), off=()) -> dict:
    """Run the quantized graph ``qg`` (quantized from the float graph ``fg``) on the float input ``x`` (float32
    [1, C, H, W]) with fake quantization (module docstring).

    Args: exact: names of Macro layers kept in float; off: error sources of :data:`SOURCES` switched off everywhere.
    Returns: {tensor name: float64 [C, H, W]} of every Macro layer output (region channels after the layer ran).
    Raises: GraphError when ``qg`` is not quantized; ValueError for an unknown source in ``off``.
    """
    require_quantized(qg)
    bad = set(off) - set(SOURCES)
    if bad:
        raise ValueError(f"unknown error source(s) {sorted(bad)}: choose among {', '.join(SOURCES)}")
    regions = {r: np.zeros((reg.channels, reg.h, reg.w)) for r, reg in qg.regions.items()}
    n0 = next(iter(qg.macro_nodes())).attrs["q"]
    _store(qg, regions, qg.inputs[0], np.asarray(x, np.float64)[0], n0, "acts" not in off)

    def read(name):
        t = qg.tensors[name]
        return regions[t.region][t.ch_offset:t.ch_offset + t.shape[1]]

    out = {}
    for n in qg.macro_nodes():
        m, q, kind = n.attrs["macro"], n.attrs["q"], kind_of(n.attrs["macro"])
        on = {s: s not in off and n.name not in exact for s in SOURCES}
        xin = read(n.inputs[0])
        w, b = _weights(fg, qg, n, on["weights"]) if kind.has_weights else (None, None)
        pre = kind.float_core(m, xin, read(n.inputs[1]) if kind.operands == 2 else None, w, b)
        if pre is xin:   # (a copy layer's values, not a view of its input region)
            pre = xin.copy()
        for k, o in enumerate(n.outputs):   # (an extra output: its own multiplier, its max-pool)
            v = _activate(qg, n, _requantized(qg, n, pre, k) if on["acts"] else pre, on["table_in"], on["acts"])
            if k > 0:
                v = maxpool2d(v, *m.side_pools[k - 1])
            elif m.pool:
                v = maxpool2d(v, *m.pool, pads=kind.pool_pads(m))
            _store(qg, regions, o, upsample_nearest(v, m.upsample) if k == 0 else v, q, on["acts"])
        out.update({o: read(o).copy() for o in n.outputs})
    return out


def layer_sqnr(fg: Graph, qg: Graph, x: np.ndarray, exact=(), off=()) -> dict:
    """{Macro layer name: SQNR in dB of its main output under :func:`run_fake_quant` against :func:`run_float` of
    ``fg``}, over the layers whose float output is not all zeros (equalized regions compare in the equalized
    domain, the same for both)."""
    ref = run_float(fg, {fg.inputs[0]: x}, keep_all=True)
    got = run_fake_quant(fg, qg, x, exact, off)
    res = {}
    for n in qg.macro_nodes():
        o = n.outputs[0]
        if o not in ref:
            continue
        r = np.asarray(ref[o], np.float64).reshape(got[o].shape)
        err = float(np.sum((r - got[o]) ** 2))
        if np.any(r):
            res[n.name] = float("inf") if err == 0 else float(10 * np.log10(np.sum(r * r) / err))
    return res

"""An integer reference of the quantized network that does not trust :mod:`generator.quant.quantize`.

:mod:`generator.ref.layer_ref` executes the parameters that ``quantize.py`` stored on the graph, so a wrong multiplier or
a wrong bias fold there would still be "bit-exact". This module starts one step earlier: from the *float* fused
graph (the output of :func:`generator.ir.passes.run_all`), the calibration ranges and the quantization mode, it
derives every scale, zero point, integer weight, folded bias, multiplier and shift itself, by the formulas
documented below (written from the papers, not from ``quantize.py``'s code), then runs the layers in integer
arithmetic into DDR-region images. :func:`compare_ddr` checks a DDR image written by an executor (the golden
simulator, the C-simulation or the RTL) against it on every region, border included.

Formulas (Jacob et al., "Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only
Inference", CVPR 2018; Krishnamoorthi, arXiv:1806.08342), with b = 8 or 16 bits, qmin = -2^(b-1),
qmax = 2^(b-1) - 1:

* region range [lo, hi] widened to include 0 and multiplied by the headroom (the given per-region one, else 2
  for int16, 1 for int8; graph inputs: 1, their range is known). Asymmetric: ``scale = (hi - lo) / (qmax - qmin)``,
  ``zp = clip(round(qmin - lo / scale), qmin, qmax)``; symmetric: ``scale = max(|lo|, |hi|) / qmax``, ``zp = 0``
  (scale at least 1e-8 / (qmax - qmin) resp. 1e-8 / qmax);
* scale floor: in graph order, a region written by a layer gets a scale of at least
  ``s_in * max_c(s_w[c]) * max(1, alpha) / 2^13`` (copy layers: s_w = 1), the zero point recomputed from it, so
  that an (almost) empty calibration range never needs a multiplier above 2^13;
* weights: symmetric, ``s_w = max|w| / (2^(b-1) - 1)`` per output channel (or over the tensor);
  ``W = clip(round(w / s_w), -(2^(b-1) - 1), 2^(b-1) - 1)``; an all-zero channel computes its bias alone, so it
  takes the scale that makes its multiplier 1/2: ``s_w = s_out / (2 s_in)``;
* bias with the input zero point folded in: ``B = round(b / (s_in * s_w)) - zp_in * sum(W)``; copy layers
  (pool / activation / upsample without a convolution): ``B = -zp_in``, real multiplier ``s_in / s_out``;
  element-wise products ``a * b``: accumulator ``(A - zp_a) (B - zp_b)``, no bias, the factor b's scale in the
  place of s_w (real multiplier ``s_a s_b / s_out``, scale floor ``s_a s_b / 2^13``);
* real multiplier ``r = s_in * s_w / s_out`` written ``r = f * 2^e`` with f in [0.5, 1) (``math.frexp``):
  ``M = round(f * 2^15)``, ``s = 15 - e`` (``M = 2^15`` becomes ``2^14`` with ``s - 1``); a shift above 63 is
  capped at 63 with ``M = round(r * 2^63)``; r = 0 gives M = 0, s = 1;
* negative side: LeakyReLU(alpha) the multiplier of ``alpha * r``; ReLU M = 0, s = 1; linear the positive one;
* requantization of ``v = floor((acc + B) / 2^p)``: ``q = clip(floor((v * M + 2^(s-1)) / 2^s) + zp_out, qmin,
  qmax)`` with the negative-side (M, s) where the layer has an activation and v < 0. The pre-shift p of a channel
  keeps v within 27 signed bits (one DSP48E2 operand): ``p = max(0, bit_length(worst) - 26)``, worst the largest
  |acc + B| = ``sum |W| * max(-qmin, qmax) + |B|`` (copy layers ``max(-qmin, qmax) + |zp_in|``, products
  ``(max(-qmin, qmax) + |zp_a|) (max(-qmin, qmax) + |zp_b|)``); the record's shift is s - p for a multiplier
  M != 0 (M = 0 keeps s = 1);
* then max-pool (k x k, stride s, window clipped at the bottom/right edge; a copy layer's pads are the pool's
  -inf padding, and the border of its input region holds qmin when no padded convolution reads it) and nearest
  upsampling; a second (pooled) output of the same accumulators uses its own output scale: ``r = s_in * s_w / s_side``;
* mixed precision: each region has its own b (``region_bits``); a layer's W, its accumulator bound and its
  input's grid use its input region's b, its clamp and activation table its output region's.
* per-channel output scales (given per-channel ranges, with per-channel weights) for a graph output that only
  the host reads: ``scale[c] = max(|lo[c]|, |hi[c]|) * headroom / qmax``, zero point 0 in every mode, each at
  least its own channel's floor ``s_in * s_w[c] * max(1, alpha) / 2^13``; ``r[c] = s_in * s_w[c] / scale[c]``.

The per-kind terms above (what plays s_w in a layer without weights, how often zp_in enters the accumulator, the
accumulator's bound, the accumulator itself) are the layer kind's (:mod:`generator.kinds`, shared with the
quantizer); the rest (region scales and floors, weight quantization, multipliers, pre-shifts, tables,
requantization, pooling, and the convolution itself, :func:`_conv`) is derived here.
"""
from __future__ import annotations

import math

import numpy as np

from generator.ref.float_ref import PRE_ACT
from generator.ir.activations import TABLE_ACTIVATIONS
from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.ref.tables import table_domain

#: requantization multiplier bits (signed; M in [2^14, 2^15)) and the largest shift, as in the ISA's PBUF record;
#: the largest real multiplier a layer may need (output-region scales are raised to keep within it)
MULT_FRAC_BITS, MAX_SHIFT, MAX_REAL_MULT = 15, 63, 2.0 ** 13


class RefMismatch(AssertionError):
    """A DDR region, or a stored quantization parameter, differs from the independent reference."""


def act_params(lo: float, hi: float, bits: int, symmetric: bool, headroom: float,
               floor: float = 0.0) -> tuple[float, int]:
    """(scale, zero point) of an activation region with float range [lo, hi], scale at least ``floor``
    (see the module docstring)."""
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    lo, hi = min(lo, 0.0) * headroom, max(hi, 0.0) * headroom
    if symmetric:
        return max(max(abs(lo), abs(hi), 1e-8) / qmax, floor), 0
    scale = max(max(hi - lo, 1e-8) / (qmax - qmin), floor)
    return scale, int(min(max(round(qmin - lo / scale), qmin), qmax))


def _per_channel_regions(g: Graph) -> set:
    """Regions quantized per channel when ranges are given for them: a graph output whose region holds it alone,
    written as the first output of a convolution Macro node, read by no node."""
    out = set()
    for o in g.outputs:
        t = g.tensors[o]
        w = [n for n in g.nodes if o in n.outputs]
        if (t.region is None or len(w) != 1 or w[0].op != "Macro" or not kind_of(w[0].attrs["macro"]).has_weights
                or w[0].attrs["macro"].act in TABLE_ACTIVATIONS
                or w[0].outputs[0] != o
                or any(o in n.inputs for n in g.nodes)):
            continue
        if [u.name for u in g.tensors.values() if u.region == t.region] == [o]:
            out.add(t.region)
    return out


def channel_params(lo, hi, bits: int, symmetric: bool, headroom: float, floor) -> tuple[np.ndarray, int]:
    """(scales float64 [C], zp 0) of a per-channel region (see the module docstring; symmetric in every mode)."""
    qmax = (1 << (bits - 1)) - 1
    sc = np.array([max(abs(float(l)), abs(float(h))) * headroom for l, h in zip(lo, hi)])
    return np.maximum(np.maximum(sc, 1e-8) / qmax, floor), 0


def multiplier(r: float) -> tuple[int, int]:
    """Real multiplier r >= 0 -> (M, s), r ~= M / 2^s (see the module docstring)."""
    if r == 0:
        return 0, 1
    f, e = math.frexp(r)
    m, s = int(round(f * (1 << MULT_FRAC_BITS))), MULT_FRAC_BITS - e
    if m == 1 << MULT_FRAC_BITS:
        m, s = m >> 1, s - 1
    if s > MAX_SHIFT:
        m, s = int(round(r * 2.0 ** MAX_SHIFT)), MAX_SHIFT
    return m, s


def _requant(v, mp, sp, mn, sn, use_neg, zp, qmin, qmax, clamp=True):
    """v: int64 [C, H, W]; per-channel (M, s) arrays [C]. Exact: int64 where |v * M| < 2^62, Python integers
    otherwise (so an executor whose 64-bit product wraps shows up as a difference). ``clamp=False``: the value
    before the clamp to [qmin, qmax] (int64: the result of a 27-bit operand and a 16-bit multiplier fits)."""
    use_neg = bool(use_neg)
    neg = (v < 0) & use_neg
    shp = (-1,) + (1,) * (v.ndim - 1)
    m = np.where(neg, np.asarray(mn, np.int64).reshape(shp), np.asarray(mp, np.int64).reshape(shp))
    s = np.where(neg, np.asarray(sn, np.int64).reshape(shp), np.asarray(sp, np.int64).reshape(shp))
    if v.size and int(np.abs(v).max()) * int(np.abs(m).max(initial=0)) < (1 << 62):
        out = (v * m + (np.int64(1) << (s - 1))) >> s      # arithmetic shift = floor division by 2^s
    else:
        so = s.astype(object)
        out = (v.astype(object) * m.astype(object) + (1 << (so - 1))) >> so
        return (np.clip(out + zp, qmin, qmax) if clamp else out + zp).astype(np.int64)
    return np.clip(out + zp, qmin, qmax) if clamp else out + zp


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pads: tuple, pad_value: int) -> np.ndarray:
    """Integer convolution, one kernel tap at a time: x int64 [IC, H, W], w int64 [OC, IC, KH, KW], pads (top,
    left, bottom, right) -> int64 [OC, OH, OW]. Sums in float64 (exact: |sum| < 2^53 for int16 operands over fewer
    than 2^21 terms)."""
    oc, ic, kh, kw = w.shape
    pt, pl, pb, pr = pads
    xp = np.full((ic, x.shape[1] + pt + pb, x.shape[2] + pl + pr), pad_value, np.float64)
    xp[:, pt:pt + x.shape[1], pl:pl + x.shape[2]] = x
    oh, ow = (xp.shape[1] - kh) // stride + 1, (xp.shape[2] - kw) // stride + 1
    out = np.zeros((oc, oh * ow), np.float64)
    for ky in range(kh):
        for kx in range(kw):
            tap = xp[:, ky:ky + stride * (oh - 1) + 1:stride, kx:kx + stride * (ow - 1) + 1:stride]
            out += w[:, :, ky, kx].astype(np.float64) @ tap.reshape(ic, -1)
    return out.astype(np.int64).reshape(oc, oh, ow)


def _maxpool(y: np.ndarray, k: int, s: int, pad_end: int, pads: tuple | None = None) -> np.ndarray:
    c, h, w = y.shape
    pt, pl, pb, pr = pads if pads is not None else (0, 0, pad_end, pad_end)
    oh, ow = (h + pt + pb - k) // s + 1, (w + pl + pr - k) // s + 1
    lo = np.iinfo(np.int64).min
    yp = np.full((c, h + pt + pb + k, w + pl + pr + k), lo, np.int64)
    yp[:, pt:pt + h, pl:pl + w] = y
    out = np.full((c, oh, ow), lo, np.int64)
    for dy in range(k):
        for dx in range(k):
            out = np.maximum(out, yp[:, dy:dy + s * (oh - 1) + 1:s, dx:dx + s * (ow - 1) + 1:s])
    return out


def _qrange(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1   # (qmin, qmax) of a signed bits-bit integer


class IndependentRef:
    """The quantized network derived from the float fused graph (see the module docstring).

    Args:
        g: fused float graph (after :func:`generator.ir.passes.run_all`), regions assigned, no quantization.
        ranges: ``{region name: (min, max)}`` float calibration ranges (:func:`generator.quant.quantize.calibrate`).
        bits: 8 or 16; symmetric: symmetric activations; per_channel: per-output-channel weight scales.
        headroom: {region: factor} (None: 2 for int16, 1 for int8); channel_ranges: {region: (min [C], max [C])}
            of graph outputs to quantize per channel (with per_channel); region_bits: {region: 8 or 16} where a
            region's precision is not ``bits`` (mixed precision, module docstring).
    Attributes: ``regions`` {name: (scale, zp)}, ``rbits`` {name: bits}, ``layers`` {node name: dict of derived
        integer parameters, with ``bits_in`` / ``bits_out``}.
    """

    def __init__(self, g: Graph, ranges: dict, bits: int, symmetric: bool, per_channel: bool,
                 headroom: dict | None = None, channel_ranges: dict | None = None, region_bits: dict | None = None):
        self.g, self.bits = g, bits
        self.rbits = {n: int((region_bits or {}).get(n, bits)) for n in g.regions}
        self._region_params(ranges, symmetric, per_channel, headroom, channel_ranges)
        self.border = {name: self._border(name) for name in g.regions}
        self.layers = {}
        for n in g.nodes:
            if n.op != "Macro":
                continue
            m = n.attrs["macro"]
            kind = kind_of(m)
            s_in, zp_in = self.regions[g.tensors[n.inputs[0]].region]
            b_in, b_out = self.rbits[g.tensors[n.inputs[0]].region], self.rbits[g.tensors[n.outputs[0]].region]
            wmax = _qrange(b_in)[1]
            outs = [self.regions[g.tensors[o].region] for o in n.outputs]
            oc = g.tensors[n.outputs[0]].shape[1]
            if kind.has_weights:
                w = g.const(m.weight).astype(np.float64)
                b = g.const(m.bias).astype(np.float64).reshape(-1)
                mx = np.abs(w).reshape(oc, -1).max(axis=1)
                if not per_channel:
                    mx = np.full(oc, mx.max())
                s_out0 = np.broadcast_to(outs[0][0], (oc,))
                s_w = np.array([v / wmax if v > 0 else s_out0[c] / (2 * s_in) for c, v in enumerate(mx)])
                W = np.clip(np.round(w / s_w[:, None, None, None]), -wmax, wmax).astype(np.int64)
                B = np.round(b / (s_in * s_w)).astype(np.int64) - zp_in * kind.zp_terms(W, oc)
            else:   # what multiplies the input plays the weight's part (copy: 1; emul: the second factor's scale)
                W, B = None, -zp_in * kind.zp_terms(None, oc)
                s_w = np.full(oc, kind.factor_scale_max(g, n, wmax, self._scale_of))
            per_out, table, identity = [], None, None
            if m.act in TABLE_ACTIVATIONS:   # requantized into the table's input domain, the table to the output
                key = PRE_ACT.format(n.name)   # the domain's policy is the quantizer's (generator.ref.tables)
                s_t, z_t, ident = table_domain(lambda x, m=m: TABLE_ACTIVATIONS[m.act](x, m.alpha, m.beta),
                                               *ranges[key], outs[0], b_out, s_in * float(np.max(s_w)) / MAX_REAL_MULT)
                table = self._table(m, (s_t, z_t), outs[0], b_out)
                identity = None if ident is None else (ident[0], z_t, ident[1])
                outs = [(s_t, z_t)] * len(outs)
            for s_out, zp_out in outs:
                s_out = np.broadcast_to(s_out, (oc,))
                pos = [multiplier(float(s_in * s_w[c] / s_out[c])) for c in range(oc)]
                if m.act == "leaky":
                    neg = [multiplier(float(s_in * s_w[c] / s_out[c]) * m.alpha) for c in range(oc)]
                elif m.act == "relu":
                    neg = [(0, 1)] * oc
                else:
                    neg = pos
                per_out.append(dict(mult_pos=np.array([p[0] for p in pos]), shift_pos=np.array([p[1] for p in pos]),
                                    mult_neg=np.array([p[0] for p in neg]), shift_neg=np.array([p[1] for p in neg]),
                                    zp_out=zp_out))
            zp_b = self.regions[g.tensors[n.inputs[1]].region][1] if kind.operands == 2 else 0
            pre = self._pre_shift(kind.acc_bound(W, B, 1 << (b_in - 1), zp_in, zp_b, oc), per_out)
            self.layers[n.name] = dict(w=W, bias=B, zp_in=zp_in, zp_b=zp_b, use_neg=m.act in ("relu", "leaky"),
                                       outs=per_out, table=table, pre_shift=pre, identity=identity,
                                       bits_in=b_in, bits_out=b_out)

    def _region_params(self, ranges: dict, symmetric: bool, per_channel: bool, headroom, channel_ranges) -> None:
        """Each region's (scale, zp) into ``self.regions`` (module docstring: its own precision, its headroom, the
        scale floor of its writers, per-channel heads)."""
        g = self.g
        room = {n: (1.0 if n in g.inputs else (2.0 if self.rbits[n] == 16 else 1.0) if headroom is None
                    else headroom.get(n, 1.0)) for n in g.regions}
        per_ch = {r: v for r, v in (channel_ranges or {}).items() if per_channel and r in _per_channel_regions(g)}
        self.regions = {}
        for name in g.regions:
            lo, hi = ranges[name]
            self.regions[name] = act_params(lo, hi, self.rbits[name], symmetric, room[name])
        # scale floor: a region written by a layer has at least s_in * max(s_w) * max(1, alpha) / 2^13 (in graph
        # order), so no layer needs a real multiplier above 2^13; its zero point follows the raised scale
        for n in g.nodes:
            if n.op != "Macro":
                continue
            m = n.attrs["macro"]
            s_in = self.regions[g.tensors[n.inputs[0]].region][0]
            wmax = _qrange(self.rbits[g.tensors[n.inputs[0]].region])[1]
            smax = kind_of(m).factor_scale_max(g, n, wmax, self._scale_of)
            floor = s_in * smax * (max(1.0, m.alpha) if m.act == "leaky" else 1.0) / MAX_REAL_MULT
            for o in n.outputs:
                reg = g.tensors[o].region
                if reg in per_ch:   # per-channel scales, each with the floor of its own channel
                    w = np.abs(g.const(m.weight).astype(np.float64)).reshape(g.tensors[o].shape[1], -1).max(axis=1)
                    w = w if per_channel else np.full(len(w), w.max())
                    fl = s_in * w / wmax * (max(1.0, m.alpha) if m.act == "leaky" else 1.0) / MAX_REAL_MULT
                    self.regions[reg] = channel_params(*per_ch[reg], self.rbits[reg], symmetric, room[reg], fl)
                elif self.regions[reg][0] < floor:
                    lo, hi = ranges[reg]
                    self.regions[reg] = act_params(lo, hi, self.rbits[reg], symmetric, room[reg], floor)

    def _scale_of(self, tensor: str) -> float:
        """The scale of tensor ``tensor``'s region."""
        return self.regions[self.g.tensors[tensor].region][0]

    def _pre_shift(self, worst, per_out: list) -> np.ndarray:
        """Each channel's pre-shift p (module docstring) from ``worst`` [OC], the largest |acc + B| it can reach
        (the kind's :meth:`generator.kinds.base.LayerKind.acc_bound`); stores the record's multipliers and shifts of
        each output of ``per_out`` under ``"rec"``. Returns int64 [OC]."""
        pre = [max(0, int(w).bit_length() - 26) for w in worst]
        for o in per_out:
            rec = {}
            for mk, sk in (("mult_pos", "shift_pos"), ("mult_neg", "shift_neg")):
                pairs = []
                for m, s, p in zip(np.asarray(o[mk]).tolist(), np.asarray(o[sk]).tolist(), pre):
                    pairs.append((0, 1) if m == 0 else (m, s - p))
                rec[mk], rec[sk] = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
            o["rec"] = rec
        return np.array(pre, np.int64)

    def _border(self, name: str) -> int:
        """The value region ``name``'s border holds: the zero point, or qmin where only padded max-pool copy layers
        read it padded."""
        g = self.g
        readers = [n.attrs["macro"] for n in g.nodes if n.op == "Macro" and g.tensors[n.inputs[0]].region == name]
        pool_pad = any(kind_of(m).pad_fill == "min" and m.pads for m in readers)
        conv_pad = any(kind_of(m).pad_fill == "zero_point" and max(m.four_pads()) > 0 for m in readers)
        return _qrange(self.rbits[name])[0] if pool_pad and not conv_pad else self.regions[name][1]

    def _table(self, m, dom: tuple, out: tuple, bits: int) -> np.ndarray:
        """The 256-entry POST table of activation ``m.act`` from the input domain ``dom`` = (scale, zp) to the
        output ``out``: entry i covers the integers from t_i = qmin + i * 2^(bits - 8); its base is f at t_i
        rounded half up to the output grid (clamped), its delta the rise to t_(i+1) before that value's clamp when
        it fits int16, else to the clamped value (int16; 0 in int8, a direct lookup)."""
        (s_t, z_t), (s_o, z_o) = dom, out
        qmin, qmax = _qrange(bits)
        step = (qmax - qmin + 1) // 256
        vals = []
        for i in range(257):
            x = s_t * (qmin + i * step - z_t)
            y = float(TABLE_ACTIVATIONS[m.act](np.array([x], np.float64), m.alpha, m.beta)[0])
            vals.append(math.floor(y / s_o + 0.5) + z_o)   # unclamped: the slope across the output's bound

        def clamp(v):
            return min(max(v, qmin), qmax)
        rows = []
        for i in range(256):
            b = clamp(vals[i])
            d = vals[i + 1] - b if abs(vals[i + 1] - b) <= 32767 else clamp(vals[i + 1]) - b
            rows.append((b, d if step > 1 else 0))
        return np.array(rows, np.int64)

    def check_params(self, gq: Graph) -> list[str]:
        """Compare the parameters :func:`generator.quant.quantize.quantize` stored on ``gq`` with the derived ones.
        Returns a list of differences, each naming the region or layer and the parameter (empty: all equal)."""
        bad = []
        for name, (s, zp) in self.regions.items():
            r = gq.regions[name]
            got = r.channel_scales if r.channel_scales is not None else r.scale
            if (np.shape(got) != np.shape(s) or not np.allclose(got, s, rtol=1e-12, atol=0)
                    or r.zero_point != zp):
                bad.append(f"region {name}: scale/zp {np.max(got):.6g}/{r.zero_point} "
                           f"({np.size(got)} scales), derived {np.max(s):.6g}/{zp} ({np.size(s)} scales)")
        for n in gq.macro_nodes():
            d, q = self.layers[n.name], n.attrs["q"]
            if (d["w"] is None) != (q["w"] is None) or (d["w"] is not None and not np.array_equal(d["w"], q["w"])):
                bad.append(f"layer {n.name}: integer weights differ")
            if not np.array_equal(d["bias"], q["bias"]):
                bad.append(f"layer {n.name}: folded bias differs (first channel {int(np.argmax(d['bias'] != q['bias']))})")
            for k, o in enumerate(d["outs"]):
                st = dict(q if k == 0 else q["side"][k - 1], pre_shift=q["pre_shift"])
                o = dict(o, pre_shift=d["pre_shift"])
                for key in ("mult_pos", "shift_pos", "mult_neg", "shift_neg", "pre_shift"):
                    if not np.array_equal(np.asarray(st[key]), o[key]):
                        c = int(np.argmax(np.asarray(st[key]) != o[key]))
                        bad.append(f"layer {n.name} output {k}: {key}[{c}] = {int(st[key][c])}, derived {int(o[key][c])}")
                if k == 0 and (d["table"] is None) != (q.get("table") is None) or (
                        k == 0 and d["table"] is not None and not np.array_equal(d["table"], q["table"])):
                    bad.append(f"layer {n.name}: activation table differs from the derived one")
                if k == 0 and d["identity"] is not None and tuple(q.get("identity") or ()) != (
                        d["identity"][0], d["identity"][2]) or k == 0 and d["identity"] is None and q.get("identity"):
                    bad.append(f"layer {n.name}: identity above the table {q.get('identity')}, derived "
                               f"{d['identity']}")
                if int(st["zp_out"]) != o["zp_out"]:
                    bad.append(f"layer {n.name} output {k}: zp_out {st['zp_out']}, derived {o['zp_out']}")
        return bad

    def quantize_input(self, x: np.ndarray) -> np.ndarray:
        """Float input [1, C, H, W] -> int64 [C, H, W] with the input region's scale and zero point
        (round half up, saturated)."""
        reg = self.g.tensors[self.g.inputs[0]].region
        (s, zp), (qmin, qmax) = self.regions[reg], _qrange(self.rbits[reg])
        return np.clip(np.floor(np.asarray(x, np.float64)[0] / s + 0.5) + zp, qmin, qmax).astype(np.int64)

    def run(self, x_q: np.ndarray) -> dict:
        """Execute on the integer input [C, H, W]. Returns ``{region name: int64 [C, H, W]}`` (interiors)."""
        g = self.g
        img = {name: np.full((r.channels, r.h, r.w), self.regions[name][1], np.int64) for name, r in g.regions.items()}
        t = g.tensors[g.inputs[0]]
        img[t.region][t.ch_offset:t.ch_offset + t.shape[1]] = np.asarray(x_q).reshape(t.shape[1:])

        def view(name):
            t = g.tensors[name]
            return img[t.region], slice(t.ch_offset, t.ch_offset + t.shape[1])

        for n in g.nodes:
            if n.op != "Macro":
                continue
            m, d, kind = n.attrs["macro"], self.layers[n.name], kind_of(n.attrs["macro"])
            a, sl = view(n.inputs[0])
            xb = None
            if kind.operands == 2:   # the second factor, [C, H, W] or broadcast [C, 1, 1]
                b, bsl = view(n.inputs[1])
                xb = b[bsl]
            acc = kind.int_acc(m, a[sl], xb, d["w"], d["zp_in"], d["zp_b"], conv=_conv)
            v = (acc + d["bias"][:, None, None]) >> d["pre_shift"][:, None, None]
            qmin, qmax = _qrange(d["bits_out"])
            for k, o in enumerate(n.outputs):
                p, r = d["outs"][k], d["outs"][k]["rec"]
                raw = _requant(v, r["mult_pos"], r["shift_pos"], r["mult_neg"], r["shift_neg"], d["use_neg"],
                               p["zp_out"], qmin, qmax, clamp=False)
                y = np.clip(raw, qmin, qmax)
                if d["table"] is not None:   # entry (y - qmin) >> (bits - 8), interpolated on the low bits
                    u = y - qmin
                    fb = d["bits_out"] - 8
                    i, f = u >> fb, u & ((1 << fb) - 1)
                    y = np.clip(d["table"][i, 0] + ((d["table"][i, 1] * f + 128) >> 8), qmin, qmax)
                    if d["identity"] is not None:   # above the table's window: the identity by a shift
                        sh, z_t, z_id = d["identity"]
                        idv = np.clip(((raw - z_t + ((1 << sh) >> 1)) >> sh) + z_id, qmin, qmax)
                        y = np.where(raw > qmax, idv, y)
                if k == 0:
                    if m.pool:
                        y = _maxpool(y, *m.pool, kind.pool_pads(m))
                    if m.upsample > 1:
                        y = y.repeat(m.upsample, axis=1).repeat(m.upsample, axis=2)
                else:
                    y = _maxpool(y, *m.side_pools[k - 1])
                dst, dsl = view(o)
                if dst[dsl].shape != y.shape:
                    raise RefMismatch(f"layer {n.name}: output {o} is {y.shape}, its region slice {dst[dsl].shape}")
                dst[dsl] = y
        return img


def compare_ddr(ref: IndependentRef, regions: dict, prog, ddr: np.ndarray, bases: dict) -> list[str]:
    """Compare an executor's DDR image with the reference on every region (interior and zero-point border).

    Args: regions: :meth:`IndependentRef.run` output; prog: the :class:`generator.codegen.program.Program` whose layout
        places the regions; ddr: uint8 DDR image after the run; bases: base-register byte addresses.
    Returns: a list of differences, each naming the region, the count and the first differing (c, y, x).
    """
    from host.manifest import im2col_into, region_dtype, region_shape

    bad = []
    for name, r in prog.layout.regions.items():
        if name not in regions:
            bad.append(f"region {name}: in the program's DDR layout but not in the graph")
            continue
        shape, dt, at = region_shape(r), region_dtype(r), bases[r["base_reg"]] + r["addr"]
        a = ddr[at:at + int(np.prod(shape)) * dt.itemsize].view(dt).reshape(shape).astype(np.int64)
        p, want = r["pad"], regions[name]
        exp = np.full(a.shape, ref.border[name], np.int64)
        if r.get("im2col"):   # the input as its patches (host.manifest.im2col_into)
            im2col_into(exp, want.transpose(1, 2, 0), r["im2col"], ref.border[name])
        else:
            exp[p:p + r["h"], p:p + r["w"]] = want.transpose(1, 2, 0)
        diff = np.argwhere(a != exp)
        if diff.size:
            y, x, c = (int(v) for v in diff[0])
            bad.append(f"region {name}: {len(diff)} elements differ, first at channel {c}, row {y - p}, column "
                       f"{x - p}: {int(a[y, x, c])} vs reference {int(exp[y, x, c])}")
    return bad

"""Post-training quantization of the fused graph (int8 / int16, symmetric or asymmetric activations).

Scheme (Jacob et al., CVPR 2018; Krishnamoorthi, arXiv:1806.08342):

* activations: per DDR region one (scale, zero point), so every tensor sharing a region (the inputs of an
  eliminated concat, the views of a split) has the same parameters; asymmetric ranges always include 0, so the
  zero point represents 0.0 exactly and the padding border holds it; ranges (chosen per region by
  :mod:`generator.quant.ranges`) get a per-region headroom (default :attr:`QuantConfig.headroom`) except the
  graph input's, whose range is known; a region's scale is at least what keeps its writers' real multipliers at
  or below 2^13 (an almost empty calibration range would otherwise need a left shift); a graph output only the
  host reads (the YOLO heads) may take one scale per channel (:func:`channel_output_regions`);
* weights: symmetric, per output channel (default) or per tensor, range [-(2^(b-1)-1), 2^(b-1)-1]; an all-zero
  channel gets the scale ``s_out / (2 s_in)`` (its output is its bias alone; the multiplier is then 1/2);
* bias: int, with the input zero point folded in: ``B = round(b / (s_in*s_w)) - zp_in * sum(W_q)``, so the
  hardware multiplies raw stored values and never subtracts zero points;
* requantization: ``q = clamp(((acc*M + 2^(s-1)) >> s) + zp_out)``, M a 16-bit multiplier in [2^14, 2^15), s in
  [1, 63]; LeakyReLU(alpha) uses a second multiplier ``alpha * M`` for acc < 0, ReLU a zero one;
* accumulator width: the worst case ``sum|W_q| * max|q_in| + |B|`` of every output channel must fit the board's
  signed accumulator, else :class:`QuantError` names the layer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from generator.ref.float_ref import PRE_ACT, run_float
from generator.ir.activations import TABLE_ACTIVATIONS
from generator.ir.graph import Graph, GraphError
from generator.kinds import kind_of
from generator.quant.scales import (MAX_REAL_MULT, _act_params, _per_channel_output,  # noqa: F401
                                    _scale_floors, channel_output_regions)
from generator.ref.tables import table_domain
from generator.spec.isa import MAX_SHIFT, MULT_BITS, REQUANT_OPERAND_BITS, TABLE_ENTRIES

MODES = {"int8-asym": (8, False), "int8-sym": (8, True), "int16-sym": (16, True), "int16-asym": (16, False)}
#: the quantization mode a task or flow compiles in when not told otherwise
DEFAULT_QUANT = "int8-asym"


class QuantError(ValueError):
    """Quantization impossible or unsafe (accumulator overflow, multiplier out of range); names the layer."""


@dataclass(frozen=True)
class QuantConfig:
    """bits: 8 or 16; symmetric: symmetric activations (zero point 0); per_channel: per-OC weight scales."""
    bits: int = 8
    symmetric: bool = False
    per_channel: bool = True

    @property
    def headroom(self) -> float:
        """Factor applied to calibrated activation ranges when :func:`quantize` is given no per-region headroom
        (the compile pipeline derives one per region, :func:`generator.quant.ranges.int16_headroom`): 2 for
        int16 (6 dB of its spare SQNR against saturation), 1 for int8."""
        return 2.0 if self.bits == 16 else 1.0

    @classmethod
    def from_mode(cls, mode: str, per_channel: bool = True) -> "QuantConfig":
        """``mode`` is one of int8-asym, int8-sym, int16-sym, int16-asym. Raises QuantError otherwise."""
        if mode not in MODES:
            raise QuantError(f"unknown quantization mode {mode!r}; choose one of {', '.join(MODES)}")
        bits, sym = MODES[mode]
        return cls(bits, sym, per_channel)

    @property
    def name(self) -> str:
        """e.g. ``int8-asym-pc``: bits, symmetric / asymmetric activations, per-channel (pc) / per-tensor (pt)."""
        return f"int{self.bits}-{'sym' if self.symmetric else 'asym'}-{'pc' if self.per_channel else 'pt'}"

    @property
    def qmin(self) -> int:
        """Smallest quantized value (-128 for int8)."""
        return -(1 << (self.bits - 1))

    @property
    def qmax(self) -> int:
        """Largest quantized value (127 for int8)."""
        return (1 << (self.bits - 1)) - 1

    @property
    def np_dtype(self):
        """numpy dtype of a quantized element (np.int8 or np.int16)."""
        return np.int8 if self.bits == 8 else np.int16


def quantize_multiplier(r: float, where: str) -> tuple[int, int]:
    """Real multiplier r >= 0 -> (M, s) with r ~= M * 2^-s, M in [2^14, 2^15) (0 for r = 0), 1 <= s <= 63.
    Raises QuantError (naming ``where``) if r needs a shift outside that range."""
    if r == 0:
        return 0, 1
    if not (r > 0 and math.isfinite(r)):
        raise QuantError(f"{where}: requantization multiplier {r} is not a positive finite number")
    top = MULT_BITS - 2   # bit position of M's leading one
    s = top - math.floor(math.log2(r))
    m = int(round(r * 2.0 ** s))
    if m >= 1 << (MULT_BITS - 1):
        m //= 2
        s -= 1
    if s > MAX_SHIFT:   # tiny multiplier: shift capped, multiplier loses precision (ends at 0)
        m = int(round(r * 2.0 ** MAX_SHIFT))
        s = MAX_SHIFT
    if s < 1:
        raise QuantError(f"{where}: requantization multiplier {r:.4g} is too large (needs a left shift)")
    return m, s


def set_pre_shift(q: dict, worst: np.ndarray, where: str) -> None:
    """Choose each output channel's requantization pre-shift (PBUF record field ``pre_shift``,
    :data:`generator.spec.isa.FORMATS` POST) so that the multiply's operand ``(acc + bias) >> pre_shift`` fits
    :data:`generator.spec.isa.REQUANT_OPERAND_BITS` signed bits (one DSP48E2 A port, UG579) for every input:
    ``pre_shift = max(0, bit_length(worst) - (REQUANT_OPERAND_BITS - 1))`` with ``worst`` [OC] the largest
    |acc + bias| the channel can reach. Sets ``q["pre_shift"]`` int64 [OC]; ``q``'s (and its extra outputs')
    multipliers and shifts stay the real multiplier's, and the record's shift is theirs lowered by the pre-shift
    (:func:`generator.spec.isa.record_multiplier`), so the result differs from the unshifted one only by the
    floor of v's pre_shift low bits (at most M * 2^-shift output units per 2^pre_shift, before rounding). Raises
    QuantError naming ``where`` and the channel when a shift is not larger than its pre-shift (a real multiplier
    of at least 2^(13 - pre_shift): the layer's output scale is about 2^40 times finer than its worst-case
    accumulator reaches; give it a larger output range)."""
    worst = np.asarray(worst, np.int64)
    top = REQUANT_OPERAND_BITS - 1
    pre = np.array([max(0, int(w).bit_length() - top) for w in worst], np.int64)
    for p in [q] + list(q.get("side", [])):
        for mk, sk in (("mult_pos", "shift_pos"), ("mult_neg", "shift_neg")):
            m, sh = np.asarray(p[mk], np.int64), np.asarray(p[sk], np.int64)
            bad = (m != 0) & (sh - pre < 1)
            if bad.any():
                c = int(np.argmax(bad))
                raise QuantError(f"{where} channel {c}: its accumulator reaches {int(worst[c])}, so the "
                                 f"requantization needs a pre-shift of {int(pre[c])} bits, more than its multiplier "
                                 f"{int(m[c])} * 2^-{int(sh[c])} allows (the output scale is too fine for the "
                                 f"accumulator: give the layer a larger output range)")
    q["pre_shift"] = pre


def calibrate(g: Graph, images, progress: bool = True, input_range: tuple | None = None) -> dict:
    """Run the float graph on calibration inputs and record each region's [min, max].

    Args:
        g: fused graph (after :func:`generator.ir.passes.run_all`).
        images: iterable of float32 arrays shaped like the graph input, [1, C, H, W] (C = the model's input
            channels), e.g. images in 0..1 already resized for the network, or any float data.
        input_range: (lo, hi) to use for the graph-input region (the YOLO path passes (0, 1): pixels in 0..1);
            None: the min/max of ``images`` themselves.
    Returns: ``{region name: (min, max)}`` over all inputs, and for each layer with a table activation the range
        of its values before the activation under ``PRE_ACT.format(layer name)`` (the table's input domain).
    Raises:
        QuantError: no calibration input, or one whose shape is not the graph input's (names both shapes); an input
            or a tensor whose values are not finite (NaN, +-inf; names the tensor, its region and the input's
            index).
    """
    from tqdm import tqdm

    ranges: dict[str, list] = {}
    images = list(images)
    inp = g.tensors[g.inputs[0]]
    if not images:
        raise QuantError(f"graph input {inp.name!r}: no calibration data")
    it = tqdm(images, desc="calibration", unit="img", disable=not progress)
    for k, x in enumerate(it):
        if tuple(np.shape(x)) != tuple(inp.shape):
            raise QuantError(f"graph input {inp.name!r}: calibration input of shape {list(np.shape(x))}, the model "
                             f"takes {list(inp.shape)} (calibration data must follow the model's input shape)")
        if not np.isfinite(x).all():
            raise QuantError(f"graph input {inp.name!r}: calibration input {k} holds {int((~np.isfinite(x)).sum())} "
                             f"non-finite value(s) (NaN or infinity)")
        vals = run_float(g, {g.inputs[0]: x}, keep_all=True)
        for name, v in vals.items():
            t = g.tensors.get(name)
            key = t.region if t is not None else (name if name.endswith(PRE_ACT.format("")) else None)
            if key is None:
                continue
            lo, hi = float(v.min()), float(v.max())
            if not (np.isfinite(lo) and np.isfinite(hi)):
                what = "the graph input" if name in g.inputs else f"tensor {name!r}"
                raise QuantError(f"region {key}: {what} has values in [{lo}, {hi}] on calibration input {k}, not "
                                 f"finite numbers (NaN or infinity: weights or an input that overflow float32)")
            r = ranges.setdefault(key, [lo, hi])
            r[0], r[1] = min(r[0], lo), max(r[1], hi)
    if input_range is not None:
        for i in g.inputs:
            ranges[g.tensors[i].region] = [float(input_range[0]), float(input_range[1])]
    return {k: tuple(v) for k, v in ranges.items()}


def quantize(graph: Graph, ranges: dict, cfg: QuantConfig, acc_bits, headroom: dict | None = None,
             calibration: dict | None = None, channel_ranges: dict | None = None,
             region_bits: dict | None = None) -> Graph:
    """Annotate a fused graph with integer parameters (returns a new graph).

    ``ranges``: {region: (min, max)} float activation ranges; ``headroom``: {region: factor} applied to them
    (None: :attr:`QuantConfig.headroom` for every region but the graph inputs); ``calibration``: the per-region
    choices of :func:`generator.quant.ranges.select_ranges`, kept in ``metadata["calibration"]``;
    ``channel_ranges``: {region: (min [C], max [C])} per-channel ranges of :func:`channel_output_regions`, which
    then take per-channel scales (:func:`_channel_params`; only with per-channel weights); ``region_bits``:
    {region: 8 or 16} where a region's precision is not ``cfg.bits`` (mixed precision,
    :mod:`generator.quant.precision`: a layer's weights and accumulator bound follow its input region's bits, its
    clamp and activation table its output's); ``acc_bits``: the signed accumulator width, or {bits: width} per
    input precision.

    Sets ``region.scale/zero_point`` for every region, tensor dtype, and on every Macro node
    ``attrs["q"]`` = dict(w [OC, IC, KH, KW] int (conv only), bias [OC] int64, mult_pos/shift_pos/mult_neg/
    shift_neg [OC] int64 (the real multipliers), pre_shift [OC] int64 (:func:`set_pre_shift`), use_neg bool,
    zp_in, zp_b (an emul layer's second factor's zero point, else 0), zp_out (POST's zero point: the output's, or
    the table input's),
    table (int64 [256, 2] activation table, or None), identity ((id_shift, zp_id) of POST's identity above the
    table's window, :mod:`generator.ref.tables`, or None), qmin, qmax, s_w [OC] float, side).

    Raises: QuantError if a region has no calibration range, a multiplier is out of range, or a layer's
        worst-case accumulator exceeds ``acc_bits`` (signed).
    """
    # legend: s_* scales, zp_* zero points, wq quantized weights, r real multipliers s_in * s_w / s_out [OC],
    # worst the largest |accumulator| an output channel can reach, lim the accumulator's largest value
    g = graph.copy()
    bits = {name: int((region_bits or {}).get(name, cfg.bits)) for name in g.regions}
    cfgs = {b: replace(cfg, bits=b) for b in set(bits.values()) | {cfg.bits}}
    def cfg_of(name):
        return cfgs[bits[name]]

    def room(name):   # graph inputs: their range is known (0..1 images: exact 8-bit pixels in int8-asym)
        if name in g.inputs:
            return 1.0
        return cfg_of(name).headroom if headroom is None else headroom.get(name, 1.0)

    for name, reg in g.regions.items():
        if name not in ranges:
            raise QuantError(f"region {name}: no calibration range (was it written by any layer?)")
        reg.scale, reg.zero_point = _act_params(*ranges[name], cfg_of(name), room(name))
        reg.bits = bits[name]
    chans = {r: v for r, v in (channel_ranges or {}).items()
             if cfg.per_channel and r in channel_output_regions(g)}
    _scale_floors(g, ranges, cfg_of, room)
    for t in g.tensors.values():
        if t.region is not None:
            r = g.regions[t.region]
            t.scale, t.zero_point, t.dtype = r.scale, r.zero_point, f"int{r.bits}"
    for n in g.macro_nodes():
        _layer_params(g, n, bits, cfg_of, chans, ranges, room, acc_bits)
    g.metadata["quant"] = {"bits": cfg.bits, "symmetric": cfg.symmetric, "per_channel": cfg.per_channel,
                           "name": cfg.name}
    if any(b != cfg.bits for b in bits.values()):
        g.metadata["quant"]["region_bits"] = {k: v for k, v in bits.items() if v != cfg.bits}
    if calibration is not None:
        g.metadata["calibration"] = calibration
    return g


def _layer_params(g: Graph, n, bits: dict, cfg_of, chans: dict, ranges: dict, room, acc_bits) -> None:
    """Set ``n.attrs["q"]`` of Macro layer ``n`` (:func:`quantize`'s legend): ``bits`` {region: bits}, ``cfg_of``
    its :class:`QuantConfig` per region, ``chans`` the per-channel output ranges, ``room`` the headroom per region.
    A layer with weights quantizes them; the per-kind terms (what plays the weight's scale otherwise, how often the
    input zero point enters the accumulator, the accumulator's bound) are its kind's (:mod:`generator.kinds`).
    Raises QuantError (accumulator overflow, factors or outputs of different precisions, multiplier range)."""
    m, kind = n.attrs["macro"], kind_of(n.attrs["macro"])
    tin, tout = g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]
    c_in, c_out = cfg_of(tin.region), cfg_of(tout.region)
    wmax, amax = c_in.qmax, max(-c_in.qmin, c_in.qmax)
    s_in, zp_in, s_out, zp_out = tin.scale, tin.zero_point, tout.scale, tout.zero_point
    oc = tout.shape[1]
    zp_b = int(g.tensors[n.inputs[1]].zero_point) if kind.operands == 2 else 0
    if kind.has_weights:
        w = g.const(m.weight).astype(np.float64)
        b = g.const(m.bias).astype(np.float64)
        absmax = np.abs(w).reshape(oc, -1).max(axis=1) if c_in.per_channel else np.full(oc, np.abs(w).max())
        if tout.region in chans:
            s_out, zp_out = _per_channel_output(g, tout, chans[tout.region], absmax / wmax * s_in * max(
                1.0, m.alpha if m.act == "leaky" else 1.0) / MAX_REAL_MULT, c_out, room(tout.region))
        # an all-zero channel outputs its bias alone: any weight scale is exact, take the one giving r = 1/2
        s_w = np.where(absmax > 0, absmax / wmax, 0.5 * s_out / s_in)
        wq = np.clip(np.round(w / s_w[:, None, None, None]), -wmax, wmax).astype(np.int64)
        bias = np.round(b / (s_in * s_w)).astype(np.int64) - zp_in * kind.zp_terms(wq, oc)
    else:   # no weights: what multiplies the input plays their part (copy: 1; emul: the second factor's scale)
        wq, bias = None, -zp_in * kind.zp_terms(None, oc)
        s_w = np.full(oc, kind.factor_scale_max(g, n, wmax, lambda t: g.tensors[t].scale))
    worst = kind.acc_bound(wq, bias, amax, zp_in, zp_b, oc)
    r = s_in * s_w / s_out
    ab = acc_bits[c_in.bits] if isinstance(acc_bits, dict) else acc_bits
    lim = (1 << (ab - 1)) - 1
    if worst.max() > lim:
        k = int(worst.argmax())
        raise QuantError(f"layer {n.name}: accumulator could overflow: output channel {k} can reach "
                         f"{int(worst[k])} > {lim} ({ab}-bit signed accumulator)")
    if kind.operands == 2 and bits[g.tensors[n.inputs[1]].region] != c_in.bits:
        raise QuantError(f"layer {n.name}: its factors are int{c_in.bits} and "
                         f"int{bits[g.tensors[n.inputs[1]].region]}; both must have one precision")
    if any(bits[g.tensors[o].region] != c_out.bits for o in n.outputs[1:]):
        raise QuantError(f"layer {n.name}: its outputs must share one precision")
    n.attrs["q"] = dict(w=wq, bias=bias, zp_in=int(zp_in), zp_b=zp_b, qmin=c_out.qmin, qmax=c_out.qmax, s_w=s_w,
                        bits_in=c_in.bits, bits_out=c_out.bits,
                        **_output_params(g, n, r, (s_in, s_w), (tout, s_out, zp_out), ranges, c_out, room))
    set_pre_shift(n.attrs["q"], worst, f"layer {n.name}")


def _output_params(g: Graph, n, r, s_in_w: tuple, out: tuple, ranges: dict, cfg: QuantConfig, room) -> dict:
    """The requantization of layer ``n``'s outputs: multipliers of the real multipliers ``r`` [OC] (main output
    ``out`` = (tensor, scale, zero point)), each extra pooled output's own, and for a table activation the table
    (the multipliers then map to the table's input domain). Returns dict(mult_pos, shift_pos, mult_neg, shift_neg,
    use_neg, table, zp_out, side, identity: POST's (id_shift, zp_id) or None, table_scale: the table's input
    scale or None). Raises QuantError (multiplier range, a table with outputs of other scales)."""
    m, (s_in, s_w), (tout, s_out, zp_out) = n.attrs["macro"], s_in_w, out
    table, act, identity, s_t = None, m.act, None, None
    if m.act in TABLE_ACTIVATIONS:   # requantize to the table's input domain, the table maps it to s_out
        floor = s_in * float(np.max(s_w)) / MAX_REAL_MULT
        s_t, zp_t, identity = _table_domain(n, ranges, (float(s_out), int(zp_out)), cfg, floor)
        table = activation_table(m, s_t, zp_t, float(s_out), int(zp_out), cfg.bits)
        r, zp_out, act = s_in * s_w / s_t, zp_t, "linear"
    side = []
    for o in n.outputs[1:]:   # extra pooled outputs: same accumulator, their own output scale
        ts = g.tensors[o]
        if table is not None and (ts.scale, ts.zero_point) != (tout.scale, tout.zero_point):
            raise QuantError(f"layer {n.name}: its {m.act} table maps to one output scale, but output {o} has "
                             f"scale {ts.scale:.6g} / zero point {ts.zero_point} and {tout.name} "
                             f"{tout.scale:.6g} / {tout.zero_point}")
        side.append(dict(_multipliers(r if table is not None else r * s_out / ts.scale, act, m.alpha,
                                      f"layer {n.name}"), zp_out=int(zp_out if table is not None else ts.zero_point)))
    return dict(_multipliers(r, act, m.alpha, f"layer {n.name}"), use_neg=act != "linear", table=table,
                zp_out=int(zp_out), side=side, identity=identity, table_scale=s_t)


def _table_domain(n, ranges: dict, out: tuple, cfg: QuantConfig, floor: float) -> tuple[float, int, tuple | None]:
    """(scale, zero point, identity) of layer ``n``'s table input (:func:`generator.ref.tables.table_domain`)
    from its pre-activation range (``PRE_ACT`` key of :func:`calibrate`, no headroom) and its output ``out`` =
    (scale, zero point); the scale at least ``floor``. Raises QuantError when the calibration recorded no such
    range."""
    key = PRE_ACT.format(n.name)
    if key not in ranges:
        raise QuantError(f"layer {n.name}: no pre-activation calibration range for its "
                         f"{n.attrs['macro'].act} table (calibrate the fused graph with this layer in it)")
    m = n.attrs["macro"]
    return table_domain(lambda x: TABLE_ACTIVATIONS[m.act](x, m.alpha, m.beta), *ranges[key], out, cfg.bits, floor)


def activation_table(m, s_t: float, zp_t: int, s_out: float, zp_out: int, bits: int) -> np.ndarray:
    """The POST activation table of a layer (:data:`generator.spec.isa.TABLE_ENTRIES` entries, int64 [256, 2]:
    base, delta) for activation ``m.act`` (:data:`generator.ir.activations.TABLE_ACTIVATIONS`, with ``m.alpha`` /
    ``m.beta``) from the input domain (``s_t``, ``zp_t``) to the output (``s_out``, ``zp_out``).

    Entry i starts at the input integer t_i = qmin + i * 2^(bits-8): ``base = clamp(round(f(s_t (t_i - zp_t)) /
    s_out) + zp_out)`` (round half up); int16 interpolates linearly to the next start (``delta`` = the next
    start's value before the clamp - base where that fits int16, so a segment crossing the output's bound keeps
    the function's slope and POST's clamp saturates it; else the clamped value - base), int8 looks up directly
    (delta 0). Raises QuantError if a delta leaves int16 (a function far steeper than the two scales allow)."""
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    step = 1 << (bits - 8)
    t = qmin + np.arange(TABLE_ENTRIES + 1, dtype=np.int64) * step
    y = TABLE_ACTIVATIONS[m.act](s_t * (t - zp_t).astype(np.float64), m.alpha, m.beta)
    u = np.floor(y / s_out + 0.5) + zp_out
    base = np.clip(u[:-1], qmin, qmax).astype(np.int64)
    d_free = u[1:] - base                                        # a segment crossing the output's bound keeps its
    d_clamped = np.clip(u[1:], qmin, qmax).astype(np.int64) - base   # slope where an int16 delta holds it
    delta = (np.where(np.abs(d_free) <= 32767, d_free, d_clamped).astype(np.int64) if bits > 8
             else np.zeros_like(base))
    if np.abs(delta).max() > 32767:
        raise QuantError(f"{m.act} table: a segment rises by {int(np.abs(delta).max())} output steps, more than "
                         f"an int16 delta holds")
    return np.stack([base, delta], axis=1)


def _multipliers(r: np.ndarray, act: str, alpha: float, layer: str) -> dict:
    """Requantization (multiplier, shift) pairs for the real multipliers ``r`` [OC]: ``mult_pos``/``shift_pos``
    for acc >= 0; ``mult_neg``/``shift_neg`` for acc < 0 (leaky: of ``r * alpha``; relu: 0 and 1; linear: the
    positive pair). Int64 [OC] each. Raises QuantError naming ``layer`` and the channel (see
    :func:`quantize_multiplier`)."""
    oc = len(r)
    mult_pos, shift_pos, mult_neg, shift_neg = (np.zeros(oc, np.int64) for _ in range(4))
    for c in range(oc):
        mult_pos[c], shift_pos[c] = quantize_multiplier(float(r[c]), f"{layer} channel {c}")
        if act == "leaky":
            mult_neg[c], shift_neg[c] = quantize_multiplier(float(r[c]) * alpha, f"{layer} channel {c}")
        elif act == "relu":
            mult_neg[c], shift_neg[c] = 0, 1
        else:
            mult_neg[c], shift_neg[c] = mult_pos[c], shift_pos[c]
    return dict(mult_pos=mult_pos, shift_pos=shift_pos, mult_neg=mult_neg, shift_neg=shift_neg)


def param_bytes(g: Graph, cfg: QuantConfig) -> int:
    """Bytes of weights and biases in the quantized model (weights at bits/8 bytes of the layer's input precision,
    biases as int32 for int8 and int64 for int16, as stored before packing into PBUF records)."""
    total = 0
    for n in g.macro_nodes():
        q = n.attrs["q"]
        if q["w"] is not None:
            b = q.get("bits_in", cfg.bits)
            total += q["w"].size * b // 8 + q["bias"].size * (4 if b == 8 else 8)
    return total


def require_quantized(g: Graph):
    """Raise GraphError unless ``g`` went through :func:`quantize`."""
    if "quant" not in g.metadata:
        raise GraphError("graph is not quantized (run quantize first)")

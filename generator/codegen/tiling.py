"""Layer geometry and tiling: what a Macro layer computes, the tilings that fit the buffers, and their analytic
latency estimate.

A tiling (:class:`Plan`) cuts a layer's pooled output into tiles of rows x cols pixels and ``tile_oc`` output
channels (a multiple of Tm), and its input channels into chunks of ``tile_ic`` (a multiple of Tn), run in one of
two loop orders (``sp_oc``: spatial tiles outer, ifmap reused across output-channel tiles; ``oc_sp``: output-channel
tiles outer, weights reused across spatial tiles). The estimate (compute cycles per tile, DDR transfer time at the
board's bandwidth, overlap through double buffering: the slowest of the three modules bounds the layer) ranks the
plans; :func:`generator.codegen.program.schedule_layer` times the best few exactly. Tiling follows Zhang et al.,
"Optimizing FPGA-based Accelerator Design for Deep Convolutional Neural Networks", FPGA 2015 (Tm/Tn/Tr/Tc).

A first layer with few input channels (e.g. RGB) is *folded*: KH x KW x IC becomes the input-channel axis of a
1x1 convolution, gathered by KH strided LOADs, so the IC-parallel array is not left mostly idle.

What differs between layer kinds (window, folding eligibility, MACs, weight elements, input-channel tiles, IBUF
words, a step's LOAD / COMPUTE cycles and bytes) is the kind's (:mod:`generator.kinds`, :func:`kind_of`); this
module holds what every kind shares (output tiles, buffer fits, loop orders, POST / STORE costs).

Legend (sizes in pixels / channels):
  IC, OC: input / output channels; H, W: input height / width; K: kernel size (KH = KW); S: stride; pad: padding at the top (pads: top, left, bottom, right).
  Tn, Tm (``hw.tn``, ``hw.tm``): input / output channels the PE array takes per cycle.
  ig / og: input-channel groups of Tn / output-channel groups of Tm (the COMPUTE fields of the ISA).
  OHc x OWc (c: convolution): convolution output; OHp x OWp (p: pooled): after max-pooling, before nearest
  upsampling by ``up`` (the output tensor is OHp*up x OWp*up).
  mapped_k, mapped_stride, mapped_ic: the convolution the PE array runs (folded: 1, 1 and K*K*IC).
  acc tile: the convolution-output rows x cols a tile accumulates (the pooling windows of its pooled pixels).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from generator.spec import isa
from generator.spec.arch import TABLE_STAGES
from generator.spec.hw import HwConfig
from generator.spec.timing import POST_FILL, transfer_cycles
from generator.ir.graph import Graph, GraphError
from generator.kinds import kind_of
from generator.kinds.base import ceil_div

#: bytes of one PBUF parameter record in DDR (bias, requantization multipliers and shifts of one output channel)
PARAM_RECORD_BYTES = 16


class ScheduleError(ValueError):
    """No tiling of a layer fits the configured buffers or ISA field widths (the message names the layer)."""


@dataclass
class Layer:
    """Geometry of one Macro layer (all sizes in pixels / channels; names as in the module legend).

    kind: the layer kind's name (:data:`generator.kinds.KINDS`: "conv", "copy", "emul"; its tiling, emission and
    cost specifics are that kind's, :func:`generator.kinds.kind_of`); pool: (k, s, pad_end) max-pool ((1, 1, 0):
    none); up: nearest-upsampling factor;
    in_tensor / out_tensor: graph tensor names; act: POST's act field (:data:`generator.spec.isa.ACTIVATIONS` bits:
    negative-side multiplier for LeakyReLU/ReLU, activation table); zp_out: POST's zero point (the output's, or
    the table input's); identity: POST's (id_shift, zp_id) with id_above (None: off); fold: run as a 1x1 convolution over K*K*IC channels; sides: extra pooled outputs, each
    dict(out_tensor, pool_k, pool_s, zp_out, OH, OW) (pooling window, stride, zero point and size of that output);
    an "emul" layer (``a * b``, run as a copy with the COMPUTE's ``emul`` multipliers): in_b the second factor
    (b_broadcast: [1, C, 1, 1], read for every pixel by a LOAD with zero strides), za / zb the factors' zero points.
    """
    name: str
    kind: str
    K: int
    S: int
    pad: int
    IC: int
    H: int
    W: int
    OC: int
    OHc: int
    OWc: int
    pool: tuple
    up: int
    OHp: int
    OWp: int
    in_tensor: str
    out_tensor: str
    act: int
    zp_out: int
    fold: bool = False
    sides: list = field(default_factory=list)
    pads: tuple = (0, 0, 0, 0)                   # (top, left, bottom, right); pad == top
    in_b: str | None = None
    b_broadcast: bool = False
    za: int = 0
    zb: int = 0
    identity: tuple | None = None                # POST id_above: (id_shift, zp_id) above the table's window
    bits_in: int = 8                             # precision of the input (LOAD, COMPUTE): 8 or 16
    bits_out: int = 8                            # precision of the outputs (POST, STORE)

    @property
    def pad_left(self) -> int:
        """Padding at the left (the column offset of the first input window)."""
        return self.pads[1]

    @property
    def mapped_k(self) -> int:
        """Kernel size the PE array runs (1 when folded)."""
        return 1 if self.fold else self.K

    @property
    def mapped_stride(self) -> int:
        """Stride the PE array runs (1 when folded)."""
        return 1 if self.fold else self.S

    @property
    def mapped_ic(self) -> int:
        """Input channels the PE array runs (K*K*IC when folded)."""
        return self.K * self.K * self.IC if self.fold else self.IC

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the layer on the PE array (0 for copy and emul layers)."""
        return kind_of(self).macs(self)

    def compulsory_bytes(self, elem_bytes: int) -> int:
        """DDR bytes the layer cannot avoid (bytes): its ifmap read once, its weights (conv; an emul layer: its
        second factor) and its parameter records (:data:`PARAM_RECORD_BYTES` per output channel and output) read
        once, every output written once."""
        outs = self.OC * self.OHp * self.OWp * self.up * self.up + sum(self.OC * sd["OH"] * sd["OW"]
                                                                       for sd in self.sides)
        weights = kind_of(self).weight_elements(self)
        params = self.OC * (1 + len(self.sides)) * PARAM_RECORD_BYTES
        return (self.IC * self.H * self.W + weights + outs) * elem_bytes + params

    def io_lower_bound(self, hw) -> int:
        """Lower bound of the DDR bytes of any schedule of this layer with ``hw``'s on-chip buffers (bytes):
        the larger of :meth:`compulsory_bytes` and the communication bound of Chen, Han and Wang, "Communication
        Lower Bound in Convolution Accelerators" (HPCA 2020): 2 x MACs / sqrt(R x S) operand elements plus the
        outputs, with R = K^2 / stride^2 the reuse of an ifmap element and S the elements every on-chip buffer
        holds (:func:`onchip_elements`); a layer without MACs: its compulsory bytes."""
        comp = self.compulsory_bytes(hw.elem_bytes)
        if not self.macs:
            return comp
        reuse = max(1.0, self.K * self.K / (self.S * self.S))
        s_elems = onchip_elements(hw)
        outs = self.OC * (self.OHp * self.OWp * self.up * self.up + sum(sd["OH"] * sd["OW"] for sd in self.sides))
        bound = 2 * self.macs / math.sqrt(reuse * s_elems) * hw.elem_bytes + outs * hw.elem_bytes
        return max(comp, int(math.ceil(bound)))


def onchip_elements(hw) -> int:
    """Elements (or accumulators) the on-chip buffers of ``hw`` hold: both banks of IBUF, WBUF and ACC, and OBUF."""
    return 2 * (hw.ibuf_words * hw.tn + hw.wbuf_words * hw.tn * hw.tm + hw.acc_words * hw.tm) + hw.obuf_words * hw.tm


@dataclass
class Plan:
    """A tiling: ``tile_rows`` x ``tile_cols`` pooled-output pixels per tile, ``tile_oc`` output channels per tile,
    ``tile_ic`` input channels per chunk (0 for copy layers), loop ``order`` ("sp_oc" or "oc_sp"); once evaluated,
    ``estimate`` (analytic cycles), ``est_bytes`` (analytic DDR bytes, full-size tiles), ``cycles`` (exact
    predicted cycles) and ``ddr_bytes`` (bytes moved)."""
    tile_rows: int
    tile_cols: int
    tile_oc: int
    tile_ic: int
    order: str
    estimate: float = 0.0
    est_bytes: float = 0.0
    cycles: int = 0
    ddr_bytes: int = 0

    def describe(self) -> str:
        """Short text: pooled-output tile, channel tiles, loop order."""
        return f"{self.tile_rows}x{self.tile_cols}px oc{self.tile_oc} ic{self.tile_ic} {self.order}"


def tensor_bits(t) -> int:
    """The precision of a quantized tensor (its dtype ``int8`` / ``int16``), in bits. Raises GraphError for
    another dtype."""
    if t.dtype not in ("int8", "int16"):
        raise GraphError(f"tensor {t.name}: dtype {t.dtype}, not a quantized int8 / int16 tensor")
    return int(t.dtype[3:])


def layer_of(g: Graph, n, hw: HwConfig) -> Layer:
    """Extract the geometry of Macro node ``n`` and decide input folding. Raises GraphError if the computed
    output size differs from the output tensor's shape."""
    m, q, kind = n.attrs["macro"], n.attrs["q"], kind_of(n.attrs["macro"])
    ti, to = g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]
    _, IC, H, W = ti.shape
    OC = to.shape[1]
    (K, S), pads = kind.window(m), m.four_pads()   # (a copy layer's pads: its input read with that border)
    pad = pads[0]
    OHc, OWc = (H + pads[0] + pads[2] - K) // S + 1, (W + pads[1] + pads[3] - K) // S + 1
    pool = tuple(m.pool) if m.pool else (1, 1, 0)
    OHp = (OHc + pool[2] - pool[0]) // pool[1] + 1
    OWp = (OWc + pool[2] - pool[0]) // pool[1] + 1
    if (OHp * m.upsample, OWp * m.upsample) != tuple(to.shape[2:]):
        raise GraphError(f"layer {n.name}: computed output {OHp * m.upsample}x{OWp * m.upsample} does not "
                         f"match tensor shape {to.shape}")
    L = Layer(n.name, m.kind, K, S, pad, IC, H, W, OC, OHc, OWc, pool, m.upsample, OHp, OWp,
              n.inputs[0], n.outputs[0], (isa.ACTIVATIONS["neg_mult"] if q["use_neg"] else 0)
              | (isa.ACTIVATIONS["table"] if q.get("table") is not None else 0), q["zp_out"], pads=pads,
              identity=q.get("identity"), bits_in=tensor_bits(ti), bits_out=tensor_bits(to))
    for o, sp, sq in zip(n.outputs[1:], m.side_pools, q.get("side", [])):
        k, s, _ = sp
        L.sides.append(dict(out_tensor=o, pool_k=k, pool_s=s, zp_out=sq["zp_out"], OH=(OHc - k) // s + 1,
                            OW=(OWc - k) // s + 1))
    if kind.operands == 2:   # the second factor
        tb = g.tensors[n.inputs[1]]
        L.in_b, L.b_broadcast, L.za, L.zb = n.inputs[1], tuple(tb.shape[2:]) != (H, W), q["zp_in"], q["zp_b"]
    L.fold = kind.can_fold(L, hw)
    return L


def layer_hw(hw: HwConfig, L: Layer) -> HwConfig:
    """The configuration layer ``L`` is tiled with: ``hw`` at the layer's input precision (IBUF / WBUF words, pixel
    lanes, accumulator width, input element bytes), with the OBUF words of its output precision (a mixed-precision
    layer, :mod:`generator.spec.isa`)."""
    h = hw.at(L.bits_in)
    return h if L.bits_out == L.bits_in else replace(h, obuf_words=hw.at(L.bits_out).obuf_words)


def acc_span(p0: int, p1: int, pool: tuple, n_conv: int) -> tuple[int, int]:
    """[start, end) convolution-output rows (or cols) that pooled rows [p0, p1) read, clipped to ``n_conv``."""
    pk, ps, _ = pool
    return p0 * ps, min((p1 - 1) * ps + pk, n_conv)


def _acc_tile(L: Layer, rows: int, cols: int) -> tuple[int, int]:
    """Rows and cols of the acc tile of the first ``rows`` x ``cols`` pooled-output tile."""
    r0, r1 = acc_span(0, rows, L.pool, L.OHc)
    c0, c1 = acc_span(0, cols, L.pool, L.OWc)
    return r1 - r0, c1 - c0


def _fits(L: Layer, hw: HwConfig, tile_rows, tile_cols, tile_oc, tile_ic) -> bool:
    """True if the tiling fits every buffer, the WBUF transfer size and the ISA field widths."""
    kind = kind_of(L)
    acc_rows, acc_cols = _acc_tile(L, min(tile_rows, L.OHp), min(tile_cols, L.OWp))
    tile_og = ceil_div(min(tile_oc, L.OC), hw.tm)
    taps = L.mapped_k ** 2
    chunk_ig = kind.step_words(L, hw, kind.step_channels(L, tile_ic, tile_oc), tile_og)[0]
    in_rows = (acc_rows - 1) * L.mapped_stride + L.mapped_k
    in_cols = (acc_cols - 1) * L.mapped_stride + L.mapped_k
    if kind.has_weights and (tile_og * chunk_ig * taps > hw.wbuf_words
                             or tile_og * chunk_ig * taps * hw.tn * hw.tm >= 1 << 20):
        return False
    out_rows, out_cols = min(tile_rows, L.OHp) * L.up, min(tile_cols, L.OWp) * L.up
    for sd in L.sides:   # pooled outputs need tiles made of whole pooling windows
        if (tile_rows < L.OHp and tile_rows % sd["pool_s"]) or (tile_cols < L.OWp and tile_cols % sd["pool_s"]):
            return False
    pbuf_records = ceil_div(L.OC, hw.tm) * hw.tm_pitch * (1 + len(L.sides))
    return (in_rows * in_cols * chunk_ig <= hw.ibuf_words and acc_rows * acc_cols * tile_og <= hw.acc_words
            and out_rows * out_cols * tile_og <= hw.obuf_words and pbuf_records <= hw.pbuf_index
            and max(in_rows, in_cols, out_rows, out_cols) < 4096 and tile_og < 256 and chunk_ig < 256)


def smallest_tile_misfit(L: Layer, hw: HwConfig) -> str:
    """Why even the smallest tile (one pooled output pixel, Tm output and Tn input channels) does not fit:
    ``": smallest tile: <buffer> needs N, has M; ..."`` for the buffers that are too small, or "" when it fits."""
    kind = kind_of(L)
    acc_rows, acc_cols = _acc_tile(L, 1, 1)
    ig = kind.step_words(L, hw, kind.step_channels(L, hw.tn, hw.tm), 1)[0]
    in_rows = (acc_rows - 1) * L.mapped_stride + L.mapped_k
    in_cols = (acc_cols - 1) * L.mapped_stride + L.mapped_k
    need = {"WBUF words": (ig * L.mapped_k ** 2, hw.wbuf_words)} if kind.has_weights else {}
    need.update({"IBUF words": (in_rows * in_cols * ig, hw.ibuf_words),
                 "ACC words": (acc_rows * acc_cols, hw.acc_words),
                 "OBUF words": (L.up * L.up, hw.obuf_words),
                 "PBUF records (all output channels of the layer)":
                     (ceil_div(L.OC, hw.tm) * hw.tm_pitch * (1 + len(L.sides)), hw.pbuf_index)})
    bad = [f"{k} needs {n}, has {m}" for k, (n, m) in need.items() if n > m]
    return ": smallest tile: " + "; ".join(bad) if bad else ""


def _load_counts(L: Layer, plan: Plan, n_spatial, n_oc, n_ic) -> tuple[int, int]:
    """(ifmap LOADs, weight LOADs) of the layer: what the loop order lets the two banks of each buffer reuse."""
    steps = n_spatial * n_oc * n_ic
    if not kind_of(L).has_weights:
        return steps, 0
    if n_ic > 1:
        return steps, steps
    if plan.order == "sp_oc":
        return n_spatial, (n_oc if n_spatial == 1 else (1 if n_oc == 1 else n_spatial * n_oc))
    return (n_spatial if n_oc == 1 else (1 if n_spatial == 1 else n_spatial * n_oc)), n_oc


def estimate_cycles(L: Layer, hw: HwConfig, views, plan: Plan) -> float:
    """Analytic latency estimate of a plan (cycles): the busiest module plus pipeline fill and drain.
    ``views``: the (input, output) tensor views (``row`` / ``pix``: byte strides, see
    :class:`generator.codegen.allocate.TensorView`)."""
    vin, vout = views
    eb = hw.elem_bytes
    n_spatial = ceil_div(L.OHp, plan.tile_rows) * ceil_div(L.OWp, plan.tile_cols)
    n_oc = ceil_div(L.OC, plan.tile_oc)
    tile_rows, tile_cols = min(plan.tile_rows, L.OHp), min(plan.tile_cols, L.OWp)
    acc_rows, acc_cols = _acc_tile(L, tile_rows, tile_cols)
    tile_og = ceil_div(min(plan.tile_oc, L.OC), hw.tm)
    kind = kind_of(L)
    n_ic, ifmap, weights, compute = kind.step_costs(L, hw, vin, plan, acc_rows, acc_cols, tile_og)
    n_ifmap, n_weights = _load_counts(L, plan, n_spatial, n_oc, n_ic)
    out_rows, out_cols = tile_rows * L.up, tile_cols * L.up
    oc_bytes = min(plan.tile_oc, L.OC) * eb
    fill = POST_FILL + (TABLE_STAGES if L.act & isa.ACTIVATIONS["table"] else 0)
    store = fill + out_rows * out_cols * L.pool[0] ** 2 * tile_og + transfer_cycles(
        hw, out_rows, out_cols, oc_bytes, vout.row, vout.pix, write=True, src_pitch=tile_og)
    for sd in L.sides:
        rows, cols = out_rows // sd["pool_s"], out_cols // sd["pool_s"]
        store += fill + rows * cols * sd["pool_k"] ** 2 * tile_og + transfer_cycles(
            hw, rows, cols, oc_bytes, vout.row, vout.pix, write=True, src_pitch=tile_og)
    loads = n_ifmap * ifmap + n_weights * weights
    # analytic DDR bytes with every tile full size
    ifmap_bytes, weight_bytes = kind.step_bytes(L, hw, plan, acc_rows, acc_cols, tile_og,
                                                vin.pix if vin.im2col else 0)
    plan.est_bytes = (n_ifmap * ifmap_bytes + n_weights * weight_bytes
                      + n_spatial * n_oc * (1 + len(L.sides)) * out_rows * out_cols * oc_bytes)
    busiest = max(loads, n_spatial * n_oc * n_ic * compute, n_spatial * n_oc * store)
    return busiest + ifmap + weights + store


def candidates(L: Layer, hw: HwConfig) -> list[Plan]:
    """All plans that fit the buffers (before ranking): per (tile_oc, tile_ic, tile_cols) the largest fitting row
    count, in both loop orders."""
    row_opts = sorted({ceil_div(L.OHp, n) for n in range(1, L.OHp + 1)}, reverse=True)
    col_opts = sorted({ceil_div(L.OWp, n) for n in (1, 2, 4, 8, 16)}, reverse=True)
    n_og = ceil_div(L.OC, hw.tm)
    oc_opts = sorted({min(k, n_og) * hw.tm for k in (1, 2, 4, 8, 16, 32, n_og)})
    ic_opts = kind_of(L).ic_tile_options(L, hw)
    out = []
    for tile_oc in oc_opts:
        for tile_ic in ic_opts:
            for tile_cols in col_opts:
                for tile_rows in row_opts:
                    if _fits(L, hw, tile_rows, tile_cols, tile_oc, tile_ic):
                        for order in ("sp_oc", "oc_sp"):
                            out.append(Plan(tile_rows, tile_cols, tile_oc, tile_ic, order))
                        break   # largest fitting row count for this (tile_oc, tile_ic, tile_cols)
    return out


def ranked_plans(L: Layer, hw: HwConfig, views) -> list[Plan]:
    """The plans that fit, each with its ``estimate``, fastest first (``views`` as in :func:`estimate_cycles`).
    Raises ScheduleError naming the layer, the buffer sizes and what the smallest tile needs if none fits."""
    cands = candidates(L, hw)
    if not cands:
        raise ScheduleError(
            f"layer {L.name}: no tiling fits the buffers of {hw.board} (IC={L.IC} OC={L.OC} K={L.K} "
            f"{L.H}x{L.W}; IBUF {hw.ibuf_words} words of {hw.tn}, WBUF {hw.wbuf_words} words of "
            f"{hw.tn}x{hw.tm}, ACC {hw.acc_words} words, OBUF {hw.obuf_words} words, PBUF {hw.pbuf_entries} "
            f"records){smallest_tile_misfit(L, hw)}")
    for p in cands:
        p.estimate = estimate_cycles(L, hw, views, p)
    cands.sort(key=lambda p: p.estimate)
    return cands

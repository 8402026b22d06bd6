"""Instruction emission: one layer's tiling plan as LOAD / COMPUTE / POST / STORE instructions with the
dependency-token flags for double-buffered overlap (see :mod:`generator.spec.isa`).

Per layer: a PBUF load, then per tile (loop order of the plan) one *step* per input-channel chunk (its ifmap and
weight LOADs, skipped when a bank already holds that data, and a COMPUTE into the tile's accumulator bank), then
the tile's POST and STORE (and one POST / STORE per extra pooled output). Terms as in
:mod:`generator.codegen.tiling` (acc tile, og / ig, mapped_*); here [py0, py1) x [px0, px1): a tile's pooled-output
rows x cols, [r0, r1) x [c0, c1): its acc tile, [oc0, oc1): its output channels, [ic0, ic1): a step's input
channels, t_idx: the tile's index (its accumulator bank is t_idx % 2).
"""
from __future__ import annotations

from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.kinds.base import ceil_div, tile_ranges
from generator.codegen.allocate import DdrLayout, TensorView
from generator.codegen.tiling import Layer, Plan, ScheduleError, acc_span, layer_hw


def config_insn(hw: HwConfig):
    """The CONFIG instruction that starts every program for ``hw`` (ISA version, Tn, Tm, config id)."""
    return isa.make("CONFIG", isa_version=isa.ISA_VERSION, tn=hw.tn, tm=hw.tm, config_id=hw.config_id)


def prec_field(bits: int) -> int:
    """The ``prec`` field value of precision ``bits`` (8 or 16; :data:`generator.spec.isa.PRECISIONS`)."""
    return isa.PRECISIONS[f"int{bits}"]


def ddr_bytes(hw: HwConfig, insns) -> int:
    """Bytes moved between DDR and the accelerator by LOAD/STORE instructions (each at its ``prec``'s element
    size; PBUF / TBUF records 16 bytes)."""
    tot = 0
    for i in insns:
        if i.op == "LOAD":
            eb = isa.PARAM_RECORD_BYTES if i.f["buf"] in (isa.BUFFERS["PBUF"], isa.BUFFERS["TBUF"]) else 1 + i.f["prec"]
            tot += i.f["rows"] * i.f["cols"] * i.f["elems"] * eb
        elif i.op == "STORE":
            tot += i.f["rows"] * i.f["cols"] * i.f["elems"] * (1 + i.f["prec"])
    return tot


def _identity_fields(L: Layer) -> dict:
    """POST's id_above / id_shift / zp_id of layer ``L`` (:data:`generator.spec.isa.ID_SHIFT_MAX`): the identity
    above its table's window, or all 0."""
    if L.identity is None:
        return dict(id_above=0, id_shift=0, zp_id=0)
    return dict(id_above=1, id_shift=int(L.identity[0]), zp_id=int(L.identity[1]))


class _Banks:
    """The two banks of a double-buffered buffer: per bank the key of its content and the last step reading it."""

    def __init__(self):
        self.key = [None, None]
        self.last_read = [-1, -1]

    def pick(self, key) -> tuple[int, int | None]:
        """(bank, None) if a bank holds ``key``; else (the bank read longest ago, the last step reading it: the
        step the refill must wait for), and that bank now holds ``key``."""
        for b in (0, 1):
            if self.key[b] == key:
                return b, None
        b = 0 if self.last_read[0] <= self.last_read[1] else 1
        self.key[b] = key
        return b, self.last_read[b]


def _tile_order(L: Layer, plan: Plan) -> list:
    """Tiles ((py0, py1, px0, px1) pooled-output rows / cols, (oc0, oc1) output channels) in the plan's order."""
    sp_tiles = [(a, b, c, d) for a, b in tile_ranges(L.OHp, plan.tile_rows)
                for c, d in tile_ranges(L.OWp, plan.tile_cols)]
    oc_tiles = tile_ranges(L.OC, plan.tile_oc)
    if plan.order == "sp_oc":
        return [(s, o) for s in sp_tiles for o in oc_tiles]
    return [(s, o) for o in oc_tiles for s in sp_tiles]


class _LayerEmitter:
    """Emits one layer; ``steps`` records per COMPUTE (index of its first LOAD or None, its index, the step whose
    bank its LOADs refill or -1) for the write-after-read tokens."""

    def __init__(self, g: Graph, L: Layer, plan: Plan, hw: HwConfig, lay: DdrLayout):
        hw = layer_hw(hw, L)   # the layer's input precision (its OBUF words those of its output precision)
        self.L, self.plan, self.hw, self.lay, self.kind = L, plan, hw, lay, kind_of(L)
        self.p_in, self.p_out = prec_field(L.bits_in), prec_field(L.bits_out)
        eb, eb_out = L.bits_in // 8, L.bits_out // 8
        self.vin, self.vout = TensorView(g, lay, L.in_tensor, eb), TensorView(g, lay, L.out_tensor, eb_out)
        if not L.fold and self.vin.pad < max(L.pads):
            raise ScheduleError(f"layer {L.name}: input region border {self.vin.pad} < padding {max(L.pads)}")
        self.vsides = [TensorView(g, lay, sd["out_tensor"], eb_out) for sd in L.sides]
        self.vb = TensorView(g, lay, L.in_b, eb) if L.in_b else None
        self.n_og, self.n_ig = ceil_div(L.OC, hw.tm), ceil_div(L.mapped_ic, hw.tn)
        self.ibank, self.wbank = _Banks(), _Banks()
        self.out, self.steps = [], []

    def emit(self) -> list:
        """The layer's instructions (see :func:`emit_layer`)."""
        L, hw = self.L, self.hw
        self.out.append(isa.make("LOAD", buf=isa.BUFFERS["PBUF"], base_reg=isa.BASE_REGS["WEIGHTS"],
                                 ddr_offset=self.lay.params[L.name], rows=1, cols=1,
                                 elems=self.n_og * hw.tm_pitch * (1 + len(L.sides)), dst_word=0))
        if L.act & isa.ACTIVATIONS["table"]:
            self.out.append(isa.make("LOAD", buf=isa.BUFFERS["TBUF"], base_reg=isa.BASE_REGS["WEIGHTS"],
                                     ddr_offset=self.lay.tables[L.name], rows=1, cols=1,
                                     elems=isa.TBUF_ROWS * hw.tm_pitch, dst_word=0))
        tiles = _tile_order(L, self.plan)
        for t_idx, ((py0, py1, px0, px1), (oc0, oc1)) in enumerate(tiles):
            r0, r1 = acc_span(py0, py1, L.pool, L.OHc)
            c0, c1 = acc_span(px0, px1, L.pool, L.OWc)
            acc = (r0, r1, c0, c1)
            chunks = self.kind.ic_chunks(L, self.plan.tile_ic, (oc0, oc1))
            for ci, ic in enumerate(chunks):
                self._step(t_idx, ci, ci == len(chunks) - 1, (py0, px0), acc, (oc0, oc1), ic)
            self._tile_output(t_idx, len(tiles), (py0, py1, px0, px1), acc, (oc0, oc1))
        self._write_after_read_tokens()
        return self.out

    def _weight_load(self, bank, og0, tile_og, ic0, chunk_ig):
        """LOAD of the weights of output groups [og0, og0 + tile_og) x one input chunk into WBUF ``bank``."""
        hw, taps = self.hw, self.L.mapped_k ** 2
        wl = hw.tn * hw.tm
        word = taps * wl   # elements of one (og, ig) block
        off = self.lay.weights[self.L.name] + (og0 * self.n_ig + ic0 // hw.tn) * word * hw.elem_bytes
        if hw.wbuf_pitch != wl:   # WBUF words at a power-of-two element pitch: one run per word
            return isa.make("LOAD", buf=1, prec=self.p_in, bank=bank, base_reg=isa.BASE_REGS["WEIGHTS"], ddr_offset=off,
                            rows=tile_og, cols=chunk_ig * taps, elems=wl,
                            row_stride=self.n_ig * word * hw.elem_bytes, pix_stride=wl * hw.elem_bytes, dst_pitch=1)
        return isa.make("LOAD", buf=1, prec=self.p_in, bank=bank, base_reg=isa.BASE_REGS["WEIGHTS"], ddr_offset=off,
                        rows=tile_og, cols=1, elems=chunk_ig * word, row_stride=self.n_ig * word * hw.elem_bytes,
                        pix_stride=0, dst_pitch=chunk_ig * taps)

    def _step(self, t_idx, ci, last_chunk, sp_origin, acc, oc, ic):
        """One step: the LOADs a bank does not hold yet (the last pushes a token to COMPUTE), then the COMPUTE
        of input chunk ``ic`` into the tile's accumulator bank."""
        L, hw, s = self.L, self.hw, len(self.steps)
        r0, r1, c0, c1 = acc
        acc_rows, acc_cols = r1 - r0, c1 - c0
        (oc0, oc1), (ic0, ic1) = oc, ic
        og0, tile_og = oc0 // hw.tm, ceil_div(oc1 - oc0, hw.tm)
        # (b_word: an emul layer's second factor's first IBUF word of a pixel)
        chunk_ig, b_word = self.kind.step_words(L, hw, ic1 - ic0, tile_og)
        loads, need = [], -1
        ib, refill = self.ibank.pick((sp_origin, ic))
        if refill is not None:
            need = max(need, refill)
            loads += self.kind.ifmap_loads(L, (self.vin, self.vb), ib, acc, ic, (chunk_ig, b_word), self.p_in, hw.tn)
        wb = 0
        if self.kind.has_weights:
            wb, refill = self.wbank.pick((oc, ic))
            if refill is not None:
                need = max(need, refill)
                loads.append(self._weight_load(wb, og0, tile_og, ic0, chunk_ig))
            self.wbank.last_read[wb] = s
        self.ibank.last_read[ib] = s
        first = None
        if loads:
            loads[-1].f["push_next"] = 1
            first = len(self.out)
            self.out.extend(loads)
        in_cols = (acc_cols - 1) * L.mapped_stride + L.mapped_k
        self.steps.append((first, len(self.out), need))
        self.out.append(isa.make(
            "COMPUTE", prec=self.p_in, acc_bank=t_idx % 2, ibuf_bank=ib, wbuf_bank=wb, acc_init=int(ci == 0),
            oh=acc_rows, ow=acc_cols, og=tile_og, ig=chunk_ig, kh=L.mapped_k,
            kw=L.mapped_k, stride=L.mapped_stride, in_cols=in_cols, **self.kind.compute_flags(),
            b_word=b_word, za=L.za, zb=L.zb, pop_prev=int(bool(loads)),
            pop_next=int(ci == 0 and t_idx >= 2), push_next=int(last_chunk)))

    def _tile_output(self, t_idx, n_tiles, sp, acc, oc):
        """POST and STORE of one tile, then one POST / STORE per extra pooled output (same accumulators, own
        scale); the last POST frees the accumulator bank unless one of the last two tiles."""
        L, vout = self.L, self.vout
        py0, py1, px0, px1 = sp
        r0, r1, c0, c1 = acc
        (oc0, oc1), tile_og = oc, ceil_div(oc[1] - oc[0], self.hw.tm)
        out_r, out_c = (py1 - py0) * L.up, (px1 - px0) * L.up
        free_acc = int(t_idx + 2 < n_tiles)
        self.out.append(isa.make(
            "POST", prec=self.p_out, acc_bank=t_idx % 2, oh=r1 - r0, ow=c1 - c0, og=tile_og,
            pbuf_oc=oc0 // self.hw.tm * self.hw.tm_pitch, act=L.act,
            pool_k=L.pool[0], pool_s=L.pool[1], up=L.up, zp_out=L.zp_out, out_rows=out_r, out_cols=out_c,
            **_identity_fields(L),
            pop_prev=1, push_prev=free_acc if not L.sides else 0))
        self.out.append(isa.make("STORE", prec=self.p_out, base_reg=vout.base_reg, ddr_offset=vout.at(py0 * L.up, px0 * L.up, oc0),
                                 rows=out_r, cols=out_c, elems=oc1 - oc0, row_stride=vout.row,
                                 pix_stride=vout.pix, src_pitch=tile_og))
        for j, (sd, vs) in enumerate(zip(L.sides, self.vsides)):
            s = sd["pool_s"]
            sy0, sx0 = r0 // s, c0 // s
            sy1 = sd["OH"] if r1 == L.OHc else r1 // s
            sx1 = sd["OW"] if c1 == L.OWc else c1 // s
            self.out.append(isa.make(
                "POST", prec=self.p_out, acc_bank=t_idx % 2, oh=r1 - r0, ow=c1 - c0, og=tile_og,
                pbuf_oc=((j + 1) * self.n_og + oc0 // self.hw.tm) * self.hw.tm_pitch, act=L.act,
                pool_k=sd["pool_k"], pool_s=s,
                up=1, zp_out=sd["zp_out"], out_rows=sy1 - sy0, out_cols=sx1 - sx0, **_identity_fields(L),
                push_prev=free_acc if j == len(L.sides) - 1 else 0))
            self.out.append(isa.make("STORE", prec=self.p_out, base_reg=vs.base_reg, ddr_offset=vs.at(sy0, sx0, oc0),
                                     rows=sy1 - sy0, cols=sx1 - sx0, elems=oc1 - oc0, row_stride=vs.row,
                                     pix_stride=vs.pix, src_pitch=tile_og))

    def _write_after_read_tokens(self):
        """A refilling LOAD waits (pop_next) for the COMPUTE of the step that last read its bank (push_prev);
        one token covers every later refill of an earlier step."""
        covered = -1
        for first, _, need in self.steps:
            if first is not None and need > covered:
                self.out[first].f["pop_next"] = 1
                self.out[self.steps[need][1]].f["push_prev"] = 1
                covered = need


def emit_layer(g: Graph, L: Layer, plan: Plan, hw: HwConfig, lay: DdrLayout) -> list:
    """Instructions of one layer (no barrier): PBUF load, then per step its LOADs and COMPUTE, per output tile
    POST and STORE, with the dependency-token flags for double-buffered overlap (see :mod:`generator.spec.isa`).
    Raises ScheduleError if the input region's border is narrower than the padding."""
    return _LayerEmitter(g, L, plan, hw, lay).emit()

"""Scheduling, DDR allocation and instruction emission for a quantized graph.

For each Macro layer the scheduler enumerates tilings (output rows x cols per tile, output channels per tile
as a multiple of Tm, input channels per chunk as a multiple of Tn) and two loop orders (``sp_oc``: spatial tiles
outer, ifmap reused across output-channel tiles; ``oc_sp``: output-channel tiles outer, weights reused across
spatial tiles), keeps those that fit the buffers, ranks them with an analytic latency model (compute cycles per
tile, DDR transfer time at the board's bandwidth, overlap through double buffering: the slowest of the three
modules bounds the layer) and picks the best of the top few by the exact event model of :mod:`generator.exec.golden`
(so the printed prediction is what the golden simulator counts). Tiling follows Zhang et al., "Optimizing
FPGA-based Accelerator Design for Deep Convolutional Neural Networks", FPGA 2015 (Tm/Tn/Tr/Tc).

A first layer with few input channels (e.g. RGB) is *folded*: KH x KW x IC becomes the input-channel axis of a
1x1 convolution, gathered by KH strided LOADs, so the IC-parallel array is not left mostly idle.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from generator.spec import isa
from generator.spec.timing import COMPUTE_FILL, POST_FILL, WBUF, HwConfig, transfer_cycles
from generator.ir.graph import Graph, GraphError
from generator.exec.golden import GoldenSim

ALIGN = 64


class ScheduleError(ValueError):
    """No tiling of a layer fits the configured buffers or ISA field widths (the message names the layer)."""


def _ceil(a, b):
    return -(-a // b)


def _align(x, a=ALIGN):
    return _ceil(x, a) * a


@dataclass
class Layer:
    """Geometry of one Macro layer (all sizes in pixels / channels)."""
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
    in_t: str
    out_t: str
    act: bool
    zp_out: int
    fold: bool = False
    sides: list = field(default_factory=list)   # extra pooled outputs: dict(out_t, k, s, zp_out, OH, OW)

    @property
    def K_eff(self):
        return 1 if self.fold else self.K

    @property
    def S_eff(self):
        return 1 if self.fold else self.S

    @property
    def IC_eff(self):
        return self.K * self.K * self.IC if self.fold else self.IC

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the layer (0 for copy layers)."""
        return 0 if self.kind != "conv" else self.OHc * self.OWc * self.OC * self.IC * self.K * self.K


@dataclass
class Plan:
    """Chosen tiling: pooled-output rows/cols per tile, output channels per tile, input channels per chunk,
    loop order; plus the predicted cycles and DDR bytes once evaluated."""
    tph: int
    tpw: int
    toc: int
    tic: int
    order: str
    est: float = 0.0
    cycles: int = 0
    ddr_bytes: int = 0

    def describe(self) -> str:
        """Short text: pooled-output tile, channel tiles, loop order."""
        return f"{self.tph}x{self.tpw}px oc{self.toc} ic{self.tic} {self.order}"


def layer_of(g: Graph, n, hw: HwConfig) -> Layer:
    """Extract the geometry of Macro node ``n`` and decide input folding."""
    m, q = n.attrs["macro"], n.attrs["q"]
    ti, to = g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]
    _, IC, H, W = ti.shape
    OC = to.shape[1]
    if m.kind == "conv":
        K, S, pad = m.kernel, m.stride, m.pad
    else:
        K, S, pad = 1, 1, 0
    OHc, OWc = (H + 2 * pad - K) // S + 1, (W + 2 * pad - K) // S + 1
    pool = tuple(m.pool) if m.pool else (1, 1, 0)
    OHp, OWp = (OHc + pool[2] - pool[0]) // pool[1] + 1, (OWc + pool[2] - pool[0]) // pool[1] + 1
    if (OHp * m.upsample, OWp * m.upsample) != tuple(to.shape[2:]):
        raise GraphError(f"layer {n.name}: computed output {OHp * m.upsample}x{OWp * m.upsample} does not match "
                         f"tensor shape {to.shape}")
    L = Layer(n.name, m.kind, K, S, pad, IC, H, W, OC, OHc, OWc, pool, m.upsample, OHp, OWp, n.inputs[0],
              n.outputs[0], bool(q["use_neg"]), q["zp_out"])
    for o, sp, sq in zip(n.outputs[1:], m.side_pools, q.get("side", [])):
        k, s, _ = sp
        L.sides.append(dict(out_t=o, k=k, s=s, zp_out=sq["zp_out"], OH=(OHc - k) // s + 1, OW=(OWc - k) // s + 1))
    if m.kind == "conv" and K > 1 and 2 * IC <= hw.tn and _ceil(K * K * IC, hw.tn) < _ceil(IC, hw.tn) * K * K:
        L.fold = True
    return L


# ---------------------------------------------------------------------------------------------------- DDR
@dataclass
class DdrLayout:
    """Byte layout of the four base-register spaces. ``regions``: name -> dict(base_reg, addr, channels, h, w,
    pad, zp, scale, bytes); ``weights``/``params``: layer -> byte offset in WEIGHTS; ``sizes``: bytes per base."""
    regions: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)


def allocate(g: Graph, layers: list, hw: HwConfig) -> tuple[DdrLayout, bytes]:
    """Allocate regions (NHWC with a zero-point border as wide as the largest padding of a reader) and pack
    weights ([OG][IG][KH][KW][Tm][Tn], zero-padded) and parameter records. Returns (layout, weights blob)."""
    eb = hw.elem_bytes
    pads = {r: 0 for r in g.regions}
    for L in layers:
        pads[g.tensors[L.in_t].region] = max(pads[g.tensors[L.in_t].region], L.pad)
    lay = DdrLayout()
    cursor = {k: 0 for k in isa.BASE_REGS}
    for name, r in g.regions.items():
        p = pads[name]
        nbytes = (r.h + 2 * p) * (r.w + 2 * p) * r.channels * eb
        lay.regions[name] = dict(base_reg=r.base_reg, addr=cursor[r.base_reg], channels=r.channels, h=r.h,
                                 w=r.w, pad=p, zp=int(r.zero_point), scale=float(r.scale), bytes=nbytes)
        r.pad, r.addr = p, cursor[r.base_reg]
        cursor[r.base_reg] = _align(cursor[r.base_reg] + nbytes)
    for t in g.tensors.values():   # byte address (relative to the region's base register) of element (0, 0, 0)
        if t.region is not None and t.region in lay.regions:
            r = lay.regions[t.region]
            t.ddr_addr = r["addr"] + ((r["pad"] * (r["w"] + 2 * r["pad"]) + r["pad"]) * r["channels"]
                                      + t.ch_offset) * eb
    blob = bytearray()
    dt = np.int8 if eb == 1 else np.dtype("<i2")
    for L in layers:
        n = g.node(L.name)
        q = n.attrs["q"]
        if L.kind == "conv":
            w = q["w"]
            if L.fold:   # [OC, IC, K, K] -> [OC, (ky, kx, ic)] as a 1x1 convolution
                w = w.transpose(0, 2, 3, 1).reshape(L.OC, L.IC_eff, 1, 1)
            OG, IG = _ceil(L.OC, hw.tm), _ceil(L.IC_eff, hw.tn)
            wp = np.zeros((OG * hw.tm, IG * hw.tn, L.K_eff, L.K_eff), np.int64)
            wp[:L.OC, :L.IC_eff] = w
            # [OG, Tm, IG, Tn, K, K] -> [OG, IG, K, K, Tm, Tn]
            arr = wp.reshape(OG, hw.tm, IG, hw.tn, L.K_eff, L.K_eff).transpose(0, 2, 4, 5, 1, 3)
            lay.weights[L.name] = len(blob)
            blob += arr.astype(dt).tobytes()
            blob += bytes(_align(len(blob)) - len(blob))
        OGm = _ceil(L.OC, hw.tm) * hw.tm
        lay.params[L.name] = len(blob)
        for p in [q] + list(q.get("side", [])):   # main output, then one record set per extra pooled output
            rec = np.zeros(OGm, np.dtype([(nm, np.dtype(t).newbyteorder("<")) for nm, t, _ in isa.PARAM_RECORD]))
            rec["bias"][:L.OC] = q["bias"]
            rec["mult_pos"][:L.OC] = p["mult_pos"]
            rec["mult_neg"][:L.OC] = p["mult_neg"]
            rec["shift_pos"][:L.OC] = p["shift_pos"]
            rec["shift_neg"][:L.OC] = p["shift_neg"]
            rec["shift_pos"][L.OC:] = 1
            rec["shift_neg"][L.OC:] = 1
            blob += rec.tobytes()
        blob += bytes(_align(len(blob)) - len(blob))
    cursor["WEIGHTS"] = len(blob)
    lay.sizes = {k: max(v, ALIGN) for k, v in cursor.items()}
    return lay, bytes(blob)


class _View:
    """Address arithmetic of a tensor inside its region (NHWC, border ``pad``)."""

    def __init__(self, g: Graph, lay: DdrLayout, t: str, eb: int):
        tt = g.tensors[t]
        r = lay.regions[tt.region]
        self.base_reg = isa.BASE_REGS[r["base_reg"]]
        self.pix = r["channels"] * eb
        self.row = (r["w"] + 2 * r["pad"]) * self.pix
        self.pad, self.c0, self.eb, self.addr = r["pad"], tt.ch_offset, eb, r["addr"]
        self.channels = r["channels"]

    def at(self, y, x, c=0):
        if y < -self.pad or x < -self.pad:
            raise ScheduleError(f"access at ({y}, {x}) outside the {self.pad}-pixel border")
        return self.addr + (y + self.pad) * self.row + (x + self.pad) * self.pix + (self.c0 + c) * self.eb


# ------------------------------------------------------------------------------------------------ tiling
def _tiles(n, t):
    return [(a, min(a + t, n)) for a in range(0, n, t)]


def _acc_span(p0, p1, pool, nconv):
    pk, ps, _ = pool
    return p0 * ps, min((p1 - 1) * ps + pk, nconv)


def _fits(L: Layer, hw: HwConfig, tph, tpw, toc, tic) -> bool:
    r0, r1 = _acc_span(0, min(tph, L.OHp), L.pool, L.OHc)
    c0, c1 = _acc_span(0, min(tpw, L.OWp), L.pool, L.OWc)
    ar, ac = r1 - r0, c1 - c0
    OGt = _ceil(min(toc, L.OC), hw.tm)
    if L.kind == "conv":
        IGc = _ceil(min(tic, L.IC_eff), hw.tn)
        rin, cin = (ar - 1) * L.S_eff + L.K_eff, (ac - 1) * L.S_eff + L.K_eff
        if OGt * IGc * L.K_eff ** 2 > hw.wbuf_words:
            return False
        if OGt * IGc * L.K_eff ** 2 * hw.tn * hw.tm >= 1 << 20:
            return False
    else:
        IGc = max(_ceil(min(toc, L.OC), hw.tn), _ceil(OGt * hw.tm, hw.tn))
        rin, cin = ar, ac
    out_r, out_c = min(tph, L.OHp) * L.up, min(tpw, L.OWp) * L.up
    for sd in L.sides:   # pooled outputs need tiles made of whole pooling windows
        if (tph < L.OHp and tph % sd["s"]) or (tpw < L.OWp and tpw % sd["s"]):
            return False
    return (rin * cin * IGc <= hw.ibuf_words and ar * ac * OGt <= hw.acc_words
            and out_r * out_c * OGt <= hw.obuf_words and _ceil(L.OC, hw.tm) * hw.tm * (1 + len(L.sides)) <= hw.pbuf_entries
            and max(rin, cin, out_r, out_c) < 4096 and OGt < 256 and IGc < 256)


def _smallest_tile_misfit(L: Layer, hw: HwConfig) -> str:
    """Why even the smallest tile (one pooled output pixel, Tm output and Tn input channels) does not fit:
    ``": <buffer> needs N, has M"`` for each buffer that is too small, or "" when it fits."""
    r0, r1 = _acc_span(0, 1, L.pool, L.OHc)
    c0, c1 = _acc_span(0, 1, L.pool, L.OWc)
    ar, ac = r1 - r0, c1 - c0
    ig = _ceil(L.IC_eff, hw.tn) if L.fold else 1
    if L.kind == "conv":
        rin, cin = (ar - 1) * L.S_eff + L.K_eff, (ac - 1) * L.S_eff + L.K_eff
        need = {"WBUF words": (ig * L.K_eff ** 2, hw.wbuf_words)}
    else:
        rin, cin, need = ar, ac, {}
        ig = _ceil(hw.tm, hw.tn)
    need.update({"IBUF words": (rin * cin * ig, hw.ibuf_words), "ACC words": (ar * ac, hw.acc_words),
                 "OBUF words": (L.up * L.up, hw.obuf_words),
                 "PBUF records (all output channels of the layer)":
                     (_ceil(L.OC, hw.tm) * hw.tm * (1 + len(L.sides)), hw.pbuf_entries)})
    bad = [f"{k} needs {n}, has {m}" for k, (n, m) in need.items() if n > m]
    return ": smallest tile: " + "; ".join(bad) if bad else ""


def _estimate(L: Layer, hw: HwConfig, lay_views, plan: Plan) -> float:
    """Analytic latency estimate of a plan (cycles): the busiest module plus pipeline fill and drain."""
    vin, vout = lay_views
    eb = hw.elem_bytes
    n_h, n_w = _ceil(L.OHp, plan.tph), _ceil(L.OWp, plan.tpw)
    n_sp = n_h * n_w
    n_oc = _ceil(L.OC, plan.toc)
    tph, tpw = min(plan.tph, L.OHp), min(plan.tpw, L.OWp)
    r0, r1 = _acc_span(0, tph, L.pool, L.OHc)
    c0, c1 = _acc_span(0, tpw, L.pool, L.OWc)
    ar, ac = r1 - r0, c1 - c0
    OGt = _ceil(min(plan.toc, L.OC), hw.tm)
    KK = L.K_eff ** 2
    if L.kind == "conv":
        n_ic = _ceil(L.IC_eff, plan.tic)
        IGc = _ceil(min(plan.tic, L.IC_eff), hw.tn)
        if L.fold:
            if_cost = L.K * transfer_cycles(hw, ar, ac, L.K * L.IC * eb, L.S * vin.row, L.S * vin.pix,
                                            elems=L.K * L.IC, dst_pitch=IGc)
        else:
            rin, cin = (ar - 1) * L.S + L.K, (ac - 1) * L.S + L.K
            if_cost = transfer_cycles(hw, rin, cin, min(plan.tic, L.IC) * eb, vin.row, vin.pix, dst_pitch=IGc)
        w_cost = transfer_cycles(hw, 1, 1, OGt * IGc * KK * hw.tn * hw.tm * eb, 0, 0, buf=WBUF)
        comp = COMPUTE_FILL + ar * _ceil(ac, hw.pix_lanes) * OGt * IGc * KK
        if hw.pix_lanes == 2 and IGc * KK == 1 and n_ic > 1:   # int8 one-step accumulation: every other cycle
            comp += (comp - COMPUTE_FILL) * (n_ic - 1) // n_ic
    else:
        n_ic, IGc = 1, _ceil(OGt * hw.tm, hw.tn)
        if_cost = transfer_cycles(hw, ar, ac, min(plan.toc, L.OC) * eb, vin.row, vin.pix, dst_pitch=IGc)
        w_cost = 0
        comp = COMPUTE_FILL + ar * ac * OGt   # bypass: one pixel per cycle
    steps = n_sp * n_oc * n_ic
    if plan.order == "sp_oc":
        n_if = n_sp if n_ic == 1 else steps
        n_wl = (n_oc if n_sp == 1 else (1 if n_oc == 1 else n_sp * n_oc)) if n_ic == 1 else steps
    else:
        n_wl = n_oc if n_ic == 1 else steps
        n_if = (n_sp if n_oc == 1 else (1 if n_sp == 1 else n_sp * n_oc)) if n_ic == 1 else steps
    if L.kind != "conv":
        n_wl = 0
        n_if = steps
    out_r, out_c = tph * L.up, tpw * L.up
    st = POST_FILL + out_r * out_c * L.pool[0] ** 2 * OGt + transfer_cycles(
        hw, out_r, out_c, min(plan.toc, L.OC) * eb, vout.row, vout.pix, write=True, src_pitch=OGt)
    for sd in L.sides:
        st += POST_FILL + (out_r // sd["s"]) * (out_c // sd["s"]) * sd["k"] ** 2 * OGt + transfer_cycles(
            hw, out_r // sd["s"], out_c // sd["s"], min(plan.toc, L.OC) * eb, vout.row, vout.pix, write=True,
            src_pitch=OGt)
    n_tiles = n_sp * n_oc
    load_total = n_if * if_cost + n_wl * w_cost
    busiest = max(load_total, steps * comp, n_tiles * st)
    return busiest + if_cost + w_cost + st


def candidates(L: Layer, hw: HwConfig) -> list[Plan]:
    """All plans that fit the buffers (before ranking)."""
    ths = sorted({_ceil(L.OHp, n) for n in range(1, L.OHp + 1)}, reverse=True)
    tws = sorted({_ceil(L.OWp, n) for n in (1, 2, 4, 8, 16)}, reverse=True)
    OG, IG = _ceil(L.OC, hw.tm), _ceil(L.IC_eff, hw.tn)
    tocs = sorted({min(k, OG) * hw.tm for k in (1, 2, 4, 8, 16, 32, OG)})
    tics = sorted({min(k, IG) * hw.tn for k in (1, 2, 4, 8, 16, 32, IG)}) if L.kind == "conv" else [0]
    if L.fold:
        tics = [IG * hw.tn]
    out = []
    for toc in tocs:
        for tic in tics:
            for tpw in tws:
                for tph in ths:
                    if _fits(L, hw, tph, tpw, toc, tic):
                        for order in ("sp_oc", "oc_sp"):
                            out.append(Plan(tph, tpw, toc, tic, order))
                        break   # largest fitting row count for this (toc, tic, tpw)
    return out


# ---------------------------------------------------------------------------------------------- emission
def emit_layer(g: Graph, L: Layer, plan: Plan, hw: HwConfig, lay: DdrLayout) -> list:
    """Instructions of one layer (no barrier): PBUF load, then per step its LOADs and COMPUTE, per output tile
    POST and STORE, with the dependency-token flags for double-buffered overlap (see :mod:`generator.spec.isa`)."""
    eb = hw.elem_bytes
    tn, tm = hw.tn, hw.tm
    vin, vout = _View(g, lay, L.in_t, eb), _View(g, lay, L.out_t, eb)
    if L.kind == "conv" and not L.fold and vin.pad < L.pad:
        raise ScheduleError(f"layer {L.name}: input region border {vin.pad} < padding {L.pad}")
    sp_tiles = [(a, b, c, d) for a, b in _tiles(L.OHp, plan.tph) for c, d in _tiles(L.OWp, plan.tpw)]
    oc_tiles = _tiles(L.OC, plan.toc)
    if plan.order == "sp_oc":
        tiles = [(s, o) for s in sp_tiles for o in oc_tiles]
    else:
        tiles = [(s, o) for o in oc_tiles for s in sp_tiles]
    ic_chunks = _tiles(L.IC_eff, plan.tic) if (L.kind == "conv" and not L.fold) else [(0, L.IC_eff)]
    KK = L.K_eff ** 2
    OG_all, IG_all = _ceil(L.OC, tm), _ceil(L.IC_eff, tn)
    vsides = [_View(g, lay, sd["out_t"], eb) for sd in L.sides]
    out = [isa.make("LOAD", buf=isa.BUFFERS["PBUF"], base_reg=isa.BASE_REGS["WEIGHTS"],
                    ddr_offset=lay.params[L.name], rows=1, cols=1, elems=OG_all * tm * (1 + len(L.sides)),
                    dst_word=0)]
    ibank = [[None, -1], [None, -1]]   # [content key, last reading step]
    wbank = [[None, -1], [None, -1]]
    steps = []   # (first load index or None, compute index, need)
    s = 0

    def pick(banks, key):
        for b in (0, 1):
            if banks[b][0] == key:
                return b, None
        b = 0 if banks[0][1] <= banks[1][1] else 1
        need = banks[b][1]
        banks[b][0] = key
        return b, need

    for t_idx, ((py0, py1, px0, px1), (oc0, oc1)) in enumerate(tiles):
        r0, r1 = _acc_span(py0, py1, L.pool, L.OHc)
        c0, c1 = _acc_span(px0, px1, L.pool, L.OWc)
        ar, ac = r1 - r0, c1 - c0
        og0, og = oc0 // tm, _ceil(oc1 - oc0, tm)
        chunks = ic_chunks if L.kind == "conv" else [(oc0, oc1)]
        for ci, (ic0, ic1) in enumerate(chunks):
            loads, need = [], -1
            if L.kind == "conv":
                igc = _ceil(ic1 - ic0, tn)
            else:
                igc = max(_ceil(ic1 - ic0, tn), _ceil(og * tm, tn))
            ib, nd = pick(ibank, ((py0, px0), (ic0, ic1)))
            if nd is not None:
                need = max(need, nd)
                if L.fold:
                    contiguous = vin.channels == L.IC
                    parts = [(ky, None) for ky in range(L.K)] if contiguous else \
                        [(ky, kx) for ky in range(L.K) for kx in range(L.K)]
                    for ky, kx in parts:
                        y, x = r0 * L.S - L.pad + ky, c0 * L.S - L.pad + (kx or 0)
                        loads.append(isa.make(
                            "LOAD", buf=0, bank=ib, base_reg=vin.base_reg, ddr_offset=vin.at(y, x), rows=ar,
                            cols=ac, elems=L.IC * (L.K if kx is None else 1), row_stride=L.S * vin.row,
                            pix_stride=L.S * vin.pix, dst_word=0,
                            dst_elem=(ky * L.K + (kx or 0)) * L.IC, dst_pitch=igc))
                elif L.kind == "conv":
                    rin, cin = (ar - 1) * L.S + L.K, (ac - 1) * L.S + L.K
                    loads.append(isa.make(
                        "LOAD", buf=0, bank=ib, base_reg=vin.base_reg,
                        ddr_offset=vin.at(r0 * L.S - L.pad, c0 * L.S - L.pad, ic0), rows=rin, cols=cin,
                        elems=ic1 - ic0, row_stride=vin.row, pix_stride=vin.pix, dst_pitch=igc))
                else:
                    loads.append(isa.make(
                        "LOAD", buf=0, bank=ib, base_reg=vin.base_reg, ddr_offset=vin.at(r0, c0, oc0), rows=ar,
                        cols=ac, elems=oc1 - oc0, row_stride=vin.row, pix_stride=vin.pix, dst_pitch=igc))
            wb = 0
            if L.kind == "conv":
                wb, nd = pick(wbank, ((oc0, oc1), (ic0, ic1)))
                if nd is not None:
                    need = max(need, nd)
                    ig0 = ic0 // tn
                    loads.append(isa.make(
                        "LOAD", buf=1, bank=wb, base_reg=isa.BASE_REGS["WEIGHTS"],
                        ddr_offset=lay.weights[L.name] + (og0 * IG_all + ig0) * KK * tn * tm * eb,
                        rows=og, cols=1, elems=igc * KK * tn * tm, row_stride=IG_all * KK * tn * tm * eb,
                        pix_stride=0, dst_pitch=igc * KK))
                wbank[wb][1] = s
            ibank[ib][1] = s
            first = None
            if loads:
                loads[-1].f["push_next"] = 1
                first = len(out)
                out.extend(loads)
            in_cols = ac if (L.fold or L.kind != "conv") else (ac - 1) * L.S + L.K
            comp = isa.make("COMPUTE", acc_bank=t_idx % 2, ibuf_bank=ib, wbuf_bank=wb, acc_init=int(ci == 0),
                            bypass=int(L.kind != "conv"), oh=ar, ow=ac, og=og, ig=igc, kh=L.K_eff, kw=L.K_eff,
                            stride=L.S_eff, in_cols=in_cols,
                            pop_prev=int(bool(loads)), pop_next=int(ci == 0 and t_idx >= 2),
                            push_next=int(ci == len(chunks) - 1))
            steps.append((first, len(out), need))
            out.append(comp)
            s += 1
        out_r, out_c = (py1 - py0) * L.up, (px1 - px0) * L.up
        free_acc = int(t_idx + 2 < len(tiles))
        out.append(isa.make("POST", acc_bank=t_idx % 2, oh=ar, ow=ac, og=og, pbuf_oc=oc0, act=int(L.act),
                            pool_k=L.pool[0], pool_s=L.pool[1], up=L.up, zp_out=L.zp_out, out_rows=out_r,
                            out_cols=out_c, pop_prev=1, push_prev=free_acc if not L.sides else 0))
        out.append(isa.make("STORE", base_reg=vout.base_reg, ddr_offset=vout.at(py0 * L.up, px0 * L.up, oc0),
                            rows=out_r, cols=out_c, elems=oc1 - oc0, row_stride=vout.row, pix_stride=vout.pix,
                            src_pitch=og))
        for j, (sd, vs) in enumerate(zip(L.sides, vsides)):   # same accumulators, pooled, own scale
            sy0, sx0 = r0 // sd["s"], c0 // sd["s"]
            sy1 = sd["OH"] if r1 == L.OHc else r1 // sd["s"]
            sx1 = sd["OW"] if c1 == L.OWc else c1 // sd["s"]
            out.append(isa.make("POST", acc_bank=t_idx % 2, oh=ar, ow=ac, og=og,
                                pbuf_oc=(j + 1) * OG_all * tm + oc0, act=int(L.act), pool_k=sd["k"],
                                pool_s=sd["s"], up=1, zp_out=sd["zp_out"], out_rows=sy1 - sy0, out_cols=sx1 - sx0,
                                push_prev=free_acc if j == len(L.sides) - 1 else 0))
            out.append(isa.make("STORE", base_reg=vs.base_reg, ddr_offset=vs.at(sy0, sx0, oc0), rows=sy1 - sy0,
                                cols=sx1 - sx0, elems=oc1 - oc0, row_stride=vs.row, pix_stride=vs.pix,
                                src_pitch=og))
    covered = -1
    for first, _, need in steps:   # write-after-read tokens: compute step `need` frees the bank a load refills
        if first is not None and need > covered:
            out[first].f["pop_next"] = 1
            out[steps[need][1]].f["push_prev"] = 1
            covered = need
    return out


def config_insn(hw: HwConfig):
    """The CONFIG instruction that starts every program for ``hw`` (ISA version, Tn, Tm, precision, config id)."""
    return isa.make("CONFIG", isa_version=isa.ISA_VERSION, tn=hw.tn, tm=hw.tm,
                    precision=isa.PRECISIONS[f"int{hw.bits}"], config_id=hw.config_id)


def _timing(hw: HwConfig, insns: list) -> tuple[int, int]:
    prog = [config_insn(hw)] + insns + [isa.make("END")]
    res = GoldenSim(hw, np.zeros(1, np.uint8), {k: 0 for k in isa.BASE_REGS}).run_insns(prog, functional=False,
                                                                                    check_end_tokens=False)
    return res.cycles, ddr_bytes(hw, insns)


def ddr_bytes(hw: HwConfig, insns) -> int:
    """Bytes moved between DDR and the accelerator by LOAD/STORE instructions."""
    tot = 0
    for i in insns:
        if i.op == "LOAD":
            tot += i.f["rows"] * i.f["cols"] * i.f["elems"] * (16 if i.f["buf"] == 2 else hw.elem_bytes)
        elif i.op == "STORE":
            tot += i.f["rows"] * i.f["cols"] * i.f["elems"] * hw.elem_bytes
    return tot


def schedule_layer(g: Graph, L: Layer, hw: HwConfig, lay: DdrLayout, top: int = 4) -> Plan:
    """Choose the plan with the fewest predicted cycles. Raises ScheduleError if none fits."""
    cands = candidates(L, hw)
    if not cands:
        raise ScheduleError(
            f"layer {L.name}: no tiling fits the buffers of {hw.board} (IC={L.IC} OC={L.OC} K={L.K} "
            f"{L.H}x{L.W}; IBUF {hw.ibuf_words} words of {hw.tn}, WBUF {hw.wbuf_words} words of "
            f"{hw.tn}x{hw.tm}, ACC {hw.acc_words} words, OBUF {hw.obuf_words} words, PBUF {hw.pbuf_entries} "
            f"records){_smallest_tile_misfit(L, hw)}")
    views = (_View(g, lay, L.in_t, hw.elem_bytes), _View(g, lay, L.out_t, hw.elem_bytes))
    for p in cands:
        p.est = _estimate(L, hw, views, p)
    cands.sort(key=lambda p: p.est)
    best = None
    for p in cands[:top]:
        p.cycles, p.ddr_bytes = _timing(hw, emit_layer(g, L, p, hw, lay))
        if best is None or p.cycles < best.cycles:
            best = p
    return best


@dataclass
class Program:
    """A compiled program: instructions, weights blob, DDR layout, layers with their plans and instruction
    ranges, and the predicted cycles of the whole frame."""
    insns: list
    weights: bytes
    layout: DdrLayout
    layers: list
    plans: list
    ranges: list
    hw: HwConfig
    cycles: int = 0

    @property
    def blob(self) -> bytes:
        """The encoded instruction stream (``len(insns) * INSN_BYTES`` bytes)."""
        return isa.encode_program(self.insns)


def compile_program(g: Graph, hw: HwConfig, progress=None) -> Program:
    """Schedule every layer, allocate DDR and emit the whole instruction stream: CONFIG, per layer its
    instructions followed by a barrier (last STORE -> SYNC -> next layer's first LOAD), END.

    Raises ScheduleError / GraphError for layers that cannot be mapped.
    """
    layers = [layer_of(g, n, hw) for n in g.macro_nodes()]
    lay, wblob = allocate(g, layers, hw)
    insns = [config_insn(hw)]
    plans, ranges = [], []
    for k, L in enumerate(layers):
        plan = schedule_layer(g, L, hw, lay)
        body = emit_layer(g, L, plan, hw, lay)
        if k > 0:
            body[0].f["pop_next"] = 1      # wait for the barrier of the previous layer
        if k < len(layers) - 1:
            body[-1].f["push_prev"] = 1    # last STORE -> SYNC
            body.append(isa.make("SYNC", pop_next=1, push_prev=1))
        ranges.append((len(insns), len(insns) + len(body)))
        insns.extend(body)
        plans.append(plan)
        if progress:
            progress(L, plan)
    insns.append(isa.make("END"))
    check_tokens(insns)
    prog = Program(insns, wblob, lay, layers, plans, ranges, hw)
    return prog


def check_tokens(insns: list) -> dict:
    """Check a program's dependency tokens against the hardware's FIFOs: counted in program order (each
    instruction's pops, then its pushes), no FIFO may hold more than :data:`generator.spec.isa.TOKEN_QUEUE_DEPTH`
    tokens, and the pushes and pops of every FIFO must balance at END (else the hardware reports TOKEN_OVERFLOW /
    TOKENS_LEFT / WATCHDOG). Returns the largest count of each FIFO.
    Raises ScheduleError naming the instruction and the FIFO."""
    from generator.exec.golden import FIFO_OF

    count = {c: 0 for c in ("l2c", "c2l", "c2s", "s2c")}
    peak = dict(count)
    for k, ins in enumerate(insns):
        for flag in ("pop_prev", "pop_next", "push_prev", "push_next"):
            if not ins.f.get(flag):
                continue
            ch = FIFO_OF.get((ins.module, flag))
            if ch is None:
                raise ScheduleError(f"instruction {k}: {ins.op} cannot {flag} (the {ins.module} module has no such "
                                    f"neighbour)")
            if flag.startswith("pop"):        # (may precede its push in program order: the module then waits)
                count[ch] -= 1
            else:
                if count[ch] >= isa.TOKEN_QUEUE_DEPTH:
                    raise ScheduleError(f"instruction {k}: {ins.op} pushes a token onto {ch} holding "
                                        f"{isa.TOKEN_QUEUE_DEPTH} (isa.TOKEN_QUEUE_DEPTH)")
                count[ch] += 1
                peak[ch] = max(peak[ch], count[ch])
        if ins.op == "END":
            break
    left = {c: n for c, n in count.items() if n}
    if left:
        raise ScheduleError(f"pushes minus pops of the token FIFOs at END: {left} (must be 0)")
    return peak

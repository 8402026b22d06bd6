"""DDR allocation: activation regions (NHWC with a zero-point border), the weights blob (weights in the order the
WBUF reads them, parameter records for PBUF), and the address arithmetic of a tensor inside its region.

Terms as in :mod:`generator.codegen.tiling` (og / ig: groups of Tm output / Tn input channels).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.kinds.base import ceil_div
from generator.codegen.tiling import Layer, ScheduleError

#: byte alignment of every region and of every layer's weights / parameter records
ALIGN = 64


def _align(x: int, a: int = ALIGN) -> int:
    return ceil_div(x, a) * a


@dataclass
class DdrLayout:
    """Byte layout of the four base-register spaces. ``regions``: name -> dict(base_reg, addr, channels, h, w,
    pad, zp, scale, bytes, bits); ``weights``/``params``/``tables``: layer -> byte offset in WEIGHTS (tables: layers with an activation table); ``sizes``: bytes per base."""
    regions: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)


def manifest_scale(obj):
    """The manifest's ``scale`` of a quantized Region or Tensor: its float scale, or its per-channel scales as a
    list of floats (:attr:`generator.ir.graph.Tensor.channel_scales`)."""
    if obj.channel_scales is not None:
        return [float(v) for v in obj.channel_scales]
    return float(obj.scale)


def _border_values(g: Graph, layers: list) -> dict:
    """{region: the value its border holds}: the zero point (convolution padding is 0.0), or the smallest
    integer where the readers that pad are max-pool copy layers (ONNX pads a max-pool with -inf). Raises
    ScheduleError when a padded convolution and a padded max-pool read the same region."""
    out = {name: int(r.zero_point) for name, r in g.regions.items()}
    conv_pad, pool_pad = {}, {}
    for L in layers:
        if max(L.pads) > 0:
            (pool_pad if kind_of(L).pad_fill == "min" else conv_pad).setdefault(g.tensors[L.in_tensor].region, L.name)
    for name, layer in pool_pad.items():
        if name in conv_pad:
            raise ScheduleError(f"region {name}: read with padding by convolution {conv_pad[name]} (border = zero "
                                f"point) and by max-pool {layer} (border = -inf); not supported")
        out[name] = -(1 << (g.regions[name].bits - 1))
    return out


def im2col_regions(g: Graph, layers: list, tn: int) -> dict:
    """{region: (layer, padded channels)} of the input regions laid out as im2col (:mod:`host.manifest`): an
    INPUT region whose only reader is a folded first convolution (:attr:`generator.codegen.tiling.Layer.fold`)
    reading all of it. Its pixels become that convolution's K x K x IC patches, padded to a whole number of Tn
    input-channel words (``tn``), so the layer's ifmap is one contiguous run per output pixel."""
    readers = {}
    for L in layers:
        for t in (L.in_tensor, L.in_b):
            if t:
                readers.setdefault(g.tensors[t].region, []).append(L)
    out = {}
    for name, Ls in readers.items():
        L, r = Ls[0], g.regions[name]
        t = g.tensors[L.in_tensor]
        if (len(Ls) == 1 and L.fold and r.base_reg == "INPUT" and t.region == name and t.ch_offset == 0
                and t.shape[1] == r.channels == L.IC and (r.h, r.w) == (L.H, L.W)):
            out[name] = (L, ceil_div(L.mapped_ic, tn) * tn)
    return out


def _place_regions(g: Graph, layers: list, lay: DdrLayout, cursor: dict, tn: int, im2col: bool = True) -> None:
    """Place every region after ``cursor[base_reg]`` (advanced) with a border as wide as the largest padding of a
    reader (an im2col input region, :func:`im2col_regions`, none; ``im2col`` False: no im2col region, as when PRE
    writes the input); set each region's ``pad``/``addr`` and each tensor's ``ddr_addr`` (of element (0, 0, 0))."""
    pads = {r: 0 for r in g.regions}
    for L in layers:
        pads[g.tensors[L.in_tensor].region] = max(pads[g.tensors[L.in_tensor].region], *L.pads)
    fill = _border_values(g, layers)
    cols = im2col_regions(g, layers, tn) if im2col else {}
    for name, r in g.regions.items():
        eb = r.elem_bytes
        p = 0 if name in cols else pads[name]
        h, w, c = (cols[name][0].OHc, cols[name][0].OWc, cols[name][1]) if name in cols else (r.h, r.w, r.channels)
        nbytes = (h + 2 * p) * (w + 2 * p) * c * eb
        lay.regions[name] = dict(base_reg=r.base_reg, addr=cursor[r.base_reg], channels=c, h=h, w=w, pad=p,
                                 zp=fill[name], scale=manifest_scale(r), bytes=nbytes, bits=r.bits)
        if name in cols:
            L = cols[name][0]
            lay.regions[name]["im2col"] = dict(k=L.K, s=L.S, pads=list(L.pads), h=r.h, w=r.w, c=r.channels)
        r.pad, r.addr = p, cursor[r.base_reg]
        cursor[r.base_reg] = _align(cursor[r.base_reg] + nbytes)
    for t in g.tensors.values():   # byte address (relative to the region's base register) of element (0, 0, 0)
        if t.region is not None and t.region in lay.regions:
            r = lay.regions[t.region]
            t.ddr_addr = r["addr"] + ((r["pad"] * (r["w"] + 2 * r["pad"]) + r["pad"]) * r["channels"]
                                      + t.ch_offset) * (r["bits"] // 8)


def _weight_bytes(L: Layer, w: np.ndarray, hw: HwConfig, dt) -> bytes:
    """Weights [OC, IC, K, K] zero-padded and reordered to [og][ig][KH][KW][Tm][Tn] (folded: a 1x1 convolution
    over (ky, kx, ic))."""
    if L.fold:   # [OC, IC, K, K] -> [OC, (ky, kx, ic)] as a 1x1 convolution
        w = w.transpose(0, 2, 3, 1).reshape(L.OC, L.mapped_ic, 1, 1)
    n_og, n_ig, k = ceil_div(L.OC, hw.tm), ceil_div(L.mapped_ic, hw.tn), L.mapped_k
    wp = np.zeros((n_og * hw.tm, n_ig * hw.tn, k, k), np.int64)
    wp[:L.OC, :L.mapped_ic] = w
    # [og, Tm, ig, Tn, K, K] -> [og, ig, K, K, Tm, Tn]
    arr = wp.reshape(n_og, hw.tm, n_ig, hw.tn, k, k).transpose(0, 2, 4, 5, 1, 3)
    return arr.astype(dt).tobytes()


def _param_records(L: Layer, q: dict, hw: HwConfig) -> bytes:
    """One PBUF record (:data:`generator.spec.isa.PARAM_RECORD`) per output channel, padded to whole Tm groups,
    for the main output and then for each extra pooled output; group o's records at o * lane_pitch(Tm) (padding
    records after each group when Tm is not a power of two; multiplier 0, a pre-shift that keeps any acc_bits
    accumulator within the requantization operand)."""
    n_og, pitch = ceil_div(L.OC, hw.tm), hw.tm_pitch
    pos = (np.arange(L.OC) // hw.tm) * pitch + np.arange(L.OC) % hw.tm   # record index of each channel
    out = b""
    for p in [q] + list(q.get("side", [])):
        rec = np.zeros(n_og * pitch, np.dtype([(nm, np.dtype(t).newbyteorder("<")) for nm, t, _ in isa.PARAM_RECORD]))
        rec["shift_pos"] = 1
        rec["shift_neg"] = 1
        # padding lanes (channels >= OC) may hold any accumulator (an emul or copy layer's lanes read other
        # channels): their pre-shift brings every acc_bits value within the requantization operand
        rec["pre_shift"] = max(0, hw.at(L.bits_in).acc_bits + 1 - isa.REQUANT_OPERAND_BITS)
        rec["bias"][pos] = q["bias"]
        for mk, sk in (("mult_pos", "shift_pos"), ("mult_neg", "shift_neg")):
            rec[mk][pos], rec[sk][pos] = isa.record_multiplier(p[mk], p[sk], q["pre_shift"])
        rec["pre_shift"][pos] = q["pre_shift"]
        out += rec.tobytes()
    return out


def table_records(table: np.ndarray, tm: int) -> bytes:
    """An activation table (int [TABLE_ENTRIES, 2]: base, delta) as TBUF records in DDR: 16-byte records of four
    (base, delta) int16 pairs, each record repeated lane_pitch(``tm``) times so that LOAD's lane interleave (record
    e to lane e % P, row e // P) gives every POST lane the whole table (:data:`generator.spec.isa.TABLE_ENTRIES`)."""
    recs = np.asarray(table, np.int64).astype("<i2").reshape(isa.TBUF_ROWS, 2 * isa.TABLE_PER_RECORD)
    return np.repeat(recs, isa.lane_pitch(tm), axis=0).tobytes()


def allocate(g: Graph, layers: list, hw: HwConfig, im2col: bool = True) -> tuple[DdrLayout, bytes]:
    """Allocate regions (NHWC with a zero-point border as wide as the largest padding of a reader; ``im2col``: an
    input region read only by a folded first convolution as its patches, :func:`im2col_regions`) and pack
    weights ([og][ig][KH][KW][Tm][Tn], zero-padded) and parameter records, each layer's aligned to
    :data:`ALIGN` bytes; each region's elements and each layer's weights at their own precision (a region's
    ``bits``, a layer's input precision). Returns (layout, weights blob)."""
    lay = DdrLayout()
    cursor = {k: 0 for k in isa.BASE_REGS}
    _place_regions(g, layers, lay, cursor, hw.tn, im2col)
    blob = bytearray()
    for L in layers:
        dt = np.int8 if L.bits_in == 8 else np.dtype("<i2")
        q = g.node(L.name).attrs["q"]
        if kind_of(L).has_weights:
            lay.weights[L.name] = len(blob)
            blob += _weight_bytes(L, q["w"], hw, dt)
            blob += bytes(_align(len(blob)) - len(blob))
        lay.params[L.name] = len(blob)
        blob += _param_records(L, q, hw)
        blob += bytes(_align(len(blob)) - len(blob))
        if q.get("table") is not None:
            lay.tables[L.name] = len(blob)
            blob += table_records(q["table"], hw.tm)
            blob += bytes(_align(len(blob)) - len(blob))
    cursor["WEIGHTS"] = len(blob)
    lay.sizes = {k: max(v, ALIGN) for k, v in cursor.items()}
    return lay, bytes(blob)


class TensorView:
    """Address arithmetic of tensor ``t`` inside its region (NHWC, border ``pad``): ``base_reg`` (index),
    ``pix`` / ``row``: bytes per pixel / per bordered row, ``channels`` of the region, ``c0``: the tensor's first
    channel in it, ``eb``: bytes per element."""

    def __init__(self, g: Graph, lay: DdrLayout, t: str, eb: int):
        tt = g.tensors[t]
        r = lay.regions[tt.region]
        self.base_reg = isa.BASE_REGS[r["base_reg"]]
        self.pix = r["channels"] * eb
        self.row = (r["w"] + 2 * r["pad"]) * self.pix
        self.pad, self.c0, self.eb, self.addr = r["pad"], tt.ch_offset, eb, r["addr"]
        self.channels = r["channels"]
        self.im2col = r.get("im2col")   # an im2col input region (host.manifest): its pixels are patches

    def at(self, y: int, x: int, c: int = 0) -> int:
        """Byte offset (from the base register) of element (y, x, c); y, x may reach into the border.
        Raises ScheduleError beyond it."""
        if y < -self.pad or x < -self.pad:
            raise ScheduleError(f"access at ({y}, {x}) outside the {self.pad}-pixel border")
        return self.addr + (y + self.pad) * self.row + (x + self.pad) * self.pix + (self.c0 + c) * self.eb

"""The copy layer kind ("copy"): no weights, the ifmap passes the PE array unchanged (a COMPUTE bypass, one pixel
per cycle) into POST: a stand-alone max-pool, activation or upsample, or a copy between regions.

Its accumulator is the raw input A, so the bias is ``-zp_in`` (the zero point enters once) and the real multiplier
``s_in / s_out`` (the weight's part is 1.0); a max-pool's padding (``MacroAttrs.pads``) is -inf, read from its
input region's border, which then holds the smallest integer. A step moves the tile's output channels (no
input-channel loop): ``max(ceil(C / Tn), ceil(og * Tm / Tn))`` IBUF words per pixel and operand. Terms as in
:mod:`generator.codegen.tiling`.
"""
from __future__ import annotations

import numpy as np

from generator.kinds.base import LayerKind, ceil_div
from generator.spec import isa
from generator.spec.timing import transfer_cycles


class Copy(LayerKind):
    """The COMPUTE bypass (module docstring); :class:`generator.kinds.emul.Emul` extends it with a second operand."""
    name = "copy"
    has_weights = False
    operands = 1
    pad_fill = "min"

    def float_core(self, m, x, xb=None, w=None, b=None, conv=None):
        return x

    def int_acc(self, m, x, xb=None, w=None, zp_in=0, zp_b=0, conv=None):
        return x.astype(np.int64)

    def pool_pads(self, m):
        return m.pads

    def factor_scale_max(self, g, n, wmax, scale_of):
        return 1.0

    def zp_terms(self, W, oc):
        return np.ones(oc, np.int64)

    def acc_bound(self, W, B, amax, zp_in, zp_b, oc):
        return np.full(oc, amax + abs(zp_in))

    def window(self, m):
        return 1, 1

    def can_fold(self, L, hw):
        return False

    def macs(self, L):
        return 0

    def weight_elements(self, L):
        return 0

    def ic_tile_options(self, L, hw):
        return [0]

    def step_channels(self, L, tile_ic, tile_oc):
        return min(tile_oc, L.OC)

    def ic_chunks(self, L, tile_ic, oc):
        return [tuple(oc)]

    def step_words(self, L, hw, channels, tile_og):
        half = max(ceil_div(channels, hw.tn), ceil_div(tile_og * hw.tm, hw.tn))
        return self.operands * half, (self.operands - 1) * half

    def ifmap_loads(self, L, views, bank, acc, ic, words, prec, tn):
        """The acc tile itself (shifted by the layer's padding)."""
        vin, (r0, r1, c0, c1), (ic0, ic1) = views[0], acc, ic
        return [isa.make("LOAD", buf=0, prec=prec, bank=bank, base_reg=vin.base_reg,
                         ddr_offset=vin.at(r0 - L.pad, c0 - L.pad_left, ic0), rows=r1 - r0, cols=c1 - c0,
                         elems=ic1 - ic0, row_stride=vin.row, pix_stride=vin.pix, dst_pitch=words[0])]

    def compute_flags(self):
        return dict(bypass=1, emul=0)

    def operand_strides(self, L, vin) -> list[tuple[int, int]]:
        """(row, pixel) byte strides the latency model gives each operand's LOAD."""
        return [(vin.row, vin.pix)]

    def step_costs(self, L, hw, vin, plan, acc_rows, acc_cols, tile_og):
        run = min(plan.tile_oc, L.OC) * hw.elem_bytes
        chunk_ig = self.step_words(L, hw, min(plan.tile_oc, L.OC), tile_og)[0]
        ifmap = sum(transfer_cycles(hw, acc_rows, acc_cols, run, row, pix, dst_pitch=chunk_ig)
                    for row, pix in self.operand_strides(L, vin))
        # one pixel per cycle and operand (an emul layer: operand A's lanes, then B's)
        return 1, ifmap, 0, hw.compute_fill + self.operands * acc_rows * acc_cols * tile_og

    def step_bytes(self, L, hw, plan, acc_rows, acc_cols, tile_og, im2col_pix):
        return self.operands * acc_rows * acc_cols * min(plan.tile_oc, L.OC) * hw.elem_bytes, 0

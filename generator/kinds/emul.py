"""The element-wise product layer kind ("emul"): ``a * b`` of its two inputs, ``b`` of a's shape or [1, C, 1, 1]
broadcast over the pixels (SAM, squeeze-and-excitation gates), run as a copy (:class:`generator.kinds.copy.Copy`)
whose COMPUTE multiplies the two operands (its ``emul`` multipliers), then requantization.

Its accumulator is ``(A - za) (B - zb)``: the zero points are subtracted in COMPUTE, so the bias is 0, and the
second factor's scale plays the weight's part (real multiplier ``s_a s_b / s_out``). Each step's IBUF pixel holds
operand A's words, then B's from word ``b_word``; B is read by its own LOAD (a broadcast B with zero strides, the
same C elements for every pixel) and COMPUTE takes two cycles per output word.
"""
from __future__ import annotations

import numpy as np

from generator.kinds.copy import Copy
from generator.spec import isa


class Emul(Copy):
    """The element-wise product (module docstring)."""
    name = "emul"
    operands = 2
    pad_fill = None

    def float_core(self, m, x, xb=None, w=None, b=None, conv=None):
        return x * xb

    def int_acc(self, m, x, xb=None, w=None, zp_in=0, zp_b=0, conv=None):
        return (x.astype(np.int64) - zp_in) * (xb.astype(np.int64) - zp_b)

    def pool_pads(self, m):
        return None

    def factor_scale_max(self, g, n, wmax, scale_of):
        return scale_of(n.inputs[1])

    def zp_terms(self, W, oc):
        return np.zeros(oc, np.int64)

    def acc_bound(self, W, B, amax, zp_in, zp_b, oc):
        return np.full(oc, (amax + abs(zp_in)) * (amax + abs(zp_b)))

    def weight_elements(self, L):
        return L.IC * (1 if L.b_broadcast else L.H * L.W)   # the second factor, read once

    def ifmap_loads(self, L, views, bank, acc, ic, words, prec, tn):
        """Operand A as a copy's, then the second factor at word ``b_word`` of each pixel (broadcast: the same C
        elements, zero strides)."""
        loads = super().ifmap_loads(L, views, bank, acc, ic, words, prec, tn)
        vb, (r0, r1, c0, c1), (ic0, ic1), (chunk_ig, b_word) = views[1], acc, ic, words
        at, row, pix = (vb.at(0, 0, ic0), 0, 0) if L.b_broadcast else (vb.at(r0, c0, ic0), vb.row, vb.pix)
        loads.append(isa.make("LOAD", buf=0, prec=prec, bank=bank, base_reg=vb.base_reg, ddr_offset=at, rows=r1 - r0,
                              cols=c1 - c0, elems=ic1 - ic0, row_stride=row, pix_stride=pix,
                              dst_elem=b_word * tn, dst_pitch=chunk_ig))
        return loads

    def compute_flags(self):
        return dict(bypass=1, emul=1)

    def operand_strides(self, L, vin):
        """Operand A's, then B's (broadcast: zero strides; else the latency model takes A's strides)."""
        return [(vin.row, vin.pix), (0, 0) if L.b_broadcast else (vin.row, vin.pix)]

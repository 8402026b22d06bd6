"""The convolution layer kind ("conv"): a 2-D convolution (cross-correlation, as ONNX Conv, group 1) with its
weights [OC, IC, KH, KW] and bias on the PE array, then POST (bias, requantization, activation, pool, upsample).

Its accumulator is ``sum W * A`` over the window of the raw input A (padding: the input zero point), so the bias
folds ``-zp_in * sum(W)`` (Jacob et al., CVPR 2018). Its tiling cuts the input channels into chunks of ``tile_ic``
(weights: one WBUF block of Tn x Tm per tap, input group and output group); a first layer with few input
channels is folded (KH x KW x IC becomes the input channels of a 1x1 convolution, gathered by strided LOADs, or one
run per pixel from an im2col input). Terms as in :mod:`generator.codegen.tiling`.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from generator.kinds.base import LayerKind, ceil_div, tile_ranges
from generator.spec import isa
from generator.spec.timing import WBUF, transfer_cycles


def conv2d(x: np.ndarray, w: np.ndarray, stride: int, pad, pad_value=0.0) -> np.ndarray:
    """Direct 2-D convolution (cross-correlation, as ONNX Conv, group 1) of one image.

    Args:
        x: ifmap [IC, H, W]; w: weights [OC, IC, KH, KW]; stride in pixels; pad: pixels on every side, or
        (top, left, bottom, right); pad_value: value of the border (the zero point for quantized ifmaps).
    Returns: ofmap [OC, OH, OW], OH = (H + top + bottom - KH)//stride + 1, dtype of ``np.result_type(x, w)``.
        Integer operands in float64 are exact: every product and partial sum of int8/int16 operands over at most
        2^20 terms stays below 2^53. Float32 operands are multiplied and summed in float64 and the sums rounded
        to float32 once (:func:`float32_matmul`), so the result does not depend on the BLAS kernel the CPU selects.
    Raises: ValueError when x's channels are not w's input channels.
    """
    oc, ic, kh, kw = w.shape
    if x.shape[0] != ic:
        raise ValueError(f"conv2d: ifmap has {x.shape[0]} channels, weights expect {ic}")
    pt, pl, pb, pr = (pad,) * 4 if np.isscalar(pad) else pad
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr)), constant_values=pad_value) if any((pt, pl, pb, pr)) else x
    oh = (xp.shape[1] - kh) // stride + 1
    ow = (xp.shape[2] - kw) // stride + 1
    win = sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::stride, ::stride][:, :oh, :ow]
    # [IC, OH, OW, KH, KW] x [OC, IC, KH, KW] -> [OC, OH, OW]
    cols = np.ascontiguousarray(win.transpose(0, 3, 4, 1, 2)).reshape(ic * kh * kw, oh * ow)
    if x.dtype == np.float32 and w.dtype == np.float32:
        return float32_matmul(w.reshape(oc, -1), cols).reshape(oc, oh, ow)
    return (w.reshape(oc, -1) @ cols).reshape(oc, oh, ow)


def float32_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` of float32 matrices [M, K] x [K, N] -> float32 [M, N] (or stacks of them, as numpy's ``@``),
    with the products and sums in float64 and one rounding to float32 at the end.

    A float32 matrix product's value depends on the order of its sums, which the BLAS library chooses per CPU
    (OpenBLAS's DYNAMIC_ARCH kernels: AVX2 and AVX-512 machines sum differently, about 1e-7 apart); calibration
    ranges, bias correction and so every quantization parameter would then depend on the machine that compiled
    the model. In float64 the orders differ by about 1e-16 relative, below float32's rounding step, so the float32
    result is the same on every machine (tests/exec/test_float_fast.py runs it under the SSE3, AVX2 and, where the
    CPU has it, AVX-512 kernels)."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def _int_conv(x, w, stride, pads, pad_value):
    """Exact integer convolution: :func:`conv2d` in float64, int64 [OC, OH, OW]."""
    return conv2d(x.astype(np.float64), w.astype(np.float64), stride, pads, pad_value=float(pad_value)).astype(np.int64)


class Conv(LayerKind):
    """Convolution + bias on the PE array (module docstring)."""
    name = "conv"
    has_weights = True
    operands = 1
    pad_fill = "zero_point"

    def float_core(self, m, x, xb=None, w=None, b=None, conv=None):
        y = (conv or conv2d)(x, w, m.stride, m.four_pads())
        b = np.asarray(b).reshape(-1)[:, None, None]
        if y.dtype == np.float32 and b.dtype == np.float32:
            y += b          # (y is the convolution's own new array)
            return y
        return y + b

    def int_acc(self, m, x, xb=None, w=None, zp_in=0, zp_b=0, conv=None):
        return (conv or _int_conv)(x, w, m.stride, m.four_pads(), zp_in)

    def pool_pads(self, m):
        return None

    def factor_scale_max(self, g, n, wmax, scale_of):
        return float(np.abs(g.const(n.attrs["macro"].weight)).max()) / wmax

    def zp_terms(self, W, oc):
        return W.reshape(oc, -1).sum(axis=1)

    def acc_bound(self, W, B, amax, zp_in, zp_b, oc):
        return np.abs(W).reshape(oc, -1).sum(axis=1) * amax + np.abs(B)

    def window(self, m):
        return m.kernel, m.stride

    def can_fold(self, L, hw):
        k2 = L.K * L.K
        return L.K > 1 and 2 * L.IC <= hw.tn and ceil_div(k2 * L.IC, hw.tn) < ceil_div(L.IC, hw.tn) * k2

    def macs(self, L):
        return L.OHc * L.OWc * L.OC * L.IC * L.K * L.K

    def weight_elements(self, L):
        return L.OC * L.IC * L.K * L.K

    def ic_tile_options(self, L, hw):
        n_ig = ceil_div(L.mapped_ic, hw.tn)
        if L.fold:
            return [n_ig * hw.tn]
        return sorted({min(k, n_ig) * hw.tn for k in (1, 2, 4, 8, 16, 32, n_ig)})

    def step_channels(self, L, tile_ic, tile_oc):
        return L.mapped_ic if L.fold else min(tile_ic, L.mapped_ic)

    def ic_chunks(self, L, tile_ic, oc):
        return [(0, L.mapped_ic)] if L.fold else tile_ranges(L.mapped_ic, tile_ic)

    def step_words(self, L, hw, channels, tile_og):
        return ceil_div(channels, hw.tn), 0

    def ifmap_loads(self, L, views, bank, acc, ic, words, prec, tn):
        """KH (or KH x KW) strided gathers when folded (one run per output pixel when the input is im2col: its
        pixels are the patches), else the input window of the acc tile."""
        vin, (r0, r1, c0, c1), (ic0, ic1), chunk_ig = views[0], acc, ic, words[0]
        acc_rows, acc_cols = r1 - r0, c1 - c0
        if L.fold and vin.im2col:
            return [isa.make("LOAD", buf=0, prec=prec, bank=bank, base_reg=vin.base_reg, ddr_offset=vin.at(r0, c0),
                             rows=acc_rows, cols=acc_cols, elems=vin.channels, row_stride=vin.row, pix_stride=vin.pix,
                             dst_word=0, dst_elem=0, dst_pitch=chunk_ig)]
        if L.fold:
            contiguous = vin.channels == L.IC
            parts = [(ky, None) for ky in range(L.K)] if contiguous else \
                [(ky, kx) for ky in range(L.K) for kx in range(L.K)]
            loads = []
            for ky, kx in parts:
                y, x = r0 * L.S - L.pad + ky, c0 * L.S - L.pad_left + (kx or 0)
                loads.append(isa.make(
                    "LOAD", buf=0, prec=prec, bank=bank, base_reg=vin.base_reg, ddr_offset=vin.at(y, x), rows=acc_rows,
                    cols=acc_cols, elems=L.IC * (L.K if kx is None else 1), row_stride=L.S * vin.row,
                    pix_stride=L.S * vin.pix, dst_word=0, dst_elem=(ky * L.K + (kx or 0)) * L.IC,
                    dst_pitch=chunk_ig))
            return loads
        in_rows, in_cols = (acc_rows - 1) * L.S + L.K, (acc_cols - 1) * L.S + L.K
        return [isa.make("LOAD", buf=0, prec=prec, bank=bank, base_reg=vin.base_reg,
                         ddr_offset=vin.at(r0 * L.S - L.pad, c0 * L.S - L.pad_left, ic0), rows=in_rows, cols=in_cols,
                         elems=ic1 - ic0, row_stride=vin.row, pix_stride=vin.pix, dst_pitch=chunk_ig)]

    def compute_flags(self):
        return dict(bypass=0, emul=0)

    def step_costs(self, L, hw, vin, plan, acc_rows, acc_cols, tile_og):
        eb, taps = hw.elem_bytes, L.mapped_k ** 2
        n_ic = ceil_div(L.mapped_ic, plan.tile_ic)
        chunk_ig = ceil_div(min(plan.tile_ic, L.mapped_ic), hw.tn)
        if L.fold and vin.im2col:
            ifmap = transfer_cycles(hw, acc_rows, acc_cols, vin.pix, vin.row, vin.pix, elems=vin.channels,
                                    dst_pitch=chunk_ig)
        elif L.fold:
            ifmap = L.K * transfer_cycles(hw, acc_rows, acc_cols, L.K * L.IC * eb, L.S * vin.row, L.S * vin.pix,
                                          elems=L.K * L.IC, dst_pitch=chunk_ig)
        else:
            in_rows, in_cols = (acc_rows - 1) * L.S + L.K, (acc_cols - 1) * L.S + L.K
            ifmap = transfer_cycles(hw, in_rows, in_cols, min(plan.tile_ic, L.IC) * eb, vin.row, vin.pix,
                                    dst_pitch=chunk_ig)
        weights = transfer_cycles(hw, 1, 1, tile_og * chunk_ig * taps * hw.tn * hw.tm * eb, 0, 0, buf=WBUF)
        compute = hw.compute_fill + acc_rows * ceil_div(acc_cols, hw.pix_lanes) * tile_og * chunk_ig * taps
        if hw.bits == 8 and chunk_ig * taps == 1 and n_ic > 1:   # int8 one-step accumulation: every other cycle
            compute += (compute - hw.compute_fill) * (n_ic - 1) // n_ic
        return n_ic, ifmap, weights, compute

    def step_bytes(self, L, hw, plan, acc_rows, acc_cols, tile_og, im2col_pix):
        eb = hw.elem_bytes
        chunk_ig = ceil_div(min(plan.tile_ic, L.mapped_ic), hw.tn)
        if L.fold and im2col_pix:
            ifmap = acc_rows * acc_cols * im2col_pix
        elif L.fold:
            ifmap = L.K * acc_rows * acc_cols * L.K * L.IC * eb
        else:
            ifmap = ((acc_rows - 1) * L.S + L.K) * ((acc_cols - 1) * L.S + L.K) * min(plan.tile_ic, L.IC) * eb
        return ifmap, tile_og * chunk_ig * L.mapped_k ** 2 * hw.tn * hw.tm * eb

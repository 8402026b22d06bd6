"""Reference tensor kernels of POST shared by the float executor, the layer-level integer reference and the
fake-quantized simulation: max-pool, nearest upsampling, requantization and the activation table (a layer kind's
own arithmetic, e.g. the convolution :func:`generator.kinds.conv.conv2d`, is in :mod:`generator.kinds`).

All functions take single images (no batch): ``x`` is ``[C, H, W]``.
"""
from __future__ import annotations

import numpy as np

from generator.spec.isa import TABLE_FRAC_BITS


def maxpool2d(x: np.ndarray, k: int, s: int, pad_end: int = 0, pads: tuple | None = None) -> np.ndarray:
    """Max-pool [C, H, W] with a k x k window, stride s, ``pad_end`` rows/cols of -inf at the bottom/right
    (darknet's maxpool with padding = size - 1 and offset 0; ONNX MaxPool pads [0, 0, pad_end, pad_end]), or
    ``pads`` (top, left, bottom, right) of -inf, each below k. Output [C, (H + top + bottom - k)//s + 1,
    (W + left + right - k)//s + 1]."""
    c, h, w = x.shape
    pt, pl, pb, pr = pads if pads is not None else (0, 0, pad_end, pad_end)
    oh = (h + pt + pb - k) // s + 1
    ow = (w + pl + pr - k) // s + 1
    out = None
    for dy in range(k):
        for dx in range(k):
            # padded cells repeat the nearest edge cell of the same window: the max is unchanged
            ys = np.clip(np.arange(oh) * s + dy - pt, 0, h - 1)
            xs = np.clip(np.arange(ow) * s + dx - pl, 0, w - 1)
            v = x[:, ys][:, :, xs]
            out = v if out is None else np.maximum(out, v)
    return out


def upsample_nearest(x: np.ndarray, f: int) -> np.ndarray:
    """Nearest-neighbour upsample [C, H, W] -> [C, H*f, W*f] (out[y, x] = in[y//f, x//f])."""
    return x.repeat(f, axis=1).repeat(f, axis=2) if f > 1 else x


def requantize(acc: np.ndarray, mult_pos, shift_pos, mult_neg, shift_neg, use_neg: bool, zp: int,
               qmin: int, qmax: int, pre_shift=0, clamp: bool = True) -> np.ndarray:
    """Integer requantization with round-half-up and saturation (gemmlowp-style fixed point, Jacob et al.,
    "Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference", CVPR 2018).

    ``v = acc >> pre_shift`` (arithmetic), ``q = clamp(((v*M + 2^(s-1)) >> s) + zp, qmin, qmax)`` with (M, s) =
    (mult_neg, shift_neg) where ``use_neg`` and v < 0, else (mult_pos, shift_pos). acc: int64 array [C, ...]
    (accumulator plus bias); M, s, pre_shift: per-channel int arrays [C] (broadcast over the remaining axes) or
    scalars. Returns int64; ``clamp=False``: the value before the clamp, ``p`` of :func:`table_activate`. (The POST
    instruction, :data:`generator.spec.isa.FORMATS`; the range of v is the caller's to check.)
    """
    acc = acc.astype(np.int64)
    shp = (-1,) + (1,) * (acc.ndim - 1)
    acc = acc >> np.broadcast_to(np.asarray(pre_shift, np.int64), acc.shape[:1]).reshape(shp)
    mp, sp = np.asarray(mult_pos, np.int64).reshape(shp), np.asarray(shift_pos, np.int64).reshape(shp)
    mn, sn = np.asarray(mult_neg, np.int64).reshape(shp), np.asarray(shift_neg, np.int64).reshape(shp)
    if use_neg:
        neg = acc < 0
        m, s = np.where(neg, mn, mp), np.where(neg, sn, sp)
    else:
        m, s = mp, sp
    v = (acc * m + (np.int64(1) << (s - 1))) >> s
    return np.clip(v + zp, qmin, qmax) if clamp else v + zp


def table_activate(p: np.ndarray, table: np.ndarray, qmin: int, qmax: int, identity=None) -> np.ndarray:
    """POST's table activation of unclamped requantized values ``p`` (int64, any shape; :func:`requantize` with
    ``clamp=False``): :func:`apply_table` on ``clamp(p)``; with ``identity`` = (id_shift, zp_t, zp_id) (POST
    ``id_above``, :data:`generator.spec.isa.ID_SHIFT_MAX`) a value above qmax, beyond the table's window, maps to
    ``clamp(((p - zp_t + r) >> id_shift) + zp_id)``, r = 2^(id_shift-1) (0 for id_shift 0). Returns int64."""
    p = np.asarray(p, np.int64)
    q = apply_table(np.clip(p, qmin, qmax), table, qmin, qmax)
    if identity is None:
        return q
    k, zp_t, zp_id = (int(v) for v in identity)
    r = (1 << (k - 1)) if k > 0 else 0
    return np.where(p > qmax, np.clip(((p - zp_t + r) >> k) + zp_id, qmin, qmax), q)


def apply_table(q: np.ndarray, table: np.ndarray, qmin: int, qmax: int) -> np.ndarray:
    """POST's activation table (:data:`generator.spec.isa.TABLE_ENTRIES`) on requantized values q (int64, any
    shape, in [qmin, qmax]): u = q - qmin, entry i = u >> (bits - 8), f = the low bits;
    ``clamp(base[i] + ((delta[i] * f + 128) >> 8))``. table: int [256, 2] (base, delta). Returns int64."""
    fb = (qmax - qmin + 1).bit_length() - 1 - (len(table) - 1).bit_length()
    u = np.asarray(q, np.int64) - qmin
    i, f = u >> fb, u & ((1 << fb) - 1)
    t = np.asarray(table, np.int64)
    return np.clip(t[i, 0] + ((t[i, 1] * f + (1 << (TABLE_FRAC_BITS - 1))) >> TABLE_FRAC_BITS), qmin, qmax)

"""Empirical per-channel bias correction of a quantized graph.

Quantizing the weights (rounding) and the activations (rounding, clipping to the calibrated range) shifts the
mean of every output channel of a convolution; the shift is the same on every image to first order, so it can be
measured on the calibration images and subtracted from the bias (Nagel et al., "Data-Free Quantization Through
Weight Equalization and Bias Correction", ICCV 2019, sec. 4.2, empirical variant; Banner et al., NeurIPS 2019).
For a convolution with float weights W [OC, IC, KH, KW], bias b and float input x, and its quantized form
(dequantized weights Wq s_w, dequantized bias, input deq(q(x)) with the input region's scale and zero point):

    delta[c] = sum_ic (sum_kh,kw Wq s_w)[c, ic] E[deq(q(x))_ic] - (sum_kh,kw W)[c, ic] E[x_ic] + (b_q - b)[c]

with E the mean over the pixels of the calibration images (the image border's zero padding is neglected), and the
integer bias becomes ``B - round(delta / (s_in s_w))``. The accumulator-width check of
:func:`generator.quant.quantize.quantize` is made again with the corrected bias.
"""
from __future__ import annotations

import numpy as np

from generator.ref.float_ref import run_float
from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.quant.quantize import QuantError, set_pre_shift


def channel_means(fg: Graph, qg: Graph, images) -> dict:
    """Per Macro node with weights (a convolution): (E[x] float64 [IC], E[deq(q(x))] float64 [IC]) of its input over ``images`` (float32
    [1, C, H, W] each), x from the float graph ``fg``, quantized with the input scale / zero point of ``qg``."""
    sums: dict = {}
    convs = {n.name: n for n in qg.macro_nodes() if kind_of(n.attrs["macro"]).has_weights}
    for x in images:
        taps: dict = {}
        run_float(fg, {fg.inputs[0]: x}, taps=taps)
        for name, n in convs.items():
            t = qg.tensors[n.inputs[0]]
            b = int(t.dtype[3:])        # the input's precision (a layer's q["qmin"] / q["qmax"] are its output's)
            v = taps[name].astype(np.float64)
            dq = v / t.scale            # deq(q(v)) = (clip(round(v / s) + zp, qmin, qmax) - zp) * s, in place
            np.round(dq, out=dq)
            dq += t.zero_point
            np.clip(dq, -(1 << (b - 1)), (1 << (b - 1)) - 1, out=dq)
            dq -= t.zero_point
            dq *= t.scale
            a, b = sums.get(name, (0.0, 0.0))
            sums[name] = (a + v.mean(axis=(1, 2)), b + dq.mean(axis=(1, 2)))
    k = max(len(images), 1)
    return {name: (a / k, b / k) for name, (a, b) in sums.items()}


def correct_bias(qg: Graph, fg: Graph, images, acc_bits) -> Graph:
    """The quantized graph ``qg`` (a copy) with every convolution's integer bias corrected for the mean shift that
    quantization puts on its output channels (module docstring), measured on ``images`` through the float graph
    ``fg`` (the graph ``qg`` was quantized from). Records ``metadata["bias_correction"]`` = {layer: largest
    |correction| in accumulator units}. Raises QuantError (naming the layer) if a corrected bias could overflow
    the ``acc_bits``-bit signed accumulator (an int, or {bits: width} per input precision)."""
    g = qg.copy()
    means = channel_means(fg, g, list(images))
    record = {}
    for n in g.macro_nodes():
        if n.name not in means:
            continue
        m, q = n.attrs["macro"], n.attrs["q"]
        t = g.tensors[n.inputs[0]]
        bits_in = int(t.dtype[3:])
        amax, ab = 1 << (bits_in - 1), acc_bits[bits_in] if isinstance(acc_bits, dict) else acc_bits
        lim = (1 << (ab - 1)) - 1
        s_acc = t.scale * np.asarray(q["s_w"], np.float64)
        w = fg.const(m.weight).astype(np.float64)
        oc = w.shape[0]
        wq_sum = q["w"].reshape(oc, w.shape[1], -1).sum(axis=2) * np.asarray(q["s_w"])[:, None]
        b = fg.const(m.bias).astype(np.float64).reshape(-1)
        b_q = (q["bias"] + t.zero_point * q["w"].reshape(oc, -1).sum(axis=1)) * s_acc
        mx, mq = means[n.name]
        delta = wq_sum @ mq - w.reshape(oc, w.shape[1], -1).sum(axis=2) @ mx + (b_q - b)
        corr = np.round(delta / s_acc).astype(np.int64)
        q["bias"] = q["bias"] - corr
        worst = kind_of(m).acc_bound(q["w"], q["bias"], amax, t.zero_point, q["zp_b"], oc)
        if worst.max() > lim:
            k = int(worst.argmax())
            raise QuantError(f"layer {n.name}: after bias correction the accumulator could overflow: output channel "
                             f"{k} can reach {int(worst[k])} > {lim} ({ab}-bit signed accumulator)")
        set_pre_shift(q, worst, f"layer {n.name}")
        record[n.name] = int(np.abs(corr).max())
    g.metadata["bias_correction"] = record
    return g

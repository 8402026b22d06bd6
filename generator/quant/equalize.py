"""Channel equalization of activation ranges before quantization.

One int8 scale covers a whole region (per-tensor activations), so a channel whose values span a tenth of the
region's range uses a tenth of its levels: on YOLOv4-tiny the median channel of a region loses 0.5 to 2.3 bits this way. A
convolution followed by a positively homogeneous activation (linear, ReLU, LeakyReLU: f(t z) = t f(z) for t > 0)
and max-pool / nearest upsampling can scale its output channel c by t_c > 0 (weights and bias of c times t_c) if
every layer reading the channel divides its input-channel-c weights by t_c: the float network computes the same
function (Nagel et al., "Data-Free Quantization Through Weight Equalization and Bias Absorption", ICCV 2019, sec.
4.1, which equalizes weight ranges; here the activation ranges are equalized, as Xiao et al., "SmoothQuant",
ICML 2023, migrate difficulty between activations and weights with a strength alpha).

With per-channel weights the producer's weight quantization does not change (each output channel has its own
scale); the reader's input-channel-c weights shrink by t_c, so their quantization error weighs t_c times more while
the activation's weighs t_c times less. :func:`gains` takes t_c = (S / s_c) ** alpha, s_c the span of channel c
(max(hi, 0) - min(lo, 0) over the calibration images), S the region's largest, clipped to [1, :data:`MAX_GAIN`].

A region is equalized only when every writer is such a convolution writing its first output there (no second
pooled output), every reader is a convolution, and no graph output lies in it; :func:`equalize` returns the new
float graph, which is then calibrated and quantized as any other.
"""
from __future__ import annotations

import numpy as np

from generator.ref.float_ref import run_float
from generator.ir.graph import Graph
from generator.kinds import kind_of

#: migration strength: 0 leaves the ranges, 1 equalizes the activation spans fully (the compile pipeline's
#: default: generator.flows.pipeline.EQUALIZE_ALPHA)
ALPHA = 0.25
#: largest gain on one channel
MAX_GAIN = 16.0
#: activations that commute with a positive per-channel scale
HOMOGENEOUS = ("linear", "relu", "leaky")


def channel_spans(g: Graph, images) -> dict:
    """Per region, its channels' [min, max] over the float graph's values on ``images`` (float32 [1, C, H, W]
    each): {region: (lo float64 [channels], hi float64 [channels])}; a tensor of a region fills its channels
    [ch_offset, ch_offset + C)."""
    out = {}
    for x in images:
        for name, v in run_float(g, {g.inputs[0]: x}, keep_all=True).items():
            t = g.tensors.get(name)
            if t is None or t.region is None or np.ndim(v) != 4:
                continue
            c = g.regions[t.region].channels
            lo, hi = out.setdefault(t.region, (np.full(c, np.inf), np.full(c, -np.inf)))
            sl = slice(t.ch_offset, t.ch_offset + v.shape[1])
            lo[sl] = np.minimum(lo[sl], v.min(axis=(0, 2, 3)))
            hi[sl] = np.maximum(hi[sl], v.max(axis=(0, 2, 3)))
    return out


def eligible_regions(g: Graph) -> dict:
    """{region: (writer nodes, reader nodes)} of the regions :func:`equalize` may scale (see the module text)."""
    writers, readers, bad = {}, {}, set()
    for o in g.outputs + g.inputs:
        bad.add(g.tensors[o].region)
    for n in g.nodes:
        m = n.attrs.get("macro") if n.op == "Macro" else None
        ok = m is not None and kind_of(m).has_weights and m.weight is not None
        for k, o in enumerate(n.outputs):
            r = g.tensors[o].region
            writers.setdefault(r, []).append(n)
            if not ok or k > 0 or m.side_pools or m.act not in HOMOGENEOUS:
                bad.add(r)
        for k, i in enumerate(n.inputs):
            t = g.tensors.get(i)
            if t is None or t.region is None or t.is_const:
                continue
            readers.setdefault(t.region, []).append(n)
            if not ok or k > 0:         # (the weights scaled per input channel are those of the ifmap, input 0)
                bad.add(t.region)
    return {r: (w, readers.get(r, [])) for r, w in writers.items() if r not in bad and readers.get(r)}


def gains(lo, hi, alpha: float = ALPHA) -> np.ndarray:
    """Per-channel gains t_c = clip((S / s_c) ** alpha, 1, MAX_GAIN) from channel ranges ``lo``, ``hi`` [C]
    (1 for a channel that never leaves 0)."""
    span = np.maximum(np.asarray(hi, np.float64), 0) - np.minimum(np.asarray(lo, np.float64), 0)
    s = span.max() if span.size else 0.0
    t = np.ones_like(span)
    live = span > 0
    t[live] = np.clip((s / span[live]) ** alpha, 1.0, MAX_GAIN)
    return t


def equalize(g: Graph, spans: dict, alpha: float = ALPHA) -> tuple[Graph, dict]:
    """The float graph with the activation ranges of every eligible region equalized (:func:`gains` from
    ``spans``, :func:`channel_spans`), and {region: gains float64 [channels]} of the regions it changed. The
    graph computes the same function up to float rounding."""
    g = g.copy()
    done = {}
    for r, (ws, rs) in eligible_regions(g).items():
        if r not in spans:
            continue
        t = gains(*spans[r], alpha)
        if np.all(t == 1.0):
            continue
        for n in ws:
            o = g.tensors[n.outputs[0]]
            tc = t[o.ch_offset:o.ch_offset + o.shape[1]]
            m = n.attrs["macro"]
            g.tensors[m.weight].data = (g.tensors[m.weight].data * tc.reshape(-1, 1, 1, 1)).astype(np.float32)
            if m.bias is not None:
                g.tensors[m.bias].data = (g.tensors[m.bias].data * tc).astype(np.float32)
        for n in rs:
            x = g.tensors[n.inputs[0]]
            tc = t[x.ch_offset:x.ch_offset + x.shape[1]]
            m = n.attrs["macro"]
            w = g.tensors[m.weight].data
            g.tensors[m.weight].data = (w / tc.reshape(1, -1, 1, 1)).astype(np.float32)
        done[r] = t
    return g, done


def tensor_gains(g: Graph, name: str) -> np.ndarray:
    """The equalization gains of tensor ``name``'s channels (float64 [C], ones when its region was not
    equalized): its dequantized values divided by them are the original model's."""
    t = g.tensors[name]
    gains = g.metadata.get("equalization", {}).get(t.region)
    if gains is None:
        return np.ones(t.shape[1])
    return np.asarray(gains, np.float64)[t.ch_offset:t.ch_offset + t.shape[1]]

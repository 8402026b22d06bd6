"""Pass: AveragePool, GlobalAveragePool and GlobalMaxPool -> Conv / MaxPool."""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, Tensor
from generator.ir.passes.common import attr_str, resolve_pads


def lower_pooling(graph: Graph) -> Graph:
    """Rewrite pooling the accelerator has no unit for into layers it has.

    * AveragePool (k x k, stride s, symmetric padding p) and GlobalAveragePool -> a Conv with the constant weight
      ``W[c, c] = 1 / k^2`` (zero off the diagonal, no bias); it then fuses like any convolution. Exact in float:
      zero padding counts the padded pixels, so padding needs ``count_include_pad=1``.
    * GlobalMaxPool on a square H x H map -> MaxPool with an H x H window.

    Raises GraphError (naming the node) for dilations, non-square windows or strides, asymmetric padding,
    padding with count_include_pad=0, ceil_mode where it changes the output size, or a non-square GlobalMaxPool.
    """
    # legend: k kernel [kh, kw], st strides, d dilations, pads [top, left, bottom, right], wt the diagonal weight
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ("AveragePool", "GlobalAveragePool", "GlobalMaxPool")]:
        where = f"node {n.name} ({n.op})"
        _, c, h, w = g.tensors[n.inputs[0]].shape
        if n.op == "GlobalMaxPool":
            if h != w:
                raise GraphError(f"{where}: only square inputs are supported, got {h}x{w}")
            n.op, n.attrs = "MaxPool", {"kernel_shape": [h, w], "strides": [1, 1], "pads": [0, 0, 0, 0]}
            continue
        if n.op == "GlobalAveragePool":
            k, st, pads = [h, w], [1, 1], [0, 0, 0, 0]
        else:
            a = n.attrs
            k = [int(v) for v in a["kernel_shape"]]
            st = [int(v) for v in a.get("strides", [1, 1])]
            d = [int(v) for v in a.get("dilations", [1, 1])]
            pads = resolve_pads(n, (h, w), k, st, d)
            if d != [1, 1]:
                raise GraphError(f"{where}: dilations {d} are not supported (only 1)")
            if len(set(pads)) > 1:
                raise GraphError(f"{where}: only symmetric padding is supported; got pads {pads} (top, left, "
                                 f"bottom, right; auto_pad {attr_str(a.get('auto_pad'), 'NOTSET')})")
            if pads[0] and not a.get("count_include_pad", 0):
                raise GraphError(f"{where}: padding {pads[0]} with count_include_pad=0 (border windows divided by "
                                 f"fewer pixels) is not supported; only count_include_pad=1 or no padding")
            want = tuple(g.tensors[n.outputs[0]].shape[2:])
            floor = ((h + 2 * pads[0] - k[0]) // st[0] + 1, (w + 2 * pads[0] - k[1]) // st[1] + 1)
            if want != floor:
                raise GraphError(f"{where}: ceil_mode=1 changes the output size here ({list(want)} instead of "
                                 f"{list(floor)}); only floor rounding is supported")
        if k[0] != k[1] or st[0] != st[1]:
            raise GraphError(f"{where}: only square windows and strides are supported; got kernel {k}, "
                             f"strides {st}")
        wt = np.zeros((c, c, k[0], k[1]), np.float32)
        wt[np.arange(c), np.arange(c)] = 1.0 / (k[0] * k[1])
        wname = g.unique_name(n.name + "_wavg")
        g.tensors[wname] = Tensor(wname, wt.shape, data=wt)
        n.op, n.inputs = "Conv", [n.inputs[0], wname]
        n.attrs = {"kernel_shape": k, "strides": st, "pads": pads}
    return g

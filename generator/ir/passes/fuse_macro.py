"""Pass: Conv + activation + MaxPool + Resize chains -> ``Macro`` conv layers."""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, MacroAttrs, Node, Tensor
from generator.ir.passes.common import (ACT_OPS, activation_of, attr_str, fusable_pool, pool_attrs, resize_factor,
                                        resolve_pads, single_consumer)


def fuse_macro(graph: Graph) -> Graph:
    """Fuse Conv + (bias) + ReLU/LeakyReLU + MaxPool + nearest Resize chains into ``Macro`` conv layers.

    An op joins the chain only if the previous tensor has this op as its single consumer and is not a graph
    output. Requantization joins later (quantization annotates the macro node). Raises GraphError for a Conv
    with groups, dilation, a non-square kernel, or pads outside [0, kernel size).
    """
    # legend: a conv attributes, k kernel [kh, kw], s strides, d dilations, p pads, ma the fused layer's MacroAttrs
    g = graph.copy()
    for conv in [n for n in g.nodes if n.op == "Conv"]:
        a = conv.attrs
        where = f"node {conv.name} (Conv)"
        wshape = g.tensors[conv.inputs[1]].shape
        k = [int(v) for v in (a.get("kernel_shape") or list(wshape[2:]))]
        if len(k) != 2:
            raise GraphError(f"{where}: only 2-D convolution is supported, got kernel {k}")
        if not g.tensors[conv.inputs[1]].is_const or (len(conv.inputs) > 2 and conv.inputs[2]
                                                      and not g.tensors[conv.inputs[2]].is_const):
            raise GraphError(f"{where}: weights and bias must be constants (initializers)")
        s = [int(v) for v in a.get("strides", [1, 1])]
        d = [int(v) for v in a.get("dilations", [1, 1])]
        if a.get("group", 1) != 1:
            raise GraphError(f"{where}: group={a.get('group')} (grouped / depthwise convolution) is not supported; "
                             f"only group=1")
        if d != [1, 1]:
            raise GraphError(f"{where}: dilations {d} are not supported (only 1)")
        if k[0] != k[1] or s[0] != s[1]:
            raise GraphError(f"{where}: only square kernels and strides are supported; got kernel {k}, "
                             f"strides {s}")
        p = resolve_pads(conv, g.tensors[conv.inputs[0]].shape[2:], k, s)
        if min(p) < 0 or max(p) >= int(k[0]):
            raise GraphError(f"{where}: pads {p} (top, left, bottom, right; auto_pad "
                             f"{attr_str(a.get('auto_pad'), 'NOTSET')}) must be at least 0 and less than the kernel "
                             f"size {int(k[0])}")
        ma = MacroAttrs(kind="conv", kernel=int(k[0]), stride=int(s[0]), pad=int(p[0]), weight=conv.inputs[1],
                        pads=tuple(int(v) for v in p) if len(set(p)) > 1 else None)
        oc = g.tensors[conv.inputs[1]].shape[0]
        if len(conv.inputs) > 2 and conv.inputs[2]:
            ma.bias = conv.inputs[2]
        else:
            ma.bias = g.unique_name(conv.name + "_bzero")
            g.tensors[ma.bias] = Tensor(ma.bias, (oc,), data=np.zeros(oc, np.float32))
        cur, fused = conv.outputs[0], [conv]
        nxt = single_consumer(g, cur)
        if nxt is not None and nxt.op in ACT_OPS:
            ma.act, ma.alpha, ma.beta = activation_of(nxt)
            fused.append(nxt)
            cur = nxt.outputs[0]
            nxt = single_consumer(g, cur)
        if nxt is not None and nxt.op == "MaxPool" and fusable_pool(nxt, g):
            ma.pool = pool_attrs(nxt, g)
            fused.append(nxt)
            cur = nxt.outputs[0]
            nxt = single_consumer(g, cur)
        if nxt is not None and nxt.op in ("Resize", "Upsample"):
            ma.upsample = resize_factor(g, nxt)
            fused.append(nxt)
            cur = nxt.outputs[0]
        idx = g.nodes.index(conv)
        macro = Node(conv.name, "Macro", [conv.inputs[0]], [cur], {"macro": ma, "fused": [f.name for f in fused]})
        for f in fused:
            g.nodes.remove(f)
        g.nodes.insert(idx, macro)
    g.prune()
    return g

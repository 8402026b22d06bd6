"""Pass: grouped and depthwise convolutions -> dense convolutions with block-diagonal weights."""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, Node, Tensor


def lower_grouped_conv(graph: Graph) -> Graph:
    """Rewrite every Conv with ``group`` G > 1 (depthwise when G = C, as in YOLOX-nano and MobileNet) into a
    group-1 Conv whose weight [OC, IC, KH, KW] is block diagonal: output channel o of group j = o // (OC / G) reads
    input channels ``j*IC/G .. (j+1)*IC/G - 1`` with the grouped weight, every other input channel with 0 (ONNX
    Conv semantics, exact). The PE array then runs IC / G useful MACs of every IC per output: a depthwise 3x3 layer
    costs C times its own MACs, which is fine where such layers are few and narrow, and its weights take C times the
    DDR bytes. Raises GraphError (naming the node) for a group count that does not divide both channel counts or a
    non-constant weight."""
    g = graph.copy()
    for n in [n for n in g.nodes if n.op == "Conv" and int(n.attrs.get("group", 1)) != 1]:
        where = f"node {n.name} (Conv)"
        grp = int(n.attrs["group"])
        wt = g.tensors[n.inputs[1]]
        ic = g.tensors[n.inputs[0]].shape[1]
        if not wt.is_const:
            raise GraphError(f"{where}: weights must be a constant (initializer)")
        oc, icg, kh, kw = wt.shape
        if grp < 1 or ic % grp or oc % grp or icg * grp != ic:
            raise GraphError(f"{where}: group={grp} does not divide the {ic} input and {oc} output channels "
                             f"(weight {list(wt.shape)})")
        w = np.zeros((oc, ic, kh, kw), np.float32)
        ocg = oc // grp
        for j in range(grp):
            w[j * ocg:(j + 1) * ocg, j * icg:(j + 1) * icg] = wt.data[j * ocg:(j + 1) * ocg]
        wn = g.unique_name(f"{n.name}_dense_w")
        g.tensors[wn] = Tensor(wn, w.shape, data=w)
        attrs = {k: v for k, v in n.attrs.items() if k != "group"}
        g.nodes[g.nodes.index(n)] = Node(n.name, "Conv", [n.inputs[0], wn] + list(n.inputs[2:]), list(n.outputs),
                                         attrs)
    g.prune()
    return g

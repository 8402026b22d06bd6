"""Pass: MaxPool / activation / Resize left outside a conv -> ``Macro`` copy layers."""
from __future__ import annotations

from generator.ir.graph import Graph, MacroAttrs
from generator.ir.passes.common import ACT_OPS, activation_of, resize_factor, rewire, standalone_pool


def lower_standalone(graph: Graph) -> Graph:
    """Turn a MaxPool, ReLU/LeakyReLU or Resize not fused into a conv into a ``Macro`` copy layer (the ifmap
    bypasses the PE array; the post-processing unit pools / activates / upsamples). Identity ops are removed. A
    max-pool padded at the top / left (SPP, SPPF, ONNX exports) keeps its padding as the copy layer's ``pads``:
    it reads its input with that border, which then holds the smallest integer (the -inf of ONNX's padding)."""
    g = graph.copy()
    for n in list(g.nodes):
        if n.op == "Identity":
            rewire(g, n.outputs[0], n.inputs[0]) if n.outputs[0] not in g.outputs else None
            if n.outputs[0] not in g.outputs:
                g.nodes.remove(n)
                continue
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy"), "fused": [n.name]}
        elif n.op == "MaxPool":
            pool, pads = standalone_pool(n, g)
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy", pool=pool, pads=pads), "fused": [n.name]}
        elif n.op in ACT_OPS:
            act, alpha, beta = activation_of(n)
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy", act=act, alpha=alpha, beta=beta),
                                      "fused": [n.name]}
        elif n.op in ("Resize", "Upsample"):
            f = resize_factor(g, n)
            n.inputs = n.inputs[:1]
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy", upsample=f), "fused": [n.name]}
    g.prune()
    return g

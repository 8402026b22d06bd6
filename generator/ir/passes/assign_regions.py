"""Pass: one DDR region per activation tensor."""
from __future__ import annotations

from generator.ir.graph import Graph, GraphError, Region


def assign_regions(graph: Graph) -> Graph:
    """Give every activation tensor produced by a Macro node, and every graph input, a DDR region of its own."""
    g = graph.copy()
    g.regions = {}
    acts = list(g.inputs) + [o for n in g.nodes if n.op == "Macro" for o in n.outputs]
    for t in acts:
        _, c, h, w = g.tensors[t].shape
        g.regions[t] = Region(t, c, h, w, base_reg="INPUT" if t in g.inputs else "ACT")
        g.tensors[t].region, g.tensors[t].ch_offset = t, 0
    for n in g.nodes:
        if n.op not in ("Macro", "Concat", "Split", "Slice"):
            raise GraphError(f"node {n.name} ({n.op}) cannot run on the accelerator (not fused into a layer)")
    return g

"""Pass: a stand-alone max-pool copy layer folded into its conv layer as a second, pooled output."""
from __future__ import annotations

from generator.ir.activations import TABLE_ACTIVATIONS
from generator.ir.graph import Graph


def merge_pool_copies(graph: Graph) -> Graph:
    """Fold a stand-alone max-pool layer (k x k, stride k) that reads the whole output of a conv layer without
    pool or upsample into that conv layer as a second, pooled output: the accelerator post-processes each
    accumulator tile twice (full and pooled) instead of reading the tensor back from DDR. Not for a conv layer with
    a table activation: its table maps to the main output's scale alone."""
    g = graph.copy()
    for c in [n for n in g.nodes if n.op == "Macro" and n.attrs["macro"].kind == "copy"]:
        m = c.attrs["macro"]
        if not m.pool or m.pool[0] != m.pool[1] or m.pool[2] or m.pads or m.act != "linear" or m.upsample != 1:
            continue
        p = g.producer(c.inputs[0])
        if p is None or p.op != "Macro" or p.outputs[0] != c.inputs[0]:
            continue
        pm = p.attrs["macro"]
        if pm.kind != "conv" or pm.pool or pm.upsample != 1 or pm.act in TABLE_ACTIVATIONS:
            continue   # (a table activation maps to one output scale: the pooled copy keeps its own)
        p.outputs.append(c.outputs[0])
        pm.side_pools.append(tuple(m.pool))
        p.attrs.setdefault("fused", []).extend(c.attrs.get("fused", []))
        g.nodes.remove(c)
    g.toposort()
    return g

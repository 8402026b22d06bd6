"""Pass: channel Split/Slice removed; each output becomes a view at a channel offset."""
from __future__ import annotations

from generator.ir.graph import Graph, GraphError


def eliminate_split(graph: Graph) -> Graph:
    """Remove channel Split/Slice: each output becomes a view of the input's region at a channel offset.
    Raises GraphError for a split or slice on another axis or with a step other than 1."""
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ("Split", "Slice")]:
        src = g.tensors[n.inputs[0]]
        c = src.shape[1]
        if n.op == "Split":
            axis = n.attrs.get("axis", 0)
            if axis not in (1, -3):
                raise GraphError(f"node {n.name} (Split): only channel split (axis 1) is supported, got axis {axis}")
            offs, o = [], 0
            for out in n.outputs:
                offs.append(o)
                o += g.tensors[out].shape[1] if out in g.tensors else 0
        else:
            starts, ends = g.const(n.inputs[1]).tolist(), g.const(n.inputs[2]).tolist()
            axes = g.const(n.inputs[3]).tolist() if len(n.inputs) > 3 and n.inputs[3] else list(range(len(starts)))
            steps = g.const(n.inputs[4]).tolist() if len(n.inputs) > 4 and n.inputs[4] else [1] * len(starts)
            if [a % 4 for a in axes] != [1] or steps != [1]:
                raise GraphError(f"node {n.name} (Slice): only a channel slice (axis 1, step 1) is supported")
            st = int(starts[0])
            offs = [st + c if st < 0 else min(st, c)]
        for out, off in zip(n.outputs, offs):
            if out not in g.tensors:
                continue
            t = g.tensors[out]
            t.region, t.ch_offset = src.region, src.ch_offset + off
            if out in g.outputs:
                raise GraphError(f"node {n.name} ({n.op}): a split output that is a graph output is not supported")
        g.nodes.remove(n)
    g.prune()
    return g

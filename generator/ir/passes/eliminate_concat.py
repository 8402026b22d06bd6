"""Pass: channel Concats removed by writing their inputs side by side into one DDR region."""
from __future__ import annotations

from generator.ir.graph import Graph, GraphError, MacroAttrs, Node, Region, Tensor


def _insert_copy(g: Graph, src: str, before: Node) -> str:
    y = g.unique_name(src + "_copy")
    g.tensors[y] = Tensor(y, g.tensors[src].shape)
    node = Node(g.unique_name("copy_" + src), "Macro", [src], [y], {"macro": MacroAttrs(kind="copy"), "fused": []})
    g.nodes.insert(g.nodes.index(before), node)
    _, c, h, w = g.tensors[y].shape
    g.regions[y] = Region(y, c, h, w)
    g.tensors[y].region = y
    return y


def _movable(g: Graph, t: str) -> bool:
    """A tensor can be moved into a shared region if a Macro produces it and it is alone in its own region."""
    p = g.producer(t)
    tt = g.tensors[t]
    return (p is not None and p.op in ("Macro", "Concat") and tt.region == t
            and not any(o.region == t and o.name != t for o in g.tensors.values()))


def _place(g: Graph, t: str, region: str, offset: int):
    """Move tensor t (and, for a concat output, everything already placed inside it) into region at offset."""
    old = g.tensors[t].region
    for o in g.tensors.values():
        if o.region == old:
            o.ch_offset += offset
            o.region = region
    g.regions.pop(old, None)


def eliminate_concat(graph: Graph) -> Graph:
    """Remove channel Concats: the inputs are written side by side into the output's DDR region
    (channel offset + region channel stride). Where an input cannot move there (it already sits in another
    region, is a graph input or split view, or appears twice), a copy layer is inserted for it.
    Raises GraphError for a Concat on an axis other than channels."""
    g = graph.copy()
    for cat in reversed([n for n in g.nodes if n.op == "Concat"]):
        if cat.attrs.get("axis", 1) not in (1, -3):
            raise GraphError(f"node {cat.name} (Concat): only channel concatenation (axis 1) is supported")
        out = cat.outputs[0]
        if g.tensors[out].region is None:
            _, c, h, w = g.tensors[out].shape
            g.regions[out] = Region(out, c, h, w)
            g.tensors[out].region = out
        region, base = g.tensors[out].region, g.tensors[out].ch_offset
        off, seen = 0, set()
        new_inputs = []
        for i in cat.inputs:
            src = i
            if i in seen or not _movable(g, i):
                src = _insert_copy(g, i, cat)
            seen.add(i)
            _place(g, src, region, base + off)
            new_inputs.append(src)
            off += g.tensors[src].shape[1]
        cat.inputs = new_inputs
    # drop the concat nodes: consumers read the region directly
    for cat in [n for n in g.nodes if n.op == "Concat"]:
        g.nodes.remove(cat)
    g.prune()
    return g

"""Pass: a padded max-pool reading a region that a padded convolution also reads -> through a copy of it."""
from __future__ import annotations

from generator.ir.graph import Graph, MacroAttrs, Node, Region, Tensor


def separate_pool_borders(graph: Graph) -> Graph:
    """A region's border holds one value: the zero point for a convolution's padding (0.0), the smallest integer
    for a max-pool's (-inf). Where a padded max-pool copy layer reads a region that a padded convolution reads
    too (a CSP block pooling a tensor a 3x3 convolution also reads), the pool reads a copy of its input in a
    region of its own instead (one more copy layer, the tensor's size in DDR traffic)."""
    g = graph.copy()
    macros = [n for n in g.nodes if n.op == "Macro"]
    conv_padded = {g.tensors[n.inputs[0]].region for n in macros
                   if n.attrs["macro"].kind == "conv" and max(n.attrs["macro"].four_pads()) > 0}
    for n in macros:
        m = n.attrs["macro"]
        x = g.tensors[n.inputs[0]]
        if m.kind != "copy" or not m.pads or x.region not in conv_padded:
            continue
        name = g.unique_name(f"{n.name}_in")
        _, c, h, w = x.shape
        g.tensors[name] = Tensor(name, x.shape, region=name)
        g.regions[name] = Region(name, c, h, w)
        g.nodes.insert(g.nodes.index(n), Node(g.unique_name(f"{n.name}_copy"), "Macro", [x.name], [name],
                                              {"macro": MacroAttrs(kind="copy"), "fused": []}))
        n.inputs[0] = name
    return g

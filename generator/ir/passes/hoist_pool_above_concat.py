"""Pass: a MaxPool or activation after a Concat moved onto each Concat input."""
from __future__ import annotations

from generator.ir.graph import Graph, Node, Tensor
from generator.ir.passes.common import ACT_OPS, fusable_pool, pool_attrs, single_consumer


def hoist_pool_above_concat(graph: Graph) -> Graph:
    """Move a MaxPool or activation that follows a Concat ahead of it: op(concat(a, b)) = concat(op(a), op(b)).

    Valid because max-pool and ReLU/LeakyReLU act per channel. The pooled inputs can then fuse into their
    producers (or become stand-alone pool layers), and the concat is eliminated at the pooled size.
    """
    g = graph.copy()
    changed = True
    while changed:
        changed = False
        for cat in [n for n in g.nodes if n.op == "Concat"]:
            nxt = single_consumer(g, cat.outputs[0])
            if nxt is None or nxt.op not in ACT_OPS | {"MaxPool"} or (nxt.op == "MaxPool" and not fusable_pool(nxt, g)):
                continue
            new_ins = []
            for k, i in enumerate(cat.inputs):
                t = g.tensors[i]
                y = g.unique_name(f"{nxt.name}_in{k}")
                node = Node(g.unique_name(f"{nxt.name}_{k}"), nxt.op, [i], [y], dict(nxt.attrs))
                shp = list(t.shape)
                if nxt.op == "MaxPool":
                    ks, st, pe = pool_attrs(nxt, g)   # kernel, stride, bottom/right pad
                    shp[2] = (shp[2] + pe - ks) // st + 1
                    shp[3] = (shp[3] + pe - ks) // st + 1
                g.tensors[y] = Tensor(y, tuple(shp))
                g.nodes.insert(g.nodes.index(cat), node)
                new_ins.append(y)
            cat.inputs = new_ins
            out = nxt.outputs[0]
            g.nodes.remove(nxt)
            cat.outputs = [out]
            changed = True
            break
    g.prune()
    g.toposort()
    return g

"""Pass: a stride-1 MaxPool wider than the POST unit's window -> a chain of narrower stride-1 MaxPools."""
from __future__ import annotations

from generator.ir.graph import Graph, GraphError, Node, Tensor
from generator.ir.passes.common import resolve_pads
from generator.spec.isa import FORMATS

#: widest max-pool window POST runs (its ``pool_k`` instruction field)
MAX_POOL_K = (1 << dict(FORMATS["POST"])["pool_k"]) - 1


def _split(total: int, parts: int) -> list:
    """``total`` as ``parts`` non-negative integers differing by at most one (larger first)."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def split_large_pools(graph: Graph) -> Graph:
    """Rewrite every MaxPool with stride 1 and a k x k window wider than :data:`MAX_POOL_K` (SPP's 9 and 13,
    GlobalMaxPool lowered to a window) into a chain of stride-1 MaxPools of windows k_i <= MAX_POOL_K with
    sum(k_i - 1) = k - 1, each side's padding shared out among them (each below its k_i). Exact: the maximum over
    a window of maxima over sub-windows is the maximum over their union, and the padding is -inf in every link.

    Raises GraphError naming the node for a wider window with a stride above 1 or ceil_mode.
    """
    g = graph.copy()
    for n in [n for n in g.nodes if n.op == "MaxPool"]:
        k = [int(v) for v in n.attrs["kernel_shape"]]
        if len(k) != 2 or k[0] != k[1] or k[0] <= MAX_POOL_K:
            continue   # other checks: generator.ir.passes.common.pool_attrs / standalone_pool
        s = [int(v) for v in n.attrs.get("strides", [1, 1])]
        if s != [1, 1] or n.attrs.get("ceil_mode", 0) or [int(v) for v in n.attrs.get("dilations", [1, 1])] != [1, 1]:
            raise GraphError(f"node {n.name} (MaxPool): a {k[0]}x{k[0]} window is wider than the {MAX_POOL_K} the "
                             f"accelerator pools; only stride 1 without ceil_mode or dilations is split into a chain")
        x = n.inputs[0]
        _, c, h, w = g.tensors[x].shape
        pads = resolve_pads(n, (h, w), k, s)
        parts = -(-(k[0] - 1) // (MAX_POOL_K - 1))
        ks = [v + 1 for v in _split(k[0] - 1, parts)]
        side = [_split(p, parts) for p in pads]          # per side, each link's share
        idx = g.nodes.index(n)
        g.nodes.remove(n)
        cur, ch, cw = x, h, w
        for i, ki in enumerate(ks):
            pt, pl, pb, pr = (side[j][i] for j in range(4))
            if max(pt, pl, pb, pr) >= ki:
                raise GraphError(f"node {n.name} (MaxPool): padding {pads} too wide to split its {k[0]}x{k[0]} "
                                 f"window into {ks}")
            ch, cw = ch + pt + pb - ki + 1, cw + pl + pr - ki + 1
            last = i == len(ks) - 1
            out = n.outputs[0] if last else g.unique_name(f"{n.name}_part{i}")
            if not last:
                g.tensors[out] = Tensor(out, (1, c, ch, cw))
            g.nodes.insert(idx + i, Node(g.unique_name(f"{n.name}_{i}") if not last else n.name, "MaxPool", [cur],
                                         [out], {"kernel_shape": [ki, ki], "strides": [1, 1],
                                                 "pads": [pt, pl, pb, pr]}))
            cur = out
    return g

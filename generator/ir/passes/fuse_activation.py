"""Pass: the activations POST runs through its table, as one ``Act`` node each.

ONNX writes them as single operators (Sigmoid, Tanh, HardSigmoid, HardSwish, Softplus, Mish, Elu) or, from
PyTorch, as a gate times its input: SiLU = Mul(x, Sigmoid(x)), HardSwish = Mul(x, HardSigmoid(x)) with alpha 1/6,
Mish = Mul(x, Tanh(Softplus(x))). Both forms become ``Act(x)`` with attrs ``act`` (a name of
:data:`generator.exec.kernels.TABLE_ACTIVATIONS`), ``alpha``, ``beta``, which :func:`fuse_macro` then fuses into
the convolution before it (or :func:`lower_standalone` turns into a copy layer).
"""
from __future__ import annotations

from generator.ir.graph import Graph, Node

#: single ONNX operators -> (table activation, default alpha, default beta) (ONNX operator defaults)
SINGLE_OPS = {"Sigmoid": ("sigmoid", 0.0, 0.0), "Tanh": ("tanh", 0.0, 0.0), "HardSigmoid": ("hardsigmoid", 0.2, 0.5),
              "HardSwish": ("hardswish", 0.0, 0.0), "Softplus": ("softplus", 0.0, 0.0), "Mish": ("mish", 0.0, 0.0),
              "Elu": ("elu", 1.0, 0.0)}


def _only_reader(nodes, t: str, outputs) -> Node | None:
    r = [n for n in nodes if t in n.inputs]
    return r[0] if len(r) == 1 and t not in outputs else None


def gate_of(nodes, mul: Node, outputs=()) -> tuple | None:
    """If ``mul`` (a Mul node) is x times a gate of x -- Sigmoid(x), HardSigmoid(x) with alpha 1/6 and beta 1/2,
    or Tanh(Softplus(x)), each gate tensor read by nothing else -- return (activation name, x, gate nodes), else
    None. ``nodes``: every node of the graph; ``outputs``: graph output names (a gate tensor that is one stays)."""
    if mul.op != "Mul" or len(mul.inputs) != 2:
        return None
    by_out = {o: n for n in nodes for o in n.outputs}
    for gi, x in ((1, 0), (0, 1)):
        gt, xt = mul.inputs[gi], mul.inputs[x]
        gn = by_out.get(gt)
        if gn is None or gn.inputs[:1] != [xt] and gn.op != "Tanh" or _only_reader(nodes, gt, outputs) is not mul:
            continue
        if gn.op == "Sigmoid":
            return "silu", xt, [gn]
        if gn.op == "HardSigmoid" and abs(float(gn.attrs.get("alpha", 0.2)) - 1 / 6) < 1e-6 \
                and abs(float(gn.attrs.get("beta", 0.5)) - 0.5) < 1e-6:
            return "hardswish", xt, [gn]
        if gn.op == "Tanh":
            sp = by_out.get(gn.inputs[0])
            if sp is not None and sp.op == "Softplus" and sp.inputs[:1] == [xt] \
                    and _only_reader(nodes, sp.outputs[0], outputs) is gn:
                return "mish", xt, [gn, sp]
    return None


def fuse_activation(graph: Graph) -> Graph:
    """Rewrite gated products (SiLU, HardSwish, Mish as PyTorch exports them, :func:`gate_of`) and the single
    operators of :data:`SINGLE_OPS` into ``Act`` nodes (same output tensor). Everything else is unchanged."""
    g = graph.copy()
    for mul in [n for n in g.nodes if n.op == "Mul"]:
        hit = gate_of(g.nodes, mul, g.outputs)
        if hit is None:
            continue
        act, x, gates = hit
        for n in gates:
            g.nodes.remove(n)
        mul.op, mul.inputs, mul.attrs = "Act", [x], {"act": act, "alpha": 0.0, "beta": 0.0}
    for n in g.nodes:
        if n.op in SINGLE_OPS:
            act, alpha, beta = SINGLE_OPS[n.op]
            n.attrs = {"act": act, "alpha": float(n.attrs.get("alpha", alpha)), "beta": float(n.attrs.get("beta", beta))}
            n.op = "Act"
    g.prune()
    return g

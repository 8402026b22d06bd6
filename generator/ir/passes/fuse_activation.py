"""Pass: the activations POST runs through its table, as one ``Act`` node each.

ONNX writes them as single operators (Sigmoid, Tanh, HardSigmoid, HardSwish, Softplus, Mish, Elu) or, from
PyTorch, as a gate times its input: SiLU = Mul(x, Sigmoid(x)), HardSwish = Mul(x, HardSigmoid(x)) with alpha 1/6,
Mish = Mul(x, Tanh(Softplus(x))), or as a chain of element-wise operators on one tensor with scalar constants
(GELU before opset 20: Div, Erf, Add, Mul, Mul; its tanh approximation with Pow or Mul for the cube), recognized by
value (:func:`function_of`). Every form becomes ``Act(x)`` with attrs ``act`` (a name of
:data:`generator.ir.activations.TABLE_ACTIVATIONS`), ``alpha``, ``beta``, which :func:`fuse_macro` then fuses into
the convolution before it (or :func:`lower_standalone` turns into a copy layer).
"""
from __future__ import annotations

import numpy as np

from generator.ir.activations import CHAIN_FUNCTIONS, ONNX_OPS, TABLE_ACTIVATIONS, erf, onnx_params
from generator.ir.graph import Graph, Node

#: single ONNX operators -> their activation records (:data:`generator.ir.activations.ONNX_OPS`)
SINGLE_OPS = ONNX_OPS

#: element-wise operators a chain recognized by value (:func:`function_of`) may hold, as float64 numpy functions
CHAIN_OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": np.power,
             "Neg": np.negative, "Sqrt": np.sqrt, "Exp": np.exp, "Log": np.log, "Reciprocal": np.reciprocal,
             "Tanh": np.tanh, "Sigmoid": lambda x: TABLE_ACTIVATIONS["sigmoid"](x, 0.0, 0.0),
             "Softplus": lambda x: TABLE_ACTIVATIONS["softplus"](x, 0.0, 0.0), "Erf": erf}
#: the probe points a chain is compared on (with the activations of :data:`CHAIN_FUNCTIONS`)
PROBE = np.linspace(-8.0, 8.0, 321)
#: nodes a chain may have at most
MAX_CHAIN = 16


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


def _scalar(tensors: dict, t: str):
    """The value of ``t`` if it is a one-element constant, else None."""
    c = tensors.get(t)
    data = None if c is None else c.data
    return None if data is None or np.size(data) != 1 else float(np.asarray(data).ravel()[0])


def _chain(root: Node, x: str, by_out: dict, tensors: dict) -> list | None:
    """The nodes computing ``root`` from tensor ``x`` and one-element constants through :data:`CHAIN_OPS` only
    (None if any other tensor or operator is needed, or more than :data:`MAX_CHAIN` nodes)."""
    cone, stack = [], [root]
    while stack:
        n = stack.pop()
        if n in cone:
            continue
        if n.op not in CHAIN_OPS or len(cone) >= MAX_CHAIN:
            return None
        cone.append(n)
        for t in n.inputs:
            if t == x or _scalar(tensors, t) is not None:
                continue
            p = by_out.get(t)
            if p is None:
                return None
            stack.append(p)
    return cone


def _evaluate(root: Node, x: str, by_out: dict, tensors: dict) -> np.ndarray:
    """The chain's value at :data:`PROBE` for ``x`` (float64; NaN where it is undefined)."""
    memo = {x: PROBE}

    def val(t):
        if t not in memo:
            sc = _scalar(tensors, t)
            if sc is not None:
                return sc
            n = by_out[t]
            memo[t] = CHAIN_OPS[n.op](*[val(i) for i in n.inputs])
        return memo[t]
    with np.errstate(all="ignore"):
        return np.asarray(val(root.outputs[0]), np.float64) * np.ones_like(PROBE)


def function_of(nodes, root: Node, tensors: dict, outputs=()) -> tuple | None:
    """If ``root`` ends a chain of element-wise operators (:data:`CHAIN_OPS`, at least two nodes) on one tensor x
    and one-element constants whose value equals one of :data:`CHAIN_FUNCTIONS` at every :data:`PROBE` point
    (relative 1e-4, absolute 1e-5), and whose inner tensors nothing else reads: (activation name, x, chain nodes).
    Else None. ``tensors``: {name: Tensor}, constants with their data; ``outputs``: the graph outputs."""
    if root.op not in CHAIN_OPS:
        return None
    by_out = {o: n for n in nodes for o in n.outputs}
    frontier, seen = list(root.inputs), set()
    while frontier:           # candidate inputs x, nearest first
        x = frontier.pop(0)
        if x in seen or _scalar(tensors, x) is not None:
            continue
        seen.add(x)
        p = by_out.get(x)
        if p is not None and p.op in CHAIN_OPS and len(seen) < 4 * MAX_CHAIN:
            frontier.extend(p.inputs)
        cone = _chain(root, x, by_out, tensors)
        if cone is None or len(cone) < 2:
            continue
        inner = {o for n in cone for o in n.outputs} - set(root.outputs)
        if any(t in outputs or any(t in r.inputs for r in nodes if r not in cone) for t in inner):
            continue
        y = _evaluate(root, x, by_out, tensors)
        for act in CHAIN_FUNCTIONS:
            want = TABLE_ACTIVATIONS[act](PROBE, 0.0, 0.0)
            if np.all(np.isfinite(y)) and np.allclose(y, want, rtol=1e-4, atol=1e-5):
                return act, x, cone
    return None


def chains(nodes, tensors: dict, outputs=()) -> list:
    """Every maximal chain :func:`function_of` recognizes (gated products of :func:`gate_of` excepted), last first:
    [(activation, x, root node, chain nodes)]."""
    found, taken = [], set()
    for root in reversed(nodes):
        if root.name in taken or root.op not in CHAIN_OPS or gate_of(nodes, root, outputs):
            continue
        hit = function_of(nodes, root, tensors, outputs)
        if hit is not None:
            found.append((hit[0], hit[1], root, hit[2]))
            taken |= {n.name for n in hit[2]}
    return found


def fuse_activation(graph: Graph) -> Graph:
    """Rewrite gated products (SiLU, HardSwish, Mish as PyTorch exports them, :func:`gate_of`), element-wise chains
    equal to a table activation (GELU as exported before opset 20, :func:`chains`) and the single operators of
    :data:`SINGLE_OPS` into ``Act`` nodes (same output tensor). Everything else is unchanged."""
    g = graph.copy()
    for act, x, root, cone in chains(g.nodes, g.tensors, g.outputs):
        for n in cone:
            if n is not root:
                g.nodes.remove(n)
        root.op, root.inputs, root.attrs = "Act", [x], {"act": act, "alpha": 0.0, "beta": 0.0}
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
            rec = SINGLE_OPS[n.op]
            alpha, beta = onnx_params(rec, n.attrs)
            act = "gelu_tanh" if n.op == "Gelu" and n.attrs.get("approximate", "none") in ("tanh", b"tanh") else rec.name
            n.attrs, n.op = {"act": act, "alpha": alpha, "beta": beta}, "Act"
    g.prune()
    return g

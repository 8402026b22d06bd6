"""Pass: element-wise Add / Sub of two tensors and Add / Sub / Mul / Div by a per-channel constant -> 1x1 Conv; the
product of two tensors -> an ``emul`` Macro layer."""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, MacroAttrs, Node, Tensor

ELEMENTWISE = ("Add", "Sub", "Mul", "Div")


def _per_channel(v: np.ndarray, c: int, where: str) -> np.ndarray:
    """A constant operand as float64 [C]: a scalar, or shaped [C, 1, 1] / [1, C, 1, 1]. Raises GraphError."""
    v = np.asarray(v, np.float64)
    if v.size == 1:
        return np.full(c, float(v.reshape(-1)[0]))
    if v.ndim in (3, 4) and v.shape[-2:] == (1, 1) and v.shape[-3] == c and (v.ndim == 3 or v.shape[0] == 1):
        return v.reshape(c)
    raise GraphError(f"{where}: constant operand of shape {list(v.shape)} is not per channel (a scalar, [C, 1, 1] "
                     f"or [1, C, 1, 1] with C = {c})")


def lower_elementwise(graph: Graph) -> Graph:
    """Rewrite element-wise arithmetic into 1x1 convolutions, which then fuse with a following activation like any
    convolution (a darknet ``[shortcut]`` with ``activation=leaky``):

    * ``a + b`` / ``a - b`` of two tensors of one shape (residual shortcuts) -> ``Concat(a, b)`` and a 1x1 Conv
      with ``W[c, c] = 1``, ``W[c, C + c] = +-1``: both inputs share the concatenated region's scale (the common
      scale the inputs are requantized to), and the sum is requantized to the output's. It runs on the PE array
      (2 C x C MACs per pixel, mostly with zero weights);
    * ``x + k``, ``x - k``, ``k - x``, ``x * k``, ``x / k`` with a per-channel constant k -> a diagonal 1x1 Conv
      (weight 1, -1, k or 1 / k; bias k, -k or 0).

    * ``a * b`` of two tensors (attention, channel scaling: SE blocks, darknet ``[scale_channels]`` / ``[sam]``),
      ``b`` of a's shape or [1, C, 1, 1] (either operand; the broadcast one becomes ``b``) -> a Macro layer of kind
      ``emul`` (:class:`~generator.ir.graph.MacroAttrs`): both operands keep their own scale and zero point, the
      product ``(A - za) (B - zb)`` is requantized by ``s_a s_b / s_y``.

    Raises GraphError naming the node for operands of different shapes (broadcasting other than a product's
    [1, C, 1, 1]), a quotient of two tensors, a constant divided by a tensor, or a constant that is not per channel
    (the loader refuses those forms first, :func:`generator.frontend.onnx_loader.refusal`).
    """
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ELEMENTWISE]:
        where = f"node {n.name} ({n.op})"
        y = n.outputs[0]
        _, c, h, w = g.tensors[y].shape
        consts = [i for i in n.inputs if g.tensors[i].is_const]
        wt, bias, idx, new = np.zeros((c, c, 1, 1)), np.zeros(c), g.nodes.index(n), []
        if not consts and n.op == "Mul":
            g.nodes[idx] = _product(g, n, where)
            continue
        if not consts:
            a, b = n.inputs
            if n.op not in ("Add", "Sub"):
                raise GraphError(f"{where}: a {n.op} of two tensors is not supported (no multiplier for it)")
            if g.tensors[a].shape != g.tensors[b].shape:
                raise GraphError(f"{where}: operands of shapes {list(g.tensors[a].shape)} and "
                                 f"{list(g.tensors[b].shape)}; only equal shapes are supported (no broadcasting)")
            cat = g.unique_name(f"{n.name}_cat")
            g.tensors[cat] = Tensor(cat, (1, 2 * c, h, w))
            new.append(Node(g.unique_name(f"{n.name}_concat"), "Concat", [a, b], [cat], {"axis": 1}))
            wt = np.zeros((c, 2 * c, 1, 1))
            wt[np.arange(c), np.arange(c)] = 1.0
            wt[np.arange(c), c + np.arange(c)] = 1.0 if n.op == "Add" else -1.0
            x = cat
        else:
            if len(consts) == 2:
                raise GraphError(f"{where}: both operands are constants")
            k = _per_channel(g.const(consts[0]), c, where)
            x = [i for i in n.inputs if i not in consts][0]
            const_first = n.inputs[0] == consts[0]
            d = np.arange(c)
            if n.op == "Div" and const_first:
                raise GraphError(f"{where}: a constant divided by a tensor is not supported")
            if n.op in ("Mul", "Div") and not np.all(np.isfinite(1.0 / k if n.op == "Div" else k)):
                raise GraphError(f"{where}: constant operand is not finite (or a division by 0)")
            wt[d, d, 0, 0] = {"Add": 1.0, "Sub": -1.0 if const_first else 1.0, "Mul": 1.0, "Div": 1.0}[n.op]
            if n.op == "Mul":
                wt[d, d, 0, 0] = k
            elif n.op == "Div":
                wt[d, d, 0, 0] = 1.0 / k
            elif n.op == "Add" or const_first:
                bias = k
            else:
                bias = -k
        wn, bn = g.unique_name(f"{n.name}_w"), g.unique_name(f"{n.name}_b")
        g.tensors[wn] = Tensor(wn, wt.shape, data=wt.astype(np.float32))
        g.tensors[bn] = Tensor(bn, (c,), data=bias.astype(np.float32))
        new.append(Node(n.name, "Conv", [x, wn, bn], [y], {"kernel_shape": [1, 1], "strides": [1, 1],
                                                          "pads": [0, 0, 0, 0]}))
        g.nodes[idx:idx + 1] = new
    g.prune()
    return g


def _product(g: Graph, n: Node, where: str) -> Node:
    """The ``emul`` Macro node of ``Mul(a, b)`` of two tensors (the broadcast [1, C, 1, 1] operand second).
    Raises GraphError for other shapes."""
    a, b = n.inputs
    sa, sb, sy = (tuple(g.tensors[t].shape) for t in (a, b, n.outputs[0]))
    if sa != sy:
        a, b, sa, sb = b, a, sb, sa
    if len(sy) != 4 or sa != sy or sb not in (sy, (1, sy[1], 1, 1)):
        raise GraphError(f"{where}: operands of shapes {list(sa)} and {list(sb)}; a product needs equal "
                         f"[1, C, H, W] shapes or one of them [1, C, 1, 1]")
    return Node(n.name, "Macro", [a, b], list(n.outputs), {"macro": MacroAttrs(kind="emul"), "fused": [n.name]})

"""Pass: a Focus (space-to-depth by four stride-2 spatial Slices, concatenated on channels) read by one Conv ->
one Conv on the Focus input with twice the kernel and stride.

YOLOv5 (before v6.0) and YOLOX start with ``Focus``: ``cat(x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2],
x[..., 1::2, 1::2])`` then a k x k convolution, stride s, pads p. Phase j = (dy, dx) of the concat holds
``F_j[c, u, v] = x[c, 2u + dy, 2v + dx]``, so output ``(y, x)`` reads rows ``2(y*s + ky - p) + dy`` of x: the same
as a 2k x 2k convolution of x with stride 2s and pads 2p and weights ``W'[o, c, 2ky + dy, 2kx + dx] =
W[o, j*C + c, ky, kx]`` (exact; YOLOv5 v6.0 replaced Focus by its 6x6 stride-2 equivalent for the same reason).
Padding agrees too: a row outside the Focus map (u < 0 or u >= H/2) is a row outside x.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from generator.ir.graph import Graph, Node, Tensor
from generator.ir.passes.common import resolve_pads

#: the four (row, column) phases of a Focus
_PHASES = [(0, 0), (0, 1), (1, 0), (1, 1)]


@dataclass
class Focus:
    """One Focus found in a node list: the source tensor x ([1, C, H, W], H and W even), the Concat, the Conv
    reading it, the (dy, dx) phase of each concat input in order, and every Slice node of the four chains."""
    src: str
    concat: Node
    conv: Node
    phases: list
    slices: list


def _ints(n: Node, k: int, attr: str, tensors: dict):
    """Input ``k`` of ``n`` as a list of ints when it is a constant (or, in the attribute form of opset < 10,
    attribute ``attr``); None when absent or not constant."""
    if len(n.inputs) > k and n.inputs[k]:
        t = tensors.get(n.inputs[k])
        return None if t is None or t.data is None else [int(v) for v in np.asarray(t.data).ravel()]
    v = n.attrs.get(attr)
    return None if v is None else [int(x) for x in v]


def slice_phase(n: Node, tensors: dict, in_shape) -> dict | None:
    """``{axis: start}`` of a Slice taking every second row (axis 2) and / or column (axis 3) from row / column 0
    or 1 to the end of an input of shape ``in_shape`` ([1, C, H, W]); None for any other Slice."""
    starts, ends = _ints(n, 1, "starts", tensors), _ints(n, 2, "ends", tensors)
    if starts is None or ends is None or in_shape is None or len(in_shape) != 4:
        return None
    axes = _ints(n, 3, "axes", tensors) or list(range(len(starts)))
    steps = _ints(n, 4, "steps", tensors) or [1] * len(starts)
    axes = [a % 4 for a in axes]
    if not len(starts) == len(ends) == len(axes) == len(steps) or not set(axes) <= {2, 3} \
            or len(set(axes)) != len(axes):
        return None
    if steps != [2] * len(axes) or any(s not in (0, 1) for s in starts):
        return None
    if any(e < in_shape[a] for a, e in zip(axes, ends)):
        return None
    return dict(zip(axes, starts))


def _chain(t: str, prod: dict, cons: dict, tensors: dict, shape_of):
    """(source tensor, {axis: start}, Slice nodes) of the chain of at most two phase Slices producing ``t``,
    each output read only by the next; None if ``t`` is not such a chain covering both axes."""
    ph, nodes, x = {}, [], t
    while x in prod and prod[x].op == "Slice" and len(nodes) < 2:
        s = prod[x]
        p = slice_phase(s, tensors, shape_of(s.inputs[0]))
        if p is None or set(p) & set(ph) or len(cons[s.outputs[0]]) != 1:
            return None
        ph.update(p)
        nodes.append(s)
        x = s.inputs[0]
    return (x, ph, nodes) if set(ph) == {2, 3} else None


def focus_groups(nodes: list, tensors: dict, shape_of, outputs=()) -> list:
    """Every Focus in ``nodes`` (:class:`Focus`): a Concat on channels of four phase-Slice chains of one tensor x
    (:func:`slice_phase`) covering the phases (0, 0), (0, 1), (1, 0), (1, 1) once each, x of even height and
    width, read only by one Conv (group 1, dilation 1) as its data input, no intermediate a graph output.
    ``shape_of(name)`` gives a tensor's shape (None if unknown); ``tensors`` holds at least the constants."""
    prod = {o: n for n in nodes for o in n.outputs}
    cons = defaultdict(list)
    for n in nodes:
        for i in n.inputs:
            cons[i].append(n)
    found = []
    for cat in nodes:
        if cat.op != "Concat" or cat.attrs.get("axis") not in (1, -3) or len(cat.inputs) != 4:
            continue
        users = cons[cat.outputs[0]]
        if cat.outputs[0] in outputs or len(users) != 1 or users[0].op != "Conv" \
                or users[0].inputs[0] != cat.outputs[0]:
            continue
        conv = users[0]
        if conv.attrs.get("group", 1) != 1 or list(conv.attrs.get("dilations", [1, 1])) != [1, 1]:
            continue
        chains = [_chain(t, prod, cons, tensors, shape_of) for t in cat.inputs]
        if any(c is None for c in chains) or len({c[0] for c in chains}) != 1:
            continue
        phases = [(c[1][2], c[1][3]) for c in chains]
        shp = shape_of(chains[0][0])
        if sorted(phases) != _PHASES or shp is None or shp[2] % 2 or shp[3] % 2:
            continue
        if any(o in outputs for c in chains for s in c[2] for o in s.outputs):
            continue
        found.append(Focus(chains[0][0], cat, conv, phases, [s for c in chains for s in c[2]]))
    return found


def fold_focus(graph: Graph) -> Graph:
    """Replace every Focus + Conv (:func:`focus_groups`) by one Conv on the Focus input: kernel 2k, stride 2s,
    pads 2p, weights [OC, C, 2KH, 2KW] rearranged as in the module docstring (bias unchanged). Slices that are not
    part of a Focus stay (the loader refuses them; :func:`generator.frontend.onnx_loader.refusal`)."""
    g = graph.copy()
    for f in focus_groups(g.nodes, g.tensors, lambda t: g.tensors[t].shape if t in g.tensors else None,
                          g.outputs):
        conv = f.conv
        w = g.const(conv.inputs[1]).astype(np.float32)
        oc, c4, kh, kw = w.shape
        c = c4 // 4
        _, _, h, wd = g.tensors[f.src].shape
        k = [int(v) for v in (conv.attrs.get("kernel_shape") or [kh, kw])]
        s = [int(v) for v in conv.attrs.get("strides", [1, 1])]
        p = resolve_pads(conv, (h // 2, wd // 2), k, s)
        w2 = np.zeros((oc, c, 2 * kh, 2 * kw), np.float32)
        for j, (dy, dx) in enumerate(f.phases):
            w2[:, :, dy::2, dx::2] = w[:, j * c:(j + 1) * c]
        wn = g.unique_name(f"{conv.name}_focus_w")
        g.tensors[wn] = Tensor(wn, w2.shape, data=w2)
        attrs = {"kernel_shape": [2 * k[0], 2 * k[1]], "strides": [2 * s[0], 2 * s[1]], "pads": [2 * v for v in p]}
        new = Node(conv.name, "Conv", [f.src, wn] + list(conv.inputs[2:]), list(conv.outputs), attrs)
        g.nodes[g.nodes.index(conv)] = new
        for n in [f.concat] + f.slices:
            g.nodes.remove(n)
    g.prune()
    return g

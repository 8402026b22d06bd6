"""Which ONNX nodes the accelerator runs (:data:`SUPPORTED`, :func:`refusal`) and the host-side tail cut off a model
for :mod:`generator.frontend.onnx_loader` (:func:`host_tail`, :func:`cut_host_tail`; the host runs it with
:func:`host.tail.run_tail`).

Unsupported operators (and Slices / Splits off the channel axis) are a :class:`~generator.ir.graph.GraphError`
listing every such node, grouped by op type with counts (:func:`listing`), unless they form a tail that ends at graph
outputs (e.g. a YOLO decode: Reshape/Sigmoid/...); a tail op the host cannot run (:data:`host.tail.HOST_OPS`), or a
graph with nothing left for the accelerator, is a GraphError. Operator semantics: the ONNX operators' specification
(https://github.com/onnx/onnx/blob/main/docs/Operators.md), opsets 11 to 21.
"""
from __future__ import annotations

import numpy as np
import onnx

from host.tail import HOST_OPS

from generator.frontend.onnx_checks import tensor_array
from generator.ir.graph import GraphError
from generator.ir.passes.fuse_activation import SINGLE_OPS, chains, gate_of

#: the ONNX operators the accelerator runs (some only in the forms :func:`refusal` admits)
SUPPORTED = {"Conv", "BatchNormalization", "Relu", "LeakyRelu", "MaxPool", "Resize", "Upsample", "Concat",
             "Split", "Slice", "Gemm", "MatMul", "Flatten", "Identity", "Constant", "AveragePool",
             "GlobalAveragePool", "GlobalMaxPool", "Add", "Sub", "Mul", "Div"} | set(SINGLE_OPS)


def _jsonable(v):
    """An attribute value as plain JSON data (bytes -> str, tensors -> nested lists)."""
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, onnx.TensorProto):
        return tensor_array(v, f"attribute tensor {v.name!r}").tolist()
    if isinstance(v, (int, float, str)) or v is None:
        return v
    return str(v)


def _const_ints(n, k: int, attr: str, tensors: dict):
    """Integer list of node ``n``'s input ``k`` (a constant) or, for the attribute form of older opsets, of its
    attribute ``attr``; None when absent or not constant."""
    if len(n.inputs) > k and n.inputs[k]:
        t = tensors.get(n.inputs[k])
        return None if t is None or t.data is None else [int(v) for v in np.asarray(t.data).ravel()]
    v = n.attrs.get(attr)
    return None if v is None else [int(x) for x in v]


def gated(nodes: list, tensors: dict, outputs: list) -> set:
    """Names of the nodes that are an activation as PyTorch exports it: the Mul of x times a gate of x (SiLU,
    HardSwish, Mish: :func:`generator.ir.passes.fuse_activation.gate_of`) and every node of an element-wise chain
    equal to a table activation (GELU's Div, Erf, Add, Mul, Mul: :func:`~generator.ir.passes.fuse_activation.chains`)."""
    return ({n.name for n in nodes if n.op == "Mul" and gate_of(nodes, n, outputs)}
            | {c.name for _, _, _, cone in chains(nodes, tensors, outputs) for c in cone})


def decode_activations(nodes: list, outputs: list) -> set:
    """Names of the activation nodes (:data:`SINGLE_OPS` the host tail runs, not gates) from which no Conv (nor any
    op the host tail lacks, such as MaxPool) is reachable: the output decode of a detector (YOLOX's objectness and class Sigmoids feed a Concat with the box
    regression). They stay with the host tail: on the accelerator their outputs would share one scale with the raw
    boxes."""
    gates = {gn.name for n in nodes if n.op == "Mul" for gn in (gate_of(nodes, n, outputs) or (0, 0, []))[2]}
    readers = {}
    for n in nodes:
        for i in n.inputs:
            readers.setdefault(i, []).append(n)
    feeds_conv = {}

    def reaches_conv(n) -> bool:   # (or any op the host tail does not run: then the accelerator runs it all)
        if n.name not in feeds_conv:
            feeds_conv[n.name] = False
            feeds_conv[n.name] = any(r.op in ("Conv", "Gemm", "MatMul") or r.op not in HOST_OPS or reaches_conv(r)
                                     for o in n.outputs for r in readers.get(o, []))
        return feeds_conv[n.name]
    return {n.name for n in nodes if n.op in SINGLE_OPS and n.op in HOST_OPS and n.name not in gates
            and not reaches_conv(n)}


def refusal(n, tensors: dict, focus=frozenset(), host=frozenset()) -> str | None:
    """Why the accelerator cannot run node ``n`` (an IR :class:`Node` straight from ONNX), or None: an op outside
    :data:`SUPPORTED`, a Slice other than a constant channel slice (axis 1, step 1) or one of the phase slices of a
    Focus (node names in ``focus``, :func:`generator.ir.passes.fold_focus.focus_groups`), a Split on another axis,
    an Add / Sub / Mul / Div other than of two tensors (Add, Sub, Mul: equal shapes or a [1, C, 1, 1] factor) or by a
    per-channel constant."""
    if n.name in host:
        return "op"
    if n.name in focus:     # a Focus phase Slice, a gated product (SiLU, HardSwish, Mish) or a chain (GELU)
        return None
    if n.op not in SUPPORTED:
        return "op"
    if n.op == "Slice":
        starts = _const_ints(n, 1, "starts", tensors)
        axes = _const_ints(n, 3, "axes", tensors)
        steps = _const_ints(n, 4, "steps", tensors)
        if starts is None or _const_ints(n, 2, "ends", tensors) is None:
            return "non-constant starts/ends"
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        if [a % 4 for a in axes] != [1] or steps != [1]:
            return "not a channel slice (axis 1, step 1) nor part of a Focus"
    if n.op == "Split" and n.attrs.get("axis", 0) not in (1, -3):
        return "not a channel split (axis 1)"
    if n.op in ("Add", "Sub", "Mul", "Div"):
        consts = [i for i in n.inputs if i in tensors and tensors[i].is_const]
        if len(consts) == 2:
            return "two constants"
        if not consts and n.op == "Div":
            return "a quotient of two tensors"
        if not consts and n.op == "Mul":
            shapes = [tuple(tensors[i].shape) if i in tensors and tensors[i].shape else None for i in n.inputs]
            if None in shapes or not _product_shapes(*shapes):
                return "a product of tensors of shapes other than equal or [1, C, 1, 1] broadcast"
        if n.op == "Div" and consts == [n.inputs[0]]:
            return "a constant divided by a tensor"
        v = tensors[consts[0]].data if consts else None
        if v is not None and v.size != 1 and not (v.ndim in (3, 4) and v.shape[-2:] == (1, 1)
                                                  and (v.ndim == 3 or v.shape[0] == 1)):
            return "a constant that is not per channel"
    return None


def _product_shapes(sa: tuple, sb: tuple) -> bool:
    """True when the hardware multiplies tensors of shapes ``sa`` and ``sb``: equal [1, C, H, W] shapes, or one of
    them [1, C, 1, 1] broadcast over the other's pixels."""
    if len(sa) != 4 or len(sb) != 4:
        return False
    return sa == sb or sb == (1, sa[1], 1, 1) or sa == (1, sb[1], 1, 1)


def listing(bad: list, tensors: dict | None = None, width: int = 100) -> str:
    """Nodes ``bad`` grouped by op type (most frequent first) with their counts, every node named, each group one
    wrapped paragraph: ``  Slice x 8 (not a channel slice (axis 1, step 1)): a, b, ...``."""
    import textwrap
    from collections import defaultdict

    groups = defaultdict(list)
    for n in bad:
        why = refusal(n, tensors or {}) if tensors is not None else "op"
        groups[(n.op, why if why and why != "op" else "")].append(n.name)
    order = sorted(groups, key=lambda k: (-len(groups[k]), k))
    lines = []
    for op, why in order:
        head = f"{op} x {len(groups[(op, why)])}" + (f" ({why})" if why else "") + ": "
        lines.append(textwrap.fill(head + ", ".join(groups[(op, why)]), width, initial_indent="  ",
                                   subsequent_indent="    ", break_on_hyphens=False))
    return "\n".join(lines)


def _supported_text(width: int = 100) -> str:
    import textwrap

    return textwrap.fill("supported ops: " + ", ".join(sorted(SUPPORTED)), width, subsequent_indent="    ")


def host_runnable(n, tensors: dict) -> bool:
    """Whether the host tail runner (:mod:`host.tail`) runs node ``n``: an op of :data:`host.tail.HOST_OPS`; a Conv
    only as a 1x1 convolution with one output channel (a weighted sum over channels, e.g. YOLOv8's DFL expectation
    over its 16 bins), so that a network does not drift onto the host behind an unsupported activation."""
    if n.op not in HOST_OPS:
        return False
    if n.op != "Conv":
        return True
    w = tensors.get(n.inputs[1]) if len(n.inputs) > 1 else None
    a = n.attrs
    return (w is not None and w.is_const and len(w.shape) == 4 and w.shape[0] == 1 and tuple(w.shape[2:]) == (1, 1)
            and a.get("group", 1) == 1 and list(a.get("strides", [1, 1])) == [1, 1]
            and not any(a.get("pads", [0, 0, 0, 0])))


def host_tail(nodes: list, tensors: dict, focus=frozenset(), host=frozenset()) -> set:
    """Names of the nodes that form a tail ending at graph outputs (every consumer of their outputs is in the tail
    too) and must run on the host: the unsupported nodes and every node reading, directly or not, an output of one
    (an exported YOLO decode mixes Sigmoid with Concat, Mul and Split, which alone the accelerator could run). Raises
    GraphError for unsupported nodes outside such a tail (every one listed, grouped by op type, :func:`listing`), a
    tail that is the whole graph, or a tail op the host cannot run."""
    unsupported = [n for n in nodes if refusal(n, tensors, focus, host)]
    tail = set()
    if not unsupported:
        return tail
    cand = {n.name for n in unsupported}
    made = {o for n in unsupported for o in n.outputs}
    changed = True
    while changed:   # a node reading a host-side tensor cannot run on the accelerator either: the host may run it
        changed = False
        for n in nodes:
            if n.name not in cand and made & set(n.inputs) and host_runnable(n, tensors):
                cand.add(n.name)
                made.update(n.outputs)
                changed = True
    changed = True
    while changed:   # a node is in the tail if it is a candidate and every consumer of its outputs is in the tail
        changed = False
        for n in nodes:
            if n.name in cand and n.name not in tail:
                cons = [c for c in nodes if set(c.inputs) & set(n.outputs)]
                if all(c.name in tail for c in cons):
                    tail.add(n.name)
                    changed = True
    bad = [n for n in unsupported if n.name not in tail]
    if bad:
        raise GraphError(f"{len(bad)} unsupported ONNX node(s), by op type:\n{listing(bad, tensors)}\n"
                         f"{_supported_text()}")
    if len(tail) == len(nodes):
        raise GraphError(f"{len(unsupported)} unsupported ONNX node(s), by op type:\n{listing(unsupported, tensors)}"
                         f"\nno node is left for the accelerator (a host-side tail must follow accelerator layers); "
                         f"{_supported_text()}")
    host_bad = [n for n in nodes if n.name in tail and not host_runnable(n, tensors)]
    if host_bad:
        raise GraphError(f"{len(host_bad)} unsupported ONNX node(s) in the host-side tail:\n{listing(host_bad)}\n"
                         f"neither the accelerator nor the host tail runner has them (host ops: "
                         f"{', '.join(sorted(HOST_OPS))})")
    return tail


def cut_host_tail(nodes: list, tail: set, tensors: dict, inputs: list, outputs: list, shapes: dict,
                   meta: dict) -> tuple[list, list]:
    """Remove the ``tail`` nodes; record them in ``meta`` (``host_tail``, ``host_tail_inputs``,
    ``host_tail_input_shapes``, ``host_tail_consts``, see the module docstring). Returns (nodes left, graph
    outputs: those not produced in the tail, then the tensors the tail reads)."""
    tail_nodes = [n for n in nodes if n.name in tail]
    produced_in_tail = {o for n in tail_nodes for o in n.outputs}
    cut = []
    for n in tail_nodes:
        for i in n.inputs:
            if i and i not in produced_in_tail and i not in tensors and i not in cut and i not in inputs:
                cut.append(i)   # a graph input the tail reads is not an accelerator output: the host has it
    meta["host_tail"] = [{"name": n.name, "op": n.op, "inputs": n.inputs, "outputs": n.outputs,
                          "attrs": {k: _jsonable(v) for k, v in n.attrs.items()}} for n in tail_nodes]
    meta["host_tail_inputs"] = cut
    meta["host_tail_input_shapes"] = {i: list(shapes[i]) for i in cut if shapes.get(i) is not None}
    meta["host_tail_consts"] = {i: np.asarray(tensors[i].data) for n in tail_nodes for i in n.inputs
                                if i in tensors}
    meta["host_tail_outputs"] = {o: list(shapes[o]) if shapes.get(o) is not None else None for o in outputs
                                 if o in produced_in_tail}
    nodes = [n for n in nodes if n.name not in tail]
    return nodes, [o for o in outputs if o not in produced_in_tail] + cut

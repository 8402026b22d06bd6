"""Host-side execution of a model's tail that the accelerator cannot run (numpy only, as on PYNQ images).

:func:`generator.frontend.onnx_loader.load_onnx` cuts a trailing chain of unsupported ONNX nodes that only leads
to graph outputs (e.g. a YOLO decode: Sigmoid / Reshape / Transpose / Mul / Add) and records it in
``graph.metadata``: ``host_tail`` (nodes in execution order, each ``{"name", "op", "inputs", "outputs",
"attrs"}``), ``host_tail_inputs`` (the accelerator outputs the tail reads) and ``host_tail_consts``
(``{name: np.ndarray}``, the tail's constant operands). :func:`run_tail` evaluates that tail on the
dequantized accelerator outputs with ONNX semantics for the ops in :data:`HOST_OPS`.
"""
from __future__ import annotations

import numpy as np

HOST_OPS = {"Sigmoid", "Tanh", "Exp", "Relu", "LeakyRelu", "Add", "Sub", "Mul", "Div", "Pow", "Reshape", "Transpose",
            "Flatten", "Softmax", "Concat", "Split", "Slice", "Identity", "Squeeze", "Unsqueeze", "Conv"}


class HostTailError(ValueError):
    """A tail node the host cannot execute, or a tensor it needs is missing; the message names the node."""


def check_tail(nodes: list) -> None:
    """Raise :class:`HostTailError` listing every tail node (``name (Op)``) whose op is not in :data:`HOST_OPS`."""
    bad = [n for n in nodes if n["op"] not in HOST_OPS]
    if bad:
        listing = ", ".join(f"{n['name']} ({n['op']})" for n in bad)
        raise HostTailError(f"{len(bad)} host-tail node(s) the host cannot run: {listing}; host tail ops: "
                            f"{', '.join(sorted(HOST_OPS))}")


def _axes(n: dict, ins: list):
    if len(ins) > 1 and ins[1] is not None:
        return [int(a) for a in np.asarray(ins[1]).ravel()]
    a = n.get("attrs", {}).get("axes")
    return None if a is None else [int(v) for v in a]


def _run(n: dict, ins: list) -> list:
    op, a, x = n["op"], n.get("attrs", {}), ins[0]
    if op == "Sigmoid":
        return [1.0 / (1.0 + np.exp(-x))]
    if op == "Tanh":
        return [np.tanh(x)]
    if op == "Exp":
        return [np.exp(x)]
    if op == "Relu":
        return [np.maximum(x, 0)]
    if op == "LeakyRelu":
        return [np.where(x >= 0, x, x * np.float32(a.get("alpha", 0.01)))]
    if op in ("Add", "Sub", "Mul", "Div", "Pow"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": np.power}[op]
        return [f(x, ins[1]).astype(np.result_type(x, np.float32), copy=False)]
    if op in ("Split", "Slice", "Conv"):
        return _run_indexing(n, ins)
    if op == "Reshape":
        shape = [int(s) for s in np.asarray(ins[1]).ravel()]
        if not a.get("allowzero", 0):
            shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Transpose":
        perm = a.get("perm")
        return [np.transpose(x, None if perm is None else [int(p) for p in perm])]
    if op == "Flatten":
        ax = int(a.get("axis", 1)) % max(x.ndim, 1) if x.ndim else 0
        return [x.reshape(int(np.prod(x.shape[:ax])), -1)]
    if op == "Softmax":
        ax = int(a.get("axis", -1))
        e = np.exp(x - x.max(axis=ax, keepdims=True))
        return [e / e.sum(axis=ax, keepdims=True)]
    if op == "Concat":
        return [np.concatenate(ins, axis=int(a.get("axis", 0)))]
    if op == "Identity":
        return [x]
    if op == "Squeeze":
        ax = _axes(n, ins)
        return [np.squeeze(x, axis=None if ax is None else tuple(ax))]
    if op == "Unsqueeze":
        y = x
        for ax in sorted(v % (x.ndim + len(_axes(n, ins))) for v in _axes(n, ins)):
            y = np.expand_dims(y, ax)
        return [y]
    raise HostTailError(f"node {n['name']} ({op}): not a host tail op")


def _run_indexing(n: dict, ins: list) -> list:
    """Split (``split`` as input, opset 13+, or attribute), Slice (opset 10+ inputs), and Conv as a 1x1 convolution
    (group 1, stride 1, no padding: :func:`generator.frontend.onnx_loader.host_runnable` admits only those)."""
    op, a, x = n["op"], n.get("attrs", {}), ins[0]
    if op == "Split":
        ax = int(a.get("axis", 0)) % x.ndim
        sizes = ins[1] if len(ins) > 1 and ins[1] is not None else a.get("split")
        if sizes is None:
            return np.split(x, len(n["outputs"]), axis=ax)
        return np.split(x, np.cumsum([int(v) for v in np.asarray(sizes).ravel()])[:-1], axis=ax)
    if op == "Slice":
        idx = [slice(None)] * x.ndim
        starts, ends = np.asarray(ins[1]).ravel(), np.asarray(ins[2]).ravel()
        axes = np.asarray(ins[3]).ravel() if len(ins) > 3 and ins[3] is not None else range(len(starts))
        steps = np.asarray(ins[4]).ravel() if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        for st, en, ax, sp in zip(starts, ends, axes, steps):
            ax = int(ax) % x.ndim
            idx[ax] = slice(*slice(int(st), int(en), int(sp)).indices(x.shape[ax]))
        return [x[tuple(idx)]]
    w = np.asarray(ins[1], np.float32)
    if w.ndim != 4 or w.shape[2:] != (1, 1) or int(a.get("group", 1)) != 1 or any(a.get("pads", [0] * 4)) \
            or list(a.get("strides", [1, 1])) != [1, 1]:
        raise HostTailError(f"node {n['name']} (Conv): the host runs only 1x1 convolutions (group 1, stride 1, no "
                            f"padding)")
    y = np.tensordot(w[:, :, 0, 0], x, axes=([1], [1])).swapaxes(0, 1)
    if len(ins) > 2 and ins[2] is not None:
        y = y + np.asarray(ins[2]).reshape(1, -1, *([1] * (x.ndim - 2)))
    return [y.astype(np.float32)]


def run_tail(nodes: list, consts: dict, values: dict) -> dict:
    """Evaluate the host tail.

    Args:
        nodes: ``graph.metadata["host_tail"]`` (execution order).
        consts: ``graph.metadata["host_tail_consts"]``, constant operands by name (np.ndarray).
        values: float arrays of the tail's inputs by name (the dequantized accelerator outputs, NCHW with the
            batch axis, e.g. float32 [1, C, H, W]).
    Returns:
        ``{tensor name: np.ndarray}`` of every tensor the tail produced plus ``values``.
    Raises:
        HostTailError: an op outside :data:`HOST_OPS`, or an input that is neither computed nor constant.
    """
    check_tail(nodes)
    env = dict(values)
    for n in nodes:
        ins = []
        for i in n["inputs"]:
            if not i:
                ins.append(None)
            elif i in env:
                ins.append(env[i])
            elif i in consts:
                ins.append(np.asarray(consts[i]))
            else:
                raise HostTailError(f"node {n['name']} ({n['op']}): input {i!r} is not available on the host")
        for name, v in zip(n["outputs"], _run(n, ins)):
            env[name] = v if v.dtype != np.float64 or ins[0] is None or ins[0].dtype == np.float64 \
                else v.astype(np.float32)
    return env


#: ops that only move elements (the provenance of :func:`trace_sigmoid_sources` follows them)
_MOVE_OPS = {"Reshape", "Transpose", "Flatten", "Concat", "Split", "Slice", "Identity", "Squeeze", "Unsqueeze"}


def trace_sigmoid_sources(nodes: list, consts: dict, shapes: dict, output: str) -> np.ndarray:
    """Which elements of the tail's ``output`` are the Sigmoid of one input element, the rest only moving it.

    Every tensor of the tail is replayed on int64 labels instead of values: an element of input ``k`` (in the order of
    ``shapes``) at flat position ``i`` is labelled ``offset_k + i``; the ops of :data:`_MOVE_OPS` move labels as they
    move values (:func:`_run`, on the labels); a Sigmoid turns label ``v >= 0`` into ``-v - 2``; any other op, a
    constant, or a Sigmoid of anything but a plain input element gives -1. One float run of the tail on zeros gives
    the other ops' output shapes and the values of the moving ops' parameter inputs (shapes, split sizes).

    Args:
        nodes, consts: as :func:`run_tail`; shapes: {input name: its ONNX shape} (the tail's inputs, in order).
        output: the tensor whose labels are returned.
    Returns:
        int64 array of ``output``'s shape: ``-v - 2`` where the element equals ``sigmoid(input element v)`` (``v``
        indexing the inputs' elements laid end to end), otherwise a value >= -1 (-1, or ``v`` for an input element
        moved unchanged).
    Raises:
        HostTailError: as :func:`run_tail`.
    """
    with np.errstate(all="ignore"):
        floats = run_tail(nodes, consts, {k: np.zeros(s, np.float32) for k, s in shapes.items()})
    env, off = {}, 0
    for k, s in shapes.items():
        n = int(np.prod(s))
        env[k] = np.arange(off, off + n, dtype=np.int64).reshape(s)
        off += n
    for n in nodes:
        if n["op"] in _MOVE_OPS:       # data inputs as labels, the others (shape, sizes, starts) as values
            ins = [None if not i else floats[i] if i in floats else np.asarray(consts[i]) for i in n["inputs"]]
            data = len(ins) if n["op"] == "Concat" else 1
            ins[:data] = [env[i] if i in env else np.full(np.shape(x), -1, np.int64)
                          for i, x in zip(n["inputs"][:data], ins)]
            outs = _run(n, ins)
        elif n["op"] == "Sigmoid" and n["inputs"][0] in env:
            v = env[n["inputs"][0]]
            outs = [np.where(v >= 0, -v - 2, -1)]
        else:
            outs = [np.full(np.shape(floats[o]), -1, np.int64) for o in n["outputs"]]
        env.update(zip(n["outputs"], outs))
    return env[output]

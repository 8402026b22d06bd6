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

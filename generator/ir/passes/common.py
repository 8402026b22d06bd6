"""Helpers shared by the graph passes: consumer lookup, tensor rewiring, ONNX attribute reading and the
checks that turn a MaxPool / Resize / activation node into :class:`~generator.ir.graph.MacroAttrs` fields.
"""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, Node

#: ONNX activation ops the post-processing unit runs
ACT_OPS = {"Relu", "LeakyRelu", "Act"}


def single_consumer(g: Graph, t: str):
    """The only node reading tensor ``t``, or None if ``t`` has several readers, none, or is a graph output."""
    cons = g.consumers(t)
    if len(cons) == 1 and t not in g.outputs:
        return cons[0]
    return None


def rewire(g: Graph, old: str, new: str):
    """Make every node input and graph output named ``old`` read ``new`` instead (in place)."""
    for n in g.nodes:
        n.inputs = [new if i == old else i for i in n.inputs]
    g.outputs = [new if o == old else o for o in g.outputs]


def attr_str(v, default: str) -> str:
    """A string attribute value (ONNX gives bytes) as str, ``default`` when absent (None)."""
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


def resolve_pads(n: Node, in_hw, k, s, dil=(1, 1)) -> list:
    """Explicit [top, left, bottom, right] pads of a Conv/MaxPool node, ``auto_pad`` (NOTSET, VALID, SAME_UPPER,
    SAME_LOWER) resolved for the input size ``in_hw`` as ONNX defines it (SAME_UPPER puts the odd pixel at the
    end, SAME_LOWER at the beginning). ``k``: kernel [kh, kw], ``s``: strides, ``dil``: dilations.
    Raises GraphError (naming the node) for an unknown auto_pad value."""
    ap = attr_str(n.attrs.get("auto_pad"), "NOTSET")
    if ap == "NOTSET":
        return [int(v) for v in n.attrs.get("pads", [0, 0, 0, 0])]
    if ap == "VALID":
        return [0, 0, 0, 0]
    if ap not in ("SAME_UPPER", "SAME_LOWER"):
        raise GraphError(f"node {n.name} ({n.op}): unknown auto_pad {ap!r}")
    begin, end = [], []
    for i, kk, ss, dd in zip(in_hw, k, s, dil):
        total = max((-(-i // ss) - 1) * ss + (kk - 1) * dd + 1 - i, 0)
        lo = total // 2 if ap == "SAME_UPPER" else total - total // 2
        begin.append(lo)
        end.append(total - lo)
    return begin + end


def pool_attrs(n: Node, g: Graph | None = None) -> tuple:
    """(k, s, pad_end) of a MaxPool node the accelerator can run. Raises GraphError naming the node and the
    unsupported attribute: dilations, non-square window or stride, padding at the top/left or different bottom and
    right padding (after resolving auto_pad), ceil_mode where it changes the output size."""
    k = [int(v) for v in n.attrs["kernel_shape"]]
    s = [int(v) for v in n.attrs.get("strides", [1] * len(k))]
    d = [int(v) for v in n.attrs.get("dilations", [1] * len(k))]
    where = f"node {n.name} (MaxPool)"
    if len(k) != 2:
        raise GraphError(f"{where}: only 2-D pooling is supported, got kernel {k}")
    if d != [1, 1]:
        raise GraphError(f"{where}: dilations {d} are not supported (only 1)")
    if k[0] != k[1] or s[0] != s[1]:
        raise GraphError(f"{where}: only square windows and strides are supported; got kernel {k}, strides {s}")
    hw = g.tensors[n.inputs[0]].shape[2:] if g is not None and n.inputs[0] in g.tensors else None
    pads = resolve_pads(n, hw, k, s) if hw is not None else [int(v) for v in n.attrs.get("pads", [0, 0, 0, 0])]
    if pads[0] or pads[1] or pads[2] != pads[3]:
        raise GraphError(f"{where}: only padding at the bottom/right, equal on both (darknet style) is supported; "
                         f"got pads {pads} (top, left, bottom, right; auto_pad "
                         f"{attr_str(n.attrs.get('auto_pad'), 'NOTSET')})")
    if n.attrs.get("ceil_mode", 0) and hw is not None and n.outputs[0] in g.tensors:
        want = tuple(g.tensors[n.outputs[0]].shape[2:])
        floor = tuple((x + pads[2] - k[0]) // s[0] + 1 for x in hw)
        if want != floor:
            raise GraphError(f"{where}: ceil_mode=1 changes the output size here ({list(want)} instead of "
                             f"{list(floor)}); only floor rounding is supported")
    return (k[0], s[0], int(pads[2]))


def fusable_pool(n: Node, g: Graph) -> bool:
    """True when MaxPool ``n`` can be fused behind a convolution (:func:`pool_attrs` accepts it: padding only at
    the bottom/right, floor rounding); a padded pool runs as a stand-alone copy layer (:func:`standalone_pool`)."""
    try:
        pool_attrs(n, g)
    except GraphError:
        return False
    return True


def standalone_pool(n: Node, g: Graph) -> tuple[tuple, tuple | None]:
    """((k, s, pad_end), pads) of a MaxPool node run as a stand-alone copy layer: ``pads`` None when
    :func:`pool_attrs` accepts it, else the (top, left, bottom, right) padding (-inf in ONNX; the input region's
    border then holds the smallest integer, which no pooled value is below), bottom / right extended to the
    output size ``ceil_mode`` gives. Raises GraphError naming the node for dilations, non-square windows or
    strides, or a padding of k or more (a window could hold padding alone)."""
    if fusable_pool(n, g):
        return pool_attrs(n, g), None
    k = [int(v) for v in n.attrs["kernel_shape"]]
    s = [int(v) for v in n.attrs.get("strides", [1] * len(k))]
    d = [int(v) for v in n.attrs.get("dilations", [1] * len(k))]
    where = f"node {n.name} (MaxPool)"
    if len(k) != 2 or d != [1, 1] or k[0] != k[1] or s[0] != s[1]:
        pool_attrs(n, g)   # raises with the reason
    h, w = g.tensors[n.inputs[0]].shape[2:]
    pads = resolve_pads(n, (h, w), k, s)
    oh, ow = g.tensors[n.outputs[0]].shape[2:]
    pb, pr = (oh - 1) * s[0] + k[0] - h - pads[0], (ow - 1) * s[1] + k[1] - w - pads[1]
    four = (pads[0], pads[1], max(pads[2], pb), max(pads[3], pr))
    if max(four) >= k[0] or min(four) < 0:
        raise GraphError(f"{where}: padding {list(four)} (top, left, bottom, right, with ceil_mode) must be below "
                         f"the window size {k[0]}")
    return (k[0], s[0], 0), four


def _nearest_src(n_out: int, n_in: int, f: int, ctm: str, nearest_mode: str) -> np.ndarray:
    """Source index of every output index of a nearest Resize along one axis (ONNX Resize-19 semantics),
    scale ``f`` = n_out / n_in, ``ctm`` its coordinate_transformation_mode. Int [n_out]; all -1 for an
    unknown ``ctm``."""
    x = np.arange(n_out, dtype=np.float64)
    if ctm in ("half_pixel", "half_pixel_symmetric"):
        xo = (x + 0.5) / f - 0.5          # half_pixel_symmetric equals half_pixel for an exact integer scale
    elif ctm == "pytorch_half_pixel":
        xo = (x + 0.5) / f - 0.5 if n_out > 1 else np.zeros(n_out)
    elif ctm == "asymmetric":
        xo = x / f
    elif ctm == "tf_half_pixel_for_nn":
        xo = (x + 0.5) / f
    elif ctm == "align_corners":
        xo = x * (n_in - 1) / (n_out - 1) if n_out > 1 else np.zeros(n_out)
    else:
        return np.full(n_out, -1)
    frac = xo - np.floor(xo)
    if nearest_mode == "floor":
        i = np.floor(xo)
    elif nearest_mode == "ceil":
        i = np.ceil(xo)
    elif nearest_mode == "round_prefer_ceil":
        i = np.where(frac == 0.5, np.ceil(xo), np.round(xo))
    else:   # round_prefer_floor (default)
        i = np.where(frac == 0.5, np.floor(xo), np.round(xo))
    return np.clip(i, 0, n_in - 1).astype(np.int64)


def resize_factor(g: Graph, n: Node) -> int:
    """Integer nearest-upsampling factor of a Resize/Upsample node. Raises GraphError (naming the node) unless
    it is nearest, the same integer factor f on H and W, N and C unchanged, and its coordinate transformation and
    nearest_mode map output pixel x to input pixel x // f (checked index by index)."""
    mode = attr_str(n.attrs.get("mode"), "nearest")
    ctm = attr_str(n.attrs.get("coordinate_transformation_mode"), "half_pixel")
    nm = attr_str(n.attrs.get("nearest_mode"), "round_prefer_floor")   # nm: nearest_mode
    i, o = g.tensors[n.inputs[0]].shape, g.tensors[n.outputs[0]].shape
    fy, fx = o[2] / i[2], o[3] / i[3]
    where = f"node {n.name} ({n.op})"
    if mode != "nearest":
        raise GraphError(f"{where}: mode {mode} is not supported, only nearest ({list(i)} -> {list(o)})")
    if i[:2] != o[:2]:
        raise GraphError(f"{where}: resizing the batch or channel axis is not supported ({list(i)} -> {list(o)})")
    if fy != fx or fy != int(fy) or fy < 1:
        raise GraphError(f"{where}: only upsampling by the same integer factor on H and W is supported, got "
                         f"{list(i)} -> {list(o)} (factors {fy:g} x {fx:g})")
    f = int(fy)
    if n.op == "Resize":
        for ax in (2, 3):
            if not np.array_equal(_nearest_src(o[ax], i[ax], f, ctm, nm), np.arange(o[ax]) // f):
                raise GraphError(f"node {n.name} (Resize): coordinate_transformation_mode={ctm} with "
                                 f"nearest_mode={nm} does not map output pixel x to input pixel x // {f}; only "
                                 f"plain nearest upsampling (each pixel repeated {f}x{f}) is supported")
    return f


def activation_of(n: Node) -> tuple:
    """(act, alpha, beta) of a Relu / LeakyRelu / Act node (:func:`generator.ir.passes.fuse_activation`) as
    :class:`~generator.ir.graph.MacroAttrs` holds them: ("relu", 0, 0), ("leaky", negative slope, 0) or the
    table activation's name and parameters."""
    if n.op == "Act":
        return n.attrs["act"], float(n.attrs.get("alpha", 0.0)), float(n.attrs.get("beta", 0.0))
    return ("relu", 0.0, 0.0) if n.op == "Relu" else ("leaky", float(n.attrs.get("alpha", 0.01)), 0.0)

"""Graph passes. Each is a function ``Graph -> Graph`` with one job; none mutates its input or touches codegen.

Order used by :func:`run_all`: lower_pooling, fold_batchnorm, fc_to_conv, hoist_pool_above_concat,
fuse_macro, lower_standalone, assign_regions, eliminate_concat, eliminate_split, merge_pool_copies. Every pass is
checked numerically against
onnxruntime on small random graphs (tests/test_passes.py).
"""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, MacroAttrs, Node, Region, Tensor

ACT_OPS = {"Relu", "LeakyRelu"}


def _single_consumer(g: Graph, t: str):
    cons = g.consumers(t)
    if len(cons) == 1 and t not in g.outputs:
        return cons[0]
    return None


def _rewire(g: Graph, old: str, new: str):
    for n in g.nodes:
        n.inputs = [new if i == old else i for i in n.inputs]
    g.outputs = [new if o == old else o for o in g.outputs]


def lower_pooling(graph: Graph) -> Graph:
    """Rewrite pooling the accelerator has no unit for into layers it has.

    * AveragePool (k x k, stride s, symmetric padding p) and GlobalAveragePool -> a Conv with the constant weight
      ``W[c, c] = 1 / k^2`` (zero off the diagonal, no bias); it then fuses like any convolution. Exact in float:
      zero padding counts the padded pixels, so padding needs ``count_include_pad=1``.
    * GlobalMaxPool on a square H x H map -> MaxPool with an H x H window.

    Raises GraphError (naming the node) for dilations, non-square windows or strides, asymmetric padding,
    padding with count_include_pad=0, ceil_mode where it changes the output size, or a non-square GlobalMaxPool.
    """
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ("AveragePool", "GlobalAveragePool", "GlobalMaxPool")]:
        where = f"node {n.name} ({n.op})"
        _, c, h, w = g.tensors[n.inputs[0]].shape
        if n.op == "GlobalMaxPool":
            if h != w:
                raise GraphError(f"{where}: only square inputs are supported, got {h}x{w}")
            n.op, n.attrs = "MaxPool", {"kernel_shape": [h, w], "strides": [1, 1], "pads": [0, 0, 0, 0]}
            continue
        if n.op == "GlobalAveragePool":
            k, st, pads = [h, w], [1, 1], [0, 0, 0, 0]
        else:
            a = n.attrs
            k = [int(v) for v in a["kernel_shape"]]
            st = [int(v) for v in a.get("strides", [1, 1])]
            d = [int(v) for v in a.get("dilations", [1, 1])]
            pads = resolve_pads(n, (h, w), k, st, d)
            if d != [1, 1]:
                raise GraphError(f"{where}: dilations {d} are not supported (only 1)")
            if len(set(pads)) > 1:
                raise GraphError(f"{where}: only symmetric padding is supported; got pads {pads} (top, left, "
                                 f"bottom, right; auto_pad {_str(a.get('auto_pad'), 'NOTSET')})")
            if pads[0] and not a.get("count_include_pad", 0):
                raise GraphError(f"{where}: padding {pads[0]} with count_include_pad=0 (border windows divided by "
                                 f"fewer pixels) is not supported; only count_include_pad=1 or no padding")
            want = tuple(g.tensors[n.outputs[0]].shape[2:])
            floor = ((h + 2 * pads[0] - k[0]) // st[0] + 1, (w + 2 * pads[0] - k[1]) // st[1] + 1)
            if want != floor:
                raise GraphError(f"{where}: ceil_mode=1 changes the output size here ({list(want)} instead of "
                                 f"{list(floor)}); only floor rounding is supported")
        if k[0] != k[1] or st[0] != st[1]:
            raise GraphError(f"{where}: only square windows and strides are supported; got kernel {k}, "
                             f"strides {st}")
        wt = np.zeros((c, c, k[0], k[1]), np.float32)
        wt[np.arange(c), np.arange(c)] = 1.0 / (k[0] * k[1])
        wname = g.unique_name(n.name + "_wavg")
        g.tensors[wname] = Tensor(wname, wt.shape, data=wt)
        n.op, n.inputs = "Conv", [n.inputs[0], wname]
        n.attrs = {"kernel_shape": k, "strides": st, "pads": pads}
    return g


def fold_batchnorm(graph: Graph) -> Graph:
    """Fold inference BatchNormalization into the preceding Conv (weights and bias rescaled per channel).

    w' = w * gamma / sqrt(var + eps); b' = (b - mean) * gamma / sqrt(var + eps) + beta  (Ioffe & Szegedy 2015).
    A BatchNormalization that does not follow a Conv with a single consumer becomes a 1x1 Conv with the diagonal
    weight ``gamma / sqrt(var + eps)`` and that bias. Raises GraphError (naming the node) for non-constant
    statistics or an input that is not [1, C, H, W].
    """
    g = graph.copy()
    for bn in [n for n in g.nodes if n.op == "BatchNormalization"]:
        if not all(x in g.tensors and g.tensors[x].is_const for x in bn.inputs[1:5]):
            raise GraphError(f"node {bn.name} (BatchNormalization): scale, bias, mean and variance must be "
                             f"constants")
        gamma, beta, mean, var = (g.const(x).astype(np.float64) for x in bn.inputs[1:5])
        eps = float(bn.attrs.get("epsilon", 1e-5))
        k = gamma / np.sqrt(var + eps)
        conv = g.producer(bn.inputs[0])
        if conv is None or conv.op != "Conv" or _single_consumer(g, bn.inputs[0]) is not bn:
            shp = g.tensors[bn.inputs[0]].shape
            if len(shp) != 4:
                raise GraphError(f"node {bn.name} (BatchNormalization): input shape {list(shp)} is not [1, C, H, W]")
            c = shp[1]
            wname, bname = g.unique_name(bn.name + "_wdiag"), g.unique_name(bn.name + "_bdiag")
            wd = np.zeros((c, c, 1, 1), np.float32)
            wd[np.arange(c), np.arange(c), 0, 0] = k
            g.tensors[wname] = Tensor(wname, wd.shape, data=wd)
            g.tensors[bname] = Tensor(bname, (c,), data=(beta - mean * k).astype(np.float32))
            bn.op, bn.inputs = "Conv", [bn.inputs[0], wname, bname]
            bn.outputs = bn.outputs[:1]
            bn.attrs = {"kernel_shape": [1, 1], "strides": [1, 1], "pads": [0, 0, 0, 0]}
            continue
        w = g.const(conv.inputs[1]).astype(np.float64)
        b = g.const(conv.inputs[2]).astype(np.float64) if len(conv.inputs) > 2 and conv.inputs[2] else 0.0
        wname = g.unique_name(conv.name + "_wfold")
        bname = g.unique_name(conv.name + "_bfold")
        g.tensors[wname] = Tensor(wname, w.shape, data=(w * k[:, None, None, None]).astype(np.float32))
        g.tensors[bname] = Tensor(bname, k.shape, data=((b - mean) * k + beta).astype(np.float32))
        conv.inputs = [conv.inputs[0], wname, bname]
        out = bn.outputs[0]
        g.nodes.remove(bn)
        conv.outputs = [out]
    g.prune()
    return g


def fc_to_conv(graph: Graph) -> Graph:
    """Rewrite fully-connected layers (Flatten -> Gemm/MatMul) as convolutions.

    A Gemm on Flatten([1, C, H, W]) becomes a Conv with an H x W kernel producing [1, OC, 1, 1]; a following FC
    sees that 4-D tensor. Graph outputs keep their names with shape [1, OC, 1, 1] (``metadata["fc_outputs"]``).
    Raises GraphError for a Gemm with alpha/beta != 1 or transA, or whose input is not a flattened NCHW tensor.
    """
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ("Gemm", "MatMul")]:
        if n.op == "Gemm" and (n.attrs.get("alpha", 1.0) != 1.0 or n.attrs.get("beta", 1.0) != 1.0
                               or n.attrs.get("transA", 0)):
            raise GraphError(f"node {n.name} (Gemm): only alpha=1, beta=1, transA=0 is supported")
        src = g.producer(n.inputs[0])
        if src is not None and src.op == "Flatten" and src.attrs.get("axis", 1) not in (1, -3):
            raise GraphError(f"node {src.name} (Flatten): only axis 1 (flattening C, H, W of [1, C, H, W] for a "
                             f"fully connected layer) is supported, got axis {src.attrs.get('axis')}")
        if src is not None and src.op == "Flatten":
            x4 = src.inputs[0]
        elif n.op == "MatMul" and len(xs := g.tensors[n.inputs[0]].shape) == 4 and xs[1:3] != (1, 1):
            raise GraphError(f"node {n.name} (MatMul): on a 4-D tensor {list(xs)} MatMul multiplies the last axis "
                             f"only; only Flatten -> MatMul/Gemm (fully connected) is supported")
        elif len(g.tensors[n.inputs[0]].shape) == 4:
            x4 = n.inputs[0]
        elif (len(g.tensors[n.inputs[0]].shape) == 2 and src is not None and src.op in ACT_OPS | {"Identity"}
              and len(g.tensors[src.inputs[0]].shape) == 4):
            x4 = n.inputs[0]   # an activation between two FCs: [1, K] is the [1, K, 1, 1] output of the first
            g.tensors[x4].shape = tuple(g.tensors[src.inputs[0]].shape)
        else:
            raise GraphError(f"node {n.name} ({n.op}): input is not a flattened [1, C, H, W] tensor")
        _, c, h, w = g.tensors[x4].shape
        if h != w:
            raise GraphError(f"node {n.name} ({n.op}): a fully-connected layer on a non-square input [C, H, W] = "
                             f"[{c}, {h}, {w}] is not supported (it becomes an H x W convolution: H = W only)")
        if not g.tensors[n.inputs[1]].is_const or g.tensors[n.inputs[1]].data.ndim != 2:
            raise GraphError(f"node {n.name} ({n.op}): the weight {n.inputs[1]!r} must be a 2-D constant, got shape "
                             f"{list(g.tensors[n.inputs[1]].shape)}")
        wt = g.const(n.inputs[1])
        if n.op == "Gemm" and n.attrs.get("transB", 0):
            wt = wt.T
        wt = np.ascontiguousarray(wt.T)  # [OC, K]
        oc = wt.shape[0]
        if wt.shape[1] != c * h * w:
            raise GraphError(f"node {n.name} ({n.op}): weight has {wt.shape[1]} inputs, expected {c * h * w}")
        wname = g.unique_name(n.name + "_wconv")
        g.tensors[wname] = Tensor(wname, (oc, c, h, w), data=wt.reshape(oc, c, h, w).astype(np.float32))
        ins = [x4, wname]
        if n.op == "Gemm" and len(n.inputs) > 2 and n.inputs[2]:
            b = g.const(n.inputs[2]).reshape(-1)
            if b.size == 1:
                b = np.full(oc, b[0], np.float32)
            bname = g.unique_name(n.name + "_bconv")
            g.tensors[bname] = Tensor(bname, (oc,), data=b.astype(np.float32))
            ins.append(bname)
        out = n.outputs[0]
        g.tensors[out].shape = (1, oc, 1, 1)
        n.op, n.inputs, n.attrs = "Conv", ins, {"kernel_shape": [h, w], "strides": [1, 1], "pads": [0, 0, 0, 0]}
        if out in g.outputs:
            g.metadata.setdefault("fc_outputs", []).append(out)
    # activations after an FC-conv: their [1, OC] outputs are [1, OC, 1, 1] now too
    for n in g.nodes:
        if n.op in ACT_OPS and len(g.tensors[n.outputs[0]].shape) == 2 \
                and len(g.tensors[n.inputs[0]].shape) == 4:
            g.tensors[n.outputs[0]].shape = tuple(g.tensors[n.inputs[0]].shape)
            if n.outputs[0] in g.outputs:
                g.metadata.setdefault("fc_outputs", []).append(n.outputs[0])
    # a Flatten of an FC-conv output (feeding the next FC) is now a no-op on [1, OC, 1, 1]
    for f in [n for n in g.nodes if n.op == "Flatten"]:
        if not g.consumers(f.outputs[0]) and f.outputs[0] not in g.outputs:
            g.nodes.remove(f)
    g.prune()
    return g


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
            nxt = _single_consumer(g, cat.outputs[0])
            if nxt is None or nxt.op not in ACT_OPS | {"MaxPool"}:
                continue
            new_ins = []
            for k, i in enumerate(cat.inputs):
                t = g.tensors[i]
                y = g.unique_name(f"{nxt.name}_in{k}")
                node = Node(g.unique_name(f"{nxt.name}_{k}"), nxt.op, [i], [y], dict(nxt.attrs))
                shp = list(t.shape)
                if nxt.op == "MaxPool":
                    ks, st, pe = _pool_attrs(nxt, g)
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


def _str(v, default: str) -> str:
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


def resolve_pads(n: Node, in_hw, k, s, dil=(1, 1)) -> list:
    """Explicit [top, left, bottom, right] pads of a Conv/MaxPool node, ``auto_pad`` (NOTSET, VALID, SAME_UPPER,
    SAME_LOWER) resolved for the input size ``in_hw`` as ONNX defines it (SAME_UPPER puts the odd pixel at the
    end, SAME_LOWER at the beginning). Raises GraphError (naming the node) for an unknown auto_pad value."""
    ap = _str(n.attrs.get("auto_pad"), "NOTSET")
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


def _pool_attrs(n: Node, g: Graph | None = None) -> tuple:
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
                         f"{_str(n.attrs.get('auto_pad'), 'NOTSET')})")
    if n.attrs.get("ceil_mode", 0) and hw is not None and n.outputs[0] in g.tensors:
        want = tuple(g.tensors[n.outputs[0]].shape[2:])
        floor = tuple((x + pads[2] - k[0]) // s[0] + 1 for x in hw)
        if want != floor:
            raise GraphError(f"{where}: ceil_mode=1 changes the output size here ({list(want)} instead of "
                             f"{list(floor)}); only floor rounding is supported")
    return (k[0], s[0], int(pads[2]))


def _nearest_src(n_out: int, n_in: int, f: int, ctm: str, nearest_mode: str) -> np.ndarray:
    """Source index of every output index of a nearest Resize along one axis (ONNX Resize-19 semantics),
    scale ``f`` = n_out / n_in. Int [n_out]."""
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


def _resize_factor(g: Graph, n: Node) -> int:
    """Integer nearest-upsampling factor of a Resize/Upsample node. Raises GraphError (naming the node) unless
    it is nearest, the same integer factor f on H and W, N and C unchanged, and its coordinate transformation and
    nearest_mode map output pixel x to input pixel x // f (checked index by index)."""
    def s(v, d):
        v = n.attrs.get(v, d)
        return v.decode() if isinstance(v, bytes) else v
    mode, ctm, nm = s("mode", "nearest"), s("coordinate_transformation_mode", "half_pixel"), \
        s("nearest_mode", "round_prefer_floor")
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


def _act_of(n: Node) -> tuple:
    return ("relu", 0.0) if n.op == "Relu" else ("leaky", float(n.attrs.get("alpha", 0.01)))


def fuse_macro(graph: Graph) -> Graph:
    """Fuse Conv + (bias) + ReLU/LeakyReLU + MaxPool + nearest Resize chains into ``Macro`` conv layers.

    An op joins the chain only if the previous tensor has this op as its single consumer and is not a graph
    output. Requantization joins later (quantization annotates the macro node). Raises GraphError for a Conv
    with groups, dilation, non-square kernel or asymmetric padding.
    """
    g = graph.copy()
    for conv in [n for n in g.nodes if n.op == "Conv"]:
        a = conv.attrs
        where = f"node {conv.name} (Conv)"
        wshape = g.tensors[conv.inputs[1]].shape
        k = [int(v) for v in (a.get("kernel_shape") or list(wshape[2:]))]
        if len(k) != 2:
            raise GraphError(f"{where}: only 2-D convolution is supported, got kernel {k}")
        if not g.tensors[conv.inputs[1]].is_const or (len(conv.inputs) > 2 and conv.inputs[2]
                                                      and not g.tensors[conv.inputs[2]].is_const):
            raise GraphError(f"{where}: weights and bias must be constants (initializers)")
        s = [int(v) for v in a.get("strides", [1, 1])]
        d = [int(v) for v in a.get("dilations", [1, 1])]
        if a.get("group", 1) != 1:
            raise GraphError(f"{where}: group={a.get('group')} (grouped / depthwise convolution) is not supported; "
                             f"only group=1")
        if d != [1, 1]:
            raise GraphError(f"{where}: dilations {d} are not supported (only 1)")
        if k[0] != k[1] or s[0] != s[1]:
            raise GraphError(f"{where}: only square kernels and strides are supported; got kernel {k}, "
                             f"strides {s}")
        p = resolve_pads(conv, g.tensors[conv.inputs[0]].shape[2:], k, s)
        if len(set(p)) > 1:
            raise GraphError(f"{where}: only symmetric padding (the same on all four sides) is supported; got "
                             f"pads {p} (top, left, bottom, right; auto_pad {_str(a.get('auto_pad'), 'NOTSET')})")
        ma = MacroAttrs(kind="conv", kernel=int(k[0]), stride=int(s[0]), pad=int(p[0]), weight=conv.inputs[1])
        oc = g.tensors[conv.inputs[1]].shape[0]
        if len(conv.inputs) > 2 and conv.inputs[2]:
            ma.bias = conv.inputs[2]
        else:
            ma.bias = g.unique_name(conv.name + "_bzero")
            g.tensors[ma.bias] = Tensor(ma.bias, (oc,), data=np.zeros(oc, np.float32))
        cur, fused = conv.outputs[0], [conv]
        nxt = _single_consumer(g, cur)
        if nxt is not None and nxt.op in ACT_OPS:
            ma.act, ma.alpha = _act_of(nxt)
            fused.append(nxt)
            cur = nxt.outputs[0]
            nxt = _single_consumer(g, cur)
        if nxt is not None and nxt.op == "MaxPool":
            ma.pool = _pool_attrs(nxt, g)
            fused.append(nxt)
            cur = nxt.outputs[0]
            nxt = _single_consumer(g, cur)
        if nxt is not None and nxt.op in ("Resize", "Upsample"):
            ma.upsample = _resize_factor(g, nxt)
            fused.append(nxt)
            cur = nxt.outputs[0]
        idx = g.nodes.index(conv)
        macro = Node(conv.name, "Macro", [conv.inputs[0]], [cur], {"macro": ma, "fused": [f.name for f in fused]})
        for f in fused:
            g.nodes.remove(f)
        g.nodes.insert(idx, macro)
    g.prune()
    return g


def lower_standalone(graph: Graph) -> Graph:
    """Turn a MaxPool, ReLU/LeakyReLU or Resize not fused into a conv into a ``Macro`` copy layer (the ifmap
    bypasses the PE array; the post-processing unit pools / activates / upsamples). Identity ops are removed."""
    g = graph.copy()
    for n in list(g.nodes):
        if n.op == "Identity":
            _rewire(g, n.outputs[0], n.inputs[0]) if n.outputs[0] not in g.outputs else None
            if n.outputs[0] not in g.outputs:
                g.nodes.remove(n)
                continue
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy"), "fused": [n.name]}
        elif n.op == "MaxPool":
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy", pool=_pool_attrs(n, g)), "fused": [n.name]}
        elif n.op in ACT_OPS:
            act, alpha = _act_of(n)
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy", act=act, alpha=alpha), "fused": [n.name]}
        elif n.op in ("Resize", "Upsample"):
            f = _resize_factor(g, n)
            n.inputs = n.inputs[:1]
            n.op, n.attrs = "Macro", {"macro": MacroAttrs(kind="copy", upsample=f), "fused": [n.name]}
    g.prune()
    return g


def assign_regions(graph: Graph) -> Graph:
    """Give every activation tensor produced by a Macro node, and every graph input, a DDR region of its own."""
    g = graph.copy()
    g.regions = {}
    acts = list(g.inputs) + [o for n in g.nodes if n.op == "Macro" for o in n.outputs]
    for t in acts:
        _, c, h, w = g.tensors[t].shape
        g.regions[t] = Region(t, c, h, w, base_reg="INPUT" if t in g.inputs else "ACT")
        g.tensors[t].region, g.tensors[t].ch_offset = t, 0
    for n in g.nodes:
        if n.op not in ("Macro", "Concat", "Split", "Slice"):
            raise GraphError(f"node {n.name} ({n.op}) cannot run on the accelerator (not fused into a layer)")
    return g


def _insert_copy(g: Graph, src: str, before: Node) -> str:
    y = g.unique_name(src + "_copy")
    g.tensors[y] = Tensor(y, g.tensors[src].shape)
    node = Node(g.unique_name("copy_" + src), "Macro", [src], [y], {"macro": MacroAttrs(kind="copy"), "fused": []})
    g.nodes.insert(g.nodes.index(before), node)
    _, c, h, w = g.tensors[y].shape
    g.regions[y] = Region(y, c, h, w)
    g.tensors[y].region = y
    return y


def _movable(g: Graph, t: str) -> bool:
    """A tensor can be moved into a shared region if a Macro produces it and it is alone in its own region."""
    p = g.producer(t)
    tt = g.tensors[t]
    return (p is not None and p.op in ("Macro", "Concat") and tt.region == t
            and not any(o.region == t and o.name != t for o in g.tensors.values()))


def _place(g: Graph, t: str, region: str, offset: int):
    """Move tensor t (and, for a concat output, everything already placed inside it) into region at offset."""
    old = g.tensors[t].region
    for o in g.tensors.values():
        if o.region == old:
            o.ch_offset += offset
            o.region = region
    g.regions.pop(old, None)


def eliminate_concat(graph: Graph) -> Graph:
    """Remove channel Concats: the inputs are written side by side into the output's DDR region
    (channel offset + region channel stride). Where an input cannot move there (it already sits in another
    region, is a graph input or split view, or appears twice), a copy layer is inserted for it.
    Raises GraphError for a Concat on an axis other than channels."""
    g = graph.copy()
    for cat in reversed([n for n in g.nodes if n.op == "Concat"]):
        if cat.attrs.get("axis", 1) not in (1, -3):
            raise GraphError(f"node {cat.name} (Concat): only channel concatenation (axis 1) is supported")
        out = cat.outputs[0]
        if g.tensors[out].region is None:
            _, c, h, w = g.tensors[out].shape
            g.regions[out] = Region(out, c, h, w)
            g.tensors[out].region = out
        region, base = g.tensors[out].region, g.tensors[out].ch_offset
        off, seen = 0, set()
        new_inputs = []
        for i in cat.inputs:
            src = i
            if i in seen or not _movable(g, i):
                src = _insert_copy(g, i, cat)
            seen.add(i)
            _place(g, src, region, base + off)
            new_inputs.append(src)
            off += g.tensors[src].shape[1]
        cat.inputs = new_inputs
    # drop the concat nodes: consumers read the region directly
    for cat in [n for n in g.nodes if n.op == "Concat"]:
        g.nodes.remove(cat)
    g.prune()
    return g


def eliminate_split(graph: Graph) -> Graph:
    """Remove channel Split/Slice: each output becomes a view of the input's region at a channel offset.
    Raises GraphError for a split or slice on another axis or with a step other than 1."""
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ("Split", "Slice")]:
        src = g.tensors[n.inputs[0]]
        c = src.shape[1]
        if n.op == "Split":
            axis = n.attrs.get("axis", 0)
            if axis not in (1, -3):
                raise GraphError(f"node {n.name} (Split): only channel split (axis 1) is supported, got axis {axis}")
            offs, o = [], 0
            for out in n.outputs:
                offs.append(o)
                o += g.tensors[out].shape[1] if out in g.tensors else 0
        else:
            starts, ends = g.const(n.inputs[1]).tolist(), g.const(n.inputs[2]).tolist()
            axes = g.const(n.inputs[3]).tolist() if len(n.inputs) > 3 and n.inputs[3] else list(range(len(starts)))
            steps = g.const(n.inputs[4]).tolist() if len(n.inputs) > 4 and n.inputs[4] else [1] * len(starts)
            if [a % 4 for a in axes] != [1] or steps != [1]:
                raise GraphError(f"node {n.name} (Slice): only a channel slice (axis 1, step 1) is supported")
            st = int(starts[0])
            offs = [st + c if st < 0 else min(st, c)]
        for out, off in zip(n.outputs, offs):
            if out not in g.tensors:
                continue
            t = g.tensors[out]
            t.region, t.ch_offset = src.region, src.ch_offset + off
            if out in g.outputs:
                raise GraphError(f"node {n.name} ({n.op}): a split output that is a graph output is not supported")
        g.nodes.remove(n)
    g.prune()
    return g


def merge_pool_copies(graph: Graph) -> Graph:
    """Fold a stand-alone max-pool layer (k x k, stride k) that reads the whole output of a conv layer without
    pool or upsample into that conv layer as a second, pooled output: the accelerator post-processes each
    accumulator tile twice (full and pooled) instead of reading the tensor back from DDR."""
    g = graph.copy()
    for c in [n for n in g.nodes if n.op == "Macro" and n.attrs["macro"].kind == "copy"]:
        m = c.attrs["macro"]
        if not m.pool or m.pool[0] != m.pool[1] or m.pool[2] or m.act != "linear" or m.upsample != 1:
            continue
        p = g.producer(c.inputs[0])
        if p is None or p.op != "Macro" or p.outputs[0] != c.inputs[0]:
            continue
        pm = p.attrs["macro"]
        if pm.kind != "conv" or pm.pool or pm.upsample != 1:
            continue
        p.outputs.append(c.outputs[0])
        pm.side_pools.append(tuple(m.pool))
        p.attrs.setdefault("fused", []).extend(c.attrs.get("fused", []))
        g.nodes.remove(c)
    g.toposort()
    return g


def run_all(graph: Graph) -> Graph:
    """The full pass pipeline, from a loaded ONNX graph to accelerator layers over shared DDR regions."""
    g = graph
    for p in (lower_pooling, fold_batchnorm, fc_to_conv, hoist_pool_above_concat, fuse_macro, lower_standalone,
              assign_regions, eliminate_concat, eliminate_split, merge_pool_copies):
        g = p(g)
    for t in g.outputs:
        reg = g.regions[g.tensors[t].region]
        reg.base_reg = "OUTPUT"
    return g

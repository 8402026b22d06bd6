"""Float32 executor of the graph IR (before or after the passes), in numpy.

It is the float reference of the compiled graph: tests compare it with onnxruntime on the original model after
every pass, and calibration records the range of every layer output with it. Tensors in shared DDR regions are
read and written through their region (channel offset + channel count), as the accelerator does.

A Macro layer's values before its activation are its kind's float core
(:meth:`generator.kinds.base.LayerKind.float_core`, through :func:`generator.kinds.kind_of`). Its convolution and
table activation compute exactly what :func:`generator.kinds.conv.conv2d` and
:func:`generator.ir.activations.activation` compute, value for value, only faster (:func:`_conv`: the same im2col
matrix, gathered one kernel tap at a time, and the same matrix product, summed in float64 and rounded to
float32 (:func:`generator.kinds.conv.float32_matmul`: the same values on every CPU's BLAS kernel);
:func:`_table_act`: the same float64 operations on cache-sized pieces), so calibration ranges do not depend on which one ran.
"""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np

from generator.ir.graph import Graph, GraphError
from generator.ir.activations import TABLE_ACTIVATIONS, activation
from generator.kinds import kind_of
from generator.kinds.conv import conv2d, float32_matmul
from generator.ref.kernels import maxpool2d, upsample_nearest
from generator.ir.passes.common import activation_of, resolve_pads


class _Store:
    """Tensor values by name, with region-backed storage for tensors placed in shared regions."""

    def __init__(self, g: Graph):
        self.g, self.vals, self.regions = g, {}, {}

    def put(self, name: str, v: np.ndarray, own: bool = False):
        """Store tensor ``name``'s value ``v`` [1, C, H, W] (in its region's channels, if it has a region).
        ``own``: ``v`` is a new array nothing else refers to, so a tensor that fills its whole region, written
        first, becomes the region's buffer itself instead of a copy (the same values either way)."""
        t = self.g.tensors[name]
        if t.region is not None and t.region in self.g.regions:
            r = self.g.regions[t.region]
            if (own and t.region not in self.regions and t.ch_offset == 0 and v.shape[-3] == r.channels
                    and v.dtype == np.float32 and v.flags.c_contiguous):
                self.regions[t.region] = v.reshape(v.shape[-3:])
            else:
                buf = self.regions.setdefault(t.region, np.zeros((r.channels, v.shape[-2], v.shape[-1]), v.dtype))
                buf[t.ch_offset:t.ch_offset + v.shape[-3]] = v.reshape(v.shape[-3:])
        self.vals[name] = v

    def get(self, name: str) -> np.ndarray:
        t = self.g.tensors[name]
        if t.is_const:
            return t.data
        if name in self.vals and (t.region is None or t.region not in self.regions):
            return self.vals[name]
        if t.region is not None and t.region in self.regions:
            c = t.shape[1]
            return self.regions[t.region][None, t.ch_offset:t.ch_offset + c]
        if name in self.vals:
            return self.vals[name]
        raise GraphError(f"tensor {name!r} read before it was written")


_ARITH = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


#: key of a Macro node's pre-activation values in :func:`run_float`'s ``keep_all`` result (table activations only)
PRE_ACT = "{}#pre-activation"


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pad) -> np.ndarray:
    """:func:`generator.kinds.conv.conv2d` of float32 x [IC, H, W] and w [OC, IC, KH, KW] (``pad``: top, left,
    bottom, right), the same values: its im2col matrix [IC * KH * KW, OH * OW] is gathered one kernel tap (ky, kx)
    at a time (a strided copy of the padded input, not a copy of a 5-D transposed window view) and multiplied by
    the same [OC, IC * KH * KW] weight matrix. Returns float32 [OC, OH, OW]; other dtypes go to conv2d."""
    oc, ic, kh, kw = w.shape
    if x.dtype != np.float32 or w.dtype != np.float32 or x.shape[0] != ic or (kh, kw, stride) == (1, 1, 1):
        return conv2d(x, w, stride, pad)      # (a 1x1 stride-1 convolution multiplies x itself: no copy there)
    pt, pl, pb, pr = pad
    _, h, wd = x.shape
    xp = x
    if pt or pl or pb or pr:
        xp = _scratch("xp", (ic, h + pt + pb, wd + pl + pr))
        xp[:, :pt], xp[:, pt + h:], xp[:, :, :pl], xp[:, :, pl + wd:] = 0, 0, 0, 0
        xp[:, pt:pt + h, pl:pl + wd] = x
    oh, ow = (xp.shape[1] - kh) // stride + 1, (xp.shape[2] - kw) // stride + 1
    cols = _scratch("cols", (ic, kh, kw, oh, ow))
    for ky in range(kh):
        for kx in range(kw):
            cols[:, ky, kx] = xp[:, ky:ky + (oh - 1) * stride + 1:stride, kx:kx + (ow - 1) * stride + 1:stride]
    return float32_matmul(w.reshape(oc, -1), cols.reshape(ic * kh * kw, oh * ow)).reshape(oc, oh, ow)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX MatMul / Gemm's product: float32 operands through :func:`generator.kinds.conv.float32_matmul` (the
    same value on every CPU), others as numpy's ``@``."""
    return float32_matmul(a, b) if a.dtype == np.float32 and b.dtype == np.float32 else a @ b


_SCRATCH = threading.local()


def _scratch(name: str, shape: tuple) -> np.ndarray:
    """An uninitialized float32 array of ``shape`` in this thread's reusable buffer ``name`` (grown when too small;
    valid until the next call with the same name): a large temporary whose pages are not faulted in anew each
    time."""
    n = math.prod(shape)
    buf = getattr(_SCRATCH, name, None)
    if buf is None or buf.size < n:
        buf = np.empty(n, np.float32)
        setattr(_SCRATCH, name, buf)
    return buf[:n].reshape(shape)


#: elements of one piece of :func:`_table_act` (its float64 temporaries stay in the cache)
_PIECE = 1 << 15


def _table_act(y: np.ndarray, act: str, alpha: float, beta: float) -> np.ndarray:
    """:func:`generator.ir.activations.activation` of float32 ``y`` for a table activation, the same values: the
    same element-wise float64 function, on pieces of :data:`_PIECE` elements (sigmoid and SiLU, x / (1 + e^-x)
    as x * (1.0 / (1.0 + exp(-x))), into buffers reused from piece to piece). Returns float32, ``y``'s shape."""
    f = TABLE_ACTIVATIONS[act]
    src = np.ascontiguousarray(y).reshape(-1)
    out = np.empty(src.shape, np.float32)
    if act in ("sigmoid", "silu"):
        x64, t, e = (np.empty(_PIECE) for _ in range(3))
    for a in range(0, src.size, _PIECE):
        piece = src[a:a + _PIECE]
        if act not in ("sigmoid", "silu"):
            out[a:a + _PIECE] = f(piece.astype(np.float64), alpha, beta)
            continue
        k = piece.size
        x, tk, ek = x64[:k], t[:k], e[:k]
        x[...] = piece
        np.negative(x, out=tk)
        with np.errstate(over="ignore"):    # (exp(-x) = inf far below 0: the sigmoid is 0 there)
            np.exp(tk, out=ek)              # (kernels._sigmoid: 1.0 / (1.0 + np.exp(-x)))
        np.add(1.0, ek, out=tk)
        np.divide(1.0, tk, out=ek)
        if act == "silu":                   # (TABLE_ACTIVATIONS["silu"]: x * sigmoid(x))
            np.multiply(x, ek, out=ek)
        out[a:a + k] = ek
    return out.reshape(y.shape)


def _macro(g: Graph, m, x: np.ndarray, pre: dict | None = None, key: str = "", xb: np.ndarray | None = None) -> list:
    """A Macro layer on x [C, H, W] (an ``emul`` layer: times xb [C, H, W] or [C, 1, 1]): its outputs
    [1, C', H', W'] float32 (main, then the side pools); ``pre[key]`` receives the values before a table
    activation."""
    kind = kind_of(m)
    w, b = (g.const(m.weight), g.const(m.bias)) if kind.has_weights else (None, None)
    y = kind.float_core(m, x, xb, w, b, conv=_conv)
    fresh = y is not x  # y is an array of this layer's own (not x): no copy needed at the end
    if pre is not None and m.act in TABLE_ACTIVATIONS:
        pre[key] = np.asarray(y, np.float32)
    if m.act in TABLE_ACTIVATIONS and y.dtype == np.float32:
        y, fresh = _table_act(y, m.act, m.alpha, m.beta), True
    else:
        y = activation(y, m.act, m.alpha, m.beta)
    side = [maxpool2d(y, *sp)[None].astype(np.float32) for sp in m.side_pools]
    if m.pool:   # (a copy layer's pads: the pool's -inf padding)
        y = maxpool2d(y, *m.pool, pads=kind.pool_pads(m))
    y = upsample_nearest(y, m.upsample)
    return [y[None].astype(np.float32, copy=not fresh)] + side


def _maxpool_node(g: Graph, n, x: np.ndarray) -> np.ndarray:
    """ONNX MaxPool node ``n`` on x [1, C, H, W]: -inf padding (auto_pad resolved), ceil_mode as the extra
    bottom / right rows and columns the output shape needs."""
    a = n.attrs
    k, s = int(a["kernel_shape"][0]), int(a.get("strides", [1, 1])[0])
    pt, pl, pb, pr = resolve_pads(n, x.shape[2:], [k, k], [s, s])
    oh, ow = g.tensors[n.outputs[0]].shape[2:]
    pb, pr = max(pb, (oh - 1) * s + k - x.shape[2] - pt), max(pr, (ow - 1) * s + k - x.shape[3] - pl)
    return maxpool2d(x[0], k, s, pads=(pt, pl, pb, pr))[None]


def _onnx_node(g: Graph, n, ins: list) -> list:
    """The outputs of a plain ONNX node ``n`` (not a Macro) on its input values ``ins``. Raises GraphError on an op
    it does not know."""
    a = n.attrs
    if n.op == "Conv":
        s = a.get("strides", [1, 1])[0]
        p = resolve_pads(n, ins[0].shape[2:], list(ins[1].shape[2:]), [s, s])
        grp = int(a.get("group", 1))   # grouped: each group of input channels with its output channels
        ocg, icg = ins[1].shape[0] // grp, ins[0].shape[1] // grp
        y = np.concatenate([conv2d(ins[0][0][j * icg:(j + 1) * icg], ins[1][j * ocg:(j + 1) * ocg], s, tuple(p))
                            for j in range(grp)])
        if len(ins) > 2 and ins[2] is not None:
            y = y + ins[2][:, None, None]
        return [y[None]]
    if n.op == "BatchNormalization":
        gm, bt, mu, var = ins[1:5]
        k = gm / np.sqrt(var + a.get("epsilon", 1e-5))
        return [((ins[0] - mu[:, None, None]) * k[:, None, None] + bt[:, None, None]).astype(np.float32)]
    if n.op in ("Relu", "LeakyRelu", "Act"):
        return [activation(ins[0], *activation_of(n))]
    if n.op == "MaxPool":
        return [_maxpool_node(g, n, ins[0])]
    if n.op in ("Resize", "Upsample"):
        o = g.tensors[n.outputs[0]].shape
        return [upsample_nearest(ins[0][0], o[2] // ins[0].shape[2])[None]]
    if n.op in _ARITH:   # element-wise, numpy (= ONNX multidirectional) broadcasting
        return [_ARITH[n.op](ins[0], ins[1]).astype(np.float32)]
    if n.op == "Concat":
        return [np.concatenate(ins, axis=a.get("axis", 1))]
    if n.op == "Split":
        sizes = [g.tensors[o].shape[1] if o in g.tensors else None for o in n.outputs]
        if len(ins) > 1 and ins[1] is not None:
            sizes = [int(v) for v in ins[1]]
        elif None in sizes:
            sizes = [ins[0].shape[1] // len(n.outputs)] * len(n.outputs)
        return np.split(ins[0], np.cumsum(sizes)[:-1], axis=1)
    if n.op == "Slice":   # opset >= 10 form (starts, ends, axes, steps inputs)
        idx = [slice(None)] * ins[0].ndim
        axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(ins[1]))
        steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(ins[1])
        for st0, en, ax, sp in zip(ins[1], ins[2], axes, steps):
            idx[int(ax)] = slice(int(st0), int(min(en, ins[0].shape[int(ax)])), int(sp))
        return [ins[0][tuple(idx)]]
    if n.op == "Flatten":
        return [ins[0].reshape(1, -1)]
    if n.op == "Gemm":
        w = ins[1].T if a.get("transB", 0) else ins[1]
        y = _matmul(ins[0], w)
        if len(ins) > 2 and ins[2] is not None:
            y = y + ins[2]
        return [y]
    if n.op == "MatMul":
        return [_matmul(ins[0], ins[1])]
    if n.op == "Identity":
        return [ins[0]]
    raise GraphError(f"node {n.name} ({n.op}): no float implementation")


#: the open :func:`reused_runs` scope (a list of one, or empty)
_SCOPES: list = []


@contextmanager
def reused_runs(max_bytes: int):
    """Within the block, :func:`run_float` on a graph and input arrays it already ran on in the block (the same
    objects) returns that run's values again (its ``keep_all`` result is the same dict of arrays, to be read only;
    ``taps`` receives the same arrays) instead of running the graph again: calibration's passes over the same images
    (:func:`generator.quant.quantize.calibrate`, :func:`generator.quant.ranges.collect_histograms`) and bias
    correction's (:func:`generator.quant.bias.channel_means`) run each image once. The runs with ``keep_all`` are
    kept (their taps too), while their arrays total at most ``max_bytes`` bytes (a later run is not kept: asked
    again, it runs again); all are dropped at the end of the block. A block inside another one is part of the
    outer one (its runs are the outer block's)."""
    if _SCOPES:
        yield
        return
    _SCOPES.append({"max": int(max_bytes), "bytes": 0, "runs": []})
    try:
        yield
    finally:
        _SCOPES.clear()


def _kept_run(g: Graph, inputs: dict):
    """(the open :func:`reused_runs` scope or None, (keep_all result, taps) it holds for ``g`` on ``inputs`` or
    None)."""
    if not _SCOPES:
        return None, None
    scope = _SCOPES[-1]
    for g0, ins0, kept in scope["runs"]:
        if g0 is g and ins0.keys() == inputs.keys() and all(ins0[k] is v for k, v in inputs.items()):
            return scope, kept
    return scope, None


def _keep(scope: dict, g: Graph, inputs: dict, res: dict, taps: dict) -> None:
    """Keep a run's values in ``scope`` if they fit its byte budget (arrays counted once per memory owner)."""
    owners = {}
    for v in list(res.values()) + list(taps.values()):
        while isinstance(v.base, np.ndarray):
            v = v.base
        owners[id(v)] = v.nbytes
    size = sum(owners.values())
    if scope["bytes"] + size <= scope["max"]:
        scope["bytes"] += size
        scope["runs"].append((g, dict(inputs), (res, taps)))


def run_float(g: Graph, inputs: dict, keep_all: bool = False, taps: dict | None = None) -> dict:
    """Run the graph on float32 inputs (``{name: [1, C, H, W]}``).

    Returns ``{output name: array}``; with ``keep_all`` every activation tensor produced (used for calibration)
    and, per Macro node with a table activation, its values before the activation under ``PRE_ACT.format(name)``.
    ``taps``: a dict that receives, per Macro node name, its input as the node reads it (float32 [C, H, W]; used
    by bias correction). Inside :func:`reused_runs`, possibly an earlier call's values. Raises GraphError on an op
    it does not know.
    """
    scope, kept = _kept_run(g, inputs)
    if kept is None:
        store = scope is not None and keep_all      # (a run without keep_all is not kept: nothing reads it again)
        kept = _run(g, inputs, keep_all, taps is not None or store)
        if store:
            _keep(scope, g, inputs, *kept)
    res, tapped = kept
    if taps is not None:
        taps.update(tapped)
    return res if keep_all else {o: res[o] for o in g.outputs}


def _run(g: Graph, inputs: dict, keep_all: bool, tap: bool) -> tuple[dict, dict]:
    """(:func:`run_float`'s result, its taps) of one run (``tap``: record the taps, else {})."""
    st, pre_vals, taps = _Store(g), {}, {}
    for k, v in inputs.items():
        st.put(k, np.asarray(v, np.float32))
    for n in g.nodes:
        ins = [st.get(i) if i else None for i in n.inputs]
        if n.op == "Macro":
            if tap:
                taps[n.name] = ins[0][0]
            outs = _macro(g, n.attrs["macro"], ins[0][0], pre_vals if keep_all else None, PRE_ACT.format(n.name),
                          ins[1][0] if len(ins) > 1 else None)
        else:
            outs = _onnx_node(g, n, ins)
        for name, v in zip(n.outputs, outs):
            if name in g.tensors:     # (a Macro layer's outputs are new arrays of its own: _macro)
                st.put(name, np.asarray(v, np.float32), own=n.op == "Macro")
    res = {o: st.get(o) for o in g.outputs}
    if keep_all:
        res.update({k: st.get(k) for k in st.vals})
        res.update(pre_vals)
    return res, taps

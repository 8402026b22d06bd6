"""Float32 executor of the graph IR (before or after the passes), in numpy.

It is the float reference of the compiled graph: tests compare it with onnxruntime on the original model after
every pass, and calibration records the range of every layer output with it. Tensors in shared DDR regions are
read and written through their region (channel offset + channel count), as the accelerator does.
"""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError
from generator.exec.kernels import TABLE_ACTIVATIONS, activation, conv2d, maxpool2d, upsample_nearest
from generator.ir.passes.common import activation_of, resolve_pads


class _Store:
    """Tensor values by name, with region-backed storage for tensors placed in shared regions."""

    def __init__(self, g: Graph):
        self.g, self.vals, self.regions = g, {}, {}

    def put(self, name: str, v: np.ndarray):
        t = self.g.tensors[name]
        if t.region is not None and t.region in self.g.regions:
            r = self.g.regions[t.region]
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


def _macro(g: Graph, m, x: np.ndarray, pre: dict | None = None, key: str = "", xb: np.ndarray | None = None) -> list:
    """A Macro layer on x [C, H, W] (an ``emul`` layer: times xb [C, H, W] or [C, 1, 1]): its outputs
    [1, C', H', W'] float32 (main, then the side pools); ``pre[key]`` receives the values before a table
    activation."""
    if m.kind == "conv":
        y = conv2d(x, g.const(m.weight), m.stride, m.four_pads()) + g.const(m.bias)[:, None, None]
    elif m.kind == "emul":
        y = x * xb
    else:
        y = x
    if pre is not None and m.act in TABLE_ACTIVATIONS:
        pre[key] = np.asarray(y, np.float32)
    y = activation(y, m.act, m.alpha, m.beta)
    side = [maxpool2d(y, *sp)[None].astype(np.float32) for sp in m.side_pools]
    if m.pool:   # a copy layer's pads: the pool's -inf padding
        y = maxpool2d(y, *m.pool, pads=m.pads if m.kind == "copy" else None)
    y = upsample_nearest(y, m.upsample)
    return [y[None].astype(np.float32)] + side


def _maxpool_node(g: Graph, n, x: np.ndarray) -> np.ndarray:
    """ONNX MaxPool node ``n`` on x [1, C, H, W]: -inf padding (auto_pad resolved), ceil_mode as the extra
    bottom / right rows and columns the output shape needs."""
    a = n.attrs
    k, s = int(a["kernel_shape"][0]), int(a.get("strides", [1, 1])[0])
    pt, pl, pb, pr = resolve_pads(n, x.shape[2:], [k, k], [s, s])
    oh, ow = g.tensors[n.outputs[0]].shape[2:]
    pb, pr = max(pb, (oh - 1) * s + k - x.shape[2] - pt), max(pr, (ow - 1) * s + k - x.shape[3] - pl)
    return maxpool2d(x[0], k, s, pads=(pt, pl, pb, pr))[None]


def run_float(g: Graph, inputs: dict, keep_all: bool = False, taps: dict | None = None) -> dict:
    """Run the graph on float32 inputs (``{name: [1, C, H, W]}``).

    Returns ``{output name: array}``; with ``keep_all`` every activation tensor produced (used for calibration)
    and, per Macro node with a table activation, its values before the activation under ``PRE_ACT.format(name)``.
    ``taps``: a dict that receives, per Macro node name, its input as the node reads it (float32 [C, H, W]; used
    by bias correction). Raises GraphError on an op it does not know.
    """
    st, pre_vals = _Store(g), {}
    for k, v in inputs.items():
        st.put(k, np.asarray(v, np.float32))
    for n in g.nodes:
        ins = [st.get(i) if i else None for i in n.inputs]
        a = n.attrs
        if n.op == "Macro":
            if taps is not None:
                taps[n.name] = ins[0][0]
            outs = _macro(g, a["macro"], ins[0][0], pre_vals if keep_all else None, PRE_ACT.format(n.name),
                          ins[1][0] if len(ins) > 1 else None)
        elif n.op == "Conv":
            s = a.get("strides", [1, 1])[0]
            p = resolve_pads(n, ins[0].shape[2:], list(ins[1].shape[2:]), [s, s])
            grp = int(a.get("group", 1))   # grouped: each group of input channels with its output channels
            ocg, icg = ins[1].shape[0] // grp, ins[0].shape[1] // grp
            y = np.concatenate([conv2d(ins[0][0][j * icg:(j + 1) * icg], ins[1][j * ocg:(j + 1) * ocg], s, tuple(p))
                                for j in range(grp)])
            if len(ins) > 2 and ins[2] is not None:
                y = y + ins[2][:, None, None]
            outs = [y[None]]
        elif n.op == "BatchNormalization":
            gm, bt, mu, var = ins[1:5]
            k = gm / np.sqrt(var + a.get("epsilon", 1e-5))
            outs = [((ins[0] - mu[:, None, None]) * k[:, None, None] + bt[:, None, None]).astype(np.float32)]
        elif n.op in ("Relu", "LeakyRelu", "Act"):
            outs = [activation(ins[0], *activation_of(n))]
        elif n.op == "MaxPool":
            outs = [_maxpool_node(g, n, ins[0])]
        elif n.op in ("Resize", "Upsample"):
            o = g.tensors[n.outputs[0]].shape
            outs = [upsample_nearest(ins[0][0], o[2] // ins[0].shape[2])[None]]
        elif n.op in _ARITH:   # element-wise, numpy (= ONNX multidirectional) broadcasting
            outs = [_ARITH[n.op](ins[0], ins[1]).astype(np.float32)]
        elif n.op == "Concat":
            outs = [np.concatenate(ins, axis=a.get("axis", 1))]
        elif n.op == "Split":
            sizes = [g.tensors[o].shape[1] if o in g.tensors else None for o in n.outputs]
            if len(ins) > 1 and ins[1] is not None:
                sizes = [int(v) for v in ins[1]]
            elif None in sizes:
                sizes = [ins[0].shape[1] // len(n.outputs)] * len(n.outputs)
            outs = np.split(ins[0], np.cumsum(sizes)[:-1], axis=1)
        elif n.op == "Slice":   # opset >= 10 form (starts, ends, axes, steps inputs)
            idx = [slice(None)] * ins[0].ndim
            axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(ins[1]))
            steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(ins[1])
            for st0, en, ax, sp in zip(ins[1], ins[2], axes, steps):
                idx[int(ax)] = slice(int(st0), int(min(en, ins[0].shape[int(ax)])), int(sp))
            outs = [ins[0][tuple(idx)]]
        elif n.op == "Flatten":
            outs = [ins[0].reshape(1, -1)]
        elif n.op == "Gemm":
            w = ins[1].T if a.get("transB", 0) else ins[1]
            y = ins[0] @ w
            if len(ins) > 2 and ins[2] is not None:
                y = y + ins[2]
            outs = [y]
        elif n.op == "MatMul":
            outs = [ins[0] @ ins[1]]
        elif n.op == "Identity":
            outs = [ins[0]]
        else:
            raise GraphError(f"node {n.name} ({n.op}): no float implementation")
        for name, v in zip(n.outputs, outs):
            if name in g.tensors:
                st.put(name, np.asarray(v, np.float32))
    res = {o: st.get(o) for o in g.outputs}
    if keep_all:
        res.update({k: st.get(k) for k in st.vals})
        res.update(pre_vals)
    return res

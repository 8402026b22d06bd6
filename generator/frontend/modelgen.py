"""Small ONNX graphs built with onnx.helper (random weights from a seeded generator), for the tests and the
fuzzer (:mod:`generator.eval.fuzz`)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh


class Builder:
    """Accumulates nodes/initializers; ``model()`` returns a checked ONNX model (IR 8, opset ``opset``, default 13;
    the layer methods write opset-13 forms, the same in opsets 11 to 21 except Split, whose sizes became an input).

    The graph input is the float32 tensor ``name`` of shape ``in_shape`` ([1, C, H, W]). Every layer method takes
    input tensor names and returns the name of its output (``split``: a list), whose NCHW shape it records in
    ``shapes``. Legend of the arguments: ``oc`` output channels, ``k`` kernel / window size, ``s`` stride, ``p``
    symmetric padding (default k // 2), ``f`` upsampling factor, ``scale`` weight standard deviation (default
    1 / sqrt(fan-in)).
    """

    def __init__(self, in_shape, seed=0, name="x", opset=13):
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0
        self.inp = (name, list(in_shape))
        self.shapes = {name: list(in_shape)}

    def _n(self, prefix):
        """A fresh tensor name: ``prefix`` and a running number."""
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, arr, prefix="c"):
        """An initializer holding ``arr``; returns its name."""
        n = self._n(prefix)
        self.inits.append(nh.from_array(np.asarray(arr), n))
        return n

    def conv(self, x, oc, k=3, s=1, p=None, bias=True, scale=None, auto_pad=None):
        """Conv k x k stride s; ``p``: pads on every side (default k // 2) or [top, left, bottom, right];
        ``auto_pad``: SAME_UPPER / SAME_LOWER / VALID instead of pads."""
        ic = self.shapes[x][1]
        p = k // 2 if p is None else p
        pads = [p] * 4 if np.isscalar(p) else list(p)
        scale = scale or 1.0 / np.sqrt(ic * k * k)
        w = self.const((self.rng.standard_normal((oc, ic, k, k)) * scale).astype(np.float32), "w")
        ins = [x, w]
        if bias:
            ins.append(self.const((self.rng.standard_normal(oc) * 0.1).astype(np.float32), "b"))
        y = self._n("conv")
        H, W = self.shapes[x][2:]
        if auto_pad:
            self.nodes.append(h.make_node("Conv", ins, [y], kernel_shape=[k, k], strides=[s, s], auto_pad=auto_pad))
            self.shapes[y] = [1, oc] + ([-(-H // s), -(-W // s)] if auto_pad != "VALID"
                                        else [(H - k) // s + 1, (W - k) // s + 1])
            return y
        self.nodes.append(h.make_node("Conv", ins, [y], kernel_shape=[k, k], strides=[s, s], pads=pads))
        self.shapes[y] = [1, oc, (H + pads[0] + pads[2] - k) // s + 1, (W + pads[1] + pads[3] - k) // s + 1]
        return y

    def bn(self, x):
        c = self.shapes[x][1]
        r = self.rng
        ins = [x] + [self.const(v.astype(np.float32), "bn") for v in (
            r.uniform(0.5, 1.5, c), r.standard_normal(c) * 0.1, r.standard_normal(c) * 0.1, r.uniform(0.5, 2, c))]
        y = self._n("bn")
        self.nodes.append(h.make_node("BatchNormalization", ins, [y], epsilon=1e-5))
        self.shapes[y] = list(self.shapes[x])
        return y

    def unary(self, op, x, **attrs):
        y = self._n(op.lower())
        self.nodes.append(h.make_node(op, [x], [y], **attrs))
        self.shapes[y] = list(self.shapes[x])
        return y

    def leaky(self, x):
        return self.unary("LeakyRelu", x, alpha=0.1)

    def relu(self, x):
        return self.unary("Relu", x)

    def act(self, x, kind):
        """A table activation as exporters write it: ``silu`` (Sigmoid, Mul), ``mish`` (Softplus, Tanh, Mul),
        ``hardswish_mul`` (HardSigmoid alpha 1/6, Mul: PyTorch before opset 14), or an ONNX op name (Sigmoid, Tanh,
        HardSigmoid, HardSwish (opset >= 14), Softplus, Elu, Mish (opset >= 18), Gelu (opset >= 20; ``gelu_tanh_op``:
        approximate "tanh")); GELU as PyTorch exports it before opset 20: ``gelu_erf`` (Div by sqrt 2, Erf, Add 1,
        Mul x, Mul 0.5), ``gelu_tanh`` (x * x * x by Muls, Mul 0.044715, Add x, Mul sqrt(2/pi), Tanh, Add 1, Mul x,
        Mul 0.5), ``gelu_tanh_pow`` (the cube as Pow 3)."""
        if kind.startswith("gelu"):
            return self._gelu(x, kind)
        if kind == "silu":
            return self.op("Mul", [x, self.unary("Sigmoid", x)], self.shapes[x])
        if kind == "mish":
            return self.op("Mul", [x, self.unary("Tanh", self.unary("Softplus", x))], self.shapes[x])
        if kind == "hardswish_mul":
            return self.op("Mul", [x, self.unary("HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5)], self.shapes[x])
        return self.unary(kind, x)

    def _gelu(self, x, kind):
        """GELU of ``x`` in one of the exported forms of :meth:`act`."""
        shp = self.shapes[x]

        def c(v):
            return self.const(np.array(v, np.float32), "k")

        def bin_(op, a, b):
            return self.op(op, [a, b], list(shp))
        if kind == "gelu_tanh_op":
            return self.unary("Gelu", x, approximate="tanh")
        if kind == "gelu_erf":
            e = self.unary("Erf", bin_("Div", x, c(1.4142135623730951)))
            return bin_("Mul", bin_("Mul", x, bin_("Add", e, c(1.0))), c(0.5))
        cube = bin_("Pow", x, c(3.0)) if kind == "gelu_tanh_pow" else bin_("Mul", x, bin_("Mul", x, x))
        inner = bin_("Mul", c(0.7978845608028654), bin_("Add", x, bin_("Mul", c(0.044715), cube)))
        return bin_("Mul", c(0.5), bin_("Mul", x, bin_("Add", c(1.0), self.unary("Tanh", inner))))

    def maxpool(self, x, k=2, s=2, pad_end=0, pads=None, ceil_mode=0):
        """MaxPool k x k stride s; ``pads`` (top, left, bottom, right), default [0, 0, pad_end, pad_end]."""
        y = self._n("pool")
        pt, pl, pb, pr = pads if pads is not None else (0, 0, pad_end, pad_end)
        self.nodes.append(h.make_node("MaxPool", [x], [y], kernel_shape=[k, k], strides=[s, s],
                                      pads=[pt, pl, pb, pr], ceil_mode=ceil_mode))
        n, c, H, W = self.shapes[x]
        rnd = (lambda a: -(-a // s)) if ceil_mode else (lambda a: a // s)
        oh, ow = rnd(H + pt + pb - k) + 1, rnd(W + pl + pr - k) + 1
        if ceil_mode:   # ONNX: the last window must start inside the input or the top/left padding
            oh, ow = oh - ((oh - 1) * s >= H + pt), ow - ((ow - 1) * s >= W + pl)
        self.shapes[y] = [n, c, oh, ow]
        return y

    def upsample(self, x, f=2):
        y = self._n("up")
        sc = self.const(np.array([1, 1, f, f], np.float32), "sc")
        roi = "" if self.opset >= 13 else self.const(np.zeros(0, np.float32), "roi")   # required before opset 13
        self.nodes.append(h.make_node("Resize", [x, roi, sc], [y], mode="nearest",
                                      coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
        n, c, H, W = self.shapes[x]
        self.shapes[y] = [n, c, H * f, W * f]
        return y

    def concat(self, *xs):
        y = self._n("cat")
        self.nodes.append(h.make_node("Concat", list(xs), [y], axis=1))
        s = list(self.shapes[xs[0]])
        s[1] = sum(self.shapes[x][1] for x in xs)
        self.shapes[y] = s
        return y

    def split(self, x, parts=2):
        c = self.shapes[x][1]
        ys = [self._n("split") for _ in range(parts)]
        sz = self.const(np.array([c // parts] * parts, np.int64), "sz")
        self.nodes.append(h.make_node("Split", [x, sz], ys, axis=1))
        for y in ys:
            self.shapes[y] = [1, c // parts] + self.shapes[x][2:]
        return ys

    def fc(self, x, oc, scale=None):
        """Flatten [1, C, H, W] -> Gemm with OC outputs (a quantized fully-connected layer); returns [1, OC]."""
        f = self._n("flat")
        self.nodes.append(h.make_node("Flatten", [x], [f], axis=1))
        self.shapes[f] = [1, int(np.prod(self.shapes[x][1:]))]
        return self.fc_next(f, oc, scale)

    def fc_next(self, x, oc, scale=None):
        """Gemm on a [1, K] tensor (a second fully-connected layer); returns [1, OC]."""
        k = self.shapes[x][1]
        scale = scale or 1.0 / np.sqrt(k)
        w = self.const((self.rng.standard_normal((k, oc)) * scale).astype(np.float32), "w")
        b = self.const((self.rng.standard_normal(oc) * 0.1).astype(np.float32), "b")
        y = self._n("gemm")
        self.nodes.append(h.make_node("Gemm", [x, w, b], [y]))
        self.shapes[y] = [1, oc]
        return y

    def slice(self, x, start, end):
        y = self._n("slice")
        ins = [x, self.const(np.array([start], np.int64)), self.const(np.array([end], np.int64)),
               self.const(np.array([1], np.int64))]
        self.nodes.append(h.make_node("Slice", ins, [y]))
        self.shapes[y] = [1, end - start] + self.shapes[x][2:]
        return y

    def focus(self, x, one_slice=False):
        """YOLOv5 / YOLOX ``Focus`` as PyTorch exports it: ``cat(x[..., ::2, ::2], x[..., 1::2, ::2],
        x[..., ::2, 1::2], x[..., 1::2, 1::2])`` on channels, each phase two Slices (rows, then columns; ends
        INT64_MAX) or, with ``one_slice``, one Slice over both axes. H and W even."""
        n, c, H, W = self.shapes[x]
        big = np.iinfo(np.int64).max
        outs = []
        for dy, dx in ((0, 0), (1, 0), (0, 1), (1, 1)):
            steps = [(2, dy, H), (3, dx, W)]
            parts = [steps] if one_slice else [[st] for st in steps]
            t = x
            for part in parts:
                y = self._n("slice")
                ins = [t, self.const(np.array([p[1] for p in part], np.int64)),
                       self.const(np.array([big] * len(part), np.int64)),
                       self.const(np.array([p[0] for p in part], np.int64)), self.const(np.array([2] * len(part),
                                                                                                   np.int64))]
                self.nodes.append(h.make_node("Slice", ins, [y]))
                shp = list(self.shapes[t])
                for ax, st, size in part:
                    shp[ax] = (size - st + 1) // 2
                self.shapes[y] = shp
                t = y
            outs.append(t)
        return self.concat(*outs)

    def op(self, op, inputs, out_shape, **attrs):
        y = self._n(op.lower())
        self.nodes.append(h.make_node(op, inputs, [y], **attrs))
        self.shapes[y] = out_shape
        return y

    def model(self, outputs, check=True):
        g = h.make_graph(self.nodes, "test", [h.make_tensor_value_info(self.inp[0], TP.FLOAT, self.inp[1])],
                         [h.make_tensor_value_info(o, TP.FLOAT, self.shapes[o]) for o in outputs], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)])
        m.ir_version = 8
        if check:   # check=False: deliberately malformed models (the fuzzer's degenerate cases)
            onnx.checker.check_model(m, full_check=True)
        return m


def ort_run(m, x):
    """onnxruntime outputs of model ``m`` on input ``x`` ({output name: array})."""
    import onnxruntime as ort

    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in m.graph.output]
    return dict(zip(names, s.run(names, {m.graph.input[0].name: x})))

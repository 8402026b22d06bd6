"""YOLOv5n-, YOLOX-nano- and YOLOv8n-shaped ONNX graphs with random weights, in the structure PyTorch exports
(opset 12 or 17), decode included, for the tests: no real weights of these families ship in the registries used
here (``../shared/DATA.md``). Channel widths and block counts follow the nano models (width 0.25, depth 0.33);
the input is square (``size``, a multiple of 32; 640 in the originals).

* ``yolov5n`` (ultralytics/yolov5 v7.0 ``models/yolov5n.yaml``): 6x6 stride-2 stem, C3 blocks, SPPF, PANet, three
  anchor heads; export decode ``Detect``: reshape, permute, sigmoid, split, ``(xy * 2 + grid) * stride``,
  ``(wh * 2) ** 2 * anchor_grid`` -> [1, N, 5 + classes].
* ``yolox_nano`` (Megvii YOLOX ``yolox_nano.py``): Focus stem, depthwise-separable convolutions, CSP layers, SPP,
  PAFPN, decoupled heads; ``decode_in_inference``: ``cat(reg, sigmoid(obj), sigmoid(cls))``, flatten, transpose,
  ``(xy + grid) * stride``, ``exp(wh) * stride`` -> [1, N, 5 + classes].
* ``yolov8n`` (ultralytics 8 ``yolov8n.yaml``): C2f blocks, SPPF, anchor-free decoupled heads with DFL (16 bins);
  export decode: softmax over the bins, the DFL 1x1 convolution with weights 0..15, ``dist2bbox`` (xywh) times the
  stride -> [1, 4 + classes, N].

``act``: ``"silu"`` as the exporters write it (Sigmoid then Mul; POST runs it through its activation table) or
``"leaky"`` (LeakyReLU 0.1). The decode runs on the host (:mod:`host.tail`);
:mod:`host.exported` turns its output into detections. The class names go into the ``names`` metadata as
Ultralytics writes it.

Usage: ``python -m generator.frontend.yolo_family yolov5n out.onnx [--size 128] [--act silu|leaky] [--opset 17]``.
"""
from __future__ import annotations

import argparse

import numpy as np
import onnx
from onnx import helper as h

from generator.frontend.modelgen import Builder

FAMILIES = ("yolov5n", "yolox_nano", "yolov8n")
V5_ANCHORS = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
STRIDES = (8, 16, 32)


class _Net(Builder):
    """A :class:`Builder` with the blocks of the three families (Conv = conv + BN + activation)."""

    def __init__(self, size, seed, act, opset, dynamic=False):
        super().__init__([1, 3, size, size], seed=seed, name="images", opset=opset)
        self.act_kind = act
        self.dynamic = dynamic

    def act(self, x):
        if self.act_kind == "leaky":
            return self.leaky(x)
        return self.op("Mul", [x, self.unary("Sigmoid", x)], list(self.shapes[x]))

    def cba(self, x, c, k=1, s=1, groups=1, p=None, wscale=1.0):
        """Conv (no bias) + BatchNormalization + activation, padding ``p`` (default k // 2), ``groups``
        (depthwise: = channels), weights of standard deviation ``wscale / sqrt(fan-in)``."""
        p = k // 2 if p is None else p
        ic = self.shapes[x][1]
        w = self.const((self.rng.standard_normal((c, ic // groups, k, k)) * wscale / np.sqrt(ic // groups * k * k))
                       .astype(np.float32), "w")
        _, _, hh, ww = self.shapes[x]
        o = (hh + 2 * p - k) // s + 1, (ww + 2 * p - k) // s + 1
        y = self.op("Conv", [x, w], [1, c, *o], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                    group=groups)
        return self.act(self.bn(y))

    def split2(self, x, sizes, axis=1):
        """Split into ``sizes`` along ``axis`` in the opset's form (attribute before 13, input from 13)."""
        outs = [self._n("split") for _ in sizes]
        if self.opset < 13:
            self.nodes.append(h.make_node("Split", [x], outs, axis=axis, split=list(sizes)))
        else:
            self.nodes.append(h.make_node("Split", [x, self.const(np.array(sizes, np.int64), "sz")], outs,
                                          axis=axis))
        for o, n in zip(outs, sizes):
            shp = list(self.shapes[x])
            shp[axis] = n
            self.shapes[o] = shp
        return outs

    def bottleneck(self, x, c, shortcut=True, k=3, dw=False):
        y = self.cba(x, c, 1)
        y = self.dwconv(y, c, k, 1) if dw else self.cba(y, c, k)
        return self.op("Add", [x, y], list(self.shapes[x])) if shortcut else y

    def dwconv(self, x, c, k, s):
        """YOLOX DWConv: depthwise k x k + BN + act, then pointwise 1x1 + BN + act."""
        return self.cba(self.cba(x, self.shapes[x][1], k, s, groups=self.shapes[x][1]), c, 1)

    def c3(self, x, c, n, shortcut=True, dw=False):
        """YOLOv5 C3 / YOLOX CSPLayer: cv3(cat(m(cv1(x)), cv2(x)))."""
        a = self.cba(x, c // 2, 1)
        for _ in range(n):
            a = self.bottleneck(a, c // 2, shortcut, dw=dw)
        return self.cba(self.concat(a, self.cba(x, c // 2, 1)), c, 1)

    def c2f(self, x, c, n, shortcut=True):
        """YOLOv8 C2f: cv1 -> split in two halves, n bottlenecks on the last, cat of all, cv2."""
        ys = self.split2(self.cba(x, c, 1), [c // 2, c // 2])
        for _ in range(n):
            ys.append(self.bottleneck(ys[-1], c // 2, shortcut))
        return self.cba(self.concat(*ys), c, 1)

    def sppf(self, x, c, k=5):
        a = self.cba(x, self.shapes[x][1] // 2, 1)
        p1 = self.maxpool(a, k, 1, pads=[k // 2] * 4)
        p2 = self.maxpool(p1, k, 1, pads=[k // 2] * 4)
        p3 = self.maxpool(p2, k, 1, pads=[k // 2] * 4)
        return self.cba(self.concat(a, p1, p2, p3), c, 1)

    def spp(self, x, c, ks=(5, 9, 13)):
        a = self.cba(x, self.shapes[x][1] // 2, 1)
        return self.cba(self.concat(a, *[self.maxpool(a, k, 1, pads=[k // 2] * 4) for k in ks]), c, 1)

    def head_conv(self, x, c, bias=0.0):
        """The prediction 1x1 convolution (no activation) with its bias set as the families initialize it (a low
        prior for objectness and classes, so that random weights give few detections); ``bias``: scalar or [c]."""
        ic = self.shapes[x][1]
        w = self.const((self.rng.standard_normal((c, ic, 1, 1)) * 4.0 / np.sqrt(ic)).astype(np.float32), "w")
        b = self.const_f(np.broadcast_to(np.asarray(bias, np.float32), (c,)).copy())
        return self.op("Conv", [x, w, b], [1, c, *self.shapes[x][2:]], kernel_shape=[1, 1])

    def const_f(self, arr):
        return self.const(np.asarray(arr, np.float32))

    def reshape(self, x, shape, dims=None):
        """Reshape ``x`` to ``shape``; with ``dims`` (dynamic export) the target is computed at run time instead:
        ``dims`` lists per axis an int or (tensor, axis), that axis of that tensor read by Shape (as torch.onnx traces
        ``x.view(b, 4, c, a)`` with ``b, _, a = x.shape``)."""
        if dims is None or not self.dynamic:
            return self.op("Reshape", [x, self.const(np.array(shape, np.int64), "shape")], list(shape))
        return self.op("Reshape", [x, self.shape_of(dims)], list(shape))

    def dim(self, x, axis):
        """int64 [1]: axis ``axis`` of tensor ``x`` at run time (Shape then Gather)."""
        s = self.op("Shape", [x], [len(self.shapes[x])])
        return self.op("Gather", [s, self.const(np.array([axis], np.int64), "ax")], [1], axis=0)

    def shape_of(self, dims):
        """int64 [len(dims)]: the Concat of ``dims``, each an int (a constant) or (tensor, axis) (:meth:`dim`)."""
        parts = [self.dim(*d) if isinstance(d, tuple) else self.const(np.array([d], np.int64), "d") for d in dims]
        return self.op("Concat", parts, [len(dims)], axis=0)

    def scalar(self, x):
        """An int64 [1] tensor as a scalar (Reshape to shape [])."""
        return self.op("Reshape", [x, self.const(np.zeros(0, np.int64), "shape")], [])

    def dyn_anchors(self, o, stride):
        """Ultralytics ``make_anchors`` as a dynamic export traces it for level ``o`` [1, C, ny, nx]: cell centres
        (Range over the level's height and width read by Shape, + 0.5) [ny * nx, 2] (x, y), and the stride
        (ConstantOfShape of ny * nx: the int64 Mul ``/model.22/Mul`` of a YOLOv8 export) [ny * nx, 1]."""
        hh, ww = self.dim(o, 2), self.dim(o, 3)
        zero, one = self.const(np.array(0, np.int64), "r"), self.const(np.array(1, np.int64), "r")
        half = self.const_f(0.5)
        cx = self.op("Add", [self.op("Cast", [self.op("Range", [zero, self.scalar(ww), one], [None])], [None],
                                     to=onnx.TensorProto.FLOAT), half], [None])
        cy = self.op("Add", [self.op("Cast", [self.op("Range", [zero, self.scalar(hh), one], [None])], [None],
                                     to=onnx.TensorProto.FLOAT), half], [None])
        grid = self.op("Concat", [hh, ww], [2], axis=0)
        row, col = (self.const(np.array(v, np.int64), "shape") for v in ([1, -1], [-1, 1]))
        ax = self.op("Expand", [self.op("Reshape", [cx, row], [None]), grid], [None])
        ay = self.op("Expand", [self.op("Reshape", [cy, col], [None]), grid], [None])
        anc = self.op("Concat", [self.op("Reshape", [ax, col], [None]), self.op("Reshape", [ay, col], [None])],
                      [None], axis=1)
        hw = self.op("Mul", [hh, ww], [1], name=f"/model.22/Mul{'' if stride == 8 else f'_{stride}'}")
        st = self.op("ConstantOfShape", [self.op("Concat", [hw, self.const(np.array([1], np.int64), "d")], [2],
                                                 axis=0)], [None],
                     value=onnx.helper.make_tensor("value", onnx.TensorProto.FLOAT, [1], [float(stride)]))
        return anc, st


def _grid(ny, nx):
    """Cell coordinates [ny, nx, 2] (x, y) as float32."""
    yv, xv = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
    return np.stack([xv, yv], -1).astype(np.float32)


def _pan(n: _Net, p3, p4, p5, widths, block):
    """The PANet / PAFPN neck shared by the three: top-down with upsampling, bottom-up with stride-2 convs.
    Returns the three level outputs (strides 8, 16, 32)."""
    c3, c4, c5 = widths
    t5 = n.cba(p5, c4, 1)
    a4 = block(n.concat(n.upsample(t5), p4), c4)
    t4 = n.cba(a4, c3, 1)
    o3 = block(n.concat(n.upsample(t4), p3), c3)
    o4 = block(n.concat(n.cba(o3, c3, 3, 2), t4), c4)
    o5 = block(n.concat(n.cba(o4, c4, 3, 2), t5), c5)
    return o3, o4, o5


def _v5_decode(n: _Net, outs, nc):
    no, levels = 5 + nc, []
    for x, s, anc in zip(outs, STRIDES, V5_ANCHORS):
        _, _, ny, nx = n.shapes[x]
        p = n.op("Transpose", [n.reshape(x, [1, 3, no, ny, nx])], [1, 3, ny, nx, no], perm=[0, 1, 3, 4, 2])
        xy, wh, conf = n.split2(n.unary("Sigmoid", p), [2, 2, nc + 1], axis=4)
        grid = (_grid(ny, nx)[None, None] - 0.5).repeat(3, axis=1)
        agrid = np.asarray(anc, np.float32).reshape(1, 3, 1, 1, 2).repeat(ny, 2).repeat(nx, 3)
        shp = [1, 3, ny, nx, 2]
        xy = n.op("Mul", [n.op("Add", [n.op("Mul", [xy, n.const_f(2.0)], shp), n.const_f(grid)], shp),
                          n.const_f(float(s))], shp)
        wh = n.op("Mul", [n.op("Pow", [n.op("Mul", [wh, n.const_f(2.0)], shp), n.const_f(2.0)], shp),
                          n.const_f(agrid)], shp)
        y = n.op("Concat", [xy, wh, conf], [1, 3, ny, nx, no], axis=4)
        levels.append(n.reshape(y, [1, 3 * ny * nx, no]))
    return n.op("Concat", levels, [1, sum(n.shapes[v][1] for v in levels), no], axis=1)


def yolov5n(n: _Net, nc):
    """YOLOv5n (v7.0) on ``n``'s input with ``nc`` classes; returns the decoded output [1, N, 5 + nc]."""
    x = n.cba("images", 16, 6, 2, p=2)   # v6.0+ stem (6x6, stride 2, pad 2)
    x = n.c3(n.cba(x, 32, 3, 2), 32, 1)
    p3 = n.c3(n.cba(x, 64, 3, 2), 64, 2)
    p4 = n.c3(n.cba(p3, 128, 3, 2), 128, 3)
    p5 = n.sppf(n.c3(n.cba(p4, 256, 3, 2), 256, 1), 256)
    outs = _pan(n, p3, p4, p5, (64, 128, 256), lambda v, c: n.c3(v, c, 1, shortcut=False))
    heads = []
    for o, s in zip(outs, STRIDES):   # Detect._initialize_biases: obj log(8 / (640 / s)^2), cls log(0.6 / (nc - 1))
        b = np.zeros((3, 5 + nc), np.float32)
        b[:, 4], b[:, 5:] = np.log(8 / (640 / s) ** 2), np.log(0.6 / (nc - 0.99999))
        heads.append(n.head_conv(o, 3 * (5 + nc), b.ravel()))
    return _v5_decode(n, heads, nc)


def yolox_nano(n: _Net, nc):
    """YOLOX-nano on ``n``'s input with ``nc`` classes; returns the decoded output [1, N, 5 + nc]."""
    x = n.cba(n.focus("images"), 16, 3, wscale=1 / 255)   # (its input is 0..255 BGR: a trained stem scales it)
    x = n.c3(n.dwconv(x, 32, 3, 2), 32, 1, dw=True)
    p3 = n.c3(n.dwconv(x, 64, 3, 2), 64, 3, dw=True)
    p4 = n.c3(n.dwconv(p3, 128, 3, 2), 128, 3, dw=True)
    p5 = n.c3(n.spp(n.dwconv(p4, 256, 3, 2), 256), 256, 1, shortcut=False, dw=True)
    outs = _pan(n, p3, p4, p5, (64, 128, 256), lambda v, c: n.c3(v, c, 1, shortcut=False, dw=True))
    flat, grids, strides = [], [], []
    for o, s in zip(outs, STRIDES):
        _, _, ny, nx = n.shapes[o]
        stem = n.cba(o, 64, 1)
        cls = n.dwconv(n.dwconv(stem, 64, 3, 1), 64, 3, 1)
        reg = n.dwconv(n.dwconv(stem, 64, 3, 1), 64, 3, 1)
        prior = -np.log((1 - 0.01) / 0.01)            # YOLOXHead.initialize_biases(prior_prob=0.01)
        parts = [n.head_conv(reg, 4), n.unary("Sigmoid", n.head_conv(reg, 1, prior)),
                 n.unary("Sigmoid", n.head_conv(cls, nc, prior))]
        y = n.op("Concat", parts, [1, 5 + nc, ny, nx], axis=1)
        flat.append(n.reshape(y, [1, 5 + nc, ny * nx]))
        grids.append(_grid(ny, nx).reshape(-1, 2))
        strides.append(np.full((ny * nx, 1), s, np.float32))
    N = sum(g.shape[0] for g in grids)
    y = n.op("Transpose", [n.op("Concat", flat, [1, 5 + nc, N], axis=2)], [1, N, 5 + nc], perm=[0, 2, 1])
    xy, wh, rest = n.split2(y, [2, 2, 1 + nc], axis=2)
    st = n.const_f(np.concatenate(strides)[None])
    xy = n.op("Mul", [n.op("Add", [xy, n.const_f(np.concatenate(grids)[None])], [1, N, 2]), st], [1, N, 2])
    wh = n.op("Mul", [n.unary("Exp", wh), st], [1, N, 2])
    return n.op("Concat", [xy, wh, rest], [1, N, 5 + nc], axis=2)


def yolov8n(n: _Net, nc, reg_max=16):
    """YOLOv8n on ``n``'s input with ``nc`` classes (DFL with ``reg_max`` bins); returns [1, 4 + nc, N]."""
    x = n.c2f(n.cba(n.cba("images", 16, 3, 2), 32, 3, 2), 32, 1)
    p3 = n.c2f(n.cba(x, 64, 3, 2), 64, 2)
    p4 = n.c2f(n.cba(p3, 128, 3, 2), 128, 2)
    p5 = n.sppf(n.c2f(n.cba(p4, 256, 3, 2), 256, 1), 256)
    outs = _pan(n, p3, p4, p5, (64, 128, 256), lambda v, c: n.c2f(v, c, 1, shortcut=False))
    flat, anchors, strides = [], [], []
    c2, c3 = max(16, 64 // 4, reg_max * 4), max(64, min(nc, 100))
    for o, s in zip(outs, STRIDES):
        _, _, ny, nx = n.shapes[o]
        box = n.head_conv(n.cba(n.cba(o, c2, 3), c2, 3), 4 * reg_max, 1.0)   # Detect.bias_init
        cls = n.head_conv(n.cba(n.cba(o, c3, 3), c3, 3), nc, np.log(5 / nc / (640 / s) ** 2))
        flat.append(n.reshape(n.concat(box, cls), [1, 4 * reg_max + nc, ny * nx], [(o, 0), 4 * reg_max + nc, -1]))
        if n.dynamic:
            a, st = n.dyn_anchors(o, s)
            anchors.append(a)
            strides.append(st)
        else:
            anchors.append(_grid(ny, nx).reshape(-1, 2) + 0.5)
            strides.append(np.full(ny * nx, s, np.float32))
    N = sum(n.shapes[f][2] for f in flat)
    box, cls = n.split2(n.op("Concat", flat, [1, 4 * reg_max + nc, N], axis=2), [4 * reg_max, nc], axis=1)
    b = n.op("Transpose", [n.reshape(box, [1, 4, reg_max, N], [(box, 0), 4, reg_max, (box, 2)])], [1, N, 4, reg_max],
             perm=[0, 3, 1, 2])
    b = n.op("Transpose", [n.unary("Softmax", b, axis=-1)], [1, reg_max, 4, N], perm=[0, 3, 2, 1])
    dfl = n.const_f(np.arange(reg_max, dtype=np.float32).reshape(1, reg_max, 1, 1))
    d = n.reshape(n.op("Conv", [b, dfl], [1, 1, 4, N], kernel_shape=[1, 1]), [1, 4, N], [(box, 0), 4, (box, 2)])
    lt, rb = n.split2(d, [2, 2], axis=1)
    if n.dynamic:   # [N, 2] -> [1, 2, N]; [N, 1] -> [1, N]
        t = n.op("Transpose", [n.op("Concat", anchors, [N, 2], axis=0)], [2, N], perm=[1, 0])
        anc = (n.op("Unsqueeze", [t, n.const(np.array([0], np.int64), "ax")], [1, 2, N]) if n.opset >= 13
               else n.op("Unsqueeze", [t], [1, 2, N], axes=[0]))
        st = n.op("Transpose", [n.op("Concat", strides, [N, 1], axis=0)], [1, N], perm=[1, 0])
    else:
        anc = n.const_f(np.concatenate(anchors).T[None])
        st = n.const_f(np.concatenate(strides)[None])
    x1y1 = n.op("Sub", [anc, lt], [1, 2, N])
    x2y2 = n.op("Add", [anc, rb], [1, 2, N])
    cxy = n.op("Div", [n.op("Add", [x1y1, x2y2], [1, 2, N]), n.const_f(2.0)], [1, 2, N])
    wh = n.op("Sub", [x2y2, x1y1], [1, 2, N])
    dbox = n.op("Mul", [n.op("Concat", [cxy, wh], [1, 4, N], axis=1), st], [1, 4, N])
    return n.op("Concat", [dbox, n.unary("Sigmoid", cls)], [1, 4 + nc, N], axis=1)


def build(family: str, size: int = 128, act: str = "silu", opset: int = 17, classes: int = 80, seed: int = 0,
          names=None, dynamic: bool = False, imgsz: bool = True) -> onnx.ModelProto:
    """A ``family`` graph (:data:`FAMILIES`) for a ``size`` x ``size`` RGB input named ``images``, ``classes``
    classes, random weights from ``seed``, activation ``act`` (``"silu"`` or ``"leaky"``), ONNX ``opset`` (12 to 17
    checked here). The output is the decoded [1, N, 5 + classes] (yolov5n, yolox_nano) or [1, 4 + classes, N]
    (yolov8n); ``names`` (default ``class0``, ...) go into the ``names`` metadata as Ultralytics writes it.

    ``dynamic`` (yolov8n only): as Ultralytics exports with ``dynamic=True``: the input [batch, 3, height, width] and
    the output [batch, 4 + classes, anchors] symbolic, the decode's reshapes, anchor centres and strides computed from
    Shape at run time (int64 Shape, Gather, Mul, Range, ConstantOfShape), and, with ``imgsz``, the ``imgsz``
    metadata ``"[size, size]"``; the same function as the static graph for a ``size`` x ``size`` input.
    Raises ValueError for an unknown family or activation, a size that is not a multiple of 32, or ``dynamic`` with
    another family."""
    if family not in FAMILIES or act not in ("silu", "leaky") or size % 32 or size < 32:
        raise ValueError(f"family {family!r} (one of {FAMILIES}), act {act!r} (silu, leaky), size {size} (a multiple "
                         f"of 32)")
    if dynamic and family != "yolov8n":
        raise ValueError(f"dynamic axes: only yolov8n, not {family!r}")
    n = _Net(size, seed, act, opset, dynamic)
    out = {"yolov5n": yolov5n, "yolox_nano": yolox_nano, "yolov8n": yolov8n}[family](n, classes)
    m = n.model([out])
    if dynamic:
        dims = m.graph.input[0].type.tensor_type.shape.dim
        for k, p in ((0, "batch"), (2, "height"), (3, "width")):
            dims[k].dim_param = p
        dims = m.graph.output[0].type.tensor_type.shape.dim
        for k, p in ((0, "batch"), (2, "anchors")):
            dims[k].dim_param = p
        onnx.checker.check_model(m, full_check=True)
    names = list(names) if names is not None else [f"class{i}" for i in range(classes)]
    props = {"names": repr(dict(enumerate(names))), "description": f"{family}-shaped graph, random weights ({act}, "
             f"opset {opset})"}
    # Ultralytics writes stride and names (its letterbox follows); YOLOX writes nothing: its top-left letterbox and
    # its unnormalized BGR input (0..255, as OpenCV reads images) are named here as a user would add them to a YOLOX
    # export (generator.flows.calibration.input_resize / input_format)
    props.update({"input_resize": "letterbox_topleft", "input_format": "bgr255"} if family == "yolox_nano"
                 else {"stride": "32"})
    if dynamic and imgsz:
        props["imgsz"] = str([size, size])
    onnx.helper.set_model_props(m, props)
    return m


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.frontend.yolo_family", description=__doc__.split("\n")[0])
    ap.add_argument("family", choices=FAMILIES)
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--act", choices=("silu", "leaky"), default="silu")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--classes", type=int, default=80)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dynamic", action="store_true", help="yolov8n: symbolic batch, height, width (Ultralytics)")
    a = ap.parse_args(argv)
    from host.fileio import atomic_write

    m = build(a.family, a.size, a.act, a.opset, a.classes, a.seed, dynamic=a.dynamic)
    atomic_write(a.out, m.SerializeToString())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

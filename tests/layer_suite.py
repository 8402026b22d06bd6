"""The single-layer suite shared by the bit-exact tests of every executor: eighteen layer kinds (each a small ONNX
graph built by :class:`generator.frontend.modelgen.Builder`, with its input channel count), five quantization
modes (mode, per-channel weights) and two hardware configurations (zcu19eg, and TINY whose buffers force tiling)."""
import numpy as np

from generator.exec.rtl import TINY
from helpers import board


def conv1x1(b):
    return b.conv("x", 21, k=1)


def conv3x3_s1(b):
    return b.leaky(b.conv("x", 19, k=3))


def conv3x3_s2(b):
    return b.leaky(b.conv("x", 33, k=3, s=2))


def first_layer_folded(b):      # 3 input channels: folded KH x KW x IC
    return b.leaky(b.conv("x", 12, k=3, s=2))


def relu_pool(b):
    return b.maxpool(b.relu(b.conv("x", 17, k=3)))


def pool_stride1(b):            # darknet maxpool size=2 stride=1
    return b.maxpool(b.leaky(b.conv("x", 10, k=3)), k=2, s=1, pad_end=1)


def upsample(b):
    return b.upsample(b.leaky(b.conv("x", 9, k=1)))


def concat(b):
    a = b.leaky(b.conv("x", 11, k=3))
    return b.concat(b.leaky(b.conv(a, 7, k=1)), a)


def split(b):
    a = b.leaky(b.conv("x", 18, k=1))
    _, hi = b.split(a)
    return b.leaky(b.conv(hi, 13, k=3))


def standalone_pool(b):          # pool after a concat whose input is also used elsewhere -> copy layer
    a = b.leaky(b.conv("x", 12, k=3))
    c = b.leaky(b.conv(a, 12, k=3))
    return b.maxpool(b.concat(a, c)), c


def same_upper_folded(b):        # TensorFlow / Keras export: auto_pad SAME_UPPER, stride 2 (pads 0, 0, 1, 1), folded
    return b.leaky(b.conv("x", 12, k=3, s=2, auto_pad="SAME_UPPER"))


def asym_pads_k5(b):             # every side its own padding (top, left, bottom, right)
    return b.conv("x", 7, k=5, p=[2, 1, 0, 3])


def spp(b):                      # SPP (YOLOv4, YOLOv3-SPP): stride-1 pools 13, 9, 5 padded with -inf (13 and 9 run
    a = b.leaky(b.conv("x", 8, k=1))   # as chains of narrower pools), concat, then a padded stride-2 ceil_mode pool
    c = b.concat(b.maxpool(a, 13, 1, pads=[6] * 4), b.maxpool(a, 9, 1, pads=[4] * 4),
                 b.maxpool(a, 5, 1, pads=[2] * 4), a)
    return b.maxpool(b.conv(c, 6, k=1), 3, 2, pads=[1, 1, 1, 1], ceil_mode=1)


def csp_padded_pool(b):          # a padded pool over a concat holding a tensor a 3x3 conv reads: the pool reads a copy
    a = b.leaky(b.conv("x", 7, k=3))
    c = b.leaky(b.conv(a, 5, k=3))
    return b.maxpool(b.concat(a, c), 3, 1, pads=[1, 1, 1, 1]), c


def residual_add(b):             # darknet [shortcut] activation=leaky, then channel scaling by a constant
    x = b.leaky(b.conv("x", 9, k=3))
    r = b.leaky(b.conv(x, 9, k=3))
    _, c, h, w = b.shapes[x]
    y = b.leaky(b.op("Add", [x, r], [1, c, h, w]))
    k = b.const(np.linspace(-1.5, 2.0, c).astype(np.float32).reshape(1, c, 1, 1))
    return b.op("Mul", [y, k], [1, c, h, w])


def focus(b):                    # YOLOX / YOLOv5 (< v6.0) stem: Focus (space-to-depth by four stride-2 Slices) + conv 3x3
    return b.leaky(b.conv(b.focus("x"), 10, k=3))   # -> one 6x6 stride-2 conv on the image (folded first layer)


def table_acts(b):               # POST's activation table: SiLU and Mish (gated products) fused into their convs, a
    a = b.act(b.conv("x", 12, k=3), "silu")    # Sigmoid on a max-pooled concat (copy layers; a conv reads it, else
    c = b.act(b.conv(a, 10, k=1), "mish")      # it would be an output decode for the host), a HardSwish conv
    return b.act(b.conv(b.act(b.maxpool(b.concat(a, c)), "Sigmoid"), 8, k=1), "hardswish_mul")


def attention_mul(b):            # products of two tensors (COMPUTE emul): channel attention (SE: x * sigmoid(fc(global
    x = b.leaky(b.conv("x", 20, k=3, p=[1, 2, 1, 2]))   # average pool of x)), a [1, C, 1, 1] factor broadcast over
    _, c, h, w = b.shapes[x]            # the pixels), then spatial attention (YOLOv4's SAM: x * sigmoid(conv(x)))
    p = b.maxpool(x, 4, 4)              # (the global pool of a 3 x 3 map: a 3 x 3 convolution TINY's WBUF holds)
    gate = b.act(b.conv(b.op("GlobalAveragePool", [p], [1, c, 1, 1]), c, k=1), "Sigmoid")
    y = b.op("Mul", [x, gate], [1, c, h, w])
    sam = b.act(b.conv(y, c, k=1), "Sigmoid")
    return b.conv(b.op("Mul", [sam, y], [1, c, h, w]), 6, k=1)


KINDS = {"conv1x1": (conv1x1, 13), "conv3x3_s1": (conv3x3_s1, 13), "conv3x3_s2": (conv3x3_s2, 13),
         "first_layer_folded": (first_layer_folded, 3), "relu_pool": (relu_pool, 11),
         "pool_stride1": (pool_stride1, 6), "upsample": (upsample, 20), "concat": (concat, 9), "split": (split, 9),
         "standalone_pool": (standalone_pool, 10), "same_upper_folded": (same_upper_folded, 3),
         "asym_pads_k5": (asym_pads_k5, 6), "spp": (spp, 6), "csp_padded_pool": (csp_padded_pool, 5),
         "residual_add": (residual_add, 7), "focus": (focus, 3), "table_acts": (table_acts, 5),
         "attention_mul": (attention_mul, 6)}
MODES = [("int8-asym", True), ("int8-sym", True), ("int16-sym", True), ("int16-asym", True), ("int8-asym", False)]
BOARDS = {"zcu19eg": lambda: board(), "tiny": lambda: board(**TINY)}

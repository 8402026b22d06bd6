"""Darknet ``.cfg`` + ``.weights`` -> ONNX converter (our own; no darknet library needed).

It follows the semantics of darknet's ``parser.c`` (AlexeyAB fork, the one that trained YOLOv4-tiny) for the
subset of layers a CNN detector such as YOLOv3-tiny / YOLOv4-tiny uses:

* ``[net]`` / ``[network]``: ``width``, ``height``, ``channels`` -> graph input ``input``, float32
  ``[1, channels, height, width]`` (NCHW, batch 1).
* ``[convolutional]`` (alias ``[conv]``): ``filters``, ``size``, ``stride``, ``pad`` (``pad=1`` means padding
  ``size//2``, otherwise ``padding=``, default 0), ``batch_normalize``, ``activation`` (below); ``groups`` (grouped / depthwise; must divide the
  input channels and ``filters``).
  Output ``(w + 2*padding - size)//stride + 1``.
  ONNX: ``Conv`` (with a bias input only without BN) -> ``BatchNormalization`` (kept, epsilon 1e-5, the compiler
  folds it later) -> ``LeakyRelu(alpha=0.1)`` / ``Relu``.
* ``[maxpool]`` (alias ``[max]``): ``size``, ``stride``, ``padding`` (default ``size-1``). Darknet's output is
  ``(w + padding - size)//stride + 1`` with windows starting at ``-padding//2``; out-of-image taps are ignored.
  ONNX ``MaxPool`` pads are ``begin = padding//2`` and the smallest ``end`` giving the same output size (so
  ``size=2 stride=2`` on an even size has pads 0 and output ``w/2``; ``size=2 stride=1`` has end pad 1).
* ``[route]``: ``layers=`` (negative = relative to the route's own index, else absolute). One layer -> ``Identity``;
  ``groups=G group_id=k`` -> channel ``Split`` (opset 13, sizes as an int64 initializer, all G outputs declared)
  keeping part k of every routed layer; several layers -> ``Concat`` on axis 1.
* ``[upsample]``: ``stride`` -> ``Resize`` (nearest, ``asymmetric``, ``floor``, scales ``[1, 1, s, s]``).
* ``[shortcut]``: ``from`` (one layer, same height and width), ``activation`` -> ``Add`` (+ the activation); with
  different channel counts darknet adds the first min(C) channels: a channel ``Slice`` of the ``from`` layer, or a
  ``Split`` of the previous layer whose rest is concatenated behind the sum.
* ``[sam]`` / ``[scale_channels]``: ``from`` (one layer), ``activation`` -> ``Mul`` of the ``from`` layer and the
  previous one (+ the activation): equal shapes (spatial attention), or the previous layer C x 1 x 1, one factor
  per channel (``scale_wh=0``; channel attention, squeeze-and-excitation).
* ``[avgpool]``: global average pool -> ``GlobalAveragePool`` (C x 1 x 1; the compiler needs a square map).
* ``[yolo]``: no ONNX node; the tensor feeding it becomes a graph output (cfg order). Its decode parameters go to
  ``model.metadata_props``. They are checked as darknet's ``parse_yolo`` reads them, and stricter
  (:func:`~generator.frontend.darknet.layers.yolo_layer`): ``anchors=`` required with 2 * ``num`` values, finite and
  > 0, every ``mask`` index < ``num``, ``classes`` >= 1, ``scale_x_y`` finite and > 0.

Weights (:func:`~generator.frontend.darknet.weights.read_weights`): a NaN or infinite value, or a negative
``rolling_variance``, is a :class:`DarknetError` naming the weights file, the array, the ``[convolutional]`` at its
cfg line, the layer index and the first bad value with its index.

Activations: ``leaky`` (0.1), ``relu``, ``linear``, ``logistic``, ``swish``, ``mish``, ``hard_swish``. Any other
section (``[reorg]``, ``[region]``, ``[dropout]``, ...) is a :class:`DarknetError` that lists every unsupported
section with its cfg line at once. :mod:`~generator.frontend.darknet.family` writes YOLOv4-tiny-3l-, YOLOv7-tiny-
and YOLOv3-tiny-PRN-shaped cfgs for the tests.

Modules: :mod:`~generator.frontend.darknet.cfg` (cfg sections and option keys),
:mod:`~generator.frontend.darknet.layers` (layers and shapes), :mod:`~generator.frontend.darknet.weights`
(``.weights`` file), :mod:`~generator.frontend.darknet.names` (class names, YOLO heads),
:mod:`~generator.frontend.darknet.to_onnx` (the ONNX graph, its names and metadata),
:mod:`~generator.frontend.darknet.cli` (command line).

CLI: ``python -m generator.frontend.darknet CFG WEIGHTS OUT.onnx``.
"""
from generator.frontend.darknet.cfg import KNOWN_KEYS, DarknetError, Section, check_keys, parse_cfg
from generator.frontend.darknet.cli import main
from generator.frontend.darknet.names import read_names, yolo_params
from generator.frontend.darknet.to_onnx import darknet_to_onnx
from generator.frontend.darknet.weights import read_weights

__all__ = ["KNOWN_KEYS", "DarknetError", "Section", "check_keys", "parse_cfg", "main", "read_names", "yolo_params",
           "darknet_to_onnx", "read_weights"]

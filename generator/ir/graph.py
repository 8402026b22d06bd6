"""Graph IR shared by every compiler pass.

A :class:`Graph` holds :class:`Node` s in topological order and :class:`Tensor` s by name. Activations are NCHW
with batch 1 (``shape = (1, C, H, W)``); in DDR they are stored NHWC inside a :class:`Region`, with a border of
``pad`` pixels (initialised to the zero point) around every image so that convolution padding is plain strided
reads. Several tensors may share one region (a concat is its channels laid side by side; a channel split is a view
at a channel offset): a tensor's place is ``(region, ch_offset)`` and its pixel stride is ``region.channels``
elements.

Ops before lowering are ONNX op types (Conv, BatchNormalization, Relu, LeakyRelu, MaxPool, Resize, Concat, Split,
Slice, Gemm, Flatten, Identity). After fusion, accelerator layers are ``Macro`` nodes (see :class:`MacroAttrs`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np


class GraphError(ValueError):
    """Malformed or unsupported graph; the message names the node (name and op type)."""


@dataclass
class Tensor:
    """A tensor: name, NCHW shape, dtype, optional constant data, and its quantization and DDR placement.

    Attributes:
        shape: tuple of ints (NCHW for activations, OIHW for conv weights).
        dtype: "float32" before quantization; "int8"/"int16" after.
        data: numpy array for initializers (weights, biases), None for activations.
        scale, zero_point: quantization parameters (activations: float scale, int zero point).
        channel_scales: per-channel scales (float64 [C]) of a graph output quantized per channel (then
            ``scale`` is None); dequantize through :attr:`deq_scale`.
        region, ch_offset: the DDR region holding it and its first channel there.
        ddr_addr: byte address of its region relative to the region's base register (set by allocation).
    """
    name: str
    shape: tuple
    dtype: str = "float32"
    data: np.ndarray | None = None
    scale: float | None = None
    zero_point: int | None = None
    region: str | None = None
    ch_offset: int = 0
    ddr_addr: int | None = None
    channel_scales: np.ndarray | None = None

    @property
    def is_const(self) -> bool:
        """True for initializers (weights, biases, constants)."""
        return self.data is not None

    @property
    def deq_scale(self):
        """The scale that dequantizes values [..., C, H, W] of this tensor, ``(q - zero_point) * deq_scale``: the
        float ``scale``, or the per-channel scales as float64 [C, 1, 1]. Raises GraphError if not quantized."""
        if self.channel_scales is not None:
            return np.asarray(self.channel_scales, np.float64).reshape(-1, 1, 1)
        if self.scale is None:
            raise GraphError(f"tensor {self.name!r} is not quantized (no scale)")
        return self.scale


@dataclass
class Region:
    """A DDR region: an NHWC image of ``channels`` x ``h`` x ``w`` with a ``pad``-pixel border.

    ``base_reg`` is the base-address register it is relative to (ACT, INPUT or OUTPUT); ``addr`` its byte offset
    there (set by allocation). Channel stride of every tensor in the region = ``channels``. ``scale`` /
    ``zero_point`` quantize it; a graph output quantized per channel has ``channel_scales`` (float64 [channels])
    and ``scale`` None; ``bits`` is its precision (8 or 16, every tensor in it of that dtype).
    """
    name: str
    channels: int
    h: int
    w: int
    pad: int = 0
    base_reg: str = "ACT"
    addr: int | None = None
    scale: float | None = None
    zero_point: int | None = None
    channel_scales: np.ndarray | None = None
    bits: int | None = None

    @property
    def elem_bytes(self) -> int:
        """Bytes per element in DDR of the quantized region (``bits`` 8 or 16: 1 or 2). Raises GraphError before
        quantization."""
        if self.bits not in (8, 16):
            raise GraphError(f"region {self.name}: not quantized (bits {self.bits})")
        return self.bits // 8


@dataclass
class Node:
    """An operation: ``op`` type, input and output tensor names, attributes (dict)."""
    name: str
    op: str
    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)

    def __repr__(self):
        return f"{self.op}({self.name}: {self.inputs} -> {self.outputs})"


@dataclass
class Graph:
    """A model graph: nodes in topological order, tensors by name, graph inputs/outputs, regions, metadata."""
    name: str
    nodes: list
    tensors: dict
    inputs: list
    outputs: list
    regions: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)

    def copy(self) -> "Graph":
        """Deep copy (weights included), so a pass never mutates its input graph."""
        return copy.deepcopy(self)

    def producer(self, tensor: str) -> Node | None:
        """The node that writes ``tensor``, or None (graph input, constant, or a view into a region)."""
        for n in self.nodes:
            if tensor in n.outputs:
                return n
        return None

    def consumers(self, tensor: str) -> list:
        """Nodes that read ``tensor`` directly (by name)."""
        return [n for n in self.nodes if tensor in n.inputs]

    def node(self, name: str) -> Node:
        """The node called ``name``. Raises KeyError."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def const(self, name: str) -> np.ndarray:
        """Data of constant tensor ``name``. Raises GraphError if it is not a constant."""
        t = self.tensors[name]
        if t.data is None:
            raise GraphError(f"tensor {name!r} is not a constant")
        return t.data

    def unique_name(self, base: str) -> str:
        """``base`` or ``base_<k>``: a name no tensor or node has yet."""
        names = set(self.tensors) | {n.name for n in self.nodes}
        if base not in names:
            return base
        k = 1
        while f"{base}_{k}" in names:
            k += 1
        return f"{base}_{k}"

    def sources(self, tensor: str) -> list:
        """Tensors whose producers must run before ``tensor`` can be read: itself if a node produces it, else
        (a view into a shared region, or the whole of a concat region) every produced tensor of its region whose
        channels overlap it."""
        produced = {o for n in self.nodes for o in n.outputs}
        if tensor in produced or tensor in self.inputs:
            return [tensor]
        t = self.tensors.get(tensor)
        if t is None or t.region is None or t.is_const:
            return []
        lo, hi = t.ch_offset, t.ch_offset + t.shape[1]
        out = []
        for o in self.tensors.values():
            if o.region == t.region and o.name != tensor and (o.name in produced or o.name in self.inputs):
                if o.ch_offset < hi and lo < o.ch_offset + o.shape[1]:
                    out.append(o.name)
        return out

    def toposort(self) -> None:
        """Re-order nodes topologically (stable), following region views. Raises GraphError on a cycle."""
        avail = set(self.inputs) | {k for k, t in self.tensors.items() if t.is_const}
        rest, out = list(self.nodes), []
        while rest:
            for i, n in enumerate(rest):
                if all(x == "" or x in avail or (self.tensors.get(x) is not None and self.sources(x)
                       and all(s in avail for s in self.sources(x))) for x in n.inputs):
                    out.append(n)
                    avail.update(n.outputs)
                    del rest[i]
                    break
            else:
                raise GraphError(f"graph has a cycle or a dangling input at {rest[0]!r}")
        self.nodes = out

    def prune(self) -> None:
        """Drop nodes whose outputs nobody uses (directly or through a shared region) and unreferenced tensors."""
        changed = True
        while changed:
            changed = False
            used = set()
            for x in list(self.outputs) + [i for n in self.nodes for i in n.inputs]:
                used.add(x)
                if x in self.tensors:
                    used.update(self.sources(x))
            keep = [n for n in self.nodes if any(o in used for o in n.outputs)]
            if len(keep) != len(self.nodes):
                self.nodes, changed = keep, True
        refs = set(self.inputs) | set(self.outputs)
        for n in self.nodes:
            refs.update(n.inputs)
            refs.update(n.outputs)
            m = n.attrs.get("macro")
            if m is not None:
                refs.update(x for x in (m.weight, m.bias) if x)
        for r in list(refs):
            if r in self.tensors:
                refs.update(self.sources(r))
        self.tensors = {k: v for k, v in self.tensors.items() if k in refs}
        live = {t.region for t in self.tensors.values() if t.region}
        self.regions = {k: v for k, v in self.regions.items() if k in live}

    def macro_nodes(self) -> list:
        """The accelerator layers (``Macro`` nodes), in execution order."""
        return [n for n in self.nodes if n.op == "Macro"]


@dataclass
class MacroAttrs:
    """Attributes of a fused accelerator layer (``Macro`` node).

    kind: "conv" (conv + bias + activation + pool + upsample + requantization), "copy" (no weights: the ifmap
        passes the PE array unchanged; used for a stand-alone max-pool or a copy between regions) or "emul" (the
        element-wise product of its two inputs ``a * b``, ``b`` of a's shape or [1, C, 1, 1] broadcast over the
        pixels: the COMPUTE bypass with its ``emul`` multipliers, then requantization).
    kernel (KH = KW), stride, pad: convolution geometry (symmetric padding); pads: (top, left, bottom, right)
        when the padding is not the same on all four sides (``auto_pad`` SAME_UPPER / SAME_LOWER, TensorFlow and
        Keras exports), else None; :meth:`four_pads` gives either as four values. On a copy layer: the max-pool's
        padding (-inf), read from its input region's border, which then holds the smallest integer.
    act: "linear", "relu", "leaky" or a table activation (:data:`generator.ir.activations.TABLE_ACTIVATIONS`: sigmoid,
        silu, tanh, hardsigmoid, hardswish, softplus, mish, elu); alpha: LeakyReLU slope (HardSigmoid's alpha,
        Elu's alpha); beta: HardSigmoid's beta.
    pool: None or (k, s, pad_end): max-pool k x k stride s, with pad_end extra rows/cols at the bottom/right
        (darknet's size=2 stride=1 pool); upsample: nearest-neighbour factor (1 = none).
    weight, bias: names of the folded weight [OC, IC, KH, KW] and bias [OC] tensors (conv kind).
    side_pools: one (k, s, 0) max-pool per extra output (``outputs[1:]``): the same activation, pooled k x k
        stride s (k == s) and requantized to that output's region, written besides the main output.
    """
    kind: str = "conv"
    kernel: int = 1
    stride: int = 1
    pad: int = 0
    act: str = "linear"
    alpha: float = 0.0
    beta: float = 0.0
    pool: tuple | None = None
    upsample: int = 1
    weight: str | None = None
    bias: str | None = None
    side_pools: list = field(default_factory=list)
    pads: tuple | None = None

    def four_pads(self) -> tuple:
        """Padding (top, left, bottom, right) in pixels."""
        return tuple(int(v) for v in self.pads) if self.pads else (self.pad,) * 4

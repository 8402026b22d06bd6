"""The interface of an accelerator layer kind (:class:`LayerKind`) and the integer helpers the kinds and the code
generator share.

A layer kind is what a fused ``Macro`` node (:class:`generator.ir.graph.MacroAttrs`, field ``kind``) computes
before POST's bias, requantization, activation, pooling and upsampling, which every kind shares. One class per
kind (after FINN's ``custom_op/fpgadataflow`` classes: one class per op holding its execution, its estimates and
its code-generation choices) holds all that is specific to it:

* its cores: the float values before the activation (:meth:`LayerKind.float_core`: the float reference and the
  fake-quantized simulation) and the integer accumulators (:meth:`LayerKind.int_acc`: the integer references);
* its quantization: whether it has weights (a weight tensor [OC, IC, KH, KW] and a float bias, quantized by the
  quantizer), how many ifmap operands it reads, what plays the weight's scale when it has none
  (:meth:`LayerKind.factor_scale_max`), how often the input zero point enters an accumulator
  (:meth:`LayerKind.zp_terms`), the accumulator's bound (:meth:`LayerKind.acc_bound`), what its padding holds;
* its tiling plan: window, MACs, weight elements, input-channel tile options and chunks, IBUF words per pixel,
  folding eligibility;
* its emission: the ifmap LOADs of a step, the COMPUTE mode bits;
* its cost hooks: one step's LOAD / COMPUTE cycles and one LOAD's bytes for the latency model.

Arguments named ``m`` are :class:`generator.ir.graph.MacroAttrs`; ``L`` a :class:`generator.codegen.tiling.Layer`
(its geometry: ``IC``, ``OC``, ``K``, ``S``, ``H``, ``W``, ``fold``, ``mapped_*``, ...), ``hw`` a
:class:`generator.spec.hw.HwConfig` at the layer's precision, ``plan`` a :class:`generator.codegen.tiling.Plan`;
the kinds read them and import nothing above :mod:`generator.ir`.
"""
from __future__ import annotations

import abc


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) for positive integers."""
    return -(-a // b)


def tile_ranges(n: int, t: int) -> list[tuple[int, int]]:
    """[start, end) ranges of ``t`` (the last one shorter) covering 0..n."""
    return [(a, min(a + t, n)) for a in range(0, n, t)]


class LayerKind(abc.ABC):
    """One layer kind (module docstring). Class attributes:

    name: the ``MacroAttrs.kind`` it implements; has_weights: a weight tensor [OC, IC, KH, KW] and a float bias
    (quantized weights in WBUF, per-channel weight scales, bias correction, equalization, per-channel heads);
    operands: ifmap operands per output element (1, or 2: a second factor ``inputs[1]``); pad_fill: what the border
    its padded reads see holds: "zero_point" (0.0, a convolution's padding), "min" (-inf, a max-pool's padding:
    the input region's border holds the smallest integer) or None (it reads no padding).
    """
    name: str = ""
    has_weights: bool = False
    operands: int = 1
    pad_fill: str | None = None

    # ---- cores -------------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def float_core(self, m, x, xb=None, w=None, b=None, conv=None):
        """The layer's values before the activation, from its input ``x`` [C, H, W] (``xb``: the second operand,
        [C, H, W] or [C, 1, 1]; ``w`` [OC, IC, KH, KW] / ``b`` [OC]: weights and bias of a kind with weights;
        ``conv``: the convolution ``conv(x, w, stride, (top, left, bottom, right))``, default
        :func:`generator.kinds.conv.conv2d`). Returns ``x`` itself when the layer passes it unchanged, else a new
        array (dtype of the operands)."""

    @abc.abstractmethod
    def int_acc(self, m, x, xb=None, w=None, zp_in: int = 0, zp_b: int = 0, conv=None):
        """The layer's accumulators before the bias, int64 [OC, OH, OW], from its integer input ``x`` (``xb``,
        ``w`` int as in :meth:`float_core`; ``zp_in`` / ``zp_b``: the operands' zero points; ``conv``: the integer
        convolution ``conv(x, w, stride, pads, pad_value)`` returning int64, default an exact float64
        :func:`generator.kinds.conv.conv2d`)."""

    @abc.abstractmethod
    def pool_pads(self, m):
        """The main max-pool's (top, left, bottom, right) -inf padding, or None (the pool's ``pad_end``)."""

    # ---- quantization ------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def factor_scale_max(self, g, n, wmax: int, scale_of) -> float:
        """The largest scale of what multiplies the input in node ``n``'s accumulator (the weight's part in the
        real multiplier ``s_in * s_w / s_out`` and the scale floor): the weights' per-tensor scale
        ``max|w| / wmax``, the second factor's scale (``scale_of(tensor name)``: its region's scale) or 1.0."""

    @abc.abstractmethod
    def zp_terms(self, W, oc: int):
        """int64 [OC]: how many times the input zero point enters each channel's accumulator (the bias folds
        ``-zp_in`` times it): the weights' sum per output channel (``W`` int [OC, ...]), 1 or 0."""

    @abc.abstractmethod
    def acc_bound(self, W, B, amax: int, zp_in: int, zp_b: int, oc: int):
        """int64 [OC]: the largest |accumulator + bias| a channel can reach with input values of magnitude at most
        ``amax`` (``W`` the integer weights or None, ``B`` the integer bias [OC], zero points ``zp_in`` /
        ``zp_b``)."""

    # ---- tiling plan -------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def window(self, m) -> tuple[int, int]:
        """(kernel, stride) of the layer's window over its input (1, 1 without a convolution)."""

    @abc.abstractmethod
    def can_fold(self, L, hw) -> bool:
        """Whether layer ``L`` runs folded: KH x KW x IC as the input channels of a 1x1 convolution."""

    @abc.abstractmethod
    def macs(self, L) -> int:
        """Multiply-accumulates of the layer on the PE array (0 for a layer that bypasses it)."""

    @abc.abstractmethod
    def weight_elements(self, L) -> int:
        """Elements the layer reads besides its ifmap, once (its weights, or its second factor)."""

    @abc.abstractmethod
    def ic_tile_options(self, L, hw) -> list[int]:
        """The input-channel tile sizes (``Plan.tile_ic``) the scheduler tries ([0]: the layer has no
        input-channel loop)."""

    @abc.abstractmethod
    def step_channels(self, L, tile_ic: int, tile_oc: int) -> int:
        """Input channels of a layer's first (largest) step under tiles of ``tile_ic`` / ``tile_oc``."""

    @abc.abstractmethod
    def ic_chunks(self, L, tile_ic: int, oc: tuple) -> list[tuple[int, int]]:
        """The [ic0, ic1) input channels of each step of the tile with output channels ``oc`` = (oc0, oc1)."""

    @abc.abstractmethod
    def step_words(self, L, hw, channels: int, tile_og: int) -> tuple[int, int]:
        """(IBUF words per pixel, the second operand's first word or 0) of a step of ``channels`` input channels
        and ``tile_og`` output groups (COMPUTE ``ig`` / ``b_word``)."""

    # ---- emission ----------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def ifmap_loads(self, L, views, bank: int, acc: tuple, ic: tuple, words: tuple, prec: int, tn: int) -> list:
        """The LOAD instructions (:func:`generator.spec.isa.make`) of one step's ifmap into IBUF ``bank``:
        ``views`` = (input view, second operand's view or None), each a :class:`generator.codegen.allocate.TensorView`
        (``at``, ``row``, ``pix``, ``base_reg``, ``channels``, ``im2col``); ``acc`` = (r0, r1, c0, c1) the acc
        tile; ``ic`` = (ic0, ic1); ``words`` = :meth:`step_words`; ``prec`` the LOAD's prec field; ``tn`` Tn."""

    @abc.abstractmethod
    def compute_flags(self) -> dict:
        """The COMPUTE mode fields of the layer's steps: dict(bypass=0 or 1, emul=0 or 1)."""

    # ---- cost hooks --------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def step_costs(self, L, hw, vin, plan, acc_rows: int, acc_cols: int, tile_og: int) -> tuple[int, int, int, int]:
        """(input-channel chunks, ifmap LOAD cycles, weight LOAD cycles, COMPUTE cycles) of one step of ``plan``
        on an acc tile of ``acc_rows`` x ``acc_cols`` and ``tile_og`` output groups (``vin``: the input view,
        ``row`` / ``pix`` byte strides, ``im2col``, ``channels``), by :func:`generator.spec.timing.transfer_cycles`."""

    @abc.abstractmethod
    def step_bytes(self, L, hw, plan, acc_rows: int, acc_cols: int, tile_og: int, im2col_pix: int) -> tuple:
        """(bytes of one ifmap LOAD, bytes of one weight LOAD) of a full-size step of ``plan`` (``im2col_pix``:
        bytes per pixel of an im2col input, 0 otherwise)."""

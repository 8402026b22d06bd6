"""PRE: the camera frame to the network input in integer arithmetic, defined once (issue 45).

This module is the definition of the accelerator's pre-processing stage (PRE): every executor -- this numpy
reference (:func:`pre_run`), the golden simulator, the HLS kernel and the RTL -- computes exactly this, bit for bit.
Everything that needs a division is computed once per frame size by :func:`pre_geometry` and :func:`pre_quant`
(the driver's work, or the compiler's for a fixed camera size) and handed to PRE as integers, so the datapath is
multiplies, adds and shifts only.

Input: a frame of uint8 pixels, three channels per pixel (RGB or BGR order), ``frame_h`` rows of ``frame_w``
pixels, each row starting ``pitch`` bytes after the previous one (pitch >= 3 x frame_w). Output: the network
input, ``net_h`` x ``net_w`` pixels x 3 channels, int8 or int16, in the model's channel order, quantized with the
input region's scale and zero point.

The arithmetic (darknet's ``resize_image``: bilinear with corners aligned, separable, rows then columns):

1. **Placement** (:func:`pre_geometry`): the frame is resized to ``out_w`` x ``out_h`` pixels placed at
   (``left``, ``top``) of the network input; the rest is padding of value :data:`PAD` (114, Ultralytics' and
   YOLOX's gray). ``stretch``: the whole input (darknet); ``letterbox``: Ultralytics' centred letterbox;
   ``letterbox_topleft``: YOLOX's (:func:`host.preprocess.letterbox_geometry` gives both).
2. **Source positions** in unsigned Q12.20 (32 bits): ``step_x = round((frame_w - 1) * 2^20 / (out_w - 1))``
   (0 when ``out_w == 1``), likewise ``step_y``. Output column ``c`` (0 <= c < out_w) reads source columns ``ix``
   and ``ix1`` with the 12-bit fraction ``fx``: ``s = c * step_x mod 2^32`` (a 32-bit accumulator in hardware;
   :func:`pre_geometry`'s steps never wrap it);
   ``ix = min(s >> 20, frame_w - 1); fx = (s >> 8) & 4095; ix1 = min(ix + 1, frame_w - 1)``; the last column (``c == out_w - 1``) is
   ``ix = frame_w - 1, fx = 0`` (the last source column, as darknet means it). Rows the same with ``step_y``,
   ``iy``, ``fy``, ``iy1``.
3. **Horizontal pass**: ``h = (4096 - fx) * p[iy][ix] + fx * p[iy][ix1]`` per channel, 20 bits (at most
   255 x 2^12).
4. **Vertical pass**: ``v = ((4096 - fy) * h[iy] + fy * h[iy1] + 2^7) >> 8``, 24 bits (at most 255 x 2^16; a
   13 x 20-bit product per term, one DSP48E2 each); ``v / 2^16`` is the resized pixel in 0..255. A padding pixel
   is ``v = PAD << 16``.
5. **Quantization** (:func:`pre_quant`): ``q = clamp(((v * M + 2^(S - 1)) >> S) + zp, qmin, qmax)`` with the
   unsigned 16-bit multiplier ``M`` and shift ``S`` that approximate ``k / scale`` (``k = 1 / (2^16 x 255)`` for
   an input in 0..1, ``1 / 2^16`` for one in 0..255): the round half up of :func:`host.preprocess.quantize_input`
   on the fixed-point value; a 24 x 16-bit product, one DSP48E2.
6. **Channel order**: output channel ``k`` takes frame channel ``k`` when the frame's order is the model's
   (RGB frame, ``rgb01`` / ``rgb255`` model; BGR frame, ``bgr255`` model), else ``2 - k``.

Against the float resize of :mod:`host.preprocess` (darknet's float32 arithmetic) the result differs by the 12-bit
fractions and the fixed-point quantization; ``tests/host/test_pre_arith.py`` bounds it and ``invoke pre`` measures
its effect on detections.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .preprocess import INPUT_FORMATS, LETTERBOX_PAD, RESIZE_MODES, letterbox_geometry

__all__ = ["PAD", "FRAC_BITS", "MAX_FRAME", "MAX_PITCH", "PreGeometry", "PreQuant", "pre_geometry", "pre_quant",
           "pre_run", "PreError", "PreFrame", "frame_bytes", "pre_violation", "source_rows", "source_positions"]

#: padding value of a letterbox (uint8 gray 114, as Ultralytics and YOLOX pad: host.preprocess's)
PAD = LETTERBOX_PAD
#: fraction bits of the source positions (Q12.20) and of the bilinear weights (12)
POS_BITS, FRAC_BITS = 20, 12
#: fraction bits of the resized pixel ``v`` (pixel x 2^16); the vertical pass's sum (2 x FRAC_BITS fraction bits)
#: is rounded to them by V_SHIFT
V_FRAC = 16
V_SHIFT = 2 * FRAC_BITS - V_FRAC
#: the largest frame PRE takes (width, height) and the largest row pitch (bytes)
MAX_FRAME = (4096, 4096)
MAX_PITCH = 65535
#: the multiplier's width (unsigned bits) of the quantization
MULT_BITS = 16


class PreError(ValueError):
    """A frame, size or quantization PRE cannot take (names the value and the limit)."""


@dataclass(frozen=True)
class PreGeometry:
    """Where PRE reads and writes, all integers (:func:`pre_geometry`): the frame's ``frame_w`` x ``frame_h``
    pixels resized to ``out_w`` x ``out_h`` at (``left``, ``top``) of the ``net_w`` x ``net_h`` input, source steps
    ``step_x`` / ``step_y`` in Q12.20 (unsigned, below 2^32)."""
    frame_w: int
    frame_h: int
    net_w: int
    net_h: int
    out_w: int
    out_h: int
    left: int
    top: int
    step_x: int
    step_y: int


@dataclass(frozen=True)
class PreQuant:
    """The quantization of PRE (:func:`pre_quant`): ``q = clamp(((v * mult + 2^(shift-1)) >> shift) + zero_point,
    qmin, qmax)``; ``mult`` unsigned 16-bit, ``shift`` 1..63; ``bits`` 8 or 16; ``swap``: output channel k takes
    frame channel 2 - k."""
    mult: int
    shift: int
    zero_point: int
    bits: int
    swap: bool


def _step(src: int, out: int) -> int:
    """round((src - 1) * 2^POS_BITS / (out - 1)), 0 for out == 1."""
    return 0 if out <= 1 else (((src - 1) << POS_BITS) + (out - 1) // 2) // (out - 1)


def pre_geometry(frame_w: int, frame_h: int, net_w: int, net_h: int, mode: str = "stretch") -> PreGeometry:
    """The placement and Q12.20 steps of PRE for a ``frame_w`` x ``frame_h`` frame and a ``net_w`` x ``net_h``
    input by ``mode`` (:data:`host.preprocess.RESIZE_MODES`; the module docstring, steps 1-2).

    Raises:
        PreError: a size below 1 or above :data:`MAX_FRAME`, or an unknown mode.
    """
    if mode not in RESIZE_MODES:
        raise PreError(f"unknown resize mode {mode!r}; one of {RESIZE_MODES}")
    for what, w, h in (("frame", frame_w, frame_h), ("network input", net_w, net_h)):
        if not (1 <= int(w) <= MAX_FRAME[0] and 1 <= int(h) <= MAX_FRAME[1]):
            raise PreError(f"{what} of {w} x {h} pixels: PRE takes 1 x 1 to {MAX_FRAME[0]} x {MAX_FRAME[1]}")
    _, ow, oh, left, top = letterbox_geometry(frame_w, frame_h, net_w, net_h, mode)
    return PreGeometry(int(frame_w), int(frame_h), int(net_w), int(net_h), int(ow), int(oh), int(left), int(top),
                       _step(frame_w, ow), _step(frame_h, oh))


def pre_quant(scale: float, zero_point: int, bits: int, fmt: str = "rgb01", frame_order: str = "rgb") -> PreQuant:
    """The integer quantization of PRE (module docstring, steps 5-6) for an input region of ``scale`` (float > 0),
    ``zero_point`` and ``bits`` (8 or 16), a model input format ``fmt`` (:data:`host.preprocess.INPUT_FORMATS`)
    and a frame in ``frame_order`` ("rgb" or "bgr"): the largest shift whose multiplier fits 16 bits.

    Raises:
        PreError: bits not 8/16, a scale not finite and > 0, a zero point outside the range, an unknown format or
            order, or a scale so small that even shift 1 overflows the multiplier.
    """
    if bits not in (8, 16):
        raise PreError(f"bits must be 8 or 16, got {bits}")
    if fmt not in INPUT_FORMATS:
        raise PreError(f"unknown input format {fmt!r}; one of {INPUT_FORMATS}")
    if frame_order not in ("rgb", "bgr"):
        raise PreError(f"frame order must be 'rgb' or 'bgr', got {frame_order!r}")
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise PreError(f"input scale must be finite and > 0, got {scale}")
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not qmin <= int(zero_point) <= qmax:
        raise PreError(f"zero point {zero_point} outside the int{bits} range [{qmin}, {qmax}]")
    k = 1.0 / ((1 << V_FRAC) * (255.0 if fmt == "rgb01" else 1.0)) / scale
    shift = 63
    while shift > 1 and round(k * 2.0 ** shift) >= 1 << MULT_BITS:
        shift -= 1
    mult = int(round(k * 2.0 ** shift))
    if not 0 < mult < 1 << MULT_BITS:
        raise PreError(f"input scale {scale:g}: no 16-bit multiplier reaches it")
    return PreQuant(mult, shift, int(zero_point), bits, (frame_order == "bgr") != fmt.startswith("bgr"))


@dataclass(frozen=True)
class PreFrame:
    """The per-frame registers PRE reads (:data:`generator.spec.isa.REGISTERS`, written by the driver for each
    frame): the frame at byte address ``addr`` of DDR in a buffer of ``size`` bytes, ``frame_w`` x ``frame_h``
    pixels, rows ``pitch`` bytes apart, ``bgr`` pixel order, and the placement and Q12.20 steps of
    :func:`pre_geometry` (its ``out_w``, ``out_h``, ``left``, ``top``, ``step_x``, ``step_y``)."""
    addr: int
    size: int
    frame_w: int
    frame_h: int
    pitch: int
    bgr: bool
    out_w: int
    out_h: int
    left: int
    top: int
    step_x: int
    step_y: int

    #: register name (generator.spec.isa.REGISTERS) of each field, in this order
    REGISTERS = ("frame", "frame_size", "frame_w", "frame_h", "frame_pitch", "frame_bgr", "pre_out_w", "pre_out_h",
                 "pre_left", "pre_top", "pre_step_x", "pre_step_y")

    @classmethod
    def of(cls, g: PreGeometry, addr: int, size: int, pitch: int | None = None, bgr: bool = False) -> "PreFrame":
        """The registers for a frame of geometry ``g`` (:func:`pre_geometry`) at ``addr`` (``size`` bytes), rows
        ``pitch`` bytes apart (None: packed, 3 x frame_w)."""
        return cls(int(addr), int(size), g.frame_w, g.frame_h, 3 * g.frame_w if pitch is None else int(pitch),
                   bool(bgr), g.out_w, g.out_h, g.left, g.top, g.step_x, g.step_y)

    def registers(self) -> dict:
        """{register name: unsigned value} (frame_bgr as 0 / 1)."""
        vals = [self.addr, self.size, self.frame_w, self.frame_h, self.pitch, int(self.bgr), self.out_w, self.out_h,
                self.left, self.top, self.step_x, self.step_y]
        return dict(zip(self.REGISTERS, (int(v) for v in vals)))

    @classmethod
    def from_registers(cls, regs: dict) -> "PreFrame":
        """The inverse of :meth:`registers` (missing registers read 0, as after reset)."""
        v = [int(regs.get(n, 0)) for n in cls.REGISTERS]
        v[5] = bool(v[5] & 1)
        return cls(*v)

    def geometry(self, net_w: int, net_h: int) -> PreGeometry:
        """The :class:`PreGeometry` of these registers for a ``net_w`` x ``net_h`` network input (PRE's fields)."""
        return PreGeometry(self.frame_w, self.frame_h, int(net_w), int(net_h), self.out_w, self.out_h, self.left,
                           self.top, self.step_x, self.step_y)


def source_rows(g: PreGeometry, y0: int = 0, rows: int | None = None) -> np.ndarray:
    """The frame rows PRE reads (int64, ascending, each once) for the network input's rows ``y0`` .. ``y0 + rows -
    1`` (default: all): every ``iy`` and ``iy1`` of the placed rows among them (empty when none is placed)."""
    rows = g.net_h - y0 if rows is None else rows
    j0, j1 = max(y0 - g.top, 0), min(y0 + rows - g.top, g.out_h)
    if j1 <= j0:
        return np.zeros(0, np.int64)
    iy, iy1, _ = source_positions(g.out_h, g.frame_h, g.step_y)
    return np.unique(np.concatenate([iy[j0:j1], iy1[j0:j1]]))


def frame_bytes(g: PreGeometry, pitch: int) -> int:
    """Bytes of a frame PRE reads from its first pixel: ``(frame_h - 1) * pitch + 3 * frame_w``."""
    return (g.frame_h - 1) * int(pitch) + 3 * g.frame_w


def pre_violation(g: PreGeometry, pitch: int, frame_size: int) -> str | None:
    """Why the accelerator's PRE refuses this frame geometry (its OUT_OF_RANGE checks, :data:`generator.spec.isa`'s
    PRE format), or None: sizes outside 1..4096, a pitch outside [3 x frame_w, MAX_PITCH], a placement outside the
    network input, a frame larger than ``frame_size`` bytes."""
    if not (1 <= g.frame_w <= MAX_FRAME[0] and 1 <= g.frame_h <= MAX_FRAME[1]):
        return f"frame of {g.frame_w} x {g.frame_h} pixels outside 1 x 1 .. {MAX_FRAME[0]} x {MAX_FRAME[1]}"
    if not (1 <= g.net_w <= MAX_FRAME[0] and 1 <= g.net_h <= MAX_FRAME[1]):
        return f"network input of {g.net_w} x {g.net_h} pixels outside 1 x 1 .. {MAX_FRAME[0]} x {MAX_FRAME[1]}"
    if not 3 * g.frame_w <= int(pitch) <= MAX_PITCH:
        return f"row pitch {pitch} outside [{3 * g.frame_w}, {MAX_PITCH}] bytes"
    if not (1 <= g.out_w <= g.net_w - g.left and 1 <= g.out_h <= g.net_h - g.top):
        return (f"resized frame {g.out_w} x {g.out_h} at ({g.left}, {g.top}) outside the {g.net_w} x {g.net_h} "
                f"network input")
    if frame_bytes(g, pitch) > int(frame_size):
        return f"frame of {frame_bytes(g, pitch)} bytes (at pitch {pitch}) beyond its {frame_size}-byte buffer"
    return None


def source_positions(n_out: int, n_src: int, step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, i1, f) int64 [n_out]: the two source indices and the FRAC_BITS fraction of each of ``n_out`` output
    positions along an axis of ``n_src`` source pixels at the Q12.20 ``step`` (step 2 of the module docstring; the
    last output position takes the last source pixel). The rows PRE reads (generator/spec/timing.py) follow them."""
    s = (np.arange(n_out, dtype=np.int64) * step) & 0xFFFFFFFF
    i = np.minimum(s >> POS_BITS, n_src - 1)
    f = (s >> (POS_BITS - FRAC_BITS)) & ((1 << FRAC_BITS) - 1)
    i[-1], f[-1] = n_src - 1, 0
    return i, np.minimum(i + 1, n_src - 1), f


def _frame_view(frame, g: PreGeometry, pitch: int | None) -> np.ndarray:
    """The frame as uint8 [frame_h, frame_w, 3]: ``frame`` uint8 [H, W, 3], or its raw rows uint8 [H, pitch] /
    flat bytes with ``pitch``. Raises PreError for another shape, dtype or a short pitch."""
    a = np.asarray(frame)
    if a.dtype != np.uint8:
        raise PreError(f"the frame must be uint8, got {a.dtype}")
    if pitch is None:
        if a.shape != (g.frame_h, g.frame_w, 3):
            raise PreError(f"frame of shape {list(a.shape)}, expected [{g.frame_h}, {g.frame_w}, 3]")
        return a
    if not 3 * g.frame_w <= pitch <= MAX_PITCH:
        raise PreError(f"row pitch {pitch} bytes outside [{3 * g.frame_w} (the row's bytes), {MAX_PITCH}]")
    flat = a.reshape(-1)
    need = (g.frame_h - 1) * pitch + 3 * g.frame_w
    if flat.size < need:
        raise PreError(f"frame buffer of {flat.size} bytes, {g.frame_h} rows at pitch {pitch} need {need}")
    rows = np.lib.stride_tricks.as_strided(flat, (g.frame_h, 3 * g.frame_w), (pitch, 1))
    return rows.reshape(g.frame_h, g.frame_w, 3)


def pre_run(frame, g: PreGeometry, q: PreQuant, pitch: int | None = None, y0: int = 0,
            rows: int | None = None) -> np.ndarray:
    """PRE on one frame (the module docstring, steps 3-6): int8 / int16 [rows, net_w, 3] (by ``q.bits``), the
    network input's rows ``y0`` .. ``y0 + rows - 1`` (default: all ``net_h``): a band of PRE is exactly those rows
    of the whole run.

    Args:
        frame: uint8 [frame_h, frame_w, 3], or with ``pitch`` the raw buffer (uint8, any shape) whose row r starts
            at byte r x pitch.
        g: :func:`pre_geometry` of this frame's size; q: :func:`pre_quant` of the input region.
    Raises:
        PreError: a frame that does not match ``g`` (shape, dtype, pitch), a band outside the network input.
    """
    rows = g.net_h - y0 if rows is None else int(rows)
    if not (0 <= y0 and 0 <= rows and y0 + rows <= g.net_h):
        raise PreError(f"band of rows {y0} .. {y0 + rows - 1} outside the network input's {g.net_h} rows")
    p = _frame_view(frame, g, pitch)
    full = np.full((rows, g.net_w, 3), PAD << V_FRAC, np.int64)
    j0, j1 = max(y0 - g.top, 0), min(y0 + rows - g.top, g.out_h)      # placed rows of the band (resized rows)
    if j1 > j0:
        iy, iy1, fy = (a[j0:j1] for a in source_positions(g.out_h, g.frame_h, g.step_y))
        ix, ix1, fx = source_positions(g.out_w, g.frame_w, g.step_x)
        need = np.unique(np.concatenate([iy, iy1]))
        src = p[need].astype(np.int32)                                  # [R, frame_w, 3]
        w0, w1 = ((1 << FRAC_BITS) - fx)[None, :, None], fx[None, :, None]
        h = w0 * src[:, ix] + w1 * src[:, ix1]                          # [R, out_w, 3], 20 bits
        at = np.searchsorted(need, iy), np.searchsorted(need, iy1)
        v = ((1 << FRAC_BITS) - fy)[:, None, None].astype(np.int64) * h[at[0]] + fy[:, None, None] * h[at[1]]
        v = (v + (1 << (V_SHIFT - 1))) >> V_SHIFT                       # 24 bits
        full[g.top + j0 - y0:g.top + j1 - y0, g.left:g.left + g.out_w] = v
    qmin, qmax = -(1 << (q.bits - 1)), (1 << (q.bits - 1)) - 1
    out = ((full * q.mult + (1 << (q.shift - 1))) >> q.shift) + q.zero_point
    np.clip(out, qmin, qmax, out=out)
    if q.swap:
        out = out[:, :, ::-1]
    return np.ascontiguousarray(out, dtype=np.int8 if q.bits == 8 else np.int16)

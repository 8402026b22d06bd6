"""Standalone PRE programs (``CONFIG``, ``PRE``, ``END``) on drawn frames: what every executor must compute for
PRE, bit for bit (issue 45).

:func:`pre_case` builds one: a DDR image holding the four base-register buffers and, after them, the camera frame
(uint8 rows ``pitch`` bytes apart, the bytes between rows random), the frame's registers
(:class:`host.pre.PreFrame`) and the DDR image PRE must leave: :func:`host.pre.pre_run` written into the INPUT
buffer at the instruction's offset and strides, every other byte unchanged. :func:`draw_pre_case` draws its
parameters (frame sizes 1x1 to 1920x1080, odd widths, a pitch above the row, portrait and landscape, the three
resize modes, RGB / BGR frames and models, int8 / int16), as ``invoke fuzz`` does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.codegen.emit import config_insn
from generator.spec import isa
from generator.spec.hw import HwConfig
from host.manifest import page_round
from host.pre import PreFrame, frame_bytes, pre_geometry, pre_quant, pre_run
from host.preprocess import RESIZE_MODES


@dataclass
class PreCase:
    """One standalone PRE program: ``blob`` (encoded), ``ddr`` (uint8 image before), ``bases`` / ``sizes``
    (byte offset and bytes of each base register's buffer), ``frame`` (the PRE registers; ``addr`` an offset in
    ``ddr``), ``expect`` (uint8 image after), ``params`` (what was drawn), ``insn`` (the PRE instruction)."""
    blob: bytes
    ddr: np.ndarray
    bases: dict
    sizes: dict
    frame: PreFrame
    expect: np.ndarray
    params: dict
    insn: object

    def mismatch(self, got: np.ndarray) -> str:
        """"" when ``got`` (an executor's DDR image after) equals :attr:`expect`, else where it first differs."""
        got = np.asarray(got)[:self.expect.size]
        bad = np.flatnonzero(got != self.expect)
        if not bad.size:
            return ""
        return f"{bad.size} DDR bytes differ from host.pre.pre_run's, first at {int(bad[0]):#x}"


def pre_case(hw: HwConfig, frame_w: int, frame_h: int, net_w: int, net_h: int, mode: str = "stretch",
             bits: int = 8, pitch: int | None = None, frame_bgr: bool = False, fmt: str = "rgb01",
             scale: float | None = None, zero_point: int | None = None, dst_pad: int = 1, extra_pix: int = 0,
             seed: int = 0, band: tuple | None = None) -> PreCase:
    """A standalone PRE program for ``hw`` on a random ``frame_w`` x ``frame_h`` frame to a ``net_w`` x ``net_h``
    input (``mode``: :data:`host.preprocess.RESIZE_MODES`; ``bits`` 8 / 16; ``pitch``: bytes between frame rows,
    None: 3 x frame_w; ``fmt``: the model's input format; ``scale`` / ``zero_point``: the input region's, None:
    the input's range (0..1 or 0..255 by ``fmt``) at ``bits``, asymmetric; ``dst_pad``: a border of that many pixels around the written input,
    as a padded region; ``extra_pix``: bytes after each pixel's three channels (a wider pixel stride); ``band``:
    (y0, rows), a PRE of those rows of the input only, None: all).
    Raises host.pre.PreError for a size PRE cannot take."""
    rng = np.random.default_rng(seed)
    qmax = (1 << (bits - 1)) - 1
    if scale is None:
        scale, zero_point = (1.0 if fmt == "rgb01" else 255.0) / (2 * qmax + 1), -qmax - 1
    zero_point = 0 if zero_point is None else zero_point
    g = pre_geometry(frame_w, frame_h, net_w, net_h, mode)
    q = pre_quant(scale, zero_point, bits, fmt, "bgr" if frame_bgr else "rgb")
    pitch = 3 * frame_w if pitch is None else int(pitch)
    eb = bits // 8
    pix = 3 * eb + extra_pix
    row = (net_w + 2 * dst_pad) * pix
    dst_bytes = (net_h + 2 * dst_pad) * row
    offset = dst_pad * row + dst_pad * pix
    sizes = {"WEIGHTS": 64, "ACT": 64, "INPUT": dst_bytes, "OUTPUT": 64}
    bases, cur = {}, 0
    for k in isa.BASE_REGS:
        bases[k] = cur
        cur += page_round(sizes[k])
    nframe = frame_bytes(g, pitch)
    frame_at = cur + int(rng.integers(0, 64))            # any alignment
    ddr = rng.integers(0, 256, page_round(frame_at + nframe + 1), dtype=np.uint8)
    frame = PreFrame.of(g, frame_at, nframe, pitch, frame_bgr)
    prec = 0 if bits == 8 else 1
    y0, rows = band if band is not None else (0, net_h)
    ins = isa.make("PRE", base_reg=isa.BASE_REGS["INPUT"], ddr_offset=offset + y0 * row, row_stride=row,
                   pix_stride=pix, net_w=net_w, net_h=net_h, mult=q.mult, shift=q.shift, zp=q.zero_point,
                   model_bgr=int(fmt.startswith("bgr")), prec=prec, y0=y0, rows=rows)
    blob = isa.encode_program([config_insn(hw), ins, isa.make("END")])
    out = pre_run(ddr[frame_at:frame_at + nframe], g, q, pitch=pitch, y0=y0, rows=rows)
    expect = ddr.copy()
    dst = np.lib.stride_tricks.as_strided(expect[bases["INPUT"] + offset + y0 * row:], (rows, net_w, 3 * eb),
                                          (row, pix, 1), writeable=True)
    dst[...] = out.view(np.uint8).reshape(rows, net_w, 3 * eb)
    params = dict(frame_w=frame_w, frame_h=frame_h, net_w=net_w, net_h=net_h, mode=mode, bits=bits, pitch=pitch,
                  frame_bgr=frame_bgr, fmt=fmt, scale=scale, zero_point=zero_point, dst_pad=dst_pad,
                  extra_pix=extra_pix, seed=seed, band=band)
    return PreCase(blob, ddr, bases, sizes, frame, expect, params, ins)


#: (frame_w, frame_h) always among the drawn sizes: 1x1, an odd portrait, a landscape, 1920x1080
EDGE_FRAMES = [(1, 1), (33, 47), (97, 41), (1920, 1080)]


def draw_pre_case(rng: np.random.Generator, max_pixels: int = 1920 * 1080, net_max: int = 64,
                  bands: bool = False) -> dict:
    """Keyword arguments of :func:`pre_case` drawn by ``rng``: frame sizes log-uniform from 1 up to 1920 x 1080 (at
    most ``max_pixels``), a pitch above the row one time in three, a network input up to ``net_max`` pixels a side,
    any resize mode, frame and model orders, int8 / int16, a padded destination; with ``bands`` one case in two a
    band of the rows (:func:`_band`)."""
    while True:
        w, h = (int(np.exp(rng.uniform(0, np.log(n)))) for n in (1920, 1080))
        if rng.random() < 0.3:
            w, h = h, w                                  # portrait
        if w * h <= max_pixels:
            break
    nw, nh = (int(rng.integers(1, net_max + 1)) for _ in range(2))
    return dict(frame_w=w, frame_h=h, net_w=nw, net_h=nh, mode=str(rng.choice(RESIZE_MODES)),
                bits=int(rng.choice([8, 16])), pitch=3 * w + (int(rng.integers(1, 64)) if rng.random() < 0.33 else 0),
                frame_bgr=bool(rng.integers(2)), fmt=str(rng.choice(["rgb01", "rgb255", "bgr255"])),
                dst_pad=int(rng.integers(0, 2)), extra_pix=int(rng.choice([0, 0, 1, 3])),
                seed=int(rng.integers(1 << 31)), band=_band(rng, nh) if bands else None)


def _band(rng: np.random.Generator, net_h: int) -> tuple | None:
    """A band (y0, rows) of a ``net_h``-row input one time in two (rows 0 one time in ten of those), else None."""
    if rng.random() < 0.5:
        return None
    y0 = int(rng.integers(0, net_h))
    return y0, 0 if rng.random() < 0.1 else int(rng.integers(1, net_h - y0 + 1))

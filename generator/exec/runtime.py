"""DDR images for a compiled program: build one (weights, zero-point borders, input), run the golden
simulator on it (through :mod:`generator.exec`), read the heads back. The host driver does the same with
``pynq.allocate`` buffers."""
from __future__ import annotations

import numpy as np

from generator.spec import isa
from generator.codegen.program import Program
from host.manifest import im2col_into, page_round, region_dtype, region_shape


def region_array(ddr: np.ndarray, base: int, r: dict) -> np.ndarray:
    """Writable view of a whole region (border included) as [H + 2p, W + 2p, C] int8/int16 by the region's
    ``bits`` (:func:`host.manifest.region_shape`; the driver views its buffers the same way)."""
    shape, dt = region_shape(r), region_dtype(r)
    raw = ddr[base + r["addr"]: base + r["addr"] + shape[0] * shape[1] * shape[2] * dt.itemsize]
    return raw.view(dt).reshape(shape)


def build_ddr(prog: Program, x_q: np.ndarray) -> tuple[np.ndarray, dict]:
    """DDR image and base addresses for one frame.

    Args: x_q: quantized input, int [C, H, W] (or [1, C, H, W]).
    Returns: (uint8 DDR image, {"WEIGHTS": addr, "ACT": addr, "INPUT": addr, "OUTPUT": addr}) with every region
        filled with its zero point (the padding borders) and the input written into its region's interior.
    """
    lay = prog.layout
    bases, cur = {}, 0
    for k in isa.BASE_REGS:
        bases[k] = cur
        cur += page_round(lay.sizes[k])
    ddr = np.zeros(cur, np.uint8)
    ddr[bases["WEIGHTS"]:bases["WEIGHTS"] + len(prog.weights)] = np.frombuffer(prog.weights, np.uint8)
    for r in lay.regions.values():
        region_array(ddr, bases[r["base_reg"]], r)[...] = r["zp"]
    inp = [r for r in lay.regions.values() if r["base_reg"] == "INPUT"]
    if len(inp) != 1:
        raise ValueError(f"expected one input region, found {len(inp)}")
    write_input(region_array(ddr, bases["INPUT"], inp[0]), inp[0], x_q)
    return ddr, bases


def build_frame_ddr(prog: Program, frame: np.ndarray, bgr: bool = False,
                    pitch: int | None = None) -> tuple[np.ndarray, dict, object]:
    """DDR image, base addresses and PRE's frame registers for one camera frame of a program with PRE
    (:attr:`Program.pre_frame`): ``frame`` uint8 [H, W, 3] (R, G, B; ``bgr``: B, G, R) placed after the four
    base-register buffers, its rows ``pitch`` bytes apart (None: packed; the bytes between rows 0xA5); the regions filled with their zero points (the input region's border
    included: PRE writes its interior). Returns (uint8 image, bases, :class:`host.pre.PreFrame` with ``addr`` the
    frame's offset in the image). Raises ValueError for a program without PRE or a frame of another shape or
    dtype, host.pre.PreError for a size PRE cannot take."""
    from host.pre import PreFrame, pre_geometry

    if prog.pre_frame is None:
        raise ValueError("the program has no PRE instruction: give the quantized input (build_ddr)")
    a = np.asarray(frame)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"a camera frame is uint8 [H, W, 3], got {a.dtype} {list(a.shape)}")
    ins = next(i for i in prog.insns if i.op == "PRE")
    g = pre_geometry(a.shape[1], a.shape[0], ins.f["net_w"], ins.f["net_h"], prog.pre_mode)
    lay = prog.layout
    bases, cur = {}, 0
    for k in isa.BASE_REGS:
        bases[k] = cur
        cur += page_round(lay.sizes[k])
    row = 3 * a.shape[1]
    pitch = row if pitch is None else int(pitch)
    if pitch < row:
        raise ValueError(f"row pitch {pitch} bytes is below the frame row's {row}")
    nbytes = (a.shape[0] - 1) * pitch + row
    ddr = np.zeros(cur + page_round(nbytes), np.uint8)
    ddr[bases["WEIGHTS"]:bases["WEIGHTS"] + len(prog.weights)] = np.frombuffer(prog.weights, np.uint8)
    for r in lay.regions.values():
        region_array(ddr, bases[r["base_reg"]], r)[...] = r["zp"]
    ddr[cur:cur + nbytes] = 0xA5
    rows = np.lib.stride_tricks.as_strided(ddr[cur:], (a.shape[0], row), (pitch, 1), writeable=True)
    rows[...] = a.reshape(a.shape[0], row)
    return ddr, bases, PreFrame.of(g, cur, nbytes, pitch, bgr)


def write_input(a: np.ndarray, r: dict, x_q: np.ndarray) -> None:
    """Write the quantized input ``x_q`` (int [C, H, W] or [1, C, H, W]) into ``a``, the whole [H + 2p, W + 2p, C]
    array of input region ``r``: its interior, or for an im2col region its patches
    (:func:`host.manifest.im2col_into`, the driver's layout)."""
    if r.get("im2col"):
        c = r["im2col"]
        im2col_into(a, np.asarray(x_q).reshape(c["c"], c["h"], c["w"]).transpose(1, 2, 0), c, r["zp"])
        return
    x = np.asarray(x_q).reshape(r["channels"], r["h"], r["w"])
    p = r["pad"]
    a[p:p + r["h"], p:p + r["w"]] = x.transpose(1, 2, 0)


def read_tensor(prog: Program, g, ddr: np.ndarray, bases: dict, name: str) -> np.ndarray:
    """Integer tensor ``name`` read from the DDR image: int64 [C, H, W] (its channels of its region)."""
    t = g.tensors[name]
    r = prog.layout.regions[t.region]
    a = region_array(ddr, bases[r["base_reg"]], r)
    p = r["pad"]
    return a[p:p + r["h"], p:p + r["w"], t.ch_offset:t.ch_offset + t.shape[1]].transpose(2, 0, 1).astype(np.int64)

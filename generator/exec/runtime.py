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

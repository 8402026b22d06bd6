"""rtl/pe_array_2x.sv (the double-pumped PE array of issue 46; COMPUTE's with PUMP = 2) alone against numpy: the DSP48E2
cascades clocked at twice the logic clock, each multiplying pixel pair A at the middle clk2x edge and pair B at
the next clk edge with the same weights; per output lane m and pair P in {a, b}: sP0 = sum_n xP0[n]*w[m][n] and
(int8, two activations packed per DSP A port) sP1 = sum_n xP1[n]*w[m][n]; int16: sP1 = 0. ACC_W-bit two's
complement, PE2_LAT = 3 + L/2 + PE_TREE_ST clk cycles (L = 1 + PE_G + (PE_G even)), a new operand set every clk
cycle (extremes included), int8 and int16 interleaved. The clocks come from one clk2x source (the test bench
divides it), as two clocks of one MMCM."""
from __future__ import annotations

import random
from pathlib import Path

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from generator.backends.rtl import package_context
from helpers import tiered
from rtl_unit import UnitBuild, tiny_board, unit_args
from test_pe_array import pack, unpack_signed, wrap

HERE = Path(__file__).resolve().parent


def pe2_latency(pe_g: int, pe_tree_st: int) -> int:
    """PE2_LAT of rtl/pe_array_2x.sv (its header): clk edges from the one that takes the operands to the one
    that gives their sums, counted as PE_LAT of rtl/pe_array.sv."""
    return 3 + (1 + pe_g + (1 - pe_g % 2)) // 2 + pe_tree_st


@cocotb.test()
async def pumped_products_match_numpy(dut):
    args = unit_args()
    tn, tm, acc_w = args["tn"], args["tm"], args["acc_w"]
    rng = random.Random(args["seed"])
    nrng = np.random.default_rng(args["seed"])
    Clock(dut.clk2x, 5, unit="ns").start()
    for _ in range(3):
        await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    checked = {0: 0, 1: 0}
    pending = []

    def dots(x, w):
        return [wrap(int(np.dot(w[m].astype(object), x.astype(object))), acc_w) for m in range(tm)]

    for cyc in range(args["cycles"] + args["lat"]):
        p16 = int(rng.random() < 0.5)
        lo, hi = (-32768, 32767) if p16 else (-128, 127)
        if cyc % 7 == 0:
            xs = [nrng.choice([lo, hi, -1, 0], tn) for _ in range(4)]
            w = nrng.choice([lo, hi, -1, 1], (tm, tn))
        else:
            xs = [nrng.integers(lo, hi + 1, tn) for _ in range(4)]
            w = nrng.integers(lo, hi + 1, (tm, tn))
        dut.p16.value = p16
        for name, x in zip(("xa0", "xa1", "xb0", "xb1"), xs):
            getattr(dut, name).value = pack(x)
        dut.w.value = pack(w.reshape(-1))
        zero = [0] * tm
        pending.append((p16, dots(xs[0], w), zero if p16 else dots(xs[1], w),
                        dots(xs[2], w), zero if p16 else dots(xs[3], w)))
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if len(pending) < args["lat"]:
            continue
        p16, *refs = pending.pop(0)
        for name, ref in zip(("sa0", "sa1", "sb0", "sb1"), refs):
            got = unpack_signed(int(getattr(dut, name).value), tm, acc_w)
            assert got == ref, f"cycle {cyc} p16={p16}: {name} {got} != {ref}"
        checked[p16] += 1
    assert checked[0] > 10 and checked[1] > 10


#: TINY (Tn = 8: two chains of PE_CHAIN per lane), chains of two (Tn = 2) and the board's Tn = 32 (eight chains,
#: the deepest tree); the default tier runs TINY
SIZES = {"tiny": {}, "tn2": {"tn": 2, "tm": 2}, "tn32": {"tn": 32, "tm": 2}}


@pytest.fixture(scope="module", params=tiered(list(SIZES), ["tiny"]))
def pe2_build(request):
    return UnitBuild("pe_array_2x_tb", tiny_board(**SIZES[request.param]), name=f"pe_array_2x-{request.param}",
                     extra=[HERE / "pe_array_2x_tb.sv"])


def test_pumped_pe_array_products(pe2_build):
    p = package_context(pe2_build.board)
    pe2_build.run("test_pe_array_2x", "pumped_products_match_numpy",
                  {"seed": 21, "cycles": 300, "tn": p["tn"], "tm": p["tm"], "acc_w": p["acc_w"],
                   "lat": pe2_latency(p["pe_chain"], p["pe_tree_st"])})


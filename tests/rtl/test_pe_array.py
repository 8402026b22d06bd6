"""rtl/pe_array.sv against numpy: per output lane m, sum0 = sum_n x0[n]*w[m][n] and (int8, two activations packed
in each DSP48E2 A port at PACK_SHIFT) sum1 = sum_n x1[n]*w[m][n], int16: sum0 only, sum1 = 0; ACC_W-bit two's
complement, PE_LAT clocks of latency (the DSP48E2 cascades' A/B, M and P registers and the registered adder tree), a new
random operand set every cycle (extremes included), int8 and int16 interleaved."""
from __future__ import annotations

import os
import random
import re
from pathlib import Path

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from generator.backends.rtl import package_context
from helpers import tiered
from rtl_unit import UnitBuild, tiny_board, unit_args


def pack(vals, bits=16) -> int:
    out = 0
    for k, v in enumerate(vals):
        out |= (int(v) & ((1 << bits) - 1)) << (bits * k)
    return out


def unpack_signed(v: int, n: int, bits: int) -> list[int]:
    out = []
    for k in range(n):
        f = (v >> (bits * k)) & ((1 << bits) - 1)
        out.append(f - (1 << bits) if f >> (bits - 1) else f)
    return out


def wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


@cocotb.test()
async def products_match_numpy(dut):
    args = unit_args()
    tn, tm, acc_w = args["tn"], args["tm"], args["acc_w"]
    rng = random.Random(args["seed"])
    nrng = np.random.default_rng(args["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    for _ in range(2):          # (time 0: Xilinx's DSP48E2 model sets its attributes 1 ps after it, past the edge)
        await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    checked = {0: 0, 1: 0}
    pending = []                                             # references of the operands in flight
    for cyc in range(args["cycles"] + args["lat"]):
        p16 = int(rng.random() < 0.5)
        lo, hi = (-32768, 32767) if p16 else (-128, 127)
        if cyc % 7 == 0:                                     # extremes: the packing's borrow and the sign corners
            x0 = nrng.choice([lo, hi, -1, 0], tn)
            x1 = nrng.choice([lo, hi, -1, 0], tn)
            w = nrng.choice([lo, hi, -1, 1], (tm, tn))
        else:
            x0 = nrng.integers(lo, hi + 1, tn)
            x1 = nrng.integers(lo, hi + 1, tn)
            w = nrng.integers(lo, hi + 1, (tm, tn))
        dut.p16.value = p16
        dut.x0.value = pack(x0)
        dut.x1.value = pack(x1)
        dut.w.value = pack(w.reshape(-1))
        pending.append((p16,
                        [wrap(int(np.dot(w[m].astype(object), x0.astype(object))), acc_w) for m in range(tm)],
                        [0] * tm if p16 else
                        [wrap(int(np.dot(w[m].astype(object), x1.astype(object))), acc_w) for m in range(tm)]))
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if len(pending) < args["lat"]:
            continue
        # outputs of the operands applied lat edges ago
        p16, ref0, ref1 = pending.pop(0)
        got0 = unpack_signed(int(dut.sum0.value), tm, acc_w)
        got1 = unpack_signed(int(dut.sum1.value), tm, acc_w)
        assert got0 == ref0, f"cycle {cyc} p16={p16}: sum0 {got0} != {ref0}"
        assert got1 == ref1, f"cycle {cyc} p16={p16}: sum1 {got1} != {ref1}"
        checked[p16] += 1
    assert checked[0] > 10 and checked[1] > 10


#: array sizes: TINY (8 x 8: two chains of four per output lane), one chain per lane (Tn = 4), chains shorter
#: than PE_CHAIN (Tn = 2) and a deeper tree (Tn = 32: eight chains, the board's). The default tier runs Tn = 32
#: (TINY's array runs every layer of the RTL suites bit for bit in tests/exec/test_rtl.py); all in --slow
SIZES = {"tiny": {}, "tn4": {"tn": 4, "tm": 4}, "tn2": {"tn": 2, "tm": 2}, "tn32": {"tn": 32, "tm": 2}}


@pytest.fixture(scope="module", params=tiered(list(SIZES), ["tn32"]))
def pe_build(request):
    return UnitBuild("pe_array", tiny_board(**SIZES[request.param]), name=f"pe_array-{request.param}")


def test_pe_array_products(pe_build):
    p = package_context(pe_build.board)
    pe_build.run("test_pe_array", "products_match_numpy",
                 {"seed": 11, "cycles": 300, "tn": p["tn"], "tm": p["tm"], "acc_w": p["acc_w"],
                  "lat": p["pe_dsp_st"] + p["pe_tree_st"]})


def unisim_dsp48e2() -> Path | None:
    """Xilinx's DSP48E2 simulation model (unisim library, Apache-2.0): ``$XILINX_UNISIM_DSP48E2``, else the copy
    in a Vivado installation (``$XILINX_VIVADO/data/verilog/src/unisims/DSP48E2.v``); None when neither exists."""
    env = os.environ.get("XILINX_UNISIM_DSP48E2")
    viv = os.environ.get("XILINX_VIVADO")
    for p in [env, viv and Path(viv) / "data" / "verilog" / "src" / "unisims" / "DSP48E2.v"]:
        if p and Path(p).is_file():
            return Path(p)
    return None


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@pytest.mark.expected_skip("needs Xilinx's unisim DSP48E2.v (Vivado, or XILINX_UNISIM_DSP48E2), not on these machines")
def test_pe_array_on_xilinx_dsp48e2_model(tmp_path):
    """The PE array as synthesis sees it (`SYNTHESIS`: rtl/pe_dsp.sv instantiates the DSP48E2 primitive with its
    attributes, OPMODE / INMODE / ALUMODE and the cascade) simulated on Xilinx's own DSP48E2 model against numpy:
    checks that the instantiation computes what the behavioural model of the other tests computes. Verilator has
    no tristate ports, so the model's floating-pin defaults (``(X === 1'bz) || X``, ``(X !== 1'bz) && X``) are
    reduced to ``X`` in a copy (every pin is driven); its delays need ``--timing``."""
    src = unisim_dsp48e2()
    if src is None:
        pytest.skip("Xilinx's unisim DSP48E2.v not found (set XILINX_UNISIM_DSP48E2 or XILINX_VIVADO)")
    text = re.sub(r"\((\w+(?:\[\d+\])?) === 1'bz\) \|\| ", "", src.read_text())
    text = re.sub(r"\((\w+(?:\[\d+\])?) !== 1'bz\) && ", "", text)
    model = tmp_path / "DSP48E2.v"
    model.write_text(text)
    b = UnitBuild("pe_array_unisim", tiny_board(), name="pe_array-unisim",
                  extra=[model, Path(__file__).parent / "pe_array_unisim.sv"],
                  build_args=["-DSYNTHESIS", "--timing", "-CFLAGS", "-fcoroutines", "-Wno-fatal", "-Wno-lint",
                              "-Wno-style"])
    p = package_context(b.board)
    b.run("test_pe_array", "products_match_numpy",
          {"seed": 12, "cycles": 300, "tn": p["tn"], "tm": p["tm"], "acc_w": p["acc_w"],
           "lat": p["pe_dsp_st"] + p["pe_tree_st"]})

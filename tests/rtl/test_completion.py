"""rtl/status.sv (completion, error status, watchdog, debug counters) against generator/spec/isa.py: each error input
raises its STATUS_BITS bit (named by isa, not by the RTL), `stop` follows the first error; `finish` only when every
unit is idle and (an error stopped the run, or END ran with the queues empty, or the fetch ran out); TOKENS_LEFT when
a normal end leaves tokens; WATCHDOG after exactly isa.WATCHDOG_CYCLES cycles without progress (and not while there
is progress); the debug counters count retirements and busy cycles."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from rtl_unit import UnitBuild, unit_args

ERR_INPUTS = {"illegal": "ILLEGAL_OPCODE", "cfg_missing": "CONFIG_MISSING", "cfg_err_isa": "ISA_VERSION_MISMATCH",
              "cfg_err_cfg": "CONFIG_MISMATCH", "out_of_range": "OUT_OF_RANGE", "no_end": "NO_END",
              "tok_overflow": "TOKEN_OVERFLOW"}
IDLE = {"fe_idle": 1, "ld_idle": 1, "cp_idle": 1, "st_idle": 1, "rd_busy": 0, "insn_moved": 0}
INPUTS = list(ERR_INPUTS) + list(IDLE) + ["tok_any", "queues_empty", "fe_exhausted", "end_done", "cp_busy",
                                          "st_retire"]


async def _edge(dut):
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")


async def _start(dut, **vals):
    for s in INPUTS:
        getattr(dut, s).value = 0
    for s, v in IDLE.items():
        getattr(dut, s).value = v
    dut.queues_empty.value = 1
    dut.start_pulse.value = 1
    dut.run.value = 0
    await _edge(dut)
    dut.start_pulse.value = 0
    dut.run.value = 1
    for s, v in vals.items():
        getattr(dut, s).value = v
    await Timer(1, unit="ns")


@cocotb.test()
async def status_matches_isa(dut):
    args = unit_args()
    rng = random.Random(args["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    # each error input -> its bit; stop from the next cycle; finish once idle
    for sig, name in ERR_INPUTS.items():
        await _start(dut, ld_idle=0)
        assert int(dut.err_bits.value) == 0 and int(dut.stop.value) == 0 and int(dut.finish.value) == 0
        getattr(dut, sig).value = 1
        await Timer(1, unit="ns")
        assert int(dut.err_bits.value) == 1 << isa.STATUS_BITS[name], name
        await _edge(dut)
        getattr(dut, sig).value = 0
        await Timer(1, unit="ns")
        await _edge(dut)
        assert int(dut.stop.value) == 1 and int(dut.finish.value) == 0, name    # LOAD still busy
        dut.ld_idle.value = 1
        await _edge(dut)                                               # (finish is registered)
        assert int(dut.finish.value) == 1, name
    # normal end: END done and queues empty, every unit idle; with tokens left: TOKENS_LEFT
    for tokens in (0, 1):
        await _start(dut, end_done=1, queues_empty=0, tok_any=tokens)
        await _edge(dut)
        assert int(dut.finish.value) == 0
        for s in ("fe_idle", "cp_idle", "st_idle"):                 # any busy unit holds the end
            getattr(dut, s).value = 0
            dut.queues_empty.value = 1
            await _edge(dut)
            assert int(dut.finish.value) == 0, s
            getattr(dut, s).value = 1
        dut.rd_busy.value = 1
        await _edge(dut)
        assert int(dut.finish.value) == 0
        dut.rd_busy.value = 0
        await _edge(dut)
        assert int(dut.finish.value) == 1
        assert int(dut.err_bits.value) == (tokens << isa.STATUS_BITS["TOKENS_LEFT"])
    await _start(dut, fe_exhausted=1)                                 # the fetch ran out (NO_END is raised apart)
    await _edge(dut)
    assert int(dut.finish.value) == 1 and int(dut.err_bits.value) == 0
    # watchdog: WATCHDOG_CYCLES cycles without progress; any progress restarts the count
    await _start(dut, queues_empty=0)
    wd = 1 << isa.STATUS_BITS["WATCHDOG"]
    n, progressed = 0, False
    progress_at = rng.randint(100, isa.WATCHDOG_CYCLES - 10)
    while not int(dut.err_bits.value) & wd:
        prog = n == progress_at and not progressed                   # one progress cycle restarts the count
        progressed |= prog
        dut.insn_moved.value = int(prog)
        await _edge(dut)
        n = 0 if prog else n + 1
        assert n <= isa.WATCHDOG_CYCLES, "no WATCHDOG"
    dut.insn_moved.value = 0
    assert progressed and n == isa.WATCHDOG_CYCLES - 1, n          # raised in the WATCHDOG_CYCLES-th idle cycle
    # debug counters
    await _start(dut, queues_empty=0)
    want = {"dbg_st_retired": 0, "dbg_ld_busy": 0, "dbg_cp_busy": 0}
    for _ in range(200):
        r, lb, cb = (int(rng.random() < p) for p in (0.2, 0.5, 0.6))
        dut.st_retire.value = r
        dut.ld_idle.value = 1 - lb
        dut.cp_busy.value = cb
        await _edge(dut)
        want["dbg_st_retired"] += r
        want["dbg_ld_busy"] += lb
        want["dbg_cp_busy"] += cb
    for k, v in want.items():
        assert int(getattr(dut, k).value) == v, k


@pytest.fixture(scope="module")
def status_build():
    return UnitBuild("status")


def test_status_unit(status_build):
    status_build.run("test_completion", "status_matches_isa", {"seed": 19})

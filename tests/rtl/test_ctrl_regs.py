"""rtl/ctrl_regs.sv over AXI-Lite (cocotbext-axi AxiLiteMaster) against the register map of generator/spec/isa.py
(REGISTERS, CTRL_BITS): plain registers read back what was written and drive the base / size / program outputs;
read-only registers (HW_INFO packed as isa documents it, CONFIG_ID of the board's HwConfig) ignore writes; the
ap_ctrl_hs handshake (ap_start accepted with one start pulse, ap_idle / ap_done / ap_ready, ap_done clear-on-read,
a second start ignored while running), the interrupt (GIE, IER, ISR toggle-on-write), the status register (first
error's bits only) and the cycle counter (cycles of the run)."""
from __future__ import annotations

import logging
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from generator.spec.hw import HwConfig
from host.registers import HW_INFO_MODES, SIZE_REGS
from rtl_unit import UnitBuild, tiny_board, unit_args

REG = {n: off for n, off, _, _ in isa.REGISTERS}
CB = isa.CTRL_BITS


async def _setup(dut):
    from cocotbext.axi import AxiLiteBus, AxiLiteMaster
    Clock(dut.clk, 10, unit="ns").start()
    dut.err_bits.value = 0
    dut.stop.value = 0
    dut.finish.value = 0
    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst_n, reset_active_level=False)
    logging.getLogger(f"cocotb.{dut._name}.s_axil").setLevel(logging.WARNING)
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    return axil


@cocotb.test()
async def register_map(dut):
    """Plain registers round-trip and drive the outputs; read-only registers are constant."""
    args = unit_args()
    rng = random.Random(args["seed"])
    axil = await _setup(dut)
    vals = {}
    for name in ["weights", "act", "input", "output", "insns"]:
        v = rng.getrandbits(64)
        vals[name] = v
        await axil.write_dword(REG[name], v & 0xFFFFFFFF)
        await axil.write_dword(REG[name] + 4, v >> 32)
    for name in ["n_insns", "fetch_ddr"] + list(SIZE_REGS.values()):
        vals[name] = rng.getrandbits(32)
        await axil.write_dword(REG[name], vals[name])
    for name in ["weights", "act", "input", "output", "insns"]:
        got = await axil.read_dword(REG[name]) | await axil.read_dword(REG[name] + 4) << 32
        assert got == vals[name], name
    for name in ["n_insns", "fetch_ddr"] + list(SIZE_REGS.values()):
        assert await axil.read_dword(REG[name]) == vals[name], name
    base = int(dut.base_addrs.value)
    sizes = int(dut.ddr_sizes.value)
    for k, name in isa.BASE_REG_NAMES.items():
        assert (base >> (64 * k)) & (2 ** 64 - 1) == vals[name.lower()], name
        assert (sizes >> (32 * k)) & 0xFFFFFFFF == vals[SIZE_REGS[name]], name
    assert int(dut.insns_addr.value) == vals["insns"]
    assert int(dut.n_insns.value) == vals["n_insns"]
    assert int(dut.fetch_ddr.value) == vals["fetch_ddr"] & 1
    # read-only registers: constants of the configuration, writes ignored
    for name, want in [("hw_info", args["hw_info"]), ("config_id", args["config_id"]), ("status", 0), ("cycles", 0)]:
        await axil.write_dword(REG[name], 0xDEADBEEF)
        assert await axil.read_dword(REG[name]) == want, name
    ctrl = await axil.read_dword(REG["CTRL"])
    assert ctrl == 1 << CB["ap_idle"], hex(ctrl)                   # idle after reset, nothing else


async def _edge(dut):
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")


@cocotb.test()
async def ap_ctrl_hs_handshake(dut):
    """start -> one start pulse, run; errors accumulate until stop; finish -> done/idle/ready + interrupt."""
    args = unit_args()
    axil = await _setup(dut)
    await axil.write_dword(REG["GIE"], 1)
    await axil.write_dword(REG["IER"], 1)
    assert int(dut.irq.value) == 0 and int(dut.run.value) == 0
    # watch the start pulse while the write goes through
    pulses = []

    async def watch():
        while True:
            await _edge(dut)
            pulses.append((int(dut.start_pulse.value), int(dut.run.value)))

    w = cocotb.start_soon(watch())
    await axil.write_dword(REG["CTRL"], 1 << CB["ap_start"])
    await ClockCycles(dut.clk, 3)
    w.cancel()
    assert sum(p for p, _ in pulses) == 1, pulses                   # exactly one start pulse
    k = next(i for i, (p, _) in enumerate(pulses) if p)
    assert pulses[k][1] == 0 and all(r for _, r in pulses[k + 1:]), pulses   # run from the cycle after it
    ctrl = await axil.read_dword(REG["CTRL"])
    assert not ctrl >> CB["ap_idle"] & 1 and not ctrl >> CB["ap_done"] & 1 and not ctrl >> CB["ap_start"] & 1
    # a second start while running is ignored
    await axil.write_dword(REG["CTRL"], 1 << CB["ap_start"])
    await _edge(dut)
    assert int(dut.start_pulse.value) == 0
    # errors: the first raised bits stick; once stop is set, later bits are not recorded
    first = 1 << args["err_a"]
    dut.err_bits.value = first
    await _edge(dut)
    dut.err_bits.value = 0
    dut.stop.value = 1
    await _edge(dut)
    dut.err_bits.value = 1 << args["err_b"]
    await _edge(dut)
    dut.err_bits.value = 0
    c0 = int(dut.cycles_r.value)
    await ClockCycles(dut.clk, 17)
    await Timer(1, unit="ns")
    assert int(dut.cycles_r.value) == c0 + 17                       # counts every cycle of the run
    dut.finish.value = 1
    await _edge(dut)
    dut.finish.value = 0
    cyc = int(dut.cycles_r.value)
    await ClockCycles(dut.clk, 5)
    assert int(dut.run.value) == 0 and int(dut.cycles_r.value) == cyc   # stopped counting
    assert int(dut.irq.value) == 1                                  # GIE && ISR[0] && IER[0]
    assert await axil.read_dword(REG["status"]) == first
    assert await axil.read_dword(REG["cycles"]) == cyc
    ctrl = await axil.read_dword(REG["CTRL"])
    assert ctrl >> CB["ap_done"] & 1 and ctrl >> CB["ap_idle"] & 1 and ctrl >> CB["ap_ready"] & 1, hex(ctrl)
    ctrl = await axil.read_dword(REG["CTRL"])
    assert not ctrl >> CB["ap_done"] & 1 and not ctrl >> CB["ap_ready"] & 1 and ctrl >> CB["ap_idle"] & 1
    assert await axil.read_dword(REG["ISR"]) == 1
    await axil.write_dword(REG["ISR"], 1)                           # toggle on write: clears it
    assert await axil.read_dword(REG["ISR"]) == 0 and int(dut.irq.value) == 0
    # a new run clears status and cycles
    await axil.write_dword(REG["CTRL"], 1 << CB["ap_start"])
    dut.stop.value = 0
    await ClockCycles(dut.clk, 3)
    assert await axil.read_dword(REG["status"]) == 0
    assert int(dut.run.value) == 1


@pytest.fixture(scope="module")
def ctrl_build():
    return UnitBuild("ctrl_regs")


def _args(b):
    a = b.board.accelerator
    modes = sum(1 << v for v in HW_INFO_MODES.values())
    # (hw_info as isa.REGISTERS documents it, written out here independently of generator/backends/rtl/render.py)
    return {"seed": 3, "hw_info": isa.ISA_VERSION | a.tn << 8 | a.tm << 16 | modes << 24,
            "config_id": HwConfig.from_board(b.board, 8).config_id,
            "err_a": isa.STATUS_BITS["OUT_OF_RANGE"], "err_b": isa.STATUS_BITS["WATCHDOG"]}


def test_ctrl_register_map(ctrl_build):
    ctrl_build.run("test_ctrl_regs", "register_map", _args(ctrl_build))


def test_ctrl_ap_ctrl_hs(ctrl_build):
    ctrl_build.run("test_ctrl_regs", "ap_ctrl_hs_handshake", _args(ctrl_build))

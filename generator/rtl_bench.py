"""cocotb bench of the RTL accelerator (run by tests/test_rtl.py through the cocotb runner, one simulator
process per program): AxiRam as DDR loaded with the case's DDR image (read-address channel paused to model the
DDR read latency), AxiLiteMaster programming the registers of generator/isa.py, wait for the interrupt, then
the status/cycle registers and the whole DDR image written back to the case folder."""
import itertools
import json
import os
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam

from generator import isa

REG = {n: off for n, off, _, _ in isa.REGISTERS}


@cocotb.test()
async def run_program(dut):
    case = Path(os.environ["RTL_CASE"])
    meta = json.loads((case / "case.json").read_text())
    ddr = np.fromfile(case / "ddr.bin", np.uint8)
    Clock(dut.clk, 10, unit="ns").start()
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst_n, reset_active_level=False, size=ddr.size)
    ram.write(0, ddr.tobytes())
    lat = int(meta.get("rd_latency", 0))
    if lat:
        ram.read_if.ar_channel.set_pause_generator(itertools.cycle([True] * lat + [False]))
    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst_n, reset_active_level=False)
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 5)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    for name, addr in meta["bases"].items():
        off = REG[name.lower()]
        await axil.write_dword(off, addr & 0xFFFFFFFF)
        await axil.write_dword(off + 4, addr >> 32)
    await axil.write_dword(REG["insns"], meta["insns"] & 0xFFFFFFFF)
    await axil.write_dword(REG["insns"] + 4, meta["insns"] >> 32)
    await axil.write_dword(REG["n_insns"], meta["n_insns"])
    await axil.write_dword(REG["fetch_ddr"], int(meta.get("fetch_ddr", 1)))
    await axil.write_dword(REG["GIE"], 1)
    await axil.write_dword(REG["IER"], 1)
    hw_info = await axil.read_dword(REG["hw_info"])
    config_id = await axil.read_dword(REG["config_id"])
    ctrl0 = await axil.read_dword(REG["CTRL"])
    await axil.write_dword(REG["CTRL"], 1 << isa.CTRL_BITS["ap_start"])
    timeout = Timer(int(meta["timeout_cycles"]) * 10, unit="ns")
    got = await First(RisingEdge(dut.interrupt), timeout)
    res = {"timeout": got is timeout, "hw_info": hw_info, "config_id": config_id, "ctrl_before": ctrl0}
    if not res["timeout"]:
        res["ctrl"] = await axil.read_dword(REG["CTRL"])
        res["status"] = await axil.read_dword(REG["status"])
        res["cycles"] = await axil.read_dword(REG["cycles"])
        await axil.write_dword(REG["ISR"], 1)             # toggle-on-write: clear
        res["irq_after_clear"] = int(dut.interrupt.value)
        res["ctrl_after_read"] = await axil.read_dword(REG["CTRL"])
    np.frombuffer(ram.read(0, ddr.size), np.uint8).tofile(case / "ddr_out.bin")
    (case / "result.json").write_text(json.dumps(res))

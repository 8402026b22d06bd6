"""cocotb bench of the RTL accelerator (run by :class:`generator.exec.rtl.RtlBuild` through the cocotb runner, one
simulator process per program).

* DDR: cocotbext-axi ``AxiRam`` loaded with the case's DDR image (with ``hp_ports`` 2 or 4, another ``AxiRam`` on
  ``m_axi1`` (``m_axi2``, ``m_axi3``) over the same memory, each port modelled as below), its read side replaced by a pipelined model of a
  DDR controller: every read burst's first beat comes ``rd_latency`` cycles after its address was accepted (the
  board's ``ddr_read_latency_cycles``), several bursts may be outstanding, and the data beats are throttled to the
  board's sustained DDR bytes per cycle (``rd_beats_per_cycle`` < 1 pauses the R and W channels accordingly);
  every write response comes ``wr_latency`` cycles (the board's ``ddr_write_latency_cycles``) after its last beat.
* AxiLiteMaster programs the registers of generator/spec/isa.py (base addresses, ``*_size`` of each base register's
  buffer, program, PRE's frame registers ``isa.PRE_REGISTERS`` when the case has them), the bench waits for the interrupt, then reads the status/cycle registers and writes the whole DDR image back to the case folder.
* Per-instruction timing: the RTL's debug counter ``dbg_st_retired`` (instructions the STORE module finished) is
  sampled at every change with the cycle counter, the LOAD-busy and PE-busy counters; ``result.json["retire"]``
  holds one ``[cycle, ld_busy, cp_busy]`` per STORE-module instruction (POST, STORE, END), in program order.
"""
import json
import logging
import os
from collections import deque
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, Event, First, RisingEdge, Timer
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam

from generator.exec.bench_clocks import start_clocks
from cocotbext.axi.constants import AxiResp

from host.fileio import atomic_write
from generator.spec import isa
from host.registers import SIZE_REGS

REG = {n: off for n, off, _, _ in isa.REGISTERS}
REG_BITS = {n: bits for n, _, bits, _ in isa.REGISTERS}


class _Cycles:
    """Free-running cycle counter of the bench clock (the DDR model's time base)."""

    def __init__(self, clk):
        self.clk, self.now = clk, 0
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            self.now += 1


def pipelined_read(ram: AxiRam, clk, cyc: _Cycles, latency: int):
    """Replace the AxiRam read process: addresses are accepted at once (queued with their arrival cycle), each
    burst's data starts no earlier than ``latency`` cycles after its address, bursts return in order."""
    rd = ram.read_if
    pending: deque = deque()
    more = Event()

    async def ar_pump():
        while True:
            ar = await rd.ar_channel.recv()
            pending.append((cyc.now + latency, ar))
            more.set()

    async def process_read():
        cocotb.start_soon(ar_pump())
        width = rd.byte_lanes
        while True:
            if not pending:
                more.clear()
                await more.wait()
                continue
            ready, ar = pending.popleft()
            if cyc.now < ready:
                await ClockCycles(clk, ready - cyc.now)
            addr, n = int(ar.araddr), int(getattr(ar, "arlen", 0)) + 1
            addr -= addr % width
            for k in range(n):
                r = rd.r_channel._transaction_obj()
                r.rid = int(getattr(ar, "arid", 0))
                r.rlast = k == n - 1
                r.rresp = AxiResp.OKAY
                r.rdata = int.from_bytes(await rd._read(addr + k * width, width), "little")
                await rd.r_channel.send(r)

    rd._process_read = process_read
    # AxiRam started its own read process when it was constructed (it is out of reset then): replace it
    if rd._process_read_cr is not None:
        rd._process_read_cr.kill()
        rd._process_read_cr = cocotb.start_soon(rd._process_read())


def delayed_write_response(ram: AxiRam, clk, latency: int):
    """Delay every write response (B) by ``latency`` cycles after the burst's last beat was accepted, without
    holding up the next burst's data (responses stay in order)."""
    ch = ram.write_if.b_channel
    send = ch.send

    async def later(b):
        await ClockCycles(clk, latency)
        await send(b)

    async def send_delayed(b):
        cocotb.start_soon(later(b))

    ch.send = send_delayed


def throttle(beats_per_cycle: float):
    """Pause pattern (True = paused) letting ``beats_per_cycle`` (<= 1) beats through per cycle on average."""
    acc = 0.0
    while True:
        acc += beats_per_cycle
        if acc >= 1.0:
            acc -= 1.0
            yield False
        else:
            yield True


@cocotb.test()
async def run_program(dut):
    case = Path(os.environ["RTL_CASE"])
    meta = json.loads((case / "case.json").read_text())
    ddr = np.fromfile(case / "ddr.bin", np.uint8)
    await start_clocks(dut, int(meta.get("pump", 1)))
    cyc = _Cycles(dut.clk)
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst_n, reset_active_level=False, size=ddr.size)
    ram.write(0, ddr.tobytes())
    rams = [ram]
    ports = ("m_axi", "m_axi1", "m_axi2", "m_axi3")[:int(meta.get("hp_ports", 1))]
    for name in ports[1:]:   # the other HP ports: the same memory behind another AXI slave each
        rams.append(AxiRam(AxiBus.from_prefix(dut, name), dut.clk, dut.rst_n, reset_active_level=False,
                           size=ddr.size, mem=ram.mem))
    bpc = float(meta.get("rd_beats_per_cycle", 1.0))
    for name, r in zip(ports, rams):
        logging.getLogger(f"cocotb.{dut._name}.{name}").setLevel(logging.WARNING)     # no line per burst
        pipelined_read(r, dut.clk, cyc, int(meta.get("rd_latency", 0)))
        if int(meta.get("wr_latency", 0)) > 0:
            delayed_write_response(r, dut.clk, int(meta["wr_latency"]))
        if bpc < 1.0:
            r.read_if.r_channel.set_pause_generator(throttle(bpc))
            r.write_if.w_channel.set_pause_generator(throttle(bpc))
    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst_n, reset_active_level=False)
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 5)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    for name, addr in meta["bases"].items():
        off = REG[name.lower()]
        await axil.write_dword(off, addr & 0xFFFFFFFF)
        await axil.write_dword(off + 4, addr >> 32)
    for name, size in meta.get("sizes", {}).items():
        await axil.write_dword(REG[SIZE_REGS[name]], size)
    for name, value in meta.get("frame", {}).items():       # PRE's frame registers (host.pre.PreFrame.registers)
        await axil.write_dword(REG[name], value & 0xFFFFFFFF)
        if REG_BITS[name] == 64:
            await axil.write_dword(REG[name] + 4, value >> 32)
    await axil.write_dword(REG["insns"], meta["insns"] & 0xFFFFFFFF)
    await axil.write_dword(REG["insns"] + 4, meta["insns"] >> 32)
    await axil.write_dword(REG["n_insns"], meta["n_insns"])
    await axil.write_dword(REG["fetch_ddr"], int(meta.get("fetch_ddr", 1)))
    await axil.write_dword(REG["GIE"], 1)
    await axil.write_dword(REG["IER"], 1)
    hw_info = await axil.read_dword(REG["hw_info"])
    config_id = await axil.read_dword(REG["config_id"])
    ctrl0 = await axil.read_dword(REG["CTRL"])

    retire = []
    progress = meta.get("progress_every", 0)

    async def watch_retire():
        sig = dut.dbg_st_retired
        while True:
            await sig.value_change
            retire.append([int(dut.cycles_r.value), int(dut.dbg_ld_busy.value), int(dut.dbg_cp_busy.value)])
            if progress and len(retire) % progress == 0:
                print(f"[rtl] {len(retire)} store-module instructions, cycle {retire[-1][0]}", flush=True)

    watcher = cocotb.start_soon(watch_retire())
    await axil.write_dword(REG["CTRL"], 1 << isa.CTRL_BITS["ap_start"])
    timeout = Timer(int(meta["timeout_cycles"]) * 10, unit="ns")
    got = await First(RisingEdge(dut.interrupt), timeout)
    watcher.cancel()
    res = {"timeout": got is timeout, "hw_info": hw_info, "config_id": config_id, "ctrl_before": ctrl0}
    if not res["timeout"]:
        res["ctrl"] = await axil.read_dword(REG["CTRL"])
        res["status"] = await axil.read_dword(REG["status"])
        res["cycles"] = await axil.read_dword(REG["cycles"])
        await axil.write_dword(REG["ISR"], 1)             # toggle-on-write: clear
        res["irq_after_clear"] = int(dut.interrupt.value)
        res["ctrl_after_read"] = await axil.read_dword(REG["CTRL"])
    res["retire"] = retire
    atomic_write(case / "ddr_out.bin", bytes(ram.read(0, ddr.size)))
    atomic_write(case / "result.json", json.dumps(res))

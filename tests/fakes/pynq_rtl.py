"""A fake PYNQ device whose accelerator is the SystemVerilog RTL under cocotb, so ``host/driver.py`` runs unchanged
over the RTL (issue 5, "simulation backends": (b) the RTL under cocotb). Used by the tests only.

:class:`RtlSimDevice` is the RTL counterpart of :class:`generator.exec.pynq_golden.GoldenSimDevice`: a
:class:`pynq.pl_server.device.Device` subclass made ``Device.active_device``, so the driver's ``pynq.allocate``,
``pynq.MMIO`` and ``pynq.DefaultIP`` calls are the real ones. It is created inside a cocotb test (it needs the
``dut``) and the driver's blocking code runs in a thread started with :func:`cocotb.task.bridge`:

* memory: the DDR is a cocotb-ext-axi ``AxiRam`` on the RTL's ``m_axi`` master port. Its storage is an anonymous
  ``mmap`` of ``mem_bytes`` (a power of two; ``mem_base`` a multiple of it, since ``AxiRam`` takes addresses
  modulo its size) and :attr:`mem` is a numpy view of that same storage: what the RTL reads and writes.
  :meth:`allocate` carves page-aligned :class:`pynq.buffer.PynqBuffer` views out of a separate *host* array
  (:attr:`host`, the CPU's cached view of DDR); :meth:`flush` copies a buffer's bytes host -> AxiRam and
  :meth:`invalidate` copies them back, so a missing flush or invalidate in the driver shows up as wrong results,
  as it would on a board with cacheable buffers. ``coherent=True`` makes the host array the AxiRam storage itself.
* registers: the device has the ``REGISTER_RW`` capability, so every 32-bit ``MMIO`` access reaches
  :meth:`read_registers` / :meth:`write_registers`, which call :func:`cocotb.task.resume`-wrapped coroutines doing
  ``AxiLiteMaster`` reads and writes on the RTL's ``s_axil`` slave (simulation time advances by the AXI-Lite
  handshakes). A read of ``CTRL`` (the driver's poll) first lets the simulation run ``poll_cycles`` clock cycles:
  the time the CPU spends between two polls. The driver's own ``time.sleep`` between polls is wall-clock time in
  which the simulator is stopped, so run it with ``poll_interval_s=0`` and a wall-clock ``timeout_s`` long enough
  for the simulation.
* ``ip_dict``: the accelerator (VLNV :data:`host.registers.KERNEL_VLNV`, or
  :data:`~host.registers.RTL_KERNEL_VLNV` when the top is the Vivado IP rtl/accel_rtl.sv) as in
  :class:`GoldenSimDevice`.

Only the thread started by :func:`cocotb.task.bridge` may touch the registers (``resume`` refuses other threads);
memory (allocate/flush/invalidate) may be used from any thread (``detect_stream``'s pre-processing worker).
"""
from __future__ import annotations

import logging
import mmap
import struct

import numpy as np
from pynq.buffer import PynqBuffer
from pynq.pl_server.device import Device

from generator.spec import isa
from generator.exec.pynq_golden import carve_buffer
from host.registers import KERNEL_VLNV, RTL_KERNEL_VLNV

REG = {n: o for n, o, _, _ in isa.REGISTERS}


class RtlSimDevice(Device):
    """A PYNQ device whose accelerator is the RTL top ``dut`` (``accel_top``) in a running cocotb simulation.

    Args:
        dut: the cocotb handle of ``accel_top`` (ports ``clk``, ``rst_n``, ``s_axil_*``, ``m_axi_*``, ``interrupt``).
        clock_ns: period of the clock the bench drives on ``dut.clk`` / ``dut.ap_clk`` (for :meth:`cycles_now`).
        mem_bytes: size of the simulated DDR (a power of two).
        mem_base: physical address of its first byte (a multiple of ``mem_bytes``).
        accel_base: physical address of the accelerator's AXI-Lite slave (64 KiB range).
        poll_cycles: clock cycles simulated before each ``CTRL`` read (the host's polling period).
        rd_latency: extra cycles the DDR model waits before accepting each read burst (0: none).
        coherent: host and AxiRam share one array (flush/invalidate only counted).
    Raises:
        ValueError: bad ``mem_bytes``/``mem_base``; MemoryError (from :meth:`allocate`): the DDR is exhausted.
    Attributes:
        mem: numpy uint8 view of the AxiRam storage. host: the CPU's view (``mem`` itself when coherent).
        flushes, invalidates: (device address, bytes) of each call. reads, writes: AXI-Lite accesses done.
        history: per ``ap_start`` written, the base-address registers as written ({"WEIGHTS": addr, ...,
        "insns": addr}).
    """

    def __init__(self, dut, clock_ns: float = 10.0, mem_bytes: int = 32 << 20, mem_base: int = 0x6000_0000,
                 accel_base: int = 0xA000_0000, poll_cycles: int = 2000, rd_latency: int = 0,
                 coherent: bool = False):
        import itertools

        from cocotb.task import resume
        from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam

        super().__init__("rtl-sim")
        if mem_bytes <= 0 or mem_bytes & (mem_bytes - 1) or mem_base % mem_bytes:
            raise ValueError(f"mem_bytes={mem_bytes:#x} must be a power of two and mem_base={mem_base:#x} a "
                             "multiple of it (AxiRam takes addresses modulo its size)")
        self.dut, self.clock_ns = dut, float(clock_ns)
        self.capabilities = {"REGISTER_RW": True}
        self._ddr = mmap.mmap(-1, mem_bytes)
        # the top: rtl/accel_top.sv (clk, rst_n, s_axil_*, m_axi_*) or the Vivado IP rtl/accel_rtl.sv (ap_clk,
        # ap_rst_n, s_axi_control_*, m_axi_gmem_*, VLNV RTL_KERNEL_VLNV)
        ip = hasattr(dut, "ap_clk")
        self.clk, self.rst_n = (dut.ap_clk, dut.ap_rst_n) if ip else (dut.clk, dut.rst_n)
        self.vlnv = RTL_KERNEL_VLNV if ip else KERNEL_VLNV
        self.ram = AxiRam(AxiBus.from_prefix(dut, "m_axi_gmem" if ip else "m_axi"), self.clk, self.rst_n,
                          reset_active_level=False,
                          size=mem_bytes, mem=self._ddr)
        if rd_latency:
            self.ram.read_if.ar_channel.set_pause_generator(itertools.cycle([True] * int(rd_latency) + [False]))
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control" if ip else "s_axil"), self.clk,
                                  self.rst_n,
                                  reset_active_level=False)
        for part in (self.axil.write_if, self.axil.read_if):
            part.log.setLevel(logging.WARNING)     # it logs every access at INFO
        self.mem = np.frombuffer(self._ddr, np.uint8)
        self.host = self.mem if coherent else np.zeros(mem_bytes, np.uint8)
        self.coherent = coherent
        self.mem_base, self.accel_base, self.accel_range = mem_base, accel_base, 0x10000
        self.poll_cycles = int(poll_cycles)
        self._next = 0
        self.flushes, self.invalidates = [], []
        self.reads = self.writes = 0
        self.history = []
        self._args = {}
        self._read_word = resume(self._aread)
        self._write_word = resume(self._awrite)
        self.ip_dict = {"accel_0": {"fullpath": "accel_0", "type": self.vlnv, "phys_addr": accel_base,
                                    "addr_range": self.accel_range, "state": None, "interrupts": {},
                                    "gpio": {}, "parameters": {}, "device": self}}
        self.mem_dict, self.gpio_dict, self.interrupt_pins, self.interrupt_controllers = {}, {}, {}, {}
        self.hierarchy_dict = {}

    @property
    def name(self):
        return "rtl-sim (cocotb)"

    async def reset(self, cycles: int = 5):
        """Hold ``rst_n`` low for ``cycles`` clock cycles, then release it (call before the driver runs)."""
        from cocotb.triggers import ClockCycles

        self.rst_n.value = 0
        await ClockCycles(self.clk, cycles)
        self.rst_n.value = 1
        await ClockCycles(self.clk, 2)

    def cycles_now(self) -> int:
        """Simulation time in clock cycles."""
        from cocotb.simtime import get_sim_time

        return int(get_sim_time("ns") / self.clock_ns)

    # ---- memory ---------------------------------------------------------------------------------------------
    def allocate(self, shape, dtype, **kwargs) -> PynqBuffer:
        """A page-aligned buffer carved from the host view of the DDR (never freed; the device is per run)."""
        buf, self._next = carve_buffer(self, self.host, self._next, shape, dtype)
        return buf

    def flush(self, bo, offset, ptr, size):
        """CPU cache -> DDR for ``size`` bytes of buffer ``bo`` from ``offset``."""
        a = bo + offset
        self.flushes.append((self.mem_base + a, size))
        if not self.coherent:
            self.mem[a:a + size] = self.host[a:a + size]

    def invalidate(self, bo, offset, ptr, size):
        """DDR -> CPU view for ``size`` bytes of buffer ``bo`` from ``offset``."""
        a = bo + offset
        self.invalidates.append((self.mem_base + a, size))
        if not self.coherent:
            self.host[a:a + size] = self.mem[a:a + size]

    def mmap(self, base_addr, length):
        raise ValueError("the RTL device has no memory-mapped access: registers go through read_registers/"
                         "write_registers (REGISTER_RW), memory through allocate")

    # ---- registers --------------------------------------------------------------------------------------------
    async def _aread(self, off: int) -> int:
        if off == REG["CTRL"] and self.poll_cycles:
            from cocotb.triggers import Timer

            await Timer(self.poll_cycles * self.clock_ns, unit="ns")
        return int(await self.axil.read_dword(off))

    async def _awrite(self, off: int, v: int):
        await self.axil.write_dword(off, v)

    def _reg_offset(self, address, length):
        off = address - self.accel_base
        if not 0 <= off < self.accel_range or off % 4 or length % 4:
            raise ValueError(f"register access of {length} bytes at {address:#x}: not an aligned accelerator register")
        return off

    def read_registers(self, address, length) -> bytes:
        off = self._reg_offset(address, length)
        self.reads += length // 4
        return b"".join(struct.pack("<I", self._read_word(off + 4 * i)) for i in range(length // 4))

    def write_registers(self, address, data):
        off = self._reg_offset(address, len(data))
        for i in range(len(data) // 4):
            v = struct.unpack_from("<I", data, 4 * i)[0]
            o = off + 4 * i
            self._args[o] = v
            if o == REG["CTRL"] and v >> isa.CTRL_BITS["ap_start"] & 1:
                self.history.append({k: self._arg(k.lower()) for k in (*isa.BASE_REGS, "insns")})
            self.writes += 1
            self._write_word(o, v)

    def _arg(self, name):
        off = REG[name]
        return self._args.get(off, 0) | self._args.get(off + 4, 0) << 32

    def get_bitfile_metadata(self, bitfile_name):
        return None

    def close(self):
        pass

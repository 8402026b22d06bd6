"""A fake PYNQ device whose accelerator is the golden ISA simulator, so ``host/driver.py`` runs unchanged on x86.

:class:`GoldenSimDevice` subclasses :class:`pynq.pl_server.device.Device` and is made the active device
(``Device.active_device``), which is all ``pynq.allocate``, ``pynq.MMIO`` and ``pynq.DefaultIP`` consult:

* memory: one numpy ``uint8`` array standing for the PS DDR; :meth:`GoldenSimDevice.allocate` carves page-aligned
  :class:`pynq.buffer.PynqBuffer` views out of it with physical (device) addresses starting at ``mem_base``;
  ``flush``/``invalidate`` are no-ops (the array is coherent) but are counted per call, so tests can check that
  the driver does them;
* registers: the device has the ``REGISTER_RW`` capability, so ``pynq.MMIO`` routes every 32-bit access through
  :meth:`read_registers`/:meth:`write_registers` to :class:`AccelRegisterFile`, the accelerator's AXI-Lite slave
  (map: :data:`generator.spec.isa.REGISTERS`, Vitis HLS ``ap_ctrl_hs`` layout);
* ``ip_dict``: one entry for the accelerator (VLNV :data:`host.registers.KERNEL_VLNV`) as the .hwh parser would
  describe it, so a driver finds the IP exactly as it does in a loaded overlay's ``ip_dict``; or, with ``hwh=``,
  the dictionaries PYNQ's own parser derives from that .hwh (:func:`parse_hwh`: pynqmetadata, as ``pynq.Overlay``
  on PYNQ 3.x / 4.0), the accelerator's registers at the ``phys_addr`` / ``addr_range`` the .hwh gives it, and
  :meth:`GoldenSimDevice.get_bitfile_metadata` returning that parser, so ``pynq.Overlay(bit, download=False)``
  builds its ``ip_dict`` and binds :class:`host.accel_ip.AccelIP` exactly as on a board.

Writing ``ap_start`` runs the program in a background thread (the accelerator runs while the CPU does other
work): the instructions are fetched from DDR at the ``insns`` register (``fetch_ddr = 1``; the bitstream's
instruction ROM, ``fetch_ddr = 0``, is empty in simulation: the run ends at once with NO_END), the golden
simulator executes them on the device memory with the four base-address registers and the four ``*_size``
registers (each LOAD / STORE must stay inside its base register's buffer; each instruction at its own ``prec``, so
no precision is taken from the program's CONFIG) and PRE's per-frame registers (:class:`host.pre.PreFrame`: the
``frame`` address as an offset in the device memory; an address outside it as -1, which PRE refuses with
OUT_OF_RANGE), then ``status``, ``cycles`` and
``ap_done``/``ap_idle`` are set. A :class:`generator.exec.golden.SimError` sets its ``status`` bits
(:data:`generator.spec.isa.STATUS_BITS`); a deadlock (every module waiting for a token) is WATCHDOG with ``ap_done``
raised, as the hardware's watchdog does. ``hang=True`` makes every run hang (``ap_done`` never rises; driver timeout
tests).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import struct
import threading
from pathlib import Path

import numpy as np
from pynq.buffer import PynqBuffer
from pynq.pl_server.device import Device

from generator.spec import isa
from generator.spec.board import Board, load_board
from generator.spec.hw import HwConfig
from generator.exec.golden import GoldenSim, SimError
from host.accel_ip import find_accel
from host.manifest import page_round
from host.pre import PreFrame
from host.registers import ACCEL_VLNVS, HW_INFO_MODES, KERNEL_VLNV, SIZE_REGS, ip_vlnv, pack_hw_info

REG = {n: (o, b, a) for n, o, b, a in isa.REGISTERS}
CTRL = isa.CTRL_BITS


def carve_buffer(device: Device, mem: np.ndarray, next_off: int, shape, dtype) -> tuple[PynqBuffer, int]:
    """``pynq.allocate`` for a simulated device: a :class:`pynq.buffer.PynqBuffer` of ``shape`` / ``dtype`` at byte
    offset ``next_off`` of ``mem`` (the device's DDR as a uint8 array), physical address ``device.mem_base + offset``,
    ``bo`` = the offset. Returns the buffer and the next free offset (rounded up to a 4096-byte page). Buffers are
    never freed (a simulated device lives for one run). Raises MemoryError when ``mem`` is exhausted."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    if next_off + n > mem.size:
        raise MemoryError(f"simulated DDR of {mem.size} bytes exhausted ({n} more requested)")
    buf = PynqBuffer(shape, dtype, buffer=mem, offset=next_off, device=device,
                     device_address=device.mem_base + next_off, bo=next_off, coherent=False)
    return buf, next_off + page_round(max(n, 1))


class AccelRegisterFile:
    """The accelerator's AXI-Lite register file over the golden simulator.

    Args:
        device: the :class:`GoldenSimDevice` whose memory the accelerator reads and writes.
        board: the board the simulated bitstream is built for (its configuration id, Tn, Tm).
        hang: never finish a run (``ap_done`` stays 0).
        precisions: the precision modes ``hw_info`` reports (names of :data:`host.registers.HW_INFO_MODES`; default
            both, as every bitstream is built; fewer: a driver test of a bitstream without one). The simulator runs
            every instruction at its ``prec`` whatever this says.
        info_registers: ``"constant"``: ``hw_info`` / ``config_id`` read their values from reset (as the RTL's
            constant registers); ``"hls"``: they read 0 until the first start, as the Vitis HLS IP's s_axilite
            output registers, which the ``accel`` top writes at the start of each run.
    Attributes:
        last_error: message of the last run's :class:`SimError` (``None`` if it succeeded).
        runs: number of runs started.
        history: base-address registers of each run started ({"WEIGHTS": addr, ..., "insns": addr}).
        size_history: the ``*_size`` registers of each run started ({"WEIGHTS": bytes, ...}).
        frame_history: PRE's registers of each run started (:class:`host.pre.PreFrame`, ``addr`` the ``frame``
            register's device address as written).
        probes: starts with ``n_insns = 0`` and ``fetch_ddr = 1`` (no instruction: NO_END, nothing dispatched,
            no DDR access), e.g. the driver's identification probe; counted in ``runs`` and ``history`` too.
    """

    def __init__(self, device: "GoldenSimDevice", board: Board, hang: bool = False,
                 info_registers: str = "constant", precisions=tuple(HW_INFO_MODES)):
        if info_registers not in ("constant", "hls"):
            raise ValueError(f"info_registers must be 'constant' or 'hls', not {info_registers!r}")
        if not set(precisions) <= set(HW_INFO_MODES):
            raise ValueError(f"precisions {list(precisions)}: not names of {list(HW_INFO_MODES)}")
        self.device, self.board, self.hang = device, board, hang
        self.info_valid = info_registers == "constant"
        self.probes = 0
        self.precisions = list(precisions)
        self.hw = HwConfig.from_board(board, 8)     # (GoldenSim runs each instruction at its prec: HwConfig.at_prec)
        self.words = {}                 # 32-bit word offset -> value (argument registers)
        self.ctrl = 1 << CTRL["ap_idle"]
        self.gie = self.ier = self.isr = 0
        self.status = self.cycles = 0
        self.last_error = None
        self.runs = 0
        self.history = []
        self.size_history = []
        self.frame_history = []
        self.thread = None
        self.crash = None       # an exception of the simulator in a run (raised by read_word)
        self._lock = threading.Lock()

    # ---- identification ---------------------------------------------------------------------------------
    @property
    def hw_info(self) -> int:
        """:func:`host.registers.pack_hw_info` of the ISA version, Tn, Tm and the precision modes."""
        return pack_hw_info(isa.ISA_VERSION, self.hw.tn, self.hw.tm, self.precisions)

    @property
    def config_id(self) -> int:
        return self.hw.config_id

    # ---- 32-bit word access -------------------------------------------------------------------------------
    def _arg(self, name: str) -> int:
        off, bits, _ = REG[name]
        v = self.words.get(off, 0)
        if bits == 64:
            v |= self.words.get(off + 4, 0) << 32
        return v

    def read_word(self, off: int) -> int:
        """The register at byte offset ``off``; raises RuntimeError after a run in which the simulator itself
        failed (a defect, not a status the hardware would report)."""
        if self.crash is not None:
            raise self.crash
        with self._lock:
            if off == REG["CTRL"][0]:
                v = self.ctrl
                self.ctrl &= ~(1 << CTRL["ap_done"])      # ap_done is clear-on-read
                return v
            if off == REG["GIE"][0]:
                return self.gie
            if off == REG["IER"][0]:
                return self.ier
            if off == REG["ISR"][0]:
                return self.isr
            if off == REG["status"][0]:
                return self.status
            if off == REG["hw_info"][0]:
                return self.hw_info if self.info_valid else 0
            if off == REG["config_id"][0]:
                return self.config_id if self.info_valid else 0
            if off == REG["cycles"][0]:
                return self.cycles & 0xFFFFFFFF
            return self.words.get(off, 0)

    def write_word(self, off: int, v: int):
        v &= 0xFFFFFFFF
        with self._lock:
            if off == REG["CTRL"][0]:
                self.ctrl = (self.ctrl & ~(1 << CTRL["auto_restart"])) | (v & (1 << CTRL["auto_restart"]))
                if v & (1 << CTRL["ap_start"]) and self.ctrl & (1 << CTRL["ap_idle"]):
                    self._start()
                return
            if off == REG["GIE"][0]:
                self.gie = v & 1
            elif off == REG["IER"][0]:
                self.ier = v & 3
            elif off == REG["ISR"][0]:
                self.isr ^= v & 3                           # toggle on write
            elif not any(o <= off < o + b // 8 for o, b, a in REG.values() if a == "r"):
                self.words[off] = v                         # read-only registers ignore writes

    # ---- a run ------------------------------------------------------------------------------------------
    def _start(self):
        self.ctrl = (self.ctrl | 1 << CTRL["ap_start"]) & ~(1 << CTRL["ap_idle"] | 1 << CTRL["ap_done"])
        self.status = 0
        self.runs += 1
        self.info_valid = True          # the accel top writes hw_info / config_id first thing in a run
        args = {k: self._arg(k.lower()) for k in isa.BASE_REGS}
        sizes = {k: self._arg(r) for k, r in SIZE_REGS.items()}
        insns, n, fetch = self._arg("insns"), self._arg("n_insns"), self._arg("fetch_ddr")
        if fetch and n == 0:
            self.probes += 1
        self.history.append({**args, "insns": insns})
        self.size_history.append(sizes)
        frame = PreFrame.from_registers({r: self._arg(r) for r in PreFrame.REGISTERS})
        self.frame_history.append(frame)
        self.thread = threading.Thread(target=self._run, args=(args, sizes, insns, n, fetch, frame), daemon=True)
        self.thread.start()

    def _run(self, bases, sizes, insns_addr, n_insns, fetch_ddr, frame):
        with self._lock:      # the block accepted the start (ap_ready pulse), ap_start drops
            self.ctrl &= ~(1 << CTRL["ap_start"])
        if self.hang:
            return
        dev = self.device
        status, cycles, err = 0, 0, None
        try:
            if not fetch_ddr:
                raise SimError("fetch_ddr = 0: the simulated bitstream's instruction ROM is empty (no END)", "NO_END")
            # n_insns = 0: the fetch reads nothing (any insns address), the program is empty: NO_END
            prog = dev.read_memory(insns_addr, n_insns * isa.INSN_BYTES) if n_insns else b""
            if not prog:    # nothing fetched, nothing dispatched: the base registers are never used
                raise SimError("n_insns = 0: no instruction fetched, no END", "NO_END")
            off = {k: dev.offset_of(a) for k, a in bases.items()}
            fr = frame.addr - dev.mem_base
            frame = dataclasses.replace(frame, addr=fr if 0 <= fr < dev.mem.size else -1)
            res = GoldenSim(self.hw, dev.mem, off, sizes, frame).run(prog)
            cycles = res.cycles
        except SimError as e:
            err, status = str(e), e.status
        except ValueError as e:           # a base address outside the device memory
            err, status = str(e), isa.status_of("OUT_OF_RANGE")
        except Exception as e:  # noqa: BLE001 - a defect of the stand-in: raised by the next register read
            self.crash = RuntimeError(f"the golden simulator crashed in a run: {type(e).__name__}: {e}")
        with self._lock:
            self.last_error, self.status, self.cycles = err, status, cycles
            self.ctrl |= 1 << CTRL["ap_done"] | 1 << CTRL["ap_idle"] | 1 << CTRL["ap_ready"]
            if self.ier & 1:
                self.isr |= 1

    def wait_idle(self, timeout=None):
        """Join the background run (tests): True when no run is in flight afterwards."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.thread is None or not self.thread.is_alive()


#: the IPs of the block design (hls_templates/vivado_bd.tcl.j2) besides the control block: the three free-running
#: HLS modules (no registers), their stream FIFOs and buffer memories, the interconnect
BD_OTHER_IPS = [("accel_load_0", ip_vlnv("accel_load")), ("accel_compute_0", ip_vlnv("accel_compute")),
                ("accel_store_0", ip_vlnv("accel_store")), ("fifo_l2c", "xilinx.com:ip:axis_data_fifo:2.0"),
                ("smartconnect_hp0", "xilinx.com:ip:smartconnect:1.0")]


def block_design_ip_dict(device, accel_base: int, accel_range: int = 0x10000) -> dict:
    """An ``ip_dict`` like the one PYNQ builds from the block design's .hwh: ``accel_0`` (VLNV
    :data:`host.registers.KERNEL_VLNV`, the s_axilite window) and, before it in key order, IPs that have no register
    window (the free-running load / compute / store IPs, a FIFO, the SmartConnect: ``phys_addr`` None,
    ``addr_range`` 0; PYNQ lists only addressable IPs, so these entries are the worst case a driver could
    meet). The accelerator's interrupt is named as the hwh parser names it."""
    d = {}
    for name, vlnv in BD_OTHER_IPS:
        d[name] = {"fullpath": name, "type": vlnv, "phys_addr": None, "addr_range": 0, "state": None,
                   "interrupts": {}, "gpio": {}, "parameters": {}, "registers": {}, "device": device}
    d["accel_0"] = {"fullpath": "accel_0", "type": KERNEL_VLNV, "phys_addr": accel_base, "addr_range": accel_range,
                    "state": None, "interrupts": {}, "gpio": {}, "parameters": {"C_S_AXI_CONTROL_BASEADDR":
                                                                                  hex(accel_base)},
                    "device": device}
    return d


def parse_hwh(path):
    """PYNQ's parser of a .hwh, as ``pynq.Overlay`` runs it on PYNQ 3.x / 4.0 (``EmbeddedDevice.get_parser``:
    ``RuntimeMetadataParser(Metadata(input=<bit>.hwh))``): an object with ``ip_dict``, ``mem_dict``, ``gpio_dict``,
    ``interrupt_controllers``, ``interrupt_pins``, ``hierarchy_dict``, ``clock_dict``. Raises FileNotFoundError for
    a missing file (pynqmetadata's own errors for one it cannot parse)."""
    from pynq.metadata.runtime_metadata_parser import RuntimeMetadataParser
    from pynqmetadata.frontends import Metadata

    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such .hwh")
    return RuntimeMetadataParser(Metadata(input=str(path)))


class GoldenSimDevice(Device):
    """A PYNQ device with the accelerator built for ``board``, simulated by the golden ISA simulator.

    Args:
        board: board name (``boards/NAME.yaml``) or :class:`Board` the simulated bitstream is built for.
        mem_bytes: size of the simulated DDR (bytes).
        mem_base: physical address of its first byte.
        accel_base: physical address of the accelerator's AXI-Lite slave (64 KiB range).
        hang: the accelerator never raises ``ap_done`` (timeout tests).
        info_registers: see :class:`AccelRegisterFile` (``"hls"``: hw_info / config_id read 0 before the first start).
        block_design: ``ip_dict`` as the four-IP block design's .hwh gives it (:func:`block_design_ip_dict`).
        precisions: the precision modes its ``hw_info`` reports (see :class:`AccelRegisterFile`; default both).
        hwh: a .hwh (path): the device's dictionaries are PYNQ's parse of it (:func:`parse_hwh`; its ``ip_dict`` as
            the parser gives it, ``device`` None in each entry), the accelerator (the IP with a VLNV of
            ``accel_vlnvs``) answers at the ``phys_addr`` / ``addr_range`` it has there (``accel_base`` is
            ignored), and ``pynq.Overlay`` of a ``.bit`` gets the parse of the .hwh beside it (or of ``hwh``).
        accel_vlnvs: the VLNVs the simulated accelerator may have in ``hwh`` (default
            :data:`host.registers.ACCEL_VLNVS`; a test binding a real file's HLS IP passes that IP's).
    Raises:
        MemoryError (from :meth:`allocate`) when the simulated DDR is exhausted. With ``hwh``: FileNotFoundError,
        host.errors.PackageError (not exactly one IP with a VLNV of ``accel_vlnvs`` in it).
    """

    def __init__(self, board="zcu19eg", mem_bytes: int = 40 << 20, mem_base: int = 0x6000_0000,
                 accel_base: int = 0xA000_0000, hang: bool = False, info_registers: str = "constant",
                 block_design: bool = False, precisions=tuple(HW_INFO_MODES), hwh=None, accel_vlnvs=ACCEL_VLNVS):
        super().__init__("golden-sim")
        self.board = load_board(board) if isinstance(board, str) else board
        self.capabilities = {"REGISTER_RW": True}
        self.mem = np.zeros(mem_bytes, np.uint8)
        self.mem_base, self.accel_base, self.accel_range = mem_base, accel_base, 0x10000
        self._next = 0
        self.accel = AccelRegisterFile(self, self.board, hang=hang, info_registers=info_registers,
                                       precisions=precisions)
        self.flushes, self.invalidates = [], []      # (device address, bytes) of each call
        self.ip_dict = {"accel_0": {"fullpath": "accel_0", "type": KERNEL_VLNV, "phys_addr": accel_base,
                                    "addr_range": self.accel_range, "state": None, "interrupts": {},
                                    "gpio": {}, "parameters": {}, "device": self}}
        if block_design:
            self.ip_dict = block_design_ip_dict(self, accel_base, self.accel_range)
        self.mem_dict, self.gpio_dict, self.interrupt_pins, self.interrupt_controllers = {}, {}, {}, {}
        self.hierarchy_dict = {}
        self.hwh = Path(hwh) if hwh is not None else None
        if self.hwh is not None:
            p = self.parser = parse_hwh(self.hwh)
            _, entry = find_accel(p.ip_dict, str(self.hwh), accel_vlnvs)
            self.accel_base, self.accel_range = int(entry["phys_addr"]), int(entry["addr_range"])
            for k in ("ip_dict", "mem_dict", "gpio_dict", "interrupt_pins", "interrupt_controllers", "hierarchy_dict"):
                setattr(self, k, copy.deepcopy(getattr(p, k)))

    @property
    def name(self):
        return f"golden-sim ({self.board.name})"

    # ---- memory ---------------------------------------------------------------------------------------------
    def allocate(self, shape, dtype, **kwargs) -> PynqBuffer:
        """A page-aligned buffer carved from the simulated DDR (never freed; the device is per test)."""
        buf, self._next = carve_buffer(self, self.mem, self._next, shape, dtype)
        return buf

    def offset_of(self, addr: int) -> int:
        off = int(addr) - self.mem_base
        if not 0 <= off < self.mem.size:
            raise SimError(f"address {addr:#x} outside the simulated DDR "
                           f"[{self.mem_base:#x}, {self.mem_base + self.mem.size:#x})", "OUT_OF_RANGE")
        return off

    def read_memory(self, addr: int, n: int) -> bytes:
        off = self.offset_of(addr)
        if off + n > self.mem.size:
            raise SimError(f"read of {n} bytes at {addr:#x} beyond the simulated DDR", "OUT_OF_RANGE")
        return self.mem[off:off + n].tobytes()

    def flush(self, bo, offset, ptr, size):
        self.flushes.append((self.mem_base + bo + offset, size))

    def invalidate(self, bo, offset, ptr, size):
        self.invalidates.append((self.mem_base + bo + offset, size))

    def mmap(self, base_addr, length):
        """uint32 view of simulated DDR (memory only: the accelerator's registers go through
        :meth:`read_registers` / :meth:`write_registers`, see the module docstring)."""
        off = self.offset_of(base_addr)
        return self.mem[off:off + length].view(np.uint32)

    # ---- registers (pynq MMIO with the REGISTER_RW capability) -----------------------------------------------
    def _reg_offset(self, address, length):
        off = address - self.accel_base
        if not 0 <= off < self.accel_range or off % 4 or length % 4:
            raise ValueError(f"register access of {length} bytes at {address:#x}: not an aligned accelerator register")
        return off

    def read_registers(self, address, length) -> bytes:
        off = self._reg_offset(address, length)
        return b"".join(struct.pack("<I", self.accel.read_word(off + 4 * i)) for i in range(length // 4))

    def write_registers(self, address, data):
        off = self._reg_offset(address, len(data))
        for i in range(len(data) // 4):
            self.accel.write_word(off + 4 * i, struct.unpack_from("<I", data, 4 * i)[0])

    def get_bitfile_metadata(self, bitfile_name):
        """PYNQ's parse of the .hwh beside ``bitfile_name`` (else of the device's ``hwh``); None without ``hwh``."""
        if self.hwh is None:
            return None
        beside = Path(bitfile_name).with_suffix(".hwh")
        return parse_hwh(beside if beside.is_file() else self.hwh)

    def close(self):
        pass


@contextlib.contextmanager
def active(device: Device):
    """Make ``device`` PYNQ's active device for the ``with`` block (restores the previous one)."""
    had = "_active_device" in Device.__dict__
    prev = Device.__dict__.get("_active_device")
    Device.active_device = device
    try:
        yield device
    finally:
        if had:
            Device.active_device = prev
        else:
            with contextlib.suppress(AttributeError):
                del Device._active_device

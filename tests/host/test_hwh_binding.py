"""The driver's binding (ip_dict lookup, register map, interrupt choice) against PYNQ's own .hwh parser (PYNQ 4.0:
pynqmetadata's HwhFrontend + RuntimeMetadataParser, what ``pynq.Overlay`` runs), on

* a real Vivado hardware handoff with an HLS IP: pynqmetadata's ``tests/hwhs/resizer.hwh`` (Vivado 2019.2, the
  Vivado HLS IP ``resize_accel``: ap_ctrl_hs over ``s_axi_AXILiteS``, its ``interrupt`` pin left unconnected),
  its parse checked against the XML read directly and against the Vitis HLS register layout rule (UG1399);
* the .hwh our block-design scripts would produce (HLS kernel, RTL IP), *modelled* from the rendered
  ``vivado_bd.tcl`` (``tests/host/bd_hwh.py``: not Vivado output), through ``pynq.Overlay`` and whole frames on the
  golden backend; its interrupt through the axi_intc the scripts put, waited on with PYNQ's own
  ``pynq.interrupt.Interrupt`` over a model of the axi_intc's registers (PG099), the board's UIO device the one
  stand-in (:class:`UioStandIn`: the real one needs the board's kernel).
"""
import asyncio
import contextlib
import os
import shutil
import struct
import threading
import time
import tty
from pathlib import Path
from xml.etree import ElementTree as ET

import pynq.interrupt
import pynqmetadata
import pytest
from pynq.pl_server.device import Device

from generator.backends import hls
from generator.backends.rtl import ip as rtl_ip
from generator.exec import run_golden
from generator.exec.pynq_golden import GoldenSimDevice, active, parse_hwh
from generator.flows.artifacts import write_artifacts
from generator.flows.pipeline import detections_from_heads, quantize_image
from generator.eval import data
from generator.spec import isa
from generator.spec.board import load_board
from host import accel_ip
from host.accel_ip import AccelIP, find_accel
from host.driver import DriverError, PackageError, PackageMismatchError, YoloAccelerator
from host.preprocess import load_image
from host.registers import ACCEL_VLNVS, KERNEL_VLNV, RTL_KERNEL_VLNV, hwh_register_mismatches

from bd_hwh import bd_calls, write_hwh
from helpers import compiled_model

RESIZER = Path(pynqmetadata.__file__).parent / "tests" / "hwhs" / "resizer.hwh"
RESIZE_VLNV = "xilinx.com:hls:resize_accel:1.0"
#: resize_accel's s_axilite arguments in declaration order (name, bits, access); its src / dst are AXI4-Streams
RESIZE_ARGS = [("src_rows", 32, "w"), ("src_cols", 32, "w"), ("dst_rows", 32, "w"), ("dst_cols", 32, "w")]
SIM_TIMEOUT_S = 300.0


class ResizeIP(AccelIP):
    """Our driver class bound to the real file's HLS IP (only this test's VLNV)."""
    bindto = [RESIZE_VLNV]


def ug1399_map(args):
    """The ap_ctrl_hs register map by the Vitis HLS rule (UG1399 "S_AXILITE control register map"), independent
    of both the .hwh and generator/spec/isa.py's table: CTRL 0x0, GIE 0x4, IER 0x8, ISR 0xC, then each argument
    in declaration order, 32 bits as one word + one reserved word, 64 bits as two words + one reserved."""
    regs, off = [("CTRL", 0x0, 32, "rw"), ("GIE", 0x4, 32, "rw"), ("IER", 0x8, 32, "rw"), ("ISR", 0xC, 32, "rw")], 0x10
    for name, bits, acc in args:
        regs.append((name, off, bits, acc))
        off += bits // 8 + 4
    return regs


def _xml_module(path, instance):
    return next(m for m in ET.parse(path).getroot().iter("MODULE") if m.get("INSTANCE") == instance)


# ---- the real file --------------------------------------------------------------------------------------------
def test_real_hwh_ip_dict_entry_found_by_vlnv():
    """find_accel on PYNQ's ip_dict of resizer.hwh: the HLS IP by its VLNV, phys_addr / addr_range ints equal to
    the PS's MEMRANGE read from the XML; our VLNVs are not there: PackageError naming the types found."""
    p = parse_hwh(RESIZER)
    key, e = find_accel(p.ip_dict, "resizer.hwh", (RESIZE_VLNV,))
    mr = next(r for r in ET.parse(RESIZER).getroot().iter("MEMRANGE") if r.get("INSTANCE") == key)
    assert key == "resize_accel_0" and e["type"] == RESIZE_VLNV and e["fullpath"] == key
    assert isinstance(e["phys_addr"], int) and isinstance(e["addr_range"], int)
    assert e["phys_addr"] == int(mr.get("BASEVALUE"), 16) == 0x43C0_0000
    assert e["addr_range"] == int(mr.get("HIGHVALUE"), 16) - e["phys_addr"] + 1
    assert e["device"] is None                     # the parser's dict: the driver supplies the device
    with pytest.raises(PackageError, match=r"no IP with VLNV .*resize_accel"):
        find_accel(p.ip_dict, "resizer.hwh")
    assert all(v not in str(p.ip_dict) for v in ACCEL_VLNVS)


def test_real_hwh_registers_follow_the_layout_our_manifest_uses():
    """The real HLS IP's parsed registers: CTRL / GIER / IP_IER / IP_ISR at the offsets and CTRL bits our manifest's
    map gives (generator/spec/isa.py, written into every manifest), the arguments where the UG1399 rule puts them,
    the rule also reproducing our map's offsets; a shifted offset or moved CTRL bit is reported."""
    regs = parse_hwh(RESIZER).ip_dict["resize_accel_0"]["registers"]
    ours = {n: (o, b) for n, o, b, _ in isa.REGISTERS}
    assert [(n, regs[n]["address_offset"]) for n in ("CTRL", "GIER", "IP_IER", "IP_ISR")] == \
        [(n, ours[m][0]) for n, m in (("CTRL", "CTRL"), ("GIER", "GIE"), ("IP_IER", "IER"), ("IP_ISR", "ISR"))]
    assert {k.lower(): f["bit_offset"] for k, f in regs["CTRL"]["fields"].items() if "RESERVED" not in k} == \
        isa.CTRL_BITS
    rule = {n: (o, b) for n, o, b, _ in ug1399_map(RESIZE_ARGS)}
    assert {n: (r["address_offset"], r["size"]) for n, r in regs.items() if n in rule} == \
        {n: v for n, v in rule.items() if n not in ("GIE", "IER", "ISR")}
    assert hwh_register_mismatches(rule, isa.CTRL_BITS, regs) == []
    assert ug1399_map([(n, b, a) for n, _, b, a in isa.REGISTERS[4:]]) == isa.REGISTERS
    bad = hwh_register_mismatches(dict(rule, dst_rows=(0x24, 32)), dict(isa.CTRL_BITS, ap_done=2), regs)
    assert len(bad) == 2 and "dst_rows" in bad[0] and "0x24" in bad[0] and "0x20" in bad[0] and "ap_done" in bad[1]
    missing = hwh_register_mismatches(ours, isa.CTRL_BITS, regs)
    assert {m.split()[1] for m in missing} == {n for n in ours if n not in ("CTRL", "GIE", "IER", "ISR")}


def test_real_hwh_unconnected_interrupt_means_polling():
    """resize_accel_0's interrupt pin has no connection in the XML; PYNQ lists no interrupt for it, so the driver's
    choice is polling and use_interrupt has a reason to refuse."""
    port = next(q for q in _xml_module(RESIZER, "resize_accel_0").iter("PORT") if q.get("NAME") == "interrupt")
    assert port.get("SIGIS") == "INTERRUPT" and port.find("CONNECTIONS") is None
    p = parse_hwh(RESIZER)
    assert p.interrupt_pins == {} and p.ip_dict["resize_accel_0"]["interrupts"] == {}
    with active(GoldenSimDevice("zcu19eg", hwh=RESIZER, accel_vlnvs=(RESIZE_VLNV,))) as dev:
        irq, why = ResizeIP(dict(p.ip_dict["resize_accel_0"], device=dev)).interrupt_choice()
    assert irq is None and "no AXI interrupt controller" in why


def test_real_hwh_through_pynq_overlay_and_open_accel_ip(tmp_path, monkeypatch):
    """pynq.Overlay(resizer.bit) over a device that parses the .hwh as a board does: open_accel_ip binds our driver
    class by VLNV at the parsed address; PYNQ's register_map (the real file's CTRL fields) decodes our simulated
    CTRL word (ap_idle) and writes an argument our read_reg finds; the manifest-style map of the IP passes the .hwh
    check, our accelerator's map is refused."""
    shutil.copy(RESIZER, tmp_path / "resizer.hwh")
    (tmp_path / "resizer.bit").write_bytes(b"not a bitstream: download=False")
    monkeypatch.setattr(accel_ip, "ACCEL_VLNVS", (RESIZE_VLNV,))
    with active(GoldenSimDevice("zcu19eg", hwh=RESIZER, accel_vlnvs=(RESIZE_VLNV,))) as dev:
        ov, ip = accel_ip.open_accel_ip(tmp_path, download=False)
        assert type(ip) is ResizeIP and ip is ov.resize_accel_0 and ip.device is dev
        assert ip.mmio.base_addr == 0x43C0_0000 == dev.accel_base
        assert ip.register_map.CTRL.AP_IDLE == 1 and ip.register_map.CTRL.AP_START == 0
        ip.set_register_map({n: _Reg(o, b) for n, o, b, _ in ug1399_map(RESIZE_ARGS)}, isa.CTRL_BITS)
        ip.register_map.dst_cols = 416          # PYNQ's write at the .hwh's offset, our read at the map's
        assert ip.read_reg("dst_cols") == 416 and ip.read_reg("dst_rows") == 0
        with pytest.raises(PackageMismatchError, match="register weights .* not in the .hwh") as e:
            ip.set_register_map({n: _Reg(o, b) for n, o, b, _ in isa.REGISTERS}, isa.CTRL_BITS)
        assert e.value.field == "register map"


class _Reg:
    def __init__(self, offset, bits):
        self.offset, self.bits = offset, bits


# ---- the modelled .hwh of our block design ---------------------------------------------------------------------
def modelled_hwh(tmp, board="zcu19eg", registers=isa.REGISTERS, kernel="hls"):
    """Render the ``kernel`` block design (HLS kernel or RTL IP) for ``board``, run its Tcl under tclsh stubs, write
    the modelled .hwh."""
    if kernel == "hls":
        hls.render(load_board(board), tmp, overlay_dir=tmp / "ov")
    else:
        rtl_ip.render_ip(load_board(board), tmp, bytes(isa.INSN_BYTES), overlay=tmp / "ov")
    return write_hwh(bd_calls(tmp / "vivado_bd.tcl"), registers, isa.CTRL_BITS, tmp / "system.hwh")


#: GIC interrupt ID of pl_ps_irq0[0] (PG201, "Interrupt Map": IRQ-F2P[7:0] are IDs 121-128)
PL_PS_IRQ0_GIC_ID = 121
#: where vivado_bd.tcl pins the axi_intc's registers (both block designs)
INTC_BASE = 0xA001_0000


def _connections(p, block, port):
    sig = p.md.blocks[block].ports[port].sig()
    return sorted(c.parent().parent().name + "/" + c.name for c in sig._connections.values())


def check_interrupt_listed(p, top_cell):
    """PYNQ's parse ``p`` of a modelled design: ``<top_cell>/interrupt`` -> axi_intc_0 (rising-edge input) -> the
    PS's pl_ps_irq0 in the XML's nets; the controller attached to the PS (raw IRQ the GIC ID of pl_ps_irq0[0]), the
    accelerator's pin listed on its line 0 (also in its ip_dict entry: what pynq.DefaultIP makes an Interrupt of);
    the controller addressable at INTC_BASE."""
    assert _connections(p, "zynq_ultra_ps_e_0", "pl_ps_irq0") == ["axi_intc_0/irq"]
    assert _connections(p, "axi_intc_0", "intr") == [f"{top_cell}/interrupt"]
    assert p.interrupt_controllers == {"axi_intc_0": {"parent": "", "index": 0, "raw_irq": PL_PS_IRQ0_GIC_ID}}
    pin = {"controller": "axi_intc_0", "index": 0, "fullpath": f"{top_cell}/interrupt"}
    assert p.interrupt_pins[f"{top_cell}/interrupt"] == pin
    assert p.ip_dict[top_cell]["interrupts"] == {"interrupt": pin}
    intc = p.ip_dict["axi_intc_0"]
    assert (intc["type"], intc["phys_addr"], intc["addr_range"]) == ("xilinx.com:ip:axi_intc:4.1", INTC_BASE, 0x10000)
    assert int(intc["parameters"]["C_KIND_OF_INTR"], 16) & 1 == 1 and intc["parameters"]["C_IRQ_IS_LEVEL"] == "1"


def test_modelled_hwh_parses_to_the_ip_dict_the_driver_expects(tmp_path):
    """PYNQ's parse of the modelled .hwh: one addressable HLS IP, accel_0 (VLNV KERNEL_VLNV) at HPM0_FPD's first
    64 KiB; the other four HLS cells are in the design but not addressable; the register names are Vitis HLS's
    and match the manifest's map (by construction: this checks the name translation, not the offsets); the
    interrupt through the axi_intc, listed (check_interrupt_listed)."""
    p = parse_hwh(modelled_hwh(tmp_path))
    key, e = find_accel(p.ip_dict, "modelled")
    assert key == "accel_0" and [k for k, v in p.ip_dict.items() if ":hls:" in v["type"]] == ["accel_0"]
    assert (e["phys_addr"], e["addr_range"], e["type"]) == (0xA000_0000, 0x10000, KERNEL_VLNV)
    assert {b.name for b in p.md.blocks.values()} >= {f"{t}_0" for t, _ in hls.TOPS}
    assert {"GIER", "IP_IER", "IP_ISR", "weights_1", "weights_2", "status_ctrl"} <= set(e["registers"])
    assert hwh_register_mismatches({n: (o, b) for n, o, b, _ in isa.REGISTERS}, isa.CTRL_BITS, e["registers"]) == []
    check_interrupt_listed(p, "accel_0")


@pytest.fixture(scope="module")
def compiled():
    return compiled_model("zcu19eg", "int8-asym")


def _package_with_overlay(compiled, tmp, hwh):
    pkg = write_artifacts(compiled, tmp / "pkg")
    shutil.copy(hwh, pkg / "yolofpga_zcu19eg.hwh")
    (pkg / "yolofpga_zcu19eg.bit").write_bytes(b"not a bitstream: download=False")
    return pkg


def test_frame_through_the_driver_bound_by_pynq_to_the_modelled_hwh(compiled, tmp_path):
    """A package with the modelled overlay (.bit + .hwh): pynq.Overlay parses the .hwh, binds AccelIP by VLNV,
    the driver checks the manifest's map against the parsed registers, probes the HLS info registers and runs
    bus.jpg on the golden backend at the address PYNQ derived (polling): detections equal to `invoke detect`'s
    path. Where PYNQ cannot open the interrupt (no UIO device for IRQ 121 on this machine: pynq.DefaultIP warns
    and leaves it None), use_interrupt=True is refused naming the pin and controller."""
    hwh = modelled_hwh(tmp_path / "bd")
    pkg = _package_with_overlay(compiled, tmp_path, hwh)
    img = load_image(data.sample_images()["bus"])
    heads, _, _, _ = run_golden(compiled.program, compiled.qgraph, quantize_image(compiled, img))
    want = detections_from_heads(compiled, heads, img.shape[1], img.shape[0])
    with active(IntcSimDevice("zcu19eg", hwh=hwh, info_registers="hls")) as dev:
        acc = YoloAccelerator(pkg, download=False, timeout_s=SIM_TIMEOUT_S)
        assert type(acc.ip) is AccelIP and acc.ip is acc.overlay.accel_0
        assert acc.ip.mmio.base_addr == 0xA000_0000 == dev.accel_base
        assert acc.overlay.ip_dict["accel_0"]["device"] is dev
        assert acc.probe_status == 1 << isa.STATUS_BITS["NO_END"]
        assert acc.detect(img) == want
        assert dev.accel.runs == 2 and acc._interrupt is None
        with pytest.warns(UserWarning, match="Could not find UIO device for interrupt pin for IRQ number 121"), \
                pytest.raises(DriverError, match="could not open the interrupt accel_0/interrupt on axi_intc_0 line 0"):
            YoloAccelerator(pkg, download=False, use_interrupt=True)


def test_modelled_hwh_register_map_mismatch_and_device_ip_dict(compiled, tmp_path):
    """A bitstream whose .hwh puts n_insns elsewhere than the manifest: refused before any run, naming it. Without
    a .bit in the package the driver takes the IP from the active device's ip_dict as PYNQ's parser gives it
    (``device`` None in the entry) and binds it on that device."""
    moved = [(n, o + 4 if n == "n_insns" else o, b, a) for n, o, b, a in isa.REGISTERS]
    bad = _package_with_overlay(compiled, tmp_path / "bad", modelled_hwh(tmp_path / "bd1", registers=moved))
    with active(IntcSimDevice("zcu19eg", hwh=bad / "yolofpga_zcu19eg.hwh")) as dev:
        with pytest.raises(PackageMismatchError, match=r"register n_insns: manifest 32 bit at 0x4c, .hwh n_insns "
                                                        r"32 bit at 0x50"):
            YoloAccelerator(bad, download=False)
        assert dev.accel.runs == 0
    hwh = modelled_hwh(tmp_path / "bd2")
    pkg = write_artifacts(compiled, tmp_path / "nobit")
    with active(IntcSimDevice("zcu19eg", hwh=hwh, info_registers="hls")) as dev:
        assert dev.ip_dict["accel_0"]["device"] is None
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S)
        assert acc.overlay is None and acc.ip.device is dev and acc.ip.mmio.base_addr == 0xA000_0000
        assert dev.accel.probes == 1


def test_modelled_hwh_of_the_rtl_ip_block_design(compiled, tmp_path):
    """The RTL IP's block design (rtl/templates/vivado_bd.tcl.j2): accel_rtl_0 (RTL_KERNEL_VLNV) found by VLNV
    through pynq.Overlay, its registers as package_ip.tcl names them (the manifest's, 64-bit ones whole) pass the
    check; its interrupt through the axi_intc, listed (check_interrupt_listed)."""
    hwh = modelled_hwh(tmp_path / "bd", kernel="rtl")
    p = parse_hwh(hwh)
    e = find_accel(p.ip_dict, "modelled")[1]
    assert (e["fullpath"], e["type"], e["phys_addr"]) == ("accel_rtl_0", RTL_KERNEL_VLNV, 0xA000_0000)
    assert e["registers"]["weights"]["size"] == 64 and "GIE" in e["registers"]
    check_interrupt_listed(p, "accel_rtl_0")
    pkg = _package_with_overlay(compiled, tmp_path, hwh)
    with active(IntcSimDevice("zcu19eg", hwh=hwh)) as dev:
        acc = YoloAccelerator(pkg, download=False)
        assert type(acc.ip) is AccelIP and acc.ip is acc.overlay.accel_rtl_0 and dev.accel.runs == 0
        assert acc.ip.mmio.base_addr == dev.accel_base == 0xA000_0000


# ---- interrupts: PYNQ's own Interrupt over a simulated axi_intc --------------------------------------------------
class IntcRegs:
    """The axi_intc's registers as PG099 ("Register Space") defines them, one input: ISR 0x00, IPR 0x04 (ISR & IER),
    IER 0x08, IAR 0x0C (write 1: clear ISR), SIE 0x10 / CIE 0x14 (set / clear IER bits), MER 0x1C (ME, HIE); the
    input ``line()`` sampled at each access: rising-edge kind (``edge``, C_KIND_OF_INTR bit 1) sets ISR on a 0 -> 1
    change, level kind while it is high (so again right after IAR while the source still is); ``irq()`` the level
    output: MER.ME and IPR != 0. ``wakes``: at each irq delivered, whether the accelerator was idle (the run over)."""
    def __init__(self, line, edge):
        self.line, self.edge, self.last = line, edge, False
        self.isr = self.ier = self.mer = 0
        self.lock = threading.Lock()

    def _sample(self):
        now = bool(self.line())
        if now and not (self.edge and self.last):
            self.isr |= 1
        self.last = now

    def irq(self):
        with self.lock:
            self._sample()
            return bool(self.mer & 1 and self.isr & self.ier)

    def read(self, off):
        with self.lock:
            self._sample()
            return {0x00: self.isr, 0x04: self.isr & self.ier, 0x08: self.ier, 0x1C: self.mer}.get(off, 0)

    def write(self, off, v):
        with self.lock:
            if off == 0x0C:
                self.isr &= ~v
            elif off in (0x08, 0x10, 0x14):
                self.ier = v & 1 if off == 0x08 else self.ier | v & 1 if off == 0x10 else self.ier & ~v
            elif off == 0x1C:
                self.mer = v & 3
            self._sample()


class IntcSimDevice(GoldenSimDevice):
    """The golden device of a modelled .hwh with its axi_intc answering at the address PYNQ parsed (512 bytes,
    C_S_AXI_ADDR_WIDTH 9), its input kind the .hwh's C_KIND_OF_INTR, its input the accelerator's interrupt output
    (ap_ctrl_hs: GIE and ISR's ap_done)."""
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        e, acc = self.ip_dict["axi_intc_0"], self.accel
        self.intc_base = int(e["phys_addr"])
        self.intc = IntcRegs(lambda: acc.gie and acc.isr & 1, int(e["parameters"]["C_KIND_OF_INTR"], 16) & 1)

    def read_registers(self, address, length):
        if 0 <= address - self.intc_base < 0x200:
            return struct.pack("<I", self.intc.read(address - self.intc_base))
        return super().read_registers(address, length)

    def write_registers(self, address, data):
        if 0 <= address - self.intc_base < 0x200:
            return self.intc.write(address - self.intc_base, struct.unpack("<I", data)[0])
        return super().write_registers(address, data)


class UioStandIn:
    """Stands in for the board's UIO device of pl_ps_irq0 (the kernel's GIC and uio_pdrv_genirq), the one piece of
    PYNQ's interrupt path that needs the board: a pty whose slave PYNQ's own UioController opens as /dev/uioN.
    A 4-byte write of 1 enables the interrupt; while enabled, a high irq of the device's axi_intc is delivered as a
    4-byte count readable on the slave and disables it until the next enable (as uio_pdrv_genirq does)."""
    def __init__(self, device):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path, self.device = os.ttyname(self.slave), device
        self.count, self.early, self.enabled, self.stop = 0, 0, False, False
        os.set_blocking(self.master, False)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        acc = self.device.accel
        while not self.stop:
            with contextlib.suppress(BlockingIOError):
                self.enabled |= any(os.read(self.master, 4))
            if self.enabled and self.device.intc.irq():
                self.enabled, self.count = False, self.count + 1
                self.early += not acc.ctrl >> isa.CTRL_BITS["ap_idle"] & 1     # a wake before the run ended
                os.write(self.master, struct.pack("<I", self.count))
            time.sleep(2e-4)

    def close(self):
        self.stop = True
        self.thread.join()
        os.close(self.master)


@pytest.fixture
def uio(monkeypatch):
    """PYNQ's interrupt path as on a board, for the active IntcSimDevice: its interrupt controllers and UIO devices
    forgotten (PYNQ caches them per class), the UIO of raw IRQ 121 the stand-in's pty (the list of stand-ins made is
    the fixture's value), and a fresh current event loop (a new process's)."""
    from pynq import interrupt
    made = []

    def uio_of(irq):
        assert irq == PL_PS_IRQ0_GIC_ID
        made.append(UioStandIn(Device.active_device))
        return made[-1].path
    monkeypatch.setattr(interrupt._InterruptController, "_controllers", [])
    monkeypatch.setattr(interrupt._InterruptController, "_uio_devices", {})
    monkeypatch.setattr(interrupt, "get_uio_irq", uio_of)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield made
    for u in made:
        u.close()
    asyncio.set_event_loop(asyncio.new_event_loop())   # (UioController.__del__ asks the current loop later)
    loop.close()


@pytest.mark.parametrize("kernel,kind", [("hls", "edge"), pytest.param("rtl", "edge", marks=pytest.mark.slow),
                                         ("hls", "level")])
def test_frames_wait_on_pynq_interrupt_through_the_axi_intc(compiled, tmp_path, uio, kernel, kind):
    """The modelled block design (HLS kernel or RTL IP): PYNQ lists the accelerator's interrupt behind axi_intc_0,
    pynq.Overlay opens it as PYNQ's own pynq.interrupt.Interrupt (its _InterruptController programming the simulated
    axi_intc, its UioController on the stand-in UIO device), the driver's interrupt_choice takes it, and bus.jpg
    frames with use_interrupt=True give polling's detections, each woken by its own run's interrupt: one delivery
    per frame, none before the run ended, well inside the timeout; ap_done cleared in the IP after each. The same
    design with the controller's input left level-sensitive (C_KIND_OF_INTR bit 0 cleared, Vivado's default for a
    LEVEL_HIGH pin): PYNQ acknowledges the line before the driver clears the IP, the input latches again, and the
    second frame's wait wakes before its run ended (the driver then polls: same detections)."""
    hwh = modelled_hwh(tmp_path / "bd", kernel=kernel)
    top = "accel_0" if kernel == "hls" else "accel_rtl_0"
    check_interrupt_listed(parse_hwh(hwh), top)
    if kind == "level":
        text = hwh.read_text()
        hwh.write_text(text.replace('"C_KIND_OF_INTR" VALUE="0xFFFFFFFF"', '"C_KIND_OF_INTR" VALUE="0xFFFFFFFE"', 1))
        assert hwh.read_text() != text
    pkg = _package_with_overlay(compiled, tmp_path, hwh)
    img = load_image(data.sample_images()["bus"])
    with active(IntcSimDevice("zcu19eg", hwh=hwh)) as dev:
        want = YoloAccelerator(pkg, download=False, timeout_s=SIM_TIMEOUT_S).detect(img)
        acc = YoloAccelerator(pkg, download=False, timeout_s=60.0, use_interrupt=True)
        irq, why = acc.ip.interrupt_choice()
        assert type(irq) is pynq.interrupt.Interrupt and acc._interrupt is irq
        assert why == f"interrupt {top}/interrupt on axi_intc_0 line 0" and len(uio) == 1
        for frame in (1, 2):
            assert acc.detect(img) == want
            early = frame - 1 if kind == "level" else 0
            assert (uio[0].count, uio[0].early) == (frame, early) and acc.last_timing["accel_ms"] < 30e3
            assert (dev.accel.gie, dev.accel.ier, dev.intc.mer) == (1, 1, 3)
            assert dev.accel.isr == (1 if early else 0)      # an early wake: cleared before the run set it

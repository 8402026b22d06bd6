"""``pynq.DefaultIP`` driver of the accelerator's AXI-Lite slave (register map from the package manifest), and how
the driver finds it (:func:`open_accel_ip`, :func:`find_accel`).

What PYNQ 3.x / 4.0 gives the driver (``Overlay.ip_dict``, ``Device.ip_dict``: pynqmetadata's view of the .hwh,
``pynq.metadata.runtime_metadata_parser``), as checked on real Vivado output (pynqmetadata's
``tests/hwhs/resizer.hwh``, ``tests/host/test_hwh_binding.py``): one entry per IP addressable from the PS, keyed
by its block-design path (``"accel_0"``, ``"hier/accel_0"``); ``type`` the VLNV; ``phys_addr`` and ``addr_range``
ints (bytes); ``registers`` {name: {"address_offset": int, "size": bits, "access", "description", "fields":
{name: {"bit_offset", "bit_width", "access", "description"}}}} as Vivado named them (a Vitis HLS IP:
``CTRL``, ``GIER``, ``IP_IER``, ``IP_ISR``, its arguments); ``interrupts`` {pin: {"controller", "index",
"fullpath"}} only for pins behind an AXI interrupt controller (``axi_intc``, as our block designs put it): a pin
wired straight to the PS's ``pl_ps_irq0`` or left open is not listed; ``device`` None in the parser's dict (the
Overlay fills it). The driver uses the manifest's register names and offsets, checks them against the .hwh's
(:func:`host.registers.hwh_register_mismatches`), and waits on the ``interrupt`` pin only where PYNQ lists it
(:meth:`AccelIP.interrupt_choice`).
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from pynq import DefaultIP

from .errors import DriverError, PackageError, PackageMismatchError
from .registers import ACCEL_VLNVS, hwh_register_mismatches


class AccelIP(DefaultIP):
    """``DefaultIP`` driver of the accelerator's AXI-Lite slave (Vitis HLS ``ap_ctrl_hs`` block).

    PYNQ binds it to every IP with a VLNV of :data:`host.registers.ACCEL_VLNVS` in a loaded overlay: the HLS
    kernel's control block or the RTL packaged as an IP, which share the register map. Register names,
    offsets and widths come from the package manifest (:meth:`set_register_map`), checked against the registers of
    the overlay's .hwh when PYNQ parsed one; 64-bit registers are two 32-bit words (low word first).
    """

    bindto = list(ACCEL_VLNVS)

    def __init__(self, description):
        super().__init__(description=description)
        self.regs, self.ctrl_bits = {}, {}

    def set_register_map(self, registers: dict, ctrl_bits: dict):
        """registers: {name: :class:`host.manifest_types.Register`} (``offset`` bytes, ``bits`` 32 | 64, ``access``
        "r" | "w" | "rw"); ctrl_bits: {name: CTRL bit}.

        Raises:
            PackageMismatchError (field ``"register map"``): the IP's description has the .hwh's registers (an
                overlay loaded with its .hwh) and they disagree with the manifest's (a register missing, at another
                offset or width, a CTRL bit elsewhere: :func:`host.registers.hwh_register_mismatches`), naming the
                first three disagreements.
        """
        hwh = getattr(self, "_registers", None) or {}
        if hwh:
            bad = hwh_register_mismatches({n: (r.offset, r.bits) for n, r in registers.items()}, ctrl_bits, hwh)
            if bad:
                raise PackageMismatchError("register map", "manifest.json's", "the .hwh's", reason="; ".join(bad[:3]))
        self.regs, self.ctrl_bits = registers, ctrl_bits

    def interrupt_choice(self):
        """How ``ap_done`` can be waited for in this design: ``(pynq.interrupt.Interrupt, why)`` when PYNQ lists the
        IP's ``interrupt`` pin (behind an AXI interrupt controller) and could open it, else ``(None, why)`` (poll
        CTRL); ``why`` one phrase naming the pin and controller or saying what is missing. PYNQ opens the pin when
        the Overlay binds the IP: its UioController waits on the event loop current in that thread then, the loop
        the caller must run the wait on."""
        entry = (getattr(self, "_interrupts", None) or {}).get("interrupt")
        if entry is None:
            return None, ("the accelerator's interrupt pin reaches no AXI interrupt controller in this design's .hwh "
                          "(PYNQ lists only pins behind an axi_intc, as our block designs put it; a pin wired "
                          "straight to pl_ps_irq0 or left open is not one)")
        where = f"{entry.get('fullpath', 'interrupt')} on {entry.get('controller')} line {entry.get('index')}"
        pin = getattr(self, "interrupt", None)
        if pin is None:
            return None, f"PYNQ could not open the interrupt {where}"
        return pin, f"interrupt {where}"

    def pick_interrupt(self):
        """(ap_done's ``Interrupt``, the event loop to wait on it in) for ``use_interrupt=True``: PYNQ's UioController
        put its reader on the loop current in this thread when the Overlay made the Interrupt (a new loop would never
        see the interrupt, each wait running into the timeout). Raises DriverError if the design gives PYNQ none
        (:meth:`interrupt_choice`)."""
        irq, why = self.interrupt_choice()
        if irq is None:
            raise DriverError(f"use_interrupt=True but {why}: use polling (use_interrupt=False)")
        return irq, asyncio.get_event_loop()

    def write_reg(self, name: str, value: int):
        """Write ``value`` to the AXI-Lite register ``name`` (64-bit registers as two 32-bit words)."""
        r = self.regs[name]
        value = int(value)
        self.write(r.offset, value & 0xFFFFFFFF)
        if r.bits == 64:
            self.write(r.offset + 4, (value >> 32) & 0xFFFFFFFF)

    def read_reg(self, name: str) -> int:
        """Read the AXI-Lite register ``name`` (64-bit registers from two 32-bit words)."""
        r = self.regs[name]
        v = self.read(r.offset)
        if r.bits == 64:
            v |= self.read(r.offset + 4) << 32
        return v

    def ctrl_bit(self, ctrl: int, name: str) -> bool:
        """Bit ``name`` (ap_start, ap_done, ap_idle, ...) of the ap_ctrl_hs CTRL word ``ctrl``."""
        return bool(ctrl >> self.ctrl_bits[name] & 1)

    def finished(self) -> bool:
        """One CTRL read: ``ap_done``, or idle without a pending ``ap_start`` (the run is over)."""
        ctrl = self.read_reg("CTRL")
        idle = self.ctrl_bit(ctrl, "ap_idle") and not self.ctrl_bit(ctrl, "ap_start")
        return self.ctrl_bit(ctrl, "ap_done") or idle

    def snapshot(self) -> dict:
        """Every register's current value (diagnostics). Reading CTRL clears a pending ap_done."""
        return {name: self.read_reg(name) for name in self.regs}


def find_accel(ip_dict: dict, where: str, vlnvs=None) -> tuple[str, dict]:
    """The accelerator's entry of a PYNQ ``ip_dict`` (see the module docstring): the one IP whose ``type`` is one of
    ``vlnvs`` (default: this module's ``ACCEL_VLNVS``, :data:`host.registers.ACCEL_VLNVS`), by VLNV, never by name.
    Returns (key, entry).

    Raises:
        PackageError: no such IP, or several (one accelerator per overlay), naming ``where`` and the types found.
    """
    vlnvs = tuple(vlnvs or ACCEL_VLNVS)
    names = [k for k, d in ip_dict.items() if d.get("type") in vlnvs]
    if len(names) != 1:
        what = "no IP" if not names else f"{len(names)} IPs ({', '.join(names)})"
        raise PackageError(f"{where}: {what} with VLNV {' or '.join(vlnvs)}, need exactly one "
                           f"(found {sorted(str(d.get('type')) for d in ip_dict.values())})")
    return names[0], ip_dict[names[0]]


def open_accel_ip(package: Path, bitfile=None, download=True):
    """The accelerator's control IP: from ``bitfile`` (default: the only ``*.bit`` in ``package``, if any) loaded
    with ``pynq.Overlay`` (its .hwh beside it), else from the active PYNQ device's ``ip_dict`` (a design already
    loaded). The IP is the one whose VLNV is one of :data:`host.registers.ACCEL_VLNVS` (the HLS kernel's or the RTL
    IP's; also inside a hierarchy: key ``"hier/accel_0"``, :func:`find_accel`). Returns (overlay or None,
    :class:`AccelIP`).

    Raises:
        PackageError: several bitstreams in ``package``, no IP or several IPs with an accelerator VLNV.
    """
    if bitfile is None:
        bits = sorted(package.glob("*.bit"))
        if len(bits) > 1:
            raise PackageError(f"{package}: several bitstreams {[b.name for b in bits]}; pass bitfile=")
        bitfile = bits[0] if bits else None
    if bitfile is not None:
        from pynq import Overlay

        ov = Overlay(str(bitfile), download=download)
        name, entry = find_accel(ov.ip_dict, f"{bitfile}: the overlay")
        ip = ov
        for part in name.split("/"):           # IP inside a hierarchy: ip_dict key "hier/accel_0"
            ip = getattr(ip, part)
        if not isinstance(ip, AccelIP):         # another driver claimed the VLNV: use ours
            ip = AccelIP(dict(entry, device=entry.get("device") or ov.device))
        return ov, ip
    from pynq.pl_server.device import Device

    dev = Device.active_device
    _, entry = find_accel(getattr(dev, "ip_dict", None) or {},
                          f"{package}: no *.bit in the package, and the active PYNQ device")
    desc = dict(entry)
    if desc.get("device") is None:            # the parser's ip_dict says device None: the active device
        desc["device"] = dev
    return None, AccelIP(desc)


def loop_running() -> bool:
    """Whether an asyncio loop runs in this thread (Jupyter): the driver then polls instead of waiting on it."""
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False

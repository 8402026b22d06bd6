"""``pynq.DefaultIP`` driver of the accelerator's AXI-Lite slave (register map from the package manifest), and how
the driver finds it (:func:`open_accel_ip`)."""
from __future__ import annotations

from pathlib import Path

from pynq import DefaultIP

from .errors import PackageError
from .registers import ACCEL_VLNVS


class AccelIP(DefaultIP):
    """``DefaultIP`` driver of the accelerator's AXI-Lite slave (Vitis HLS ``ap_ctrl_hs`` block).

    PYNQ binds it to every IP with a VLNV of :data:`host.registers.ACCEL_VLNVS` in a loaded overlay: the HLS
    kernel's control block or the RTL packaged as an IP, which share the register map. Register names,
    offsets and widths come from the package manifest (:meth:`set_register_map`); 64-bit registers are two 32-bit
    words (low word first).
    """

    bindto = list(ACCEL_VLNVS)

    def __init__(self, description):
        super().__init__(description=description)
        self.regs, self.ctrl_bits = {}, {}

    def set_register_map(self, registers: dict, ctrl_bits: dict):
        """registers: {name: :class:`host.manifest_types.Register`} (``offset`` bytes, ``bits`` 32 | 64, ``access``
        "r" | "w" | "rw"); ctrl_bits: {name: CTRL bit}."""
        self.regs, self.ctrl_bits = registers, ctrl_bits

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


def open_accel_ip(package: Path, bitfile=None, download=True):
    """The accelerator's control IP: from ``bitfile`` (default: the only ``*.bit`` in ``package``, if any) loaded
    with ``pynq.Overlay``, else from the active PYNQ device's ``ip_dict`` (a design already loaded). The IP is the
    one whose VLNV is one of :data:`host.registers.ACCEL_VLNVS` (the HLS kernel's or the RTL IP's; also inside a
    hierarchy). Returns (overlay or None, :class:`AccelIP`).

    Raises:
        PackageError: several bitstreams in ``package``, or no IP with an accelerator VLNV.
    """
    if bitfile is None:
        bits = sorted(package.glob("*.bit"))
        if len(bits) > 1:
            raise PackageError(f"{package}: several bitstreams {[b.name for b in bits]}; pass bitfile=")
        bitfile = bits[0] if bits else None
    if bitfile is not None:
        from pynq import Overlay

        ov = Overlay(str(bitfile), download=download)
        names = [k for k, d in ov.ip_dict.items() if d.get("type") in ACCEL_VLNVS]
        if not names:
            raise PackageError(f"{bitfile}: no IP with VLNV {' or '.join(ACCEL_VLNVS)} in the overlay "
                               f"(found {sorted(d.get('type') for d in ov.ip_dict.values())})")
        ip = ov
        for part in names[0].split("/"):        # IP inside a hierarchy: ip_dict key "hier/accel_0"
            ip = getattr(ip, part)
        if not isinstance(ip, AccelIP):         # another driver claimed the VLNV: use ours
            ip = AccelIP(ov.ip_dict[names[0]])
        return ov, ip
    from pynq.pl_server.device import Device

    dev = Device.active_device
    ips = {k: d for k, d in (getattr(dev, "ip_dict", None) or {}).items() if d.get("type") in ACCEL_VLNVS}
    if not ips:
        raise PackageError(f"{package}: no *.bit in the package and the active PYNQ device has no IP "
                           f"{' or '.join(ACCEL_VLNVS)} loaded")
    desc = dict(next(iter(ips.values())))
    desc.setdefault("device", dev)
    return None, AccelIP(desc)

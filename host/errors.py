"""Errors of the PYNQ driver (:mod:`host.driver`). Pure Python: no pynq needed to import or catch them."""
from __future__ import annotations


class DriverError(RuntimeError):
    """Base class of the driver's errors."""


class PackageError(DriverError):
    """The deployment package is incomplete or inconsistent (the message names the file and the problem)."""


class PackageMismatchError(DriverError):
    """The loaded hardware is not the one the package was compiled for.

    Attributes: field (``"isa_version"``, ``"tn"``, ``"tm"``, ``"precision"`` or ``"config_id"``),
    package (the manifest's value), hardware (the value read from the registers).
    """

    def __init__(self, field, package, hardware):
        self.field, self.package, self.hardware = field, package, hardware
        fmt = (lambda v: f"{v:#010x}") if field == "config_id" else str
        super().__init__(f"package compiled for {field} = {fmt(package)}, the accelerator reports "
                         f"{field} = {fmt(hardware)}: rebuild the package for this bitstream (or load the matching one)")


class AcceleratorTimeout(DriverError):
    """``ap_done`` did not rise within the timeout. Attributes: timeout_s, registers ({name: value})."""

    def __init__(self, timeout_s, registers):
        self.timeout_s, self.registers = timeout_s, registers
        super().__init__(f"accelerator did not finish within {timeout_s:.3f} s; registers: {_fmt_regs(registers)}")


class AcceleratorError(DriverError):
    """The run ended with a non-zero ``status`` (or the driver refused the program with the status bit the
    hardware would report: PARTIAL_INSN, a ``program.bin`` that is not whole instructions). Attributes: status
    (int), bits (names of the set bits, from the manifest's ``status_bits``), registers ({name: value})."""

    def __init__(self, status, bits, registers, reason: str | None = None):
        self.status, self.bits, self.registers = status, bits, registers
        what = reason or f"accelerator reported status {status:#x}"
        super().__init__(f"{what} ({', '.join(bits)}; status={status:#x}); registers: {_fmt_regs(registers)}")


def _fmt_regs(regs: dict) -> str:
    return ", ".join(f"{k}={v:#x}" for k, v in regs.items())

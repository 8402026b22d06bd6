"""Errors of the PYNQ driver (:mod:`host.driver`). Pure Python: no pynq needed to import or catch them."""
from __future__ import annotations


class DriverError(RuntimeError):
    """Base class of the driver's errors."""


class PackageError(DriverError):
    """The deployment package is incomplete or inconsistent (the message names the file and the problem)."""


class PackageMismatchError(DriverError):
    """The loaded hardware is not the one the package was compiled for, or (with ``file``) a file of the package is
    not the one its manifest describes.

    Attributes: field (``"isa_version"``, ``"tn"``, ``"tm"``, ``"precision"`` or ``"config_id"``; for a file
    ``"bytes"`` or ``"sha256"``), package (the manifest's value; for ``precision`` the precisions its program uses,
    joined by ``/``), hardware (the value read from the registers: for ``precision`` the bitstream's modes; for a
    file, the file's own value), file (the file's path, or None for a hardware mismatch), reason (one phrase
    saying what differs, or None).
    """

    def __init__(self, field, package, hardware, *, file=None, reason=None):
        self.field, self.package, self.hardware = field, package, hardware
        self.file, self.reason = file, reason
        if file is not None:
            super().__init__(f"{file}: {reason or f'{field} differs from the manifest'} (manifest: {field} = "
                             f"{package}, file: {field} = {hardware}): the package is damaged or mixed with "
                             f"another build; copy or rebuild it")
            return
        fmt = (lambda v: f"{v:#010x}") if field == "config_id" else str
        what = f"{reason}: " if reason else ""
        super().__init__(f"{what}package compiled for {field} = {fmt(package)}, the accelerator reports "
                         f"{field} = {fmt(hardware)}: rebuild the package for this bitstream (or load the matching one)")


class PackageFileMismatchError(PackageMismatchError, PackageError):
    """A file of the package (``program.bin``, ``weights.bin``, the export's constants) differs in size or SHA-256
    from the manifest's ``files`` entry (or, for an older manifest without it, from the sizes it implies): a
    damaged copy, or files of two builds mixed in one folder. Both a :class:`PackageMismatchError` and a
    :class:`PackageError`. Attributes as :class:`PackageMismatchError` (``file`` always set; ``field`` ``"bytes"``
    or ``"sha256"``)."""

    def __init__(self, file, field, package, found, reason=None):
        super().__init__(field, package, found, file=str(file), reason=reason)


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

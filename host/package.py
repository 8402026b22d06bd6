"""A deployment package's binary files, read and verified before the driver uses them.

The driver (:class:`host.driver.YoloAccelerator`) reads ``program.bin``, ``weights.bin`` and, for a model whose
decode is in the graph, the export's constants (``tail_consts.npz``) through these functions, after
:func:`host.manifest.read_manifest` has checked the manifest. Each file is checked against the manifest's ``files``
entry (size, then SHA-256: :func:`host.manifest.verify_file`) before anything else is done with it; a manifest
without ``files`` (a package written before the integrity rules) gets the exact sizes it implies checked instead
(``program.bin``: ``n_insns`` instructions, ``weights.bin``: the WEIGHTS space). Pure Python + numpy: runs on the
board without the generator and without ``pynq``.
"""
from __future__ import annotations

import io
from pathlib import Path

from .errors import AcceleratorError, PackageError
from .exported import load_consts
from .manifest import verify_file
from .manifest_types import Manifest

__all__ = ["read_package_file", "load_program", "load_weights", "load_tail_consts"]


def read_package_file(package, manifest: Manifest, name: str, size: int | None = None) -> bytes:
    """The bytes of file ``name`` of the package folder ``package``, checked against ``manifest``'s ``files``
    entry (size, then SHA-256) when it has one, else against ``size`` (the exact size an older manifest implies,
    or None: not checked).

    Raises:
        PackageError: the file is missing or unreadable.
        host.errors.PackageFileMismatchError: its size or SHA-256 differs from the manifest (names the file).
    """
    p = Path(package) / name
    if not p.is_file():
        raise PackageError(f"{p}: no such file")
    try:
        b = p.read_bytes()
    except OSError as e:
        raise PackageError(f"{p}: cannot be read ({e.strerror or e})") from None
    files = manifest.files
    verify_file(p, files.get(name) if files else None, b, None if files else size)
    return b


def load_program(package, m: Manifest) -> bytes:
    """``program.bin`` (``m.n_insns`` instructions of ``m.insn_bytes`` bytes), verified.

    Raises:
        PackageError, PackageFileMismatchError: as :func:`read_package_file`; also a whole number of
            instructions other than ``n_insns`` (an older manifest).
        host.errors.AcceleratorError: not a whole number of instructions (with the hardware's PARTIAL_INSN bit:
            the instruction-count register cannot express it).
    """
    program = read_package_file(package, m, "program.bin")
    path = Path(package) / "program.bin"
    if len(program) % m.insn_bytes:      # the n_insns register counts whole instructions: refuse it here
        st = 1 << m.status_bits["PARTIAL_INSN"]
        raise AcceleratorError(st, ["PARTIAL_INSN"], {"program_bytes": len(program)},
                               f"{path} is {len(program)} bytes, not a whole number of {m.insn_bytes}-byte "
                               f"instructions")
    n = m.n_insns + (m.pre.prologue_insns if m.pre is not None else 0)   # (a PRE prologue after the main program)
    if len(program) != n * m.insn_bytes:
        raise PackageError(f"{path}: {len(program)} bytes, the manifest says {n * m.insn_bytes}")
    return program


def load_weights(package, m: Manifest) -> bytes:
    """``weights.bin``, verified; at most the WEIGHTS space (``m.base_sizes["WEIGHTS"]`` bytes).

    Raises:
        PackageError, PackageFileMismatchError: as :func:`read_package_file`; also a file longer than the WEIGHTS
            space.
    """
    # an older manifest (no ``files``): weights.bin is exactly the WEIGHTS space (the generator's allocation:
    # every layer's records 64-byte aligned, the space is the blob's length)
    space = m.base_sizes["WEIGHTS"]
    weights = read_package_file(package, m, "weights.bin", space)
    if len(weights) > space:
        raise PackageError(f"{Path(package) / 'weights.bin'}: {len(weights)} bytes, manifest's WEIGHTS space is "
                           f"{space}")
    return weights


def load_tail_consts(package, m: Manifest) -> dict:
    """The export's host-tail constants ({name: numpy array}) from the file ``m.export.consts``, verified
    (:func:`read_package_file`), then read.

    Raises:
        PackageError (also for a file that is not an ``.npz`` of plain arrays), PackageFileMismatchError.
    """
    name = m.export.consts
    data = read_package_file(package, m, name)
    try:
        return load_consts(io.BytesIO(data))
    except Exception as e:  # noqa: BLE001 - np.load raises zipfile / ValueError / OSError kinds
        raise PackageError(f"{Path(package) / name}: not an .npz of arrays ({type(e).__name__}: {e})") from None

"""The HLS C-simulation as an executor: the kernel rendered by :mod:`generator.backends.hls` compiled with g++
(:data:`GXX_FLAGS`) against the open-source ``ap_types`` headers (shipped in the ``hls4ml`` wheel that
``setup.sh`` installs) and run on a DDR image, bit-exact against the golden simulator.

C-simulation runs the kernel's structure itself (``hls_templates/kernel/accel_csim.h``): the five tops as
std::threads over bounded blocking FIFOs of the stated depths (``hls_templates/kernel/accel_stream.h``), load /
compute / store called again and again as free-running blocks are, stopped when fetch has returned; a deadlock
(every thread blocked on a FIFO that cannot move) is detected exactly and reported as WATCHDOG. It is clean under
``-fsanitize=thread`` (tests/backends/test_hls_csim.py).

Error status: the kernel sets the bits of :data:`generator.spec.isa.STATUS_BITS` under the conditions documented
there, as the golden simulator raises them (tests/exec/test_status.py runs every case on both); C-simulation also reports
a deadlock (WATCHDOG) and tokens left at the end (TOKENS_LEFT). :func:`run_csim` refuses a program that is not whole
instructions (PARTIAL_INSN) without running it, as the other loaders do.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

from host.fileio import atomic_path, atomic_write
from generator.backends import hls
from generator.backends.hls import HlsError
from generator.exec.ccache import ccache, ccache_env
from generator.exec.golden import GoldenSim
from generator.spec import isa
from generator.spec.board import Board
from host.manifest import PAGE

#: g++ flags of TOOLCHAIN.md; our code must compile warning-free with them
GXX_FLAGS = ["-std=c++14", "-O2", "-Wall", "-Wextra", "-Wno-unknown-pragmas", "-Wno-unused-label",
             "-Wno-uninitialized", "-Wno-maybe-uninitialized"]


def ap_types_dir() -> Path:
    """Folder of the open-source ``ap_int.h`` / ``hls_stream.h`` headers inside the installed hls4ml wheel.

    Raises HlsError if hls4ml is not installed (``pip install --no-deps hls4ml==1.3.0``)."""
    spec = importlib.util.find_spec("hls4ml")
    if spec is None or not spec.submodule_search_locations:
        raise HlsError("hls4ml is not installed: pip install --no-deps hls4ml==1.3.0 "
                       "(only its ap_types headers are used)")
    d = Path(spec.submodule_search_locations[0]) / "templates" / "vivado" / "ap_types"
    if not (d / "ap_int.h").is_file():
        raise HlsError(f"{d} has no ap_int.h")
    return d


def compile_csim(src_dir: str | Path, exe: str | Path | None = None, extra: list[str] | None = None) -> Path:
    """Compile ``accel.cpp`` + ``tb.cpp`` of a rendered folder into a C-simulation binary with g++ and
    :data:`GXX_FLAGS` (through ccache when installed: :mod:`generator.exec.ccache`). Returns the binary's path.
    Raises HlsError if g++ is missing, fails, or prints any warning (our code must be warning-free; the ap_types
    headers are included with -isystem)."""
    src = Path(src_dir).resolve()
    exe = Path(exe).resolve() if exe else src / "csim"
    gxx = shutil.which("g++")
    if gxx is None:
        raise HlsError("g++ not found on PATH")
    # run in the rendered folder with relative names, so that the same kernel rendered into another folder is the
    # same compile for the compiler cache (generator/exec/ccache.py; without ccache: g++ directly)
    # (one object per source: ccache caches single-file compiles, not a compile-and-link)
    cache = ccache()
    flags = [*GXX_FLAGS, "-pthread", "-isystem", str(ap_types_dir()), "-I.", *(extra or [])]
    objs = [f"{exe.name}.{name}.o" for name in ("accel", "tb")]
    cmds = [[*([cache] if cache else []), gxx, *flags, "-c", f"{name}.cpp", "-o", obj]
            for name, obj in zip(("accel", "tb"), objs)] + [[gxx, *flags, *objs, "-o", f"{exe}.tmp"]]
    for cmd in cmds:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=src, env={**os.environ, **ccache_env()})
        if r.returncode != 0 or r.stderr.strip():
            raise HlsError(f"g++ {'failed' if r.returncode else 'warned'} (in {src}):\n{' '.join(cmd)}\n"
                           f"{r.stderr[-6000:]}")
    os.replace(f"{exe}.tmp", exe)                # (linked beside, then renamed: never a half-written binary)
    for obj in objs:
        (src / obj).unlink(missing_ok=True)
    return exe


def compile_kernel(board: Board, out_dir: str | Path, extra: list[str] | None = None) -> Path:
    """Render the kernel of ``board`` with an empty ROM (programs fetched from DDR) into ``out_dir`` and compile its
    C-simulation (:func:`compile_csim`, extra g++ flags ``extra``). Returns the binary's path. Raises HlsError,
    hls_resources.ResourceError as :func:`generator.backends.hls.kernel.render` and :func:`compile_csim` do."""
    hls.render(board, out_dir)
    return compile_csim(out_dir, extra=extra)


def place_program(ddr: np.ndarray, blob: bytes, align: int = PAGE) -> tuple[np.ndarray, int]:
    """Append an instruction blob to a DDR image at an ``align``-byte boundary. Returns (new image, address)."""
    addr = -(-ddr.size // align) * align
    out = np.zeros(addr + -(-len(blob) // align) * align, np.uint8)
    out[:ddr.size] = ddr
    out[addr:addr + len(blob)] = np.frombuffer(blob, np.uint8)
    return out, addr


def run_csim(exe: str | Path, ddr: np.ndarray, bases: dict, blob: bytes | None = None, workdir: str | Path = ".",
             timeout: float = 600, sizes: dict | None = None, frame=None) -> tuple[np.ndarray, dict]:
    """Run a C-simulation binary on a DDR image.

    Args:
        ddr: uint8 DDR image (not modified). bases: {"WEIGHTS", "ACT", "INPUT", "OUTPUT"} byte addresses
            (multiples of the AXI width). blob: encoded program, fetched from DDR (fetch_ddr=1); None runs the ROM.
        sizes: bytes of each base register's buffer (the ``*_size`` arguments; same keys as ``bases``); None: each
            extends to the end of the image (the golden simulator's default).
        frame: PRE's per-frame registers (:class:`host.pre.PreFrame`; its ``addr`` a byte offset into ``ddr``, as
            the base registers), passed as the binary's last arguments (:data:`generator.spec.isa.PRE_REGISTERS`);
            None: all 0 (a PRE instruction then stops with OUT_OF_RANGE, as in the golden simulator). Its
            ``size`` is cut at the image's end (the golden simulator refuses a frame beyond the image too).
    Returns: (DDR image after the run, same size as ``ddr``; {"status", "cycles", "hw_info", "config_id"}). A
        ``blob`` that is not whole instructions is refused by this loader (the ``n_insns`` argument counts
        instructions): status PARTIAL_INSN, nothing run, the image unchanged.
    Raises HlsError if the binary fails or its output cannot be parsed.
    """
    wd = Path(workdir)
    wd.mkdir(parents=True, exist_ok=True)
    if blob is not None and isa.partial_insn_status(len(blob)):
        return ddr.copy(), {"status": isa.partial_insn_status(len(blob)), "cycles": 0}
    img, insn_addr, n = ddr, 0, 0
    if blob is not None:
        img, insn_addr = place_program(ddr, blob)
        n = len(blob) // isa.INSN_BYTES
    fin, fout = wd / "ddr_in.bin", wd / "ddr_out.bin"
    atomic_write(fin, img.tobytes())
    args = [str(exe), str(fin), str(fout)] + [str(int(bases[k])) for k in isa.BASE_REGS] + \
           [str(insn_addr), str(n), "1" if blob is not None else "0"]
    if sizes is not None or frame is not None:
        args += [str(int(sizes[k])) if sizes is not None else "-" for k in isa.BASE_REGS]   # "-": to the image's end
    if frame is not None:
        regs = frame.registers()
        # the frame's buffer cut at the image's end: a frame beyond the image is refused (OUT_OF_RANGE, as the golden
        # simulator refuses it) rather than read outside the binary's memory
        regs["frame_size"] = min(regs["frame_size"], max(ddr.size - regs["frame"], 0))
        args += [str(int(regs[k])) for k in isa.PRE_REGISTERS]
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise HlsError(f"C-simulation failed ({r.returncode}): {' '.join(args)}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    info = {}
    for tok in r.stdout.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            try:
                info[k] = int(v, 0)
            except ValueError:
                pass
    if "status" not in info:
        raise HlsError(f"C-simulation printed no status:\n{r.stdout[-3000:]}")
    out = np.fromfile(fout, np.uint8)[:ddr.size].copy()
    return out, info


def build_and_check(board: Board, prog, ddr: np.ndarray, bases: dict, out_dir: str | Path,
                    overlay_dir: str | Path | None = None, rom: bool = True) -> dict:
    """Render the deployment kernel of ``prog`` (its program baked into the instruction ROM; ``rom`` False: an
    empty ROM, the program fetched from DDR as the PYNQ driver does) into ``out_dir``,
    compile the C-simulation, run it (in ROM mode, or fetching ``prog`` from DDR) on ``ddr`` and compare the whole DDR image with the golden
    simulator's (:class:`generator.exec.golden.GoldenSim`). The DDR image is also written as ``ddr_in.bin`` so that
    ``vitis_hls -f run_hls.tcl`` runs the same C-simulation. ``overlay_dir``: see
    :func:`generator.backends.hls.kernel.render`.

    Args: prog: :class:`generator.codegen.program.Program`; ddr / bases: from :func:`generator.exec.runtime.build_ddr`.
    Returns: {"status", "cycles", "golden_cycles", "bit_exact", "diff_bytes", "csim_seconds", "dir", "ddr"} with
        ``ddr`` the C-simulation's DDR image after the run (read the heads from it).
    Raises HlsError (render / compile / run failure), SimError (the golden simulator refuses the program).
    """
    out = Path(out_dir)
    hls.render(board, out, prog.blob if rom else None, csim_argv=hls.vitis_csim_argv(bases), overlay_dir=overlay_dir)
    with atomic_path(out / "ddr_in.bin") as tmp:
        ddr.tofile(tmp)
    gold = ddr.copy()
    gres = GoldenSim(prog.hw, gold, bases).run(prog.blob)
    exe = compile_csim(out)
    t0 = time.time()
    got, info = run_csim(exe, ddr, bases, None if rom else prog.blob, out / "csim_run", timeout=7200)
    secs = time.time() - t0
    diff = int(np.count_nonzero(got != gold))
    return dict(status=info["status"], cycles=info.get("cycles", 0), golden_cycles=gres.cycles,
                bit_exact=diff == 0 and info["status"] == 0, diff_bytes=diff, csim_seconds=secs, dir=out,
                ddr=got)

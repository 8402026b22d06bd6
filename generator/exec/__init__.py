"""Executors: one interface over everything that runs a compiled program or a graph, chosen by name (an exec mode).

Program executors run a program's instruction blob on a DDR image (uint8, from
:func:`generator.exec.runtime.build_ddr`) and return a :class:`ProgramRun` (DDR image after, status, cycles):

=========  ==================================================================  ==============================
name       what runs                                                           module
=========  ==================================================================  ==============================
golden     the golden ISA simulator (numpy, cycles from the timing model)      ``generator/exec/golden.py``
csim       the HLS kernel compiled with g++, program fetched from DDR          ``generator/exec/csim.py``  
rtl        the SystemVerilog RTL under Verilator (cocotb bench), measured      ``generator/exec/rtl.py``
=========  ==================================================================  ==============================

Graph executors run a graph on one input (:func:`run_graph`): ``float`` (the float graph in numpy,
``generator/ref/float_ref.py``) and ``ref`` (the quantized graph layer by layer in integers,
``generator/ref/layer_ref.py``). The independent integer reference (``generator/ref/int_ref.py``), which derives
every quantization parameter itself, is built from the float graph and its calibration ranges
(:class:`generator.ref.int_ref.IndependentRef`).

``csim`` and ``rtl`` build once per executor object (g++ / Verilator): keep the object of :func:`program_executor`
to run many programs; :func:`run_program` is the one-shot form.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROGRAM_EXECUTORS = ("golden", "csim", "rtl")
GRAPH_EXECUTORS = ("float", "ref")


class ExecutorError(ValueError):
    """An unknown executor name."""


@dataclass
class ProgramRun:
    """One program run. ``ddr``: uint8 DDR image after the run, same size as the image given; ``status``: the status
    word (0: done; bits of :data:`generator.spec.isa.STATUS_BITS`); ``cycles``: PL clock cycles (golden: timing
    model, csim: the kernel's count, rtl: measured; 0 when nothing ran); ``timeout``: the RTL hit its cycle limit;
    ``error``: the golden simulator's message for a nonzero status ("" otherwise); ``detail``: the executor's own
    result (golden: :class:`~generator.exec.golden.SimResult` or None after an error; csim: its info dict; rtl:
    the bench's result dict)."""
    ddr: np.ndarray
    status: int
    cycles: int
    timeout: bool = False
    error: str = ""
    detail: object = None


class GoldenExecutor:
    """The golden ISA simulator; needs no build."""
    name = "golden"

    def run(self, prog, ddr: np.ndarray, bases: dict, sizes: dict | None = None, blob: bytes | None = None,
            hw=None, progress: bool = False, check: bool = False, frame=None) -> ProgramRun:
        """Run ``blob`` (default ``prog.blob``) on a copy of ``ddr`` with ``hw`` (default ``prog.hw``) and PRE's
        frame registers ``frame`` (:class:`host.pre.PreFrame`, ``addr`` an offset in ``ddr``; None: all 0); a
        program the hardware flags (:class:`~generator.exec.golden.SimError`) gives its status and message, or,
        with ``check``, raises that SimError."""
        from generator.exec.golden import GoldenSim, SimError

        out = ddr.copy()
        try:
            res = GoldenSim(hw or prog.hw, out, bases, sizes, frame).run(prog.blob if blob is None else blob,
                                                                 progress=progress)
        except SimError as e:
            if check:
                raise
            return ProgramRun(out, int(e.status), 0, error=str(e))
        return ProgramRun(out, 0, int(res.cycles), detail=res)


class CsimExecutor:
    """The HLS kernel of ``board`` (empty ROM: programs fetched from DDR) compiled with g++ into ``work`` on first
    use. Raises :class:`generator.backends.hls.HlsError` when g++ fails or the binary does."""
    name = "csim"

    def __init__(self, board, work: Path):
        self.board, self.work, self.exe = board, Path(work), None

    def run(self, prog, ddr: np.ndarray, bases: dict, sizes: dict | None = None, blob: bytes | None = None,
            timeout: float = 600, frame=None) -> ProgramRun:
        """Run ``blob`` (default ``prog.blob``) on ``ddr`` (not modified); ``timeout`` in seconds; ``frame``: PRE's
        frame registers (:class:`host.pre.PreFrame`, ``addr`` an offset in ``ddr``; None: all 0), as
        :meth:`GoldenExecutor.run`."""
        from generator.exec.csim import compile_kernel, run_csim    # g++ and the rendered kernel, on first use

        if self.exe is None:
            self.exe = compile_kernel(self.board, self.work)
        got, info = run_csim(self.exe, ddr, bases, prog.blob if blob is None else blob, self.work / "run",
                                 timeout=timeout, sizes=sizes, frame=frame)
        return ProgramRun(got, int(info["status"]), int(info.get("cycles", 0)), detail=info)


class RtlExecutor:
    """The RTL of ``board`` under Verilator, built on first use as ``build_root``/``name`` (default
    build/rtl_sim/``name``; with ``rom``, that program baked into the instruction ROM; see
    :class:`generator.exec.rtl.RtlBuild`); raises RuntimeError without Verilator or when the bench fails."""
    name = "rtl"

    def __init__(self, board, name: str, build_root: Path | None = None, quiet: bool = True,
                 rom: bytes | None = None):
        self.board, self.build_name, self.build_root, self.quiet, self.rom = board, name, build_root, quiet, rom
        self.build = None

    def prepare(self) -> RtlExecutor:
        """Build the RTL now (else on the first run); minutes for a 32x32 array."""
        from generator.exec.rtl import BUILD, RtlBuild

        if self.build is None:
            self.build = RtlBuild(self.board, self.build_name, self.rom, self.build_root or BUILD, self.quiet)
        return self

    def run(self, prog, ddr: np.ndarray, bases: dict, sizes: dict | None = None, blob: bytes | None = None,
            case: str | Path = "case", frame=None, **opts) -> ProgramRun:
        """Run ``blob`` (default ``prog``) in the case folder ``case`` (relative: under the build's folder) with
        PRE's frame registers ``frame`` (:class:`host.pre.PreFrame`, ``addr`` an offset in ``ddr``; None: all 0);
        ``opts``: ``timeout_cycles``, ``rd_latency``, ``fetch_ddr``, ``progress_every`` of
        :meth:`~generator.exec.rtl.RtlBuild.run`."""
        self.prepare()
        res, got, _ = self.build.run(prog if blob is None else blob, ddr, bases, self.build.dir / case, sizes=sizes,
                                     frame=frame, **opts)
        return ProgramRun(got[:ddr.size], int(res["status"]), int(res.get("cycles", 0)), bool(res["timeout"]),
                          detail=res)


def program_executor(name: str, board=None, work: Path | None = None, tag: str = ""):
    """The program executor ``name`` (:data:`PROGRAM_EXECUTORS`) for ``board`` (a Board; csim / rtl only).
    ``work``: the csim build folder; ``tag``: the rtl build's name under ``build/rtl_sim/``.
    Raises ExecutorError for an unknown name."""
    from generator import build_dir

    if name == "golden":
        return GoldenExecutor()
    if name == "csim":
        return CsimExecutor(board, work or build_dir("csim", tag or board.name))
    if name == "rtl":
        return RtlExecutor(board, tag or board.name)
    raise ExecutorError(f"unknown program executor {name!r}; one of {', '.join(PROGRAM_EXECUTORS)}")


def run_program(executor: str, prog, ddr: np.ndarray, bases: dict, board=None, sizes: dict | None = None,
                **opts) -> ProgramRun:
    """Run ``prog`` (a :class:`~generator.codegen.program.Program`) on the DDR image ``ddr`` with base addresses
    ``bases`` on ``executor`` (built for ``board`` when csim / rtl); ``sizes``: bytes of each base register's
    buffer (None: to the end of the image); ``opts`` go to the executor's ``run``. Raises ExecutorError."""
    return program_executor(executor, board).run(prog, ddr, bases, sizes, **opts)


def run_graph(executor: str, g, x, **opts) -> dict:
    """Run graph ``g`` on ``x`` with a graph executor: ``float``: ``x`` {input name: float32 [1, C, H, W]} ->
    {output name: float32 array} (:func:`generator.ref.float_ref.run_float`); ``ref``: ``g`` quantized, ``x`` its
    integer input [C, H, W] -> {output name: int64 [1, C, H, W]} (:func:`generator.ref.layer_ref.run_quantized`;
    ``keep_regions=True`` adds every DDR region under "regions"). Raises ExecutorError for an unknown name."""
    if executor == "float":
        from generator.ref.float_ref import run_float
        return run_float(g, x, **opts)
    if executor == "ref":
        from generator.ref.layer_ref import run_quantized
        return run_quantized(g, x, **opts)
    raise ExecutorError(f"unknown graph executor {executor!r}; one of {', '.join(GRAPH_EXECUTORS)}")


def run_frame(engine, prog, ddr: np.ndarray, bases: dict, sizes: dict | None = None, frame=None,
              **opts) -> tuple[ProgramRun, ProgramRun | None]:
    """One frame on a program executor object ``engine`` (:func:`program_executor`): a program with PRE
    (:attr:`~generator.codegen.program.Program.prologue`) runs its prologue on ``ddr`` (PRE of ``frame``, the
    registers :class:`host.pre.PreFrame`, into the INPUT buffer), then the main program on the DDR image after it
    with the same registers (its bands rewrite the input with that frame: the next frame of a stream is the
    driver's); without PRE the main program alone. ``opts`` go to every ``run``. Returns (main run, prologue run or
    None); a prologue that fails is returned as the main run (its status and message)."""
    pro = None
    if getattr(prog, "prologue", None):
        pro = engine.run(prog, ddr, bases, sizes, blob=prog.prologue_blob, frame=frame, **opts)
        if pro.status or pro.timeout:
            return pro, pro
        ddr = pro.ddr
    kw = {"frame": frame} if frame is not None else {}
    return engine.run(prog, ddr, bases, sizes, **kw, **opts), pro


def run_golden(prog, g, x_q: np.ndarray, progress: bool = False, bgr: bool = False) -> tuple[dict, object, np.ndarray, dict]:
    """Run one frame of ``x_q`` (int [C, H, W]; for a program with PRE, :attr:`Program.pre_frame`, the camera frame:
    uint8 [H, W, 3], R, G, B or with ``bgr`` B, G, R, through the prologue and the main program, :func:`run_frame`)
    on the golden simulator (executor ``golden`` of :mod:`generator.exec`). Returns ({output name: int64 [C, H, W]},
    SimResult of the main program, DDR image after, bases). Raises :class:`~generator.exec.golden.SimError` when
    the hardware would flag the program."""
    from generator.exec.runtime import build_ddr, build_frame_ddr, read_tensor

    frame = None
    if getattr(prog, "pre_frame", None) is not None:
        ddr, bases, frame = build_frame_ddr(prog, x_q, bgr)
    else:
        ddr, bases = build_ddr(prog, x_q)
    run, _ = run_frame(GoldenExecutor(), prog, ddr, bases, frame=frame, progress=progress, check=True)
    outs = {o: read_tensor(prog, g, run.ddr, bases, o) for o in g.outputs}
    return outs, run.detail, run.ddr, bases

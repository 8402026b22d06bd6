"""A cycle estimate of the HLS kernel from its own loop structure (not a synthesis result, and not the latency model
of :mod:`generator.spec.timing`).

The kernel (``hls_templates/kernel/accel_kernel.h``) states, beside every pipelined loop, the initiation interval
and pipeline depth it is written for: ``for (...) {  // II=1 depth=4``. :func:`kernel_loops` renders the kernel for
a board, parses it on its synthesis path with libclang (as :mod:`generator.backends.hls.lint` does: ``-D__SYNTHESIS__`` and
the stub headers; HLS pragmas from the token stream, assigned to the innermost loop body holding them) and reads
each loop's label, its ``#pragma HLS PIPELINE II=`` and ``LOOP_TRIPCOUNT``, and the ``// II=.. depth=..`` comment
on the line of the loop's opening brace (or of its ``for``). It is an error (:class:`EstimateError`) when a
pipelined loop has no annotation, an annotation sits on no loop or on a loop that is not pipelined, the
annotation's II differs from the pragma's, or the estimator has no formula for an annotated loop
(:data:`FORMULA_LOOPS`); and :class:`KernelEstimate` refuses a kernel in which a loop it needs is missing. The
estimator takes II and depth only from the parsed annotations, so editing an annotation changes the estimate.

Per instruction (:meth:`KernelEstimate.insn_cycles`; trip counts from the instruction's fields exactly as the
kernel's C++ derives them; ``II_X`` / ``D_X`` the annotated II / depth of loop X; ``beat_ii = max(II, ceil(axi_bytes
/ ddr_bytes_per_cycle))``, the DDR bandwidth bounding a beat per cycle (with two HP ports the block design puts
LOAD's and STORE's m_axi on both through the RTL's splitter, ``hls_templates/bd/accel_hp.v``, which adds
:func:`generator.spec.timing.split_tail` to each transfer, as in the latency model); ``Lr`` / ``Lw`` the board's
``ddr_read_latency_cycles`` / ``ddr_write_latency_cycles``):

* every instruction: ``INVOKE`` = 2 cycles, the free-running module's invocation (command-stream read with the
  token pops; error publish and token pushes). CONFIG, SYNC, NOP, END cost ``INVOKE`` only.
* LOAD (``exec_load``): ``INVOKE + SETUP + Lr + D + max(beats x beat_ii, ceil(beats x Lr / outstanding))``
  (``SETUP`` = 4: field decode, the range checks' products, the segment kind and the loop bound) with D =
  ``D_LOAD_BEATS`` (IBUF / WBUF) or ``D_PBUF_BEATS`` (PBUF): every beat of every segment is an iteration of that
  one flattened pipelined loop, which issues a read request per beat; with ``outstanding`` =
  ``num_read_outstanding`` of the load port (:func:`m_axi_outstanding`, from ``accel.cpp.j2``) requests in
  flight the read latency is paid once per LOAD, and the beats are throttled to ``outstanding / Lr`` per cycle
  if that is below one. Segments as the kernel cuts them: the whole transfer when pixels and rows are
  contiguous in DDR and in the buffer (``pix_stride == run bytes``, buffer step == elems, ``row_stride == cols x
  pix_stride``), else one per row, else one per pixel run; ``beats`` = the sum of each segment's beats at its
  real address (page-aligned bases: ``ddr_offset`` mod the beat).
* STORE (``exec_store``): ``INVOKE + SETUP + Lw + D_STORE_BEATS + max(beats x beat_ii, ceil(beats x Lw /
  outstanding))``, segments and beats as LOAD's (contiguous only if contiguous in OBUF too): the flattened
  ``STORE_BEATS`` loop writes every beat of every segment back to back (a partial first / last beat of a
  segment as a strobed write in the same iteration), ``num_write_outstanding`` writes in flight, the write
  responses awaited once after the last beat.
* COMPUTE (``exec_compute``): ``INVOKE + SETUP + oh x ceil(ow / P) x og x ig x kh x kw x II_PE_TILE +
  D_PE_TILE`` (P = 2 output pixels in int8, 1 in int16); one tap accumulating into ACC (ig x kh x kw = 1,
  ``acc_init`` = 0, ``pe_rmw``): ``INVOKE + SETUP + oh x ow x og x II_PE_RMW + D_PE_RMW``; bypass: ``INVOKE + SETUP + oh x ow x og x II_BYPASS +
  D_BYPASS`` (emul: twice the iterations, A's lanes then B's).
* POST (``exec_post``): ``INVOKE + SETUP + R x C x og x pk^2 x II_POST_TILE + D_POST_TILE`` with R = (out_rows //
  up) x up, C likewise (without pooling the pre-upsampling size clipped to the tile), pk = max(pool_k, 1).
* fetch (``fetch_run``): ``VALIDATE`` over the program up to END, then ``DISPATCH``: instruction k reaches its
  module's command queue at ``validate + D_DISPATCH + k x ii_f`` cycles; fetched from DDR (``fetch_ddr = 1``, as
  the driver runs) each instruction is ``INSN_BITS / AXI_BITS`` beats of ``FETCH_BEATS`` unrolled in the
  pipelined loop on one m_axi port, so ``ii_f = max(II, beats x II_FETCH_BEATS)`` and each loop adds ``Lr +
  D_FETCH_BEATS``, and with two HP ports (the fetch alone on a third, half the m_axi width) at least
  ``INSN_BYTES / (ddr_bytes_per_cycle / 2)``; from the ROM ``ii_f = II``.

Over a program (:meth:`KernelEstimate.program_cycles`): the golden simulator's module / token scheduler
(:meth:`generator.exec.golden.GoldenSim.run_insns` with ``functional=False``) with this cost per instruction and the
dispatch times above and the command queues of depth :data:`generator.spec.arch.CMD_QUEUE_DEPTH` (the in-order
fetch stops while the queue of the next instruction's module is full), so the estimate keeps the token
dependencies and the overlap of the load, compute and store modules that the queues allow, and the STORE beside
the POST before it (the store module hands the POST to the post module: ``overlap=True``, the latency model's
:func:`generator.spec.timing.post_store_end` with these costs). Not modelled: the DDR contention between the load
and store ports.
"""
from __future__ import annotations

import math
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci
import numpy as np

from host.fileio import atomic_write
from generator.backends.hls.kernel import KERNEL_DIR, STATIC_FILES, render
from generator.backends.hls.lint import clang_ast
from generator.backends.hls.lint.run import clang_args
from generator.backends.hls.lint.source import SourceFile
from generator.backends.hls.lint.stubs import write_stubs
from generator.spec import isa
from generator.spec.arch import CMD_QUEUE_DEPTH
from generator.spec.board import Board
from generator.spec.timing import HwConfig, split_tail

K = ci.CursorKind
ANNOTATION = re.compile(r"\bII\s*=\s*(\d+)\s+depth\s*=\s*(\d+)")
KERNEL_FILE = "accel_kernel.h"

#: cycles of a module invocation (command-stream read with the token pops; error publish and token pushes)
INVOKE = 2
#: cycles of an exec_* function before its loops (field decode, range checks, segment kind / trip count)
SETUP = 4

#: every pipelined loop the estimator has a formula for (the label in the kernel -> where it is used)
FORMULA_LOOPS = {
    "LOAD_BEATS": "LOAD into IBUF / WBUF, every beat of every segment",
    "PBUF_BEATS": "LOAD into PBUF, every beat of every segment",
    "PE_TILE": "COMPUTE",
    "PE_RMW": "COMPUTE",
    "BYPASS": "bypass COMPUTE",
    "POST_TILE": "POST",
    "STORE_BEATS": "STORE, every beat of every segment",
    "VALIDATE": "fetch: the whole-program check before dispatch",
    "DISPATCH": "fetch: one instruction per iteration",
    "FETCH_BEATS": "fetch from DDR: the beats of one instruction (AXI_BITS < INSN_BITS only)",
}
#: loops without which no estimate can be made (FETCH_BEATS exists only when AXI_BITS < INSN_BITS)
REQUIRED_LOOPS = set(FORMULA_LOOPS) - {"FETCH_BEATS"}


class EstimateError(RuntimeError):
    """The kernel's loop annotations and the estimator do not match (see the module docstring)."""


@dataclass(frozen=True)
class Loop:
    """A loop of the kernel: label, enclosing function, line, pipelined (``#pragma HLS PIPELINE``, its II),
    the annotation's II and depth (None if not annotated), LOOP_TRIPCOUNT (min, max) or None."""
    label: str
    function: str
    line: int
    pipelined: bool
    pragma_ii: int | None
    ii: int | None
    depth: int | None
    tripcount: tuple | None


def _parse(board: Board, kernel_dir: Path | None = None):
    """libclang translation unit of the kernel rendered for ``board`` (synthesis path), and the kernel file path."""
    tmp = tempfile.TemporaryDirectory(prefix="hls_est_")
    d = Path(tmp.name)
    render(board, d)
    if kernel_dir is not None:      # a kernel under test: its static headers replace the shipped ones
        for f in STATIC_FILES:
            if (Path(kernel_dir) / f).exists():
                atomic_write(d / f, (Path(kernel_dir) / f).read_text())
    stub = write_stubs(d / "stubs")
    args = clang_args([str(d)], [], stub)
    tu = ci.Index.create().parse(str(d / "accel.cpp"), args=args,
                                 options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errs = [x for x in tu.diagnostics if x.severity >= ci.Diagnostic.Error]
    if errs:
        raise EstimateError(f"the kernel does not parse: {errs[0].location.file}:{errs[0].location.line}: "
                            f"{errs[0].spelling}")
    return tmp, tu, d / KERNEL_FILE


def kernel_loops(board: Board, kernel_dir: Path | None = None) -> list[Loop]:
    """Every loop of ``accel_kernel.h`` (rendered for ``board``, parsed on the synthesis path) with its pragmas and
    its ``// II=.. depth=..`` annotation. Raises EstimateError: a pipelined loop without an annotation, an
    annotation on no loop or on a loop that is not pipelined, II differing from the PIPELINE pragma's. Annotations in
    code the preprocessor skips (``#if`` branches not compiled for this board) are not read, nor are their loops."""
    tmp, tu, path = _parse(board, kernel_dir)
    try:
        f = SourceFile(tu, path)
        skipped = clang_ast.skipped_ranges(tu, path)
        found_notes = [t for t in f.tokens if t.kind == ci.TokenKind.COMMENT and ANNOTATION.search(t.spelling)
                       and not any(a <= t.location.offset < b for a, b in skipped)]
        notes = {t.location.line: tuple(map(int, ANNOTATION.search(t.spelling).groups())) for t in found_notes}
        loops, used_notes = [], set()
        for fn in tu.cursor.get_children():
            if fn.kind != K.FUNCTION_DECL or not fn.is_definition() or fn.location.file is None \
                    or Path(fn.location.file.name).name != KERNEL_FILE:
                continue
            body = clang_ast.body(fn)
            found = [(c, st) for c, st in clang_ast.walk(body) if c.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)]
            lo, hi = body.extent.start.offset, body.extent.end.offset
            scopes: dict = {}
            for p in f.pragmas:
                if not lo <= p.offset < hi:
                    continue
                best, start = None, -1
                for lp, _ in found:
                    b = clang_ast.loop_body(lp)
                    if b is not None and b.extent.start.offset <= p.offset < b.extent.end.offset \
                            and b.extent.start.offset > start:
                        best, start = lp, b.extent.start.offset
                if best is not None:
                    scopes.setdefault(best.hash, []).append(p)
            for lp, st in found:
                label = st[-1].spelling if st and st[-1].kind == K.LABEL_STMT else f"{fn.spelling}:{lp.location.line}"
                prags = scopes.get(lp.hash, [])
                pipe = [p for p in prags if p.directive == "PIPELINE" and not any(a.lower() == "off" for a in p.args)]
                pii = None
                if pipe:
                    m = re.search(r"II\s*=\s*(\d+)", " ".join(pipe[0].args).replace(" = ", "="))
                    pii = int(m.group(1)) if m else 1
                tc = None
                for p in prags:
                    if p.directive == "LOOP_TRIPCOUNT":
                        kv = dict(re.findall(r"(min|max)\s*=\s*(\d+)", " ".join(p.args).replace(" = ", "=")))
                        tc = (int(kv.get("min", 0)), int(kv.get("max", 0)))
                b = clang_ast.loop_body(lp)
                note = None
                for line in dict.fromkeys((b.extent.start.line if b is not None else lp.location.line,
                                           lp.location.line)):
                    if line in notes and note is None:
                        note = notes[line]
                        used_notes.add(line)
                loops.append(Loop(label, fn.spelling, lp.location.line, bool(pipe), pii,
                                  note[0] if note else None, note[1] if note else None, tc))
        errors = []
        for line in sorted(set(notes) - used_notes):
            errors.append(f"{KERNEL_FILE}:{line}: annotation 'II={notes[line][0]} depth={notes[line][1]}' is beside "
                          f"no loop (it must sit on the line of the loop's opening brace or its for)")
        for lp in loops:
            where = f"{KERNEL_FILE}:{lp.line} loop {lp.label} in {lp.function}"
            if lp.pipelined and lp.ii is None:
                errors.append(f"{where}: pipelined loop without a '// II=.. depth=..' annotation")
            elif lp.ii is not None and not lp.pipelined:
                errors.append(f"{where}: annotated but not pipelined (no #pragma HLS PIPELINE)")
            elif lp.ii is not None and lp.ii != lp.pragma_ii:
                errors.append(f"{where}: annotation II={lp.ii} differs from the pragma's II={lp.pragma_ii}")
        if errors:
            raise EstimateError("; ".join(errors))
        return loops
    finally:
        tmp.cleanup()


def m_axi_outstanding() -> tuple[int, int]:
    """(num_read_outstanding of the load module's m_axi port, num_write_outstanding of the store module's), as
    ``hls_templates/accel.cpp.j2`` states them in their INTERFACE pragmas."""
    src = (Path(KERNEL_DIR).parent / "accel.cpp.j2").read_text()
    rd = re.search(r"port=ddr bundle=load_gmem[^\n]*num_read_outstanding=(\d+)", src)
    wr = re.search(r"port=ddr bundle=store_gmem[^\n]*num_write_outstanding=(\d+)", src)
    if rd is None or wr is None:
        raise EstimateError("accel.cpp.j2: no num_read_outstanding on the load port / num_write_outstanding on "
                            "the store port")
    return int(rd.group(1)), int(wr.group(1))


def _cdiv(a, b):
    return -(-a // b)


class KernelEstimate:
    """Cycle estimate of the kernel rendered for ``board`` in precision ``bits`` (8 or 16) from its loop
    structure (module docstring). ``loops``: :func:`kernel_loops` (parsed if None). ``fetch_ddr``: the program is
    fetched from DDR (as the driver runs it) rather than the ROM. Raises EstimateError when an annotated loop has
    no formula here or a loop the formulas need is missing. ``used`` collects the labels of the loops the
    estimates so far have used."""

    def __init__(self, board: Board, bits: int, loops: list[Loop] | None = None, fetch_ddr: bool = True):
        self.board = board
        self.hw = HwConfig.from_board(board, bits)
        self.loops = loops if loops is not None else kernel_loops(board)
        self.fetch_ddr = fetch_ddr
        self.cmd_depth = CMD_QUEUE_DEPTH
        ann = {lp.label: lp for lp in self.loops if lp.ii is not None}
        extra = sorted(set(ann) - set(FORMULA_LOOPS))
        if extra:
            raise EstimateError(f"annotated loop(s) {extra} of {KERNEL_FILE} have no formula in the estimator "
                                f"(generator/estimate/hls_cycles.py FORMULA_LOOPS)")
        missing = sorted(REQUIRED_LOOPS - set(ann))
        if missing:
            raise EstimateError(f"{KERNEL_FILE} has no annotated loop(s) {missing} the estimator needs")
        self.ann = ann
        self.used: set = set()
        # LOAD's and STORE's m_axi on the DDR path (two HP ports: both through the splitter, as the RTL's units)
        self.beat_ii_min = max(1, math.ceil(self.hw.axi_bytes / self.hw.bytes_per_cycle))
        self.rd_outstanding, self.wr_outstanding = m_axi_outstanding()

    # ---- loop primitives
    def _loop(self, label: str, trip: int, ii_min: int = 1) -> int:
        """trip x II + depth of the annotated loop ``label`` (0 cycles when it runs no iteration)."""
        lp = self.ann[label]
        self.used.add(label)
        if trip <= 0:
            return 0
        return trip * max(lp.ii, ii_min) + lp.depth

    # ---- per instruction
    def _segments(self, f, store: bool):
        """(seg_rows, list of (address, bytes) of the segments) as exec_load / exec_store cut the transfer."""
        hw = self.hw
        rows, cols, elems = f["rows"], f["cols"], f["elems"]
        i16 = hw.bits == 16
        if store:
            run_bytes = 2 * elems if i16 else elems
            step = f["src_pitch"] * hw.tm
        else:
            is_p = f["buf"] in (isa.BUFFERS["PBUF"], isa.BUFFERS["TBUF"])
            run_bytes = elems * isa.PARAM_RECORD_BYTES if is_p else (2 * elems if i16 else elems)
            lanes = hw.wbuf_pitch if f["buf"] == isa.BUFFERS["WBUF"] else hw.tn
            step = elems if is_p else f["dst_pitch"] * lanes
        rs, ps = f["row_stride"], f["pix_stride"]
        whole_px = ps == run_bytes and step == elems
        whole_rows = whole_px and rs == cols * ps
        seg_rows = 1 if whole_rows else rows
        seg_cols = 1 if whole_px else cols
        seg_bytes = run_bytes * (cols if whole_px else 1) * (rows if whole_rows else 1)
        a = f["ddr_offset"] + (np.arange(seg_rows, dtype=np.int64)[:, None] * rs
                               + np.arange(seg_cols, dtype=np.int64)[None, :] * ps).ravel()
        return seg_rows, a, seg_bytes

    def _nbeats(self, addr, nbytes):
        lg = self.hw.axi_bytes
        return (addr + nbytes - 1) // lg - addr // lg + 1

    def _flat_beats(self, label: str, beats: int, latency: int, outstanding: int, tail: int = 0) -> int:
        """One flattened pipelined loop over ``beats`` beats issuing a request per beat with ``outstanding`` in
        flight: the latency once, the beats at ``beat_ii``, or ``beats x latency / outstanding`` if larger; plus
        ``tail``, the two-HP-port splitter's last-burst cycles."""
        lp = self.ann[label]
        self.used.add(label)
        ii = max(lp.ii, self.beat_ii_min)
        return latency + lp.depth + max(beats * ii, math.ceil(beats * latency / outstanding)) + tail

    def _tail(self, a, nbytes, write: bool) -> int:
        """The splitter's cycles after the last segment (two HP ports; 0 with one)."""
        if self.hw.hp_ports != 2:
            return 0
        last = int(np.broadcast_to(nbytes, np.shape(a))[-1])
        return split_tail(int(np.ravel(a)[-1]), last, self.hw.axi_bytes, write)

    def load_cycles(self, f) -> int:
        """Cycles of one LOAD with fields ``f`` as the kernel's LOAD loops run it (stated II and depth)."""
        hw = self.hw
        if f["rows"] * f["cols"] * f["elems"] == 0:
            return INVOKE + SETUP
        _, a, nbytes = self._segments(f, store=False)
        label = "PBUF_BEATS" if f["buf"] in (isa.BUFFERS["PBUF"], isa.BUFFERS["TBUF"]) else "LOAD_BEATS"
        nb = self._nbeats(a, nbytes)
        return INVOKE + SETUP + self._flat_beats(label, int(nb.sum()), hw.rd_latency, self.rd_outstanding,
                                                 self._tail(a, nbytes, write=False))

    def store_cycles(self, f) -> int:
        """Cycles of one STORE with fields ``f`` as the kernel's STORE loops run it (stated II and depth)."""
        hw = self.hw
        if f["rows"] * f["cols"] * f["elems"] == 0:
            return INVOKE + SETUP
        _, a, nbytes = self._segments(f, store=True)
        nb = self._nbeats(a, nbytes)
        return INVOKE + SETUP + self._flat_beats("STORE_BEATS", int(nb.sum()), hw.wr_latency, self.wr_outstanding,
                                                 self._tail(a, nbytes, write=True))

    def compute_cycles(self, f) -> int:
        """Cycles of one COMPUTE with fields ``f`` as the kernel's COMPUTE loop runs it (stated II and depth)."""
        if f["oh"] * f["ow"] * f["og"] == 0:
            return INVOKE + SETUP
        if f["bypass"]:
            return INVOKE + SETUP + self._loop("BYPASS", f["oh"] * f["ow"] * f["og"] * (2 if f["emul"] else 1))
        P = self.hw.pix_lanes
        if not f["acc_init"] and f["ig"] * f["kh"] * f["kw"] == 1:   # pe_rmw: one output pixel per iteration
            return INVOKE + SETUP + self._loop("PE_RMW", f["oh"] * f["ow"] * f["og"])
        n = f["oh"] * _cdiv(f["ow"], P) * f["og"] * f["ig"] * f["kh"] * f["kw"]
        return INVOKE + SETUP + self._loop("PE_TILE", n)

    def post_cycles(self, f) -> int:
        """Cycles of one POST with fields ``f`` as the kernel's POST loop runs it (stated II and depth)."""
        oh, ow, og = f["oh"], f["ow"], f["og"]
        if oh * ow * og == 0:
            return INVOKE + SETUP
        up = max(f["up"], 1)
        pk, ps = max(f["pool_k"], 1), max(f["pool_s"], 1)
        prow, pcol = f["out_rows"] // up, f["out_cols"] // up
        if not (pk > 1 or ps > 1):
            prow, pcol = min(prow, oh), min(pcol, ow)
        n = prow * up * pcol * up * og * pk * pk
        return INVOKE + SETUP + self._loop("POST_TILE", n)

    def insn_cycles(self, hw: HwConfig | None, insn) -> int:
        """Cycles ``insn`` occupies its module (signature of :func:`generator.spec.timing.insn_cycles`, so it is a
        ``cost`` for :meth:`generator.exec.golden.GoldenSim.run_insns`; ``hw`` is ignored: the estimate's own board)."""
        op, f = insn.op, insn.f
        if op == "LOAD":
            return self.load_cycles(f)
        if op == "STORE":
            return self.store_cycles(f)
        if op == "COMPUTE":
            return self.compute_cycles(f)
        if op == "POST":
            return self.post_cycles(f)
        return INVOKE

    # ---- fetch
    def dispatch_times(self, insns) -> np.ndarray:
        """Cycle at which fetch has put instruction k into its module's command queue (module docstring)."""
        n = len(insns)
        for k, ins in enumerate(insns):
            if ins.op == "END":
                n = k + 1
                break
        ii_v, ii_d = self.ann["VALIDATE"].ii, self.ann["DISPATCH"].ii
        extra = 0
        if self.fetch_ddr:
            beats = isa.INSN_BYTES // self.hw.axi_bytes
            if beats > 1:
                fb = self.ann.get("FETCH_BEATS")
                if fb is None:
                    raise EstimateError("AXI narrower than an instruction but no annotated FETCH_BEATS loop")
                self.used.add("FETCH_BEATS")
                ii_v, ii_d = max(ii_v, beats * fb.ii), max(ii_d, beats * fb.ii)
                extra = fb.depth
            extra += self.hw.rd_latency
            if self.hw.hp_ports == 2:   # the fetch's m_axi is narrowed onto one HP port of half the width
                port_ii = math.ceil(isa.INSN_BYTES / (self.hw.bytes_per_cycle / 2))
                ii_v, ii_d = max(ii_v, port_ii), max(ii_d, port_ii)
        validate = self._loop("VALIDATE", n, ii_v) + extra
        self.used.add("DISPATCH")
        t0 = validate + extra + self.ann["DISPATCH"].depth
        return t0 + np.arange(len(insns), dtype=np.int64) * ii_d

    # ---- whole program
    def program_cycles(self, insns):
        """Run the golden simulator's scheduler (timing only) with this cost and the fetch's dispatch times;
        returns its :class:`generator.exec.golden.SimResult`."""
        from generator.exec.golden import GoldenSim
        sim = GoldenSim(self.hw, np.zeros(16, np.uint8), {k: 0 for k in isa.BASE_REG_NAMES.values()})
        return sim.run_insns(list(insns), functional=False, cost=self.insn_cycles,
                             issue=self.dispatch_times(insns), cmd_depth=self.cmd_depth, overlap=True)


def insn_kind(insn) -> str:
    """The instruction kind of the per-kind breakdowns: LOAD-IBUF / LOAD-WBUF / LOAD-PBUF, COMPUTE,
    COMPUTE-bypass, POST, STORE, or the opcode."""
    if insn.op == "LOAD":
        return "LOAD-" + isa.BUFFER_NAMES[insn.f["buf"]]
    if insn.op == "COMPUTE" and insn.f["bypass"]:
        return "COMPUTE-bypass"
    return insn.op


def compare(board: Board, bits: int, insns, loops: list[Loop] | None = None, fetch_ddr: bool = True) -> dict:
    """hls-cycles (this estimate over the program, with the queues' overlap) against model-cycles (the golden
    simulator's timing with :func:`generator.spec.timing.insn_cycles`) of the same instructions, and the per-kind sums
    of both per-instruction costs: ``{"hls": N, "model": M, "ratio": N / M, "kinds": {kind: {"count", "hls",
    "model"}}, "busy": {"hls": {module: cycles}, "model": ...}}``."""
    from generator.spec.timing import insn_cycles
    from generator.exec.golden import GoldenSim
    est = KernelEstimate(board, bits, loops, fetch_ddr)
    insns = list(insns)
    r_h = est.program_cycles(insns)
    r_m = GoldenSim(est.hw, np.zeros(16, np.uint8), {k: 0 for k in isa.BASE_REG_NAMES.values()}).run_insns(
        insns, functional=False)
    kinds: dict = {}
    for ins in insns:
        d = kinds.setdefault(insn_kind(ins), Counter())
        d["count"] += 1
        d["hls"] += est.insn_cycles(None, ins)
        d["model"] += insn_cycles(est.hw, ins)
    return {"hls": r_h.cycles, "model": r_m.cycles, "ratio": r_h.cycles / r_m.cycles,
            "kinds": {k: dict(v) for k, v in kinds.items()}, "busy": {"hls": r_h.busy, "model": r_m.busy},
            "used": sorted(est.used)}

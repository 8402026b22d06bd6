"""A cycle estimate of the HLS kernel from its own loop structure (not a synthesis result, and not the latency model
of :mod:`generator.spec.timing`).

:func:`kernel_loops` renders the kernel for a board and runs the port analysis of the rule checker on it
(:func:`generator.backends.hls.lint.run.analyse_folder`: libclang on the synthesis path, ``-D__SYNTHESIS__`` and the
stub headers): every pipelined loop reachable from a top function with its requested II, its *analysed* II (the
memory ports, m_axi bundles and streams its iteration uses after ARRAY_PARTITION / ARRAY_RESHAPE, with its callees
inlined and inner loops unrolled) and its depth (the analysis's rule: operations on the iteration's path). The
estimate takes II and depth from those records only; nothing in the kernel's comments is read. It is an error
(:class:`EstimateError`) when the kernel does not parse or a loop the formulas need (:data:`REQUIRED_LOOPS`) is
missing.

Per instruction (:meth:`KernelEstimate.insn_cycles`; trip counts from the instruction's fields exactly as the
kernel's C++ derives them; ``II_X`` / ``D_X`` the annotated II / depth of loop X; ``beat_ii = max(II, ceil(axi_bytes
/ ddr_bytes_per_cycle))``, the DDR bandwidth bounding a beat per cycle (with two HP ports the block design puts
LOAD's and STORE's m_axi on both through the RTL's splitter, ``hls_templates/bd/accel_hp.v``, which adds
:func:`generator.spec.hp_timing.split_tail` to each transfer, as in the latency model); ``Lr`` / ``Lw`` the board's
``ddr_read_latency_cycles`` / ``ddr_write_latency_cycles``; ``II_X`` / ``D_X`` the analysed II / depth of loop
X):

* every instruction: ``INVOKE`` = 2 cycles, the free-running module's invocation (command-stream read with the
  token pops; error publish and token pushes). CONFIG, SYNC, NOP, END cost ``INVOKE`` only.
* LOAD (``exec_load``): ``INVOKE + SETUP + max(Lr, P) + D + max(iters x beat_ii, ceil(segments x Lr /
  outstanding))`` (``SETUP`` = 4: field decode, the range checks' products, the segment kind and the loop bound)
  with D = ``D_LOAD_BEATS`` (IBUF / WBUF) or ``D_PBUF_BEATS`` (PBUF): every beat of every segment is an iteration
  of that one flattened pipelined loop (IBUF / WBUF: ``ceil(beat elements / Tn)`` iterations per beat, one unless a
  beat holds more elements than Tn), reading the bursts a request walk issues one per segment ahead of it; with
  ``outstanding`` = the kernel's ``LOAD_AHEAD`` bursts in flight (:func:`m_axi_outstanding`) the read latency is
  paid once per LOAD (or the prologue ``P`` = ``REQ_PRIME`` over the first ``outstanding`` segments, if longer),
  and short segments are throttled to ``outstanding`` per ``Lr`` cycles. Segments as the kernel cuts them: the whole transfer when pixels and rows are
  contiguous in DDR and in the buffer (``pix_stride == run bytes``, buffer step == elems, ``row_stride == cols x
  pix_stride``), else one per row, else one per pixel run; ``beats`` = the sum of each segment's beats at its
  real address (page-aligned bases: ``ddr_offset`` mod the beat).
* STORE (``exec_store``): ``INVOKE + SETUP + Lw + D_STORE_BEATS + max(beats x beat_ii, ceil(bursts x Lw /
  outstanding))``, segments and beats as LOAD's (contiguous only if contiguous in OBUF too): the flattened
  ``STORE_BEATS`` loop writes every beat of every segment back to back (a partial first / last beat of a
  segment with byte strobes), one write burst per segment and 4 KB page (``bursts``), the kernel's
  ``STORE_WR_OUTSTANDING`` bursts without their response (``outstanding``), the last ones awaited after the loop.
* COMPUTE (``exec_compute``): ``INVOKE + SETUP + oh x ceil(ow / P) x og x ig x kh x kw x II_PE_TILE +
  D_PE_TILE`` (P = 2 output pixels in int8, 1 in int16); one tap accumulating into ACC (ig x kh x kw = 1,
  ``acc_init`` = 0, ``pe_rmw``): ``INVOKE + SETUP + oh x ow x og x II_PE_RMW + D_PE_RMW``; bypass: ``INVOKE + SETUP + oh x ow x og x II_BYPASS +
  D_BYPASS`` (emul: twice the iterations, A's lanes then B's).
* POST (``exec_post``): ``INVOKE + SETUP + R x C x og x pk^2 x II_POST_TILE + D_POST_TILE`` with R = (out_rows //
  up) x up, C likewise (without pooling the pre-upsampling size clipped to the tile), pk = max(pool_k, 1).
* PRE (``exec_pre``, the unit ``accel_pre``): ``INVOKE + SETUP + rows x (PRE_ROW + D_PRE_PIXELS) + steps x
  II_PRE_PIXELS + runs x (PRE_ROW + Lr + D_PRE_FETCH) + beats x II_PRE_FETCH + Lw`` (both II at least beat_ii;
  ``PRE_ROW`` = 4; steps, runs, beats from :mod:`generator.estimate.hls_pre_cycles`; the frame registers from
  :attr:`KernelEstimate.frame` / :meth:`KernelEstimate.program_cycles`). A PRE the kernel refuses: ``INVOKE +
  SETUP``, as one of 0 rows. The RTL's PRE is the same microarchitecture (the same fetch runs and beats,
  :func:`generator.spec.timing.pre_fetch_runs`, a pixel loop per output row): this agrees with the latency model's
  :func:`generator.spec.timing.pre_cycles` within 1% on camera frames (tests/estimate/test_hls_estimate.py).
* fetch (``fetch_run``): ``VALIDATE`` over the whole program, then ``DISPATCH`` up to END: instruction k reaches
  its module's command queue at ``validate + D_DISPATCH + k x ii_f`` cycles; fetched from DDR (``fetch_ddr = 1``, as
  the driver runs) each pass is one burst over the program's beats (``Lr`` once each), ``ii_f`` the loop's analysed
  II (which counts an instruction's ``INSN_BITS / AXI_BITS`` beats on the m_axi bundle: 2 on the 128-bit boards,
  the II the loops request there), and with two HP ports (the fetch alone on a third, half the m_axi width) at
  least ``INSN_BYTES / (ddr_bytes_per_cycle / 2)``; from the ROM ``ii_f`` = the analysed II without the m_axi
  bundle's bound.

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
from pathlib import Path

import numpy as np

from host.fileio import atomic_write
from generator.backends.hls.kernel import KERNEL_DIR, KERNEL_HEADERS, STATIC_FILES, render
from generator.backends.hls.lint.analysis import LoopRecord
from generator.backends.hls.lint.run import LintError, analyse_folder
from generator.spec import isa
from generator.spec.arch import AXI_BOUNDARY_BYTES, CMD_QUEUE_DEPTH
from generator.spec.board import Board
from generator.spec.hw import HwConfig
from generator.spec.hp_timing import max_burst_beats, pre_split_cycles, split_tail
from generator.spec.timing import pre_split_tail

KERNEL_FILE = "accel_kernel.h"
#: STORE's bursts end at 4 KB pages (AXI4: a burst never crosses one; the kernel's store_beats)
STORE_PAGE_BYTES = AXI_BOUNDARY_BYTES

#: cycles of a module invocation (command-stream read with the token pops; error publish and token pushes)
INVOKE = 2
#: cycles of an exec_* function before its loops (field decode, range checks, segment kind / trip count)
SETUP = 4
#: PRE: cycles of an output row's work outside PRE_PIXELS (positions, held-row compares, the row's beats) and of a
#: PRE_FETCH run's requests (an assumption, as SETUP)
PRE_ROW = 4

#: every pipelined loop the estimator has a formula for (the label in the kernel -> where it is used)
FORMULA_LOOPS = {
    "LOAD_BEATS": "LOAD into IBUF / WBUF, every beat of every segment",
    "PBUF_BEATS": "LOAD into PBUF, every beat of every segment",
    "REQ_PRIME": "LOAD: the first bursts requested before the first beat is read",
    "PE_TILE": "COMPUTE",
    "PE_RMW": "COMPUTE",
    "BYPASS": "bypass COMPUTE",
    "POST_TILE": "POST",
    "STORE_BEATS": "STORE, every beat of every segment",
    "VALIDATE": "fetch: the whole-program check before dispatch",
    "DISPATCH": "fetch: one instruction per iteration",
    "PRE_PIXELS": "PRE: one output row's beats and pixels",
    "PRE_FETCH": "PRE: the beats of the source rows an output row reads",
}
#: loops without which no estimate can be made
REQUIRED_LOOPS = set(FORMULA_LOOPS)


class EstimateError(RuntimeError):
    """The kernel does not parse, or a loop the estimator's formulas need is missing (see the module docstring)."""


#: a pipelined loop of the kernel as the port analysis reports it (label, function, line, requested II, analysed
#: II ``ii``, the memory limiting it, ``depth``)
Loop = LoopRecord


def kernel_loops(board: Board, kernel_dir: Path | None = None) -> list[LoopRecord]:
    """The pipelined loops of the kernel (``accel_kernel*.h``) rendered for ``board``, as the port analysis of the rendered
    folder reports them (module docstring); ``kernel_dir``: a kernel under test whose static headers replace the
    shipped ones. Raises EstimateError when the kernel does not parse."""
    with tempfile.TemporaryDirectory(prefix="hls_est_") as tmp:
        d = Path(tmp)
        render(board, d)
        if kernel_dir is not None:
            for f in STATIC_FILES:
                if (Path(kernel_dir) / f).exists():
                    atomic_write(d / f, (Path(kernel_dir) / f).read_text())
        try:
            loops, _ = analyse_folder(d)
        except LintError as e:
            raise EstimateError(f"the kernel does not parse: {e}") from None
    return [lp for lp in loops if Path(lp.file).name in KERNEL_HEADERS]


def m_axi_outstanding() -> tuple[int, int]:
    """(burst requests LOAD keeps in flight, write requests STORE keeps without their response): the kernel's
    ``LOAD_AHEAD`` and ``STORE_WR_OUTSTANDING`` (``hls_templates/kernel/accel_kernel_*.h``), the constants its
    request walks use. Raises EstimateError when either is missing."""
    src = "\n".join((Path(KERNEL_DIR) / f).read_text() for f in KERNEL_HEADERS)
    rd = re.search(r"^#define LOAD_AHEAD (\d+)\s*$", src, re.M)
    wr = re.search(r"^#define STORE_WR_OUTSTANDING (\d+)\s*$", src, re.M)
    if rd is None or wr is None:
        raise EstimateError("the kernel headers: no #define LOAD_AHEAD / STORE_WR_OUTSTANDING (the requests in flight)")
    return int(rd.group(1)), int(wr.group(1))


def _cdiv(a, b):
    return -(-a // b)


class KernelEstimate:
    """Cycle estimate of the kernel rendered for ``board`` in precision ``bits`` (8 or 16) from its loop
    structure (module docstring). ``loops``: :func:`kernel_loops` (analysed if None). ``fetch_ddr``: the program is
    fetched from DDR (as the driver runs it) rather than the ROM. Raises EstimateError when a loop the formulas
    need is missing. ``used`` collects the labels of the loops the estimates so far have used, ``trips`` /
    ``cycles`` their iterations and cycles ({label: n}, :meth:`reset_counts`)."""

    def __init__(self, board: Board, bits: int, loops: list[Loop] | None = None, fetch_ddr: bool = True):
        self.board = board
        self.hw = HwConfig.from_board(board, bits).single_rate()     # the HLS kernel is single-pumped
        self.loops = loops if loops is not None else kernel_loops(board)
        self.fetch_ddr = fetch_ddr
        self.cmd_depth = CMD_QUEUE_DEPTH
        ann = {lp.label: lp for lp in self.loops}
        missing = sorted(REQUIRED_LOOPS - set(ann))
        if missing:
            raise EstimateError(f"the kernel has no pipelined loop(s) {missing} the estimator needs")
        self.ann = ann
        self.used: set = set()
        self.trips: Counter = Counter()
        self.cycles: Counter = Counter()
        # LOAD's and STORE's m_axi on the DDR path (two HP ports: both through the splitter, as the RTL's units)
        self.beat_ii_min = max(1, math.ceil(self.hw.axi_bytes / self.hw.bytes_per_cycle))
        self.rd_outstanding, self.wr_outstanding = m_axi_outstanding()
        self.frame = None   # PRE's frame registers (host.pre.PreFrame) for insn_cycles; None: nominal

    def reset_counts(self) -> None:
        """Forget the per-loop iterations and cycles counted so far."""
        self.trips.clear()
        self.cycles.clear()

    def _count(self, label, trip, cycles):
        self.used.add(label)
        self.trips[label] += trip
        self.cycles[label] += cycles
        return cycles

    # ---- loop primitives
    def _loop(self, label: str, trip: int, ii_min: int = 1, ii: int | None = None) -> int:
        """trip x II + depth of the pipelined loop ``label`` (analysed II, or ``ii``; 0 cycles when it runs no
        iteration)."""
        lp = self.ann[label]
        if trip <= 0:
            return self._count(label, 0, 0)
        return self._count(label, trip, trip * max(lp.ii if ii is None else ii, ii_min) + lp.depth)

    # ---- per instruction
    def _segments(self, f, store: bool):
        """(seg_rows, list of (address, bytes) of the segments) as exec_load / exec_store cut the transfer."""
        hw = self.hw
        rows, cols, elems = f["rows"], f["cols"], f["elems"]
        i16 = f["prec"] == isa.PRECISIONS["int16"]
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

    def _flat_beats(self, label: str, iters: int, requests: int, latency: int, outstanding: int,
                    tail: int = 0) -> int:
        """One flattened pipelined loop of ``iters`` iterations (a beat, or a chunk of one) moving the beats of
        ``requests`` burst requests with ``outstanding`` of them in flight: the latency once, the iterations at
        ``beat_ii``, or ``requests x latency / outstanding`` if larger (short bursts: the requests in flight bound
        the rate); plus ``tail``, the two-HP-port splitter's last-burst cycles."""
        lp = self.ann[label]
        ii = max(lp.ii, self.beat_ii_min)
        return self._count(label, iters, latency + lp.depth
                           + max(iters * ii, math.ceil(requests * latency / outstanding)) + tail)

    def _tail(self, a, nbytes, write: bool) -> int:
        """The splitter's cycles after the last segment (two HP ports; 0 with one)."""
        if self.hw.hp_ports != 2:
            return 0
        last = int(np.broadcast_to(nbytes, np.shape(a))[-1])
        n_max = 0 if write else max_burst_beats(np.ravel(a), np.broadcast_to(nbytes, np.shape(a)).ravel(),
                                                self.hw.axi_bytes)
        return split_tail(int(np.ravel(a)[-1]), last, self.hw.axi_bytes, write, 2, n_max)

    def load_cycles(self, f) -> int:
        """Cycles of one LOAD with fields ``f`` as the kernel's LOAD loops run it (stated II and depth)."""
        hw = self.hw
        if f["rows"] * f["cols"] * f["elems"] == 0:
            return INVOKE + SETUP
        _, a, nbytes = self._segments(f, store=False)
        label = "PBUF_BEATS" if f["buf"] in (isa.BUFFERS["PBUF"], isa.BUFFERS["TBUF"]) else "LOAD_BEATS"
        nb = int(self._nbeats(a, nbytes).sum())
        # IBUF / WBUF: a beat's elements in chunks of at most Tn (more than one only when a beat holds more)
        per_beat = hw.axi_bytes // (2 if f["prec"] == isa.PRECISIONS["int16"] else 1)
        iters = nb * (_cdiv(per_beat, hw.tn) if label == "LOAD_BEATS" else 1)
        # the request walk's prologue (REQ_PRIME: the first LOAD_AHEAD bursts requested before the first beat is
        # read) runs inside the read latency unless it is longer
        nseg = int(np.size(a))
        prime = self._loop("REQ_PRIME", min(self.rd_outstanding, nseg))
        return INVOKE + SETUP + self._flat_beats(label, iters, nseg, max(hw.rd_latency, prime), self.rd_outstanding,
                                                 self._tail(a, nbytes, write=False))

    def store_cycles(self, f) -> int:
        """Cycles of one STORE with fields ``f`` as the kernel's STORE loops run it (stated II and depth)."""
        hw = self.hw
        if f["rows"] * f["cols"] * f["elems"] == 0:
            return INVOKE + SETUP
        _, a, nbytes = self._segments(f, store=True)
        nb = int(self._nbeats(a, nbytes).sum())
        pages = int(((a + nbytes - 1) // STORE_PAGE_BYTES - a // STORE_PAGE_BYTES + 1).sum())   # one burst each
        return INVOKE + SETUP + self._flat_beats("STORE_BEATS", nb, pages, hw.wr_latency, self.wr_outstanding,
                                                 self._tail(a, nbytes, write=True))

    def compute_cycles(self, f) -> int:
        """Cycles of one COMPUTE with fields ``f`` as the kernel's COMPUTE loop runs it (stated II and depth)."""
        if f["oh"] * f["ow"] * f["og"] == 0:
            return INVOKE + SETUP
        if f["bypass"]:
            return INVOKE + SETUP + self._loop("BYPASS", f["oh"] * f["ow"] * f["og"] * (2 if f["emul"] else 1))
        hw = self.hw.at_prec(f["prec"])
        P = hw.pix_lanes
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

    def pre_cycles(self, f, frame=None) -> int:
        """Cycles of one PRE with fields ``f`` on the frame registers ``frame`` (:class:`host.pre.PreFrame`; None:
        :attr:`frame`, else a frame of the network input's size, stretched) as accel_pre's loops run it
        (:mod:`generator.estimate.hls_pre_cycles`): per output row of the band (``rows`` from ``y0``) ``PRE_ROW`` +
        D_PIXELS, the PRE_PIXELS iterations
        at their II, per PRE_FETCH run ``PRE_ROW`` + Lr + D_FETCH, its beats at their II, the last write responses
        Lw once; on two HP ports the runs' last bursts through the splitter as the latency model prices them
        (:func:`generator.spec.timing.pre_split_tail`). A frame the kernel refuses costs ``INVOKE + SETUP``."""
        from host.pre import PreFrame, pre_geometry, pre_violation
        from generator.estimate.hls_pre_cycles import fetch_counts, pixel_steps

        frame = frame if frame is not None else self.frame
        if frame is None:
            frame = PreFrame.of(pre_geometry(max(f["net_w"], 1), max(f["net_h"], 1), max(f["net_w"], 1),
                                             max(f["net_h"], 1)), 0, 1 << 32)
        g = frame.geometry(f["net_w"], f["net_h"])
        if (f["rows"] == 0 or pre_violation(g, frame.pitch, frame.size) or f["y0"] + f["rows"] > f["net_h"]
                or not 1 <= f["shift"] <= isa.MAX_SHIFT):
            return INVOKE + SETUP
        hw, axi = self.hw, self.hw.axi_bytes
        runs, beats = fetch_counts(frame, axi, f["y0"], f["rows"])
        px, fe = self.ann["PRE_PIXELS"], self.ann["PRE_FETCH"]
        ii_px, ii_fe = max(px.ii, self.beat_ii_min), max(fe.ii, self.beat_ii_min)
        steps = pixel_steps(f, axi)
        c_fe = self._count("PRE_FETCH", beats, runs * (PRE_ROW + hw.rd_latency + fe.depth) + beats * ii_fe)
        c_px = self._count("PRE_PIXELS", steps, f["rows"] * (PRE_ROW + px.depth) + steps * ii_px)
        # each run's last burst through the splitter (rtl/axi_hp_split.sv in bd/accel_hp.v)
        split = pre_split_cycles(hw.hp_ports, runs, pre_split_tail(frame, axi, f["y0"], f["rows"]))
        return INVOKE + SETUP + c_fe + c_px + hw.wr_latency + split

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
        if op == "PRE":
            return self.pre_cycles(f)
        return INVOKE

    # ---- fetch
    def dispatch_times(self, insns) -> np.ndarray:
        """Cycle at which fetch has put instruction k into its module's command queue (module docstring)."""
        n = len(insns)
        for k, ins in enumerate(insns):
            if ins.op == "END":
                n = k + 1
                break
        # (from the ROM the loops' bound without the m_axi bundle; from DDR the analysed II counts each
        # instruction's beats on it, and each pass -- VALIDATE over the whole program, DISPATCH up to END -- is one
        # burst, its read latency paid once)
        ii_v, ii_d = self.ann["VALIDATE"].ii_without("m_axi"), self.ann["DISPATCH"].ii_without("m_axi")
        extra = 0
        if self.fetch_ddr:
            ii_v, ii_d = self.ann["VALIDATE"].ii, self.ann["DISPATCH"].ii
            extra = self.hw.rd_latency
            if self.hw.hp_ports == 2:   # the fetch's m_axi is narrowed onto one HP port of half the width
                port_ii = math.ceil(isa.INSN_BYTES / (self.hw.bytes_per_cycle / 2))
                ii_v, ii_d = max(ii_v, port_ii), max(ii_d, port_ii)
        validate = self._loop("VALIDATE", len(insns), ii=ii_v) + extra
        t0 = validate + extra + self.ann["DISPATCH"].depth
        self._count("DISPATCH", n, n * ii_d + extra + self.ann["DISPATCH"].depth)
        return t0 + np.arange(len(insns), dtype=np.int64) * ii_d

    # ---- whole program
    def program_cycles(self, insns, frame=None):
        """Run the golden simulator's scheduler (timing only) with this cost and the fetch's dispatch times
        (``frame``: PRE's frame registers, :class:`host.pre.PreFrame`, None: nominal); returns its
        :class:`generator.exec.golden.SimResult`."""
        from generator.exec.golden import GoldenSim
        self.frame = frame
        sim = GoldenSim(self.hw, np.zeros(16, np.uint8), {k: 0 for k in isa.BASE_REG_NAMES.values()}, frame=frame)
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


def compare(board: Board, bits: int, insns, loops: list[Loop] | None = None, fetch_ddr: bool = True,
            frame=None) -> dict:
    """hls-cycles (this estimate over the program, with the queues' overlap) against model-cycles (the golden
    simulator's timing with :func:`generator.spec.timing.insn_cycles`) of the same instructions, and the per-kind sums
    of both per-instruction costs: ``{"hls": N, "model": M, "ratio": N / M, "kinds": {kind: {"count", "hls",
    "model"}}, "busy": {"hls": {module: cycles}, "model": ...}}``. ``frame``: PRE's frame registers
    (:class:`host.pre.PreFrame`; None: the nominal frame of each side). On a double-pumped board the model side
    is the single-rate machine (:meth:`HwConfig.single_rate`), as the kernel is."""
    from generator.spec.timing import insn_cycles
    from generator.exec.golden import GoldenSim
    est = KernelEstimate(board, bits, loops, fetch_ddr)
    insns = list(insns)
    r_h = est.program_cycles(insns, frame)
    r_m = GoldenSim(est.hw, np.zeros(16, np.uint8), {k: 0 for k in isa.BASE_REG_NAMES.values()},
                    frame=frame).run_insns(insns, functional=False)
    kinds: dict = {}
    est.reset_counts()
    est.dispatch_times(insns)
    for ins in insns:
        d = kinds.setdefault(insn_kind(ins), Counter())
        d["count"] += 1
        d["hls"] += est.insn_cycles(None, ins)
        d["model"] += insn_cycles(est.hw, ins, frame)
    return {"hls": r_h.cycles, "model": r_m.cycles, "ratio": r_h.cycles / r_m.cycles,
            "kinds": {k: dict(v) for k, v in kinds.items()}, "busy": {"hls": r_h.busy, "model": r_m.busy},
            "used": sorted(est.used), "loops": loop_table(est)}


def loop_table(est: KernelEstimate) -> list[dict]:
    """Per pipelined loop of ``est``'s kernel: label, function, requested / analysed II, the memory limiting it,
    depth, the iterations and cycles the estimates so far counted (``trips`` / ``cycles``; per frame after
    :func:`compare`)."""
    return [{"loop": lp.label, "function": lp.function, "requested_ii": lp.requested_ii, "ii": lp.ii,
             "limit": f"{lp.limit} ({lp.storage}: {lp.reads} R, {lp.writes} W)" if lp.limit else "",
             "depth": lp.depth, "trips": int(est.trips.get(lp.label, 0)), "cycles": int(est.cycles.get(lp.label, 0))}
            for lp in est.loops]

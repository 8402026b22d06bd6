"""Hardware model: the accelerator configuration in the units the ISA uses, and the cycle cost of each
instruction. The golden simulator counts cycles with it and the scheduler predicts with it, so both agree by
construction; it describes what the RTL (``rtl/accel_top.sv``) does and is calibrated against the RTL's cycle
counts (``invoke rtl-frame``, :mod:`generator.exec.rtl`).

Cost model (cycles of the PL clock):

* LOAD / STORE: the AXI4 latency (``ddr_read_latency_cycles`` to the first read beat; ``ddr_write_latency_cycles``
  from the last write beat to its response) once per instruction, since the bursts of an instruction are
  pipelined, plus the data beats at the smaller of the m_axi width and the PS DDR bandwidth. The beats are those
  the RTL's address generator issues: a transfer is cut into *segments* (the whole transfer when rows and pixels
  are contiguous, else one per row when the pixels of a row are (for STORE only if they are contiguous in OBUF
  too), else, for IBUF LOADs only, one per row *span* when the pixel runs overlap (stride < run <= 2 x stride),
  fit a beat and the Tn lanes, and the span takes no more beats than the runs, else one per pixel run); each
  segment costs ``ceil((addr % beat + bytes) / beat)`` beats at its real address (base registers are
  page-aligned). At most :data:`MAX_READ_BURSTS` read bursts are in flight (one address per cycle; a burst's
  slot is free again :data:`READ_SLOT_EXTRA` cycles after its data's latency, :data:`HP_SPLIT_SLOT_EXTRA` more through
  the two-port splitter), which bounds a LOAD of many short bursts (:func:`read_window_cycles`). A LOAD's data side writes a beat per cycle
  unless the beat holds more than one *chunk* (pieces between beat, pixel-run and lane-group boundaries: groups of
  Tn elements / Tm records from each run's first byte, WBUF words; span segments: two runs per cycle), so a LOAD
  takes the larger of the DDR time and the chunk count; ``LOAD_SETUP`` adds the per-instruction segment constants,
  ``XFER_OVERHEAD`` the data side's register stages (``LOAD_DATA_STAGES``). Two HP ports (``hp_ports`` 2: the
  RTL's burst splitter, ``rtl/axi_hp_split.sv``) double the bytes per cycle and add :func:`split_tail` per transfer.
* COMPUTE: ``HwConfig.compute_fill`` + oh * ceil(ow / P) * og * ig * kh * kw, with P = 2 output pixels per DSP48E2 in
  int8 (two activations packed in the 27-bit A port share the weight on the 18-bit B port) and P = 1 in int16,
  twice that on a double-pumped array (``pump`` 2: each DSP48E2 takes two operand sets per logic cycle, two pixel
  pairs sharing the weight, rtl/pe_array_2x.sv); int8 accumulation into ACC (acc_init = 0) with ig * kh * kw = 1 takes two cycles per step (the two ACC ports
  serve both pixels' read-modify-write). A bypass COMPUTE (a copy through the accumulators) moves one pixel per
  cycle; an element-wise product (``emul``) takes two per output word (operand A's lanes, then B's).
* POST: ``POST_FILL`` (+ ``TABLE_STAGES`` with the activation table) + output words x pooling-window size (one accumulator word of a window per cycle, Tm
  lanes wide; an upsampled output word re-reads its source, so nearest upsampling costs one cycle per output).
  The STORE after a POST overlaps it (rtl/store.sv): :func:`post_store_end` gives its end, the timing engine
  (:mod:`generator.spec.timing_engine`) starts it the cycle after the POST's.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from generator.spec.arch import (ACC_RMW_DISTANCE, AXI_BOUNDARY_BYTES, LOAD_DATA_STAGES, LOAD_SETUP_CYCLES,
                                  POST_SETUP, REQUANT_STAGES, RTL_QUEUES, STORE_READ_STAGES, STORE_SETUP,
                                  TABLE_STAGES)
from generator.spec import isa
from generator.spec.hp_timing import (HP4_SLOT_EXTRA, HP_SPLIT_SLOT_EXTRA, READ_SLOT_EXTRA, burst_beats as _beats,
                                      max_burst_beats, pre_split_cycles, split_tail)
from generator.spec.hw import HwConfig

#: cycles of a POST besides its window steps (the serial setup, RAM read stage, the requantization pipeline drained)
POST_FILL = 4 + POST_SETUP + REQUANT_STAGES
#: extra cycles of a LOAD: the per-instruction segment constants (LD_SETUP, LOAD_SETUP_CYCLES cycles), the return
#: to LD_IDLE
LOAD_SETUP = 2 + LOAD_SETUP_CYCLES
SIMPLE_OP_CYCLES = 1
#: read bursts the LOAD module keeps in flight (rendered into the RTL package as LD_OUTST)
MAX_READ_BURSTS = 32
#: cycles of a LOAD besides latency, beats and LOAD_SETUP (instruction issue, first address, the data side's
#: stages, completion)
XFER_OVERHEAD = 4 + LOAD_DATA_STAGES
#: cycles of a STORE besides the beats and the write-response latency (issue, the setup, first address, the OBUF
#: read stages and output FIFO ahead of the first W beat, completion)
STORE_OVERHEAD = 6 + STORE_READ_STAGES + STORE_SETUP
def read_window_cycles(bursts: int, slot_cycles: int) -> int:
    """Cycles from a LOAD's first burst address to its last one's data when at most :data:`MAX_READ_BURSTS` bursts
    are in flight, each holding its slot ``slot_cycles`` cycles (read latency + :data:`READ_SLOT_EXTRA`, + the
    splitter's) and the address generator issuing one a cycle: the last burst goes out (bursts - 1) // W slot times
    plus its place in the last window after the first (W = MAX_READ_BURSTS), so its data lands that many cycles + 1
    after the first address (the latency itself is counted once outside)."""
    if bursts <= 0:
        return 0
    return (bursts - 1) // MAX_READ_BURSTS * slot_cycles + (bursts - 1) % MAX_READ_BURSTS + 1


#: LOAD buffer kinds (the ISA's ``buf`` field values)
IBUF, WBUF, PBUF, TBUF = (isa.BUFFERS[k] for k in ("IBUF", "WBUF", "PBUF", "TBUF"))


def use_span(rows: int, cols: int, run_bytes: int, pix_stride: int, beat: int, buf: int = IBUF,
             elems: int = 0, tn: int = 1 << 30, dst_pitch: int = 1) -> bool:
    """True if the LOAD address generator fetches each row as one span: IBUF pixel runs that overlap
    (0 < stride < run <= 2 x stride), a run fits one beat (``run_bytes <= beat``) and the Tn lanes
    (``elems <= tn``), distinct pixels go to distinct IBUF words (``dst_pitch >= 1``), and the span takes no more
    beats than the runs one by one, counted aligned. (rtl/accel_top.sv, LD_SETUP)"""
    if (cols == 1 or buf != IBUF or pix_stride == run_bytes or not 0 < pix_stride < run_bytes <= 2 * pix_stride
            or run_bytes > beat or elems > tn or dst_pitch < 1):
        return False
    span = (cols - 1) * pix_stride + run_bytes
    return -(-span // beat) <= cols * -(-run_bytes // beat)


def _cdiv(a, b):
    return -(-a // b)


@lru_cache(maxsize=65536)
def _load_chunks(beat: int, buf: int, eb: int, tn: int, tm: int, wl: int, seg_bytes: int, run_bytes: int, a0: int,
                 e0: int, run_step: int, span_stride: int, ncols: int) -> int:
    """Write cycles of the LOAD data side for one segment of ``seg_bytes`` bytes starting at address residue
    ``a0`` (mod beat) whose first byte is element ``e0`` (mod a WBUF word; unused otherwise).

    Contiguous segments: one chunk per cycle, a chunk being a piece between beat, pixel-run and lane-group
    boundaries (rtl/load_rd.sv): a run's lane groups are Tn elements (IBUF) / lane_pitch(Tm) records (PBUF) from its
    first byte, WBUF words (lane_pitch(Tn x Tm) element indices).  ``tm`` / ``wl``: lane_pitch(Tm), lane_pitch(Tn Tm). Span segments (``span_stride`` > 0): one cycle per beat, or ceil(n / 2) when n > 2 runs end in the
    beat (two runs written per cycle)."""
    nbeats = int(_beats(a0, seg_bytes, beat))
    if span_stride:
        last = a0 + np.arange(ncols, dtype=np.int64) * span_stride + run_bytes - 1
        n_end = np.bincount(last // beat, minlength=nbeats)
        return int(np.maximum(1, (n_end + 1) // 2).sum())
    cap = tn * eb if buf == IBUF else tm * eb
    simple = (a0 % beat == 0 and run_bytes % beat == 0
              and (cap % beat == 0 if buf != WBUF else ((wl * eb) % beat == 0 and (e0 * eb) % beat == 0)))
    if simple:
        return nbeats
    cuts = [np.arange((beat - a0) % beat or beat, seg_bytes, beat, dtype=np.int64),
            np.arange(run_bytes, seg_bytes, run_bytes, dtype=np.int64)]
    if buf == WBUF:
        o = np.arange(eb, seg_bytes, eb, dtype=np.int64)
        idx = e0 + (o // run_bytes) * run_step + (o % run_bytes) // eb
        cuts.append(o[idx % wl == 0])
    elif cap < run_bytes:
        o = np.arange(cap, seg_bytes, cap, dtype=np.int64) if run_bytes % cap == 0 else \
            (np.arange(0, seg_bytes, run_bytes, dtype=np.int64)[:, None]
             + np.arange(cap, run_bytes, cap, dtype=np.int64)[None, :]).ravel()
        cuts.append(o)
    pts = np.unique(np.concatenate([np.array([0, seg_bytes], dtype=np.int64), *cuts]))
    return len(pts) - 1


def transfer_cycles(hw: HwConfig, rows: int, cols: int, run_bytes: int, row_stride: int, pix_stride: int,
                    write: bool = False, addr: int = 0, buf: int = IBUF, elems: int = 0, dst_elem: int = 0,
                    dst_pitch: int = 1, src_pitch: int = 0) -> int:
    """Cycles of a strided 2-D DDR transfer (a LOAD, or a STORE if ``write``) of rows x cols pixel runs of
    ``run_bytes`` bytes, strides in bytes, starting at byte address ``addr`` (alignment counts; see the module
    docstring). LOAD: ``buf`` (IBUF/WBUF/PBUF), ``elems`` per run, ``dst_elem``, ``dst_pitch`` describe the
    destination (the data side's write chunks). STORE: ``src_pitch`` (OBUF words per pixel) decides whether
    contiguous pixels form one segment (only if they are contiguous in OBUF too: elems == src_pitch x Tm)."""
    latency = hw.wr_latency if write else hw.rd_latency
    if rows == 0 or cols == 0 or run_bytes == 0:
        return latency + (0 if write else LOAD_SETUP)
    beat = hw.axi_bytes
    eb = 16 if buf == PBUF else hw.elem_bytes
    elems = elems or run_bytes // eb
    r_addr = addr + np.arange(rows, dtype=np.int64) * row_stride
    row_contig = cols == 1 or pix_stride == run_bytes
    if write and src_pitch and elems != src_pitch * hw.tm:
        row_contig = False
    span = not write and not row_contig and use_span(rows, cols, run_bytes, pix_stride, beat, buf, elems,
                                                     hw.tn, dst_pitch)
    run_step = elems if buf == PBUF else dst_pitch * (hw.wbuf_pitch if buf == WBUF else hw.tn)
    if row_contig:
        row_bytes = cols * run_bytes
        if rows == 1 or row_stride == row_bytes:
            seg_addr, seg_bytes = np.array([addr]), rows * row_bytes
        else:
            seg_addr, seg_bytes = r_addr, row_bytes
    elif span:
        seg_addr, seg_bytes = r_addr, (cols - 1) * pix_stride + run_bytes
    else:
        seg_addr = (r_addr[:, None] + np.arange(cols, dtype=np.int64)[None, :] * pix_stride).ravel()
        seg_bytes = run_bytes
    beats = int(_beats(seg_addr, seg_bytes, beat).sum())
    bursts = len(seg_addr)
    data = math.ceil(beats * beat / hw.bytes_per_cycle)
    if not write:
        slot = latency + READ_SLOT_EXTRA + {1: 0, 2: HP_SPLIT_SLOT_EXTRA, 4: HP4_SLOT_EXTRA}[hw.hp_ports]
        data = max(data, read_window_cycles(bursts, slot))
    if hw.hp_ports > 1:    # the last burst's later parts follow its first, which a port delivers at its own rate
        n_max = max_burst_beats(seg_addr, seg_bytes, beat) if not write else 0
        data += split_tail(int(seg_addr[-1]), int(np.broadcast_to(seg_bytes, seg_addr.shape)[-1]), beat, write,
                           hw.hp_ports, n_max)
    if write:
        return STORE_OVERHEAD + latency + data
    if span or not (buf == IBUF and run_bytes % beat == 0 and hw.tn * eb >= beat and addr % beat == 0
                    and row_stride % beat == 0 and pix_stride % beat == 0):
        e0 = dst_elem % hw.wbuf_pitch if buf == WBUF else 0
        res, cnt = np.unique(seg_addr % beat, return_counts=True)
        chunks = sum(int(c) * _load_chunks(beat, buf, eb, hw.tn, hw.tm_pitch, hw.wbuf_pitch, seg_bytes, run_bytes, int(a), e0, run_step,
                                           pix_stride if span else 0, cols) for a, c in zip(res, cnt))
        data = max(data, chunks)
    return XFER_OVERHEAD + LOAD_SETUP + latency + data


#: segments the RTL's STORE keeps behind the POST it overlaps (it takes a segment once the POST has written the
#: words of three segments from its start on: rtl/store.sv), and the cycles from the POST's OBUF write to the take
STORE_SEG_AHEAD, STORE_GATE_CYCLES = 3, 3


def _store_segments(hw: HwConfig, f: dict) -> tuple[int, int, bool]:
    """(segments, OBUF Tm-words per segment, all in one segment) of a STORE with fields ``f``, as the RTL's
    segment generator cuts it (see :func:`transfer_cycles`)."""
    contig_obuf = f["elems"] == f["src_pitch"] * hw.tm
    row_contig = f["cols"] == 1 or (contig_obuf and f["pix_stride"] == f["elems"] * hw.elem_bytes)
    if row_contig and (f["rows"] == 1 or (contig_obuf and f["row_stride"] == f["cols"] * f["elems"] * hw.elem_bytes)):
        return 1, f["rows"] * f["cols"] * f["src_pitch"], True
    if row_contig:
        return f["rows"], f["cols"] * f["src_pitch"], False
    return f["rows"] * f["cols"], f["src_pitch"], False


def post_store_end(hw: HwConfig, post, t_post: int, store, t_store: int, cost=None) -> int:
    """End cycle of a STORE started at ``t_store`` while the POST before it (started at ``t_post``) still runs
    (rtl/store.sv): it takes a segment only when the POST has written the OBUF words of :data:`STORE_SEG_AHEAD`
    segments from that one on (or has finished), so it ends after the later of its own time (from the take of
    its first segment) and the time of its last segments after the POST's end. ``cost(hw, insn)``: the POST's and
    the STORE's own cycles (default :func:`insn_cycles`; the HLS kernel's estimate passes its loop estimate, whose
    store module gates each segment on the words it needs, a close variant of the same rule)."""
    cost = cost or insn_cycles
    c_post, c_store = cost(hw, post), cost(hw, store)
    f = store.f
    hw = hw.at_prec(f.get("prec", 0)) if "prec" in f else hw
    n_seg, ws, whole = _store_segments(hw, f)
    k2 = max(post.f["pool_k"], 1) ** 2
    words = f["rows"] * f["cols"] * f["src_pitch"]
    post_end = t_post + c_post
    need = min(words, STORE_SEG_AHEAD * ws + 2 * (max(hw.tm, hw.axi_bytes) // hw.tm))   # 2 OBUF rows (OL / Tm words)
    first = post_end - (words - need) * k2 + STORE_GATE_CYCLES if not whole and need < words else post_end + 1
    own = max(t_store, first - STORE_SETUP - 2) + c_store
    late = min(n_seg, STORE_SEG_AHEAD) if not whole else 1    # the segments taken only after the POST's end
    seg_bytes = (f["rows"] * f["cols"] if whole else f["cols"] if ws > f["src_pitch"] else 1) * f["elems"] * hw.elem_bytes
    tail = transfer_cycles(hw, 1, late, seg_bytes, 0, seg_bytes, write=True, addr=f["ddr_offset"])
    return max(own, post_end + 1 + STORE_GATE_CYCLES + tail - STORE_SETUP)


#: PRE's cycles (rtl/pre.sv in the accelerator, measured by tests/rtl/test_pre_insn.py: rtl/pre_insn.sv's checks,
#: the LOAD module's hand-over and the DDR latencies): the fixed part (:func:`pre_cycles`), a fetch run's planner
#: cycles besides its beats and the read latency (an output row that reads source rows: both rows requested before
#: the first beat, the read latency once)
PRE_FIXED, PRE_RUN = 56, 10


def _fetch_rows(frame, y0: int = 0, rows: int | None = None):
    """Per fetch run of the band (see :func:`pre_fetch_runs`), the source rows it reads, in request order."""
    from host.pre import source_positions

    iy, iy1, _ = source_positions(frame.out_h, frame.frame_h, frame.step_y)
    j0 = max(y0 - frame.top, 0)
    j1 = frame.out_h if rows is None else min(y0 + rows - frame.top, frame.out_h)
    held = [-1, -1]
    for a, b in zip(iy[j0:max(j1, j0)].tolist(), iy1[j0:max(j1, j0)].tolist()):
        need_a, need_b = a not in held, b not in held and b != a
        if not (need_a or need_b):
            continue
        ja = 0 if need_b else (1 if held[0] == b else 0)
        jb = 1 if need_a else (1 if held[0] == a else 0)
        run = []
        for need, row, j in ((need_a, a, ja), (need_b, b, jb)):
            if need:
                held[j] = row
                run.append(row)
        yield run


def pre_fetch_runs(frame, axi_bytes: int, y0: int = 0, rows: int | None = None) -> tuple[int, int, int]:
    """(runs, pairs, beats) of PRE on the frame registers ``frame`` (:class:`host.pre.PreFrame`) for the band of
    output rows ``y0`` .. ``y0 + rows - 1`` (None: to the placed rectangle's end; the line buffers start empty),
    the HLS kernel's rule (accel_kernel_pre.h ``pre_fetch_rows``, two line buffers; rtl/pre.sv applies it per pair
    of buffers: :func:`generator.spec.pre_rows.pair_fetches`): per placed output row, its source rows ``iy`` /
    ``iy1`` (host/pre.py step 2) that neither line buffer holds are read
    (``iy`` into the buffer not holding ``iy1``, buffer 0 when both are read; ``iy1`` not when it is ``iy``), one
    fetch run per output row that reads any (``pairs`` of them read two rows), each row its first 3 x frame_w
    bytes from ``frame + row x pitch`` as whole beats of ``axi_bytes``."""
    runs = pairs = beats = 0
    for run in _fetch_rows(frame, y0, rows):
        beats += sum(_row_beats(frame, row, axi_bytes) for row in run)
        runs += 1
        pairs += len(run) == 2
    return runs, pairs, beats


def pre_split_tail(frame, axi_bytes: int, y0: int = 0, rows: int | None = None) -> int:
    """Beats of the last burst of every fetch run of the band (:func:`pre_fetch_runs`), summed: each run's last
    row's bytes from its last 4 KB boundary (the burst rtl/pre_burst.sv issues last)."""
    return sum(_row_last_burst(frame, run[-1], axi_bytes) for run in _fetch_rows(frame, y0, rows))


def _row_beats(frame, row: int, axi_bytes: int) -> int:
    """Whole ``axi_bytes`` beats holding frame row ``row``'s first 3 x frame_w bytes (what PRE reads of a row)."""
    start = frame.addr + row * frame.pitch
    return (start + 3 * frame.frame_w - 1) // axi_bytes - start // axi_bytes + 1


def _row_last_burst(frame, row: int, axi_bytes: int) -> int:
    """Beats of the last burst rtl/pre_burst.sv issues for frame row ``row``: its bytes from its last 4 KB
    boundary."""
    start = frame.addr + row * frame.pitch
    end = start + 3 * frame.frame_w
    first = max(start, (end - 1) // AXI_BOUNDARY_BYTES * AXI_BOUNDARY_BYTES)
    return int(_beats(first, end - first, axi_bytes))


#: rtl/pre.sv's pixel side (measured, tests/rtl/test_pre_insn.py): cycles from a pair's last pixel issue to the
#: planner's first fetch into it (past the line buffers' read), and from the run's start to the first row's planning
PRE_RELEASE, PRE_START = 10, 1
#: a row's cycles besides its pixels on the pixel side (rtl/pre_wr.sv takes a row's pixels at about one per cycle
#: and a cycle more per row, which the pixel credits pass back: tests/rtl/test_pre.py, 640x480 and 1920x1080 to
#: 416x416 at 417.1 cycles per row)
PRE_ROW = 1


def pre_cycles(hw: HwConfig, f: dict, frame=None) -> int:
    """Cycles of a PRE instruction (fields ``f``: the band of ``rows`` rows from ``y0``) on a frame of registers
    ``frame`` (:class:`host.pre.PreFrame`; None: a frame of the network input's own size at address 0, stretched:
    the compiler's nominal case), by rtl/pre.sv's schedule (its planner and pixel side, rtl/pre_insn.sv around it).
    The planner takes each output row in turn: 2 cycles, 3 more for a placed row, then its fetch run if it reads
    source rows (:func:`generator.spec.pre_rows.pair_fetches`): once the pixel side has left the row's pair
    (:data:`PRE_RELEASE` cycles
    after that pair's previous row's last pixel), ``PRE_RUN + rd_latency + beats + walk`` less one for a run of
    two rows (their requests back to back), plus on two or four HP ports :func:`pre_split_cycles` of the run and
    its last burst; then it hands the row over once the pixel side has taken the one before. The pixel side issues a row's
    net_w pixels one per cycle, the next row's :data:`PRE_ROW` cycle after the last. The run takes
    ``PRE_FIXED + wr_latency + L`` cycles beyond its last pixel issue (counted from the start), L the band's last
    write burst (:func:`pre_last_burst`).
    Within 2% of the RTL (tests/rtl/test_pre_insn.py) while a network pixel's bytes fit one AXI beat (a wider
    pixel is bound by the writer's beats instead); 0 for an empty band. The HLS kernel fetches then issues each row
    (:func:`pre_fetch_runs`, :meth:`generator.estimate.hls_cycles.KernelEstimate.pre_cycles`)."""
    from generator.spec.pre_rows import pair_fetches
    from host.pre import PreFrame, pre_geometry

    net_w, net_h, y0, rows = max(f["net_w"], 1), max(f["net_h"], 1), f.get("y0", 0), f.get("rows", f["net_h"])
    if rows == 0:
        return 0
    if frame is None:
        frame = PreFrame.of(pre_geometry(net_w, net_h, net_w, net_h), 0, 1 << 32)
    g = PreFrame.geometry(frame, net_w, net_h)
    if g.out_h < 1 or g.frame_h < 1 or g.frame_w < 1:
        return PRE_FIXED
    b = hw.axi_bytes
    plan = PRE_START                                  # the planner's next row
    taken = -1                                        # the last row's take (the slot free again)
    last = None                                       # the last pixel issue of the row before
    release = {0: 0, 1: 0}
    for k, (placed, run, walk) in enumerate(pair_fetches(g, y0, rows, net_h)):
        t = plan + 2 + (3 if placed else 0)
        if run:
            beats = sum(_row_beats(frame, r, b) for r in run)
            split = pre_split_cycles(hw.hp_ports, 1, _row_last_burst(frame, run[-1], b))
            t = max(t + 1, release[(y0 + k) & 1]) + PRE_RUN + hw.rd_latency + beats + walk - (len(run) == 2) + split
        hand = max(t, taken)
        take = hand + 1 if last is None else max(hand + 1, last + PRE_ROW)
        last = take + net_w
        release[(y0 + k) & 1] = last + PRE_RELEASE
        taken, plan = take, hand + 1
    return int(PRE_FIXED + hw.wr_latency + last + pre_last_burst(hw, f))


def pre_last_burst(hw: HwConfig, f: dict) -> int:
    """Beats of the last write burst of the PRE instruction with fields ``f`` (a band of ``rows`` rows, ``rows``
    >= 1): its last row's span [ddr_offset + (rows - 1) row_stride, + (net_w - 1) pix_stride + E) (E = 3 elements
    of 1 or 2 bytes) from the span's start or the last RTL_QUEUES["PRE_WBURST"]-beat block boundary in it, in beats
    of ``hw.axi_bytes`` (rtl/pre_wr.sv, rtl/pre_burst.sv; the base register's address is block-aligned: host
    buffers are page-aligned)."""
    b, blk = hw.axi_bytes, RTL_QUEUES["PRE_WBURST"]
    row = f["ddr_offset"] + (f.get("rows", f["net_h"]) - 1) * f["row_stride"]
    last = (row + (max(f["net_w"], 1) - 1) * f["pix_stride"] + 3 * (2 if f.get("prec") else 1) - 1) // b
    return last - max(row // b, last // blk * blk) + 1


def insn_cycles(hw: HwConfig, insn, frame=None) -> int:
    """Cycles an instruction occupies its module (see the module docstring), at its ``prec`` field's precision;
    ``frame``: PRE's frame registers (:func:`pre_cycles`)."""
    f, op = insn.f, insn.op
    if op == "PRE":
        return pre_cycles(hw, f, frame)
    if "prec" in f:
        hw = hw.at_prec(f["prec"])
    if op == "LOAD":
        buf = PBUF if f["buf"] == TBUF else f["buf"]     # (TBUF records take PBUF's path through LOAD)
        eb = 16 if buf == PBUF else hw.elem_bytes
        return transfer_cycles(hw, f["rows"], f["cols"], f["elems"] * eb, f["row_stride"], f["pix_stride"],
                               addr=f["ddr_offset"], buf=buf, elems=f["elems"],
                               dst_elem=f["dst_word"] * (hw.wbuf_pitch if buf == WBUF else hw.tn) + f["dst_elem"],
                               dst_pitch=f["dst_pitch"])
    if op == "STORE":
        return transfer_cycles(hw, f["rows"], f["cols"], f["elems"] * hw.elem_bytes, f["row_stride"],
                               f["pix_stride"], write=True, addr=f["ddr_offset"], elems=f["elems"],
                               src_pitch=f["src_pitch"])
    if op == "COMPUTE":
        if f["bypass"]:   # one pixel per cycle (a copy through the accumulators); emul: A's lanes, then B's
            return hw.compute_fill + f["oh"] * f["ow"] * f["og"] * (2 if f["emul"] else 1)
        px = f["oh"] * math.ceil(f["ow"] / hw.pix_lanes) * f["og"]
        k = f["ig"] * f["kh"] * f["kw"]
        # int8 accumulation into ACC: both ACC ports serve the two pixels' read-modify-write (double-pumped: each
        # pixel pair its own ACC copy, rtl/buffers.sv) (ACC_RMW_DISTANCE cycles from a word's ACC read to its
        # write: a word of K = 1 issues every other cycle, K = 3 leaves a cycle after each word, so that no read
        # falls on that write)
        rmw = hw.bits == 8 and not f["acc_init"]
        per_word = 2 if rmw and k == 1 else k + 1 if rmw and k == ACC_RMW_DISTANCE else k
        return hw.compute_fill + px * per_word
    if op == "POST":
        k = max(f["pool_k"], 1)
        return (POST_FILL + (TABLE_STAGES if f["act"] & isa.ACTIVATIONS["table"] else 0)
                + f["out_rows"] * f["out_cols"] * k * k * f["og"])
    return SIMPLE_OP_CYCLES

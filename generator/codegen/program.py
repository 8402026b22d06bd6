"""The compiled program: per layer the plan chosen by :func:`schedule_layer`, the DDR layout, and the whole
instruction stream with its layer barriers; the dependency-token check of a program.

:func:`schedule_layer` ranks a layer's tilings by the analytic estimate of :mod:`generator.codegen.tiling`, times
the best few exactly with the timing engine (:mod:`generator.spec.timing_engine`, the one the golden simulator
counts with, so the printed prediction is what the golden simulator counts), and among the plans within
:data:`TRAFFIC_TOLERANCE` of the fastest takes the one that moves the fewest DDR bytes (traffic-aware tiling: the
bytes a plan moves against the layer's compulsory bytes and its I/O lower bound, :meth:`Layer.io_lower_bound`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from generator.spec import isa
from generator.spec.arch import RTL_QUEUES
from generator.spec.hw import HwConfig
from generator.spec.timing import insn_cycles
from generator.spec.timing_engine import FIFO_OF, ModuleTimer
from generator.ir.graph import Graph
from generator.codegen.allocate import DdrLayout, TensorView, allocate
from generator.codegen.emit import config_insn, ddr_bytes, emit_layer
from generator.codegen.overlap import join_layers, pbuf_bases
from generator.codegen.tiling import Layer, Plan, ScheduleError, layer_hw, layer_of, ranked_plans

#: entries of each module's command queue in the RTL (rtl/fetch_dispatch.sv): the in-order fetch stops for every
#: module while one module's queue is full (the timing engine's ``cmd_depth``; a PRE band holds the LOAD queue)
CMD_DEPTH = RTL_QUEUES["MQ_DEPTH"]


class CycleMemo:
    """:func:`generator.spec.timing.insn_cycles` for one :class:`HwConfig`, remembered per instruction content
    (opcode and every field value): a layer's tilings repeat the same LOADs, COMPUTEs and STOREs many times over,
    and the cost of an instruction is a function of its fields alone. Use as the ``cost`` of a
    :class:`~generator.spec.timing_engine.ModuleTimer` (with ``overlap=True``, the RTL's model, as
    :func:`~generator.spec.timing_engine.program_cycles` runs it): the same cycles, computed once per distinct
    instruction."""

    def __init__(self, hw: HwConfig, frame=None):
        self.hw, self.memo, self.frame = hw, {}, frame     # frame: PRE's (host.pre.PreFrame), for its cycles

    def __call__(self, hw: HwConfig, ins) -> int:
        if hw is not self.hw:
            return insn_cycles(hw, ins, self.frame)
        k = (ins.op, *ins.f.values())
        c = self.memo.get(k)
        if c is None:
            c = self.memo[k] = insn_cycles(hw, ins, self.frame)
        return c

    def cycles(self, insns: list) -> int:
        """:func:`~generator.spec.timing_engine.program_cycles` of ``insns`` without the END token check."""
        return ModuleTimer(self.hw, insns, cost=self, overlap=True).run(check_end_tokens=False)


def _exact_timing(hw: HwConfig, insns: list, memo: CycleMemo | None = None) -> tuple[int, int]:
    """(cycles, DDR bytes) of one layer's instructions run alone between CONFIG and END (``memo``: the
    instruction costs known so far)."""
    prog = [config_insn(hw)] + insns + [isa.make("END")]
    return (memo or CycleMemo(hw)).cycles(prog), ddr_bytes(hw, insns)


#: a plan may be this much slower (fraction of the fastest plan's predicted cycles) if it moves fewer DDR bytes
TRAFFIC_TOLERANCE = 0.015
#: plans timed exactly besides the ``top`` fastest by the estimate: those within this fraction of the best
#: estimate (at most :data:`MAX_EXTRA_TIMED` of them, fewest estimated DDR bytes first)
ESTIMATE_WINDOW = 0.10
MAX_EXTRA_TIMED = 40


def timed_plans(g: Graph, L: Layer, hw: HwConfig, lay: DdrLayout, top: int = 4,
                memo: CycleMemo | None = None) -> list[Plan]:
    """The plans :func:`schedule_layer` chooses from, each emitted and timed exactly (``cycles`` and ``ddr_bytes``
    set): the ``top`` best by the analytic estimate, plus up to :data:`MAX_EXTRA_TIMED` others whose estimate is
    within :data:`ESTIMATE_WINDOW` of the best, those with the fewest estimated DDR bytes first (``memo``: the
    instruction costs known so far, :class:`CycleMemo`). Raises ScheduleError if none fits."""
    views = (TensorView(g, lay, L.in_tensor, L.bits_in // 8), TensorView(g, lay, L.out_tensor, L.bits_out // 8))
    ranked = ranked_plans(L, layer_hw(hw, L), views)
    near = [p for p in ranked[top:] if p.estimate <= (1 + ESTIMATE_WINDOW) * ranked[0].estimate]
    near.sort(key=lambda p: p.est_bytes)
    chosen = ranked[:top] + near[:MAX_EXTRA_TIMED]
    memo = memo or CycleMemo(hw)
    for p in chosen:
        p.cycles, p.ddr_bytes = _exact_timing(hw, emit_layer(g, L, p, hw, lay), memo)
    return chosen


def schedule_layer(g: Graph, L: Layer, hw: HwConfig, lay: DdrLayout, top: int = 4,
                   tolerance: float = TRAFFIC_TOLERANCE, memo: CycleMemo | None = None) -> Plan:
    """Choose a layer's plan among :func:`timed_plans`: the fewest DDR bytes among the plans whose predicted
    cycles are within ``tolerance`` (a fraction) of the fastest, ties broken by cycles (``tolerance=0``: the
    fastest). Raises ScheduleError if none fits."""
    plans = timed_plans(g, L, hw, lay, top, memo)
    fastest = min(p.cycles for p in plans)
    return min((p for p in plans if p.cycles <= fastest * (1 + tolerance)), key=lambda p: (p.ddr_bytes, p.cycles))


@dataclass
class Program:
    """A compiled program: instructions, weights blob, DDR layout, layers with their plans and instruction
    ranges, and the timing engine's cycles of the whole frame (``cycles``) and of each layer (``layer_cycles``,
    :func:`frame_timing`; a plan's own ``cycles`` time its layer alone)."""
    insns: list
    weights: bytes
    layout: DdrLayout
    layers: list
    plans: list
    ranges: list
    hw: HwConfig
    cycles: int = 0
    layer_cycles: list = field(default_factory=list)
    #: PRE in the program (:mod:`generator.codegen.pre`): the frame registers its cycles were priced for (a
    #: :class:`host.pre.PreFrame`), None when the host writes the network input
    pre_frame: object = None
    #: PRE's resize mode (the model's, :data:`host.preprocess.RESIZE_MODES`), "" without PRE
    pre_mode: str = ""
    #: cycles of the prologue (0 without PRE)
    pre_cycles: int = 0
    #: with PRE: the prologue, a program of its own (CONFIG, PRE of the whole input, END) that writes the first
    #: frame's input; the main program (``insns``) runs the network on the input in the INPUT buffer and, in bands
    #: in its LOAD module's idle time, PRE of the frame in the registers: the next one (:mod:`generator.codegen.pre`)
    prologue: list | None = None

    @property
    def prologue_blob(self) -> bytes:
        """The encoded prologue (b"" without PRE)."""
        return isa.encode_program(self.prologue) if self.prologue else b""

    @property
    def blob(self) -> bytes:
        """The encoded instruction stream (``len(insns) * INSN_BYTES`` bytes)."""
        return isa.encode_program(self.insns)


def compile_program(g: Graph, hw: HwConfig, progress=None, tolerance: float = TRAFFIC_TOLERANCE,
                    pre: tuple | None = None) -> Program:
    """Schedule every layer, allocate DDR and emit the whole instruction stream: CONFIG, PRE (with ``pre``), per
    layer its instructions followed by a barrier SYNC, END; layers overlap at their boundaries (constants
    prefetched, the first output tile during the previous layer's drain: :mod:`generator.codegen.overlap`).
    ``tolerance``: per layer, how much slower than the fastest (a fraction) a plan that moves fewer DDR bytes may
    be (:func:`schedule_layer`). ``pre``: None (the host writes the network input, an im2col input for a folded
    first convolution) or (frame_w, frame_h): the accelerator's PRE writes it from the camera frame
    (:mod:`generator.codegen.pre`), its cycles priced for frames of that size: a prologue program for the first
    frame (:attr:`Program.prologue`) and, in the main program, the next frame's PRE in bands where the LOAD module
    would wait (:func:`generator.codegen.pre.interleave_bands`).

    Raises ScheduleError / GraphError for layers that cannot be mapped (and a model PRE cannot feed).
    """
    from generator.codegen.pre import interleave_bands, model_pixels, nominal_frame, pre_insn

    layers = [layer_of(g, n, hw) for n in g.macro_nodes()]
    lay, wblob = allocate(g, layers, hw, im2col=pre is None)
    frame = nominal_frame(g, pre) if pre is not None else None
    plans, bodies, memo = [], [], CycleMemo(hw, frame)
    for L in layers:
        plan = schedule_layer(g, L, hw, lay, tolerance=tolerance, memo=memo)
        bodies.append(emit_layer(g, L, plan, hw, lay))
        plans.append(plan)
        if progress:
            progress(L, plan)
    bases = pbuf_bases([b[0].f["elems"] for b in bodies], hw.pbuf_index)
    joined, ranges = join_layers(bodies, bases, hw, memo.cycles)   # (generator.codegen.overlap)
    insns = [config_insn(hw)] + joined + [isa.make("END")]
    ranges = [(a + 1, b + 1) for a, b in ranges]
    prologue = None
    if pre is not None:
        full = pre_insn(g, lay)
        t = ModuleTimer(hw, insns, cost=memo, overlap=True, cmd_depth=CMD_DEPTH)
        t.run()
        insns, ranges = interleave_bands(insns, ranges, full, t, lambda ins: memo(hw, ins), CMD_DEPTH)
        prologue = [config_insn(hw), full, isa.make("END")]
    check_tokens(insns)
    prog = Program(insns, wblob, lay, layers, plans, ranges, hw, pre_frame=frame,
                   pre_mode=model_pixels(g)[0] if pre is not None else "", prologue=prologue)
    prog.cycles, prog.layer_cycles = frame_timing(hw, insns, ranges, memo)
    if prologue:
        prog.pre_cycles = ModuleTimer(hw, prologue, cost=memo, overlap=True, cmd_depth=CMD_DEPTH).run()
    return prog


def frame_timing(hw: HwConfig, insns: list, ranges: list, memo: CycleMemo | None = None) -> tuple[int, list]:
    """(cycles of the whole program, cycles of each layer) with the timing engine: a layer's cycles run from the
    previous layer's end to its own, a layer ending when the store module finishes its last instruction (as the
    RTL's per-layer report counts, :func:`generator.exec.rtl.layer_report`; layers overlap at their boundaries,
    :mod:`generator.codegen.overlap`; ``memo``: the instruction costs known so far). Raises TokenError for a
    program that cannot run. The fetch is modelled with the RTL's command queues (:data:`CMD_DEPTH`)."""
    t = ModuleTimer(hw, insns, cost=memo or CycleMemo(hw), overlap=True, cmd_depth=CMD_DEPTH)
    total = t.run()
    ends = [int(max(t.end[k] for k in range(a, b) if insns[k].module == "store")) for a, b in ranges]
    return total, [e - p for e, p in zip(ends, [0] + ends[:-1])]


def check_tokens(insns: list) -> dict:
    """Check a program's dependency tokens against the hardware's FIFOs: counted in program order (each
    instruction's pops, then its pushes), no FIFO may hold more than :data:`generator.spec.isa.TOKEN_QUEUE_DEPTH`
    tokens, and the pushes and pops of every FIFO must balance at END (else the hardware reports TOKEN_OVERFLOW /
    TOKENS_LEFT / WATCHDOG). Returns the largest count of each FIFO.
    Raises ScheduleError naming the instruction and the FIFO."""
    count = {c: 0 for c in ("l2c", "c2l", "c2s", "s2c")}
    peak = dict(count)
    for k, ins in enumerate(insns):
        for flag in ("pop_prev", "pop_next", "push_prev", "push_next"):
            if not ins.f.get(flag):
                continue
            ch = FIFO_OF.get((ins.module, flag))
            if ch is None:
                raise ScheduleError(f"instruction {k}: {ins.op} cannot {flag} (the {ins.module} module has no such "
                                    f"neighbour)")
            if flag.startswith("pop"):        # (may precede its push in program order: the module then waits)
                count[ch] -= 1
            else:
                if count[ch] >= isa.TOKEN_QUEUE_DEPTH:
                    raise ScheduleError(f"instruction {k}: {ins.op} pushes a token onto {ch} holding "
                                        f"{isa.TOKEN_QUEUE_DEPTH} (isa.TOKEN_QUEUE_DEPTH)")
                count[ch] += 1
                peak[ch] = max(peak[ch], count[ch])
        if ins.op == "END":
            break
    left = {c: n for c, n in count.items() if n}
    if left:
        raise ScheduleError(f"pushes minus pops of the token FIFOs at END: {left} (must be 0)")
    return peak

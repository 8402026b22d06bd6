"""Timing engine: when each instruction of a program runs on the accelerator, and the program's cycle count.

The three modules (load, compute, store) each run their instructions in program order, concurrently,
synchronised only by the four dependency-token FIFOs (:data:`FIFO_OF`); an instruction occupies its module for
``cost(hw, insn)`` cycles (default :func:`generator.spec.timing.insn_cycles`), except that, with the RTL's cost
model (``overlap``), a POST holds the store module for :data:`POST_DISPATCH` cycle and runs on beside the STORE
after it (rtl/post.sv beside rtl/store.sv; :func:`generator.spec.timing.post_store_end` gives that STORE's end),
and a POST or END waits for the POST before it; its token pushes come at its end. Among the module queue heads that
are ready (every token they pop is available), the one that can start earliest runs first (ties: the lower
instruction index). The in-order fetch issues instruction k no earlier than ``issue[k]`` (default k: one
instruction per cycle) and, with a command-queue depth, no earlier than one cycle after issuing k - 1 and than
the cycle at which its module read the entry ``cmd_depth`` places ahead of it in its queue (a module reads its next
command when it has finished the previous instruction, before waiting for tokens), so a full queue stops the
fetch for every module.

The scheduler (:mod:`generator.codegen`) times programs with it alone; the golden simulator
(:mod:`generator.exec.golden`) executes each instruction's data effect when it starts (``on_start``), so a missing
token shows up as wrong data, as on the FPGA; :mod:`generator.estimate.hls_cycles` runs it with the HLS kernel's
cost per instruction.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.spec.timing import insn_cycles, post_store_end

#: the modules, in the order the engine looks at their queue heads
MODULES = ("load", "compute", "store")
#: the token FIFO each flag of each module refers to (VTA-style: prev/next module in load -> compute -> store;
#: l2c = load to compute, c2l = compute to load, c2s, s2c likewise)
FIFO_OF = {("load", "pop_next"): "c2l", ("load", "push_next"): "l2c",
           ("compute", "pop_prev"): "l2c", ("compute", "push_prev"): "c2l",
           ("compute", "pop_next"): "s2c", ("compute", "push_next"): "c2s",
           ("store", "pop_prev"): "c2s", ("store", "push_prev"): "s2c"}
TOKEN_FIFOS = ("l2c", "c2l", "c2s", "s2c")
#: cycles a POST holds the store module's dispatch (the STORE after it starts the next cycle)
POST_DISPATCH = 1


class TokenError(RuntimeError):
    """A program the modules cannot run through (the hardware stops with an error status too).

    Attributes:
        status: name of the status bit the hardware reports (:data:`generator.spec.isa.STATUS_BITS`):
            ILLEGAL_OPCODE, WATCHDOG, TOKEN_OVERFLOW or TOKENS_LEFT.
        insn: index of the offending instruction, or None for a whole-program condition.
    """

    def __init__(self, msg: str, status: str, insn: int | None = None):
        super().__init__(msg)
        self.status, self.insn = status, insn


class ModuleTimer:
    """Runs the module / token schedule of ``insns`` (up to the first END).

    Args: hw: configuration passed to ``cost``; cost(hw, insn) -> cycles (default
    :func:`generator.spec.timing.insn_cycles`); issue: earliest start cycle of each instruction (default k);
    cmd_depth: depth of each module's command queue (None: unbounded); frame: PRE's frame registers
    (:class:`host.pre.PreFrame`) for the default cost; see the module docstring.

    After :meth:`run`: ``cycles`` (until every module is idle), ``start`` / ``end`` (int64 [len(insns)], cycle of
    each instruction; 0 after END), ``busy`` / ``stall`` (module -> cycles executing / waiting for tokens).
    """

    def __init__(self, hw: HwConfig, insns: list, cost=None, issue=None, cmd_depth: int | None = None,
                 overlap: bool | None = None, frame=None):
        self.hw, self.insns, self.cmd_depth = hw, insns, cmd_depth
        self.cost = cost or (lambda h, ins: insn_cycles(h, ins, frame))
        #: a STORE overlaps the POST before it (the RTL's store module and the HLS kernel's store + post modules,
        #: :func:`generator.spec.timing.post_store_end` with ``cost``); default: with the RTL's cost model only
        self.overlap = cost is None if overlap is None else overlap
        self.post = None   # the running POST: (start, end, instruction)
        self.queues = {m: deque() for m in MODULES}
        for k, ins in enumerate(insns):
            self.queues[ins.module].append(k)
            if ins.op == "END":
                break
        #: instructions the modules run (up to and including END)
        self.total = sum(len(q) for q in self.queues.values())
        self.fifo = {c: deque() for c in TOKEN_FIFOS}       # per token: the cycle it is pushed
        self.free = {m: 0 for m in MODULES}                 # cycle each module is free again
        self.busy = {m: 0 for m in MODULES}
        self.stall = {m: 0 for m in MODULES}
        self.start = np.zeros(len(insns), np.int64)
        self.end = np.zeros(len(insns), np.int64)
        self.release = np.zeros(len(insns), np.int64)       # cycle the module takes its next command after k
        self.cycles = 0
        self.issue = np.arange(len(insns), dtype=np.int64) if issue is None else np.asarray(issue, np.int64)
        self.queue_pos = np.zeros(self.total, np.int64)     # position of instruction k in its module's queue
        self.queue_list = {m: list(q) for m, q in self.queues.items()}
        for q in self.queue_list.values():
            for pos, kk in enumerate(q):
                self.queue_pos[kk] = pos
        self.dispatched = np.full(self.total, -1, np.int64)   # cycle the fetch put instruction k in its queue
        self.started = np.zeros(self.total, bool)
        self.fetch_ptr = 0

    def _dispatch_time(self, k: int) -> int | None:
        """The cycle instruction k is in its module's queue, or None while the fetch is blocked before it."""
        if self.cmd_depth is None:
            return int(self.issue[k])
        while self.fetch_ptr <= k:
            j = self.fetch_ptr
            t = int(self.issue[j]) if j == 0 else max(int(self.issue[j]), int(self.dispatched[j - 1]) + 1)
            p = int(self.queue_pos[j]) - self.cmd_depth
            if p >= 0:   # the entry cmd_depth places ahead must have been read by its module
                q = self.queue_list[self.insns[j].module]
                r = int(self.dispatched[q[p]])
                if p > 0:   # read when the module finished the instruction before it
                    if not self.started[q[p - 1]]:
                        return None
                    r = max(r, int(self.release[q[p - 1]]))
                t = max(t, r)
            self.dispatched[j] = t
            self.fetch_ptr += 1
        return int(self.dispatched[k])

    def _next(self) -> tuple[int, str, int]:
        """(start cycle, module, index) of the ready queue head that can start earliest.
        Raises TokenError: ILLEGAL_OPCODE (a pop the module cannot do), WATCHDOG (no head is ready)."""
        best = None
        for m, q in self.queues.items():
            if not q:
                continue
            k = q[0]
            ins = self.insns[k]
            d = self._dispatch_time(k)
            if d is None:
                continue
            t = max(self.free[m], d)
            if m == "store" and self.post is not None and ins.op != "STORE":
                t = max(t, self.post[1])   # one POST at a time; END after it
            ok = True
            for flag in ("pop_prev", "pop_next"):
                if ins.f[flag]:
                    ch = FIFO_OF.get((m, flag))
                    if ch is None:
                        raise TokenError(f"instruction {k}: {ins.op} cannot {flag} (the {m} module has no such "
                                         f"neighbour)", "ILLEGAL_OPCODE", k)
                    if not self.fifo[ch]:
                        ok = False
                        break
                    t = max(t, self.fifo[ch][0])
            if ok and (best is None or (t, k) < (best[0], best[2])):
                best = (t, m, k)
        if best is None:
            heads = {m: (self.insns[q[0]].op, q[0]) for m, q in self.queues.items() if q}
            raise TokenError(f"deadlock: every module waits for a dependency token; queue heads {heads}, "
                             f"tokens { {c: len(v) for c, v in self.fifo.items()} }", "WATCHDOG")
        return best

    def _execute(self, t: int, m: str, k: int, on_start) -> None:
        """Run instruction k on module m from cycle t: pop its tokens, ``on_start(k, insn)``, push its tokens.
        Raises TokenError: ILLEGAL_OPCODE (a push the module cannot do), TOKEN_OVERFLOW (onto a full FIFO)."""
        ins = self.insns[k]
        for flag in ("pop_prev", "pop_next"):
            if ins.f[flag]:
                self.fifo[FIFO_OF[(m, flag)]].popleft()
        if on_start is not None:
            on_start(k, ins)
        c = self.cost(self.hw, ins)
        self.stall[m] += t - self.free[m]
        end = t + c
        if self.overlap and ins.op == "STORE" and self.post is not None and self.post[1] > t:
            end = post_store_end(self.hw, self.post[2], self.post[0], ins, t, self.cost)
        self.start[k], self.end[k] = t, end
        self.started[k] = True
        self.free[m] = end
        self.busy[m] += end - t
        if self.overlap and ins.op == "POST":   # the store module dispatches the next STORE while it runs
            self.post = (t, end, ins)
            self.free[m] = t + POST_DISPATCH
            self.busy[m] -= c - POST_DISPATCH
        self.release[k] = self.free[m]
        for flag in ("push_prev", "push_next"):
            if ins.f[flag]:
                ch = FIFO_OF.get((m, flag))
                if ch is None:
                    raise TokenError(f"instruction {k}: {ins.op} cannot {flag} (the {m} module has no such "
                                     f"neighbour)", "ILLEGAL_OPCODE", k)
                if len(self.fifo[ch]) >= isa.TOKEN_QUEUE_DEPTH:
                    raise TokenError(f"instruction {k}: {ins.op} pushes onto the full {ch} token FIFO "
                                     f"({isa.TOKEN_QUEUE_DEPTH} tokens)", "TOKEN_OVERFLOW", k)
                self.fifo[ch].append(end)
        self.queues[m].popleft()

    def run(self, on_start=None, check_end_tokens: bool = True) -> int:
        """Schedule every instruction; ``on_start(k, insn)`` is called as each starts (after its pops, in start
        order). Returns the cycles until every module is idle. Raises TokenError (see :meth:`_next`,
        :meth:`_execute`), and TOKENS_LEFT if tokens remain at the end (not with ``check_end_tokens=False``, for
        timing program fragments)."""
        for _ in range(self.total):
            self._execute(*self._next(), on_start)
        left = {c: len(v) for c, v in self.fifo.items() if v}
        if check_end_tokens and left:
            raise TokenError(f"tokens left in the FIFOs at the end of the program: {left}", "TOKENS_LEFT")
        self.cycles = int(max(*self.free.values(), self.post[1] if self.post else 0))
        return self.cycles


def program_cycles(hw: HwConfig, insns: list, check_end_tokens: bool = True) -> int:
    """Cycles of ``insns`` (up to the first END) with :func:`generator.spec.timing.insn_cycles` per instruction.
    Raises TokenError as :meth:`ModuleTimer.run`."""
    return ModuleTimer(hw, insns).run(check_end_tokens=check_end_tokens)

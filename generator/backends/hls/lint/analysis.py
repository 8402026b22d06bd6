"""The port analysis of a kernel (rules ``pipeline-ports``, ``axis-nonblocking``, ``maxi-bundle``, ``maxi-burst`` of
:mod:`generator.backends.hls.lint`) and its per-loop records (:func:`analyse_folder`, used by
:mod:`generator.estimate.hls_cycles`).

From every top function (a function of the parsed file whose body holds ``#pragma HLS INTERFACE``) the calls are
followed with the top's memories (:mod:`generator.backends.hls.lint.memories`) bound to the callees' parameters
(:mod:`generator.backends.hls.lint.ports`, *scan*); each loop holding ``#pragma HLS PIPELINE`` is walked for one
iteration with its callees inlined and its inner loops unrolled (*loop*), giving per physical memory the reads R and
writes W of the worst exclusive alternative and the II its ports allow (``memories.port_ii``); the loop's analysed II
is the largest of these and the requested II. The loop-carried recurrences (a value computed from the previous
iteration's, e.g. an accumulator through a multi-cycle operator) are not analysed.

Depth (pipeline stages of one iteration), a documented approximation of the longest path, not a schedule:
``2`` (address / loop control, one add-compare stage) ``+ 2`` if the iteration reads a BRAM / URAM (UG573: the
memory's read latency of 1 plus its output register; the interface's ``latency=1``) ``+ 1`` if it reads an m_axi
beat or a stream (data from the adapter's FIFO) ``+ 4`` if it multiplies two non-constant operands (UG579: the
DSP48E2's A/B, M and P registers plus the routing stage) ``+ 1`` if it writes a memory.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from generator.backends.hls.lint import clang_ast
from generator.backends.hls.lint.checker import Violation
from generator.backends.hls.lint.memories import Memory, local_memory, port_ii, top_memories
from generator.backends.hls.lint.ports import Walker
from generator.backends.hls.lint.source import SourceFile
from generator.backends.hls.lint.symbolic import Bind, Frame, Sym, kids, reset_cache, strip

K = ci.CursorKind
#: pipeline stages per operation class (module docstring)
DEPTH_BASE = 2
DEPTH_OPS = {"mem_read": 2, "io_read": 1, "mul": 4, "write": 1}
PORT_RULES = ("pipeline-ports", "axis-nonblocking", "maxi-bundle", "maxi-burst")


@dataclass(frozen=True)
class LoopRecord:
    """One pipelined loop as the analysis sees it: ``label`` (``function:line`` if unlabelled), the ``function``
    holding it, ``file`` / ``line``, the ``top`` it is reached from, ``requested_ii`` (its PIPELINE pragma),
    ``ii`` (analysed: max of the ports' bounds and the request), the limiting memory ``limit`` with its ``reads``
    / ``writes`` per iteration and ``storage``, ``depth`` (module docstring), ``bounds``: (memory, storage,
    reads, writes, II) of every memory the iteration touches, largest II first."""
    label: str
    function: str
    file: str
    line: int
    top: str
    requested_ii: int
    ii: int
    limit: str
    reads: int
    writes: int
    storage: str
    depth: int
    bounds: tuple

    def ii_without(self, prefix: str) -> int:
        """The analysed II leaving out the memories whose name starts with ``prefix`` (e.g. ``"m_axi"``)."""
        return max([self.requested_ii] + [b[4] for b in self.bounds if not b[0].startswith(prefix)])


class LoopCtx:
    """The pipelined loop of a *loop* walk: its induction variable, the variables its body writes (for
    ``maxi-burst``), its frame and label."""

    def __init__(self, an, loop, frame, label, fn):
        self.an, self.frame, self.label, self.fn = an, frame, label, fn
        ch = clang_ast.children(loop)
        self.var = None
        if loop.kind == K.FOR_STMT and ch and ch[0].kind == K.DECL_STMT:
            vs = [v for v in ch[0].get_children() if v.kind == K.VAR_DECL]
            self.var = vs[0].hash if len(vs) == 1 else None
        self.written = _written(loop)

    def check_burst(self, w, mem, idx, c, fr):
        """``maxi-burst``: an m_axi pointer indexed by anything but the loop variable plus a loop-invariant (in a
        callee: its parameters followed to the loop's expressions)."""
        if self._burstable(idx, fr):
            return
        text = " ".join(t.spelling for t in idx.get_tokens())
        self.an.add("maxi-burst", c, w.fns[-1].spelling,
                    f"loop {self.label}: m_axi '{mem.name}' (bundle {mem.bundle}) indexed by '{text}', not the loop "
                    f"variable plus a loop-invariant offset: no burst is inferred, one transaction per access")

    def _resolve(self, e, fr):
        """Follow a parameter bound to the caller's expression back towards the loop's frame: (expr, frame)."""
        e = strip(e)
        while e.kind == K.DECL_REF_EXPR and e.referenced is not None and isinstance(fr.env.get(e.referenced.hash),
                                                                                    Sym):
            s = fr.env[e.referenced.hash]
            e, fr = strip(s.c), s.fr
        return e, fr

    def _is_var(self, e, fr):
        e, fr = self._resolve(e, fr)
        return fr is self.frame and e.kind == K.DECL_REF_EXPR and e.referenced is not None and \
            e.referenced.hash == self.var

    def _invariant(self, e, fr):
        for c, _ in itertools.chain([(e, ())], clang_ast.walk(e)):
            if c.kind != K.DECL_REF_EXPR or c.referenced is None:
                continue
            h = c.referenced.hash
            if isinstance(fr.env.get(h), Sym):
                s = fr.env[h]
                if not self._invariant(s.c, s.fr):
                    return False
            elif fr is self.frame and (h in self.written or h == self.var):
                return False
            elif fr is not self.frame and h in fr.tags:
                return False             # a callee's own variable
        return True

    def _burstable(self, idx, fr):
        if self.var is None:
            return False
        e, fr = self._resolve(idx, fr)
        if self._is_var(e, fr):
            return True
        ch = kids(e)
        if e.kind == K.BINARY_OPERATOR and clang_ast.binop(e) in ("+", "-") and len(ch) == 2:
            a, b = ch
            return (self._is_var(a, fr) and self._invariant(b, fr)) or \
                (clang_ast.binop(e) == "+" and self._is_var(b, fr) and self._invariant(a, fr))
        return False


def _base_var(e):
    e = clang_ast.strip(e)
    while True:
        ch = clang_ast.children(e)
        if e.kind in (K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR, K.UNARY_OPERATOR) and ch:
            e = clang_ast.strip(ch[0])
        elif e.kind == K.CALL_EXPR and ch and ch[0].kind == K.MEMBER_REF_EXPR and clang_ast.children(ch[0]):
            e = clang_ast.strip(clang_ast.children(ch[0])[0])
        else:
            return e.referenced.hash if e.kind == K.DECL_REF_EXPR and e.referenced is not None else None


def _written(loop) -> set:
    """Hashes of the variables a loop writes (assignments, increments, non-const reference / pointer arguments,
    non-const methods), syntactically."""
    out = set()
    for c, _ in clang_ast.walk(loop):
        k = c.kind
        ch = clang_ast.children(c)
        if (k == K.BINARY_OPERATOR and clang_ast.binop(c) == "=") or k == K.COMPOUND_ASSIGNMENT_OPERATOR or \
                (k == K.UNARY_OPERATOR and clang_ast.unop(c) in ("++", "--", "post++", "post--")):
            out.add(_base_var(ch[0]))
        elif k == K.CALL_EXPR and ch:
            if ch[0].kind == K.MEMBER_REF_EXPR:
                r = c.referenced
                if r is None or not r.is_const_method():
                    out.add(_base_var(ch[0]))
            elif c.spelling.startswith("operator") and c.spelling.endswith("=") and \
                    c.spelling not in ("operator==", "operator!=", "operator<=", "operator>="):
                out.add(_base_var(ch[0]))
            d = c.referenced
            if d is not None and d.kind in clang_ast.FUNCS:
                params = [p for p in d.get_children() if p.kind == K.PARM_DECL]
                for p, a in zip(params, c.get_arguments()):
                    t = p.type
                    if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.POINTER) and \
                            not t.get_pointee().is_const_qualified():
                        out.add(_base_var(a))
        elif k == K.VAR_DECL:
            out.add(c.hash)
    out.discard(None)
    return out


class Analysis:
    """The port analysis of one translation unit ``tu`` whose main file is ``path``: :meth:`run` fills
    ``loops`` (LoopRecord) and ``violations``."""

    def __init__(self, tu, path: Path):
        self.tu, self.path = tu, Path(path)
        self.sources: dict = {}
        self._scopes: dict = {}
        self._locals: dict = {}
        self._globals: dict = {}
        self.loops: list[LoopRecord] = []
        self.violations: set = set()
        self.uids = itertools.count(1 << 20)
        self.top = None
        self._constants: dict = {}
        self.maxi: dict = {}

    def add(self, rule, cursor, function, message):
        loc = cursor.location
        self.violations.add(Violation(rule, loc.file.name if loc.file else str(self.path), loc.line, function,
                                      message))

    def source(self, name: str) -> SourceFile:
        if name not in self.sources:
            self.sources[name] = SourceFile(self.tu, Path(name))
        return self.sources[name]

    def scopes(self, fn) -> dict:
        """{loop cursor hash or "fn": pragmas} of function ``fn`` (each pragma to the innermost loop body
        holding it), and "all": every pragma of its body."""
        h = fn.hash
        if h not in self._scopes:
            body = clang_ast.body(fn)
            out = {"fn": [], "all": []}
            if body is not None and fn.location.file is not None:
                loops = [c for c, _ in clang_ast.walk(body) if c.kind in clang_ast.LOOPS]
                lo, hi = body.extent.start.offset, body.extent.end.offset
                for p in self.source(fn.location.file.name).pragmas:
                    if not lo <= p.offset < hi:
                        continue
                    out["all"].append(p)
                    best, start = "fn", -1
                    for lp in loops:
                        b = clang_ast.loop_body(lp)
                        if b is not None and b.extent.start.offset <= p.offset < b.extent.end.offset \
                                and b.extent.start.offset > start:
                            best, start = lp.hash, b.extent.start.offset
                    out.setdefault(best, []).append(p)
            self._scopes[h] = out
        return self._scopes[h]

    def pipeline_ii(self, loop, fn) -> int | None:
        """The II a loop's ``#pragma HLS PIPELINE`` requests (1 by default), None if it is not pipelined. The II is
        a number or the name of a namespace-scope ``constexpr`` / ``const`` integer (UG1399, "Using Constants with
        Pragmas"), evaluated by clang. Raises ValueError naming the pragma for a name that is no such constant."""
        for p in self.scopes(fn).get(loop.hash, []):
            if p.directive == "PIPELINE" and not any(a.lower() == "off" for a in p.args):
                m = re.search(r"II\s*=\s*(\w+)", " ".join(p.args).replace(" = ", "="), re.I)
                if not m:
                    return 1
                return int(m.group(1)) if m.group(1).isdigit() else self.named_constant(m.group(1), loop)
        return None

    def named_constant(self, name: str, where) -> int:
        """The value of the namespace-scope constant integer ``name`` of the translation unit (a pragma's
        argument). Raises ValueError naming ``where``'s file and line when there is none or it is not constant."""
        if name not in self._constants:
            found = [c for c in self.tu.cursor.walk_preorder() if c.kind == K.VAR_DECL and c.spelling == name
                     and c.semantic_parent is not None and c.semantic_parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE)]
            init = clang_ast.var_init(found[0]) if found else None
            self._constants[name] = clang_ast.evaluate(init) if init is not None else None
        if self._constants[name] is None:
            raise ValueError(f"{where.location.file.name}:{where.location.line}: pragma II={name}: not a "
                             f"namespace-scope constant integer")
        return self._constants[name]

    def local_memory(self, v, fn) -> Memory | None:
        if v.hash not in self._locals:
            self._locals[v.hash] = local_memory(v, self.scopes(fn)["all"], self.top.spelling)
        return self._locals[v.hash]

    def global_memory(self, v) -> Memory | None:
        p = v.semantic_parent
        if p is None or p.kind not in (K.TRANSLATION_UNIT, K.NAMESPACE):
            return None
        if v.hash not in self._globals:
            self._globals[v.hash] = local_memory(v, [], "")
        return self._globals[v.hash]

    def maxi_use(self, mem, read, write):
        d = self.maxi.setdefault(id(mem), (mem, set()))[1]
        if read:
            d.add("read")
        if write:
            d.add("write")

    def nonblocking(self, c, mem, m, fn):
        if mem.kind == "axis":
            self.add("axis-nonblocking", c, fn.spelling,
                     f"'{m}' on '{mem.name}', an AXI4-Stream (mode=axis) port of top '{mem.top}': non-blocking "
                     f"accesses and status calls are not supported on axis interfaces")

    # ------------------------------------------------------------------------------------------------ driving
    def tops(self) -> list:
        out = []
        for c in self.tu.cursor.get_children():
            if c.kind == K.FUNCTION_DECL and c.is_definition() and c.location.file is not None and \
                    Path(c.location.file.name).resolve() == self.path.resolve():
                if any(p.directive == "INTERFACE" for p in self.scopes(c)["fn"]):
                    out.append(c)
        return out

    def run(self) -> "Analysis":
        reset_cache()
        try:
            self._run()
        finally:
            reset_cache()
        return self

    def _run(self):
        for top in self.tops():
            self.top, self.maxi = top, {}
            mems = top_memories(top, self.scopes(top)["fn"])
            fr = Frame(next(self.uids), {h: Bind(m) for h, m in mems.items()})
            Walker(self, top).st(clang_ast.body(top), fr)
            self.bundle_rule(top)

    def bundle_rule(self, top):
        """``maxi-bundle``: two m_axi arrays of one top on one bundle in the same direction."""
        by = {}
        for mem, dirs in self.maxi.values():
            for d in dirs:
                by.setdefault((mem.bundle, d), []).append(mem)
        for (bundle, d), mems in sorted(by.items(), key=lambda x: x[0]):
            names = sorted({m.name for m in mems})
            if len(names) > 1:
                self.add("maxi-bundle", top, top.spelling,
                         f"m_axi arrays {', '.join(names)} are all {'read' if d == 'read' else 'written'} on bundle "
                         f"{bundle}: one array per bundle per direction (their bursts interleave on one port)")

    def analyse_loop(self, loop, fr, label, fn, req):
        """Walk one iteration of the pipelined ``loop`` (in ``fn``, frame ``fr`` of the scan) and record it."""
        label = label or f"{fn.spelling}:{loop.location.line}"
        nf = Frame(next(self.uids), dict(fr.env), dict(fr.tags))
        w = Walker(self, fn, loop=LoopCtx(self, loop, nf, label, fn))
        w.uids = self.uids
        for x in clang_ast.children(loop):
            if x.kind == K.DECL_STMT:
                w.st(x, nf)
            elif x.kind.is_expression() or x.kind == K.UNEXPOSED_EXPR:
                w.expr(x, nf)
        body = clang_ast.loop_body(loop)
        if body is not None:
            w.st(body, nf)
        bounds = []
        for phys, alts in w.cur.items():
            mem, name = w.phys[phys]
            worst = max(((port_ii(mem.storage, r, wr), r, wr) for _, a in alts
                         for r, wr in [(sum(1 for x in a if x[0] == "r"), sum(1 for x in a if x[0] == "w"))]),
                        default=(0, 0, 0))
            bounds.append((name, mem.storage, worst[1], worst[2], worst[0]))
        bounds.sort(key=lambda b: (-b[4], b[0]))
        lim = bounds[0] if bounds else ("", "", 0, 0, 0)
        ii = max(req, lim[4])
        depth = DEPTH_BASE + sum(DEPTH_OPS[o] for o in w.ops)
        rec = LoopRecord(label, fn.spelling, loop.location.file.name, loop.location.line, self.top.spelling, req, ii,
                         lim[0], lim[2], lim[3], lim[1], depth, tuple(bounds))
        if any((r.file, r.line, r.top) == (rec.file, rec.line, rec.top) for r in self.loops):
            return
        self.loops.append(rec)
        if ii > req:
            self.add("pipeline-ports", loop, fn.spelling,
                     f"loop {label}: {lim[0]} ({lim[1]}) takes {lim[2]} read(s) and {lim[3]} write(s) per iteration: "
                     f"II={ii} at least (requested II={req})")

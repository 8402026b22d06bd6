"""The HLS rule checker on one parsed file: the violation record, the scopes of the pragmas, the pipeline rules
(``pipeline-div`` / ``pipeline-mul``) and ``loop-tripcount``; the dataflow rules are
:class:`generator.backends.hls.lint.dataflow.DataflowRules`. The rules: :mod:`generator.backends.hls.lint`."""
from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from generator.backends.hls.lint import clang_ast
from generator.backends.hls.lint.dataflow import DataflowRules
from generator.backends.hls.lint.source import SourceFile

K = ci.CursorKind
#: the rule names, as printed in each violation
RULES = ("dataflow-body", "dataflow-single-access", "pipeline-div", "pipeline-mul", "loop-tripcount")
#: the widest multiply one DSP48E2 takes (UG579): 27 x 18 bits
DSP_A, DSP_B = 27, 18


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``file:line: rule [function] message``."""
    rule: str
    file: str
    line: int
    function: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.rule} [{self.function}] {self.message}"


class Checker(DataflowRules):
    """The rules of :mod:`generator.backends.hls.lint` on one parsed file ``f``: :meth:`run` returns its
    violations."""

    def __init__(self, f: SourceFile):
        self.f = f
        self.out: list[Violation] = []
        self.usage_memo: dict = {}
        self.pipe_seen: set = set()

    def add(self, rule, cursor_or_line, function, message):
        """Record a violation of ``rule`` at a clang cursor or a line number, in ``function`` (name)."""
        line = cursor_or_line if isinstance(cursor_or_line, int) else cursor_or_line.location.line
        self.out.append(Violation(rule, self.f.name, line, function, message))

    def in_main(self, c) -> bool:
        """Whether cursor ``c`` lies in the file being checked (not in an included header)."""
        return c.location.file is not None and c.location.file.name == self.f.name

    def functions(self):
        """The function definitions of the checked file: (cursor, body) pairs."""
        def visit(c):
            for ch in c.get_children():
                if not self.in_main(ch):
                    continue
                if ch.kind in clang_ast.FUNCS and ch.is_definition():
                    yield ch
                elif ch.kind in (K.NAMESPACE, K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE, K.LINKAGE_SPEC):
                    yield from visit(ch)
        return list(visit(self.f.tu.cursor))

    def run(self) -> list[Violation]:
        """Check every function of the file against the rules (UG1399); returns the violations found."""
        for fn in self.functions():
            body = clang_ast.body(fn)
            if body is None:
                continue
            self.check_function(fn, body)
        return self.out

    # scopes: the function body and each loop body; a pragma belongs to the innermost one holding it
    def check_function(self, fn, body):
        """The rules inside one function: DATAFLOW regions, pipelined loops, trip-count pragmas."""
        loops = [c for c, _ in clang_ast.walk(body) if c.kind in clang_ast.LOOPS]
        lo, hi = body.extent.start.offset, body.extent.end.offset
        scopes = {}   # scope key -> list of pragmas; key: loop hash or "fn"
        for p in self.f.pragmas:
            if not lo <= p.offset < hi:
                continue
            best, best_start = None, -1
            for lp in loops:
                b = clang_ast.loop_body(lp)
                if b is not None and b.extent.start.offset <= p.offset < b.extent.end.offset \
                        and b.extent.start.offset > best_start:
                    best, best_start = lp, b.extent.start.offset
            scopes.setdefault(best.hash if best is not None else "fn", []).append(p)
        name = fn.spelling
        params = [c for c in fn.get_children() if c.kind == K.PARM_DECL]
        # rule 1 + 2 on dataflow regions
        if any(p.directive == "DATAFLOW" for p in scopes.get("fn", [])):
            self.check_dataflow(fn, body, name, params)
        for lp in loops:
            prags = scopes.get(lp.hash, [])
            b = clang_ast.loop_body(lp)
            if any(p.directive == "DATAFLOW" for p in prags) and b is not None:
                self.check_dataflow(fn, b, name, params)
            if any(p.directive == "PIPELINE" and not any(a.lower() == "off" for a in p.args) for p in prags) \
                    and b is not None:
                self.check_pipeline(b, name, lp.location.line, set())
            if not any(p.directive == "LOOP_TRIPCOUNT" for p in prags) and not self.constant_trip(lp):
                kind = {K.FOR_STMT: "for", K.WHILE_STMT: "while", K.DO_STMT: "do",
                        K.CXX_FOR_RANGE_STMT: "range-for"}[lp.kind]
                self.add("loop-tripcount", lp, name,
                         f"{kind} loop without a compile-time constant trip count has no #pragma HLS LOOP_TRIPCOUNT")

    # ---- rule 4
    def constant_trip(self, lp) -> bool:
        """Whether loop ``lp`` has a trip count clang can fold to a constant (else it needs LOOP_TRIPCOUNT)."""
        if lp.kind == K.CXX_FOR_RANGE_STMT:
            return True      # over an array or container: its size
        if lp.kind != K.FOR_STMT:
            return False
        # split the for header at its two top-level ';' tokens (token stream, not text)
        toks = list(lp.get_tokens())
        depth, semis, close = 0, [], None
        for t in toks:
            s = t.spelling
            if s == "(":
                depth += 1
            elif s == ")":
                depth -= 1
                if depth == 0:
                    close = t.location.offset
                    break
            elif s == ";" and depth == 1:
                semis.append(t.location.offset)
        if len(semis) != 2 or close is None:
            return False
        init = cond = inc = None
        for ch in clang_ast.children(lp)[:-1]:
            o = ch.extent.start.offset
            if o < semis[0]:
                init = ch
            elif o < semis[1]:
                cond = ch
            elif o < close:
                inc = ch
        if init is None or cond is None or inc is None:
            return False
        var = None
        if init.kind == K.DECL_STMT:
            vs = [v for v in init.get_children() if v.kind == K.VAR_DECL]
            if len(vs) != 1 or clang_ast.var_init(vs[0]) is None or not clang_ast.is_constant(clang_ast.var_init(vs[0])):
                return False
            var = vs[0]
        else:
            e = clang_ast.strip(init)
            if e.kind == K.BINARY_OPERATOR and clang_ast.binop(e) == "=":
                lhs, rhs = clang_ast.children(e)
                lhs = clang_ast.strip(lhs)
                if lhs.kind == K.DECL_REF_EXPR and clang_ast.is_constant(rhs):
                    var = lhs.referenced
            if var is None:
                return False

        def is_var(x):
            x = clang_ast.strip(x)
            return x.kind == K.DECL_REF_EXPR and x.referenced is not None and x.referenced == var

        c = clang_ast.strip(cond)
        if c.kind == K.BINARY_OPERATOR and clang_ast.binop(c) in clang_ast.COMPARE:
            a, b = clang_ast.children(c)
            if not ((is_var(a) and clang_ast.is_constant(b)) or (is_var(b) and clang_ast.is_constant(a))):
                return False
        elif c.kind == K.CALL_EXPR and c.spelling in {"operator" + o for o in clang_ast.COMPARE}:
            a, b = list(c.get_arguments())
            if not ((is_var(a) and clang_ast.is_constant(b)) or (is_var(b) and clang_ast.is_constant(a))):
                return False
        else:
            return False
        i = clang_ast.strip(inc)
        if i.kind == K.UNARY_OPERATOR and clang_ast.unop(i) in ("++", "--", "post++", "post--"):
            return is_var(clang_ast.children(i)[0])
        if i.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and clang_ast.binop(i) in ("+=", "-="):
            a, b = clang_ast.children(i)
            return is_var(a) and clang_ast.is_constant(b)
        if i.kind == K.CALL_EXPR and i.spelling in ("operator++", "operator--"):
            return is_var(list(i.get_arguments())[0])
        if i.kind == K.CALL_EXPR and i.spelling in ("operator+=", "operator-="):
            a, b = list(i.get_arguments())
            return is_var(a) and clang_ast.is_constant(b)
        return False

    # ---- rule 3
    def check_pipeline(self, body, fname, loop_line, visiting, via=""):
        """Inside a pipelined loop (and the functions it calls, ``visiting`` guarding recursion): no division or
        modulo by a non-constant and no multiply wider than 27 x 18 (one DSP48E2)."""
        for c, _ in clang_ast.walk(body):
            op, a, b = None, None, None
            if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                o = clang_ast.binop(c)
                if o in ("*", "/", "%", "*=", "/=", "%="):
                    ch = clang_ast.children(c)
                    if len(ch) == 2:
                        op, (a, b) = o, ch
            elif c.kind == K.CALL_EXPR and c.spelling in ("operator*", "operator/", "operator%", "operator*=",
                                                          "operator/=", "operator%="):
                args = list(c.get_arguments())
                if len(args) == 2:
                    op, (a, b) = c.spelling[len("operator"):], args
            elif c.kind == K.CALL_EXPR and c.referenced is not None and c.referenced.kind in clang_ast.FUNCS:
                d = c.referenced.get_definition()
                if d is not None and self.in_main(d) and d.hash not in visiting:
                    db = clang_ast.body(d)
                    if db is not None:
                        self.check_pipeline(db, d.spelling, loop_line, visiting | {d.hash},
                                            f" (called in it from line {c.location.line})" if not via else via)
            if op is None:
                continue
            line, col = self.f.op_location(a, op) or (c.location.line, c.location.column)
            key = (line, col, op)
            if key in self.pipe_seen:
                continue
            if op in ("/", "%", "/=", "%="):
                if not clang_ast.is_constant(b):
                    self.pipe_seen.add(key)
                    self.add("pipeline-div", line, fname,
                             f"'{op}' (column {col}) by a non-constant operand in the pipelined loop "
                             f"at line {loop_line}{via}")
            else:
                if clang_ast.pow2_constant(a) or clang_ast.pow2_constant(b):
                    continue                    # a shift: no DSP
                wa, wb = clang_ast.operand_width(a), clang_ast.operand_width(b)
                if wa is None or wb is None:
                    continue
                if max(wa, wb) > DSP_A or min(wa, wb) > DSP_B:
                    self.pipe_seen.add(key)
                    self.add("pipeline-mul", line, fname,
                             f"'{op}' (column {col}) of {wa} x {wb} bits exceeds a DSP48E2 "
                             f"({DSP_A} x {DSP_B}) in the pipelined loop at line {loop_line}{via}")

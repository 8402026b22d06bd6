"""The walker of the port analysis (rules ``pipeline-ports``, ``axis-nonblocking``, ``maxi-bundle``, ``maxi-burst``
of :mod:`generator.backends.hls.lint`; driven by :mod:`generator.backends.hls.lint.analysis`): one pass over a
function body with its callees inlined (array, pointer and stream parameters bound to the caller's memory,
scalars to the caller's value or expression).

Two modes. *scan* walks everything reachable from a top once (loops once, no counting): non-blocking calls on
``axis`` ports, the m_axi directions, and each pipelined loop, which it hands to the analysis. *loop* walks one
iteration of a pipelined loop: the loops in it unrolled (constant trip counts: the body once per value of the loop
variable, substituted), and every access charged to the physical memories it can reach, as a set of accesses
``(direction, index key)`` per memory (:mod:`generator.backends.hls.lint.symbolic` keys; equal keys in one
direction are one access). Accesses in exclusive arms (``if`` / ``else``, ``?:``, an ``if`` whose body leaves the
iteration and the statements after it) are alternatives: a memory keeps its alternatives' access sets and the
bound is the worst one; a plain ``if`` adds to what comes before and after.
"""
from __future__ import annotations

import itertools

import clang.cindex as ci

from generator.backends.hls.lint import clang_ast
from generator.backends.hls.lint.symbolic import (EMPTY, Bind, Frame, Sym, consistent, cyclic_residue, key, kids,
                                                  prune, strip, value)

K = ci.CursorKind
TK = ci.TypeKind
STREAM_RD = {"read", "read_nb", "operator>>"}
STREAM_WR = {"write", "write_nb", "operator<<"}
NONBLOCKING = {"read_nb", "write_nb", "empty", "full", "size"}
COMPOUND = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}
MAX_UNROLL = 4096
LEAVE = (K.RETURN_STMT, K.CONTINUE_STMT, K.BREAK_STMT)


def _leaves(s) -> bool:
    """Statement ``s`` always ends in return / continue / break."""
    if s.kind in LEAVE:
        return True
    if s.kind == K.COMPOUND_STMT:
        ch = kids(s)
        return bool(ch) and _leaves(ch[-1])
    return False


class Walker:
    """One walk (module docstring); ``an`` the :class:`generator.backends.hls.lint.analysis.Analysis` (pragmas,
    violations, loop records), ``loop`` the pipelined loop's context in *loop* mode, None in *scan* mode."""

    def __init__(self, an, fn, loop=None):
        self.an, self.loop = an, loop
        self.count = loop is not None
        self.cur: dict = {}         # physical memory -> list of access sets (alternatives)
        self.phys: dict = {}        # physical memory -> (Memory, its name in messages)
        self.ops: set = set()       # operation classes of the iteration (depth)
        self.utag = ""
        self.fns = [fn]
        self.uids = itertools.count(1)
        self.seen: set = set()

    # ---------------------------------------------------------------------------------------- statements
    def st(self, c, fr):
        k = c.kind
        if k == K.COMPOUND_STMT:
            self.block(kids(c), fr)
        elif k == K.DECL_STMT:
            for v in c.get_children():
                if v.kind == K.VAR_DECL:
                    self.decl(v, fr)
        elif k == K.IF_STMT:
            ch = kids(c)
            cond, arms = ch[0], ch[1:]
            v = value(cond, fr)
            if v is not None:
                if v:
                    self.st(arms[0], fr)
                elif len(arms) > 1:
                    self.st(arms[1], fr)
                return
            self.expr(cond, fr)
            self.branch(lambda: key(cond, fr, self.utag), [lambda a=a: self.st(a, fr) for a in arms])
        elif k in clang_ast.LOOPS:
            self.loop_stmt(c, fr, None)
        elif k == K.LABEL_STMT:
            ch = kids(c)
            if ch and ch[0].kind in clang_ast.LOOPS:
                self.loop_stmt(ch[0], fr, c.spelling)
            elif ch:
                self.st(ch[0], fr)
        elif k in LEAVE or k == K.NULL_STMT:
            for x in kids(c):
                self.expr(x, fr)
        elif k.is_expression() or k == K.UNEXPOSED_EXPR:
            self.expr(c, fr)
        else:
            for x in kids(c):
                self.st(x, fr)

    def block(self, stmts, fr):
        for i, s in enumerate(stmts):
            if s.kind == K.IF_STMT:
                ch = kids(s)
                if len(ch) == 2 and _leaves(ch[1]) and value(ch[0], fr) is None:
                    self.expr(ch[0], fr)   # if (c) { ...; return; } rest: the rest is the else arm
                    self.branch(lambda: key(ch[0], fr, self.utag),
                                [lambda: self.st(ch[1], fr), lambda: self.block(stmts[i + 1:], fr)])
                    return
            self.st(s, fr)

    def decl(self, v, fr):
        mem = self.an.local_memory(v, self.fns[-1])
        if mem is not None:
            fr.env[v.hash] = Bind(mem)
        elif v.type.is_const_qualified() and clang_ast.var_init(v) is not None:
            fr.consts.add(v.hash)
        else:
            fr.tags[v.hash] = f"{v.spelling}@{fr.uid}{self.utag}"
        for x in kids(v):
            if x.kind.is_expression() or x.kind == K.UNEXPOSED_EXPR:
                self.expr(x, fr)

    def loop_stmt(self, c, fr, label):
        if not self.count:
            ii = self.an.pipeline_ii(c, self.fns[-1])
            if ii is not None:
                self.an.analyse_loop(c, fr, label, self.fns[-1], ii)
        elif c.kind == K.FOR_STMT and self.unroll(c, fr):
            return
        for x in kids(c):
            if x.kind == K.DECL_STMT:
                self.st(x, fr)
            elif x.kind.is_expression() or x.kind == K.UNEXPOSED_EXPR:
                self.expr(x, fr)
            else:
                self.st(x, fr)

    def unroll(self, c, fr) -> bool:
        """Walk the body once per value of a for loop's variable (constant trip count); False if not constant."""
        ch = kids(c)
        if len(ch) != 4 or ch[0].kind != K.DECL_STMT:
            return False
        vs = [v for v in ch[0].get_children() if v.kind == K.VAR_DECL]
        init = clang_ast.var_init(vs[0]) if len(vs) == 1 else None
        x = value(init, fr) if init is not None else None
        if x is None:
            return False
        h, cond, inc, body = vs[0].hash, ch[1], ch[2], ch[3]
        vals = []
        while len(vals) <= MAX_UNROLL:
            fr.env[h] = x
            cv = value(cond, fr)
            if cv is None:
                fr.env.pop(h, None)
                return False
            if not cv:
                break
            vals.append(x)
            x = self._step(inc, h, fr)
            if x is None:
                fr.env.pop(h, None)
                return False
        saved = self.utag
        for v in vals:
            fr.env[h] = v
            self.utag = f"{saved}|{vs[0].spelling}={v}"
            self.st(body, fr)
        self.utag = saved
        fr.env.pop(h, None)
        return True

    @staticmethod
    def _step(inc, h, fr):
        i = strip(inc)
        ch = kids(i)
        if i.kind == K.UNARY_OPERATOR and clang_ast.unop(i) in ("++", "--", "post++", "post--"):
            return fr.env[h] + (1 if "++" in clang_ast.unop(i) else -1)
        if i.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and clang_ast.binop(i) in ("+=", "-=") and len(ch) == 2:
            d = value(ch[1], fr)
            return None if d is None else fr.env[h] + (d if clang_ast.binop(i) == "+=" else -d)
        return None

    def branch(self, cond, arms):
        """Walk the arms (callables) of a condition whose key ``cond()`` gives: the taken arm (one arm: a plain ``if``, its
        accesses always counted) or the alternative arms (then / else), each guarded by the condition's value,
        after what came before (combining only alternatives whose guards agree: the same condition in two
        statements takes the same arm)."""
        saved, results = self.cur, []
        for arm in arms:
            self.cur = {}
            arm()
            results.append(self.cur)
        self.cur = saved
        if any(results):
            cond = cond()
        for p in set().union(*results):
            alts = prune([(g | {(cond, i == 0)}, a) for i, r in enumerate(results) for g, a in r.get(p, [EMPTY])])
            before = saved.get(p)
            saved[p] = alts if before is None else \
                prune([(g | h, a | b) for g, a in before for h, b in alts if consistent(g, h)])

    # ---------------------------------------------------------------------------------------- expressions
    def expr(self, c, fr):
        c = strip(c)
        k = c.kind
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            self.access(c, fr, read=True, write=False)
        elif k in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            ch = kids(c)
            o = clang_ast.binop(c)
            if o == "=" or k == K.COMPOUND_ASSIGNMENT_OPERATOR:
                self.lval(ch[0], fr, rmw=o != "=")
                self.expr(ch[1], fr)
                return
            if o in ("*", "*=") and not any(clang_ast.pow2_constant(x) for x in ch) \
                    and not all(value(x, fr) is not None for x in ch):
                self.ops.add("mul")
            for x in ch:
                self.expr(x, fr)
        elif k == K.UNARY_OPERATOR:
            ch = kids(c)
            o = clang_ast.unop(c)
            if o in ("++", "--", "post++", "post--"):
                self.lval(ch[0], fr, rmw=True)
            elif o == "&":
                self.bind_arg(ch[0], fr)      # an address: no access (its indices read)
            else:
                for x in ch:
                    self.expr(x, fr)
        elif k == K.CONDITIONAL_OPERATOR:
            ch = kids(c)
            v = value(ch[0], fr)
            if v is not None:
                self.expr(ch[1] if v else ch[2], fr)
                return
            self.expr(ch[0], fr)
            self.branch(lambda: key(ch[0], fr, self.utag), [lambda: self.expr(ch[1], fr), lambda: self.expr(ch[2], fr)])
        elif k == K.CALL_EXPR:
            self.call(c, fr)
        elif k == K.DECL_REF_EXPR:
            return
        else:
            for x in kids(c):
                if x.kind.is_expression() or x.kind == K.UNEXPOSED_EXPR:
                    self.expr(x, fr)

    def lval(self, c, fr, rmw):
        """``c`` is written (and read first if ``rmw``)."""
        c = strip(c)
        k = c.kind
        ch = kids(c)
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            self.access(c, fr, read=rmw, write=True)
        elif k == K.MEMBER_REF_EXPR and ch:
            self.lval(ch[0], fr, rmw)                       # a field of an element
        elif k == K.CALL_EXPR and ch and ch[0].kind == K.MEMBER_REF_EXPR \
                and ch[0].spelling in clang_ast.PROXY_METHODS and kids(ch[0]):
            self.lval(kids(ch[0])[0], fr, rmw)  # x.range(hi, lo) = ...
            for a in c.get_arguments():
                self.expr(a, fr)
        elif k == K.CALL_EXPR and c.spelling in ("operator[]", "operator()") and ch:
            self.lval(ch[0], fr, rmw)
            for a in self._operands(c)[1:]:
                self.expr(a, fr)
        elif k != K.DECL_REF_EXPR:
            self.expr(c, fr)

    @staticmethod
    def _operands(c):
        return [x for x in kids(c)
                if not (strip(x).kind == K.DECL_REF_EXPR and strip(x).spelling == c.spelling)]

    def call(self, c, fr):
        ch = kids(c)
        sp, ref = c.spelling, c.referenced
        if ch and ch[0].kind == K.MEMBER_REF_EXPR:
            obj = kids(ch[0])
            self.method(c, ch[0].spelling, obj[0] if obj else None, list(c.get_arguments()), fr)
            return
        if sp.startswith("operator") and not sp.startswith("operator "):
            ops, o = self._operands(c), sp[len("operator"):]
            b = self.bind_of(ops[0], fr) if ops else None
            if b is not None and b.mem.storage == "stream" and o in (">>", "<<"):
                self.touch_stream(c, b.mem, fr, read=o == ">>")
                ops = ops[1:]
            elif o == "=" and ops:
                self.lval(ops[0], fr, rmw=False)
                ops = ops[1:]
            elif o in COMPOUND and ops:
                self.lval(ops[0], fr, rmw=True)
                ops = ops[1:]
            elif o == "*" and not any(clang_ast.pow2_constant(x) for x in ops):
                self.ops.add("mul")
            for x in ops:
                self.expr(x, fr)
            return
        if ref is not None and ref.kind in clang_ast.FUNCS and ref.kind != K.CONSTRUCTOR:
            d = ref.get_definition()
            body = clang_ast.body(d) if d is not None else None
            if body is not None and all(f.hash != d.hash for f in self.fns):
                self.inline(d, body, list(c.get_arguments()), fr)
                return
        for a in ch:          # (a construction's arguments are its children)
            if a.kind.is_expression() or a.kind == K.UNEXPOSED_EXPR:
                self.expr(a, fr)

    def method(self, c, m, obj, args, fr):
        b = self.bind_of(obj, fr) if obj is not None else None
        if b is not None and b.mem.storage == "stream":
            if m in NONBLOCKING:
                self.an.nonblocking(c, b.mem, m, self.fns[-1])
            if m in STREAM_RD or m in STREAM_WR:
                self.touch_stream(c, b.mem, fr, read=m in STREAM_RD)
        elif b is not None and b.mem.kind == "m_axi":     # hls::burst_maxi
            if m in ("read", "write"):
                self.an.maxi_use(b.mem, m == "read", m == "write")
                self.touch_stream(c, b.mem, fr, read=m == "read")
        elif obj is not None and m in clang_ast.PROXY_METHODS | {"to_uint64", "to_int64", "to_int", "to_uint"}:
            self.expr(obj, fr)
        elif obj is not None:
            self.expr(obj, fr)
        for a in args:
            self.expr(a, fr)

    def inline(self, d, body, args, fr):
        params = [p for p in d.get_children() if p.kind == K.PARM_DECL]
        nf = Frame(next(self.uids))
        for p, a in zip(params, args):
            b = self.bind_arg(a, fr)
            if b is not None:
                nf.env[p.hash] = b
                continue
            t = p.type
            if t.kind == TK.LVALUEREFERENCE and not t.get_pointee().is_const_qualified():
                self.lval(a, fr, rmw=True)
            else:
                self.expr(a, fr)
            nf.env[p.hash] = Sym(a, fr, self.utag)
        if not self.count:   # scan: each function once per binding of its memories
            sig = (d.hash, tuple(sorted((h, id(b.mem), b.prefix) for h, b in nf.env.items() if isinstance(b, Bind))))
            if sig in self.seen:
                return
            self.seen.add(sig)
        self.fns.append(d)
        self.st(body, nf)
        self.fns.pop()

    # ---------------------------------------------------------------------------------------- memories
    def bind_of(self, c, fr):
        """The Bind of the variable expression ``c`` (through ``&``, ``*``, ``->``), None if not a memory."""
        c = strip(c)
        while c.kind == K.UNARY_OPERATOR and clang_ast.unop(c) in ("&", "*"):
            c = strip(kids(c)[0])
        if c.kind != K.DECL_REF_EXPR or c.referenced is None:
            return None
        b = fr.env.get(c.referenced.hash)
        if isinstance(b, Bind):
            return b
        if c.referenced.kind == K.VAR_DECL and c.referenced.hash not in fr.tags:
            mem = self.an.global_memory(c.referenced)
            return Bind(mem) if mem is not None else None
        return None

    def _chain(self, c, fr):
        idx, b = [], strip(c)
        while b.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, i = kids(b)
            idx.insert(0, i)
            b = strip(base)
        return self.bind_of(b, fr), idx

    def bind_arg(self, a, fr):
        """An argument passing a memory (whole or a sub-array) down: its Bind (indices read), else None."""
        s = strip(a)
        while s.kind == K.UNARY_OPERATOR and clang_ast.unop(s) in ("&", "*"):
            s = strip(kids(s)[0])
        b, idx = self._chain(s, fr)
        if b is None:
            return None
        if not idx:
            return b
        if len(b.prefix) + len(idx) >= max(len(b.mem.dims), 1):
            return None                                     # an element: a value
        for i in idx:
            self.expr(i, fr)
        return Bind(b.mem, b.prefix + tuple((value(i, fr), key(i, fr, self.utag), None) for i in idx))

    def access(self, c, fr, read, write):
        b, idx = self._chain(c, fr)
        for i in idx:
            self.expr(i, fr)
        if b is None:
            return
        mem = b.mem
        if mem.kind == "m_axi":
            self.an.maxi_use(mem, read, write)
            if self.loop is not None and idx:
                self.loop.check_burst(self, mem, idx[-1], c, fr)
        if not self.count or mem.storage == "reg":
            return
        items = list(b.prefix) + [(value(i, fr), key(i, fr, self.utag), i) for i in idx]
        if mem.kind == "m_axi":
            self.charge((mem.physical(),), mem, mem.physical(), [f"{mem.name}[{items[-1][1] if items else '*'}]"],
                        read, write)
            return
        choices, keys = [], []
        for d in range(1, max(len(mem.dims), len(items)) + 1):
            it = items[d - 1] if d - 1 < len(items) else None
            if d in mem.part:
                typ, factor = mem.part[d]
                if it is not None and it[0] is not None:
                    choices.append([mem.bank_of(d, it[0])])
                elif it is not None and typ == "cyclic" and it[2] is not None and \
                        cyclic_residue(it[2], fr, factor) is not None:
                    choices.append([cyclic_residue(it[2], fr, factor)])
                else:
                    choices.append(list(range(mem.banks(d))))
                keys.append(it[1] if it else "*")   # (two different indices onto one bank: two accesses)
            elif not (d in mem.reshape and mem.reshape[d][0] == "complete"):
                keys.append(it[1] if it else "*")
        for banks in itertools.product(*choices):
            name = mem.name if not banks else \
                f"{mem.name} bank {banks[0]}" if len(banks) == 1 else f"{mem.name} bank {banks}"
            self.charge((mem.name, banks), mem, name, keys, read, write)

    def touch_stream(self, c, mem, fr, read):
        if self.count:
            self.charge((mem.physical(),), mem, mem.physical() if mem.kind == "m_axi" else f"stream {mem.name}",
                        [f"@{c.extent.start.offset}:{fr.uid}{self.utag}"], read, not read)

    def charge(self, phys, mem, name, keys, read, write):
        k = "/".join(keys)
        acc = frozenset(([("r", k)] if read else []) + ([("w", k)] if write else []))
        self.phys[phys] = (mem, name)
        if read:
            self.ops.add("io_read" if mem.kind in ("m_axi", "axis", "fifo") else "mem_read")
        if write:
            self.ops.add("write")
        alts = self.cur.get(phys)
        self.cur[phys] = [(frozenset(), acc)] if alts is None else [(g, a | acc) for g, a in alts]

"""Expressions of the port analysis (:mod:`generator.backends.hls.lint.ports`) after unrolling: their integer value
when the unrolled loop variables (and the constant arguments of inlined callees) make them constant
(:func:`value`), a canonical text that two accesses share exactly when their index is the same expression of the
same runtime values in one iteration (:func:`key`), and the bank of a cyclic partition an index provably selects
(:func:`cyclic_residue`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import clang.cindex as ci

from generator.backends.hls.lint import clang_ast

K = ci.CursorKind
_CASTS = (K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR,
          K.CXX_CONST_CAST_EXPR)


class Sym:
    """A callee's parameter bound to the caller's argument expression ``c`` in the caller's frame (value and key
    computed when first needed, while the callee is walked: the caller's frame is unchanged meanwhile)."""
    __slots__ = ("c", "fr", "utag", "_v", "_k")

    def __init__(self, c, fr, utag):
        self.c, self.fr, self.utag, self._v, self._k = c, fr, utag, False, None

    def value(self):
        if self._v is False:
            self._v = value(self.c, self.fr)
        return self._v

    def key(self):
        if self._k is None:
            self._k = key(self.c, self.fr, self.utag)
        return self._k


@dataclass
class Bind:
    """An array / pointer / stream parameter (or local) bound to a memory, ``prefix`` the indices the caller fixed
    (``(value or None, key)`` each: a sub-array passed down)."""
    mem: object
    prefix: tuple = ()


@dataclass
class Frame:
    """One inlined function body: ``env`` {declaration hash: int | Sym | Bind}, ``tags`` the keys of its
    non-constant locals (unique per inlined call and unrolled iteration), ``consts`` the constant locals declared
    in the walked iteration (their key is their initializer's; a constant declared before the loop is
    loop-invariant: its name), ``uid`` the call's number."""
    uid: int
    env: dict = field(default_factory=dict)
    tags: dict = field(default_factory=dict)
    consts: set = field(default_factory=set)


_KIDS: dict = {}
_STRIP: dict = {}
_EXPRS: dict = {}
_CONST: dict = {}
_INIT: dict = {}


def reset_cache() -> None:
    """Forget the cached children / stripped forms (call before and after one translation unit's analysis: the
    caches hold cursors of one translation unit, :func:`_cached`)."""
    for d in (_KIDS, _STRIP, _EXPRS, _CONST, _INIT):
        d.clear()


def _cached(cache: dict, c, make):
    """``make(c)`` memoized per cursor: ``cache`` maps libclang's cursor hash to [(cursor, value)], and a cursor
    is found by clang's cursor equality within its bucket (two cursors can share a hash: keyed by the hash alone,
    one would get the other's children, an intermittent wrong analysis)."""
    bucket = cache.setdefault(c.hash, [])
    for cur, val in bucket:
        if cur == c:
            return val
    val = make(c)
    bucket.append((c, val))
    return val


def kids(c) -> list:
    """:func:`clang_ast.children`, cached per cursor."""
    return _cached(_KIDS, c, lambda x: list(x.get_children()))


def _strip1(c):
    ch = kids(c)
    k = c.kind
    if k in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(ch) == 1:
        return ch[0]
    if k == K.CALL_EXPR:
        if c.spelling.startswith("operator ") and len(ch) == 1 and ch[0].kind == K.MEMBER_REF_EXPR and kids(ch[0]):
            return kids(ch[0])[0]       # implicit a.operator long long()
        r = c.referenced
        if r is None or r.kind == K.CONSTRUCTOR:
            ex = [x for x in ch if x.kind.is_expression() or x.kind == K.UNEXPOSED_EXPR]
            if len(ex) == 1:
                return ex[0]             # a copy / conversion construction of one value
    return None


def strip(c):
    """:func:`clang_ast.strip` (parentheses, implicit casts, conversion operators), and value-preserving
    constructions (an implicit copy / conversion constructor of one argument, as ``ap_uint<32>(long long)``);
    cached per cursor."""
    def make(x):
        while True:
            n = _strip1(x)
            if n is None:
                return x
            x = n
    return _cached(_STRIP, c, make)


def _is_const_var(r) -> bool:
    return _cached(_CONST, r, lambda x: x.kind == K.VAR_DECL and (x.type.is_const_qualified() or any(
        t.spelling == "constexpr" for t in x.get_tokens())))


def _init(r):
    return _cached(_INIT, r, clang_ast.var_init)


def _expr_children(c) -> list:
    return _cached(_EXPRS, c, lambda x: [y for y in kids(x) if y.kind.is_expression() or y.kind == K.UNEXPOSED_EXPR])


def _binop(o, a, b):
    if o in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if o == "/" else a - q * b
    if o in ("<<", ">>") and not 0 <= b < 512:
        return None
    ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<<": lambda: a << b, ">>": lambda: a >> b,
           "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b, "<": lambda: int(a < b),
           ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "==": lambda: int(a == b),
           "!=": lambda: int(a != b)}
    f = ops.get(o)
    return f() if f else None


def value(c, fr: Frame, depth: int = 0) -> int | None:
    """The integer value of expression ``c`` in frame ``fr`` (unrolled loop variables and constant parameters
    bound), else None."""
    if depth > 40:
        return None
    c = strip(c)
    k = c.kind
    if k in (K.INTEGER_LITERAL, K.CHARACTER_LITERAL, K.CXX_BOOL_LITERAL_EXPR, K.CXX_UNARY_EXPR):
        v = clang_ast.evaluate(c)
        return None if v is None else int(v)
    if k == K.DECL_REF_EXPR:
        r = c.referenced
        if r is None:
            return None
        v = fr.env.get(r.hash)
        if v is not None:
            if isinstance(v, Sym):
                return v.value()
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if r.kind == K.ENUM_CONSTANT_DECL:
            return r.enum_value
        if r.kind == K.TEMPLATE_NON_TYPE_PARAMETER:
            return clang_ast.evaluate(c)
        if _is_const_var(r) and r.hash not in fr.tags:
            init = _init(r)
            return None if init is None else value(init, fr, depth + 1)
        return None
    ch = _expr_children(c)
    if k == K.BINARY_OPERATOR and len(ch) == 2:
        o = clang_ast.binop(c)
        a = value(ch[0], fr, depth + 1)
        if o in ("&&", "||"):
            if a is not None and (not a if o == "&&" else a):
                return int(bool(a))
            b = value(ch[1], fr, depth + 1)
            return None if a is None or b is None else int(bool(b))
        b = value(ch[1], fr, depth + 1) if a is not None else None
        return None if b is None else _binop(o, a, b)
    if k == K.UNARY_OPERATOR and len(ch) == 1:
        o = clang_ast.unop(c)
        a = value(ch[0], fr, depth + 1)
        if a is None:
            return None
        return {"-": -a, "+": a, "~": ~a, "!": int(not a)}.get(o)
    if k == K.CONDITIONAL_OPERATOR and len(ch) == 3:
        cv = value(ch[0], fr, depth + 1)
        return None if cv is None else value(ch[1] if cv else ch[2], fr, depth + 1)
    if k in _CASTS and ch:
        return value(ch[-1], fr, depth + 1)
    if k == K.CALL_EXPR and c.referenced is not None and c.referenced.kind == K.CONSTRUCTOR:
        return value(ch[0], fr, depth + 1) if len(ch) == 1 else None
    return None


def key(c, fr: Frame, utag: str, depth: int = 0) -> str:
    """The canonical text of expression ``c`` in frame ``fr`` (``utag``: the unrolled iteration): constants by
    value, constant locals by their initializer, parameters by the caller's argument, other locals of the
    iteration by a per-iteration tag, anything not understood by a tag unique to this place and iteration."""
    v = value(c, fr)
    if v is not None:
        return str(v)
    c = strip(c)
    k = c.kind
    uniq = f"?{c.extent.start.offset}@{fr.uid}{utag}"
    if depth > 30:
        return uniq
    if k == K.DECL_REF_EXPR:
        r = c.referenced
        if r is None:
            return uniq
        b = fr.env.get(r.hash)
        if isinstance(b, Sym):
            return b.key()
        if isinstance(b, Bind):
            return "&" + b.mem.name
        if r.hash in fr.tags:
            return fr.tags[r.hash]
        if r.hash in fr.consts and _init(r) is not None:
            return key(_init(r), fr, utag, depth + 1)
        return f"{r.spelling}:{r.location.line}"
    ch = _expr_children(c)
    if k == K.BINARY_OPERATOR and len(ch) == 2:
        return f"({key(ch[0], fr, utag, depth + 1)}{clang_ast.binop(c)}{key(ch[1], fr, utag, depth + 1)})"
    if k == K.UNARY_OPERATOR and len(ch) == 1:
        return f"{clang_ast.unop(c)}({key(ch[0], fr, utag, depth + 1)})"
    if k == K.CONDITIONAL_OPERATOR and len(ch) == 3:
        return "(" + "?".join(key(x, fr, utag, depth + 1) for x in ch) + ")"
    if k in _CASTS and ch:
        return key(ch[-1], fr, utag, depth + 1)
    if k == K.MEMBER_REF_EXPR and ch:
        return f"{key(ch[0], fr, utag, depth + 1)}.{c.spelling}"
    if k == K.ARRAY_SUBSCRIPT_EXPR and len(ch) == 2:
        return f"{key(ch[0], fr, utag, depth + 1)}[{key(ch[1], fr, utag, depth + 1)}]"
    if k == K.CALL_EXPR and c.referenced is not None and c.referenced.kind == K.CONSTRUCTOR and len(ch) == 1:
        return key(ch[0], fr, utag, depth + 1)
    return uniq


def cyclic_residue(c, fr: Frame, factor: int, depth: int = 0) -> int | None:
    """The bank ``c mod factor`` when ``c`` is provably ``k * factor + constant`` (a sum whose terms are
    constants or products / left shifts by a constant multiple of ``factor``), else None."""
    if depth > 20 or factor <= 0:
        return None
    v = value(c, fr)
    if v is not None:
        return v % factor
    c = strip(c)
    ch = _expr_children(c)
    if c.kind == K.BINARY_OPERATOR and len(ch) == 2:
        o = clang_ast.binop(c)
        if o in ("+", "-"):
            a, b = (cyclic_residue(x, fr, factor, depth + 1) for x in ch)
            return None if a is None or b is None else (a + b if o == "+" else a - b) % factor
        if o == "*":
            for x in ch:
                m = value(x, fr)
                if m is not None and m % factor == 0:
                    return 0
        if o == "<<":
            s = value(ch[1], fr)
            if s is not None and 0 <= s < 64 and (1 << s) % factor == 0:
                return 0
        return None
    if c.kind in _CASTS and ch:
        return cyclic_residue(ch[-1], fr, factor, depth + 1)
    if c.kind == K.DECL_REF_EXPR and c.referenced is not None and _is_const_var(c.referenced) \
            and c.referenced.hash not in fr.tags and _init(c.referenced) is not None:
        return cyclic_residue(_init(c.referenced), fr, factor, depth + 1)
    return None


#: alternatives kept per memory by :func:`prune`
MAX_ALTS = 12


def prune(alts):
    """The alternatives of the port analysis's walker are (guards, accesses): drop one whose accesses another holds under fewer guards; keep the
    MAX_ALTS with most accesses."""
    alts = sorted(set(alts), key=lambda a: (-len(a[1]), len(a[0])))
    out = []
    for g, a in alts:
        if not any(a <= b and h <= g for h, b in out):
            out.append((g, a))
    return out[:MAX_ALTS]


def consistent(g, h) -> bool:
    """Two guard sets {(condition key, taken)} do not contradict each other."""
    return not any((k, not v) in h for k, v in g)


EMPTY = (frozenset(), frozenset())

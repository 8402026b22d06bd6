"""Checker of the Vitis HLS coding rules the kernel must follow, on the C++ as clang parses it (libclang, PyPI
``libclang``), not on regular expressions. HLS pragmas are not in the clang AST: they are found in the libclang
token stream of the file (``#`` ``pragma`` ``HLS`` ``<DIRECTIVE>`` on one line, outside the preprocessor's skipped
ranges) and belong to the innermost loop body, else the function body, whose extent holds them.

Rules (UG1399 = Vitis High-Level Synthesis User Guide; UG1448 = Vitis HLS Messaging):

``dataflow-body`` (UG1399 "Canonical Forms" and "Dataflow Checking"; UG1448 200-471, 214-108 and 214-169
"Dataflow Canonical Rules": the region is a sequence of function calls passing variables forward; variable
initialization and expressions passed by value to processes are not part of the canonical form). In every function
or loop body holding ``#pragma HLS DATAFLOW`` the body holds only (a) calls of functions, each argument a
variable, ``&variable``, ``variable[constant]`` or a compile-time constant, (b) declarations whose initializer, if
any, is a compile-time constant or a constructor call with constant arguments (local streams, arrays, variables),
(c) the pragma lines and empty statements. Anything else (an assignment, ``if``, a loop, ``return``, an increment,
an expression that is not a plain call, an argument that computes) is a violation, one per statement or argument.

``dataflow-single-access`` (UG1399 "Limitations of Control-Driven Task-Level Parallelism", "Single-producer-
consumer Violations"; UG1448 214-169 and 200-992: "variables (except scalars) can only have one reading process and
one writing process"). In such a region each buffer -- a local of the region or a parameter of the function, of
array or pointer type (or a reference to one), or an ``hls::stream`` -- is written by at most one of the called
functions and read by at most one. Whether a call reads or writes it follows the callee's parameter: a pointer /
array to const or a ``const T&`` only reads; otherwise the callee's body decides, recursively through every
function it passes the parameter to: ``.read()``, ``read_nb``, ``>>`` on a stream read it, ``.write()``,
``write_nb``, ``<<`` write it; an element of an array / pointer (or its ``range()`` / ``[]`` proxy, or a field) on
the left of ``=`` is written, on the left of a compound assignment or under ``++`` / ``--`` read and written,
anywhere else read. A callee without a body reads and writes a non-const buffer. Scalars are not buffers. Element
indices are not tracked: two processes writing different elements of one array are two writers. The violation is
reported at the call of the second writer (reader).

``pipeline-div`` / ``pipeline-mul`` (UG1399 "pragma HLS pipeline" and "Loop Pipelining": a pipelined loop unrolls
the loops below it and starts an iteration every II cycles, so a divider -- a multi-cycle core unless the divisor
is a constant -- or a multiply wider than one DSP48E2 -- 27 x 18 bits, UG579; wider ones cascade several DSPs and
add latency -- sets the II and the clock; "Arbitrary Precision (AP) Data Types": size operands to the hardware).
Inside a loop whose body holds ``#pragma HLS PIPELINE`` (not ``off``) -- its whole body, the loops nested in it
and, transitively, the bodies of the functions of the same file called there (HLS inlines or pipelines them into
the loop; a PIPELINE pragma at function level is not a loop and is not checked) -- there is no ``/`` or ``%`` (nor
``/=``, ``%=``) whose right operand is not a compile-time constant: an integer literal, an enumerator, a template
parameter, ``sizeof``, a ``constexpr`` or ``const`` variable with a constant initializer, and operators / casts
over those (any constant, so a power of two, is fine); and no ``*`` / ``*=`` whose operands are wider than a
DSP48E2 takes: with widths a, b of the two operands, a violation when max(a, b) > 27 or min(a, b) > 18. An
operand's width is its declared type's (implicit conversions removed; an explicit cast counts): ``bool`` 1,
``char`` 8, ``short`` 16, ``int`` 32, ``long`` / ``long long`` 64, ``ap_int<N>`` / ``ap_uint<N>`` N (the template
argument of the canonical type), enums 32; a compile-time constant operand counts by the bit length of its value.
Operands of unknown width (floating point, dependent types) are not judged, nor is a multiplication by a constant
power of two (a shift, no DSP: "a power-of-two constant is fine" read for ``*`` as for ``/``).

``loop-tripcount`` (UG1399 "pragma HLS loop_tripcount": the latency of a loop whose bound is an input or a
computed value is unknown in the reports without it; the pragma is placed in the body of the loop). Every
``for`` / ``while`` / ``do`` loop whose trip count is not a compile-time constant holds ``#pragma HLS
LOOP_TRIPCOUNT`` directly in its body (not only in a loop nested in it). A ``for`` loop has a constant trip count
when its init sets one loop variable to a constant, its condition compares that variable with a constant (``<``,
``<=``, ``>``, ``>=``, ``!=``) and its increment is ``++`` / ``--`` or ``+=`` / ``-=`` a constant; ``while`` and
``do`` loops never have one (a range-for always has).

The synthesis code path is parsed: ``-x c++ -std=c++14 -D__SYNTHESIS__`` with stub ``ap_int.h``, ``ap_fixed.h``
and ``hls_stream.h`` (written by :func:`write_stubs` into a temporary folder ahead of the include path: just the
declarations the checks need -- ``ap_int<N>`` / ``ap_uint<N>`` with their conversions, ``range()``, ``[]``,
compound assignments; ``hls::stream<T>`` with ``read`` / ``write`` / ``read_nb`` / ``write_nb`` / ``>>`` / ``<<``
/ ``empty`` / ``full`` / ``size``), since the open ``ap_common.h`` stops with ``#error`` under ``__SYNTHESIS__``.
With ``stubs=False`` the real headers on the include path are parsed instead, without ``__SYNTHESIS__`` (select
the synthesis path with a project macro then, e.g. the kernel's ``-DACCEL_DATAFLOW``). The wheel's libclang has
no compiler headers (``stddef.h``): the installed gcc's are added. A parse error is a :class:`LintError`.

CLI: ``python -m generator.backends.hls_lint DIR [-I DIR] [-D MACRO[=V]] [--real-headers]`` checks ``DIR/*.cpp`` (or the
given files; a folder's testbenches -- ``tb*.cpp``, ``*_tb.cpp``, ``*test*.cpp`` -- are left out; each source's
folder is on the include path), prints ``file:line: rule [function] message`` per violation and exits 1 if there
is any (2 with one ``error: ...`` line when a source does not parse).
"""
from __future__ import annotations

import argparse
import bisect
import ctypes
import functools
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

K = ci.CursorKind
RULES = ("dataflow-body", "dataflow-single-access", "pipeline-div", "pipeline-mul", "loop-tripcount")
DSP_A, DSP_B = 27, 18


@dataclass(frozen=True)
class Violation:
    rule: str
    file: str
    line: int
    function: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.rule} [{self.function}] {self.message}"


class LintError(RuntimeError):
    """The sources do not parse (libclang error diagnostics), or a source is missing."""


# ---------------------------------------------------------------------------------------------- libclang glue
_lib = ci.conf.lib
_lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
_lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
_lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
_lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
_lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
_lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
_lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
_lib.clang_EvalResult_getKind.restype = ctypes.c_int
_lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
_lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
_lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
_lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
_lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
_lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
_lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
_lib.clang_EvalResult_dispose.restype = None


class _RangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]


_lib.clang_getSkippedRanges.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_lib.clang_getSkippedRanges.restype = ctypes.POINTER(_RangeList)
_lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_RangeList)]
_lib.clang_disposeSourceRangeList.restype = None

# CXBinaryOperatorKind / CXUnaryOperatorKind (clang-c/Index.h, clang >= 17)
_BINOPS = {3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 10: "<=>", 11: "<", 12: ">", 13: "<=",
           14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&", 21: "||", 22: "=", 23: "*=",
           24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=", 29: ">>=", 30: "&=", 31: "^=", 32: "|=", 33: ","}
_UNOPS = {1: "post++", 2: "post--", 3: "++", 4: "--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~", 10: "!"}
_COMPARE = {"<", "<=", ">", ">=", "!="}
_LOOPS = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT, K.CXX_FOR_RANGE_STMT)
_FUNCS = (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR, K.DESTRUCTOR)
_STREAM_READ = {"read", "read_nb", "operator>>"}
_STREAM_WRITE = {"write", "write_nb", "operator<<"}
_PROXY_METHODS = {"range", "operator[]", "operator()", "bit", "get_bit"}   # element access that can be assigned


def _binop(c) -> str:
    return _BINOPS.get(_lib.clang_getCursorBinaryOperatorKind(c), "?")


def _unop(c) -> str:
    return _UNOPS.get(_lib.clang_getCursorUnaryOperatorKind(c), "?")


def _evaluate(c) -> int | None:
    """The integer value of a constant expression (clang's evaluator), else None."""
    r = _lib.clang_Cursor_Evaluate(c)
    if not r:
        return None
    try:
        if _lib.clang_EvalResult_getKind(r) != 1:   # CXEval_Int
            return None
        if _lib.clang_EvalResult_isUnsignedInt(r):
            return int(_lib.clang_EvalResult_getAsUnsigned(r))
        return int(_lib.clang_EvalResult_getAsLongLong(r))
    finally:
        _lib.clang_EvalResult_dispose(r)


# ---------------------------------------------------------------------------------------------- stub headers
_STUB_AP_INT = r"""// generated by generator/backends/hls_lint.py: declarations only, for parsing the synthesis path
#ifndef HLS_LINT_AP_INT_H
#define HLS_LINT_AP_INT_H
template <int W, bool S> struct ap_range_ref;
template <int W, bool S> struct ap_bit_ref;
template <int W, bool S> struct ap_int_base {
    ap_int_base();
    ap_int_base(long long v);
    ap_int_base(const char *s, int radix);
    template <int W2, bool S2> ap_int_base(const ap_int_base<W2, S2> &v);
    operator long long() const;
    ap_range_ref<W, S> range(int hi, int lo);
    ap_range_ref<W, S> range(int hi, int lo) const;
    ap_range_ref<W, S> operator()(int hi, int lo);
    ap_bit_ref<W, S> operator[](int i);
    ap_bit_ref<W, S> operator[](int i) const;
    ap_bit_ref<W, S> bit(int i);
    bool get_bit(int i) const;
    unsigned long long to_uint64() const;
    long long to_int64() const;
    int to_int() const;
    unsigned to_uint() const;
    long to_long() const;
    unsigned long to_ulong() const;
    bool to_bool() const;
    int length() const;
    ap_range_ref<W, S> range();
    ap_range_ref<W, S> range() const;
    bool and_reduce() const;
    bool or_reduce() const;
    bool xor_reduce() const;
    bool nand_reduce() const;
    bool nor_reduce() const;
    bool xnor_reduce() const;
    bool iszero() const;
    bool is_zero() const;
    bool sign() const;
    int countLeadingZeros() const;
    void set(int i);
    void clear(int i);
    void set_bit(int i, bool v);
    void invert(int i);
    void reverse();
    ap_int_base &operator+=(long long v);
    ap_int_base &operator-=(long long v);
    ap_int_base &operator*=(long long v);
    ap_int_base &operator/=(long long v);
    ap_int_base &operator%=(long long v);
    ap_int_base &operator&=(long long v);
    ap_int_base &operator|=(long long v);
    ap_int_base &operator^=(long long v);
    ap_int_base &operator<<=(long long v);
    ap_int_base &operator>>=(long long v);
    ap_int_base &operator++();
    ap_int_base &operator--();
    ap_int_base operator++(int);
    ap_int_base operator--(int);
};
template <int W, bool S> struct ap_range_ref {
    operator long long() const;
    ap_range_ref &operator=(long long v);
    ap_range_ref &operator=(const ap_range_ref &v);
    unsigned long long to_uint64() const;
    long long to_int64() const;
    int to_int() const;
    unsigned to_uint() const;
};
template <int W, bool S> struct ap_bit_ref {
    operator bool() const;
    ap_bit_ref &operator=(long long v);
    ap_bit_ref &operator=(const ap_bit_ref &v);
};
template <int W> struct ap_int : ap_int_base<W, true> {
    ap_int();
    ap_int(long long v);
    ap_int(const char *s, int radix);
    template <int W2, bool S2> ap_int(const ap_int_base<W2, S2> &v);
    template <int W2, bool S2> ap_int(const ap_range_ref<W2, S2> &v);
    template <int W2, bool S2> ap_int(const ap_bit_ref<W2, S2> &v);
};
template <int W> struct ap_uint : ap_int_base<W, false> {
    ap_uint();
    ap_uint(long long v);
    ap_uint(const char *s, int radix);
    template <int W2, bool S2> ap_uint(const ap_int_base<W2, S2> &v);
    template <int W2, bool S2> ap_uint(const ap_range_ref<W2, S2> &v);
    template <int W2, bool S2> ap_uint(const ap_bit_ref<W2, S2> &v);
};
#endif
"""

_STUB_AP_FIXED = r"""// generated by generator/backends/hls_lint.py: declarations only
#ifndef HLS_LINT_AP_FIXED_H
#define HLS_LINT_AP_FIXED_H
#include "ap_int.h"
template <int W, int I, int Q = 0, int O = 0, int N = 0> struct ap_fixed {
    ap_fixed();
    ap_fixed(double v);
    operator double() const;
};
template <int W, int I, int Q = 0, int O = 0, int N = 0> struct ap_ufixed {
    ap_ufixed();
    ap_ufixed(double v);
    operator double() const;
};
#endif
"""

_STUB_HLS_STREAM = r"""// generated by generator/backends/hls_lint.py: declarations only
#ifndef HLS_LINT_HLS_STREAM_H
#define HLS_LINT_HLS_STREAM_H
namespace hls {
template <typename T, int D = 0> class stream {
  public:
    stream();
    stream(const char *name);
    T read();
    void read(T &v);
    bool read_nb(T &v);
    void write(const T &v);
    bool write_nb(const T &v);
    void operator>>(T &v);
    void operator<<(const T &v);
    bool empty() const;
    bool full() const;
    unsigned size() const;
};
}  // namespace hls
#endif
"""

STUBS = {"ap_int.h": _STUB_AP_INT, "ap_fixed.h": _STUB_AP_FIXED, "hls_stream.h": _STUB_HLS_STREAM}


def write_stubs(d: str | Path) -> Path:
    """Write the stub headers (:data:`STUBS`) into ``d``; returns ``d``."""
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    for name, text in STUBS.items():
        (d / name).write_text(text)
    return d


# ---------------------------------------------------------------------------------------------- AST helpers
def _children(c) -> list:
    return list(c.get_children())


def _strip(c):
    """Remove parentheses, implicit casts / cleanups and implicit conversion-operator calls."""
    while True:
        ch = _children(c)
        if c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(ch) == 1:
            c = ch[0]
        elif (c.kind == K.CALL_EXPR and c.spelling.startswith("operator ") and len(ch) == 1
              and ch[0].kind == K.MEMBER_REF_EXPR and _children(ch[0])):
            c = _children(ch[0])[0]        # implicit a.operator long long()
        elif (c.kind == K.CALL_EXPR and len(ch) == 1 and c.referenced is not None
              and c.referenced.kind == K.CONSTRUCTOR
              and (c.referenced.is_copy_constructor() or c.referenced.is_move_constructor())):
            c = ch[0]                          # implicit copy of a class value
        else:
            return c


def _var_init(v):
    """The initializer expression of a VAR_DECL, or None."""
    init = None
    for ch in v.get_children():
        if ch.kind.is_expression():
            init = ch
    return init


def _is_constexpr(v) -> bool:
    return any(t.spelling == "constexpr" for t in v.get_tokens())


def _is_const_var(v) -> bool:
    t = v.type
    return t.is_const_qualified() or _is_constexpr(v)


def _is_constant(c, seen=None) -> bool:
    """A compile-time constant expression (see the module docstring)."""
    seen = set() if seen is None else seen
    c = _strip(c)
    k = c.kind
    if k in (K.INTEGER_LITERAL, K.CHARACTER_LITERAL, K.CXX_BOOL_LITERAL_EXPR, K.FLOATING_LITERAL,
             K.STRING_LITERAL, K.CXX_NULL_PTR_LITERAL_EXPR):
        return True
    if k == K.CXX_UNARY_EXPR:                   # sizeof / alignof
        return True
    if k == K.DECL_REF_EXPR:
        r = c.referenced
        if r is None:
            return False
        if r.kind in (K.ENUM_CONSTANT_DECL, K.TEMPLATE_NON_TYPE_PARAMETER):
            return True
        if r.kind == K.VAR_DECL and _is_const_var(r):
            key = r.hash
            if key in seen:
                return False
            seen.add(key)
            init = _var_init(r)
            return init is not None and _is_constant(init, seen)
        return False
    if k == K.UNARY_OPERATOR:
        return _unop(c) in ("+", "-", "~", "!") and all(_is_constant(x, seen) for x in _children(c))
    if k in (K.BINARY_OPERATOR, K.CONDITIONAL_OPERATOR, K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
             K.CXX_FUNCTIONAL_CAST_EXPR, K.PAREN_EXPR, K.UNEXPOSED_EXPR):
        ch = [x for x in _children(c) if x.kind.is_expression()]
        if k == K.BINARY_OPERATOR and _binop(c) in ("=", ","):
            return False
        return bool(ch) and all(_is_constant(x, seen) for x in ch)
    if k == K.CALL_EXPR and c.referenced is not None and c.referenced.kind == K.CONSTRUCTOR:
        return all(_is_constant(x, seen) for x in c.get_arguments())
    return _evaluate(c) is not None


_BUILTIN_WIDTH = {
    ci.TypeKind.BOOL: 1, ci.TypeKind.CHAR_S: 8, ci.TypeKind.CHAR_U: 8, ci.TypeKind.SCHAR: 8,
    ci.TypeKind.UCHAR: 8, ci.TypeKind.SHORT: 16, ci.TypeKind.USHORT: 16, ci.TypeKind.INT: 32,
    ci.TypeKind.UINT: 32, ci.TypeKind.LONG: 64, ci.TypeKind.ULONG: 64, ci.TypeKind.LONGLONG: 64,
    ci.TypeKind.ULONGLONG: 64, ci.TypeKind.INT128: 128, ci.TypeKind.UINT128: 128, ci.TypeKind.ENUM: 32,
    ci.TypeKind.WCHAR: 32, ci.TypeKind.CHAR16: 16, ci.TypeKind.CHAR32: 32,
}
_AP_TYPES = {"ap_int", "ap_uint", "ap_int_base", "ap_fixed", "ap_ufixed", "ap_fixed_base"}


def _strip_ref(t):
    if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        t = t.get_pointee()
    return t.get_canonical()


def type_width(t) -> int | None:
    """Bit width of an integer type: builtins, ap_int<N> / ap_uint<N> (template argument of the canonical
    type's spelling), None when unknown (floating point, dependent, other classes)."""
    t = _strip_ref(t)
    if t.kind in _BUILTIN_WIDTH:
        return _BUILTIN_WIDTH[t.kind]
    if t.kind in (ci.TypeKind.RECORD, ci.TypeKind.ELABORATED, ci.TypeKind.UNEXPOSED):
        s = t.spelling
        for q in ("const ", "volatile "):
            s = s.replace(q, "")
        if "<" in s and s.endswith(">"):
            name, args = s.split("<", 1)
            name = name.strip().split("::")[-1]
            first = args[:-1].split(",")[0].strip()
            if name in _AP_TYPES and first.isdigit():
                return int(first)
    return None


def _operand_width(c) -> int | None:
    s = _strip(c)
    if _is_constant(s):
        v = _evaluate(s)
        if v is not None:
            return max(1, abs(v).bit_length())
    return type_width(s.type)


def _pow2_constant(c) -> bool:
    s = _strip(c)
    if not _is_constant(s):
        return False
    v = _evaluate(s)
    return v is not None and v > 0 and v & (v - 1) == 0


def _is_stream_type(t) -> bool:
    t = _strip_ref(t)
    s = t.spelling.replace("const ", "")
    return s.startswith("hls::stream<")


def _is_buffer_type(t) -> bool:
    t = _strip_ref(t)
    return t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY,
                      ci.TypeKind.DEPENDENTSIZEDARRAY, ci.TypeKind.POINTER) or _is_stream_type(t)


def _elem_const(t) -> bool:
    """The elements a pointer / array / reference parameter gives access to are const."""
    t0 = t
    if t0.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        t0 = t0.get_pointee()
        if t0.is_const_qualified():
            return True
    t0 = t0.get_canonical()
    while t0.kind in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
                      ci.TypeKind.VARIABLEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
        t0 = t0.get_pointee() if t0.kind == ci.TypeKind.POINTER else t0.element_type
        if t0.is_const_qualified():
            return True
    return False


def _walk(c, stack=()):
    """Pre-order (cursor, ancestors) pairs below ``c``."""
    for ch in c.get_children():
        yield ch, stack
        yield from _walk(ch, stack + (ch,))


def _body(fn):
    for ch in fn.get_children():
        if ch.kind == K.COMPOUND_STMT:
            return ch
    return None


def _loop_body(loop):
    ch = _children(loop)
    if not ch:
        return None
    return ch[0] if loop.kind == K.DO_STMT else ch[-1]


# ---------------------------------------------------------------------------------------------- the checker
@dataclass
class _Pragma:
    directive: str
    args: list
    offset: int
    line: int


class _File:
    def __init__(self, tu, path: Path):
        self.tu, self.path = tu, path
        self.name = str(path)
        f = ci.File.from_name(tu, self.name)
        size = path.stat().st_size
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, f, 0),
                                            ci.SourceLocation.from_offset(tu, f, size))
        self.tokens = list(tu.get_tokens(extent=rng))
        self.offsets = [t.location.offset for t in self.tokens]
        skipped = []
        lst = _lib.clang_getSkippedRanges(tu._as_parameter_, f._as_parameter_)
        if lst:
            for i in range(lst.contents.count):
                r = lst.contents.ranges[i]
                skipped.append((r.start.offset, r.end.offset))
            _lib.clang_disposeSourceRangeList(lst)
        self.pragmas = self._pragmas(skipped)

    def op_location(self, lhs, op) -> tuple[int, int] | None:
        """(line, column) of the operator token ``op`` right after the expression ``lhs``, if it is there (not
        inside a macro expansion)."""
        lhs_end = lhs.extent.end
        if lhs_end.file is None or lhs_end.file.name != self.name:
            return None
        i = bisect.bisect_left(self.offsets, lhs_end.offset)
        for t in self.tokens[i:i + 2]:
            if t.spelling == op:
                return t.location.line, t.location.column
        return None

    def _pragmas(self, skipped) -> list[_Pragma]:
        out = []
        toks = self.tokens
        for i, t in enumerate(toks):
            if t.spelling != "#" or i + 2 >= len(toks):
                continue
            line = t.location.line
            if toks[i + 1].spelling != "pragma" or toks[i + 1].location.line != line:
                continue
            if toks[i + 2].spelling.upper() != "HLS" or toks[i + 2].location.line != line:
                continue
            off = t.location.offset
            if any(a <= off < b for a, b in skipped):
                continue
            words = []
            j = i + 3
            while j < len(toks) and toks[j].location.line == line:
                words.append(toks[j].spelling)
                j += 1
            if words:
                out.append(_Pragma(words[0].upper(), words[1:], off, line))
        return out


class _Checker:
    def __init__(self, f: _File):
        self.f = f
        self.out: list[Violation] = []
        self.usage_memo: dict = {}
        self.pipe_seen: set = set()

    def add(self, rule, cursor_or_line, function, message):
        line = cursor_or_line if isinstance(cursor_or_line, int) else cursor_or_line.location.line
        self.out.append(Violation(rule, self.f.name, line, function, message))

    def in_main(self, c) -> bool:
        return c.location.file is not None and c.location.file.name == self.f.name

    def functions(self):
        def visit(c):
            for ch in c.get_children():
                if not self.in_main(ch):
                    continue
                if ch.kind in _FUNCS and ch.is_definition():
                    yield ch
                elif ch.kind in (K.NAMESPACE, K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE, K.LINKAGE_SPEC):
                    yield from visit(ch)
        return list(visit(self.f.tu.cursor))

    def run(self) -> list[Violation]:
        for fn in self.functions():
            body = _body(fn)
            if body is None:
                continue
            self.check_function(fn, body)
        return self.out

    # scopes: the function body and each loop body; a pragma belongs to the innermost one holding it
    def check_function(self, fn, body):
        loops = [c for c, _ in _walk(body) if c.kind in _LOOPS]
        lo, hi = body.extent.start.offset, body.extent.end.offset
        scopes = {}   # scope key -> list of pragmas; key: loop hash or "fn"
        for p in self.f.pragmas:
            if not lo <= p.offset < hi:
                continue
            best, best_start = None, -1
            for lp in loops:
                b = _loop_body(lp)
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
            b = _loop_body(lp)
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
        for ch in _children(lp)[:-1]:
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
            if len(vs) != 1 or _var_init(vs[0]) is None or not _is_constant(_var_init(vs[0])):
                return False
            var = vs[0]
        else:
            e = _strip(init)
            if e.kind == K.BINARY_OPERATOR and _binop(e) == "=":
                lhs, rhs = _children(e)
                lhs = _strip(lhs)
                if lhs.kind == K.DECL_REF_EXPR and _is_constant(rhs):
                    var = lhs.referenced
            if var is None:
                return False

        def is_var(x):
            x = _strip(x)
            return x.kind == K.DECL_REF_EXPR and x.referenced is not None and x.referenced == var

        c = _strip(cond)
        if c.kind == K.BINARY_OPERATOR and _binop(c) in _COMPARE:
            a, b = _children(c)
            if not ((is_var(a) and _is_constant(b)) or (is_var(b) and _is_constant(a))):
                return False
        elif c.kind == K.CALL_EXPR and c.spelling in {"operator" + o for o in _COMPARE}:
            a, b = list(c.get_arguments())
            if not ((is_var(a) and _is_constant(b)) or (is_var(b) and _is_constant(a))):
                return False
        else:
            return False
        i = _strip(inc)
        if i.kind == K.UNARY_OPERATOR and _unop(i) in ("++", "--", "post++", "post--"):
            return is_var(_children(i)[0])
        if i.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and _binop(i) in ("+=", "-="):
            a, b = _children(i)
            return is_var(a) and _is_constant(b)
        if i.kind == K.CALL_EXPR and i.spelling in ("operator++", "operator--"):
            return is_var(list(i.get_arguments())[0])
        if i.kind == K.CALL_EXPR and i.spelling in ("operator+=", "operator-="):
            a, b = list(i.get_arguments())
            return is_var(a) and _is_constant(b)
        return False

    # ---- rule 3
    def check_pipeline(self, body, fname, loop_line, visiting, via=""):
        for c, _ in _walk(body):
            op, a, b = None, None, None
            if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                o = _binop(c)
                if o in ("*", "/", "%", "*=", "/=", "%="):
                    ch = _children(c)
                    if len(ch) == 2:
                        op, (a, b) = o, ch
            elif c.kind == K.CALL_EXPR and c.spelling in ("operator*", "operator/", "operator%", "operator*=",
                                                          "operator/=", "operator%="):
                args = list(c.get_arguments())
                if len(args) == 2:
                    op, (a, b) = c.spelling[len("operator"):], args
            elif c.kind == K.CALL_EXPR and c.referenced is not None and c.referenced.kind in _FUNCS:
                d = c.referenced.get_definition()
                if d is not None and self.in_main(d) and d.hash not in visiting:
                    db = _body(d)
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
                if not _is_constant(b):
                    self.pipe_seen.add(key)
                    self.add("pipeline-div", line, fname,
                             f"'{op}' (column {col}) by a non-constant operand in the pipelined loop "
                             f"at line {loop_line}{via}")
            else:
                if _pow2_constant(a) or _pow2_constant(b):
                    continue                    # a shift: no DSP
                wa, wb = _operand_width(a), _operand_width(b)
                if wa is None or wb is None:
                    continue
                if max(wa, wb) > DSP_A or min(wa, wb) > DSP_B:
                    self.pipe_seen.add(key)
                    self.add("pipeline-mul", line, fname,
                             f"'{op}' (column {col}) of {wa} x {wb} bits exceeds a DSP48E2 "
                             f"({DSP_A} x {DSP_B}) in the pipelined loop at line {loop_line}{via}")

    # ---- rules 1 and 2
    def _plain_arg(self, a) -> bool:
        a = _strip(a)
        if _is_constant(a):
            return True
        if a.kind in (K.DECL_REF_EXPR,):
            return True
        if a.kind == K.UNARY_OPERATOR and _unop(a) == "&":
            return self._plain_arg(_children(a)[0])
        if a.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, idx = _children(a)
            return self._plain_arg(base) and _is_constant(idx)
        return False

    def check_dataflow(self, fn, body, name, params):
        buffers = {}   # var hash -> (name, cursor)
        for p in params:
            if _is_buffer_type(p.type):
                buffers[p.hash] = p.spelling
        calls = []
        for st in body.get_children():
            k = st.kind
            if k == K.NULL_STMT:
                continue
            if k == K.DECL_STMT:
                for v in st.get_children():
                    if v.kind != K.VAR_DECL:
                        continue
                    init = _var_init(v)
                    ok = init is None or _is_constant(init)
                    if not ok:
                        s = _strip(init)
                        ok = s.kind == K.CALL_EXPR and s.referenced is not None and \
                            s.referenced.kind == K.CONSTRUCTOR and all(_is_constant(x) for x in s.get_arguments())
                    if not ok:
                        self.add("dataflow-body", v, name,
                                 f"declaration of '{v.spelling}' computes its initializer in the DATAFLOW region")
                    if _is_buffer_type(v.type):
                        buffers[v.hash] = v.spelling
                continue
            e = _strip(st) if k.is_expression() or k == K.UNEXPOSED_EXPR else st
            if e.kind == K.CALL_EXPR and e.referenced is not None and e.referenced.kind in _FUNCS \
                    and not e.spelling.startswith("operator"):
                bad = [i for i, a in enumerate(e.get_arguments()) if not self._plain_arg(a)]
                for i in bad:
                    self.add("dataflow-body", st, name,
                             f"argument {i + 1} of the call of '{e.spelling}' computes an expression in the "
                             f"DATAFLOW region")
                calls.append(e)
                continue
            what = {K.IF_STMT: "an if statement", K.FOR_STMT: "a for loop", K.WHILE_STMT: "a while loop",
                    K.DO_STMT: "a do loop", K.RETURN_STMT: "a return statement", K.SWITCH_STMT: "a switch",
                    K.COMPOUND_STMT: "a block"}.get(e.kind)
            if what is None:
                if e.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and \
                        _binop(e).endswith("=") and _binop(e) not in ("==", "!=", "<=", ">="):
                    what = "an assignment"
                elif e.kind == K.CALL_EXPR and e.spelling.startswith("operator") and e.spelling.endswith("="):
                    what = "an assignment"
                elif e.kind == K.UNARY_OPERATOR and _unop(e) in ("++", "--", "post++", "post--"):
                    what = "an increment"
                else:
                    what = "an expression that is not a call"
            self.add("dataflow-body", st, name, f"{what} in the DATAFLOW region (only calls are allowed)")
        # rule 2: who reads / writes each buffer
        access = {}   # var hash -> {"read": [(callee, line)], "write": [...]}
        for call in calls:
            callee = call.referenced
            for i, a in enumerate(call.get_arguments()):
                v = self._arg_var(a)
                if v is None or v.hash not in buffers:
                    continue
                modes = self.param_usage(callee, i)
                rec = access.setdefault(v.hash, {"read": [], "write": []})
                for m in modes:
                    if all(c != call.spelling or ln != call.location.line for c, ln in rec[m]):
                        rec[m].append((call.spelling, call.location.line))
        for h, rec in access.items():
            for m, verb in (("write", "written"), ("read", "read")):
                users = rec[m]
                if len(users) > 1:
                    who = ", ".join(f"{c} (line {ln})" for c, ln in users)
                    self.add("dataflow-single-access", users[1][1], name,
                             f"'{buffers[h]}' is {verb} by {len(users)} processes of the DATAFLOW region: {who}")

    @staticmethod
    def _arg_var(a):
        a = _strip(a)
        while True:
            if a.kind == K.UNARY_OPERATOR and _unop(a) in ("&", "*"):
                a = _strip(_children(a)[0])
            elif a.kind == K.ARRAY_SUBSCRIPT_EXPR:
                a = _strip(_children(a)[0])
            else:
                break
        if a.kind == K.DECL_REF_EXPR and a.referenced is not None and \
                a.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
            return a.referenced
        return None

    def param_usage(self, callee, i) -> frozenset:
        """{"read", "write"} that ``callee`` does to what its i-th parameter gives access to."""
        if callee is None:
            return frozenset({"read", "write"})
        d = callee.get_definition() or callee
        params = [c for c in d.get_children() if c.kind == K.PARM_DECL]
        if i >= len(params):
            return frozenset({"read", "write"})
        p = params[i]
        is_stream = _is_stream_type(p.type)
        if not is_stream and p.type.kind not in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE,
                                                 ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY,
                                                 ci.TypeKind.INCOMPLETEARRAY) \
                and p.type.get_canonical().kind != ci.TypeKind.POINTER:
            return frozenset({"read"})          # by value: a copy
        if not is_stream and _elem_const(p.type):
            return frozenset({"read"})
        body = _body(d)
        if body is None:
            return frozenset({"read", "write"})
        key = (d.hash, i)
        if key in self.usage_memo:
            return self.usage_memo[key]
        self.usage_memo[key] = frozenset()      # recursion guard
        modes = set()
        for c, stack in _walk(body):
            if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced == p:
                modes |= self._use(c, stack, is_stream)
        res = frozenset(modes)
        self.usage_memo[key] = res
        return res

    def _use(self, node, stack, is_stream) -> set:
        """What the expression ``node`` (a use of the parameter; ``stack`` its ancestors) does to it."""
        anc = list(stack[:-1]) if stack and stack[-1] == node else list(stack)
        # stack holds node's ancestors ending with node itself (see _walk): drop it
        while anc:
            parent = anc.pop()
            k = parent.kind
            if k in (K.PAREN_EXPR, K.UNEXPOSED_EXPR):
                node = parent
                continue
            if k == K.ARRAY_SUBSCRIPT_EXPR:
                if _children(parent)[0] == node:
                    node = parent
                    continue
                return {"read"}
            if k == K.UNARY_OPERATOR:
                o = _unop(parent)
                if o in ("*", "&"):
                    node = parent
                    continue
                if o in ("++", "--", "post++", "post--"):
                    return {"read", "write"}
                return {"read"}
            if k in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                o = _binop(parent)
                first = _children(parent)[0] == node
                if first and o == "=":
                    return {"write"}
                if first and k == K.COMPOUND_ASSIGNMENT_OPERATOR:
                    return {"read", "write"}
                return {"read"}
            if k == K.MEMBER_REF_EXPR:
                m = parent.spelling
                call = anc[-1] if anc and anc[-1].kind == K.CALL_EXPR else None
                if is_stream:
                    if m in _STREAM_READ:
                        return {"read"}
                    if m in _STREAM_WRITE:
                        return {"write"}
                    return set()
                if call is None:            # a field of an element
                    node = parent
                    continue
                if m in _PROXY_METHODS:
                    node = call
                    anc.pop()
                    continue
                r = parent.referenced
                if r is not None and r.kind == K.CXX_METHOD and not r.is_const_method() \
                        and not m.startswith("operator "):
                    return {"read", "write"}
                return {"read"}
            if k == K.CALL_EXPR:
                args = list(parent.get_arguments())
                idx = next((j for j, a in enumerate(args) if a == node), None)
                if idx is None:
                    return {"read"}
                sp = parent.spelling
                r = parent.referenced
                if sp.startswith("operator") and not sp.startswith("operator "):
                    o = sp[len("operator"):]
                    if idx == 0:
                        if o == "=":
                            return {"write"}
                        if o.endswith("=") and o not in ("==", "!=", "<=", ">="):
                            return {"read", "write"}
                        if is_stream and o == ">>":
                            return {"read"}
                        if is_stream and o == "<<":
                            return {"write"}
                        if o in ("[]", "()"):
                            node = parent
                            continue
                        if o in ("++", "--"):
                            return {"read", "write"}
                    return {"read"}
                if r is not None and r.kind == K.CONSTRUCTOR:
                    return {"read"}
                if r is not None and r.kind in _FUNCS:
                    # a member call's object is not in get_arguments; here node is argument idx
                    return set(self.param_usage(r, idx))
                return {"read", "write"}
            if k == K.VAR_DECL:
                t = parent.type
                if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.POINTER) and not _elem_const(t):
                    return {"read", "write"}
                return {"read"}
            return {"read"}
        return {"read"}


@functools.lru_cache(maxsize=None)
def _compiler_include() -> list[str]:
    """The wheel's libclang has no resource headers (stddef.h, ...): borrow the installed gcc's."""
    for cc in ("g++", "gcc"):
        exe = shutil.which(cc)
        if exe:
            try:
                d = subprocess.run([exe, "-print-file-name=include"], capture_output=True, text=True,
                                   timeout=10).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            if d and Path(d, "stddef.h").is_file():
                return ("-isystem", d)
    return ()


def _parse_args(include_dirs, defines, stub_dir) -> list[str]:
    args = ["-x", "c++", "-std=c++14", *_compiler_include()]
    if stub_dir is not None:
        args += ["-D__SYNTHESIS__", f"-I{stub_dir}"]
    args += [f"-I{d}" for d in include_dirs]
    args += [f"-D{d}" for d in defines]
    return args


def check(sources: list[Path], include_dirs=(), defines=(), stubs: bool = True) -> list[Violation]:
    """Check ``sources`` (C++ files) against the rules of the module docstring; returns the violations sorted by
    file and line. ``include_dirs`` / ``defines`` (``"NAME"`` or ``"NAME=V"``) are passed to the parser; with
    ``stubs`` (default) the stub headers and ``__SYNTHESIS__`` come first, else the real headers must be on
    ``include_dirs``. Raises LintError when a source is missing or has parse errors."""
    out: list[Violation] = []
    index = ci.Index.create()
    with tempfile.TemporaryDirectory(prefix="hls_lint_") as tmp:
        stub_dir = write_stubs(tmp) if stubs else None
        args = _parse_args([str(d) for d in include_dirs], list(defines), stub_dir)
        for src in sources:
            src = Path(src).resolve()
            if not src.is_file():
                raise LintError(f"{src}: no such file")
            tu = index.parse(str(src), args=args,
                             options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
            errs = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
            if errs:
                d = errs[0]
                loc = f"{d.location.file}:{d.location.line}" if d.location.file else str(src)
                raise LintError(f"{loc}: {d.spelling} ({len(errs)} parse error(s))")
            out += _Checker(_File(tu, src)).run()
    return sorted(set(out), key=lambda v: (v.file, v.line, v.rule, v.message))


def _is_testbench(p: Path) -> bool:
    n = p.stem.lower()
    return n.startswith("tb") or n.endswith("_tb") or "test" in n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.backends.hls_lint", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="folders (their *.cpp) or C++ files")
    ap.add_argument("-I", dest="include", action="append", default=[], help="include folder")
    ap.add_argument("-D", dest="define", action="append", default=[], help="macro NAME or NAME=VALUE")
    ap.add_argument("--real-headers", action="store_true",
                    help="parse with the headers on -I instead of the stubs (no __SYNTHESIS__)")
    a = ap.parse_args(argv)
    sources, incs = [], list(a.include)
    for p in map(Path, a.paths):
        if p.is_dir():
            sources += sorted(q for q in p.glob("*.cpp") if not _is_testbench(q))
            incs.append(str(p))
        else:
            sources.append(p)
            incs.append(str(p.parent))
    try:
        vs = check(sources, incs, a.define, stubs=not a.real_headers)
    except LintError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for v in vs:
        print(v)
    return 1 if vs else 0


if __name__ == "__main__":
    sys.exit(main())

"""libclang glue of the HLS rule checker (:mod:`generator.backends.hls.lint`): the C entry points the Python binding
lacks (operator kinds, constant evaluation, the preprocessor's skipped ranges) and the AST helpers the rules share
(constant expressions, integer widths, buffer types, walking bodies). Also used by
:mod:`generator.estimate.hls_cycles`."""
from __future__ import annotations

import ctypes
from pathlib import Path

import clang.cindex as ci

K = ci.CursorKind

# ---------------------------------------------------------------------------------------------- libclang glue
lib = ci.conf.lib
lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
lib.clang_EvalResult_getKind.restype = ctypes.c_int
lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
lib.clang_EvalResult_dispose.restype = None


class _RangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]


lib.clang_getSkippedRanges.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.clang_getSkippedRanges.restype = ctypes.POINTER(_RangeList)
lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_RangeList)]
lib.clang_disposeSourceRangeList.restype = None

# CXBinaryOperatorKind / CXUnaryOperatorKind (clang-c/Index.h, clang >= 17)
_BINOPS = {3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 10: "<=>", 11: "<", 12: ">", 13: "<=",
           14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&", 21: "||", 22: "=", 23: "*=",
           24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=", 29: ">>=", 30: "&=", 31: "^=", 32: "|=", 33: ","}
_UNOPS = {1: "post++", 2: "post--", 3: "++", 4: "--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~", 10: "!"}
COMPARE = {"<", "<=", ">", ">=", "!="}
LOOPS = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT, K.CXX_FOR_RANGE_STMT)
FUNCS = (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR, K.DESTRUCTOR)
STREAM_READ = {"read", "read_nb", "operator>>"}
STREAM_WRITE = {"write", "write_nb", "operator<<"}
PROXY_METHODS = {"range", "operator[]", "operator()", "bit", "get_bit"}   # element access that can be assigned


def binop(c) -> str:
    """The operator of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR cursor (``"*"``, ``"+="``, ...), ``"?"``
    if unknown."""
    return _BINOPS.get(lib.clang_getCursorBinaryOperatorKind(c), "?")


def unop(c) -> str:
    """The operator of a UNARY_OPERATOR cursor (``"&"``, ``"post++"``, ...), ``"?"`` if unknown."""
    return _UNOPS.get(lib.clang_getCursorUnaryOperatorKind(c), "?")


def evaluate(c) -> int | None:
    """The integer value of a constant expression (clang's evaluator), else None."""
    r = lib.clang_Cursor_Evaluate(c)
    if not r:
        return None
    try:
        if lib.clang_EvalResult_getKind(r) != 1:   # CXEval_Int
            return None
        if lib.clang_EvalResult_isUnsignedInt(r):
            return int(lib.clang_EvalResult_getAsUnsigned(r))
        return int(lib.clang_EvalResult_getAsLongLong(r))
    finally:
        lib.clang_EvalResult_dispose(r)



def skipped_ranges(tu, path: Path) -> list[tuple[int, int]]:
    """(start, end) byte offsets of the preprocessor's skipped ranges (``#if`` branches not compiled) of ``path``
    in the translation unit ``tu``."""
    f = ci.File.from_name(tu, str(path))
    out = []
    lst = lib.clang_getSkippedRanges(tu._as_parameter_, f._as_parameter_)
    if lst:
        for i in range(lst.contents.count):
            r = lst.contents.ranges[i]
            out.append((r.start.offset, r.end.offset))
        lib.clang_disposeSourceRangeList(lst)
    return out


# ---------------------------------------------------------------------------------------------- AST helpers
def children(c) -> list:
    """The child cursors of ``c`` as a list."""
    return list(c.get_children())


def strip(c):
    """Remove parentheses, implicit casts / cleanups and implicit conversion-operator calls."""
    while True:
        ch = children(c)
        if c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(ch) == 1:
            c = ch[0]
        elif (c.kind == K.CALL_EXPR and c.spelling.startswith("operator ") and len(ch) == 1
              and ch[0].kind == K.MEMBER_REF_EXPR and children(ch[0])):
            c = children(ch[0])[0]        # implicit a.operator long long()
        elif (c.kind == K.CALL_EXPR and len(ch) == 1 and c.referenced is not None
              and c.referenced.kind == K.CONSTRUCTOR
              and (c.referenced.is_copy_constructor() or c.referenced.is_move_constructor())):
            c = ch[0]                          # implicit copy of a class value
        else:
            return c


def var_init(v):
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


def is_constant(c, seen=None) -> bool:
    """A compile-time constant expression (see the module docstring)."""
    seen = set() if seen is None else seen
    c = strip(c)
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
            init = var_init(r)
            return init is not None and is_constant(init, seen)
        return False
    if k == K.UNARY_OPERATOR:
        return unop(c) in ("+", "-", "~", "!") and all(is_constant(x, seen) for x in children(c))
    if k in (K.BINARY_OPERATOR, K.CONDITIONAL_OPERATOR, K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
             K.CXX_FUNCTIONAL_CAST_EXPR, K.PAREN_EXPR, K.UNEXPOSED_EXPR):
        ch = [x for x in children(c) if x.kind.is_expression()]
        if k == K.BINARY_OPERATOR and binop(c) in ("=", ","):
            return False
        return bool(ch) and all(is_constant(x, seen) for x in ch)
    if k == K.CALL_EXPR and c.referenced is not None and c.referenced.kind == K.CONSTRUCTOR:
        return all(is_constant(x, seen) for x in c.get_arguments())
    return evaluate(c) is not None


_BUILTIN_WIDTH = {
    ci.TypeKind.BOOL: 1, ci.TypeKind.CHAR_S: 8, ci.TypeKind.CHAR_U: 8, ci.TypeKind.SCHAR: 8,
    ci.TypeKind.UCHAR: 8, ci.TypeKind.SHORT: 16, ci.TypeKind.USHORT: 16, ci.TypeKind.INT: 32,
    ci.TypeKind.UINT: 32, ci.TypeKind.LONG: 64, ci.TypeKind.ULONG: 64, ci.TypeKind.LONGLONG: 64,
    ci.TypeKind.ULONGLONG: 64, ci.TypeKind.INT128: 128, ci.TypeKind.UINT128: 128, ci.TypeKind.ENUM: 32,
    ci.TypeKind.WCHAR: 32, ci.TypeKind.CHAR16: 16, ci.TypeKind.CHAR32: 32,
}
_AP_TYPES = {"ap_int", "ap_uint", "ap_int_base", "ap_fixed", "ap_ufixed", "ap_fixed_base"}


def strip_ref(t):
    """The canonical type of ``t``, without a reference."""
    if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        t = t.get_pointee()
    return t.get_canonical()


def type_width(t) -> int | None:
    """Bit width of an integer type: builtins, ap_int<N> / ap_uint<N> (template argument of the canonical
    type's spelling), None when unknown (floating point, dependent, other classes)."""
    t = strip_ref(t)
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


def operand_width(c) -> int | None:
    """Bit width of an operand: a compile-time constant by its value's bit length, else its type's (None if unknown)."""
    s = strip(c)
    if is_constant(s):
        v = evaluate(s)
        if v is not None:
            return max(1, abs(v).bit_length())
    return type_width(s.type)


def pow2_constant(c) -> bool:
    """``c`` is a compile-time constant power of two (a multiply by it is a shift)."""
    s = strip(c)
    if not is_constant(s):
        return False
    v = evaluate(s)
    return v is not None and v > 0 and v & (v - 1) == 0


def is_stream_type(t) -> bool:
    """``t`` is an ``hls::stream<...>`` (or a reference to one)."""
    t = strip_ref(t)
    s = t.spelling.replace("const ", "")
    return s.startswith("hls::stream<")


def is_buffer_type(t) -> bool:
    """``t`` is a buffer of the dataflow rules: an array, a pointer or an ``hls::stream`` (or a reference to one)."""
    t = strip_ref(t)
    return t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY,
                      ci.TypeKind.DEPENDENTSIZEDARRAY, ci.TypeKind.POINTER) or is_stream_type(t)


def elem_const(t) -> bool:
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


def walk(c, stack=()):
    """Pre-order (cursor, ancestors) pairs below ``c``."""
    for ch in c.get_children():
        yield ch, stack
        yield from walk(ch, stack + (ch,))


def body(fn):
    """The body (COMPOUND_STMT) of the function cursor ``fn``, None for a declaration."""
    for ch in fn.get_children():
        if ch.kind == K.COMPOUND_STMT:
            return ch
    return None


def loop_body(loop):
    """The body statement of a loop cursor (a ``do`` loop's first child, the last child otherwise), None if empty."""
    ch = children(loop)
    if not ch:
        return None
    return ch[0] if loop.kind == K.DO_STMT else ch[-1]



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
and ``hls_stream.h`` (written by ``stubs.write_stubs`` into a temporary folder ahead of the include path: just the
declarations the checks need -- ``ap_int<N>`` / ``ap_uint<N>`` with their conversions, ``range()``, ``[]``,
compound assignments; ``hls::stream<T>`` with ``read`` / ``write`` / ``read_nb`` / ``write_nb`` / ``>>`` / ``<<``
/ ``empty`` / ``full`` / ``size``), since the open ``ap_common.h`` stops with ``#error`` under ``__SYNTHESIS__``.
With ``stubs=False`` the real headers on the include path are parsed instead, without ``__SYNTHESIS__`` (select
the synthesis path with a project macro then, e.g. the kernel's ``-DACCEL_DATAFLOW``). The wheel's libclang has
no compiler headers (``stddef.h``): the installed gcc's are added. A parse error is a :class:`LintError`.

Modules (of ``generator.backends.hls.lint``): ``clang_ast`` (libclang glue, AST helpers), ``stubs`` (the stub
headers), ``source`` (tokens, pragmas), ``checker`` (scopes, pipeline and trip-count rules), ``dataflow`` (dataflow
rules), ``run`` (:func:`check`, the command line).

CLI: ``python -m generator.backends.hls.lint DIR [-I DIR] [-D MACRO[=V]] [--real-headers]`` checks ``DIR/*.cpp`` and
``DIR/*_kernel.h`` (each file's own functions are checked, so the static kernel header that ``accel.cpp`` includes
is a source of its own; or the given files; a folder's testbenches -- ``tb*.cpp``, ``*_tb.cpp``, ``*test*.cpp`` -- are left out; each source's
folder is on the include path), prints ``file:line: rule [function] message`` per violation and exits 1 if there
is any (2 with one ``error: ...`` line when a source does not parse).
"""
from generator.backends.hls.lint.checker import RULES, Violation
from generator.backends.hls.lint.run import LintError, check, main

__all__ = ["RULES", "Violation", "LintError", "check", "main"]

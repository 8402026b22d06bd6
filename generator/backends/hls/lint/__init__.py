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

Port rules (:mod:`~generator.backends.hls.lint.analysis`; from each top function -- a function of the checked
file whose body holds ``#pragma HLS INTERFACE`` -- with the top's arrays, pointers and streams bound through the
callees' parameters; docs/hls-kernel.md "Port and II analysis"):

``pipeline-ports`` (UG1399 "pragma HLS array_partition", "pragma HLS array_reshape", "pragma HLS bind_storage",
"pragma HLS interface" ``storage_type``, "Optimizing for Throughput" / "Managing Pipeline Dependencies"; UG1448
200-885 "unable to schedule ... due to limited memory ports"). One iteration of each loop holding ``#pragma HLS
PIPELINE`` (callees inlined, inner loops unrolled with their variable substituted) charges each access to the
physical memories it can reach: a partitioned dimension's bank is selected by an index constant after unrolling
(``complete``: the index, ``cyclic``: mod factor, ``block``: by the block size) or by a ``cyclic`` index provably
``k * factor + c``, else every bank; on a dimension reshaped ``complete`` accesses in one direction whose other
indices are the same expression are one access. Exclusive arms (``if`` / ``else``, ``?:``, an ``if`` leaving the
iteration and the statements after it) count as the worst arm, a plain ``if`` adds. Per memory: ``ram_1p`` II >=
R + W, ``ram_2p`` / ``ram_s2p`` II >= max(R, W), ``ram_t2p`` II >= ceil((R + W) / 2), an m_axi bundle II >= max(R,
W), a stream II >= R + W, registers (partitioned completely) unlimited; an interface port without
``storage_type`` is ``ram_1p``, a local array ``ram_2p``. A violation when the bound exceeds the requested II,
naming the loop, the memory, its storage, R, W and the II it forces.

``axis-nonblocking`` (UG1399 "AXI4-Stream Interfaces", "Non-Blocking Accesses": not supported on ``axis``
interfaces). ``read_nb`` / ``write_nb`` / ``empty`` / ``full`` / ``size`` on a stream that is a top's ``mode=axis``
port, anywhere reachable from that top.

``maxi-bundle`` (UG1399 "AXI4 Master Interface", bundles). Two m_axi arrays of one top on one bundle both read, or
both written.

``maxi-burst`` (UG1399 "AXI4 Master Interface" / "Preconditions and Limitations of Burst Transfer"). In a pipelined
loop, an m_axi pointer indexed by anything but the loop variable plus a loop-invariant (no variable the loop
writes): no burst is inferred. Accesses through ``hls::burst_maxi`` are not flagged.

The synthesis code path is parsed: ``-x c++ -std=c++14 -D__SYNTHESIS__`` with stub ``ap_int.h``, ``ap_fixed.h``
``hls_stream.h`` and ``hls_burst_maxi.h`` (written by ``stubs.write_stubs`` into a temporary folder ahead of the include path: just the
declarations the checks need -- ``ap_int<N>`` / ``ap_uint<N>`` with their conversions, ``range()``, ``[]``,
compound assignments; ``hls::stream<T>`` with ``read`` / ``write`` / ``read_nb`` / ``write_nb`` / ``>>`` / ``<<``
/ ``empty`` / ``full`` / ``size``), since the open ``ap_common.h`` stops with ``#error`` under ``__SYNTHESIS__``.
With ``stubs=False`` the real headers on the include path are parsed instead, without ``__SYNTHESIS__`` (select
the synthesis path with a project macro then, e.g. the kernel's ``-DACCEL_DATAFLOW``). The wheel's libclang has
no compiler headers (``stddef.h``): the installed gcc's are added. A parse error is a :class:`LintError`.

Modules (of ``generator.backends.hls.lint``): ``clang_ast`` (libclang glue, AST helpers), ``stubs`` (the stub
headers), ``source`` (tokens, pragmas), ``checker`` (scopes, pipeline and trip-count rules), ``dataflow`` (dataflow
rules), ``memories`` / ``symbolic`` / ``ports`` / ``analysis`` (the port rules, :func:`analyse_folder`: the
per-loop records used by :mod:`generator.estimate.hls_cycles`), ``run`` (:func:`check`, the command line).

CLI: ``python -m generator.backends.hls.lint DIR [-I DIR] [-D MACRO[=V]] [--real-headers] [--loops]`` checks
``DIR/*.cpp`` and ``DIR/*_kernel*.h`` (each file's own functions are checked, so the static kernel headers that
``accel.cpp`` includes are sources of their own; ``--loops`` first prints the per-loop table of the port analysis; or the given files; a folder's testbenches -- ``tb*.cpp``, ``*_tb.cpp``, ``*test*.cpp`` -- are left out; each source's
folder is on the include path), prints ``file:line: rule [function] message`` per violation and exits 1 if there
is any (2 with one ``error: ...`` line when a source does not parse).
"""
from generator.backends.hls.lint.analysis import PORT_RULES, LoopRecord
from generator.backends.hls.lint.checker import RULES as _RULES, Violation
from generator.backends.hls.lint.run import LintError, analyse_folder, check, main

#: the rule names, as printed in each violation
RULES = _RULES + PORT_RULES

__all__ = ["RULES", "Violation", "LintError", "LoopRecord", "analyse_folder", "check", "main"]

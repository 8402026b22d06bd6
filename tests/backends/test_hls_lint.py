"""generator/backends/hls/lint/: the Vitis HLS rule checker (libclang). (a) one violating and one clean C++ snippet per
rule, asserting the exact rule and line (the line is marked ``/*V*/`` in the snippet); (b) the rendered kernel of
every board, parsed on its synthesis path, must have no violation (the current kernel's violations are printed)."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator import ROOT_DIR
from generator.backends import hls
from generator.backends.hls import lint as hls_lint
from generator.backends.hls.kernel import KERNEL_HEADERS
from generator.exec import csim
from generator.spec.board import load_board
from helpers import tiered

BOARDS = sorted(p.stem for p in (ROOT_DIR / "boards").glob("*.yaml"))
HEAD = "#include <ap_int.h>\n#include <hls_stream.h>\n"

# common producer / consumer functions of the dataflow snippets
PROCS = HEAD + """
static void prod(hls::stream<int> &s, int n) {
P:  for (int i = 0; i < 8; i++) s.write(i + n);
}
static void cons(hls::stream<int> &s, int *out) {
    int acc = 0;
C:  for (int i = 0; i < 8; i++) acc += s.read();
    out[0] = acc;
}
static void cons_via(hls::stream<int> &s, int *out) { cons(s, out); }   // reads s through cons
static void fill(int buf[8], int n) {
F:  for (int i = 0; i < 8; i++) buf[i] = n + i;
}
static void sum(int buf[8], int *out) {                                  // non-const, but only reads buf
    out[0] = buf[0] + buf[7];
}
static void sum_const(const int buf[8], int *out) { out[0] = buf[1]; }
"""


def lint(tmp_path, code, name="k.cpp"):
    src = tmp_path / name
    src.write_text(code)
    marked = [i + 1 for i, line in enumerate(code.splitlines()) if "/*V*/" in line]
    return hls_lint.check([src]), marked


def rules_lines(vs):
    return [(v.rule, v.line) for v in vs]


# ------------------------------------------------------------------------------------------ rule 1: dataflow body
@pytest.mark.parametrize("stmt", ["m = n + 1;", "if (n) m = 2;", "for (int i = 0; i < 4; i++) {}"])
def test_dataflow_body_violation(tmp_path, stmt):
    code = PROCS + f"""
void top(int n, int *out) {{
#pragma HLS DATAFLOW
    hls::stream<int> s;
    int m;
    {stmt} /*V*/
    prod(s, n);
    cons(s, out);
}}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("dataflow-body", marked[0])], vs


def test_dataflow_body_argument_expression(tmp_path):
    code = PROCS + """
void top(int n, int *out) {
#pragma HLS DATAFLOW
    hls::stream<int> s;
    prod(s, n + 1); /*V*/
    cons(s, out);
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("dataflow-body", marked[0])], vs
    assert "argument 2 of the call of 'prod'" in vs[0].message


def test_dataflow_body_clean(tmp_path):
    code = PROCS + """
void top(int n, int *out, int out2[2]) {
#pragma HLS DATAFLOW
    hls::stream<int> s("s");
#pragma HLS STREAM variable=s depth=8
    int buf[8];
    const int k = 3;
    prod(s, n);
    cons(s, out);
    fill(buf, k);
    sum(buf, &out2[1]);
}
"""
    vs, _ = lint(tmp_path, code)
    assert vs == []


# ------------------------------------------------------------------------------------------ rule 2: single access
def test_dataflow_stream_two_readers(tmp_path):
    code = PROCS + """
void top(int n, int *out, int *out2) {
#pragma HLS DATAFLOW
    hls::stream<int> s;
    prod(s, n);
    cons(s, out);
    cons_via(s, out2); /*V*/
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("dataflow-single-access", marked[0])], vs
    assert "'s' is read by 2" in vs[0].message


def test_dataflow_array_two_writers(tmp_path):
    code = PROCS + """
void top(int n, int *out) {
#pragma HLS DATAFLOW
    int buf[8];
    fill(buf, n);
    fill(buf, n); /*V*/
    sum_const(buf, out);
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("dataflow-single-access", marked[0])], vs
    assert "'buf' is written by 2" in vs[0].message


def test_dataflow_argument_buffer_two_readers(tmp_path):
    code = PROCS + """
void top(int in[8], int *out, int *out2) {
#pragma HLS DATAFLOW
    sum(in, out);
    sum_const(in, out2); /*V*/
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("dataflow-single-access", marked[0])], vs


def test_dataflow_in_loop_stream_operators(tmp_path):
    # DATAFLOW inside a loop body; streams used through << and >>; a callee without a body reads and writes
    code = HEAD + """
static void p1(hls::stream<ap_uint<8> > &s) {
P:  for (int i = 0; i < 4; i++) s << (ap_uint<8>)i;
}
static void c1(hls::stream<ap_uint<8> > &s, ap_uint<8> o[1]) {
    ap_uint<8> v;
C:  for (int i = 0; i < 4; i++) { s >> v; o[0] += v; }
}
void ext(int *p);
void top(ap_uint<8> o[1], ap_uint<8> o2[1], int *q) {
L:  for (int k = 0; k < 4; k++) {
#pragma HLS DATAFLOW
        hls::stream<ap_uint<8> > s;
        p1(s);
        c1(s, o);
        c1(s, o2); /*V*/
        ext(q);
    }
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("dataflow-single-access", marked[0])], vs
    assert "'s' is read by 2" in vs[0].message


def test_dataflow_single_access_clean(tmp_path):
    # one writer and one reader per buffer; a non-const array parameter that is only read counts as a reader;
    # a scalar by value passed to several processes is fine
    code = PROCS + """
void top(int n, int *out, int *out2) {
#pragma HLS DATAFLOW
    hls::stream<int> s;
    int buf[8];
    prod(s, n);
    cons_via(s, out);
    fill(buf, n);
    sum(buf, out2);
}
"""
    vs, _ = lint(tmp_path, code)
    assert vs == []


# ------------------------------------------------------------------------------------------ rule 3: pipelined loops
def test_pipeline_div_violation(tmp_path):
    code = HEAD + """
void f(const int a[64], int n, int out[64]) {
    const int lanes = n > 2 ? 8 : 16;   // const, but not a compile-time constant
L:  for (int i = 0; i < 64; i++) {
#pragma HLS PIPELINE II=1
        out[i] = a[i] / 4;
        out[i] += a[i] % n; /*V*/
        out[i] /= lanes; /*V*/
    }
    out[0] = a[0] / n;    // not pipelined: fine
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("pipeline-div", m) for m in marked], vs


def test_pipeline_div_in_nested_loop_and_callee(tmp_path):
    code = HEAD + """
static int scale(int x, int d) { return x / d; } /*V*/
void f(const int a[64], const int d[64], int out[64]) {
L:  for (int i = 0; i < 16; i++) {
#pragma HLS PIPELINE II=1
    U:  for (int j = 0; j < 4; j++) {
            out[i * 4 + j] = a[j] % d[i]; /*V*/
        }
        out[i] = scale(a[i], d[i]);
    }
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("pipeline-div", marked[0]), ("pipeline-div", marked[1])], vs
    assert vs[0].function == "scale"


def test_pipeline_div_clean(tmp_path):
    code = HEAD + """
enum { LANES = 8 };
constexpr int CE = 16;
template <int D>
void g(const int a[64], int out[64]) {
    const int four = 4;
L:  for (int i = 0; i < 64; i++) {
#pragma HLS PIPELINE II=1
        out[i] = a[i] / four + a[i] % LANES + a[i] / CE + a[i] / D + a[i] / (int)sizeof(int) + a[i] / (2 * four);
    }
}
void f(const int a[64], int out[64]) { g<32>(a, out); }
"""
    vs, _ = lint(tmp_path, code)
    assert vs == []


def test_pipeline_mul_violation(tmp_path):
    code = HEAD + """
void f(const ap_int<32> a[64], const ap_int<16> w[64], const ap_int<20> b[64], ap_int<64> out[64]) {
L:  for (int i = 0; i < 64; i++) {
#pragma HLS PIPELINE II=1
        out[i] = a[i] * w[i]; /*V*/
        out[i] += b[i] * b[i]; /*V*/
        out[i] += i * 3; /*V*/
    }
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("pipeline-mul", m) for m in marked], vs
    assert "32 x 16 bits" in vs[0].message and "20 x 20 bits" in vs[1].message and "32 x 2 bits" in vs[2].message


def test_pipeline_mul_clean(tmp_path):
    code = HEAD + """
typedef ap_int<27> a_t;
void f(const a_t a[64], const ap_int<18> w[64], const ap_uint<8> c[64], ap_int<64> out[64], long long big) {
L:  for (int i = 0; i < 64; i++) {
#pragma HLS PIPELINE II=1
        out[i] = a[i] * w[i] + w[i] * 100000 + c[i] * c[i] + (ap_int<18>)a[i] * (short)3 + i * 8 + big * 1024;
    }
    out[0] = big * big;   // not pipelined: fine
}
"""
    vs, _ = lint(tmp_path, code)
    assert vs == []


# ------------------------------------------------------------------------------------------ rule 4: tripcount
def test_tripcount_violation(tmp_path):
    code = HEAD + """
void f(int n, int out[64], hls::stream<int> &s) {
A:  for (int i = 0; i < n; i++) { /*V*/
        out[i] = i;
    }
B:  for (int i = 0; i < 64; i++) {
    C:  for (int j = i; j < 64; j++) { /*V*/
#ifndef __SYNTHESIS__
#pragma HLS loop_tripcount max=64
#endif
            out[j] += 1;
        }
    }
D:  while (true) { /*V*/
        if (s.read() == 0) break;
    }
}
"""
    vs, marked = lint(tmp_path, code)
    assert rules_lines(vs) == [("loop-tripcount", m) for m in marked], vs


def test_tripcount_clean(tmp_path):
    code = HEAD + """
#define N 64
void f(int n, int out[64], hls::stream<int> &s) {
A:  for (int i = 0; i < n; i++) {
#pragma HLS loop_tripcount min=1 max=64
        out[i] = i;
    }
B:  for (int i = N - 1; i >= 0; i -= 2) {
        out[i] = 0;
    }
D:  while (true) {
#pragma HLS LOOP_TRIPCOUNT max=10
        if (s.read() == 0) break;
    }
}
"""
    vs, _ = lint(tmp_path, code)
    assert vs == []


# ------------------------------------------------------------------------------------------ errors and CLI
def test_parse_error_is_lint_error(tmp_path):
    with pytest.raises(hls_lint.LintError, match="k.cpp:2"):
        lint(tmp_path, "void f() {\n  undeclared_thing = 1;\n}\n")


def test_cli(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    (tmp_path / "bad" / "k.cpp").write_text("void f(int n, int *o) {\n  for (int i = 0; i < n; i++) o[i] = 0;\n}\n")
    (tmp_path / "bad" / "tb.cpp").write_text("int main() { while (true) {} }\n")   # testbench: left out
    (tmp_path / "good" / "k.cpp").write_text("void f(int *o) {\n  for (int i = 0; i < 4; i++) o[i] = 0;\n}\n")
    run = lambda d: subprocess.run([sys.executable, "-m", "generator.backends.hls.lint", str(tmp_path / d)],
                                   capture_output=True, text=True, cwd=ROOT_DIR)
    r = run("bad")
    assert r.returncode == 1 and r.stdout.splitlines() == [
        f"{(tmp_path / 'bad' / 'k.cpp').resolve()}:2: loop-tripcount [f] for loop without a compile-time constant "
        "trip count has no #pragma HLS LOOP_TRIPCOUNT"]
    r = run("good")
    assert r.returncode == 0 and r.stdout == ""


# ------------------------------------------------------------------------------------------ (b) the real kernel
@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    out = {}
    for b in BOARDS:
        d = tmp_path_factory.mktemp(f"lint_{b}")
        hls.render(load_board(b), d)
        out[b] = d
    return out


def test_kernel_stub_and_real_headers_agree(kernels):
    """The stub headers parse the kernel as the real ap_types headers do (with the kernel's own ACCEL_DATAFLOW
    macro selecting the synthesis path, since the real ap_common.h refuses __SYNTHESIS__)."""
    d = kernels["zcu19eg"]
    # (the port rules follow the code path parsed: without __SYNTHESIS__ that is the C-simulation's, whose
    # m_axi model and FIFOs are not the synthesized ones; they are compared on the synthesis path only)
    ports = ("pipeline-ports", "axis-nonblocking", "maxi-bundle", "maxi-burst")
    stub = [v for v in hls_lint.check([d / "accel.cpp"], [d]) if v.rule not in ports]
    real = [v for v in hls_lint.check([d / "accel.cpp"], [d, csim.ap_types_dir()], ["ACCEL_DATAFLOW"], stubs=False)
            if v.rule not in ports]
    assert stub == real


def _headers(d):
    """The static kernel headers of a rendered folder (accel_kernel.h and its parts)."""
    return [d / f for f in KERNEL_HEADERS]


@pytest.mark.parametrize("brd", tiered(BOARDS, ["zcu19eg", "ultra96v2"]))   # (256- and 128-bit m_axi; all: --slow)
def test_kernel_follows_hls_rules(kernels, brd):
    """A board's rendered kernel: the tops (accel.cpp) and the static kernel they include (accel_kernel*.h, where
    every hot loop is: the checker looks at each file's own functions)."""
    d = kernels[brd]
    t0 = time.process_time()   # (CPU time of this process, libclang's parses included: not the machine's load)
    vs = hls_lint.check([d / "accel.cpp", *_headers(d)], [d])
    elapsed = time.process_time() - t0
    print(f"\nchecked {brd} in {elapsed:.1f} CPU-s")
    for v in vs:
        print(f"  {Path(v.file).name}:{v.line}: {v.rule} [{v.function}] {v.message}")
    assert elapsed < 20   # (one translation unit per file: accel.cpp and the kernel headers)
    assert not vs, f"the kernel violates the HLS rules on {brd} (listed above)"


def test_kernel_header_is_checked(kernels, tmp_path):
    """The kernel header's loops are really checked, by check() and by the CLI on the folder: a copy of the
    zcu19eg kernel with the POST wait loop's LOOP_TRIPCOUNT removed and a division planted in the pipelined
    STORE loop is flagged at exactly those lines (besides what the unmodified copy is flagged for)."""
    import shutil
    d = tmp_path / "k"
    shutil.copytree(kernels["zcu19eg"], d)
    hs, hm = d / "accel_kernel_store.h", d / "accel_kernel.h"     # (STORE_BEATS; post_finish's wait loop)
    store, main = hs.read_text().splitlines(), hm.read_text().splitlines()
    beats = next(i for i, ln in enumerate(store) if "iters++;" in ln and "n++;" in store[i + 1])
    store.insert(beats, "        iters = iters / (ap_uint<32>)n;")   # (line beats + 1, in STORE_BEATS)
    trip = next(i for i, ln in enumerate(main) if "LOOP_TRIPCOUNT" in ln and "max=513" in ln)
    del main[trip]                                                    # (the while loop is line trip)
    before = {(v.rule, v.function, v.message) for v in hls_lint.check([hm, hs], [d])}   # (the two files changed)
    hs.write_text("\n".join(store) + "\n")
    hm.write_text("\n".join(main) + "\n")
    vs = [v for v in hls_lint.check([hm, hs], [d]) if (v.rule, v.function, v.message) not in before]
    assert [(Path(v.file).name, v.rule, v.line, v.function) for v in vs] == [
        ("accel_kernel.h", "loop-tripcount", trip, "post_finish"),
        ("accel_kernel_store.h", "pipeline-div", beats + 1, "store_beats")], vs
    r = subprocess.run([sys.executable, "-m", "generator.backends.hls.lint", str(d)], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout.count("accel_kernel") == 2 + len(before), r.stdout + r.stderr

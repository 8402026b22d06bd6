"""generator/backends/hls/lint/ analysis.py / ports.py / memories.py: the port analysis of pipelined loops and the
stream / m_axi rules. (a) small kernels, each planting one violation class, reported with the loop's name and the II
it forces (the II derived here by hand from UG1399's port counts), and their clean counterparts; (b) the rendered
kernel: every hot loop at analysed II=1, and a port taken away from it is found."""
import re
import shutil

import pytest

from generator.backends import hls
from generator.backends.hls import lint as hls_lint
from generator.backends.hls.lint.run import analyse_folder
from generator.spec.board import load_board

HEAD = "#include <ap_int.h>\n#include <hls_stream.h>\n"


def analyse(tmp_path, code):
    d = tmp_path / "k"
    d.mkdir(exist_ok=True)
    (d / "k.cpp").write_text(HEAD + code)
    loops, vs = analyse_folder(d)
    assert vs == [v for v in hls_lint.check([d / "k.cpp"]) if v.rule in RULES]   # check() reports the same
    return {lp.label: lp for lp in loops}, vs


RULES = ("pipeline-ports", "axis-nonblocking", "maxi-bundle", "maxi-burst")


def rules(vs):
    return sorted({v.rule for v in vs})


def ports_violation(vs, label, ii):
    """The one pipeline-ports violation names the loop and the II it forces."""
    pv = [v for v in vs if v.rule == "pipeline-ports"]
    assert len(pv) == 1, vs
    assert f"loop {label}:" in pv[0].message and f"II={ii} at least" in pv[0].message, pv[0].message
    return pv[0]


# ------------------------------------------------------------------------------------------ ram_1p / ram_t2p
def _two_reads(storage):
    return f"""
void top(const int a[64], int out[64], int n) {{
#pragma HLS INTERFACE mode=bram port=a storage_type={storage}
#pragma HLS INTERFACE mode=bram port=out storage_type=ram_1p
TWO_READS:
    for (int i = 0; i < n; i++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=63
#pragma HLS PIPELINE II=1
        out[i] = a[i] + a[i + 1];
    }}
}}
"""


def test_two_reads_of_ram_1p(tmp_path):
    loops, vs = analyse(tmp_path, _two_reads("ram_1p"))
    lp = loops["TWO_READS"]
    # ram_1p: one access per cycle, two reads -> II 2
    assert (lp.requested_ii, lp.ii, lp.limit, lp.reads, lp.writes, lp.storage) == (1, 2, "a", 2, 0, "ram_1p")
    assert ports_violation(vs, "TWO_READS", 2).function == "top"


@pytest.mark.parametrize("storage", ["ram_t2p", "ram_2p"])
def test_two_reads_of_ram_t2p_clean(tmp_path, storage):
    # ram_t2p: two accesses per cycle; ram_2p: ... one read and one write, so two reads need ram_t2p
    loops, vs = analyse(tmp_path, _two_reads(storage))
    want = 1 if storage == "ram_t2p" else 2
    assert loops["TWO_READS"].ii == want
    assert (vs == []) == (want == 1), vs


def test_requested_ii_from_a_named_constant(tmp_path):
    """``II=NAME`` with a namespace-scope constexpr (UG1399, "Using Constants with Pragmas"): the requested II is
    its value (two reads of a ram_1p then meet it); a name that is no such constant is an error naming the line."""
    code = "static constexpr int TWO = 1 + 1;\n" + _two_reads("ram_1p").replace("II=1", "II=TWO")
    loops, vs = analyse(tmp_path, code)
    assert (loops["TWO_READS"].requested_ii, loops["TWO_READS"].ii) == (2, 2) and vs == []
    with pytest.raises(ValueError, match=r"k\.cpp:\d+: pragma II=THREE: not a namespace-scope constant"):
        analyse(tmp_path, _two_reads("ram_1p").replace("II=1", "II=THREE"))


# ------------------------------------------------------------------------------------------ partitioned lanes
def _lanes(index):
    return f"""
void top(int buf[16][8], const int in[8], int off, int n) {{
#pragma HLS INTERFACE mode=bram port=buf storage_type=ram_1p
#pragma HLS INTERFACE mode=bram port=in storage_type=ram_1p
#pragma HLS ARRAY_PARTITION variable=buf dim=2 complete
#pragma HLS ARRAY_PARTITION variable=in dim=1 complete
LANES:
    for (int r = 0; r < n; r++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=16
#pragma HLS PIPELINE II=1
    UNPACK:
        for (int j = 0; j < 8; j++) {{
#pragma HLS UNROLL
            buf[r][{index}] = in[j];
        }}
    }}
}}
"""


def test_runtime_lane_into_partitioned_dimension(tmp_path):
    # (j + off) % 8: every one of the 8 unrolled writes may reach every lane memory -> 8 writes each, II 8
    loops, vs = analyse(tmp_path, _lanes("(j + off) % 8"))
    lp = loops["LANES"]
    assert (lp.ii, lp.writes, lp.storage) == (8, 8, "ram_1p") and lp.limit.startswith("buf bank ")
    ports_violation(vs, "LANES", 8)


def test_constant_lanes_after_unrolling_clean(tmp_path):
    loops, vs = analyse(tmp_path, _lanes("j"))
    assert loops["LANES"].ii == 1 and loops["LANES"].writes == 1 and vs == []
    assert len([b for b in loops["LANES"].bounds if b[0].startswith("buf bank ")]) == 8


# ------------------------------------------------------------------------------------------ cyclic banks
def _cyclic(index):
    return f"""
void top(const int p[64], int out[64], int pb, int n) {{
#pragma HLS INTERFACE mode=bram port=p storage_type=ram_1p
#pragma HLS INTERFACE mode=bram port=out storage_type=ram_1p
#pragma HLS ARRAY_PARTITION variable=p dim=1 cyclic factor=4
#pragma HLS ARRAY_PARTITION variable=out dim=1 cyclic factor=4
CYCLIC:
    for (int i = 0; i < n; i++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=16
#pragma HLS PIPELINE II=1
        for (int m = 0; m < 4; m++) {{
#pragma HLS UNROLL
            out[i * 4 + m] = p[{index}];
        }}
    }}
}}
"""


def test_cyclic_bank_from_runtime_offset(tmp_path):
    # pb + m: pb unknown, so each of the 4 reads may hit each of the 4 banks -> 4 reads per bank, II 4
    loops, vs = analyse(tmp_path, _cyclic("pb + m"))
    lp = loops["CYCLIC"]
    assert (lp.ii, lp.reads, lp.storage) == (4, 4, "ram_1p") and lp.limit.startswith("p bank ")
    ports_violation(vs, "CYCLIC", 4)


def test_cyclic_bank_provable_clean(tmp_path):
    # i * 4 + m: a multiple of the factor plus m -> bank m, one read per bank
    loops, vs = analyse(tmp_path, _cyclic("i * 4 + m"))
    assert loops["CYCLIC"].ii == 1 and vs == []


# ------------------------------------------------------------------------------------------ branches, reshape
def _branches(body, storage="ram_1p"):
    return f"""
void top(int a[64], int out[64], bool w, int n) {{
#pragma HLS INTERFACE mode=bram port=a storage_type={storage}
#pragma HLS INTERFACE mode=bram port=out storage_type=ram_1p
BR:
    for (int i = 0; i < n; i++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=63
#pragma HLS PIPELINE II=1
        int s = 0;
        {body}
        out[i] = s;
    }}
}}
"""


def test_if_else_exclusive_clean(tmp_path):
    loops, vs = analyse(tmp_path, _branches("if (w) a[i] = i; else s = a[i + 1];"))
    assert loops["BR"].ii == 1 and vs == []
    loops, vs = analyse(tmp_path, _branches("s = w ? a[i] : a[i + 1];"))
    assert loops["BR"].ii == 1 and vs == []


def test_plain_ifs_add(tmp_path):
    loops, vs = analyse(tmp_path, _branches("if (w) a[i] = i;\n        if (n > 3) s = a[i + 1];"))
    assert (loops["BR"].ii, loops["BR"].reads, loops["BR"].writes) == (2, 1, 1)
    ports_violation(vs, "BR", 2)


def _reshape(row):
    return f"""
void top(ap_int<8> buf[32][8], const ap_int<8> v[8], int n) {{
#pragma HLS INTERFACE mode=bram port=buf storage_type=ram_1p
#pragma HLS INTERFACE mode=bram port=v storage_type=ram_1p
#pragma HLS ARRAY_RESHAPE variable=buf dim=2 complete
#pragma HLS ARRAY_PARTITION variable=v dim=1 complete
WORD:
    for (int r = 0; r < n; r++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=24
#pragma HLS PIPELINE II=1
        for (int j = 0; j < 8; j++) {{
#pragma HLS UNROLL
            buf[{row}][j] = v[j];
        }}
    }}
}}
"""


def test_reshaped_word_one_write(tmp_path):
    loops, vs = analyse(tmp_path, _reshape("r"))
    assert (loops["WORD"].ii, loops["WORD"].writes) == (1, 1) and vs == []


def test_reshaped_word_different_rows(tmp_path):
    loops, vs = analyse(tmp_path, _reshape("r + j"))
    assert (loops["WORD"].ii, loops["WORD"].writes) == (8, 8)
    ports_violation(vs, "WORD", 8)


# ------------------------------------------------------------------------------------------ streams, m_axi
def _axis(call):
    return f"""
static void push(hls::stream<int> &s, int v) {{
    {call}
}}
void top(hls::stream<int> &s, int v) {{
#pragma HLS INTERFACE mode=axis port=s
    hls::stream<int> local;
    if (!local.empty()) v += local.read();
    push(s, v);
}}
"""


def test_axis_nonblocking(tmp_path):
    _, vs = analyse(tmp_path, _axis("if (!s.full()) s.write(v);"))
    assert rules(vs) == ["axis-nonblocking"] and vs[0].function == "push" and "'full' on 's'" in vs[0].message
    line = next(i + 1 for i, t in enumerate((HEAD + _axis("if (!s.full()) s.write(v);")).splitlines())
                if "s.full()" in t)
    assert vs[0].line == line


def test_axis_blocking_clean(tmp_path):
    _, vs = analyse(tmp_path, _axis("s.write(v);"))       # (the local stream's empty() is not an axis port)
    assert vs == []


def _bundles(b_bundle, b_access):
    return f"""
void top(int *a, int *b, int n) {{
#pragma HLS INTERFACE mode=m_axi port=a bundle=gmem0 offset=off depth=64
#pragma HLS INTERFACE mode=m_axi port=b bundle={b_bundle} offset=off depth=64
BUNDLE:
    for (int i = 0; i < n; i++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=64
#pragma HLS PIPELINE II=1
        a[i] = i;
        {b_access};
    }}
}}
"""


def test_two_arrays_on_one_bundle(tmp_path):
    loops, vs = analyse(tmp_path, _bundles("gmem0", "b[i] = i + 1"))
    assert rules(vs) == ["maxi-bundle", "pipeline-ports"]
    assert "a, b are all written on bundle gmem0" in next(v.message for v in vs if v.rule == "maxi-bundle")
    # one write channel: two writes per iteration -> II 2
    assert (loops["BUNDLE"].ii, loops["BUNDLE"].writes) == (2, 2)
    ports_violation(vs, "BUNDLE", 2)


@pytest.mark.parametrize("bundle, access", [("gmem1", "b[i] = i + 1"), ("gmem0", "n += b[i]")])
def test_bundles_clean(tmp_path, bundle, access):
    # a bundle of its own, or the same bundle in the other direction (read and write channels)
    loops, vs = analyse(tmp_path, _bundles(bundle, access))
    assert vs == [] and loops["BUNDLE"].ii == 1


def _burst(index):
    return f"""
void top(const int *ddr, const int idx[64], int out[64], int base, int n) {{
#pragma HLS INTERFACE mode=m_axi port=ddr bundle=gmem offset=off depth=4096
#pragma HLS INTERFACE mode=bram port=idx storage_type=ram_1p
#pragma HLS INTERFACE mode=bram port=out storage_type=ram_1p
BURST:
    for (int i = 0; i < n; i++) {{
#pragma HLS LOOP_TRIPCOUNT min=1 max=64
#pragma HLS PIPELINE II=1
        out[i] = ddr[{index}];
    }}
}}
"""


def test_maxi_no_burst(tmp_path):
    _, vs = analyse(tmp_path, _burst("idx[i]"))
    assert rules(vs) == ["maxi-burst"] and "loop BURST: m_axi 'ddr'" in vs[0].message


def test_maxi_burst_clean(tmp_path):
    _, vs = analyse(tmp_path, _burst("base + i"))
    assert vs == []


# ------------------------------------------------------------------------------------------ (b) the kernel
HOT = ["LOAD_BEATS", "PBUF_BEATS", "PE_TILE", "PE_RMW", "BYPASS", "POST_TILE", "STORE_BEATS", "PRE_PIXELS",
       "PRE_FETCH"]


@pytest.fixture(scope="module")
def zcu_kernel(tmp_path_factory):
    d = tmp_path_factory.mktemp("ports_zcu19eg")
    hls.render(load_board("zcu19eg"), d)
    return d


def test_kernel_hot_loops_at_ii_1(zcu_kernel):
    """The rendered zcu19eg kernel: every hot loop of LOAD, PRE, COMPUTE, POST and STORE at analysed II=1 (the issue
    42 rewrite; before it PE_TILE / PE_RMW were II=2, LOAD_BEATS / STORE_BEATS 32, POST_TILE Tm = 48)."""
    loops, _ = analyse_folder(zcu_kernel)
    got = {lp.label: lp for lp in loops}
    for lp in loops:
        print(f"{lp.label}: requested {lp.requested_ii}, analysed {lp.ii} ({lp.limit}, {lp.storage}: "
              f"{lp.reads} R, {lp.writes} W), depth {lp.depth}")
    assert {h: got[h].ii for h in HOT} == {h: 1 for h in HOT}


def test_kernel_port_taken_away_is_found(zcu_kernel, tmp_path):
    """The compute top's IBUF as ram_1p instead of ram_t2p: the int8 pixel pair's two reads per iteration then
    force II=2 on PE_TILE."""
    d = tmp_path / "k"
    shutil.copytree(zcu_kernel, d)
    src = (d / "accel.cpp").read_text()
    top = src.index("_compute(")
    m = re.compile(r"port=ibuf storage_type=ram_t2p").search(src, top)
    assert m is not None
    (d / "accel.cpp").write_text(src[:m.start()] + "port=ibuf storage_type=ram_1p" + src[m.end():])
    loops, vs = analyse_folder(d)
    pe = next(lp for lp in loops if lp.label == "PE_TILE")
    assert (pe.ii, pe.reads, pe.storage) == (2, 2, "ram_1p") and pe.limit.startswith("ibuf bank")
    assert any(v.rule == "pipeline-ports" and "loop PE_TILE:" in v.message and "II=2" in v.message for v in vs)


def test_loops_table_on_the_command_line(zcu_kernel, capsys):
    """``python -m generator.backends.hls.lint --loops DIR``: the per-loop table of the folder (one row per
    pipelined loop, analysed II beside the requested one), then the violations (none: exit 0)."""
    from generator.backends.hls.lint import main
    assert main(["--loops", str(zcu_kernel)]) == 0
    rows = {ln.split(" | ")[0].strip("| "): ln.split(" | ") for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| ") and not ln.startswith("| loop")}
    assert set(HOT) <= set(rows)
    assert all(rows[h][2:4] == ["1", "1"] for h in HOT), {h: rows[h] for h in HOT}

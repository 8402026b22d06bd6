"""Resources of the RTL measured by Yosys (generator/estimate/rtl_resources.py, ``synth_xilinx -family xcup``): the PE array
maps to exactly one DSP48E2 per PE plus the requantization multipliers, PRE to its 21 DSP48E2 and two line buffers
in block RAM, the on-chip buffers to block RAM / UltraRAM (or LUTRAM when tiny), not to flip-flops; the default
board's configuration fits its part (slow). Without yosys the flow says how to install it; a design over capacity
is refused with the numbers."""
from __future__ import annotations

import re

import pytest

from generator import ROOT_DIR, build_dir
from generator.backends.rtl import package_context, write_rtl
from generator.backends.rtl.render import render_package
from generator.estimate import hls_resources, rtl_model
from generator.estimate import rtl_resources as rr
from generator.spec import memories
from generator.spec.board import load_board
from generator.exec.rtl import TINY, board_config
from helpers import board

needs_yosys = pytest.mark.skipif(rr.yosys() is None, reason="yosys not installed (apt-get install yosys)")


def _buffer_bits(b) -> int:
    """Bits of the on-chip buffers the RTL stores (16-bit elements, ACC_W-bit accumulators, 16-byte records; a
    double-pumped array's IBUF and ACC copies counted)."""
    p, k = package_context(b), b.accelerator.pump
    return (2 * k * p["ibuf_elems"] * 16 + 2 * p["wbuf_elems"] * 16 + 2 * k * p["acc_words"] * p["tm"] * p["acc_w"]
            + p["obuf_elems"] * 16 + p["pbuf_entries"] * 8 * p["param_bytes"])


def _memory_mapping(log_text: str) -> dict:
    """{memory instance: Yosys mapping} from the memory_libmap lines of the log."""
    return dict(re.findall(r"mapping memory accel_top\.(\S+?)\.u_ram1?\.\S+ via (\S+)", log_text))


def _check_structure(r: rr.RtlResources, b) -> None:
    a = b.accelerator
    assert r.used["dsp48e2"] == rr.expected_dsp(b) == a.tn * a.tm + 2 * a.tm + rr.PRE_DSP
    # the HLS estimate agrees but for PRE, a different unit there: each side's PRE by name (RTL 21, HLS 16)
    assert r.estimate is not None and r.estimate.dsp_pre == hls_resources.pre_dsp()
    assert r.used["dsp48e2"] - rr.PRE_DSP == r.estimate.dsp48e2 - r.estimate.dsp_pre
    log = r.log.read_text()
    pre = re.findall(r"mapping memory accel_top\.u_pre\.u_pre\.g_buf\[\d\]\.u_lb\.\S+ via (\S+)", log)
    assert len(pre) == rtl_model.PRE_LINE_BUFFERS and all("BLOCKRAM" in v for v in pre), pre
    maps = _memory_mapping(log)
    # (copy 1: g_copy1; WBUF: one memory per row for both banks)
    groups = {"g_ibuf": 2 * a.tn * a.pump, "g_wbuf": a.tm, "g_acc": 2 * a.tm * a.pump}
    for g, n in groups.items():                  # the big buffers: every lane memory in block RAM or UltraRAM
        got = {k: v for k, v in maps.items() if f".{g}[" in k}
        assert len(got) == n, (g, sorted(maps)[:5])
        assert all("BLOCKRAM" in v or "URAM" in v for v in got.values()), got
    assert all("BLOCKRAM" in v or "URAM" in v or "LUTRAM" in v for v in maps.values())
    assert r.used["bram36"] + 8 * r.used["uram"] > 0
    if r.used["ff"] is not None:        # (pipeline registers: about 25k on TINY; any buffer in FFs adds more)
        assert r.used["ff"] < _buffer_bits(b) / 10, "buffers must not be flip-flops"
    assert r.over() == []


BUILD = build_dir("rtl_resources")


@pytest.fixture(scope="module")
def tiny_synth():
    """TINY synthesized once (about 2-3 minutes here), then reused while the RTL, script and Yosys are unchanged."""
    return rr.synthesize(board(**TINY), BUILD / "tiny-test", log=lambda *a: None)


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_tiny_rtl_synthesizes_to_dsp48e2_and_block_ram(tiny_synth):
    """TINY (8x8 PE array): 64 PE DSP48E2 + 8 requantization + 8 element-wise product + PRE's 21 DSP48E2 (the HLS
    estimate: PRE's 16, so 96); IBUF/WBUF/ACC lane memories and PRE's line buffers in BRAM."""
    r = tiny_synth
    _check_structure(r, board(**TINY))
    assert r.used["dsp48e2"] == 64 + 8 + 8 + 21
    t = r.table()
    assert "| DSP48E2 | 101 | 96 | 1968 |" in t and "HLS estimate" in t


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_tiny_netlist_cells_attributed_to_units(tiny_synth):
    """Every cell of TINY's mapped netlist has a unit and the units add up to Yosys' stat; the DSP48E2s sit where the
    RTL puts them: Tn x Tm in the PE array, Tm in the requantization lanes, Tm (the element-wise product) in
    compute, 21 in PRE; every block RAM in the buffers but PRE's four line buffers (770 x 128 bits: 4 BRAM36 each)."""
    r, b = tiny_synth, board(**TINY)
    tn, tm = b.accelerator.tn, b.accelerator.tm
    assert "?" not in r.units, r.units["?"]
    total: dict = {}
    for cells in r.units.values():
        for k, v in cells.items():
            total[k] = total.get(k, 0) + v
    assert total == r.cells
    assert {u: c["DSP48E2"] for u, c in r.units.items() if c.get("DSP48E2")} == {
        "pe_array": tn * tm, "requant": tm, "compute": tm, "pre": rr.PRE_DSP}
    assert {u for u, c in r.units.items() if c.get("RAMB18E2") or c.get("RAMB36E2")} == {"buffers", "pre"}
    assert rr.count(r.units["pre"])["bram36"] == sum(m.bram36 for m in rtl_model.pre_memories(b)) == 4 * 4
    assert f"| total | {r.used['lut']:,} |" in rr.report(r)


def _model_matches(r: rr.RtlResources, b) -> None:
    """The RTL resource model's DSP48E2, BRAM36 and URAM counts within 5% of Yosys' (the DSE ranks with it)."""
    m = rtl_model.estimate(b).used()
    for k in ("dsp48e2", "bram36", "uram"):
        assert abs(m[k] - r.used[k]) <= 0.05 * max(r.used[k], 1), (k, m[k], r.used[k])


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_rtl_resource_model_matches_yosys_on_tiny(tiny_synth):
    """DSP48E2, BRAM36, URAM within 5% (here: equal); LUT within 10% (the output lanes priced from Yosys' netlists of
    their units, rtl_model.lane_units); FF within 25%."""
    _model_matches(tiny_synth, board(**TINY))
    m = rtl_model.estimate(board(**TINY)).used()
    assert abs(m["lut"] - tiny_synth.used["lut"]) <= 0.1 * tiny_synth.used["lut"], (m["lut"], tiny_synth.used["lut"])
    assert abs(m["ff"] - tiny_synth.used["ff"]) <= 0.25 * tiny_synth.used["ff"], (m["ff"], tiny_synth.used["ff"])


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_output_lane_units_priced_as_yosys_maps_them(tiny_synth):
    """The model's output-lane units (rtl_model.lane_units, priced from out-of-context netlists of 16 x 16, 32 x 16
    and 16 x 32 arrays) against TINY's whole-design netlist by unit, each within 20%: the requantization lanes;
    POST with its activation tables; COMPUTE without the PE array (its accumulation tail, control, range checks
    and bypass shifter)."""
    u = {k: rr.count(v)["lut"] for k, v in tiny_synth.units.items()}
    m = rtl_model.lane_units(board(**TINY))
    for got, want in ((u["requant"], m["requant"]), (u["post"], m["act_table"] + m["post"] + m["post_fixed"]),
                      (u["compute"], m["compute_acc"] + m["compute_fixed"] + m["wbuf_select"] + m["bypass"])):
        assert abs(got - want) <= 0.2 * got, (got, want, u, m)


@pytest.mark.slow   # (a Yosys synthesis, about 3 minutes)
@needs_yosys
def test_rtl_resource_model_matches_yosys_on_tiny_double_pumped():
    """TINY double-pumped (pump 2: rtl/pe_array_2x.sv, IBUF and ACC copies): the same DSP48E2s as TINY; the model's
    DSP48E2, BRAM36, URAM within 5% of Yosys' (the copies counted), its LUT at 50-100% of Yosys' and its FFs (an
    upper bound of the pumped array's registers, rtl_model.pump_fabric) within 25%, its LUT within 10% of Yosys';
    more block RAM and FFs than the single-rate TINY."""
    b = board(**{**TINY, "pump": 2})
    r = rr.synthesize(b, BUILD / "tiny-2x-test", log=lambda *a: None)
    _check_structure(r, b)
    assert r.used["dsp48e2"] == 64 + 8 + 8 + 21
    assert r.units["pe_array"]["DSP48E2"] == 64          # (pe_array_2x's cells, under the PE array's unit)
    _model_matches(r, b)
    m = rtl_model.estimate(b).used()
    assert abs(m["lut"] - r.used["lut"]) <= 0.1 * r.used["lut"], (m["lut"], r.used["lut"])
    assert abs(m["ff"] - r.used["ff"]) <= 0.25 * r.used["ff"], (m["ff"], r.used["ff"])
    one = rtl_model.estimate(board(**TINY)).used()
    assert m["bram36"] + m["uram"] > one["bram36"] + one["uram"] and m["ff"] > one["ff"]


@needs_yosys
@pytest.mark.slow
def test_zcu19eg_rtl_fits_its_part():
    """The default board's configuration (32x40 double-pumped, the exploration's choice) through Yosys' DSP48E2 and
    block-RAM / UltraRAM mapping (their counts are final there; on the former 32x32 configuration the whole flow
    with LUT mapping, ``invoke resources --board zcu19eg --rtl``, took 2,108 s here against 1,352 s for the
    mapping): one DSP48E2 per PE, one per requantization lane, one per element-wise-product lane, PRE's 21."""
    b = load_board("zcu19eg")
    r = rr.check(b, BUILD / "zcu19eg-test", log=lambda *a: None, mapping_only=True)
    _check_structure(r, b)
    a = b.accelerator
    assert r.used["dsp48e2"] == a.tn * a.tm + 2 * a.tm + rr.PRE_DSP
    _model_matches(r, b)


def test_yosys_sources_parse_without_imports(tmp_path):
    """The Yosys copy has no import statement and qualifies the package's names."""
    srcs = write_rtl(board(**TINY), tmp_path / "src")
    ys = rr.yosys_sources(srcs, tmp_path / "ys")
    units = "".join(p.read_text() for p in ys[1:])               # every unit file (the package is ys[0])
    assert "import accel_pkg" not in units and "parameter string" not in units
    assert "accel_pkg::TN" in units and "accel_pkg::OP_LOAD" in units and "accel_pkg::accel_pkg" not in units
    assert "accel_pkg::addr_add(" in units                         # the package's functions too
    assert [p.name for p in ys] == [p.name for p in srcs]


def test_missing_yosys_names_the_package(monkeypatch, tmp_path):
    monkeypatch.setattr(rr, "yosys", lambda: None)
    with pytest.raises(rr.RtlResourceError, match=r"apt-get install yosys"):
        rr.synthesize(board(**TINY), tmp_path)


def test_over_capacity_is_refused_with_the_numbers(monkeypatch, tmp_path):
    b = load_board("ultra96v2")
    cells = {"DSP48E2": 400, "RAMB36E2": 10, "RAMB18E2": 3, "LUT6": 1000, "RAM32M16": 2, "FDRE": 5000}
    fake = rr.RtlResources(board=b.name, part=b.part, tn=16, tm=16, used=rr.count(cells),
                           capacity=b.resources.model_dump(), cells=cells, seconds=1.0, log=tmp_path / "log")
    monkeypatch.setattr(rr, "synthesize", lambda *a, **k: fake)
    assert fake.used == {"dsp48e2": 400, "bram36": 11.5, "uram": 0, "lut": 1016, "ff": 5000}
    with pytest.raises(rr.RtlResourceError) as ei:
        rr.check(b, tmp_path)
    msg = str(ei.value)
    assert "ultra96v2" in msg and b.part in msg and "dsp48e2 400 / 360 (over)" in msg and "bram36 11.5 / 216" in msg


def test_a_matching_run_in_another_folder_is_reused(monkeypatch, tmp_path):
    """``also``: the run of another work folder (the whole-design `invoke timing` run) with the same sources,
    script and Yosys is reused, not repeated; a folder with no such run synthesizes again."""
    fake = tmp_path / "yosys"
    runs = tmp_path / "runs"
    fake.write_text("#!/bin/sh\n[ \"$1\" = -V ] && { echo 'Yosys 0.0 (fake)'; exit 0; }\n"
                    f"echo run >> {runs}\n"
                    "echo '{\"design\": {\"num_cells_by_type\": {\"DSP48E2\": 88, \"LUT6\": 7}}}' > stat.json\n"
                    "echo '{}' > netlist.json\n")
    fake.chmod(0o755)
    monkeypatch.setattr(rr, "yosys", lambda: str(fake))
    b = board(**TINY)
    first = rr.synthesize(b, tmp_path / "timing", log=lambda *a: None)
    again = rr.synthesize(b, tmp_path / "resources", log=lambda *a: None, also=(tmp_path / "timing",))
    assert runs.read_text().count("run") == 1
    assert again.used == first.used and again.used["dsp48e2"] == 88
    rr.synthesize(b, tmp_path / "other", log=lambda *a: None)
    rr.synthesize(b, tmp_path / "mapping", log=lambda *a: None, mapping_only=True, also=(tmp_path / "timing",))
    assert runs.read_text().count("run") == 3                  # (a mapping-only script is another script)


def test_hp_splitter_fifos_are_bound_to_lutram():
    """The two-HP-port burst splitter's (rtl/axi_hp_split.sv) data FIFOs are bound to LUTRAM in the source
    (``sync_fifo`` DISTRIBUTED, ram_style "distributed"), as the resource model counts them; what Yosys makes of
    them: the next test (slow)."""
    src = (ROOT_DIR / "rtl" / "axi_hp_split.sv").read_text()
    fifo = (ROOT_DIR / "rtl" / "sync_fifo.sv").read_text()
    for inst in ("u_rf", "u_wf"):
        assert re.search(r"sync_fifo #\([^;]*\.DISTRIBUTED\(1'b1\)\) " + inst + r" \(", src), inst
    assert re.search(r'if \(DISTRIBUTED\) begin : g_lutram\s+\(\* ram_style = "distributed" \*\) logic', fifo)


@pytest.mark.slow   # (a Yosys synthesis)
@needs_yosys
def test_hp_splitter_fifos_are_lutram_at_the_board_configuration(tmp_path):
    """The two-HP-port burst splitter (rtl/axi_hp_split.sv) at zcu19eg's 256-bit m_axi: its four 128-deep data
    FIFOs are bound to LUTRAM (``sync_fifo`` DISTRIBUTED, ram_style "distributed"), as the resource model counts
    them. In the whole 32x48 design Yosys put them, left to itself, in 17 BRAM36 (8 RAMB36E2 + 18 RAMB18E2),
    one BRAM36 over the part's 984; out of context it picks LUTRAM either way, so the binding itself is checked in
    the source, and the out-of-context synthesis (about 40 s) for no block RAM and LUTs within 25% of the model's
    (:func:`generator.estimate.hls_resources.hp_split_lut_ff`)."""
    from generator.estimate.hls_resources import hp_split_lut_ff
    src = (ROOT_DIR / "rtl" / "axi_hp_split.sv").read_text()
    fifo = (ROOT_DIR / "rtl" / "sync_fifo.sv").read_text()
    for inst in ("u_rf", "u_wf"):
        assert re.search(r"sync_fifo #\([^;]*\.DISTRIBUTED\(1'b1\)\) " + inst + r" \(", src), inst
    assert re.search(r'if \(DISTRIBUTED\) begin : g_lutram\s+\(\* ram_style = "distributed" \*\) logic', fifo)
    b = load_board("zcu19eg")
    assert b.accelerator.hp_ports == 2
    r = rr.synthesize(b, tmp_path, top="axi_hp_split", uram=True, log=lambda *a: None)
    assert r.used["bram36"] == 0 and r.used["uram"] == 0 and r.used["dsp48e2"] == 0, r.used
    maps = re.findall(r"mapping memory axi_hp_split\.(\S+) via (\S+)", r.log.read_text())
    data = [k for k, v in maps if (".u_rf." in k or ".u_wf." in k) and "LUTRAM" in v and ".g_lutram." in k]
    assert len(data) == 4, maps
    lut, _ = hp_split_lut_ff(b)
    assert abs(r.used["lut"] - lut) <= 0.25 * lut, (r.used["lut"], lut)


def _code(path) -> str:
    """An RTL file without comments and attributes."""
    c = re.sub(r"//.*", "", path.read_text())
    return re.sub(r"\(\*.*?\*\)", "", re.sub(r"/\*.*?\*/", "", c, flags=re.S), flags=re.S)


def test_pre_dsp_and_line_buffers_follow_the_rtl():
    """The model's PRE from PRE's sources: the ``pe_dsp`` instances of ``rtl/pre_chan.sv`` times ``rtl/pre.sv``'s
    channel loop (21, each an instantiated DSP48E2), every other ``*`` in PRE's files (its instruction unit, the
    serial multipliers, the readers and writers, the write arbiter) by a literal factor (an index or a width, no
    multiplier); the line buffers the ``ram_tdp`` of ``pre.sv``'s ``g_buf`` loop (two pairs: twice the HLS kernel's
    two, each the same memory), bound by ``memories.rtl_pre_binding`` (PRE_LB_STYLE): block RAM on TINY's 128-bit and
    the pumped 32 x 40's (the board file's) 256-bit m_axi, UltraRAM on the single-rate 32 x 48 with the L buffers
    (256 KB IBUF and OBUF, 4K-word ACC banks), whose lanes leave too little block RAM."""
    rtl = ROOT_DIR / "rtl"
    chan, pre = _code(rtl / "pre_chan.sv"), _code(rtl / "pre.sv")
    per = len(re.findall(r"^\s*pe_dsp\b", chan, re.M))
    loop = re.search(r"for \(genvar c = 0; c < (\d+); c\+\+\) begin : g_ch\s+pre_chan u_ch", pre)
    assert loop and per == rr.PRE_DSP_PER_CHANNEL and int(loop.group(1)) == rr.PRE_CHANNELS
    assert rr.PRE_DSP == 21
    files = sorted(rtl.glob("pre*.sv")) + [rtl / "seq_mul2.sv", rtl / "axi_wr_arb.sv"]
    for f in files:
        for m in re.finditer(r"([\w')\]]+)\s*\*\s*([\w'(]+)", _code(f)):
            assert m.group(1).isdigit() or m.group(2).isdigit(), (f.name, m.group(0))
    bufs = re.search(r"for \(genvar k = 0; k < (\d+); k\+\+\) begin : g_buf.*?"
                     r"ram_tdp #\(\.W\(DW\), \.D\(LBEATS\), \.NB\(1\), \.STYLE\(PRE_LB_STYLE\)\) u_lb", pre, re.S)
    assert bufs, "pre.sv's line buffers"
    # raw m_axi beats: the HLS kernel's PRE_LINE_BEATS = 3 x 4096 / B + 2 words of DW bits (PRE_MAX_FRAME: host.pre's)
    assert re.search(r"localparam int LBEATS = 3 \* PRE_MAX_FRAME / B \+ 2\b", pre) and "B = DW / 8" in pre
    assert "localparam int PRE_MAX_FRAME = 4096;" in render_package(board())
    for kw in (dict(axi_data_width_bits=128, hp_ports=1), dict(axi_data_width_bits=256)):
        b = board(**kw)
        m = rtl_model.pre_memories(b)[0]
        dw = b.accelerator.axi_data_width_bits
        assert (m.count, m.width, m.depth) == (int(bufs.group(1)), dw, 3 * 4096 // (dw // 8) + 2)
        assert m.tdp and m.impl == memories.rtl_pre_binding(b)
        h = hls_resources.pre_memories(b)[0]
        assert (2 * h.count, h.width, h.depth) == (m.count, m.width, m.depth)   # the kernel's two, twice
    # 770 x 128 true dual port: 4 BRAM36 each; 386 x 256: fifteen 1024 x 18 RAMB18E2 (7.5 BRAM36) each, or 4 URAM288
    boards = (board(**TINY), board_config("zcu19eg", "32x48", **LARGE_BUFFERS), board())
    tiny, big, pumped = (rtl_model.pre_memories(b)[0] for b in boards)
    assert (tiny.impl, tiny.bram36, pumped.impl, pumped.bram36) == ("bram", 16, "bram", 30)
    assert (big.impl, big.uram, big.bram36) == ("uram", 16, 0)
    assert hls_resources.pre_memories(board())[0].bram36 == 15


def test_pre_write_fifo_and_arbiter_queues_follow_the_rtl():
    """The model's PRE write FIFO (2 WB beats) and the write arbiter's unit queues (QDEPTH) are what rtl/pre_wr.sv
    and rtl/axi_wr_arb.sv are built with: WB from the package's PRE_WBURST, QDEPTH the top's WR_QDEPTH; the block
    design's accel_hp.v keeps the arbiter's default, which equals it."""
    rtl = ROOT_DIR / "rtl"
    assert re.search(r"parameter int WB = PRE_WBURST\b", _code(rtl / "pre_wr.sv"))
    assert re.search(r"axi_wr_arb #\(.*\.QDEPTH\(WR_QDEPTH\)\) u_wr", _code(rtl / "accel_top.sv"))
    qd = re.search(r"parameter int QDEPTH = (\d+)", _code(rtl / "axi_wr_arb.sv"))
    assert qd and int(qd.group(1)) == rtl_model.WR_ARB_QDEPTH
    assert "axi_wr_arb #(" in _code(ROOT_DIR / "hls_templates" / "bd" / "accel_hp.v")
    assert ".QDEPTH(" not in _code(ROOT_DIR / "hls_templates" / "bd" / "accel_hp.v")
    pkg = render_package(load_board("zcu19eg"))
    assert f"localparam int PRE_WBURST = {rtl_model.PRE_WRITE_BURST};" in pkg
    assert f"localparam int WR_QDEPTH = {rtl_model.WR_ARB_QDEPTH};" in pkg


def test_rtl_model_counts_pre():
    """The RTL model's DSP48E2 = the PE array + 2 per output lane + PRE's 21, its BRAM36 the buffers' and PRE's
    line buffers, its LUT / FF PRE's part (:func:`generator.estimate.rtl_model.pre_lut_ff`) on every board; the
    HLS estimate names its own PRE (16): the two differ by PRE alone."""
    from generator.spec.board import known_boards
    for name in known_boards():
        b = load_board(name, chosen=False)
        a, m, h = b.accelerator, rtl_model.estimate(b), hls_resources.estimate(b)
        assert (m.dsp_pe, m.dsp_post, m.dsp_emul, m.dsp_pre) == (a.tn * a.tm, a.tm, a.tm, rr.PRE_DSP)
        assert m.dsp48e2 == rr.expected_dsp(b) == m.dsp_pe + m.dsp_post + m.dsp_emul + m.dsp_pre
        assert m.dsp48e2 - m.dsp_pre == h.dsp48e2 - h.dsp_pre and h.dsp_pre == hls_resources.pre_dsp() == 16
        assert [x.name for x in m.memories][-1] == "PRE line buffers"
        lut, ff = rtl_model.pre_lut_ff(b)
        assert rtl_model.lut_terms(b)["pre"] == lut > 0 and ff > 0


#: the L buffer preset (generator.estimate.dse.BUFFER_PRESETS) on the 32 x 48: block RAM short, URAM bound
LARGE_BUFFERS = dict(ibuf_bank_bytes=262144, obuf_bytes=262144, acc_bank_words=4096)
#: pumped 32 x 40 with the M buffers: its IBUF copies (both ports write) in URAM
PUMPED_M = dict(ibuf_bank_bytes=131072, obuf_bytes=131072, wbuf_bank_bytes=288 * 32 * 40, acc_bank_words=2048)
#: the configurations with URAM-bound buffers: (named config, accelerator overrides)
URAM_CONFIGS = {"32x48": ("32x48", {}), "32x48-L": ("32x48", LARGE_BUFFERS), "32x40-2x-M": ("32x40-2x", PUMPED_M)}
#: ram_tdp parameters of each buffer's lane memory (rtl/buffers.sv), in the rendered package's names
LANE_RAMS = {"IBUF": ("16", "IB_D", "2"), "WBUF": ("16 * TN", "2 * WB_D", "2 * TN"), "ACC": ("ACC_W", "ACC_WORDS", "1"),
             "OBUF": ("16", "OB_D", "1"), "PBUF": ("PREC_W", "PB_D", "PARAM_BYTES"),
             "TBUF": ("PREC_W", "TB_D", "PARAM_BYTES"),
             "PRE_LB": ("AXI_DW", "3 * PRE_MAX_FRAME / (AXI_DW / 8) + 2", "1")}


@needs_yosys
@pytest.mark.parametrize("config", list(URAM_CONFIGS))
def test_ultraram_bound_lane_memories_map_to_uram288(tmp_path, config):
    """Every buffer the binding puts in UltraRAM (ram_tdp STYLE 2) on zcu19eg's configurations -- the 32 x 48's ACC
    lanes (both ports write), with the L buffers its PRE line buffers, the double-pumped 32 x 40's IBUF copies with
    the M buffers -- maps to URAM288 alone under Yosys (one lane memory out of context, the package's parameters): no other RAM cell, no error (without ``no_rw_check`` on the
    memory Yosys finds no URAM288 mapping of a true-dual-port RAM: its port A writes are seen new by port B)."""
    import json
    import subprocess
    from generator.backends.rtl import ram_styles
    from generator.exec.rtl import board_config
    name, acc = URAM_CONFIGS[config]
    b = board_config("zcu19eg", name, **acc)
    ultra = sorted(k for k, v in ram_styles(b).items() if v == 2)
    assert ultra, ram_styles(b)
    srcs = {p.name: p for p in write_rtl(b, tmp_path / "src")}
    for k in ultra:
        w, d, nb = (re.sub(r"\b([A-Z][A-Z_]+)\b", r"accel_pkg::\1", e) for e in LANE_RAMS[k])
        (tmp_path / f"{k}.sv").write_text(
            f"module top(input wire clk, input wire [{nb}-1:0] a_we, b_we, input wire [$clog2({d})-1:0] a_addr, "
            f"b_addr, input wire [{w}-1:0] a_wdata, b_wdata, output logic [{w}-1:0] a_rdata, b_rdata);\n"
            f"  ram_tdp #(.W({w}), .D({d}), .NB({nb}), .STYLE(2)) u (.clk, .a_en(1'b1), .a_we, .a_addr, .a_wdata,\n"
            f"    .a_rdata, .b_en(1'b1), .b_we, .b_addr, .b_wdata, .b_rdata);\nendmodule\n")
        stat = tmp_path / f"{k}.json"
        r = subprocess.run([rr.yosys(), "-q", "-p", f"read_verilog -sv {srcs['accel_pkg.sv']} {srcs['ram_tdp.sv']} "
                            f"{tmp_path / f'{k}.sv'}; synth_xilinx -family xcup -noiopad -flatten -nowidelut -uram "
                            f"-top top; tee -q -o {stat} stat -json"], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{config} {k}: {r.stderr.strip()[-400:]}"
        cells = json.loads(stat.read_text())["design"]["num_cells_by_type"]
        rams = {c: n for c, n in cells.items() if c.startswith(("RAMB", "URAM", "RAM32", "RAM64", "RAM128", "RAM256"))}
        assert set(rams) == {"URAM288"}, (config, k, rams)

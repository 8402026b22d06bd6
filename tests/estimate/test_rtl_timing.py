"""Timing estimate from the open netlist (generator/estimate/rtl_timing.py, ``invoke timing``), against references
independent of the analyzer: small Verilog modules synthesized by Yosys whose structure is known (an n-bit
registered adder is one LUT level and an n-bit carry chain; a register-to-register wire no level; the parity of 6
bits one LUT6, of 36 bits at least ceil(log6 36) = 2; a multiply between registers gets its A/B and P (and M)
registers absorbed, one behind an adder does not; a block RAM output starts a path), hand-made netlists (carry
pin accounting, a combinational loop), and the TINY accelerator (the whole design, shared with the resource test's
Yosys run)."""
from __future__ import annotations

import subprocess

import pytest

from generator import build_dir
from generator.estimate import rtl_resources as rr
from generator.estimate import rtl_timing as rt
from generator.exec.rtl import TINY
from helpers import board

needs_yosys = pytest.mark.skipif(rr.yosys() is None, reason="yosys not installed (apt-get install yosys)")

VERILOG = """
module add64(input clk, input [63:0] a, b, output reg [63:0] q);
  reg [63:0] ra, rb; always @(posedge clk) begin ra <= a; rb <= b; q <= ra + rb; end
endmodule
module add16(input clk, input [15:0] a, b, output reg [15:0] q);
  reg [15:0] ra, rb; always @(posedge clk) begin ra <= a; rb <= b; q <= ra + rb; end
endmodule
module wire_ff(input clk, input [7:0] a, output reg [7:0] q);
  reg [7:0] ra; always @(posedge clk) begin ra <= a; q <= ra; end
endmodule
module par(input clk, input [35:0] a, output reg q6, output reg q36);
  reg [35:0] ra; always @(posedge clk) begin ra <= a; q6 <= ^ra[5:0]; q36 <= ^ra; end
endmodule
module mul_p(input clk, input signed [17:0] a, b, output reg signed [35:0] q);
  reg signed [17:0] ra, rb; always @(posedge clk) begin ra <= a; rb <= b; q <= ra * rb; end
endmodule
module mul_mp(input clk, input signed [17:0] a, b, output reg signed [35:0] q);
  reg signed [17:0] ra, rb; reg signed [35:0] m;
  always @(posedge clk) begin ra <= a; rb <= b; m <= ra * rb; q <= m; end
endmodule
module mul_comb(input clk, input signed [17:0] a, b, c, output reg signed [35:0] q);
  reg signed [17:0] ra, rb, rc; always @(posedge clk) begin ra <= a; rb <= b; rc <= c; q <= (ra + rc) * rb; end
endmodule
module two_chains(input clk, input [15:0] a, b, c, output reg q);
  reg [15:0] ra, rb, rc; always @(posedge clk) begin ra <= a; rb <= b; rc <= c; q <= ra + rb > rc; end
endmodule
module two_clk(input clk, input clk2x, input [15:0] a, output reg [15:0] q, output reg signed [35:0] pq);
  reg [15:0] ra, f, f2;
  always @(posedge clk) ra <= a;
  always @(posedge clk2x) begin f <= ra + 16'd1; f2 <= f; end
  always @(posedge clk) q <= f2 ^ ra;
  reg signed [17:0] ea, eb;                    // a clk multiply as COMPUTE's emul: fabric registers around it
  always @(posedge clk) begin ea <= $signed(a) - 18'sd3; eb <= $signed(f2) - 18'sd5; pq <= ea * eb; end
endmodule
module ram(input clk, input [9:0] wa, ra, input [31:0] d, input we, output reg [31:0] q);
  reg [31:0] mem [0:1023]; reg [31:0] o;
  always @(posedge clk) begin if (we) mem[wa] <= d; o <= mem[ra]; q <= o + 32'd1; end
endmodule
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """{module: TimingReport} of the modules above, each synthesized by Yosys for xcup (a few seconds each)."""
    d = tmp_path_factory.mktemp("timing")
    (d / "m.v").write_text(VERILOG)
    out = {}
    for m in ("add64", "add16", "wire_ff", "par", "mul_p", "mul_mp", "mul_comb", "ram", "two_clk", "two_chains"):
        subprocess.run([rr.yosys(), "-q", "-p", f"read_verilog m.v; synth_xilinx -family xcup -noiopad -flatten "
                        f"-top {m}; write_json {m}.json"], cwd=d, check=True, capture_output=True)
        out[m] = rt.analyze(d / f"{m}.json", m)
    return out


def _ends(r, prefix):
    return [p for p in r.endpoints if p.end.startswith(prefix)]


@needs_yosys
def test_adders_count_their_carry_bits(small):
    for m, n in (("add64", 64), ("add16", 16)):
        q = _ends(small[m], "q[")
        assert max(p.carry for p in q) == n, m
        assert max(p.levels for p in q) == 1, m                 # the sum's XOR in a LUT, then the carry chain
    assert small["add64"].over_carry > 0 and not small["add64"].meets()
    assert small["add16"].over_carry == 0 and small["add16"].over_levels == 0
    assert small["add64"].worst.delay > small["add16"].worst.delay


@needs_yosys
def test_carry_chains_are_counted_per_path(small):
    """A registered 16-bit add enters one carry chain; an add whose sum is then compared (ra + rb > rc: the sum's
    bits, through LUTs, into the comparator's chain) enters two (MAX_CARRY_CHAINS: one is the limit)."""
    assert max(p.chains for p in _ends(small["add16"], "q")) == 1
    q = _ends(small["two_chains"], "q")
    assert max(p.chains for p in q) == 2 and small["two_chains"].over_chains == len(q) == 1
    t = small["two_chains"]                                      # a second chain fails the verdict by itself
    assert t.over_levels == 0 and t.over_carry == 0 and t.fmax_mhz >= rt.TARGET_MHZ and not t.meets()
    assert small["wire_ff"].max_chains == 0
    (name, bits, p), = small["two_chains"].chain_vectors()       # the report's table of them
    assert bits == 1 and p.chains == 2 and name == q[0].end
    assert small["add16"].chain_vectors() == [] and "more than 1 carry chain" in rt.report(small["two_chains"])


@needs_yosys
def test_register_to_register_wire_has_no_level(small):
    q = _ends(small["wire_ff"], "q[")
    assert len(q) == 8 and all(p.levels == 0 and p.carry == 0 for p in q)
    d = rt.DELAY_NS
    assert q[0].delay == pytest.approx(d["ff_clk_to_q"] + d["setup"] + d["uncertainty"])


@needs_yosys
def test_parity_levels_follow_the_lut6_fanin(small):
    lv = {p.end: p.levels for p in small["par"].endpoints}
    assert lv["q6"] == 1
    assert lv["q36"] >= 2                                       # 36 inputs need at least ceil(log6 36) LUT levels


@needs_yosys
def test_dsp_registers_inferred_from_the_surrounding_flip_flops(small):
    assert dict(small["mul_p"].dsp) == {"p": 1}
    assert dict(small["mul_mp"].dsp) == {"mp": 1}
    assert dict(small["mul_comb"].dsp) == {"comb": 1}
    # the pipelined multiply is the fastest; behind an adder with no input register the DSP is combinational
    assert small["mul_mp"].fmax_mhz > small["mul_p"].fmax_mhz > small["mul_comb"].fmax_mhz
    assert small["mul_comb"].worst.dsp == 1 and small["mul_comb"].worst.carry > 0


@needs_yosys
def test_block_ram_output_starts_a_path(small):
    q = max(_ends(small["ram"], "q["), key=lambda p: p.delay)
    assert q.start.startswith("BRAM") and q.carry == 32
    assert q.delay >= rt.DELAY_NS["bram_clk_to_out"]


@needs_yosys
def test_two_clocks_time_each_path_against_the_faster_clock(small):
    """clk and clk2x (CLOCK_RATIOS: twice the logic clock, edges aligned; Yosys puts a BUFG on each): ra (clk) ->
    ra + 1 -> f (clk2x) is a crossing with one fast period; f -> f2 a clk2x path; f2 ^ ra -> q (clk) one path from
    each domain. Each endpoint is reported once per launching clock that reaches it, and the logic clock's fmax is
    the worst of 1000 / (delay x ratio)."""
    r = small["two_clk"]
    doms = r.domains()
    assert set(doms) == {"clk", "clk -> clk2x", "clk2x", "clk2x -> clk"}, doms
    assert {k: d["ratio"] for k, d in doms.items()} == {"clk": 1, "clk -> clk2x": 2, "clk2x": 2, "clk2x -> clk": 2}
    by = {(p.end.split("[")[0], p.clock) for p in r.endpoints}
    assert {("f", "clk -> clk2x"), ("f2", "clk2x"), ("q", "clk"), ("q", "clk2x -> clk"), ("ra", "clk")} <= by, by
    assert not any(p.end.startswith("f[") and p.clock != "clk -> clk2x" for p in r.endpoints)
    # the multiply's DSP48E2 (its input registers clk's, whether Yosys absorbed them or left them in the fabric)
    # starts clk paths only: pq is reached from clk alone
    assert {p.clock for p in r.endpoints if p.end.startswith("pq[")} == {"clk"}
    f = max((p for p in r.endpoints if p.end.startswith("f[")), key=lambda p: p.delay)
    assert f.carry >= 16 and f.levels <= 1
    assert r.fmax_mhz == pytest.approx(min(1000 / (p.delay * p.ratio) for p in r.endpoints))
    assert r.fmax_mhz == pytest.approx(min(1000 / (d["ratio"] * d["worst_ns"]) for d in doms.values()))
    assert "| clk -> clk2x |" in rt.report(r)


def _cell(t, conns, dirs, src="x.sv:1"):
    return {"type": t, "connections": conns, "port_directions": dirs, "attributes": {"src": src}}


def _ff(d, q):
    return _cell("FDRE", {"C": [1], "D": [d], "Q": [q], "CE": ["1"], "R": ["0"]},
                 {"C": "input", "D": "input", "Q": "output", "CE": "input", "R": "input"})


def test_carry_pins_span_from_their_bit():
    """Two CARRY4 cells chained through CO[3] -> CI: S[2] of the first into O[1] of the second spans 2 + 2 bits,
    S[0] of the second into its O[1] two; a path through a LUT between chains starts a new run."""
    ffs = {f"ff{i}": _ff(d, q) for i, (d, q) in enumerate([(50, 10), (51, 11), (30, 20), (31, 21)])}
    c4 = {"CI": "input", "CYINIT": "input", "DI": "input", "S": "input", "O": "output", "CO": "output"}
    cells = {**ffs,
             "c0": _cell("CARRY4", {"CI": ["0"], "CYINIT": ["0"], "DI": ["0"] * 4, "S": ["0", "0", 10, "0"],
                                    "O": [40, 41, 42, 43], "CO": [44, 45, 46, 47]}, c4),
             "c1": _cell("CARRY4", {"CI": [47], "CYINIT": ["0"], "DI": ["0"] * 4, "S": [11, "0", "0", "0"],
                                    "O": [60, 30, 61, 62], "CO": [63, 64, 65, 66]}, c4),
             "lut": _cell("LUT2", {"I0": [30], "I1": [11], "O": [31]},
                          {"I0": "input", "I1": "input", "O": "output"})}
    mod = {"cells": cells, "ports": {}, "netnames": {"a": {"bits": [10]}, "s": {"bits": [20]}, "t": {"bits": [21]}}}
    r = rt.analyze({"modules": {"top": mod}}, "top")
    by = {p.end: p for p in r.endpoints if "(" not in p.end}
    assert by["s"].carry == 4 and by["s"].levels == 0          # S[2] -> CO[3] (2 bits), CI -> O[1] (2 bits)
    assert by["t"].carry == 4 and by["t"].levels == 1          # the LUT after the chain: the run is not extended


def test_combinational_loop_and_missing_top_are_named():
    lut = {"I0": "input", "O": "output"}
    mod = {"cells": {"a": _cell("LUT1", {"I0": [5], "O": [6]}, lut), "b": _cell("LUT1", {"I0": [6], "O": [5]}, lut),
                     "f": _ff(6, 7)}, "ports": {}, "netnames": {"loopnet": {"bits": [6]}}}
    with pytest.raises(rt.TimingError, match="combinational loop through net loopnet"):
        rt.analyze({"modules": {"top": mod}}, "top")
    with pytest.raises(rt.TimingError, match="'nope' is not in the netlist"):
        rt.analyze({"modules": {"top": mod}}, "nope")


@pytest.fixture(scope="module")
def tiny_timing():
    """TINY synthesized by the resource flow (shared with tests/estimate/test_rtl_resources.py through its cache)."""
    d = build_dir("rtl_resources", "tiny-test")
    rr.synthesize(board(**TINY), d, log=lambda *a: None)
    return rt.analyze(d / "yosys" / rr.NETLIST_JSON, "accel_top", rt.instance_modules(sorted((d / "src").glob("*.sv"))))


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_tiny_report_names_rtl_units(tiny_timing):
    r = tiny_timing
    assert len(r.endpoints) > 10_000 and 0 < r.fmax_mhz < 2000
    assert sum(r.histogram.values()) == len(r.endpoints)
    rows = r.worst_vectors()
    assert len(rows) == 20 and rows[0][2].delay == r.worst.delay
    known = {"post", "compute", "pe_array", "pe_dsp", "load", "load_rd", "load_wr", "store", "seg_gen", "fetch_dispatch", "ctrl_regs",
             "status", "axi_rd_arb", "token_queues", "buffers", "sync_fifo", "ram_tdp", "accel_top", "top", "requant",
             "pre", "pre_insn", "pre_rd", "pre_wr", "pre_chan", "axi_wr_arb"}
    w = rows[0][2]                              # the worst: an RTL unit, its file:line or its hierarchical net
    assert w.unit in known and (w.src.split(":")[0].endswith(".sv") or w.src.startswith("net u_")), w
    assert sum(p.unit in known for _, _, p in rows) >= 3         # (RAM pins of Yosys-named cells count as unknown)
    assert sum(r.dsp.values()) == TINY["tn"] * TINY["tm"] + 2 * TINY["tm"] + rr.PRE_DSP   # PEs, requant., emul, PRE
    text = rt.report(r, "TINY")
    assert "estimated fmax" in text and "not Vivado" in text


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_tiny_meets_300mhz(tiny_timing):
    """The whole TINY accelerator: no register-to-register path over 6 LUT levels, 32 carry bits or one carry
    chain, estimated fmax at least 300 MHz, every DSP48E2 with the A/B, M and P registers Vivado absorbs."""
    r = tiny_timing
    assert r.over_levels == 0 and r.over_carry == 0 and r.fmax_mhz >= rt.TARGET_MHZ, rt.report(r, "TINY")
    assert r.over_chains == 0 and r.meets(), rt.report(r, "TINY")      # one carry chain per path (issue 46)
    assert set(r.dsp) == {"mp"}, r.dsp


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
@pytest.mark.parametrize("unit", ["pe_array", "compute", "seg_gen", "fetch_dispatch", "load"])
def test_pipelined_units_meet_300mhz(tmp_path, unit):
    """The units pipelined for the clock keep meeting the limits out of context (TINY; seconds of Yosys each):
    no path over 6 LUT levels, 32 carry bits or one carry chain, estimated fmax >= 300 MHz; the PE array's 64
    DSP48E2s (COMPUTE: and the element-wise product's 8) with their A/B, M and P registers."""
    from generator.flows.timing import timing_flow
    r = timing_flow("zcu19eg", "tiny", unit=unit, out=tmp_path, log=lambda *a: None)
    assert r.meets() and r.over_chains == 0, rt.report(r, unit)
    if unit in ("pe_array", "compute"):
        assert dict(r.dsp) == {"mp": TINY["tn"] * TINY["tm"] + (TINY["tm"] if unit == "compute" else 0)}


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_yosys
def test_pumped_pe_array_meets_both_clocks(tmp_path):
    """rtl/pe_array_2x.sv (TINY, out of context; issue 46): every clock domain and crossing within its own period
    (clk 300 MHz; clk2x and the crossings 600 MHz), at most 2 LUT levels from a register into any DSP48E2 input
    (the 2:1 multiplexer is one), every DSP48E2 with its A/B, M and P registers."""
    from generator.flows.timing import timing_flow
    r = timing_flow("zcu19eg", "tiny", unit="pe_array_2x", out=tmp_path, log=lambda *a: None)
    doms = r.domains()
    assert set(doms) == {"clk", "clk -> clk2x", "clk2x", "clk2x -> clk"}, doms
    assert all(d["fmax_mhz"] >= d["target_mhz"] for d in doms.values()), doms
    assert r.meets() and r.over_chains == 0, rt.report(r, "pe_array_2x")
    dsp_in = [p for p in r.endpoints if p.end.startswith("DSP48E2") and not p.end.split(".")[-1].startswith("PCIN")]
    assert dsp_in and max(p.levels for p in dsp_in) <= 2
    assert dict(r.dsp) == {"mp": TINY["tn"] * TINY["tm"]}


@pytest.fixture(scope="module")
def board_timing(tmp_path_factory):
    """The zcu19eg board configuration's timing report, synthesized once for the tests below."""
    from generator.flows.timing import timing_flow
    out = tmp_path_factory.mktemp("board_timing")
    return timing_flow("zcu19eg", "board", out=out, log=lambda *a: None), out


@needs_yosys
@pytest.mark.slow
def test_board_configuration_timing(board_timing):
    """The zcu19eg board configuration (32x40 double-pumped; about 100 minutes of Yosys): reported, named."""
    r, out = board_timing
    assert len(r.endpoints) > 100_000 and r.fmax_mhz > 0
    assert (out / "timing.json").exists() and (out / "yosys" / rr.NETLIST_JSON).exists()


@needs_yosys
@pytest.mark.slow
def test_board_configuration_meets_300mhz(board_timing):
    """The zcu19eg board configuration (32x40 double-pumped): no endpoint over 6 LUT levels or 32 carry bits, every
    clock domain and crossing within its own period (the logic clock 300 MHz; clk2x and the crossings 600 MHz),
    every DSP48E2 with its M and P registers."""
    r, _ = board_timing
    doms = r.domains()
    assert {"clk", "clk2x"} <= set(doms) and all(d["fmax_mhz"] >= d["target_mhz"] for d in doms.values()), doms
    assert r.over_levels == 0 and r.over_carry == 0 and r.fmax_mhz >= rt.TARGET_MHZ
    assert r.over_chains == 0 and r.meets(), r.chain_vectors()        # one carry chain per path (issue 46)
    assert set(r.dsp) == {"mp"}, r.dsp


def test_timing_flow_refuses_bad_arguments(tmp_path):
    from generator.flows.inputs import FlowError
    from generator.flows.timing import timing_flow
    with pytest.raises(FlowError, match="--unit 'postt' is not an RTL module: choose one of .*post"):
        timing_flow("zcu19eg", "tiny", unit="postt", out=tmp_path)
    with pytest.raises(FlowError, match="--config 'huge'"):
        timing_flow("zcu19eg", "huge", out=tmp_path)
    with pytest.raises(FlowError, match="board 'nosuch'"):
        timing_flow("nosuch", "tiny", out=tmp_path)


def test_frames_per_second_at_the_estimated_fmax(tmp_path):
    """The RTL frame report's line: frames/s at the fmax of timing.json, capped at the board clock; without an
    estimate, the command that makes one."""
    import json
    from generator.flows.timing import fmax_line
    fmax, line = fmax_line(2_000_000, "zcu19eg", "board", 300.0, tmp_path)
    assert fmax is None and "invoke timing --board zcu19eg --config board" in line
    (tmp_path / "timing.json").write_text(json.dumps({"fmax_mhz": 64.2}))
    fmax, line = fmax_line(2_000_000, "zcu19eg", "board", 300.0, tmp_path)
    assert fmax == 64.2 and f"{64.2e6 / 2e6:.2f} FPS" in line and "not Vivado" in line
    (tmp_path / "timing.json").write_text(json.dumps({"fmax_mhz": 420.0}))
    assert f"{300e6 / 2e6:.2f} FPS" in fmax_line(2_000_000, "zcu19eg", "board", 300.0, tmp_path)[1]

"""The SystemVerilog RTL (rtl/, package rendered by generator/backends/rtl/) under cocotb + Verilator: every
layer kind and quant mode of the single-layer suite (three of the modes and int16 beyond RTL_INT16_KINDS in the slow
tier: RTL_SLOW_MODES), bit for
bit against the golden ISA simulator (the whole DDR image after the run; executors ``rtl`` and ``golden`` of
generator.exec), on the TINY configuration (Tn = Tm = 8, tiny buffers that force tiling). The RTL is built once
per pytest process (tests/helpers.py shared_executor; instructions fetched from DDR, so one build runs every
program); each program is one simulator run.
Also a lint run under ``verilator --lint-only -Wall``; the error statuses are in tests/exec/test_status.py."""
from __future__ import annotations

import subprocess
import zlib

import numpy as np
import pytest

from generator.spec import isa

from generator.exec import RtlExecutor, run_program, runtime
from generator.backends.rtl import TOP, write_rtl
from generator.exec.golden import GoldenSim
from generator.exec.rtl import TINY
from helpers import board, compile_small, quantize_input, shared_executor
from generator.frontend.modelgen import Builder
from layer_suite import KINDS, MODES, first_layer_folded

pytest.importorskip("cocotb_tools")
from generator.exec.rtl import BUILD, layer_report, verilator  # noqa: E402

needs_verilator = pytest.mark.skipif(verilator() is None, reason="verilator not installed (run ./setup.sh)")
#: modes whose RTL datapath a default-tier mode already drives run on the RTL in the slow tier only: the symmetric
#: ones (zero points 0, the same value range: a case of int8-asym's and int16-asym's) and per-tensor int8-asym
#: (per-channel records holding one value); every mode runs on the C-simulation (tests/backends/test_hls_csim.py)
#: and the golden simulator (tests/exec/test_layers.py) in the default tier
RTL_SLOW_MODES = {("int8-sym", True), ("int16-sym", True), ("int8-asym", False)}


@pytest.fixture(scope="session")
def tiny_rtl():
    """The RTL of TINY, one Verilator build per pytest process (shared with tests/exec/test_status.py)."""
    return shared_executor("rtl", board(**TINY), "tiny")


def _layer_case(kind, mode, pc):
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gq, prog, xs = compile_small(b.model(list(outs)), mode, pc, board(**TINY))
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    return prog, ddr, bases


#: the kinds the default tier runs in int16-asym on the RTL (the others in int16 in --slow; every kind in int16 in the
#: C-simulation and the golden / reference suites, and int16 layers in the mixed-precision RTL test): the PE array
#: without packing, table activations, pooling, the element-wise adder and the folded first layer at 16 bits
RTL_INT16_KINDS = {"conv3x3_s1", "table_acts", "relu_pool", "residual_add", "first_layer_folded"}


def _rtl_cases() -> list:
    """(kind, mode, pc) of the RTL layer suite, those of RTL_SLOW_MODES and int16 beyond RTL_INT16_KINDS slow."""
    out = []
    for m, p in MODES:
        for k in KINDS:
            slow = (m, p) in RTL_SLOW_MODES or (m.startswith("int16") and k not in RTL_INT16_KINDS)
            out.append(pytest.param(k, m, p, id=f"{k}-{m}-{'pc' if p else 'pt'}",
                                    marks=pytest.mark.slow if slow else ()))
    return out


@needs_verilator
@pytest.mark.parametrize("kind,mode,pc", _rtl_cases())
def test_rtl_layer_bit_exact(tiny_rtl, kind, mode, pc):
    prog, ddr, bases = _layer_case(kind, mode, pc)
    run = tiny_rtl.run(prog, ddr, bases, case=BUILD / "tiny" / "cases" / f"{kind}-{mode}-{pc}")
    gold = run_program("golden", prog, ddr, bases)
    res = run.detail
    assert not run.timeout, "the RTL did not raise its interrupt in time"
    assert run.status == 0 and gold.status == 0
    bad = np.flatnonzero(run.ddr != gold.ddr)
    assert bad.size == 0, f"{bad.size} DDR bytes differ from the golden simulator, first at {bad[0]:#x}"
    assert res["ctrl"] >> isa.CTRL_BITS["ap_done"] & 1 and res["ctrl"] >> isa.CTRL_BITS["ap_idle"] & 1
    assert res["irq_after_clear"] == 0
    assert not res["ctrl_after_read"] >> isa.CTRL_BITS["ap_done"] & 1     # ap_done is clear-on-read
    hw = prog.hw
    assert res["hw_info"] == isa.ISA_VERSION | hw.tn << 8 | hw.tm << 16 | 3 << 24
    assert res["config_id"] == hw.config_id
    assert run.cycles > 0 and gold.cycles > 0
    rows = layer_report(prog, res)                   # per-layer RTL cycles from the bench's retirement stamps
    assert all(r.get("rtl", 0) > 0 for r in rows) and sum(r["rtl"] for r in rows) <= res["cycles"]


def _switches(prog, op, **where):
    """Times two consecutive ``op`` instructions (those whose fields match ``where``) differ in precision: each a
    back-to-back change of precision in that module's queue."""
    precs = [i.f["prec"] for i in prog.insns if i.op == op and all(i.f[k] in v for k, v in where.items())]
    return sum(a != b for a, b in zip(precs, precs[1:]))


#: mixed-precision graphs on the RTL: every other layer's output in the other precision (tests/helpers.py
#: compile_small ``precision="alternate"``); table_acts has table activations (SiLU, Mish, Sigmoid, HardSwish) and a
#: max-pool in both precisions and precision changes in every module's queue; the default tier runs
#: attention_mul (the C-simulation's and the fuzz's mixed cases cover the others there), the others are in the slow tier
MIXED_KINDS = {("table_acts", "int8-asym"): True, ("table_acts", "int16-sym"): True,
               ("attention_mul", "int8-asym"): False, ("spp", "int8-asym"): True, ("residual_add", "int16-sym"): True,
               ("upsample", "int8-asym"): True, ("first_layer_folded", "int16-sym"): True}


@needs_verilator
@pytest.mark.parametrize("kind,mode", [pytest.param(k, m, marks=pytest.mark.slow) if slow else (k, m)
                                       for (k, m), slow in MIXED_KINDS.items()],
                         ids=[f"{k}-{m}" for k, m in MIXED_KINDS])
def test_rtl_mixed_precision_bit_exact(tiny_rtl, kind, mode):
    """Layers alternating int8 / int16 (each LOAD, COMPUTE, POST and STORE in its own precision, the requantization
    between precisions at each layer boundary): the whole DDR image after the RTL run equals the golden
    simulator's, the run ends cleanly, and the RTL's cycles are within 10% of the latency model's."""
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gq, prog, xs = compile_small(b.model(list(outs)), mode, True, board(**TINY), precision="alternate")
    assert {r.bits for r in gq.regions.values()} == {8, 16}
    assert {i.f["prec"] for i in prog.insns if i.op in ("COMPUTE", "POST", "STORE")} == {0, 1}
    if kind == "table_acts":      # what this graph is here for: tables, pools and changes of precision everywhere
        posts = [i.f for i in prog.insns if i.op == "POST"]
        assert {f["prec"] for f in posts if f["act"] & isa.ACTIVATIONS["table"]} == {0, 1}
        assert {f["prec"] for f in posts if f["pool_k"] > 1} == {0, 1}
        assert all(_switches(prog, op) for op in ("COMPUTE", "POST", "STORE"))
        assert _switches(prog, "LOAD", buf=(isa.BUFFERS["IBUF"], isa.BUFFERS["WBUF"]))
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    run = tiny_rtl.run(prog, ddr, bases, case=BUILD / "tiny" / "cases" / f"mixed-{kind}-{mode}")
    gold = run_program("golden", prog, ddr, bases)
    assert not run.timeout, "the RTL did not raise its interrupt in time"
    assert run.status == 0 and gold.status == 0, (run.status, gold.status)
    bad = np.flatnonzero(run.ddr != gold.ddr)
    assert bad.size == 0, f"{bad.size} DDR bytes differ from the golden simulator, first at {bad[0]:#x}"
    assert abs(run.cycles / gold.cycles - 1) <= 0.10, f"RTL {run.cycles} cycles vs the model's {gold.cycles}"


@pytest.fixture(scope="session")
def tiny2x_rtl():
    """The RTL of TINY double-pumped (rtl/pe_array_2x.sv on clk2x), one Verilator build per pytest process."""
    return shared_executor("rtl", board(**{**TINY, "pump": 2}), "tiny-2x")


#: graphs on the double-pumped RTL: (kind, mode, precision plan) -> slow; the default tier runs the
#: mixed-precision table_acts (int8 four and int16 two pixels per step, pools and tables in both precisions, every
#: row-end remainder of the tile widths) and attention_mul (the bypass and the element-wise product, one pixel per
#: step into the ACC copy of its column)
PUMPED_CASES = {("table_acts", "int8-asym", "alternate"): False, ("attention_mul", "int8-asym", None): False,
                **{(k, "int8-asym", None): True for k in KINDS if k not in ("attention_mul",)},
                ("conv3x3_s1", "int16-sym", None): True, ("upsample", "int8-asym", "alternate"): True}


@needs_verilator
@pytest.mark.parametrize("kind,mode,precision", [pytest.param(*c, marks=pytest.mark.slow) if slow else c
                                                 for c, slow in PUMPED_CASES.items()],
                         ids=[f"{k}-{m}-{p or 'one'}" for k, m, p in PUMPED_CASES])
def test_rtl_double_pumped_bit_exact(tiny2x_rtl, kind, mode, precision):
    """The double-pumped TINY RTL (pump 2): the whole DDR image equals the golden simulator's, the run ends
    cleanly, and its cycles are within 2% of the latency model's (which prices the pumped steps: four int8 or two
    int16 output pixels per COMPUTE step) plus 100 cycles: the model leaves out 60-90 cycles of a run's start and
    end, which these programs of 700-5,000 cycles feel (the single-rate TINY RTL shows the same: conv1x1 1,520
    against 1,459, first_layer_folded 768 against 709, concat 4,671 against 4,584)."""
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    extra = dict(precision=precision) if precision else {}
    gq, prog, xs = compile_small(b.model(list(outs)), mode, True, board(**{**TINY, "pump": 2}), **extra)
    assert prog.hw.pump == 2 and prog.hw.pix_lanes == (4 if prog.hw.bits == 8 else 2)
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    run = tiny2x_rtl.run(prog, ddr, bases, case=BUILD / "tiny-2x" / "cases" / f"{kind}-{mode}-{precision}")
    gold = run_program("golden", prog, ddr, bases)
    assert not run.timeout, "the RTL did not raise its interrupt in time"
    assert run.status == 0 and gold.status == 0, (run.status, gold.status)
    bad = np.flatnonzero(run.ddr != gold.ddr)
    assert bad.size == 0, f"{bad.size} DDR bytes differ from the golden simulator, first at {bad[0]:#x}"
    assert abs(run.cycles - gold.cycles) <= 0.02 * gold.cycles + 100, f"RTL {run.cycles} cycles, model {gold.cycles}"


@pytest.mark.slow   # (its own Verilator build; the C-simulation's ROM mode stays in the default tier)
@needs_verilator
def test_rtl_instruction_rom():
    """fetch_ddr = 0: the program comes from the instruction ROM baked in by $readmemh (a separate build)."""
    prog, ddr, bases = _layer_case("conv3x3_s2", "int8-asym", True)
    rom = RtlExecutor(board(**TINY), "tiny_rom", quiet=False, rom=prog.blob)
    blank = bytes(len(prog.blob))                   # no program in DDR (zeros where a DDR fetch would read it)
    run = rom.run(prog, ddr, bases, blob=blank, case="case", fetch_ddr=0)
    gold = run_program("golden", prog, ddr, bases)
    assert not run.timeout and run.status == 0 and gold.status == 0
    assert np.array_equal(run.ddr, gold.ddr)


# the error statuses of bad programs (every condition of isa.STATUS_BITS, on the RTL, the golden simulator, the
# C-simulation and the PYNQ driver): tests/exec/test_status.py


@needs_verilator
@pytest.mark.parametrize("brd", ["tiny", "tiny-2hp", "tiny-4hp", "tiny-2x",
                                 pytest.param("zcu19eg", marks=pytest.mark.slow)])
def test_rtl_lint_clean(tmp_path, brd):
    """Verilator -Wall on TINY, TINY with Tm = 32 on two HP ports (the burst splitter) and 48-word WBUF banks (a
    memory per bank, generator.spec.memories.wbuf_one_memory), the same on a 512-bit m_axi over four HP ports (the
    splitter tree, two instructions per fetched beat), TINY double-pumped (rtl/pe_array_2x.sv, the IBUF / ACC
    copies) and (slow, 21 s) the board file's configuration."""
    two = dict(TINY, tn=16, tm=32, axi_data_width_bits=256, hp_ports=2, wbuf_bank_bytes=48 * 16 * 32)
    four = dict(two, axi_data_width_bits=512, hp_ports=4)
    b = {"tiny": lambda: board(**TINY), "tiny-2hp": lambda: board(**two), "tiny-4hp": lambda: board(**four),
         "tiny-2x": lambda: board(**{**TINY, "pump": 2}),
         "zcu19eg": board}[brd]()
    srcs = write_rtl(b, tmp_path)
    r = subprocess.run(["verilator", "--lint-only", "-Wall", "--top-module", TOP, *map(str, srcs)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_verilator
def test_rtl_full_frame_small(tmp_path):
    """The whole YOLOv4-tiny frame (64x64, 8x8 PE array) through the RTL, bit-exact against the golden simulator
    (``invoke rtl-frame --config small --resolution 64``), and the latency model calibrated against the RTL: every
    layer's predicted cycles within 3% of the RTL's (the bench's DDR has the board's 40-cycle read latency; the
    folded first layer's row spans are the farthest, 2.3% here; the 416x416 frame's layers are within 0.25%).
    About 30 s. The zcu19eg 416x416 frames: the next (slow) test."""
    from generator.flows.rtl_frame import simulate_frame
    rep = simulate_frame("zcu19eg", "bus", "int8-asym", config="small", resolution=64, out=tmp_path,
                         log=lambda *a: None)
    assert rep["bit_exact"], f"{rep['diff_bytes']} DDR bytes differ"
    assert all(r.get("rtl", 0) > 0 for r in rep["layers"])
    bad = [(r["layer"], round(r["ratio"], 3)) for r in rep["layers"] if abs(r["ratio"] - 1) > 0.03]
    assert not bad, f"layers whose RTL cycles differ from the latency model by more than 3%: {bad}"
    assert rep["detections"]


@needs_verilator
@pytest.mark.slow
def test_rtl_performance_int8_vs_int16(tmp_path):
    """The whole YOLOv4-tiny frame at 416x416 on the zcu19eg board file's configuration (32 x 40 with the DSP48E2s
    double-pumped, two HP ports) through the RTL in int8 and int16: both frames bit-exact, every layer within 2% of
    the latency model, int8 at least 300 frames/s at the 300 MHz logic clock and at least 1.8x the frames per
    second of int16 (measured: 1.87; the DDR- and LOAD-bound layers weigh more in int16), PE utilization (ideal
    cycles of the real MACs on the pumped array / RTL cycles) at least 60%. About 80 minutes."""
    from generator.flows.rtl_frame import simulate_frame
    reps = {q: simulate_frame("zcu19eg", "bus", q, config="board", resolution=416, out=tmp_path / q,
                              log=lambda *a: None) for q in ("int8-asym", "int16-sym")}
    for q, rep in reps.items():
        assert rep["bit_exact"], f"{q}: {rep['diff_bytes']} DDR bytes differ"
        assert rep["pe_util"] >= 0.60, f"{q}: PE utilization {rep['pe_util']:.1%}"
        bad = [(r["layer"], round(r["ratio"], 3)) for r in rep["layers"] if abs(r["ratio"] - 1) > 0.02]
        assert not bad, f"{q}: layers whose RTL cycles differ from the latency model by more than 2%: {bad}"
    assert reps["int8-asym"]["fps"] >= 300, f"int8: {reps['int8-asym']['fps']:.1f} frames/s"
    ratio = reps["int8-asym"]["fps"] / reps["int16-sym"]["fps"]
    assert ratio >= 1.8, f"int8 is only {ratio:.2f}x the FPS of int16"


@needs_verilator
@pytest.mark.slow
@pytest.mark.parametrize("tn,tm", [(8, 16), (16, 8), (16, 24)], ids=["tm=2tn", "tm<tn", "tm-not-pow2"])
def test_rtl_tm_ne_tn_bit_exact(tn, tm):
    """Tm != Tn: bypass (and emul) reading Tm elements from two IBUF words (Tm = 2 Tn) or at a lane offset (Tm < Tn,
    or Tm = 24 on Tn = 16: o*Tm mod Tn = 0 or 8), OBUF and PBUF lane offsets, and a Tm that is not a power of two
    (OBUF rows of 24 lanes, PBUF / TBUF records and WBUF elements at a power-of-two lane pitch); TINY buffers
    otherwise (three Verilator builds, about two minutes)."""
    brd = board(**dict(TINY, tn=tn, tm=tm, **(dict(wbuf_bank_bytes=49152) if tm % 8 == 0 and tm & (tm - 1) else {})))
    rtl = RtlExecutor(brd, f"tiny_{tn}x{tm}", quiet=False)
    for kind in ("concat", "split", "conv3x3_s2", "upsample", "attention_mul", "table_acts", "first_layer_folded"):
        for mode in ("int8-asym", "int16-sym"):
            build, ic = KINDS[kind]
            b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
            outs = build(b)
            outs = outs if isinstance(outs, tuple) else (outs,)
            gq, prog, xs = compile_small(b.model(list(outs)), mode, True, brd)
            ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
            run = rtl.run(prog, ddr, bases, case=f"cases/{kind}-{mode}")
            gold = run_program("golden", prog, ddr, bases)
            assert not run.timeout and run.status == 0 and gold.status == 0
            assert np.array_equal(run.ddr, gold.ddr), \
                f"{kind} {mode}: {int(np.sum(run.ddr != gold.ddr))} DDR bytes differ"


@pytest.mark.slow   # (its own 16x8 Verilator build, about a minute: invoke test --slow)
@needs_verilator
def test_rtl_span_loads_bit_exact():
    """A folded first layer's LOADs of overlapping pixel runs (row spans: each byte fetched once, written to the
    two runs holding it, two runs per cycle through both IBUF ports) on a 16x8 array, where a 9-element run fits
    the Tn lanes -- its input also read by a 1x1 convolution, so it is not laid out as im2col patches: bit-exact
    against the golden simulator, the program really uses spans, and the RTL's cycles within 10% of the latency
    model's (one Verilator build, about a minute)."""
    from generator.spec.timing import use_span
    brd = board(**dict(TINY, tn=16, tm=8))
    rtl = RtlExecutor(brd, "tiny_16x8", quiet=False)
    for mode in ("int8-asym", "int8-sym"):
        b = Builder([1, 3, 30, 34], seed=7)
        outs = [first_layer_folded(b), b.leaky(b.conv("x", 8, k=1))]
        gq, prog, xs = compile_small(b.model(outs), mode, True, brd)
        assert not any(r.get("im2col") for r in prog.layout.regions.values())
        spans = [i for i in prog.insns if i.op == "LOAD" and use_span(
            i.f["rows"], i.f["cols"], i.f["elems"] * prog.hw.elem_bytes, i.f["pix_stride"], prog.hw.axi_bytes,
            i.f["buf"], i.f["elems"], prog.hw.tn, i.f["dst_pitch"])]
        assert spans, "the folded layer's program has no span LOAD: this test would not test spans"
        ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
        run = rtl.run(prog, ddr, bases, case=f"cases/span-{mode}")
        gold = run_program("golden", prog, ddr, bases)
        assert not run.timeout and run.status == 0 and gold.status == 0
        bad = np.flatnonzero(run.ddr != gold.ddr)
        assert bad.size == 0, f"{mode}: {bad.size} DDR bytes differ from the golden simulator, first at {bad[0]:#x}"
        assert abs(run.cycles / gold.cycles - 1) <= 0.10, f"{mode}: RTL {run.cycles} vs model {gold.cycles}"


def _load_window_config(name):
    from generator.eval.fuzz import CONFIGS as FUZZ_CONFIGS
    return board(**FUZZ_CONFIGS[name][1])


@needs_verilator
@pytest.mark.parametrize("cfg", ["tiny", pytest.param("tiny-16x32-2hp", marks=pytest.mark.slow),
                                 pytest.param("tiny-16x32-4hp", marks=pytest.mark.slow)])
def test_rtl_load_window_cycles(cfg):
    """LOADs of 1 to 192 strided one-beat pixel runs (int16, Tn lanes = one m_axi beat: one burst each) at DDR read
    latencies 20, 40 and 80 cycles, on one HP port (TINY) and through the two-port splitter (slow: its own build):
    the RTL's cycles for CONFIG, LOAD, END less those for CONFIG, END (the program fetch) are the latency model's
    LOAD cycles within 2 -- the bound of MAX_READ_BURSTS bursts in flight, each holding its slot the latency plus
    READ_SLOT_EXTRA (+ HP_SPLIT_SLOT_EXTRA) cycles (generator/spec/timing.py read_window_cycles): at latency 80
    and 192 bursts the slot bound, not the beats, decides; at 20 the beats do. Then contiguous WBUF LOADs of 1 to
    384 beats (4 KB bursts), within 2 cycles too: the beats, and through the splitter the last burst's tail."""
    import dataclasses
    from generator.codegen.emit import config_insn
    from generator.spec.hw import HwConfig
    from generator.spec.timing import insn_cycles
    brd = board(**TINY) if cfg == "tiny" else _load_window_config(cfg)
    rtl = shared_executor("rtl", brd, None if cfg == "tiny" else cfg)
    hw = HwConfig.from_board(brd, 16)
    ddr = np.arange(1 << 20, dtype=np.uint32).astype(np.uint8)
    bases = {k: 0 for k in isa.BASE_REGS}
    run_bytes = hw.tn * 2
    assert run_bytes <= hw.axi_bytes, "one pixel run per beat"
    pix = 4 * hw.axi_bytes
    off = []
    for lat in (20, 40, 80):
        base = rtl.run(None, ddr, bases, blob=isa.encode_program([config_insn(hw), isa.make("END")]),
                       case=f"cases/ldwin-{cfg}-none-{lat}", rd_latency=lat)
        assert base.status == 0 and not base.timeout
        for rows, cols in ((1, 1), (2, 16), (3, 16), (6, 16), (12, 16)):
            ld = isa.make("LOAD", buf=isa.BUFFERS["IBUF"], bank=0, base_reg=1, ddr_offset=0, rows=rows, cols=cols,
                          elems=hw.tn, row_stride=cols * pix, pix_stride=pix, dst_word=0, dst_elem=0, dst_pitch=1,
                          prec=isa.PRECISIONS["int16"])
            r = rtl.run(None, ddr, bases, blob=isa.encode_program([config_insn(hw), ld, isa.make("END")]),
                        case=f"cases/ldwin-{cfg}-{rows}x{cols}-{lat}", rd_latency=lat)
            assert r.status == 0 and not r.timeout, (rows, cols, lat, r.status)
            model = insn_cycles(dataclasses.replace(hw, rd_latency=lat), ld)
            off.append((rows * cols, lat, r.cycles - base.cycles - model))
            print(cfg, "window", off[-1])
    bad = [o for o in off if abs(o[2]) > 2]
    assert not bad, f"(bursts, latency, RTL - model) beyond 2 cycles: {bad}"
    # contiguous WBUF LOADs of 1 to 384 beats in 4 KB bursts: the beats, and through the splitter the last burst's
    # tail (port 0's half at half rate, then port 1's: about N / 2 cycles, generator/spec/timing.py split_tail)
    base = rtl.run(None, ddr, bases, blob=isa.encode_program([config_insn(hw), isa.make("END")]),
                   case=f"cases/ldwin-{cfg}-none")
    for nbytes in (32, 64, 96, 128, 1024, 4096, 8192, 12288):
        if nbytes > brd.accelerator.wbuf_bank_bytes:
            continue
        ld = isa.make("LOAD", buf=isa.BUFFERS["WBUF"], bank=0, base_reg=1, ddr_offset=0, rows=1, cols=1,
                      elems=nbytes, row_stride=0, pix_stride=0, dst_word=0, dst_elem=0, dst_pitch=1, prec=0)
        r = rtl.run(None, ddr, bases, blob=isa.encode_program([config_insn(hw), ld, isa.make("END")]),
                    case=f"cases/ldwin-{cfg}-w{nbytes}")
        assert r.status == 0 and not r.timeout, (nbytes, r.status)
        got = r.cycles - base.cycles - insn_cycles(hw.at(8), ld)
        print(cfg, "contiguous", nbytes, got)
        assert abs(got) <= 2, f"contiguous LOAD of {nbytes} bytes: RTL - model = {got} cycles"

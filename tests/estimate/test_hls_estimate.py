"""generator/estimate/hls_cycles.py: the cycle estimate of the HLS kernel from its own loop structure.

(a) the loops the formulas need come from the port analysis of the rendered kernel (II and depth), and the
estimate follows the records; (b) per-instruction estimates on a TINY program
against counts derived by hand from the kernel's loops; (c) the 416x416 YOLOv4-tiny frame (zcu19eg, int8-asym,
timing only): hls-cycles against model-cycles, per instruction kind."""
import math
import time

import pytest

from generator import ROOT_DIR
from generator.flows.hls_report import kernel_estimate_lines, report_md
from generator.estimate import hls_cycles as he
from generator.spec.hw import HwConfig
from generator.spec.board import load_board
from generator.exec.rtl import TINY
from helpers import board, compile_small, tiered
from generator.frontend.modelgen import Builder



@pytest.fixture(scope="module")
def zcu():
    """zcu19eg's single-rate 32x48 array on one 128-bit HP port: the DDR path of the HLS kernel's modules (each
    one m_axi on one port), single-pumped as the kernel, so that the latency model and the kernel describe the
    same machine."""
    from generator.exec.rtl import board_config
    return board_config("zcu19eg", "32x48", axi_data_width_bits=128, hp_ports=1)


@pytest.fixture(scope="module")
def loops(zcu):
    return he.kernel_loops(zcu)


def formula_loops(loops):
    """The labels of the analysed loops the estimator has a formula for."""
    return {lp.label for lp in loops} & set(he.FORMULA_LOOPS)


# ------------------------------------------------------------------------------------------ (a) analysed loops
def test_every_formula_loop_analysed(loops):
    """Every loop the formulas use is a pipelined loop the port analysis found (zcu19eg here: 128-bit AXI, so
    FETCH_BEATS is compiled), with an analysed II at least the requested one and a depth."""
    assert formula_loops(loops) == set(he.FORMULA_LOOPS)
    for lp in loops:
        assert lp.ii >= lp.requested_ii >= 1 and lp.depth >= 1, lp


def test_estimate_follows_the_analysis(zcu, loops):
    """The estimate takes II and depth from the analysis's records: PE_TILE at II 2 costs one cycle more per
    iteration, a depth 22 larger 22 cycles more."""
    import dataclasses
    insn = type("I", (), {"op": "COMPUTE", "f": dict(oh=2, ow=4, og=1, ig=1, kh=1, kw=1, bypass=0, acc_init=1,
                                                                   prec=0)})()
    a = he.KernelEstimate(zcu, 8, loops).insn_cycles(None, insn)
    pe = next(lp for lp in loops if lp.label == "PE_TILE")
    n = 2 * 2                                      # oh x ceil(ow / 2) x og x ig x kh x kw iterations
    for change, extra in ((dict(ii=2 * pe.ii), n * pe.ii), (dict(depth=pe.depth + 22), 22)):
        other = [dataclasses.replace(lp, **change) if lp.label == "PE_TILE" else lp for lp in loops]
        b = he.KernelEstimate(zcu, 8, other).insn_cycles(None, insn)
        assert b - a == extra, (change, a, b)


def test_missing_loop_is_an_error(zcu, loops):
    with pytest.raises(he.EstimateError, match="POST_TILE"):
        he.KernelEstimate(zcu, 8, [lp for lp in loops if lp.label != "POST_TILE"])


BOARDS = sorted(p.stem for p in (ROOT_DIR / "boards").glob("*.yaml"))


@pytest.mark.parametrize("name", tiered(BOARDS, ["zcu19eg", "ultra96v2"]))   # (256- and 128-bit m_axi)
def test_every_board_kernel_analysed(name):
    """On every board's rendered kernel the analysis finds the loops the estimator needs (FETCH_BEATS is compiled
    only where the m_axi port is narrower than an instruction)."""
    brd = load_board(name)
    lps = he.kernel_loops(brd)
    est = he.KernelEstimate(brd, 8, lps)
    narrow = est.hw.axi_bytes < 32
    assert formula_loops(lps) == set(he.FORMULA_LOOPS) - (set() if narrow else {"FETCH_BEATS"})


# ------------------------------------------------------------------------------------------ (b) TINY instructions
@pytest.fixture(scope="module")
def tiny_prog():
    b = Builder([1, 20, 14, 12], seed=3)
    y = b.maxpool(b.relu(b.conv("x", 17, k=3)))
    brd = board(**TINY)
    # the fastest plans (no traffic tolerance): one 8-channel input chunk per LOAD, the runs the hand counts walk
    _, prog, _ = compile_small(b.model([y]), brd=brd, tolerance=0)
    return brd, prog


@pytest.fixture(scope="module")
def tiny_bypass_prog():
    """A stand-alone upsample after a concat: a copy layer (bypass COMPUTE)."""
    b = Builder([1, 10, 14, 12], seed=5)
    a = b.leaky(b.conv("x", 12, k=3))
    c = b.leaky(b.conv(a, 12, k=3))
    brd = board(**TINY)
    _, prog, _ = compile_small(b.model([b.upsample(b.concat(a, c))]), brd=brd)
    return brd, prog


def test_tiny_bypass_by_hand(tiny_bypass_prog):
    brd, prog = tiny_bypass_prog
    est = he.KernelEstimate(brd, 8)
    i = _first(prog, "COMPUTE", bypass=1)
    n = i.f["oh"] * i.f["ow"] * i.f["og"]
    # one BYPASS iteration per output word (oh x ow x og) at its analysed II, its depth, plus INVOKE 2 + SETUP 4
    lp = est.ann["BYPASS"]
    assert est.insn_cycles(None, i) == 6 + n * lp.ii + lp.depth
    assert est.used == {"BYPASS"}


def _first(prog, op, **match):
    return next(i for i in prog.insns if i.op == op and all(i.f[k] == v for k, v in match.items()))


def test_tiny_instructions_by_hand(tiny_prog):
    """Hand counts (int8, 16-byte beats on Tn = Tm = 8 lanes, DDR read / write latency 40 / 20; INVOKE 2 + SETUP 4
    per instruction; each loop's depth D from the analysis; 32 read bursts in flight, 16 write bursts without their
    response). A LOAD / STORE is one flattened loop over every beat of every segment (LOAD into IBUF / WBUF: two
    chunks of 8 elements per 16-byte int8 beat), the latency once. The analysed II is 1, STORE_BEATS too: the
    kernel's OBUF puts two 8-element words in a row of 16 lane memories, so a 16-byte beat reads each once."""
    brd, prog = tiny_prog
    est = he.KernelEstimate(brd, 8)
    D = {k: lp.depth for k, lp in est.ann.items()}
    assert all(est.ann[k].ii == 1 for k in ("LOAD_BEATS", "PBUF_BEATS", "PE_TILE", "POST_TILE", "STORE_BEATS"))
    assert (est.hw.axi_bytes, est.hw.rd_latency, est.hw.wr_latency) == (16, 40, 20)
    assert (est.rd_outstanding, est.wr_outstanding) == (32, 16)
    # PBUF: 1 x 1 run of 24 records = 384 bytes at 5184 (aligned): pix_stride 0 != 384, so one segment per run:
    # 6 + 40 latency + depth + 24 beats
    i = _first(prog, "LOAD", buf=2)
    assert (i.f["rows"], i.f["cols"], i.f["elems"], i.f["ddr_offset"]) == (1, 1, 24, 5184)
    assert est.insn_cycles(None, i) == 6 + 40 + D["PBUF_BEATS"] + 24
    # WBUF: rows (output-channel groups of the tile as scheduled) of 576 bytes (row stride 1728, 16-aligned), one
    # segment per row: 36 beats each
    i = _first(prog, "LOAD", buf=1, ddr_offset=0)
    wrows = i.f["rows"]
    assert (i.f["cols"], i.f["elems"], i.f["row_stride"], i.f["dst_pitch"]) == (1, 576, 1728, 9) and wrows in (1, 2, 3)
    assert est.insn_cycles(None, i) == 6 + 40 + D["LOAD_BEATS"] + wrows * 36 * 2
    # IBUF: rows x cols pixel runs of 8 bytes (pix stride 20, row stride 280; the tile as the scheduler chose it):
    # one segment per run, and a run crossing a 16-byte boundary (address residue mod 16 above 8) takes two beats
    i = _first(prog, "LOAD", buf=0, ddr_offset=0, elems=8)
    rows, cols = i.f["rows"], i.f["cols"]
    assert (i.f["pix_stride"], i.f["row_stride"]) == (20, 280) and rows * cols >= 8
    beats = 0
    for r in range(rows):
        for q in range(cols):
            a = r * 280 + q * 20
            beats += 2 if a % 16 > 8 else 1
    assert rows * cols < beats < 2 * rows * cols           # some runs cross, some do not
    # (two chunks per beat; one burst per run: rows x cols bursts, at most 32 in flight over 40 cycles of latency)
    assert est.insn_cycles(None, i) == 6 + 40 + D["LOAD_BEATS"] + max(2 * beats, math.ceil(rows * cols * 40 / 32))
    # with 4 bursts in flight the runs would be throttled to 4 per 40 cycles
    est.rd_outstanding = 4
    assert est.insn_cycles(None, i) == 6 + 40 + D["LOAD_BEATS"] + math.ceil(rows * cols * 40 / 4)
    est.rd_outstanding = 32
    # COMPUTE: oh x ceil(ow / 2) x og x ig x kh x kw iterations of PE_TILE (the 3x3 layer's tile as scheduled)
    i = _first(prog, "COMPUTE")
    f = i.f
    og = f["og"]
    assert og == wrows and (f["ig"], f["kh"], f["kw"]) == (1, 3, 3) and f["oh"] * f["ow"] >= 8
    assert est.insn_cycles(None, i) == 6 + f["oh"] * math.ceil(f["ow"] / 2) * og * 9 + D["PE_TILE"]
    # POST: out_rows x out_cols outputs x og groups x 2 x 2 pool window iterations of POST_TILE
    i = _first(prog, "POST")
    f = i.f
    assert (f["og"], f["pool_k"], f["up"]) == (og, 2, 1)
    assert est.insn_cycles(None, i) == 6 + f["out_rows"] * f["out_cols"] * og * 4 + D["POST_TILE"]
    # STORE: rows x cols runs of min(17, 8 og) bytes (OBUF pitch 8 og: one segment per run unless equal), each
    # ceil((a mod 16 + run) / 16) beats at its address a: the beats streamed back to back at II 2, one burst per run
    # (none crosses a 4 KB page), 16 bursts without their response over the 20 cycles of write latency
    i = _first(prog, "STORE", ddr_offset=0)
    f = i.f
    run = min(17, 8 * og)
    assert (f["elems"], f["pix_stride"], f["src_pitch"]) == (run, 17, og)
    beats = sum(math.ceil(((r * f["row_stride"] + q * 17) % 16 + run) / 16)
                for r in range(f["rows"]) for q in range(f["cols"]))
    bursts = f["rows"] * f["cols"]
    assert est.insn_cycles(None, i) == 6 + 20 + D["STORE_BEATS"] + max(beats, math.ceil(bursts * 20 / 16))
    # CONFIG / SYNC / END: the module invocation only
    assert est.insn_cycles(None, prog.insns[0]) == he.INVOKE == 2


def test_tiny_program_scheduled(tiny_prog):
    brd, prog = tiny_prog
    cmp = he.compare(brd, 8, prog.insns)
    est = he.KernelEstimate(brd, 8)
    serial = sum(est.insn_cycles(None, i) for i in prog.insns)
    # the modules overlap: less than the serial sum, more than the busiest module
    assert max(cmp["busy"]["hls"].values()) < cmp["hls"] < serial + int(est.dispatch_times(prog.insns)[-1])
    # fetch from DDR, 128-bit port: two beats per instruction on the one m_axi bundle, so VALIDATE and DISPATCH at
    # (analysed and requested) II 2; VALIDATE over all n instructions (2n + its depth) + read latency 40, the
    # latency again ahead of DISPATCH (its depth); from the ROM no latency, the loops still at their requested II 2
    D = {k: lp.depth for k, lp in est.ann.items()}
    assert est.ann["VALIDATE"].ii == est.ann["DISPATCH"].ii == 2
    assert est.ann["VALIDATE"].requested_ii == est.ann["DISPATCH"].requested_ii == 2
    n = len(prog.insns)
    d = est.dispatch_times(prog.insns)
    assert d[0] == (2 * n + D["VALIDATE"]) + 40 + 40 + D["DISPATCH"] and d[1] - d[0] == 2
    assert he.KernelEstimate(brd, 8, est.loops, fetch_ddr=False).dispatch_times(prog.insns)[1] == \
        (2 * n + D["VALIDATE"]) + D["DISPATCH"] + 2


# ------------------------------------------------------------------------------------------ (c) the 416x416 frame
@pytest.fixture(scope="module")
def frame(zcu, loops):
    from generator.flows.pipeline import compile_model
    t0 = time.time()
    c = compile_model(zcu, "int8-asym", progress=False, log=lambda *a, **k: None)
    cmp = he.compare(zcu, 8, c.program.insns, loops)
    print(f"\nframe: compile + estimate {time.time() - t0:.1f} s")
    print("\n".join(kernel_estimate_lines(cmp)))
    return c, cmp


@pytest.fixture(scope="module")
def tiny_one_tap_prog():
    """A 1x1 convolution on a TINY array whose WBUF holds one weight word: ig = 1 COMPUTEs accumulating into ACC
    (the kernel's PE_RMW loop)."""
    b = Builder([1, 32, 8, 7], seed=3)
    brd = board(**dict(TINY, wbuf_bank_bytes=64))
    _, prog, _ = compile_small(b.model([b.leaky(b.conv("x", 16, k=1))]), brd=brd)
    return brd, prog


def test_one_tap_accumulation_by_hand(tiny_one_tap_prog):
    """PE_RMW: one iteration per output pixel (oh x ow x og; int8 takes a pair in two), as the RTL's two cycles per
    pixel pair of a one-tap accumulating step."""
    brd, prog = tiny_one_tap_prog
    est = he.KernelEstimate(brd, 8)
    ii, d = est.ann["PE_RMW"].ii, est.ann["PE_RMW"].depth
    assert ii == 1
    rmw = [i for i in prog.insns if i.op == "COMPUTE" and not i.f["acc_init"] and i.f["ig"] * i.f["kh"] * i.f["kw"] == 1]
    assert rmw
    for i in rmw:
        assert est.insn_cycles(None, i) == 2 + 4 + i.f["oh"] * i.f["ow"] * i.f["og"] * ii + d


def test_every_formula_loop_used(frame, loops, tiny_prog, tiny_bypass_prog, tiny_one_tap_prog):
    """The frame (no bypass COMPUTE in YOLOv4-tiny, no one-tap accumulation), the copy layer and the one-tap layer
    together use every loop the formulas have."""
    _, cmp = frame
    used = set(cmp["used"])
    for brd, prog in (tiny_prog, tiny_bypass_prog, tiny_one_tap_prog):
        used |= set(he.compare(brd, 8, prog.insns)["used"])
    from generator.eval.pre_cases import pre_case     # PRE's loops: a standalone PRE program (nominal frame)
    from generator.spec import isa
    brd = tiny_prog[0]
    pre = pre_case(HwConfig.from_board(brd, 8), 40, 30, 24, 16)
    used |= set(he.compare(brd, 8, isa.decode_program(pre.blob), frame=pre.frame)["used"])
    assert "BYPASS" not in cmp["used"] and "PE_RMW" not in cmp["used"]
    assert used == formula_loops(loops)


def test_frame_model_cycles(frame):
    c, cmp = frame
    # model-cycles is the golden simulator's timing of the same program: the compiler's prediction
    assert cmp["model"] == c.program.cycles


@pytest.mark.parametrize("kind", ["COMPUTE", "POST", "LOAD-WBUF", "LOAD-PBUF", "STORE"])
def test_frame_kind_within_10_percent(frame, kind):
    """The kinds whose loops move a beat / a PE step per cycle as the RTL does agree with the model."""
    k = frame[1]["kinds"][kind]
    assert abs(k["hls"] / k["model"] - 1) <= 0.10, (kind, k)


def test_frame_load_ibuf_within_15_percent(frame):
    """LOAD into IBUF: every beat of every pixel-run segment in one flattened loop with 64 reads in flight, so the
    DDR read latency is paid once per LOAD, as the RTL's 32 bursts in flight do. The remaining gap: the kernel
    reads every beat of every pixel run, also where runs overlap (the folded first layer's 9-byte runs every 6
    bytes), which the RTL fetches as row spans."""
    k = frame[1]["kinds"]["LOAD-IBUF"]
    assert abs(k["hls"] / k["model"] - 1) <= 0.15, k


def test_frame_hls_cycles_within_10_percent_of_model(frame):
    assert abs(frame[1]["ratio"] - 1) <= 0.10, frame[1]["ratio"]


def test_report_md_lines(frame, zcu):
    c, cmp = frame
    md = report_md(zcu, "int8-asym", len(c.program.insns), {8: cmp["model"]}, 8, None, kernel_est=cmp)
    assert f"hls-cycles: {cmp['hls']}\n" in md and f"model-cycles: {cmp['model']}\n" in md
    assert f"hls/model: {cmp['ratio']:.3f}" in md and "not a synthesis result" in md
    # the per-loop table: every analysed loop with its IIs, and the trip counts the per-kind sums imply
    rows = {r["loop"]: r for r in cmp["loops"]}
    assert set(rows) == {lp.label for lp in he.kernel_loops(zcu)}
    for r in cmp["loops"]:
        assert f"| {r['loop']} | {r['function']} | {r['requested_ii']} | {r['ii']} |" in md
    assert rows["PE_TILE"]["trips"] > 0 and rows["POST_TILE"]["trips"] > 0
    # COMPUTE's cycles: INVOKE + SETUP per instruction plus its loops' cycles
    comp = cmp["kinds"]["COMPUTE"]
    assert comp["hls"] == 6 * comp["count"] + sum(rows[k]["cycles"] for k in ("PE_TILE", "PE_RMW", "BYPASS"))


@pytest.fixture(scope="module")
def board_frame():
    """The int8 frame on zcu19eg's own board file: 32x40 on two HP ports (LOAD and STORE through the block design's
    burst splitter, hls_templates/bd/accel_hp.v), its PE array double-pumped in the RTL, single-pumped in the
    kernel (the model side of the comparison is the single-rate machine)."""
    from generator.flows.pipeline import compile_model
    from generator.spec.board import load_board
    b = load_board("zcu19eg")
    assert b.accelerator.hp_ports == 2
    c = compile_model(b, "int8-asym", progress=False, log=lambda *a, **k: None)
    cmp = he.compare(b, 8, c.program.insns)
    print("\nzcu19eg board file (two HP ports):\n" + "\n".join(kernel_estimate_lines(cmp)))
    print(f"store module busy: hls {cmp['busy']['hls']['store']}, model {cmp['busy']['model']['store']}")
    return c, cmp


@pytest.mark.parametrize("kind", ["COMPUTE", "LOAD-WBUF", "LOAD-IBUF", "STORE"])
def test_board_two_hp_ports_transfers_at_the_model_rate(board_frame, kind):
    """With the splitter the kernel's LOADs and STOREs move 32 bytes per cycle as the RTL's (on one port each, as
    before the splitter, LOAD and STORE took 1.8x and 1.9x the model)."""
    k = board_frame[1]["kinds"][kind]
    assert abs(k["hls"] / k["model"] - 1) <= 0.10, (kind, k)


def test_board_two_hp_ports_frame_within_2_percent(board_frame):
    """The store module runs each STORE beside the POST before it (the post module writes OBUF meanwhile), as the
    RTL: the frame within 2% of the model, and the store module busy within 10% of the model's (with POST then
    STORE in one module, as before the post module: 1.030 and 455,130 against 292,071 cycles)."""
    from generator.flows.build import hls_program_cycles
    c, cmp = board_frame
    assert c.hw.pump == 2 and cmp["model"] == hls_program_cycles(c) > 1.5 * c.program.cycles
    assert abs(cmp["ratio"] - 1) <= 0.02, cmp["ratio"]
    busy = cmp["busy"]
    assert abs(busy["hls"]["store"] / busy["model"]["store"] - 1) <= 0.10, busy


def test_single_rate_two_hp_ports_frame_within_2_percent():
    """zcu19eg's single-rate 32x48 on two HP ports (``--config 32x48``, the board file's block before the pumped one):
    there the kernel and the latency model time the same machine, so ``compare`` puts the program's own cycles
    beside the kernel's, and the int8 frame is within 2% (measured: 1,493,455 against 1,486,448)."""
    from generator.exec.rtl import board_config
    from generator.flows.build import hls_program_cycles
    from generator.flows.pipeline import compile_model
    b = board_config("zcu19eg", "32x48")
    c = compile_model(b, "int8-asym", progress=False, log=lambda *a, **k: None)
    cmp = he.compare(b, 8, c.program.insns)
    print(f"32x48, two HP ports: hls-cycles {cmp['hls']}, model-cycles {cmp['model']}, ratio {cmp['ratio']:.3f}")
    assert c.hw.pump == 1 and cmp["model"] == hls_program_cycles(c) == c.program.cycles
    assert abs(cmp["ratio"] - 1) <= 0.02, cmp["ratio"]


# ------------------------------------------------------------------------------------------ command queues
def test_command_queue_depth_in_the_scheduler(zcu):
    """The fetch stops while the next instruction's module queue is full: COMPUTEs waiting for a token from a
    LOAD that comes after them in program order fill a 2-deep compute queue and deadlock the fetch (WATCHDOG);
    a 3-deep queue (or none) lets the fetch reach the LOAD."""
    from generator.spec import isa
    from generator.exec.golden import GoldenSim, SimError
    import numpy as np
    hw = HwConfig.from_board(zcu, 8)
    cfg = isa.make("CONFIG", isa_version=isa.ISA_VERSION, tn=hw.tn, tm=hw.tm,
                   config_id=hw.config_id)
    prog = [cfg, isa.make("COMPUTE", pop_prev=1)] + [isa.make("COMPUTE") for _ in range(3)] + \
        [isa.make("LOAD", push_next=1), isa.make("END")]

    def run(depth):
        sim = GoldenSim(hw, np.zeros(16, np.uint8), {k: 0 for k in isa.BASE_REG_NAMES.values()})
        return sim.run_insns(prog, functional=False, cmd_depth=depth)
    assert run(None).cycles == run(3).cycles
    with pytest.raises(SimError) as e:
        run(2)
    assert e.value.bits == ["WATCHDOG"]


# ------------------------------------------------------------------------------------------ (d) the other boards
@pytest.mark.parametrize("name", tiered(["kv260", "ultra96v2", "zcu102", "zcu104"], ["ultra96v2"]))
def test_board_file_frame_within_10_percent(name):
    """Each other board file's own configuration (its array, buffers, clock, m_axi width and HP ports): the int8
    YOLOv4-tiny frame's hls-cycles (the port analysis of that board's rendered kernel) within 10% of model-cycles,
    and every hot loop of LOAD, COMPUTE, POST and STORE at analysed II 1 (zcu19eg: the tests above)."""
    from generator.flows.pipeline import compile_model
    brd = load_board(name)
    loops = he.kernel_loops(brd)
    hot = {"REQ_PRIME", "LOAD_BEATS", "PBUF_BEATS", "PE_TILE", "PE_RMW", "BYPASS", "POST_TILE", "STORE_BEATS"}
    assert {lp.label: lp.ii for lp in loops if lp.label in hot} == {k: 1 for k in hot}
    c = compile_model(brd, "int8-asym", progress=False, log=lambda *a, **k: None)
    cmp = he.compare(brd, 8, c.program.insns, loops)
    print(f"\n{name}: hls-cycles {cmp['hls']}, model-cycles {cmp['model']}, ratio {cmp['ratio']:.3f}")
    assert abs(cmp["ratio"] - 1) <= 0.10, cmp["kinds"]


@pytest.mark.parametrize("fw,fh,nw,nh", [(640, 480, 416, 416), (810, 1080, 416, 416), (1920, 1080, 416, 416),
                                         (37, 23, 24, 20), (97, 41, 24, 16), (33, 47, 24, 16)])
def test_pre_cycles_against_the_latency_model(zcu, loops, fw, fh, nw, nh):
    """PRE in the kernel and the RTL: the same pixel arithmetic and raw-beat line buffers, but the RTL fetches a
    row's source rows into one pair of line buffers while the other pair's row issues its pixels
    (rtl/pre.sv), where the kernel fetches, then issues (accel_kernel_pre.h): the kernel's estimate from its analysed
    loops is at least the latency model's generator.spec.timing.pre_cycles (the RTL's, measured), and on camera
    frames whose two source rows per output row take fewer beats than a row's pixels (640x480, 810x1080 on this
    128-bit port; not 1920x1080: 720 beats a row) the RTL's is within 1% of its pixel bound, rows x (net_w +
    PRE_ROW), while the kernel's adds its fetch runs."""
    from generator.spec.timing import PRE_ROW, pre_cycles
    from host.pre import PreFrame, pre_geometry
    est = he.KernelEstimate(zcu, 8, loops)
    frame = PreFrame.of(pre_geometry(fw, fh, nw, nh, "letterbox"), 0x100005, 1 << 28, 3 * fw + 7)
    f = dict(net_w=nw, net_h=nh, y0=0, rows=nh, ddr_offset=0, row_stride=3 * nw, pix_stride=3, prec=0, shift=8)
    hls, rtl = est.pre_cycles(f, frame), pre_cycles(est.hw, f, frame)
    assert hls >= rtl, (hls, rtl)
    if nw >= 416 and fw < 1920:
        assert abs(rtl / (nh * (nw + PRE_ROW)) - 1) <= 0.01, rtl

"""The PRE instruction on the RTL accelerator (rtl/pre_insn.sv running rtl/pre.sv inside the LOAD module, its writes
sharing the m_axi with STORE through rtl/axi_wr_arb.sv): standalone PRE programs of generator/eval/pre_cases.py
(CONFIG, PRE, END on a drawn frame) through the ``rtl`` executor on the TINY configuration (one Verilator build per
pytest process, shared with tests/exec/test_rtl.py), the DDR image after the run equal to the case's expectation
(host.pre.pre_run written at the instruction's offset and strides, every other byte unchanged) and to the golden
simulator's; the three resize modes, a 1x1 frame, an odd portrait and a landscape frame, a pitch above the row,
int8 / int16, a BGR frame and a bgr255 model, drawn cases; PRE's cycles (the run's minus a CONFIG, END program's)
within 2% of the latency model's generator/spec/timing.pre_cycles; the OUT_OF_RANGE checks equal to the golden
simulator's, with nothing written."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from generator.codegen.emit import config_insn
from generator.eval.pre_cases import EDGE_FRAMES, draw_pre_case, pre_case
from generator.exec import GoldenExecutor
from generator.exec.rtl import TINY
from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.spec.timing import pre_cycles
from helpers import board, shared_executor, tiered

pytest.importorskip("cocotb_tools")
from generator.exec.rtl import BUILD, verilator  # noqa: E402

pytestmark = pytest.mark.skipif(verilator() is None, reason="verilator not installed (run ./setup.sh)")
HW = HwConfig.from_board(board(**TINY), 8)


@pytest.fixture(scope="module")
def rtl():
    """The TINY RTL (the shared build) and the cycles of a CONFIG, END program on it (the run's own overhead)."""
    ex = shared_executor("rtl", board(**TINY), "tiny")
    c = pre_case(HW, 4, 4, 4, 4)
    blob = isa.encode_program([config_insn(HW), isa.make("END")])
    base = ex.run(None, c.ddr, c.bases, c.sizes, blob=blob, case=BUILD / "tiny" / "pre" / "base", frame=c.frame)
    assert base.status == 0 and not base.timeout
    return ex, base.cycles


def run_both(rtl, c, name, frame=None, sizes=None, blob=None):
    """(rtl run, golden run) of case ``c`` (its frame registers, or ``frame``; its sizes, or ``sizes``; its
    program, or ``blob``)."""
    ex, _ = rtl
    fr, sz, blob = c.frame if frame is None else frame, c.sizes if sizes is None else sizes, blob or c.blob
    got = ex.run(None, c.ddr, c.bases, sz, blob=blob, case=BUILD / "tiny" / "pre" / name, frame=fr)
    gold = GoldenExecutor().run(None, c.ddr, c.bases, sz, blob=blob, hw=HW, frame=fr)
    assert not got.timeout, name
    return got, gold


def check_case(rtl, c, name):
    """The RTL's DDR equals the case's expectation and the golden simulator's; PRE's cycles within 2% of
    pre_cycles. Returns (measured, model) cycles."""
    got, gold = run_both(rtl, c, name)
    assert got.status == 0 and gold.status == 0, (got.status, gold.error)
    assert c.mismatch(got.ddr) == "", (name, c.params)
    assert np.array_equal(got.ddr, gold.ddr)
    measured, model = got.cycles - rtl[1], pre_cycles(HW, c.insn.f, c.frame)
    if model == 0:                                   # an empty band: the LOAD module's hand-over only
        assert measured <= 8, f"{name}: an empty band took {measured} cycles"
    else:
        assert abs(measured / model - 1) <= 0.02, f"{name}: PRE took {measured} cycles, the model {model}"
    return measured, model


#: the default tier: every frame size in letterbox (1920x1080 about 5 s on the RTL), 1x1 and the odd landscape frame in
#: the other two modes; the rest in the slow tier (the golden simulator and the C-simulation run every case)
EDGE_DEFAULT = {"letterbox": EDGE_FRAMES, "stretch": [(1, 1), (97, 41)], "letterbox_topleft": [(1, 1), (97, 41)]}
EDGE = [(m, fw, fh) if (fw, fh) in EDGE_DEFAULT[m] else pytest.param(m, fw, fh, marks=pytest.mark.slow)
        for m in ("stretch", "letterbox", "letterbox_topleft") for fw, fh in EDGE_FRAMES]


@pytest.mark.parametrize("mode,fw,fh", EDGE)
def test_pre_edge_frames(rtl, mode, fw, fh):
    """1x1, odd portrait, landscape and 1920x1080 (a 24x16 input: the rows PRE reads, about 5 s) in each resize
    mode; a pitch above the row, a BGR frame."""
    c = pre_case(HW, fw, fh, 24, 16, mode, bits=8, pitch=3 * fw + 5, frame_bgr=True, seed=fw)
    check_case(rtl, c, f"edge-{mode}-{fw}x{fh}")


@pytest.mark.parametrize("kw", [
    dict(frame_w=37, frame_h=23, net_w=20, net_h=18, bits=16),                                  # int16
    dict(frame_w=41, frame_h=29, net_w=16, net_h=24, bits=16, fmt="bgr255", frame_bgr=False),   # swap, int16
    dict(frame_w=30, frame_h=20, net_w=16, net_h=16, bits=8, fmt="bgr255", frame_bgr=True, extra_pix=3),
    dict(frame_w=64, frame_h=48, net_w=32, net_h=32, bits=8, mode="letterbox", dst_pad=0, pitch=200),
], ids=["int16", "bgr255-rgb-int16", "bgr255-bgr-pix", "pitch-nopad"])
def test_pre_formats(rtl, kw):
    c = pre_case(HW, **kw)
    check_case(rtl, c, "fmt-" + "-".join(f"{k}{v}" for k, v in kw.items()))


def test_pre_drawn_cases(rtl):
    """Drawn cases (generator/eval/pre_cases.draw_pre_case: sizes, modes, orders, precisions, pitches, strides,
    bands)."""
    rng = np.random.default_rng(4502)
    for i in range(5):
        kw = draw_pre_case(rng, max_pixels=200 * 150, net_max=40, bands=True)
        check_case(rtl, pre_case(HW, **kw), f"drawn-{i}")


@pytest.mark.parametrize("field,value", tiered([("frame_w", 0), ("frame_h", 4097), ("pitch", 10), ("out_w", 25),
                                                ("left", 1), ("size", 100), ("top", 1 << 20)],
                                               [("frame_w", 0), ("pitch", 10), ("size", 100), ("top", 1 << 20)]))
def test_pre_bad_registers_are_out_of_range(rtl, field, value):
    """A frame register PRE refuses: OUT_OF_RANGE as the golden simulator's, nothing written (four registers in
    the default tier; tests/exec/test_golden_pre.py checks the others on the golden simulator)."""
    c = pre_case(HW, 40, 30, 24, 16)
    got, gold = run_both(rtl, c, f"bad-{field}", frame=replace(c.frame, **{field: value}))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (got.status, gold.error)
    assert np.array_equal(got.ddr, c.ddr)


def test_pre_destination_beyond_its_buffer(rtl):
    """The destination's last byte one past the INPUT buffer's size: refused as the golden simulator does; one
    byte larger: accepted."""
    c = pre_case(HW, 40, 30, 24, 16, dst_pad=0)
    end = (16 - 1) * c.insn.f["row_stride"] + (24 - 1) * c.insn.f["pix_stride"] + 3
    got, gold = run_both(rtl, c, "dst-short", sizes=dict(c.sizes, INPUT=end - 1))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), gold.error
    assert np.array_equal(got.ddr, c.ddr)
    got, gold = run_both(rtl, c, "dst-exact", sizes=dict(c.sizes, INPUT=end))
    assert got.status == gold.status == 0 and c.mismatch(got.ddr) == ""


def band_blob(c, bands):
    """CONFIG, one PRE of case ``c`` per (y0, rows) of ``bands`` (ddr_offset: the band's first row), END."""
    f = {k: v for k, v in c.insn.f.items() if k not in dict(isa.HEADER)}
    return isa.encode_program([config_insn(HW)] + [isa.make("PRE", **dict(
        f, y0=y0, rows=n, ddr_offset=f["ddr_offset"] + y0 * f["row_stride"])) for y0, n in bands] + [isa.make("END")])


def test_pre_bands(rtl):
    """The input as bands (an empty one among them: nothing) equals the whole run; one band's cycles within 2% of
    pre_cycles; a band beyond the input's rows is OUT_OF_RANGE as the golden simulator's, nothing written."""
    ex, base = rtl
    c = pre_case(HW, 57, 43, 24, 16, "letterbox", bits=16, frame_bgr=True, seed=7)
    runs = {}
    for name, bands in (("bands", [(0, 5), (5, 0), (5, 7), (12, 4)]), ("band", [(5, 7)]), ("beyond", [(10, 7)])):
        blob = band_blob(c, bands)
        runs[name] = (ex.run(None, c.ddr, c.bases, c.sizes, blob=blob, case=BUILD / "tiny" / "pre" / name,
                             frame=c.frame),
                      GoldenExecutor().run(None, c.ddr, c.bases, c.sizes, blob=blob, hw=HW, frame=c.frame))
    got, gold = runs["bands"]
    assert got.status == gold.status == 0 and c.mismatch(got.ddr) == "" and np.array_equal(got.ddr, gold.ddr)
    got, gold = runs["band"]
    assert got.status == gold.status == 0 and np.array_equal(got.ddr, gold.ddr)
    model = pre_cycles(HW, dict(c.insn.f, y0=5, rows=7), c.frame)
    assert abs((got.cycles - base) / model - 1) <= 0.02, (got.cycles - base, model)
    got, gold = runs["beyond"]
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE") and np.array_equal(got.ddr, c.ddr)


@pytest.mark.slow   # (a second Verilator build, of a 16x32 array)
@pytest.mark.parametrize("ports", [2, 4])
def test_pre_on_two_hp_ports(ports):
    """A 256-bit m_axi split over two HP ports (rtl/axi_hp_split.sv), and a 512-bit one over four
    (rtl/axi_hp_ports.sv): PRE's reads and writes through the splitters, bit-exact, int8 and int16; PRE's cycles
    within 5% of pre_cycles (its splitter term, timing.PRE_SPLIT, fitted on seven such frames: each within 2.2%)."""
    two = board(**dict(TINY, tn=16, tm=32, axi_data_width_bits=128 * ports, hp_ports=ports))
    hw = HwConfig.from_board(two, 8)
    tag = f"tiny-{ports}hp"
    ex = shared_executor("rtl", two, tag)
    c = pre_case(hw, 4, 4, 4, 4)
    blob = isa.encode_program([config_insn(hw), isa.make("END")])
    base = ex.run(None, c.ddr, c.bases, c.sizes, blob=blob, case=BUILD / tag / "pre" / "base", frame=c.frame)
    for i, kw in enumerate([dict(frame_w=97, frame_h=41, net_w=40, net_h=24, mode="letterbox", pitch=300),
                            dict(frame_w=33, frame_h=47, net_w=24, net_h=16, bits=16, frame_bgr=True, extra_pix=5),
                            dict(frame_w=810, frame_h=1080, net_w=64, net_h=64)]):
        c = pre_case(hw, **kw)
        got = ex.run(None, c.ddr, c.bases, c.sizes, blob=c.blob, case=BUILD / tag / "pre" / f"c{i}",
                     frame=c.frame)
        assert got.status == 0 and not got.timeout and c.mismatch(got.ddr) == "", kw
        measured, model = got.cycles - base.cycles, pre_cycles(hw, c.insn.f, c.frame)
        assert abs(measured / model - 1) <= 0.05, f"{kw}: PRE took {measured} cycles, the model {model}"


def test_pre_beside_store(rtl):
    """A PRE in the LOAD module's stream of a tiled convolution (before its last LOAD), while the STORE module writes
    the earlier tiles: both write through rtl/axi_wr_arb.sv; the DDR after the run equals the golden simulator's
    (the layer's output and PRE's input) and the PRE's region equals host.pre.pre_run's."""
    from generator.exec import runtime
    from generator.frontend.modelgen import Builder
    from helpers import compile_small, quantize_input
    from layer_suite import KINDS

    ex, _ = rtl
    build, ic = KINDS["conv3x3_s1"]
    b = Builder([1, ic, 14, 12], seed=11)
    gq, prog, xs = compile_small(b.model([build(b)]), "int8-asym", True, board(**TINY))
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    c = pre_case(HW, 120, 90, 40, 30, bits=16, frame_bgr=True, seed=5)
    at = -(-ddr.size // 4096) * 4096                                  # the PRE case's image after the layer's
    full = np.zeros(at + c.ddr.size, np.uint8)
    full[:ddr.size], full[at:] = ddr, c.ddr
    last = max(bases, key=bases.get)                                  # the base register nearest the end
    f = {k: v for k, v in c.insn.f.items() if k not in dict(isa.HEADER)}
    pre = isa.make("PRE", **dict(f, base_reg=isa.BASE_REGS[last],
                                 ddr_offset=at + c.bases["INPUT"] + f["ddr_offset"] - bases[last]))
    insns = isa.decode_program(prog.blob)
    k = max(i for i, ins in enumerate(insns) if ins.op == "LOAD")
    assert any(ins.op == "STORE" for ins in insns[:k])                # tiles stored before it
    blob = isa.encode_program(insns[:k] + [pre] + insns[k:])
    frame = replace(c.frame, addr=c.frame.addr + at)
    got = ex.run(None, full, bases, blob=blob, case=BUILD / "tiny" / "pre" / "beside-store", frame=frame)
    gold = GoldenExecutor().run(None, full, bases, blob=blob, hw=prog.hw, frame=frame)
    assert got.status == gold.status == 0 and not got.timeout, (got.status, gold.error)
    assert np.array_equal(got.ddr, gold.ddr)
    assert c.mismatch(got.ddr[at:]) == ""


def test_pre_pixel_stride_below_a_pixel(rtl):
    """A pixel stride below a pixel's bytes (int16: 6): OUT_OF_RANGE as the golden simulator's, nothing written."""
    c = pre_case(HW, 40, 30, 24, 16, bits=16)
    f = {k: v for k, v in c.insn.f.items() if k not in dict(isa.HEADER)}
    blob = isa.encode_program([config_insn(HW), isa.make("PRE", **dict(f, pix_stride=5)), isa.make("END")])
    got, gold = run_both(rtl, c, "pix-short", blob=blob)
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (got.status, gold.error)
    assert np.array_equal(got.ddr, c.ddr)

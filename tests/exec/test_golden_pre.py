"""The golden simulator's PRE instruction against host.pre.pre_run (generator/eval/pre_cases.py), its checks
(OUT_OF_RANGE, ARITH_OVERFLOW) and its cycles (the latency model's pre_cycles)."""
import numpy as np
import pytest

from generator.eval.pre_cases import EDGE_FRAMES, draw_pre_case, pre_case
from generator.exec import GoldenExecutor
from generator.spec import isa
from generator.spec.timing import pre_cycles
from helpers import board
from generator.spec.hw import HwConfig
from generator.exec.rtl import TINY
from host.pre import PreFrame
from dataclasses import replace

HW = HwConfig.from_board(board(**TINY), 8)


def run(case, frame=None, blob=None):
    return GoldenExecutor().run(None, case.ddr, case.bases, case.sizes, blob=blob or case.blob, hw=HW,
                                frame=case.frame if frame is None else frame)


@pytest.mark.parametrize("mode", ["stretch", "letterbox", "letterbox_topleft"])
@pytest.mark.parametrize("fw,fh", EDGE_FRAMES)
def test_pre_edge_frames(mode, fw, fh):
    c = pre_case(HW, fw, fh, 24, 16, mode, bits=8, pitch=3 * fw + 5, frame_bgr=True, seed=fw)
    r = run(c)
    assert r.status == 0, r.error
    assert c.mismatch(r.ddr) == ""
    assert r.cycles >= pre_cycles(HW, c.insn.f, c.frame)


def test_pre_drawn_cases():
    rng = np.random.default_rng(4501)
    for _ in range(20):
        kw = draw_pre_case(rng, max_pixels=400 * 300, bands=True)
        c = pre_case(HW, **kw)
        r = run(c)
        assert r.status == 0 and c.mismatch(r.ddr) == "", kw


def test_pre_int16_and_swap_change_the_output():
    a = pre_case(HW, 40, 30, 20, 20, bits=16, seed=3)
    b = pre_case(HW, 40, 30, 20, 20, bits=16, frame_bgr=True, seed=3)
    assert run(a).status == 0 and a.mismatch(run(a).ddr) == ""
    assert not np.array_equal(a.expect, b.expect)


@pytest.mark.parametrize("field,value,why", [
    ("frame_w", 0, "frame of 0"), ("frame_h", 4097, "frame of"), ("pitch", 10, "row pitch"),
    ("out_w", 25, "outside the"), ("left", 1, "outside the"), ("size", 100, "beyond its")])
def test_pre_bad_registers_are_out_of_range(field, value, why):
    c = pre_case(HW, 40, 30, 24, 16)
    r = run(c, frame=replace(c.frame, **{field: value}))
    assert r.status == isa.status_of("OUT_OF_RANGE") and why in r.error
    assert np.array_equal(r.ddr, c.ddr)              # nothing written


def test_pre_destination_beyond_its_buffer():
    c = pre_case(HW, 40, 30, 24, 16)
    r = GoldenExecutor().run(None, c.ddr, c.bases, dict(c.sizes, INPUT=100), blob=c.blob, hw=HW, frame=c.frame)
    assert r.status == isa.status_of("OUT_OF_RANGE")


def test_pre_without_frame_registers():
    c = pre_case(HW, 4, 4, 4, 4)
    r = GoldenExecutor().run(None, c.ddr, c.bases, c.sizes, blob=c.blob, hw=HW)
    assert r.status == isa.status_of("OUT_OF_RANGE")


def test_pre_cycles_grow_with_the_frame():
    c = pre_case(HW, 64, 48, 32, 32)
    small = pre_cycles(HW, c.insn.f, c.frame)
    big = pre_cycles(HW, c.insn.f, replace(c.frame, frame_w=1280, frame_h=960, pitch=3840))
    assert 32 * 42 < small < big
    assert pre_cycles(HW, c.insn.f) > 32 * 42           # the nominal frame: the network input's size


def test_pre_roundtrips_disassembly():
    c = pre_case(HW, 5, 5, 4, 4, bits=16, fmt="bgr255")
    ins = isa.decode_program(c.blob)[1]
    assert ins.op == "PRE" and ins.f == c.insn.f and "model_bgr=1" in isa.disasm(ins)
    assert PreFrame.from_registers(c.frame.registers()) == c.frame


@pytest.mark.parametrize("mode", ["stretch", "letterbox", "letterbox_topleft"])
def test_pre_bands_make_the_whole_input(mode):
    """PRE bands (y0, rows) covering the rows in a drawn partition write exactly what one whole PRE writes."""
    c = pre_case(HW, 77, 131, 20, 24, mode, bits=16, seed=9)
    rng = np.random.default_rng(2)
    cuts = sorted({0, 24, *rng.integers(1, 24, 5).tolist()})
    insns = [isa.decode_program(c.blob)[0]]
    for a, b in zip(cuts, cuts[1:]):
        f = {k: v for k, v in c.insn.f.items() if k in dict(isa.FORMATS["PRE"])}
        insns.append(isa.make("PRE", **{**f, "y0": a, "rows": b - a,
                                        "ddr_offset": f["ddr_offset"] + a * f["row_stride"]}))
    insns.append(isa.make("END"))
    r = run(c, blob=isa.encode_program(insns))
    assert r.status == 0 and c.mismatch(r.ddr) == ""
    assert r.cycles > pre_cycles(HW, c.insn.f, c.frame)      # each band re-reads its first source rows


def test_pre_band_beyond_the_input_and_empty_band():
    c = pre_case(HW, 40, 30, 24, 16)
    f = {k: v for k, v in c.insn.f.items() if k in dict(isa.FORMATS["PRE"])}
    cfg = isa.decode_program(c.blob)[0]
    bad = isa.encode_program([cfg, isa.make("PRE", **{**f, "y0": 10, "rows": 7}), isa.make("END")])
    r = run(c, blob=bad)
    assert r.status == isa.status_of("OUT_OF_RANGE") and "band" in r.error
    empty = isa.encode_program([cfg, isa.make("PRE", **{**f, "rows": 0}), isa.make("END")])
    r = run(c, blob=empty, frame=replace(c.frame, frame_w=0))     # nothing read, nothing checked
    assert r.status == 0 and np.array_equal(r.ddr, c.ddr)


def test_pre_case_bands():
    for band in [(0, 16), (3, 5), (15, 1), (7, 0)]:
        c = pre_case(HW, 61, 45, 24, 16, "letterbox", band=band)
        r = run(c)
        assert r.status == 0 and c.mismatch(r.ddr) == ""
        assert (np.count_nonzero(c.expect != c.ddr) == 0) == (band[1] == 0)

"""The PRE instruction in the HLS kernel (the load module's exec_pre over the PRE unit accel_kernel_pre.h) in
C-simulation on the TINY board: standalone PRE programs (generator/eval/pre_cases.py) compared with host.pre.pre_run
(PreCase.expect) and with the golden simulator's DDR image and status, its error statuses equal to the golden
simulator's, and the kernel's PRE loop counts equal to the cycle estimate's (generator/estimate/hls_cycles.py)."""
from dataclasses import replace

import numpy as np
import pytest

from generator.eval.pre_cases import EDGE_FRAMES, draw_pre_case, pre_case
from generator.exec import GoldenExecutor
from generator.exec.rtl import TINY
from generator.spec import isa
from generator.spec.hw import HwConfig
from helpers import board, shared_executor

BRD = board(**TINY)
HW = HwConfig.from_board(BRD, 8)


def _both(case, frame="case", sizes=None, blob=None):
    """(csim run, golden run) of the case's program (or ``blob``) with its frame registers (or ``frame``)."""
    fr = case.frame if frame == "case" else frame
    sz = case.sizes if sizes is None else sizes
    blob = case.blob if blob is None else blob
    got = shared_executor("csim", BRD).run(None, case.ddr, case.bases, sz, blob=blob, frame=fr)
    gold = GoldenExecutor().run(None, case.ddr, case.bases, sz, blob=blob, hw=HW, frame=fr)
    return got, gold


def _exact(case, **kw):
    got, gold = _both(case, **kw)
    assert gold.status == 0, gold.error
    assert got.status == 0, hex(got.status)
    assert case.mismatch(got.ddr) == ""
    assert np.array_equal(got.ddr, gold.ddr)
    return got


@pytest.mark.parametrize("mode", ["stretch", "letterbox", "letterbox_topleft"])
@pytest.mark.parametrize("fw,fh", EDGE_FRAMES)
def test_csim_pre_edge_frames(mode, fw, fh):
    """1x1, odd portrait, landscape and 1920x1080 frames, a pitch above the row, a BGR frame, all three modes."""
    _exact(pre_case(HW, fw, fh, 24, 16, mode, bits=8, pitch=3 * fw + 5, frame_bgr=True, seed=fw))


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("fmt,frame_bgr", [("rgb01", False), ("rgb255", True), ("bgr255", False), ("bgr255", True)])
def test_csim_pre_precisions_and_channel_orders(bits, fmt, frame_bgr):
    """int8 and int16, every model format against RGB and BGR frames (swap on and off), up- and downsampling, a
    wider pixel stride and an odd pitch."""
    _exact(pre_case(HW, 37, 23, 45, 29, "letterbox", bits=bits, pitch=3 * 37 + 3, frame_bgr=frame_bgr, fmt=fmt,
                    extra_pix=3, seed=bits))
    _exact(pre_case(HW, 61, 90, 20, 31, "stretch", bits=bits, frame_bgr=frame_bgr, fmt=fmt, dst_pad=0, seed=7))


def test_csim_pre_drawn_cases():
    """Drawn cases (draw_pre_case, as invoke fuzz): sizes, pitches, modes, orders, precisions, strides, bands."""
    rng = np.random.default_rng(4502)
    for _ in range(12):
        kw = draw_pre_case(rng, max_pixels=400 * 300, bands=True)
        c = pre_case(HW, **kw)
        got, gold = _both(c)
        assert got.status == gold.status == 0, kw
        assert c.mismatch(got.ddr) == "" and np.array_equal(got.ddr, gold.ddr), kw


@pytest.mark.parametrize("field,value", [
    ("frame_w", 0), ("frame_h", 4097), ("pitch", 10), ("pitch", 65536), ("out_w", 25), ("out_h", 0), ("left", 1),
    ("top", 1 << 31), ("size", 100)])
def test_csim_pre_bad_registers_as_golden(field, value):
    """Frame registers host.pre.pre_violation refuses: OUT_OF_RANGE, as the golden simulator, nothing written."""
    c = pre_case(HW, 40, 30, 24, 16)
    got, gold = _both(c, frame=replace(c.frame, **{field: value}))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (hex(got.status), gold.error)
    assert np.array_equal(got.ddr, c.ddr)


def test_csim_pre_without_frame_registers():
    c = pre_case(HW, 4, 4, 4, 4)
    got, gold = _both(c, frame=None)
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE")
    assert np.array_equal(got.ddr, c.ddr)


@pytest.mark.parametrize("less", [1, 100])
def test_csim_pre_destination_beyond_its_buffer(less):
    """A destination byte beyond INPUT's size: OUT_OF_RANGE as golden (one byte short, and far short)."""
    c = pre_case(HW, 40, 30, 24, 16, dst_pad=0)
    end = c.insn.f["ddr_offset"] + (24 * 16) * 3
    got, gold = _both(c, sizes=dict(c.sizes, INPUT=end - less))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (hex(got.status), gold.error)
    assert np.array_equal(got.ddr, c.ddr)
    _exact(c, sizes=dict(c.sizes, INPUT=end))        # exactly large enough


def test_csim_pre_shift_zero_is_arith_overflow():
    c = pre_case(HW, 40, 30, 24, 16)
    insns = isa.decode_program(c.blob)
    insns[1] = isa.make("PRE", **{k: v for k, v in dict(insns[1].f, shift=0).items() if k != "opcode"})
    blob = isa.encode_program(insns)
    got, gold = _both(c, blob=blob)
    assert got.status == gold.status == isa.status_of("ARITH_OVERFLOW"), (hex(got.status), gold.error)
    assert np.array_equal(got.ddr, c.ddr)
    got, gold = _both(c, blob=blob, frame=replace(c.frame, frame_w=0))   # the frame's check comes first
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE")


def test_csim_pre_loop_counts_match_the_estimate():
    """The kernel's loop iterations of a PRE (the load module's count: CONFIG, PRE's fetch beats and pixel steps)
    equal the cycle estimate's trip counts of PRE_FETCH and PRE_PIXELS, which cost at II 1."""
    from generator.estimate.hls_cycles import KernelEstimate

    est = KernelEstimate(BRD, 8)
    assert {lp.label: lp.ii for lp in est.loops if lp.label.startswith("PRE_")} == {"PRE_PIXELS": 1, "PRE_FETCH": 1}
    for kw in [dict(frame_w=97, frame_h=41, net_w=24, net_h=16, mode="letterbox"),
               dict(frame_w=61, frame_h=45, net_w=24, net_h=16, mode="letterbox", band=(3, 9)),
               dict(frame_w=33, frame_h=47, net_w=30, net_h=20, bits=16, pitch=3 * 33 + 7, extra_pix=1, dst_pad=0)]:
        c = pre_case(HW, **kw)
        got = _exact(c)
        est.reset_counts()
        cyc = est.pre_cycles(c.insn.f, c.frame)
        assert got.cycles == 2 + est.trips["PRE_FETCH"] + est.trips["PRE_PIXELS"], kw
        assert cyc > est.trips["PRE_FETCH"] + est.trips["PRE_PIXELS"]


def test_csim_pre_frame_beyond_the_image():
    """A frame whose bytes run past the DDR image (a large frame_size register): OUT_OF_RANGE in both (run_csim
    cuts the buffer at the image's end; the golden simulator checks the image), nothing written."""
    c = pre_case(HW, 40, 30, 24, 16)
    got, gold = _both(c, frame=replace(c.frame, addr=c.ddr.size - 100, size=1 << 30))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (hex(got.status), gold.error)
    assert np.array_equal(got.ddr, c.ddr)


def _pre_fields(case):
    return {k: v for k, v in case.insn.f.items() if k in dict(isa.FORMATS["PRE"])}


@pytest.mark.parametrize("mode", ["stretch", "letterbox", "letterbox_topleft"])
def test_csim_pre_bands_make_the_whole_input(mode):
    """PRE bands (y0, rows) over a drawn partition of the rows write exactly what one whole PRE writes (each band
    starts from its own first placed row: the row accumulator at r0 x step_y, empty line buffers)."""
    c = pre_case(HW, 77, 131, 20, 24, mode, bits=16, seed=9)
    cuts = sorted({0, 24, *np.random.default_rng(2).integers(1, 24, 5).tolist()})
    f = _pre_fields(c)
    insns = [isa.decode_program(c.blob)[0]]
    insns += [isa.make("PRE", **{**f, "y0": a, "rows": b - a, "ddr_offset": f["ddr_offset"] + a * f["row_stride"]})
              for a, b in zip(cuts, cuts[1:])]
    _exact(c, blob=isa.encode_program(insns + [isa.make("END")]))


@pytest.mark.parametrize("band", [(0, 16), (3, 5), (15, 1), (7, 0), (2, 13)])
def test_csim_pre_case_bands(band):
    _exact(pre_case(HW, 61, 45, 24, 16, "letterbox", band=band, seed=band[0]))


def test_csim_pre_band_beyond_the_input_and_empty_band():
    """A band past net_h: OUT_OF_RANGE as golden; an empty band: nothing read, written or checked (bad registers)."""
    c = pre_case(HW, 40, 30, 24, 16)
    f, cfg = _pre_fields(c), isa.decode_program(c.blob)[0]
    got, gold = _both(c, blob=isa.encode_program([cfg, isa.make("PRE", **{**f, "y0": 10, "rows": 7}),
                                                  isa.make("END")]))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (hex(got.status), gold.error)
    assert np.array_equal(got.ddr, c.ddr)
    empty = isa.encode_program([cfg, isa.make("PRE", **{**f, "rows": 0}), isa.make("END")])
    got, gold = _both(c, blob=empty, frame=replace(c.frame, frame_w=0))
    assert got.status == gold.status == 0 and np.array_equal(got.ddr, c.ddr)


@pytest.mark.parametrize("bits,ps", [(8, 2), (16, 5)])
def test_csim_pre_pixel_stride_below_a_pixel(bits, ps):
    """A pixel stride below a pixel's bytes (3 or 6): OUT_OF_RANGE as the golden simulator's, nothing written."""
    c = pre_case(HW, 40, 30, 24, 16, bits=bits)
    insns = isa.decode_program(c.blob)
    insns[1] = isa.make("PRE", **{k: v for k, v in dict(insns[1].f, pix_stride=ps).items() if k != "opcode"})
    got, gold = _both(c, blob=isa.encode_program(insns))
    assert got.status == gold.status == isa.status_of("OUT_OF_RANGE"), (hex(got.status), gold.error)
    assert np.array_equal(got.ddr, c.ddr)

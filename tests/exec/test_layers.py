"""Quantized layers of every kind: golden ISA simulator == layer-level integer reference (bit for bit), and
both close to onnxruntime on the float model (within the quantization error, as SQNR)."""
import zlib

import numpy as np
import pytest

from generator.exec import run_golden
from generator.ref.int_ref import compare_ddr
from generator.ref.layer_ref import dequantize
from helpers import board, compile_small, quantize_input, run_both, sqnr_db
from generator.exec.rtl import TINY
from layer_suite import BOARDS, KINDS, MODES
from generator.frontend.modelgen import Builder, ort_run




@pytest.mark.parametrize("brd", list(BOARDS))
@pytest.mark.parametrize("mode,pc", MODES, ids=[f"{m}-{'pc' if p else 'pt'}" for m, p in MODES])
@pytest.mark.parametrize("kind", list(KINDS))
def test_layer_bit_exact_and_close_to_float(kind, mode, pc, brd):
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    m = b.model(list(outs))
    gq, prog, xs, iref = compile_small(m, mode, pc, BOARDS[brd](), with_ref=True)
    x = xs[0]   # a calibration input: no clipping, so the error is the quantization error alone
    gold, ref, res = run_both(gq, prog, x)
    # the parameters quantize.py stored, and every DDR region the golden simulator wrote, against the reference
    # that derives them from the float weights itself
    assert iref.check_params(gq) == []
    xq = quantize_input(gq, x)
    assert np.array_equal(xq, iref.quantize_input(x))
    _, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
    fl = ort_run(m, x)
    for o in outs:
        assert np.array_equal(gold[o], ref[o]), f"{o}: golden simulator differs from the integer reference"
        got = dequantize(gq, o, gold[o])
        s = sqnr_db(fl[o][0], got)
        assert s > (30 if mode.startswith("int8") else 60), f"{o}: SQNR {s:.1f} dB vs float"
    assert res.cycles > 0


@pytest.mark.parametrize("brd", list(BOARDS))
@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_mixed_precision_layers_bit_exact(kind, mode, brd):
    """Every other layer's output in the other precision (int8 <-> int16, requantized at each boundary): the
    golden simulator's DDR equals the independent reference's on every region (each at its own precision), and
    the outputs stay close to onnxruntime."""
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    m = b.model(list(outs))
    gq, prog, xs, iref = compile_small(m, mode, True, BOARDS[brd](), with_ref=True, precision="alternate")
    regions = {r.bits for r in gq.regions.values()}   # (a concatenation's writers share its widest precision)
    precs = {i.f["prec"] for i in prog.insns if i.op in ("COMPUTE", "POST", "STORE")}
    assert (precs == {0, 1}) == (regions == {8, 16})
    assert iref.check_params(gq) == []
    x = xs[0]
    xq = quantize_input(gq, x)
    assert np.array_equal(xq, iref.quantize_input(x))
    _, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
    gold, ref, _ = run_both(gq, prog, x)
    fl = ort_run(m, x)
    for o in outs:
        assert np.array_equal(gold[o], ref[o]), f"{o}: golden simulator differs from the integer reference"
        s = sqnr_db(fl[o][0], dequantize(gq, o, gold[o]))
        assert s > 28, f"{o}: SQNR {s:.1f} dB vs float"


def test_tiny_board_really_tiles():
    """The tiny board must force several spatial tiles, output-channel tiles and input-channel chunks."""
    b = Builder([1, 20, 14, 12], seed=3)
    m = b.model([b.leaky(b.conv("x", 19, k=3))])
    gq, prog, xs = compile_small(m, "int8-asym", True, board(**dict(TINY, wbuf_bank_bytes=1152)))
    ops = [i for i in prog.insns if i.op == "COMPUTE"]
    posts = [i for i in prog.insns if i.op == "POST"]
    stores = [i for i in prog.insns if i.op == "STORE"]
    assert sum(1 for i in ops if not i.f["acc_init"]) > 0          # accumulation over IC chunks
    assert len({i.f["pbuf_oc"] for i in posts}) > 1                # several output-channel tiles
    assert len({i.f["ddr_offset"] for i in stores}) > len({i.f["pbuf_oc"] for i in posts})  # spatial tiles
    gold, ref, _ = run_both(gq, prog, xs[0])
    assert all(np.array_equal(gold[k], ref[k]) for k in gold)

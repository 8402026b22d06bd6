"""Quantized layers of every kind: golden ISA simulator == layer-level integer reference (bit for bit), and
both close to onnxruntime on the float model (within the quantization error, as SQNR)."""
import zlib

import numpy as np
import pytest

from generator.exec import run_golden
from generator.exec.int_ref import compare_ddr
from generator.exec.layer_ref import dequantize
from generator.exec.rtl import TINY
from helpers import board, compile_small, quantize_input, run_both, sqnr_db
from generator.frontend.modelgen import Builder, ort_run


def conv1x1(b):
    return b.conv("x", 21, k=1)


def conv3x3_s1(b):
    return b.leaky(b.conv("x", 19, k=3))


def conv3x3_s2(b):
    return b.leaky(b.conv("x", 33, k=3, s=2))


def first_layer_folded(b):      # 3 input channels: folded KH x KW x IC
    return b.leaky(b.conv("x", 12, k=3, s=2))


def relu_pool(b):
    return b.maxpool(b.relu(b.conv("x", 17, k=3)))


def pool_stride1(b):            # darknet maxpool size=2 stride=1
    return b.maxpool(b.leaky(b.conv("x", 10, k=3)), k=2, s=1, pad_end=1)


def upsample(b):
    return b.upsample(b.leaky(b.conv("x", 9, k=1)))


def concat(b):
    a = b.leaky(b.conv("x", 11, k=3))
    return b.concat(b.leaky(b.conv(a, 7, k=1)), a)


def split(b):
    a = b.leaky(b.conv("x", 18, k=1))
    _, hi = b.split(a)
    return b.leaky(b.conv(hi, 13, k=3))


def standalone_pool(b):          # pool after a concat whose input is also used elsewhere -> copy layer
    a = b.leaky(b.conv("x", 12, k=3))
    c = b.leaky(b.conv(a, 12, k=3))
    return b.maxpool(b.concat(a, c)), c


KINDS = {"conv1x1": (conv1x1, 13), "conv3x3_s1": (conv3x3_s1, 13), "conv3x3_s2": (conv3x3_s2, 13),
         "first_layer_folded": (first_layer_folded, 3), "relu_pool": (relu_pool, 11),
         "pool_stride1": (pool_stride1, 6), "upsample": (upsample, 20), "concat": (concat, 9), "split": (split, 9),
         "standalone_pool": (standalone_pool, 10)}
MODES = [("int8-asym", True), ("int8-sym", True), ("int16-sym", True), ("int16-asym", True), ("int8-asym", False)]
BOARDS = {"zcu19eg": lambda: board(), "tiny": lambda: board(**TINY)}


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

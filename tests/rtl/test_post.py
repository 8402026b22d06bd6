"""rtl/post.sv (bias, requantization, activation, max-pool, nearest upsample: ACC -> OBUF) against the golden
simulator's POST semantics computed here with numpy (requantization by generator.exec.kernels.requantize, the pooling
window clipped to the tile, nearest upsampling) on random accumulators, parameter records (bias, both
multipliers / shifts, pre-shifts, extremes included) and instructions, int8 and int16; the bench models the accumulator and
parameter RAMs (one cycle read latency) and collects the OBUF lane writes. Also the unit's cycles (setup, one window
step per cycle, the requantization pipeline, drain) and the OUT_OF_RANGE check of the PBUF entries."""
from __future__ import annotations

import random

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from generator.spec.arch import POST_SETUP, REQUANT_STAGES
from generator.exec.kernels import requantize
from generator.backends.rtl import package_context
from rtl_unit import UnitBuild, unit_args


def field(v: int, k: int, bits: int) -> int:
    return (v >> (bits * k)) & ((1 << bits) - 1)


def signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def record(bias, mp, mn, sp, sn, pre) -> int:
    """PBUF record (isa.PARAM_RECORD little-endian layout) as an integer."""
    raw = bytearray(isa.PARAM_RECORD_BYTES)
    for name, typ, off in isa.PARAM_RECORD:
        v = {"bias": bias, "mult_pos": mp, "mult_neg": mn, "shift_pos": sp, "shift_neg": sn, "pre_shift": pre,
             "reserved": 0}[name]
        n = np.dtype(typ).itemsize
        raw[off:off + n] = int(v).to_bytes(n, "little", signed=np.dtype(typ).kind == "i")
    return int.from_bytes(raw, "little")


def reference(acc, recs, f, qmin, qmax):
    """OBUF elements of POST f: the golden simulator's semantics (generator/exec/golden.py _post), written out here."""
    oh, ow, og, tm = f["oh"], f["ow"], f["og"], acc.shape[-1]
    C = og * tm
    a = acc[:oh * ow * og].reshape(oh, ow, C).astype(np.int64)
    r = recs[f["pbuf_oc"]:f["pbuf_oc"] + C]
    v = a + np.array([x[0] for x in r], np.int64)
    pre = np.array([x[5] for x in r], np.int64)
    lim = 1 << (isa.REQUANT_OPERAND_BITS - 1)
    assert ((v >> pre >= -lim) & (v >> pre < lim)).all()     # the golden simulator's operand check
    q = requantize(np.moveaxis(v, 2, 0), [x[1] for x in r], [x[3] for x in r], [x[2] for x in r],
                   [x[4] for x in r], bool(f["act"]), f["zp_out"], qmin, qmax, pre)
    q = np.moveaxis(q, 0, 2)
    up = max(f["up"], 1)
    prow, pcol = f["out_rows"] // up, f["out_cols"] // up
    pk, ps = max(f["pool_k"], 1), max(f["pool_s"], 1)
    if pk > 1 or ps > 1:
        out = np.full((prow, pcol, C), np.iinfo(np.int64).min)
        for y in range(prow):
            for x in range(pcol):
                for dy in range(pk):
                    for dx in range(pk):
                        out[y, x] = np.maximum(out[y, x], q[min(y * ps + dy, oh - 1), min(x * ps + dx, ow - 1)])
        q = out
    else:
        q = q[:prow, :pcol]
    return q.repeat(up, axis=0).repeat(up, axis=1).reshape(-1)


def random_post(rng, tm, pbuf_entries):
    pool = rng.choice([(1, 1), (2, 2), (2, 1), (3, 2)])
    up = 1 if pool != (1, 1) else rng.choice([1, 1, 2, 3])
    oh, ow = rng.randint(1, 5 if up == 1 else 3), rng.randint(1, 5 if up == 1 else 3)
    og = rng.randint(1, 2)
    if pool != (1, 1):
        rows, cols = -(-oh // pool[1]), -(-ow // pool[1])
    else:
        rows, cols = rng.randint(1, oh) * up, rng.randint(1, ow) * up
    groups = pbuf_entries // tm
    return dict(acc_bank=rng.randint(0, 1), oh=oh, ow=ow, og=og, pbuf_oc=rng.randint(0, groups - og) * tm,
                act=rng.randint(0, 1), pool_k=pool[0], pool_s=pool[1], up=up, zp_out=rng.randint(-20, 20),
                out_rows=rows, out_cols=cols)


async def _run_post(dut, f, p16, acc_mem, pbuf, P):
    """Start POST f; model the RAMs; returns ({OBUF element: value}, cycles from start to done, oob seen)."""
    tm, ol, acc_w = P["tm"], P["ol"], P["acc_w"]
    dut.ins.value = int.from_bytes(isa.encode(isa.make("POST", **f)), "little")
    dut.prec16.value = p16
    dut.start.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    dut.start.value = 0
    obuf, cycles, oob = {}, 0, False
    aw = prow = None
    while True:
        if aw is not None:                           # RAM outputs of last cycle's addresses
            dut.acc_rd_a.value = sum((acc_mem[b][aw] if aw < len(acc_mem[b]) else 0) << (acc_w * tm * b)
                                     for b in range(2))
            dut.pb_rd.value = pbuf[prow] if prow < len(pbuf) else 0
        await Timer(1, unit="ns")
        aw, prow = int(dut.pp_aw.value), int(dut.pp_prow.value)
        oob |= bool(int(dut.oob.value))
        we, data, row = int(dut.obw_we.value), int(dut.obw_data.value), int(dut.obw_row.value)
        for lane in range(ol):
            if we >> lane & 1:
                obuf[field(row, lane, P["ob_aw"]) * ol + lane] = signed(field(data, lane, 16), 16)
        done = int(dut.done.value)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        cycles += 1
        if done:
            return obuf, cycles, oob
        assert cycles < 20000, "POST does not finish"


@cocotb.test()
async def post_matches_golden(dut):
    args = unit_args()
    P = args["pkg"]
    tm, acc_w, ol = P["tm"], P["acc_w"], P["ol"]
    rng = random.Random(args["seed"])
    nrng = np.random.default_rng(args["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    dut.start.value = 0
    dut.clr.value = 0
    dut.acc_rd_a.value = 0
    dut.pb_rd.value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    ncases = 0
    for case in range(args["cases"]):
        p16 = case % 2
        qmin, qmax = (-32768, 32767) if p16 else (-128, 127)
        # wide: |acc + bias| < 2^(acc_w - 2), pre-shifted by at least acc_w - 2 - 26 (up to 5 more); narrow
        # (every third case): within the 27-bit operand, pre-shift 0 to 2
        wide = case % 3 != 2
        lim = 1 << (acc_w - 3 if wide else isa.REQUANT_OPERAND_BITS - 3)
        pre_min = max(0, acc_w - 2 - (isa.REQUANT_OPERAND_BITS - 1)) if wide else 0
        acc = nrng.integers(-lim, lim, (2, P["acc_words"], tm))
        acc[:, ::5] = nrng.choice([-lim, lim - 1, 0, -1], acc[:, ::5].shape)        # extremes
        acc_mem = [[sum((int(acc[b, w, m]) & ((1 << acc_w) - 1)) << (acc_w * m) for m in range(tm))
                    for w in range(P["acc_words"])] for b in range(2)]
        recs = []
        for _ in range(P["pbuf_entries"]):
            recs.append((rng.randint(-lim, lim), rng.choice([0, 1, 32767, rng.randint(0, 32767)]),
                         rng.randint(0, 32767), rng.randint(1, isa.MAX_SHIFT if rng.random() < 0.2 else 30),
                         rng.randint(1, 30), pre_min + rng.choice([0, 0, 1, 2, 5 if wide else 2])))
        pbuf = [sum(record(*recs[r * tm + m]) << (8 * isa.PARAM_RECORD_BYTES * m) for m in range(tm))
                for r in range(P["pbuf_entries"] // tm)]
        f = random_post(rng, tm, P["pbuf_entries"])
        ref = reference(acc[f["acc_bank"]], recs, f, qmin, qmax)
        obuf, cycles, oob = await _run_post(dut, f, p16, acc_mem, pbuf, P)
        assert not oob, f
        got = [obuf.get(k) for k in range(len(ref))]
        assert len(obuf) == len(ref), (f, len(obuf), len(ref))
        bad = [k for k in range(len(ref)) if got[k] != ref[k]]
        assert not bad, f"case {case} {f} int{16 if p16 else 8}: element {bad[0]}: {got[bad[0]]} != {ref[bad[0]]}"
        steps = f["out_rows"] // max(f["up"], 1) * max(f["up"], 1) * (f["out_cols"] // max(f["up"], 1)
                                                                     * max(f["up"], 1)) * f["og"] * f["pool_k"] ** 2
        # setup + one window step per cycle + the requantization pipeline + drain
        assert cycles == steps + 2 + P["setup"] + P["rq_lat"], (f, cycles, steps)
        ncases += 1
    # PBUF entries beyond the buffer: OUT_OF_RANGE
    f = random_post(rng, tm, P["pbuf_entries"])
    f["pbuf_oc"] = P["pbuf_entries"] - tm * (f["og"] - 1) - tm + tm           # one group too far
    f["pbuf_oc"] = min(f["pbuf_oc"], (1 << 12) - tm)
    _, _, oob = await _run_post(dut, f, 0, acc_mem, pbuf + [0] * (1 << 12), P)
    assert oob, f
    assert ncases == args["cases"]


@pytest.fixture(scope="module")
def post_build():
    return UnitBuild("post")


def test_post_requant_pool_upsample(post_build):
    p = package_context(post_build.board)
    ol = max(p["tm"], p["axi_bits"] // 8)
    ob_d = -(-p["obuf_elems"] // ol)
    pkg = {"tm": p["tm"], "acc_w": p["acc_w"], "acc_words": p["acc_words"], "pbuf_entries": p["pbuf_entries"],
           "ol": ol, "ob_aw": max((ob_d - 1).bit_length(), 1), "rq_lat": REQUANT_STAGES,
           "setup": POST_SETUP}
    post_build.run("test_post", "post_matches_golden", {"seed": 7, "cases": 24, "pkg": pkg})

"""rtl/post.sv (bias, requantization, activation, max-pool, nearest upsample: ACC -> OBUF) against the golden
simulator's POST (generator/exec/golden.py ``GoldenSim._post`` on the same accumulators, PBUF records and TBUF
tables) on random accumulators, parameter records (bias, both multipliers / shifts, pre-shifts, extremes
included), activation tables and instructions, int8 and int16: every activation bit pattern (linear, negative-side
multiplier, table, both), with the table the identity above its window (``id_above`` on and off, ``id_shift``
0..15, ``zp_id`` in the precision's range and anywhere in its field; with the table bit clear the three fields are
set too and must be ignored); the bench models the accumulator, parameter and table RAMs (one cycle read latency)
and collects the OBUF lane writes. Also the unit's cycles (setup, one window step per cycle, the requantization
pipeline (+ the table's), drain) and the OUT_OF_RANGE checks of the PBUF entries and of the OBUF words of the
POST's own precision. The POSTs run back to back (each
started the cycle after the previous one's ``done``, as the STORE module starts them), int8 and int16 by turns, each
in its own precision (its prec field)."""
from __future__ import annotations

import random

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from generator.spec.arch import POST_SETUP, REQUANT_STAGES, TABLE_STAGES
from generator.spec.hw import HwConfig
from generator.exec.golden import GoldenSim
from generator.backends.rtl import package_context
from rtl_unit import UnitBuild, tiny_board, unit_args


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


def tbuf_record(table, row: int) -> int:
    """TBUF record ``row`` of a lane's table (int [TABLE_ENTRIES, 2]: base, delta) as an integer: TABLE_PER_RECORD
    (base, delta) int16 pairs, little-endian (rtl/act_table.sv)."""
    v = 0
    for j in range(isa.TABLE_PER_RECORD):
        b, d = (int(t) & 0xFFFF for t in table[row * isa.TABLE_PER_RECORD + j])
        v |= (b | d << 16) << (32 * j)
    return v


def golden_post(acc, recs, tables, f, bits):
    """OBUF elements of POST ``f`` by the golden simulator (``GoldenSim._post``, TINY configuration, int ``bits``):
    accumulator bank ``acc`` [2, words, Tm], PBUF records ``recs`` (tuples of :func:`record`'s fields, one per
    entry), lane tables ``tables`` [Tm, TABLE_ENTRIES, 2]. Returns int64 [elements written]."""
    hw = HwConfig.from_board(tiny_board(), bits)
    sim = GoldenSim(hw, np.zeros(0, np.uint8), {n: 0 for n in isa.BASE_REG_NAMES.values()})
    for b in range(2):
        sim.acc[b][:acc.shape[1]] = acc[b]
    for i, r in enumerate(recs):
        sim.pbuf[(i // hw.tm) * hw.tm_pitch + i % hw.tm] = tuple(r) + (0,)
    for lane in range(hw.tm):
        t = np.asarray(tables[lane], np.int64).reshape(isa.TBUF_ROWS, 2 * isa.TABLE_PER_RECORD)
        sim.tbuf[np.arange(isa.TBUF_ROWS) * hw.tm_pitch + lane] = t
    sim.obuf[:] = np.iinfo(np.int64).min                  # (unwritten)
    sim._post(0, isa.make("POST", **dict(f, prec=int(bits == 16))).f)
    written = sim.obuf != np.iinfo(np.int64).min
    n = int(np.argmin(written)) if not written.all() else written.size
    return sim.obuf[:n].copy()


def random_post(rng, tm, pbuf_entries, qr=128):
    pool = rng.choice([(1, 1), (2, 2), (2, 1), (3, 2)])
    up = 1 if pool != (1, 1) else rng.choice([1, 1, 2, 3])
    oh, ow = rng.randint(1, 5 if up == 1 else 3), rng.randint(1, 5 if up == 1 else 3)
    og = rng.randint(1, 2)
    if pool != (1, 1):
        rows, cols = -(-oh // pool[1]), -(-ow // pool[1])
    else:
        rows, cols = rng.randint(1, oh) * up, rng.randint(1, ow) * up
    groups = pbuf_entries // tm
    f = dict(acc_bank=rng.randint(0, 1), oh=oh, ow=ow, og=og, pbuf_oc=rng.randint(0, groups - og) * tm,
             act=rng.randint(0, 3), pool_k=pool[0], pool_s=pool[1], up=up, zp_out=rng.randint(-20, 20),
             out_rows=rows, out_cols=cols)
    if rng.random() < 0.7:      # the identity above the table's window (ignored without the table bit)
        f.update(id_above=int(rng.random() < 0.8), id_shift=rng.randint(0, isa.ID_SHIFT_MAX),
                 zp_id=rng.randint(-(1 << 15), (1 << 15) - 1) if rng.random() < 0.3 else rng.randint(-qr, qr - 1))
    return f


async def _run_post(dut, f, acc_mem, pbuf, P, tbuf=None, acc_mem1=None):
    """Start POST f (its prec field included); model the RAMs (``tbuf``: per lane its TBUF records as integers;
    ``acc_mem1``: ACC copy 1 of a double-pumped array, PUMP = 2, read on acc_rd_c); returns ({OBUF element:
    value}, cycles from start to done, oob seen)."""
    tm, ol, acc_w = P["tm"], P["ol"], P["acc_w"]
    tbuf = tbuf or [[0] * P["tb_d"] for _ in range(tm)]
    rec_w, tb_aw = 8 * isa.PARAM_RECORD_BYTES, P["tb_aw"]
    dut.ins.value = int.from_bytes(isa.encode(isa.make("POST", **f)), "little")
    dut.start.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    dut.start.value = 0
    obuf, cycles, oob = {}, 0, False
    aw = prow = trow = None
    while True:
        if aw is not None:                           # RAM outputs of last cycle's addresses
            for port, mem in (("a", acc_mem), ("c", acc_mem1)):
                if mem is not None:
                    getattr(dut, f"acc_rd_{port}").value = sum(
                        (mem[b][aw] if aw < len(mem[b]) else 0) << (acc_w * tm * b) for b in range(2))
            dut.pb_rd.value = pbuf[prow] if prow < len(pbuf) else 0
            dut.tb_rd.value = sum(tbuf[m][field(trow, m, tb_aw)] << (rec_w * m) for m in range(tm))
        await Timer(1, unit="ns")
        aw, prow, trow = int(dut.pp_aw.value), int(dut.pp_prow.value), int(dut.pp_trow.value)
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
    dut.acc_rd_c.value = 0
    dut.pb_rd.value = 0
    dut.tb_rd.value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    ncases = n_ident = 0
    for case in range(args["cases"]):
        p16 = case % 2
        qmin, qmax = (-32768, 32767) if p16 else (-128, 127)
        # wide: |acc + bias| < 2^(acc_w - 2), pre-shifted by at least acc_w - 2 - 26 (up to 5 more); narrow
        # (every third case): within the 27-bit operand, pre-shift 0 to 2
        wide = case % 3 != 2
        lim = 1 << (acc_w - 3 if wide else isa.REQUANT_OPERAND_BITS - 3)
        pre_min = max(0, acc_w - 2 - (isa.REQUANT_OPERAND_BITS - 1)) if wide else 0
        copies = []
        for _ in range(P.get("pump", 1)):             # (PUMP = 2: copy 1 holds the odd tile columns' words)
            acc = nrng.integers(-lim, lim, (2, P["acc_words"], tm))
            acc[:, ::5] = nrng.choice([-lim, lim - 1, 0, -1], acc[:, ::5].shape)        # extremes
            copies.append(acc)
        mems = [[[sum((int(a[b, w, m]) & ((1 << acc_w) - 1)) << (acc_w * m) for m in range(tm))
                  for w in range(P["acc_words"])] for b in range(2)] for a in copies]
        acc_mem, acc_mem1 = mems[0], (mems[1] if len(mems) == 2 else None)
        recs = []
        for _ in range(P["pbuf_entries"]):
            recs.append((rng.randint(-lim, lim), rng.choice([0, 1, 32767, rng.randint(0, 32767)]),
                         rng.randint(0, 32767), rng.randint(1, isa.MAX_SHIFT if rng.random() < 0.2 else 30),
                         rng.randint(1, 30), pre_min + rng.choice([0, 0, 1, 2, 5 if wide else 2])))
        pbuf = [sum(record(*recs[r * tm + m]) << (8 * isa.PARAM_RECORD_BYTES * m) for m in range(tm))
                for r in range(P["pbuf_entries"] // tm)]
        f = dict(random_post(rng, tm, P["pbuf_entries"], qmax + 1), prec=p16)
        acc = copies[0]
        if acc_mem1 is not None:                      # the ACC the ISA sees: each word from its column's copy
            col = np.arange(P["acc_words"]) // max(f["og"], 1) % max(f["ow"], 1)
            acc = np.where((col % 2 == 1)[None, :, None], copies[1], copies[0])
        tables = np.stack([nrng.integers(qmin - 8, qmax + 9, (tm, isa.TABLE_ENTRIES)),
                           nrng.integers(-(1 << 15), 1 << 15, (tm, isa.TABLE_ENTRIES))], -1)
        tbuf = [[tbuf_record(tables[m], r) for r in range(P["tb_d"])] for m in range(tm)]
        ref = golden_post(acc, recs, tables, f, 16 if p16 else 8)
        obuf, cycles, oob = await _run_post(dut, f, acc_mem, pbuf, P, tbuf, acc_mem1)
        assert not oob, f
        got = [obuf.get(k) for k in range(len(ref))]
        assert len(obuf) == len(ref), (f, len(obuf), len(ref))
        bad = [k for k in range(len(ref)) if got[k] != ref[k]]
        assert not bad, f"case {case} {f} int{16 if p16 else 8}: element {bad[0]}: {got[bad[0]]} != {ref[bad[0]]}"
        table = f["act"] & isa.ACTIVATIONS["table"]
        if table and f.get("id_above"):       # the identity changed some element (else the case proves little)
            n_ident += not np.array_equal(ref, golden_post(acc, recs, tables, dict(f, id_above=0), 16 if p16 else 8))
        steps = f["out_rows"] // max(f["up"], 1) * max(f["up"], 1) * (f["out_cols"] // max(f["up"], 1)
                                                                     * max(f["up"], 1)) * f["og"] * f["pool_k"] ** 2
        # setup + one window step per cycle + the requantization pipeline (+ the table's) + drain
        assert cycles == steps + 2 + P["setup"] + P["rq_lat"] + (P["tb_lat"] if table else 0), (f, cycles, steps)
        ncases += 1
    # PBUF entries beyond the buffer: OUT_OF_RANGE
    f = random_post(rng, tm, P["pbuf_entries"])
    f["pbuf_oc"] = P["pbuf_entries"] - tm * (f["og"] - 1) - tm + tm           # one group too far
    f["pbuf_oc"] = min(f["pbuf_oc"], (1 << 12) - tm)
    _, _, oob = await _run_post(dut, f, acc_mem, pbuf + [0] * (1 << 12), P)
    assert oob, f
    assert ncases == args["cases"] and n_ident >= args["cases"] // 8, (ncases, n_ident)
    # OBUF words of the POST's own precision: 12 x 12 words (a 6 x 6 tile upsampled by 2) fit the int8 OBUF, not
    # the int16 one (OUT_OF_RANGE for the int16 POST only, run back to back between int8 ones)
    f = dict(acc_bank=0, oh=6, ow=6, og=1, pbuf_oc=0, act=0, pool_k=1, pool_s=1, up=2, out_rows=12, out_cols=12)
    assert P["obuf_words16"] < 144 <= P["obuf_words8"], P
    seen = [(await _run_post(dut, dict(f, prec=p16), acc_mem, pbuf, P))[2] for p16 in (0, 1, 0)]
    assert seen == [False, True, False], seen


@pytest.fixture(scope="module")
def post_build():
    return UnitBuild("post")


def test_post_requant_table_pool_upsample(post_build):
    post_build.run("test_post", "post_matches_golden", {"seed": 7, "cases": 40, "pkg": post_pkg(post_build)})


def test_post_double_pumped_reads_each_pixels_acc_copy():
    """PUMP = 2: the ACC words of odd tile columns in copy 1 (rtl/buffers.sv), POST's windows (pooling clamps and
    upsampling included) reading each pixel's word from its copy."""
    build = UnitBuild("post", tiny_board(pump=2), name="post_pump2")
    build.run("test_post", "post_matches_golden", {"seed": 8, "cases": 40, "pkg": dict(post_pkg(build), pump=2)})


def post_pkg(post_build) -> dict:
    p = package_context(post_build.board)
    ol = max(p["tm"], p["axi_bits"] // 8)
    ob_d = -(-p["obuf_elems"] // ol)
    pkg = {"tm": p["tm"], "acc_w": p["acc_w"], "acc_words": p["acc_words"], "pbuf_entries": p["pbuf_entries"],
           "ol": ol, "ob_aw": max((ob_d - 1).bit_length(), 1), "rq_lat": REQUANT_STAGES, "tb_lat": TABLE_STAGES,
           "tb_d": isa.TBUF_ROWS, "tb_aw": max((isa.TBUF_ROWS - 1).bit_length(), 1), "setup": POST_SETUP,
           "obuf_words8": p["obuf_words8"], "obuf_words16": p["obuf_words16"]}
    return pkg

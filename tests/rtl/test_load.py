"""rtl/load.sv with rtl/load_wr.sv and its seg_gen (CONFIG and LOAD: DDR -> IBUF / WBUF / PBUF) against the ISA's
definition of LOAD (generator/spec/isa.py FORMATS: src byte base + ddr_offset + r*row_stride + c*pix_stride +
e*elem_bytes -> element (dst_word + (r*cols + c)*dst_pitch)*lanes + dst_elem + e), computed here on random DDR
contents and random strided transfers into each buffer (int8 sign-extended, int16, 16-byte parameter records,
overlapping pixel runs read as row spans), with a Python model of the read channel (random address-accept and beat
delays, bursts checked against 4 KB) and of the lane memories (byte enables, rows); buffer words the LOAD must not
touch are pre-filled and checked too. Each case runs two LOADs back to back, each in its own precision (its prec
field; the first int8 / int16 by turns, the second of either, taken from the queue as the first completes); PBUF /
TBUF LOADs with a random prec, which they ignore. CONFIG's checks: a wrong Tm is CONFIG_MISMATCH, a wrong ISA
version ISA_VERSION_MISMATCH; LOAD beyond a size register, or beyond the IBUF / WBUF words of its own precision, is
OUT_OF_RANGE with no burst issued."""
from __future__ import annotations

import random

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.backends.rtl import package_context
from rtl_unit import UnitBuild, reset_with_regions, unit_args

DDR = 1 << 18
BASES = [0x1000, 0x9000, 0x11000, 0x20000]
BUFS = isa.BUFFERS
SPAN_CYCLES = [0]                  # beats received while LOAD was in row-span mode


def fields(v, n, bits):
    return [(v >> (bits * k)) & ((1 << bits) - 1) for k in range(n)]


class Model:
    """The lane memories of one bank, as flat element arrays: IBUF / WBUF 16-bit elements, PBUF 16-byte records."""

    def __init__(self, P, rng):
        self.P = P
        self.ib = rng.integers(0, 1 << 16, P["ib_d"] * P["tn"])
        self.wb = rng.integers(0, 1 << 16, P["wb_d"] * P["wl"])
        self.pb = rng.integers(0, 256, (P["pb_d"] * P["tm"], isa.PARAM_RECORD_BYTES))
        self.tb = rng.integers(0, 256, (P["tb_d"] * P["tm"], isa.PARAM_RECORD_BYTES))

    def copy(self):
        m = Model.__new__(Model)
        m.P, m.ib, m.wb, m.pb, m.tb = self.P, self.ib.copy(), self.wb.copy(), self.pb.copy(), self.tb.copy()
        return m

    def apply(self, dut):
        P = self.P
        tn, tm, wl = P["tn"], P["tm"], P["wl"]
        we, data, row = int(dut.ibw_we.value), int(dut.ibw_data.value), int(dut.ibw_row.value)
        for pt in range(2):
            for n in range(tn):
                e = (we >> (2 * tn * pt + 2 * n)) & 3
                if e:
                    r = (row >> (P["ib_aw"] * (tn * pt + n))) & ((1 << P["ib_aw"]) - 1)
                    d = (data >> (16 * (tn * pt + n))) & 0xFFFF
                    self.ib[r * tn + n] = self._merge(self.ib[r * tn + n], d, e)
        we, data, row = int(dut.wbw_we.value), int(dut.wbw_data.value), int(dut.wbw_row.value)
        for q in range(wl):
            e = (we >> (2 * q)) & 3
            if e:
                self.wb[row * wl + q] = self._merge(self.wb[row * wl + q], (data >> (16 * q)) & 0xFFFF, e)
        data, row = int(dut.pbw_data.value), int(dut.pbw_row.value)
        nb = isa.PARAM_RECORD_BYTES
        for we, mem in ((int(dut.pbw_we.value), self.pb), (int(dut.tbw_we.value), self.tb)):
            for lane in range(tm):
                r = (row >> (P["pw_aw"] * lane)) & ((1 << P["pw_aw"]) - 1)
                for b in range(nb):
                    if we >> (nb * lane + b) & 1:
                        mem[r * tm + lane, b] = (data >> (8 * nb * lane + 8 * b)) & 0xFF

    @staticmethod
    def _merge(old, new, en):
        return (new & 0xFF if en & 1 else old & 0xFF) | (new & 0xFF00 if en & 2 else old & 0xFF00)


def reference(model, f, mem, p16):
    """The buffer bank after LOAD f (isa.FORMATS LOAD)."""
    m = model.copy()
    P = m.P
    eb = 2 if p16 else 1
    for r in range(f["rows"]):
        for c in range(f["cols"]):
            src = BASES[f["base_reg"]] + f["ddr_offset"] + r * f["row_stride"] + c * f["pix_stride"]
            pix = r * f["cols"] + c
            for e in range(f["elems"]):
                if f["buf"] in (BUFS["PBUF"], BUFS["TBUF"]):
                    a = src + e * isa.PARAM_RECORD_BYTES
                    (m.pb if f["buf"] == BUFS["PBUF"] else m.tb)[f["dst_word"] + pix * f["elems"] + e] = \
                        mem[a:a + isa.PARAM_RECORD_BYTES]
                    continue
                a = src + e * eb
                v = int(mem[a]) | (int(mem[a + 1]) << 8 if p16 else (0xFF00 if mem[a] & 0x80 else 0))
                lanes = P["tn"] if f["buf"] == BUFS["IBUF"] else P["wl"]
                idx = (f["dst_word"] + pix * f["dst_pitch"]) * lanes + f["dst_elem"] + e
                (m.ib if f["buf"] == BUFS["IBUF"] else m.wb)[idx] = v
    return m


def random_load(rng, P, p16):
    eb = 2 if p16 else 1
    kind = rng.choice(["ibuf", "ibuf", "span", "wbuf", "pbuf", "tbuf"])
    rows, cols = rng.randint(1, 4), rng.randint(1, 6)
    if kind in ("pbuf", "tbuf"):               # records of consecutive output channels / an activation table
        cap = P["pbuf_entries"] if kind == "pbuf" else P["tb_d"] * P["tm"]
        elems = rng.randint(1, 2 * P["tm"])
        run = elems * isa.PARAM_RECORD_BYTES
        pix = rng.choice([run, run + 16 * rng.randint(1, 3)])
        rows, cols = 1, rng.randint(1, max(1, cap // elems // 2))
        dst = rng.randint(0, cap - rows * cols * elems)
        return dict(buf=BUFS[kind.upper()], bank=rng.randint(0, 1), base_reg=rng.randint(0, 3),
                    ddr_offset=rng.randint(0, 6000), rows=rows, cols=cols, elems=elems, row_stride=cols * pix,
                    pix_stride=pix, dst_word=dst, dst_elem=0, dst_pitch=elems)
    if kind == "span":                         # overlapping pixel runs (the folded first layer's LOADs)
        elems = rng.randint(2, min(P["tn"], P["axi_bytes"] // eb))
        stride = rng.randint(-(-elems * eb // 2), elems * eb - 1)
        cols = rng.randint(6, 12)
        buf, lanes, words = BUFS["IBUF"], P["tn"], P["ibuf_words"]
        pitch = rng.randint(1, 2)
    else:
        elems = rng.randint(1, 3 * P["tn"])
        stride = rng.choice([elems * eb, elems * eb + rng.randint(1, 50)])
        buf = BUFS["IBUF"] if kind == "ibuf" else BUFS["WBUF"]
        lanes = P["tn"] if kind == "ibuf" else P["wl"]
        words = P["ibuf_words"] if kind == "ibuf" else P["wbuf_words"]
        pitch = -(-(elems + lanes - 1) // lanes)
    dst_elem = rng.randint(0, lanes * pitch - elems)        # (pixels never overlap in the buffer)
    while (rows * cols * pitch + 1) > words // 2:
        rows, cols = max(1, rows - 1), max(1, cols - 1)
        if rows == 1 and cols == 1:
            break
    row_stride = rng.choice([cols * stride, cols * stride + rng.randint(1, 4000)])
    return dict(buf=buf, bank=rng.randint(0, 1), base_reg=rng.randint(0, 3), ddr_offset=rng.randint(0, 6000),
                rows=rows, cols=cols, elems=elems, row_stride=row_stride, pix_stride=stride,
                dst_word=rng.randint(0, words // 2 - 1 - rows * cols * pitch) if words // 2 > rows * cols * pitch + 1
                else 0, dst_elem=dst_elem, dst_pitch=pitch)


async def run_insns(dut, insns, mem, models, P, rng):
    """Feed insns through the queue, serve reads from mem, apply buffer writes to models[bank].
    Returns {signal: cycles it was high} for the error outputs and the bursts [(address, beats)]."""
    B = P["axi_bytes"]
    queue = list(insns)
    beats, bursts = [], []
    seen = {"cfg_err_isa": 0, "cfg_err_cfg": 0, "oob": 0}
    idle_for = 0
    for cyc in range(60000):
        dut.lq_empty.value = int(not queue)
        if queue:
            dut.lq_rdata.value = queue[0]
        ar = int(dut.arvalid.value) and rng.random() < 0.7
        dut.ar_ok.value = int(ar)
        if ar:
            aa, n = int(dut.araddr.value), int(dut.arlen.value) + 1
            assert aa % B == 0 and aa // 4096 == (aa + n * B - 1) // 4096 and n <= 256, (hex(aa), n)
            bursts.append((aa, n))
        rv = bool(beats) and rng.random() < 0.8
        dut.rvalid.value = int(rv)
        if rv:
            a, last = beats[0]
            dut.rdata.value = int.from_bytes(mem[a:a + B].tobytes(), "little")
            dut.rlast.value = int(last)
        await Timer(1, unit="ns")
        for s in seen:
            seen[s] += int(getattr(dut, s).value)
        SPAN_CYCLES[0] += int(int(dut.ld_span.value) == 1 and rv)
        if int(dut.lq_rd.value):
            queue.pop(0)
        if rv and int(dut.rready.value):
            beats.pop(0)
        models[int(dut.bank.value)].apply(dut)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if ar:                                      # the burst's data from the next cycle on
            beats += [(aa + i * B, i == n - 1) for i in range(n)]
        idle_for = idle_for + 1 if (int(dut.idle.value) and not queue and not beats) else 0
        if idle_for > 3:
            return seen, bursts
    raise AssertionError("LOAD does not finish")


@cocotb.test()
async def load_matches_isa(dut):
    args = unit_args()
    P = args["pkg"]
    rng = random.Random(args["seed"])
    nrng = np.random.default_rng(args["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    await reset_with_regions(dut,
        dict(run=1, stop=0, clr=0, has_c2l=1, lq_empty=1, ar_ok=0, rvalid=0, rlast=0), BASES, DDR)
    sizes = [DDR - b for b in BASES]                                   # as reset_with_regions drove them
    cfg = dict(isa_version=isa.ISA_VERSION, tn=P["tn"], tm=P["tm"], config_id=P["config_id"])
    enc = lambda op, **f: int.from_bytes(isa.encode(isa.make(op, **f)), "little")   # noqa: E731
    n_mixed = 0
    for case in range(args["cases"]):
        mem = nrng.integers(0, 256, DDR, dtype=np.uint8)
        models = [Model(P, nrng), Model(P, nrng)]
        want = [m.copy() for m in models]
        loads = []
        for p16 in (case % 2, rng.randint(0, 1)):   # two LOADs back to back, each in its own precision
            f = random_load(rng, dict(P, ibuf_words=P["ibuf_words16" if p16 else "ibuf_words8"],
                                      wbuf_words=P["wbuf_words16" if p16 else "wbuf_words8"]), p16)
            records = f["buf"] in (BUFS["PBUF"], BUFS["TBUF"])
            f["prec"] = rng.randint(0, 1) if records else p16
            want[f["bank"]] = reference(want[f["bank"]], f, mem, f["prec"])   # (records: prec ignored)
            loads.append(f)
        n_mixed += loads[0]["prec"] != loads[1]["prec"]
        seen, bursts = await run_insns(dut, [enc("CONFIG", **cfg)] + [enc("LOAD", **f) for f in loads], mem, models,
                                       P, rng)
        assert seen == {"cfg_err_isa": 0, "cfg_err_cfg": 0, "oob": 0}, (loads, seen)
        for b in range(2):
            for name in ("ib", "wb", "pb", "tb"):
                got, ref = getattr(models[b], name), getattr(want[b], name)
                bad = np.flatnonzero(np.any((got != ref).reshape(len(got), -1), axis=1))
                assert bad.size == 0, (f"case {case} {loads}: bank {b} {name} differs at "
                                       f"{bad.size} {[(int(i), got[i].tolist(), ref[i].tolist()) for i in bad[:8]]}")
        assert bursts
    assert n_mixed >= args["cases"] // 4, f"only {n_mixed} cases mixed the precisions"
    assert SPAN_CYCLES[0] > 0, "no LOAD used row spans: the span path was not tested"
    # CONFIG mismatches and a LOAD beyond its size register
    seen, _ = await run_insns(dut, [enc("CONFIG", **dict(cfg, tm=P["tm"] * 2))], mem, models, P, rng)
    assert seen["cfg_err_cfg"] == 1 and seen["cfg_err_isa"] == 0, seen
    seen, _ = await run_insns(dut, [enc("CONFIG", **dict(cfg, isa_version=isa.ISA_VERSION + 1))], mem, models, P, rng)
    assert seen["cfg_err_isa"] == 1 and seen["cfg_err_cfg"] == 0, seen
    f = random_load(rng, dict(P, ibuf_words=P["ibuf_words8"], wbuf_words=P["wbuf_words8"]), 0)
    sizes[f["base_reg"]] = f["ddr_offset"]                             # not one byte of the transfer
    dut.ddr_sizes.value = sum(s << (32 * k) for k, s in enumerate(sizes))
    seen, bursts = await run_insns(dut, [enc("CONFIG", **cfg), enc("LOAD", **f)], mem, models, P, rng)
    assert seen["oob"] == 1 and not bursts, (seen, bursts)
    # the words of the LOAD's own precision: IBUF / WBUF word ibuf_words16 / wbuf_words16 is inside the int8 bank,
    # past the int16 one: an int8 LOAD there, then the same in int16 (refused, no burst), back to back
    dut.ddr_sizes.value = sum((DDR - b) << (32 * k) for k, b in enumerate(BASES))
    for buf, words in ((BUFS["IBUF"], P["ibuf_words16"]), (BUFS["WBUF"], P["wbuf_words16"])):
        f = dict(buf=buf, bank=0, base_reg=0, ddr_offset=64, rows=1, cols=1, elems=1, row_stride=2, pix_stride=2,
                 dst_word=words, dst_elem=0, dst_pitch=1)
        seen, bursts = await run_insns(dut, [enc("CONFIG", **cfg), enc("LOAD", **f), enc("LOAD", **f, prec=1)], mem,
                                       models, P, rng)
        assert seen["oob"] == 1 and len(bursts) == 1, (buf, seen, bursts)


@pytest.fixture(scope="module")
def load_build():
    return UnitBuild("load")


def test_load_strided_reads(load_build):
    p = package_context(load_build.board)
    tn, tm = p["tn"], p["tm"]
    wl = tn * tm
    aw = lambda d: max((d - 1).bit_length(), 1)                        # noqa: E731
    ib_d, wb_d, pb_d = -(-p["ibuf_elems"] // tn), -(-p["wbuf_elems"] // wl), -(-p["pbuf_entries"] // tm)
    pkg = dict(tn=tn, tm=tm, wl=wl, ib_d=ib_d, wb_d=wb_d, pb_d=pb_d, ib_aw=aw(ib_d), pb_aw=aw(pb_d),
               tb_d=p["tbuf_rows"], pw_aw=max(aw(pb_d), aw(p["tbuf_rows"])),
               axi_bytes=p["axi_bits"] // 8, pbuf_entries=p["pbuf_entries"],
               config_id=HwConfig.from_board(load_build.board, 8).config_id,
               ibuf_words8=p["ibuf_words8"], ibuf_words16=p["ibuf_words16"], wbuf_words8=p["wbuf_words8"],
               wbuf_words16=p["wbuf_words16"])
    load_build.run("test_load", "load_matches_isa", {"seed": 29, "cases": 24, "pkg": pkg})

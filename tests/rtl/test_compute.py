"""rtl/compute.sv with rtl/pe_array.sv (COMPUTE: the tile convolution on the PE array into the accumulators, bypass
copies, element-wise products) against the ISA's definition (generator/spec/isa.py FORMATS COMPUTE) computed here with numpy on random IBUF /
WBUF / ACC contents and random instructions (kernel sizes, strides, accumulate or initialise, int8 with two pixels
per DSP and int16, bypass, emul with zero points up to the extremes); the bench models the synchronous-read lane memories (IBUF / WBUF reads, both ACC ports
with writes in no-change mode) exactly as rtl/buffers.sv wires them. Also the cycles each instruction occupies the
module, against the latency model (generator/spec/timing.py insn_cycles) the scheduler and the golden simulator use.
Each case is two COMPUTEs back to back in the queue, each in its own precision (its prec field; mostly one int8 and
one int16, the second popped the cycle the first's pipeline has drained), on IBUF / WBUF banks holding values of
their instruction's precision, the second accumulating onto the first's ACC words when the banks meet; and the
range checks against the IBUF / WBUF words of each instruction's own precision. Double-pumped (PUMP = 2,
rtl/pe_array_2x.sv on clk2x, clk made from it): four int8 / two int16 pixels per step, IBUF copy 1 read on ports
C / D, ACC copies 0 / 1 for the even / odd tile columns: the reference reads and writes each pixel's word in the
copy of its column."""
from __future__ import annotations

import random

import cocotb
import numpy as np
import pytest
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.exec.bench_clocks import start_clocks
from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.spec.timing import insn_cycles
from generator.backends.rtl import package_context
from rtl_unit import UnitBuild, tiny_board, unit_args


def pack(vals, bits):
    out = 0
    for k, v in enumerate(vals):
        out |= (int(v) & ((1 << bits) - 1)) << (bits * k)
    return out


def unpack(v, n, bits):
    out = []
    for k in range(n):
        f = (v >> (bits * k)) & ((1 << bits) - 1)
        out.append(f - (1 << bits) if f >> (bits - 1) else f)
    return out


def reference(ib, wb, acc, f, tn, tm, acc_w, pump=1):
    """ACC bank after COMPUTE f (isa.FORMATS COMPUTE), ACC_W-bit wrap-around. ``acc``: the bank, or with ``pump``
    2 its two copies [copy][word][lane] (the word of tile column ox in copy ox % 2)."""
    if pump == 2:
        out = [a.copy() for a in acc]
        for c in range(2):
            one = reference(ib, wb, acc[c], f, tn, tm, acc_w)
            for oy in range(f["oh"]):
                for ox in range(c, f["ow"], 2):
                    w = (oy * f["ow"] + ox) * f["og"]
                    out[c][w:w + f["og"]] = one[w:w + f["og"]]
        return out
    out = acc.copy()
    oh, ow, og, ig, kh, kw, s = (f[k] for k in ("oh", "ow", "og", "ig", "kh", "kw", "stride"))
    for oy in range(oh):
        for ox in range(ow):
            for o in range(og):
                w = (oy * ow + ox) * og + o
                if f["bypass"]:
                    px = f["ibuf_word"] + ((oy * s) * f["in_cols"] + ox * s) * ig
                    flat = ib[px:px + ig].reshape(-1)
                    v = flat[o * tm:o * tm + tm].astype(object)
                    if f.get("emul"):   # (A - za) * (B - zb), B at element b_word * Tn + o * Tm
                        b0 = f["b_word"] * tn + o * tm
                        v = (v - f["za"]) * (flat[b0:b0 + tm].astype(object) - f["zb"])
                else:
                    v = np.zeros(tm, object)
                    for i in range(ig):
                        for ky in range(kh):
                            for kx in range(kw):
                                x = ib[f["ibuf_word"] + ((oy * s + ky) * f["in_cols"] + ox * s + kx) * ig + i]
                                ww = wb[f["wbuf_word"] + ((o * ig + i) * kh + ky) * kw + kx]
                                v = v + ww.astype(object) @ x.astype(object)
                base = np.zeros(tm, object) if f["acc_init"] else out[w].astype(object)
                r = base + v
                out[w] = [((int(x) + (1 << (acc_w - 1))) % (1 << acc_w)) - (1 << (acc_w - 1)) for x in r]
    return out


def span(p16):
    """[low, high) of the values of a precision (int16 if p16 else int8)."""
    return (-32768, 32768) if p16 else (-128, 128)


def random_compute(rng, P, p16):
    ibw, wbw = (P["ibuf_words16"], P["wbuf_words16"]) if p16 else (P["ibuf_words8"], P["wbuf_words8"])
    lo, hi = (-32768, 32767) if p16 else (-128, 127)
    for _ in range(1000):
        bypass = rng.random() < 0.15
        k = 1 if bypass else rng.choice([1, 1, 2, 3])
        kh = kw = k
        s = rng.choice([1, 1, 2])
        oh, ow, og = rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 2)
        ig = -(-og * P["tm"] // P["tn"]) if bypass else rng.randint(1, 2)
        emul = bypass and rng.random() < 0.5     # element-wise product: B in the words after A's (+ a spare word)
        b_word = ig + rng.randint(0, 1) if emul else 0
        ig = b_word + ig if emul else ig
        if not bypass and rng.random() < 0.3:            # K = ig*kh*kw = 3 (a cycle after each word, see compute.sv)
            ig, kh, kw = rng.choice([(3, 1, 1), (1, 3, 1), (1, 1, 3)])
        in_cols = (ow - 1) * s + kw + rng.randint(0, 2)
        rows_in = (oh - 1) * s + kh
        f = dict(acc_bank=rng.randint(0, 1), ibuf_bank=rng.randint(0, 1), wbuf_bank=rng.randint(0, 1),
                 acc_init=rng.randint(0, 1), bypass=int(bypass), oh=oh, ow=ow, og=og, ig=ig, kh=kh, kw=kw, stride=s,
                 in_cols=in_cols, ibuf_word=0, wbuf_word=0, emul=int(emul), b_word=b_word,
                 za=rng.choice([0, lo, hi, rng.randint(lo, hi)]) if emul else 0,
                 zb=rng.choice([0, lo, hi, rng.randint(lo, hi)]) if emul else 0)
        if oh * ow * og > P["acc_words"] or rows_in * in_cols * ig >= ibw or og * ig * kh * kw >= wbw:
            continue
        f["ibuf_word"] = rng.randint(0, ibw - rows_in * in_cols * ig)
        f["wbuf_word"] = 0 if bypass else rng.randint(0, wbw - og * ig * kh * kw)
        return f
    raise RuntimeError("no instruction fits")


def acc_ports(dut, names, acc, rd, cw, bank, two, wd0, wd1):
    """One cycle of an ACC copy's two ports (rtl/buffers.sv g_acc, POST not reading): ``names`` the COMPUTE's s2 /
    s3 address outputs of its ports, ``rd`` its read registers [port][bank]."""
    s2a0, s2a1, s3a0, s3a1 = (int(getattr(dut, n).value) for n in names)
    for b in range(2):
        a = acc[b]
        w_here = cw and bank == b
        a_we, a_addr = w_here and two, (s3a0 if (w_here and two) else s2a0)
        b_we, b_addr = w_here, ((s3a1 if two else s3a0) if w_here else s2a1)
        if a_we:
            a[a_addr] = wd0
        elif a_addr < len(a):
            rd[0][b] = list(a[a_addr])
        if b_we:
            a[b_addr] = wd1 if two else wd0
        elif b_addr < len(a):
            rd[1][b] = list(a[b_addr])


async def run_compute(dut, fs, mem, P, oobs=None):
    """Execute the COMPUTEs fs (field dicts, prec included) back to back from the queue on the memory model mem =
    {ib: [2][words][tn], wb: [2][words][tm][tn], acc: [2][words][tm]} (``P["pump"]`` 2: acc [copy][2][words][tm],
    IBUF copy 1 the same contents as copy 0); returns each one's cycles from its pop to
    the next pop (the last: to the module's return to idle). OUT_OF_RANGE: with a list ``oobs`` the index of the
    instruction (in fs) raising it is appended each time; else it must not be raised."""
    tn, tm, acc_w = P["tn"], P["tm"], P["acc_w"]
    queue = [int.from_bytes(isa.encode(isa.make("COMPUTE", **f)), "little") for f in fs]
    pops = []
    prev = None
    pump = P.get("pump", 1)
    rd = [[[0, 0], [0, 0]], [[0, 0], [0, 0]]]               # [copy][port][bank]
    accs = mem["acc"] if pump == 2 else [mem["acc"]]
    for cyc in range(20000):
        dut.cq_empty.value = int(not queue)
        if queue:
            dut.cq_rdata.value = queue[0]
        if prev is not None:                          # RAM outputs of last cycle's addresses (1 cycle latency)
            ia, ib_, wa, ic, id_, wbank = prev
            for port, addr in (("a", ia), ("b", ib_)) + ((("c", ic), ("d", id_)) if pump == 2 else ()):
                getattr(dut, f"ib_rd_{port}").value = pack(
                    [v for b in range(2) for v in mem["ib"][b][addr % len(mem["ib"][b])]], 16)
            banks = [wbank] if P["wb_one"] else [0, 1]          # (WB_ONE: the addressed bank's word alone)
            dut.wb_rd.value = pack([v for b in banks for v in mem["wb"][b][wa % len(mem["wb"][b])].reshape(-1)], 16)
            for c, (pa, pb) in enumerate((("a", "b"), ("c", "d"))[:pump]):
                getattr(dut, f"acc_rd_{pa}").value = pack([v for b in range(2) for v in rd[c][0][b]], acc_w)
                getattr(dut, f"acc_rd_{pb}").value = pack([v for b in range(2) for v in rd[c][1][b]], acc_w)
        await Timer(1, unit="ns")
        prev = tuple(int(getattr(dut, f"cp_{n}").value) for n in ("ib_a", "ib_b", "wb_a", "ib_c", "ib_d", "wb_bank"))
        bank = int(dut.cp_acc_bank.value)
        acc_ports(dut, ("cp_s2_aw0", "cp_s2_aw1", "cp_s3_aw0", "cp_s3_aw1"), accs[0], rd[0],
                  int(dut.cp_wr.value), bank, int(dut.cp_s3_two.value), unpack(int(dut.cp_wd0.value), tm, acc_w),
                  unpack(int(dut.cp_wd1.value), tm, acc_w))
        if pump == 2:                                 # ACC copy 1 (the odd columns)
            acc_ports(dut, ("cp_s2_aw2", "cp_s2_aw3", "cp_s3_aw2", "cp_s3_aw3"), accs[1], rd[1],
                      int(dut.cp_wr_b.value), bank, int(dut.cp_s3_two_b.value),
                      unpack(int(dut.cp_wd2.value), tm, acc_w), unpack(int(dut.cp_wd3.value), tm, acc_w))
        if int(dut.cq_rd.value):
            pops.append(cyc)
            queue.pop(0)
        idle = int(dut.idle.value)
        if int(dut.oob.value):
            assert oobs is not None, fs
            oobs.append(len(pops) - 1)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if not queue and idle and cyc > pops[-1]:
            return [b - a for a, b in zip(pops, pops[1:] + [cyc])]
    raise AssertionError("COMPUTE does not finish")


@cocotb.test()
async def compute_matches_isa(dut):
    args = unit_args()
    P = args["pkg"]
    tn, tm, acc_w = P["tn"], P["tm"], P["acc_w"]
    rng = random.Random(args["seed"])
    nrng = np.random.default_rng(args["seed"])
    pump = P.get("pump", 1)
    brd = tiny_board(pump=pump)                       # the board of the build
    await start_clocks(dut, pump)
    for s, v in dict(run=1, stop=0, clr=0, has_l2c=1, has_s2c=1, cq_empty=1, ib_rd_a=0, ib_rd_b=0, wb_rd=0,
                     acc_rd_a=0, acc_rd_b=0).items():
        getattr(dut, s).value = v
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    await Timer(1, unit="ns")
    n_alt = n_gap = n_emul = n_mixed = 0
    hw = HwConfig.from_board(brd, 8)                  # (each instruction's prec field selects its precision)
    for case in range(args["cases"]):
        precs = (case % 2, 1 - case % 2 if rng.random() < 0.75 else case % 2)
        fs = [dict(random_compute(rng, P, p16), prec=p16) for p16 in precs]
        if precs[0] != precs[1]:                      # the IBUF / WBUF banks of each hold its precision's values
            fs[1].update(ibuf_bank=1 - fs[0]["ibuf_bank"], wbuf_bank=1 - fs[0]["wbuf_bank"])
        n_mixed += precs[0] != precs[1]
        ib16 = {f["ibuf_bank"]: f["prec"] for f in fs}
        wb16 = {f["wbuf_bank"]: f["prec"] for f in fs}
        acc0 = [nrng.integers(-1000, 1000, (P["acc_words"], tm)) for _ in range(2 * pump)]
        mem = {"ib": [nrng.integers(*span(ib16.get(b, 0)), (P["ib_d"], tn)) for b in range(2)],
               "wb": [nrng.integers(*span(wb16.get(b, 0)), (P["wb_d"], tm, tn)) for b in range(2)],
               "acc": [acc0[2 * c:2 * c + 2] for c in range(2)] if pump == 2 else acc0}
        banks = (lambda m: [[m[c][b] for c in range(2)] for b in range(2)]) if pump == 2 else (lambda m: m)
        ref = [(a.copy() if pump == 1 else [x.copy() for x in a]) for a in banks(mem["acc"])]
        for f in fs:                                  # the ISA's result of the two in order
            ref[f["acc_bank"]] = reference(mem["ib"][f["ibuf_bank"]], mem["wb"][f["wbuf_bank"]], ref[f["acc_bank"]],
                                           f, tn, tm, acc_w, pump)
        cycles = await run_compute(dut, fs, mem, P)
        got = banks(mem["acc"])
        for b in range(2):
            for c in range(pump):
                g, r = (got[b], ref[b]) if pump == 1 else (got[b][c], ref[b][c])
                bad = np.flatnonzero(np.any(np.asarray(g, object) != np.asarray(r, object), axis=1))
                assert bad.size == 0, f"case {case} {fs}: ACC bank {b} copy {c} words {bad[:6]} differ"
        for f, cyc in zip(fs, cycles):
            model = insn_cycles(hw, isa.make("COMPUTE", **f))
            # (int8 accumulation with K = 1 issues a step every other cycle, with K = 3 leaves a cycle after each
            # word; the model also charges that cycle after the last word, which the RTL does not wait for: one
            # cycle over)
            rmw = not f["prec"] and not f["bypass"] and not f["acc_init"]
            kk = f["ig"] * f["kh"] * f["kw"]
            alt, gap = rmw and kk == 1, rmw and kk == 3
            assert cyc == model - int(alt or gap), (f, cyc, model)
            n_alt += alt
            n_gap += gap
            n_emul += f["emul"]
    n = 2 * args["cases"]
    assert n_alt and n_gap and n_emul and n - n_alt - n_gap > 10    # every timing rule was exercised
    assert n_mixed >= args["cases"] // 2, f"only {n_mixed} pairs mixed the precisions"
    # range checks against the words of the instruction's own precision: one IBUF / WBUF word past the int16 bank
    # (inside the int8 one) is OUT_OF_RANGE for the int16 COMPUTE only, back to back with an int8 one either side
    one = dict(oh=1, ow=1, og=1, ig=1, kh=1, kw=1, stride=1, in_cols=1, acc_init=1)
    for f in (dict(one, ibuf_word=P["ibuf_words16"]), dict(one, wbuf_word=P["wbuf_words16"])):
        oobs = []
        await run_compute(dut, [dict(f, prec=0), dict(f, prec=1), dict(f, prec=0)], mem, P, oobs)
        assert oobs == [1], (f, oobs)


@pytest.fixture(scope="module")
def compute_build():
    return UnitBuild("compute")


def pkg_args(build, pump=1):
    p = package_context(build.board)
    tn, tm = p["tn"], p["tm"]
    return dict(tn=tn, tm=tm, acc_w=p["acc_w"], acc_words=p["acc_words"], ib_d=-(-p["ibuf_elems"] // tn),
                wb_d=-(-p["wbuf_elems"] // (tn * tm)), ibuf_words8=p["ibuf_words8"], ibuf_words16=p["ibuf_words16"],
                wbuf_words8=p["wbuf_words8"], wbuf_words16=p["wbuf_words16"], pump=pump, wb_one=p["wb_one"])


def test_compute_conv(compute_build):
    compute_build.run("test_compute", "compute_matches_isa", {"seed": 31, "cases": 30, "pkg": pkg_args(compute_build)})


def test_compute_conv_double_pumped():
    """PUMP = 2 (rtl/pe_array_2x.sv on clk2x): the same random cases, four int8 / two int16 pixels per step; WBUF
    banks of 48 words here (a memory per bank: COMPUTE selects the bank's word after the read; the single-rate
    build's 72-word banks share one memory, the bank in the read address)."""
    b = tiny_board(pump=2, wbuf_bank_bytes=48 * 8 * 8)
    build = UnitBuild("compute", b, name="compute_pump2")
    assert package_context(b)["wb_one"] == 0 and package_context(tiny_board())["wb_one"] == 1
    build.run("test_compute", "compute_matches_isa", {"seed": 32, "cases": 30, "pkg": pkg_args(build, 2)})

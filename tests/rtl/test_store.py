"""rtl/store.sv (STORE: OBUF -> DDR through seg_gen, the descriptor FIFO, the OBUF read stage and the W FIFO)
against the ISA's definition of STORE (generator/spec/isa.py: DDR[base + ddr_offset + r*row_stride + c*pix_stride +
e*elem_bytes] = OBUF element (r*cols + c)*src_pitch*Tm + e), computed here with numpy on random OBUF contents and
random strided transfers (contiguous rows / pixels / whole transfers, 4 KB crossings, int8 and int16); the DDR is
cocotbext-axi's AxiRamWrite (its own AXI4 checks), pre-filled with random bytes so that any byte written outside the
transfer shows. Each case runs two STOREs back to back from the queue, each in its own precision (its prec field;
mostly an int16 and an int8 one, in either order). Also the OUT_OF_RANGE checks (a size register too small; OBUF
elements beyond the words of the STORE's own precision: refused, nothing written)."""
from __future__ import annotations

import logging
import random

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from generator.backends.rtl import package_context
from rtl_unit import UnitBuild, reset_with_regions, unit_args

DDR = 1 << 20
BASES = [0x10000, 0x40000, 0x80000, 0xC0000]


def random_store(rng, tm, obuf_elems, eb):
    pitch = rng.randint(1, 3)
    elems = rng.choice([pitch * tm, rng.randint(1, pitch * tm)])
    run = elems * eb
    rows, cols = rng.randint(1, 4), rng.randint(1, 6)
    while (rows * cols - 1) * pitch * tm + elems > obuf_elems:
        rows, cols = max(rows - 1, 1), max(cols - 1, 1)
    pix = rng.choice([run, run, run + rng.randint(1, 40)])
    row = rng.choice([cols * pix, cols * pix + rng.randint(1, 3000)])
    return dict(base_reg=rng.randint(0, 3), ddr_offset=rng.randint(0, 5000), rows=rows, cols=cols, elems=elems,
                row_stride=row, pix_stride=pix, src_pitch=pitch)


def reference(mem, f, obuf, tm, eb):
    """DDR after STORE f (isa.LAYOUTS STORE comment), little-endian elements of eb bytes."""
    out = mem.copy()
    for r in range(f["rows"]):
        for c in range(f["cols"]):
            for e in range(f["elems"]):
                v = int(obuf[(r * f["cols"] + c) * f["src_pitch"] * tm + e]) & 0xFFFF
                a = BASES[f["base_reg"]] + f["ddr_offset"] + r * f["row_stride"] + c * f["pix_stride"] + e * eb
                out[a] = v & 0xFF
                if eb == 2:
                    out[a + 1] = v >> 8
    return out


async def _run_store(dut, fs, obuf, P):
    """STOREs ``fs`` (field dicts, prec included) back to back from the queue on OBUF ``obuf``; returns whether
    OUT_OF_RANGE was raised, once the last one retired."""
    ol, ob_aw = P["ol"], P["ob_aw"]
    queue = [int.from_bytes(isa.encode(isa.make("STORE", **f)), "little") for f in fs]
    rows, oob_seen, retired = None, False, 0
    for cyc in range(40000):
        dut.sq_empty.value = int(not queue)
        if queue:
            dut.sq_rdata.value = queue[0]
        if rows is not None:                        # OBUF read data of last cycle's rows (port B, 1 cycle)
            dut.ob_rd.value = sum((int(obuf[((rows >> (ob_aw * l)) & ((1 << ob_aw) - 1)) * ol + l]) & 0xFFFF)
                                  << (16 * l) for l in range(ol))
        await Timer(1, unit="ns")
        rows = int(dut.obr_row.value)
        took = int(dut.sq_rd.value)
        retire = int(dut.retire.value)
        oob = int(dut.oob.value)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if took:
            queue.pop(0)
        oob_seen = oob_seen or bool(oob)
        retired += retire
        if retired == len(fs):
            return oob_seen
    raise AssertionError("STORE does not finish")


async def _start(dut):
    """The bench: (args, package parameters, random generators, the AxiRamWrite DDR), the unit reset with every
    input idle."""
    from cocotbext.axi import AxiRamWrite, AxiWriteBus
    args = unit_args()
    Clock(dut.clk, 10, unit="ns").start()
    ram = AxiRamWrite(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst_n, reset_active_level=False, size=DDR)
    logging.getLogger(f"cocotb.{dut._name}.m_axi").setLevel(logging.WARNING)
    await reset_with_regions(dut, dict(run=1, stop=0, clr=0, has_c2s=1, post_done=0, post_words=0, post_oob=0,
                                       sq_empty=1, ob_rd=0), BASES, DDR)
    return args, args["pkg"], random.Random(args["seed"]), np.random.default_rng(args["seed"]), ram


@cocotb.test()
async def store_matches_isa(dut):
    args, P, rng, nrng, ram = await _start(dut)
    tm = P["tm"]
    sizes = [DDR - b for b in BASES]                                   # as reset_with_regions drove them
    n_mixed = 0
    for case in range(args["cases"]):
        precs = (case % 2, 1 - case % 2 if rng.random() < 0.75 else case % 2)
        n_mixed += precs[0] != precs[1]
        obuf = nrng.integers(-32768, 32768, P["ob_d"] * P["ol"])      # (int8 STOREs write each element's low byte)
        mem = nrng.integers(0, 256, DDR, dtype=np.uint8)
        ram.write(0, mem.tobytes())
        fs = [dict(random_store(rng, tm, P["obuf_words16" if p16 else "obuf_words8"] * tm, 1 + p16), prec=p16)
              for p16 in precs]
        oob = await _run_store(dut, fs, obuf, P)
        await ClockCycles(dut.clk, 2)
        got = np.frombuffer(ram.read(0, DDR), np.uint8)
        want = mem
        for f in fs:                                  # the ISA's result of the two in order
            want = reference(want, f, obuf, tm, 1 + f["prec"])
        bad = np.flatnonzero(got != want)
        assert not oob and bad.size == 0, (f"case {case} {fs}: {bad.size} bytes differ, first "
                                           f"{[(int(a), int(got[a]), int(want[a]), int(mem[a])) for a in bad[:6]]}")
    assert n_mixed >= args["cases"] // 2, f"only {n_mixed} pairs mixed the precisions"
    # OUT_OF_RANGE: the base register's size ends one byte before the transfer's last byte
    f = random_store(rng, tm, P["obuf_words8"] * tm, 1)
    last = f["ddr_offset"] + (f["rows"] - 1) * f["row_stride"] + (f["cols"] - 1) * f["pix_stride"] + f["elems"]
    sizes[f["base_reg"]] = last - 1
    dut.ddr_sizes.value = sum(s << (32 * k) for k, s in enumerate(sizes))
    mem = nrng.integers(0, 256, DDR, dtype=np.uint8)
    ram.write(0, mem.tobytes())
    oob = await _run_store(dut, [f], obuf, P)
    await ClockCycles(dut.clk, 2)
    assert oob and np.array_equal(np.frombuffer(ram.read(0, DDR), np.uint8), mem), "refused STORE wrote DDR"
    # OBUF elements of the STORE's own precision: 150 pixels of Tm elements fit the int8 OBUF, not the int16 one;
    # an int8 STORE then the same one in int16 (elsewhere in DDR), back to back: the second refused, unwritten
    dut.ddr_sizes.value = sum((DDR - b) << (32 * k) for k, b in enumerate(BASES))
    f = dict(base_reg=0, ddr_offset=64, rows=1, cols=150, elems=tm, row_stride=150 * tm, pix_stride=tm, src_pitch=1)
    assert P["obuf_words16"] < 150 <= P["obuf_words8"], P
    f16 = dict(f, ddr_offset=f["ddr_offset"] + 300 * tm, row_stride=300 * tm, pix_stride=2 * tm, prec=1)
    oob = await _run_store(dut, [dict(f, prec=0), f16], obuf, P)
    await ClockCycles(dut.clk, 2)
    bad = np.flatnonzero(np.frombuffer(ram.read(0, DDR), np.uint8) != reference(mem, f, obuf, tm, 1))
    assert oob and bad.size == 0, (oob, bad[:8])


async def _run_post_then_store(dut, f, p16, old, new, P, rate, fill):
    """A POST (played here: after ``fill`` cycles one OBUF word every ``rate`` cycles, OBUF rows switching from
    ``old`` to ``new`` contents as their words are written, ``post_words`` counting them) then STORE ``f``,
    dispatched back to back. Returns (cycle of the POST's end, cycle of the STORE's retirement, token pushes: the
    cycles push_s2c was high)."""
    ol, ob_aw, tm = P["ol"], P["ob_aw"], P["tm"]
    words = (f["rows"] * f["cols"] - 1) * f["src_pitch"] + -(-f["elems"] // tm)
    queue = [isa.make("POST", push_prev=1, prec=p16), isa.make("STORE", **f, prec=p16)]
    dut.sq_rdata.value = int.from_bytes(isa.encode(queue[0]), "little")
    dut.sq_empty.value = 0
    rows, start, written, post_end, pushes = None, None, 0, None, []
    for cyc in range(40000):
        if rows is not None:   # element e = row * OL + l is new once its word e // Tm is written
            dut.ob_rd.value = sum((int((new if (r * ol + l) // tm < written else old)[r * ol + l]) & 0xFFFF)
                                  << (16 * l) for l in range(ol) for r in [(rows >> (ob_aw * l)) & ((1 << ob_aw) - 1)])
        if start is not None and post_end is None and cyc - start > fill and (cyc - start) % rate == 0:
            written += 1
        done = start is not None and post_end is None and written > words + 2
        dut.post_words.value = written
        dut.post_done.value = int(done)
        await Timer(1, unit="ns")
        rows = int(dut.obr_row.value)
        took, retire, push = int(dut.sq_rd.value), int(dut.retire.value), int(dut.push_s2c.value)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if push:
            pushes.append(cyc)
        if done:
            post_end = cyc
            assert retire, "the POST retires at its end"
        elif retire:
            return post_end, cyc, pushes
        if took:
            if start is None:
                start = cyc
            queue.pop(0)
            if queue:
                dut.sq_rdata.value = int.from_bytes(isa.encode(queue[0]), "little")
            else:
                dut.sq_empty.value = 1
    raise AssertionError("POST + STORE do not finish")


@cocotb.test()
async def store_overlaps_post(dut):
    """A STORE dispatched while the POST before it writes OBUF reads only the words the POST has written: DDR as the
    ISA defines with the POST's data (a read ahead of the POST shows as old OBUF data); the POST's token push at its
    end, the STORE retiring after it."""
    args, P, rng, nrng, ram = await _start(dut)
    tm = P["tm"]
    for case in range(args["cases"]):
        p16 = case % 2
        eb = 2 if p16 else 1
        words = P["obuf_words16"] if p16 else P["obuf_words8"]
        lo, hi = (-32768, 32767) if p16 else (-128, 127)
        old, new = (nrng.integers(lo, hi + 1, P["ob_d"] * P["ol"]) for _ in range(2))
        mem = nrng.integers(0, 256, DDR, dtype=np.uint8)
        ram.write(0, mem.tobytes())
        f = random_store(rng, tm, words * tm, eb)
        rate, fill = rng.choice([1, 1, 2, 4]), rng.randint(3, 60)
        post_end, store_end, pushes = await _run_post_then_store(dut, f, p16, old, new, P, rate, fill)
        await ClockCycles(dut.clk, 2)
        got = np.frombuffer(ram.read(0, DDR), np.uint8)
        bad = np.flatnonzero(got != reference(mem, f, new, tm, eb))
        assert bad.size == 0, (f"case {case} {f} int{8 * eb} rate {rate}: {bad.size} bytes differ, first "
                               f"{[(int(a), int(got[a]), int(mem[a])) for a in bad[:6]]}")
        assert pushes == [post_end] and store_end > post_end, (pushes, post_end, store_end)


@pytest.fixture(scope="module")
def store_build():
    return UnitBuild("store")


def _pkg(build) -> dict:
    """The package parameters the bench needs (Tm, OBUF lanes, rows, row address bits, words per precision)."""
    p = package_context(build.board)
    ol = max(p["tm"], p["axi_bits"] // 8)
    ob_d = -(-p["obuf_elems"] // ol)
    return {"tm": p["tm"], "ol": ol, "ob_d": ob_d, "ob_aw": max((ob_d - 1).bit_length(), 1),
            "obuf_words8": p["obuf_words8"], "obuf_words16": p["obuf_words16"]}


def test_store_strided_writes(store_build):
    pkg = _pkg(store_build)
    store_build.run("test_store", "store_matches_isa", {"seed": 23, "cases": 16, "pkg": pkg})


def test_store_overlapping_post(store_build):
    pkg = _pkg(store_build)
    store_build.run("test_store", "store_overlaps_post", {"seed": 29, "cases": 24, "pkg": pkg})

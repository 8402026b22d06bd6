"""rtl/fetch_dispatch.sv with a Python model of the DDR read channel (random address-accept and beat delays)
against the ISA (generator/spec/isa.py): the instructions of a program reach the LOAD / COMPUTE / STORE module queues of
isa.MODULE_OF in program order (queues popped at random), nothing after END; every fetch burst is at most
FETCH_BURST instructions at consecutive addresses and never crosses a 4 KB boundary; the errors found here:
ILLEGAL_OPCODE (unknown opcode, bits above the format, a token flag towards a missing neighbour), CONFIG_MISSING,
NO_END (program without END)."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from generator.spec.arch import RTL_QUEUES
from rtl_unit import UnitBuild, unit_args

QUEUES = {"load": "lq", "compute": "cq", "store": "sq"}


def insn(op, **f) -> int:
    return int.from_bytes(isa.encode(isa.make(op, **f)), "little")


def random_program(rng, n):
    prog = [insn("CONFIG", tn=8, tm=8)]
    for _ in range(n):
        op = rng.choice(["LOAD", "COMPUTE", "POST", "STORE", "NOP", "SYNC"])
        f = {}
        if op == "LOAD":
            f = dict(rows=rng.randint(1, 9), cols=rng.randint(1, 9), elems=rng.randint(1, 99))
        if op in ("COMPUTE", "NOP", "SYNC"):
            f = dict(pop_prev=rng.randint(0, 1), push_next=rng.randint(0, 1))
        prog.append(insn(op, **f))
    return prog + [insn("END")]


async def run_program(dut, words, base, n_insns, axi_bytes, rng, stop_on_error=True):
    """Run a fetch of n_insns instructions at DDR address base (memory: words). Returns (per-queue popped
    instructions, bursts [(address, beats)], error pulses {name: count})."""
    mem = {}
    for k, w in enumerate(words):
        for b in range(isa.INSN_BYTES):
            mem[base + k * isa.INSN_BYTES + b] = w >> (8 * b) & 0xFF
    dut.insns_addr.value = base
    dut.n_insns.value = n_insns
    dut.fetch_ddr.value = 1
    dut.stop.value = 0
    dut.clr.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    dut.clr.value = 0
    dut.run.value = 1
    popped = {q: [] for q in QUEUES.values()}
    bursts, errors = [], {"illegal": 0, "cfg_missing": 0, "no_end": 0}
    beats, idle_for = [], 0
    for cyc in range(20000):
        # AR: accept an address with a random delay
        ar = int(dut.fe_arvalid.value) and rng.random() < 0.5
        dut.fe_ar_ok.value = int(ar)
        if ar:
            a, n = int(dut.fe_araddr.value), int(dut.fe_arlen.value) + 1
            bursts.append((a, n))
            beats += [(a + i * axi_bytes, i == n - 1) for i in range(n)]
        # R: the next beat with random gaps; consumed when rready
        rv = bool(beats) and not ar and rng.random() < 0.7
        if rv:
            a, last = beats[0]
            dut.rdata.value = sum(mem.get(a + i, 0) << (8 * i) for i in range(axi_bytes))
            dut.rlast.value = int(last)
        dut.fe_rvalid.value = int(rv)
        for q in QUEUES.values():
            go = not int(getattr(dut, f"{q}_empty").value) and rng.random() < 0.4
            getattr(dut, f"{q}_rd").value = int(go)
            if go:
                popped[q].append(int(getattr(dut, f"{q}_rdata").value))
        await Timer(1, unit="ns")
        err = False
        for e in errors:
            if int(getattr(dut, e).value):
                errors[e] += 1
                err = True
        if rv and int(dut.fe_rready.value):
            beats.pop(0)
        busy = not int(dut.fe_idle.value) or beats or not int(dut.queues_empty.value)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        if err and stop_on_error:
            dut.stop.value = 1                       # as the status unit does after an error
        idle_for = 0 if busy or int(dut.insn_moved.value) else idle_for + 1
        if idle_for > 20:
            break
    dut.run.value = 0
    dut.fe_ar_ok.value = 0
    dut.fe_rvalid.value = 0
    for q in QUEUES.values():
        getattr(dut, f"{q}_rd").value = 0
    return popped, bursts, errors


def split(words):
    """Expected queue contents: the program up to END, by module."""
    out = {q: [] for q in QUEUES.values()}
    for w in words:
        op = isa.OPCODE_NAMES[w & 0xF]
        out[QUEUES[isa.MODULE_OF[op]]].append(w)
        if op == "END":
            break
    return out


@cocotb.test()
async def dispatch_in_order(dut):
    args = unit_args()
    rng = random.Random(args["seed"])
    axi_bytes, burst = args["axi_bytes"], args["fetch_burst"]
    Clock(dut.clk, 10, unit="ns").start()
    for s in ("run", "stop", "clr", "fe_ar_ok", "fe_rvalid", "rlast", "lq_rd", "cq_rd", "sq_rd"):
        getattr(dut, s).value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    for case in range(args["cases"]):
        words = random_program(rng, rng.randint(3, 40))
        junk = [insn("LOAD", rows=1, cols=1, elems=1)] * 3       # after END: never dispatched
        base = rng.choice([0x1000 - 3 * isa.INSN_BYTES, 0x2000 - isa.INSN_BYTES, 0x40000])
        popped, bursts, errors = await run_program(dut, words + junk, base, len(words) + len(junk), axi_bytes, rng)
        assert popped == split(words), f"case {case}: dispatched instructions differ"
        assert errors == {"illegal": 0, "cfg_missing": 0, "no_end": 0}, errors
        nxt = base
        for a, n in bursts:
            assert a == nxt and n % (isa.INSN_BYTES // axi_bytes) == 0
            k = n * axi_bytes // isa.INSN_BYTES
            assert 1 <= k <= burst and a // 4096 == (a + n * axi_bytes - 1) // 4096, (hex(a), n)
            nxt += k * isa.INSN_BYTES
        assert nxt - base <= (len(words) + burst) * isa.INSN_BYTES       # stops fetching soon after END


@cocotb.test()
async def errors_at_dispatch(dut):
    args = unit_args()
    rng = random.Random(args["seed"] + 1)
    axi_bytes = args["axi_bytes"]
    Clock(dut.clk, 10, unit="ns").start()
    for s in ("run", "stop", "clr", "fe_ar_ok", "fe_rvalid", "rlast", "lq_rd", "cq_rd", "sq_rd"):
        getattr(dut, s).value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    good = random_program(rng, 6)
    bad_words = {
        "opcode": (good[3] & ~0xF) | len(isa.OPCODES),                # unknown opcode
        "unused bits": good[3] | 1 << (isa.INSN_BITS - 1),          # bits above the format
        "load pop_prev": insn("LOAD", rows=1, cols=1, elems=1) | 1 << 4,   # LOAD module has no prev neighbour
        "store push_next": insn("STORE", rows=1, cols=1, elems=1) | 1 << 7,  # STORE module has no next
    }
    for name, bad in bad_words.items():
        words = good[:3] + [bad] + good[3:]
        popped, _, errors = await run_program(dut, words, 0x3000, len(words), axi_bytes, rng)
        assert errors["illegal"] == 1 and errors["cfg_missing"] == 0, (name, errors)
        assert popped == split(good[:3]), name                       # stops at the bad one
    words = good[1:]                                                  # no CONFIG first
    popped, _, errors = await run_program(dut, words, 0x3000, len(words), axi_bytes, rng)
    assert errors["cfg_missing"] == 1 and sum(map(len, popped.values())) == 0, errors
    words = good[:-1]                                                 # no END
    popped, _, errors = await run_program(dut, words, 0x3000, len(words), axi_bytes, rng)
    assert errors["no_end"] >= 1 and errors["illegal"] == 0, errors
    assert popped == split(words)


@pytest.fixture(scope="module")
def fetch_build():
    return UnitBuild("fetch_dispatch")


def _args(b):
    return {"seed": 13, "cases": 6, "axi_bytes": b.board.accelerator.axi_data_width_bits // 8,
            "fetch_burst": RTL_QUEUES["FETCH_BURST"]}


def test_fetch_dispatch_order(fetch_build):
    fetch_build.run("test_fetch", "dispatch_in_order", _args(fetch_build))


def test_fetch_dispatch_errors(fetch_build):
    fetch_build.run("test_fetch", "errors_at_dispatch", _args(fetch_build))

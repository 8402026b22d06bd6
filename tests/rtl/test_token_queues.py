"""rtl/token_queues.sv against a Python model of the ISA's dependency-token FIFOs (generator/spec/isa.py
TOKEN_QUEUE_DEPTH tokens each): random pushes and pops on the four FIFOs, the counts, the non-empty flags, the
any flag and the overflow flag (a push onto a full FIFO that is not popped in the same cycle: count kept, raised
the next cycle) compared cycle by cycle; each FIFO is driven to full and over it; `clr` empties them."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from generator.spec import isa
from rtl_unit import UnitBuild, unit_args

FIFOS = ["l2c", "c2l", "c2s", "s2c"]


@cocotb.test()
async def tokens_match_model(dut):
    args = unit_args()
    rng = random.Random(args["seed"])
    depth = args["depth"]
    Clock(dut.clk, 10, unit="ns").start()
    for f in FIFOS:
        getattr(dut, f"push_{f}").value = 0
        getattr(dut, f"pop_{f}").value = 0
    dut.clr.value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    model = dict.fromkeys(FIFOS, 0)
    overflows = 0
    prev_ovf = False                                      # (overflow is registered: last cycle's push onto a full FIFO)
    # phases: random traffic; fill one FIFO past full (pushes only, pops as the units do: only when non-empty)
    phases = [("random", 400)] + [(f"fill_{f}", depth + 3) for f in FIFOS] + [("random", 400), ("clr", 1)]
    for phase, n in phases:
        for _ in range(n):
            if phase == "clr":
                dut.clr.value = 1
                push = dict.fromkeys(FIFOS, 0)
                pop = dict.fromkeys(FIFOS, 0)
            else:
                target = phase[5:] if phase.startswith("fill_") else None
                push = {f: int(f == target or (target is None and rng.random() < 0.5)) for f in FIFOS}
                pop = {f: int(target is None and model[f] > 0 and rng.random() < 0.45) for f in FIFOS}
            for f in FIFOS:
                getattr(dut, f"push_{f}").value = push[f]
                getattr(dut, f"pop_{f}").value = pop[f]
            await Timer(1, unit="ns")                     # combinational flags of this cycle
            ovf = {f: push[f] and not pop[f] and model[f] == depth for f in FIFOS}
            assert int(dut.overflow.value) == int(prev_ovf), (phase, model, push, pop)
            assert int(dut.any.value) == int(any(model.values()))
            for f in FIFOS:
                assert int(getattr(dut, f"cnt_{f}").value) == model[f], (phase, f)
                assert int(getattr(dut, f"has_{f}").value) == int(model[f] > 0), (phase, f)
            overflows += any(ovf.values())
            prev_ovf = any(ovf.values()) and phase != "clr"
            await RisingEdge(dut.clk)
            await Timer(1, unit="ns")
            for f in FIFOS:
                if phase == "clr":
                    model[f] = 0
                elif not ovf[f]:
                    model[f] += push[f] - pop[f]
            dut.clr.value = 0
    assert overflows >= 4 * 3 and all(v == 0 for v in model.values())
    for f in FIFOS:
        assert int(getattr(dut, f"cnt_{f}").value) == 0


@pytest.fixture(scope="module")
def tok_build():
    return UnitBuild("token_queues")


def test_token_queues(tok_build):
    tok_build.run("test_token_queues", "tokens_match_model", {"seed": 5, "depth": isa.TOKEN_QUEUE_DEPTH})

"""rtl/axi_rd_arb.sv (the AXI4 read channel shared by fetch and LOAD) against a Python model of the bus: two
requesters issuing random bursts (fetch at most one in flight, LOAD up to LD_OUTST), random ARREADY, RVALID and
per-requester RREADY; checked every cycle: the address on AR is the selected requester's and stays put until
accepted (AXI4 stability), fetch wins when both ask and nothing is held, each requester's accept pulse, every R beat
routed to the owner of the oldest outstanding burst (in order, one ID) with RREADY from that owner, `busy` while a
burst is outstanding."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from rtl_unit import UnitBuild, unit_args


@cocotb.test()
async def routing_matches_model(dut):
    args = unit_args()
    rng = random.Random(args["seed"])
    outst_max = args["ld_outst"]
    Clock(dut.clk, 10, unit="ns").start()
    for s in ("fe_arvalid", "ld_arvalid", "fe_rready", "ld_rready", "m_axi_arready", "m_axi_rvalid", "m_axi_rlast"):
        getattr(dut, s).value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    req = {"fe": None, "ld": None}          # the address each requester presents (held until accepted)
    inflight = {"fe": 0, "ld": 0}
    bursts = []                             # outstanding bursts in order: [owner, beats left]
    held = None                             # (owner, addr, len) on the bus last cycle, not accepted
    served = {"fe": 0, "ld": 0}
    for cyc in range(args["cycles"]):
        for who, lim in (("fe", 1), ("ld", outst_max)):
            if req[who] is None and inflight[who] < lim and rng.random() < 0.4:
                req[who] = (rng.getrandbits(38) << 2, rng.randint(0, 7))
            getattr(dut, f"{who}_arvalid").value = int(req[who] is not None)
            if req[who] is not None:
                getattr(dut, f"{who}_araddr").value = req[who][0]
                getattr(dut, f"{who}_arlen").value = req[who][1]
            getattr(dut, f"{who}_rready").value = int(rng.random() < 0.7)
        arready = rng.random() < 0.6
        dut.m_axi_arready.value = int(arready)
        rvalid = bool(bursts) and rng.random() < 0.7
        dut.m_axi_rvalid.value = int(rvalid)
        dut.m_axi_rlast.value = int(rvalid and bursts[0][1] == 1)
        await Timer(1, unit="ns")
        # expected selection: a held address keeps its owner, else fetch first
        if held is not None:
            sel = held[0]
        else:
            sel = "fe" if req["fe"] is not None else ("ld" if req["ld"] is not None else None)
        av = int(dut.m_axi_arvalid.value)
        assert av == int(sel is not None), cyc
        if sel is not None:
            assert (int(dut.m_axi_araddr.value), int(dut.m_axi_arlen.value)) == req[sel], cyc
            if held is not None:
                assert held[1:] == req[sel], "AR changed before it was accepted"
        for who in ("fe", "ld"):
            assert int(getattr(dut, f"{who}_ar_ok").value) == int(sel == who and arready), (cyc, who)
        assert int(dut.busy.value) == int(bool(bursts)), cyc
        owner = bursts[0][0] if bursts else None
        for who in ("fe", "ld"):
            assert int(getattr(dut, f"{who}_rvalid").value) == int(rvalid and owner == who), (cyc, who)
        rready = int(dut.m_axi_rready.value)
        if bursts:
            assert rready == int(getattr(dut, f"{owner}_rready").value), cyc
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        # the model's state after the edge
        if rvalid and rready:
            served[owner] += 1
            bursts[0][1] -= 1
            if bursts[0][1] == 0:
                inflight[owner] -= 1
                bursts.pop(0)
        if sel is not None and arready:
            bursts.append([sel, req[sel][1] + 1])
            inflight[sel] += 1
            req[sel] = None
            held = None
        elif sel is not None:
            held = (sel,) + req[sel]
    assert served["fe"] >= 10 and served["ld"] >= 100, served


@pytest.fixture(scope="module")
def arb_build():
    return UnitBuild("axi_rd_arb")


def test_axi_rd_arb(arb_build):
    from generator.spec.timing import MAX_READ_BURSTS
    arb_build.run("test_axi_rd_arb", "routing_matches_model", {"seed": 17, "cycles": 1500, "ld_outst": MAX_READ_BURSTS})

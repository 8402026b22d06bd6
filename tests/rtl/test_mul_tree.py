"""rtl/mul_tree.sv (the LUT multiplier of the setup arithmetic) against Python's integer product: a new operand
pair every clock, random and extreme operands (products just under and over 2^PW), ``p`` = a * b mod 2^PW after
the module's latency and ``ovf`` = (a * b >= 2^PW) one clock later, for widths where the product is cut (the
LOAD's 32-bit bounds checks, the activation table's 24-bit product) and where it always fits."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from helpers import tiered
from rtl_unit import UnitBuild, unit_args

#: (AW, BW, PW) as instantiated in rtl/load.sv (u_tot), rtl/act_table.sv and rtl/compute.sv, then every stage
#: shape of the tree: log2(BW) = 5 (stages of four, four, two operands), 4 (four, four), 2, 1 and 0
WIDTHS = [(32, 8, 32), (24, 8, 24), (12, 8, 20), (32, 20, 32), (16, 16, 32), (20, 3, 22), (10, 2, 12), (9, 1, 8)]


def _operands(rng: random.Random, aw: int, bw: int, pw: int, n: int) -> list[tuple[int, int]]:
    ops = [((1 << aw) - 1, (1 << bw) - 1), (0, (1 << bw) - 1), ((1 << aw) - 1, 0), (1, 1)]
    for _ in range(n):
        b = rng.randrange(1, 1 << bw)
        edge = (1 << pw) // b                                     # a * b around 2^PW
        a = min((1 << aw) - 1, max(0, edge + rng.randint(-1, 1))) if rng.random() < 0.4 else rng.randrange(1 << aw)
        ops.append((a, b))
    return ops


@cocotb.test()
async def products_match(dut):
    args = unit_args()
    aw, bw, pw = args["aw"], args["bw"], args["pw"]
    lat = max(1, -(-max(bw - 1, 0).bit_length() // 2))            # ceil(clog2(BW) / 2)
    rng = random.Random(args["seed"])
    ops = _operands(rng, aw, bw, pw, 600)
    Clock(dut.clk, 10, unit="ns").start()
    seen_ovf = 0
    for t in range(len(ops) + lat + 2):
        if t < len(ops):
            dut.a.value, dut.b.value = ops[t]
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        i = t + 1 - lat                                           # the pair whose product is at p now
        if 0 <= i < len(ops):
            a, b = ops[i]
            assert int(dut.p.value) == (a * b) % (1 << pw), (aw, bw, pw, a, b)
        j = i - 1                                                 # the pair whose overflow is at ovf now
        if 0 <= j < len(ops):
            a, b = ops[j]
            assert int(dut.ovf.value) == int(a * b >= 1 << pw), (aw, bw, pw, a, b)
            seen_ovf += a * b >= 1 << pw
    assert seen_ovf > 0 or aw + bw <= pw


@pytest.mark.parametrize("aw,bw,pw", tiered(WIDTHS, [(24, 8, 24), (32, 20, 32)]))   # (the others: --slow)
def test_mul_tree(aw, bw, pw):
    u = UnitBuild("mul_tree", name=f"mul_tree_{aw}_{bw}_{pw}", parameters={"AW": aw, "BW": bw, "PW": pw})
    u.run("test_mul_tree", "products_match", {"seed": aw * bw + pw, "aw": aw, "bw": bw, "pw": pw})

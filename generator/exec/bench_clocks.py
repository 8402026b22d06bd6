"""Clock drivers of the cocotb benches (generator/exec/rtl_bench.py, tests/rtl/): the logic clock alone, or a
double-pumped design's clk2x with clk made from it."""
from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge


async def start_clocks(dut, pump: int) -> None:
    """The logic clock ``clk`` (10 ns); with ``pump`` 2 (the double-pumped PE array) ``clk2x`` at 5 ns and ``clk``
    toggled at each of its rising edges, after the ``clk2x`` registers have sampled, so a shared edge is ordered as
    between two clocks of one MMCM (a ``clk2x`` register takes the ``clk`` registers' values of before the edge)."""
    if pump == 1:
        Clock(dut.clk, 10, unit="ns").start()
        return
    dut.clk.value = 0
    Clock(dut.clk2x, 5, unit="ns").start()

    async def toggle():
        v = 0
        while True:
            await RisingEdge(dut.clk2x)
            v ^= 1
            dut.clk.value = v
    cocotb.start_soon(toggle())

"""rtl/seg_gen.sv (the segment / burst address generator shared by LOAD and STORE) against a Python enumeration of
the same strided 2-D transfer: segments (whole transfer, one per row, one per pixel run), each cut into AXI4 INCR
bursts at beat-aligned addresses that never cross a 4 KB boundary nor exceed 256 beats; the bursts' addresses,
lengths, first / last flags, segment bounds and on-chip indices, and the cycle behaviour (one address per cycle when
the bus accepts every address: bursts + one cycle per transfer), with a random AR/AW-ready pattern too."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from generator.spec.arch import AXI_BOUNDARY_BYTES, AXI_MAX_BURST_BEATS
from rtl_unit import UnitBuild, tiny_board, unit_args

AXI_BOUNDARY, MAX_BEATS = AXI_BOUNDARY_BYTES, AXI_MAX_BURST_BEATS      # AXI4 (ARM IHI0022)


def reference_bursts(base, rows, cols, row_stride, pix_stride, mode, seg_bytes, idx0, idx_step, axi_bytes):
    """[(address, beats, first, last, segment start, segment end, index)] of the transfer, in issue order."""
    segs = []
    if mode == "all":
        segs = [base]
    elif mode == "row":
        segs = [base + r * row_stride for r in range(rows)]
    else:
        segs = [base + r * row_stride + c * pix_stride for r in range(rows) for c in range(cols)]
    out = []
    for k, s in enumerate(segs):
        e = s + seg_bytes
        cur = s - s % axi_bytes
        left = -(-(e - cur) // axi_bytes)
        first = True
        while left:
            cap = min((AXI_BOUNDARY - cur % AXI_BOUNDARY) // axi_bytes, MAX_BEATS)
            n = min(left, cap)
            out.append((cur, n, first, n == left, s, e, (idx0 + k * idx_step) & 0xFFFFFFFF))
            cur += n * axi_bytes
            left -= n
            first = False
    return out


def random_transfer(rng, axi_bytes):
    mode = rng.choice(["all", "row", "pix"])
    rows, cols = rng.randint(1, 5), rng.randint(1, 6)
    run = rng.choice([1, 3, axi_bytes - 1, axi_bytes, 2 * axi_bytes + 5, 100, 700])
    base = rng.choice([0, 0x1000, 0x10_0000]) + rng.randint(0, 3 * AXI_BOUNDARY)
    pix_stride = run + rng.choice([0, 1, 16, 333, 2000])
    row_stride = cols * pix_stride + rng.choice([0, 7, 4096, 12345])
    if mode == "all":
        seg = rows * cols * run + rng.choice([0, 5000, 9000])         # long: several 4 KB crossings
    elif mode == "row":
        seg = cols * run
    else:
        seg = run
    return dict(base=base, rows=rows, cols=cols, row_stride=row_stride, pix_stride=pix_stride, mode=mode,
                seg_bytes=seg, idx0=rng.randint(0, 1000), idx_step=rng.randint(0, 300))


@cocotb.test()
async def bursts_match_reference(dut):
    """Random transfers: the bursts equal the reference's; with every address accepted, one per cycle."""
    args = unit_args()
    rng = random.Random(args["seed"])
    axi_bytes = args["axi_bytes"]
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst_n.value = 0
    dut.clr.value = 0
    dut.init.value = 0
    dut.en.value = 0
    dut.fire.value = 0
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst_n.value = 1
    n_checked = 0
    for k in range(args["transfers"]):
        t = random_transfer(rng, axi_bytes)
        ref = reference_bursts(t["base"], t["rows"], t["cols"], t["row_stride"], t["pix_stride"], t["mode"],
                               t["seg_bytes"], t["idx0"], t["idx_step"], axi_bytes)
        ready_p = 1.0 if k % 2 == 0 else 0.6
        got, cycles = await _drive(dut, t, ready_p, rng)
        assert got == ref, f"transfer {t}: first difference at burst " \
            f"{next((i for i, (a, b) in enumerate(zip(got, ref)) if a != b), min(len(got), len(ref)))}"
        for cur, n, *_ in got:                                       # the AXI4 rules themselves
            assert cur % axi_bytes == 0 and 1 <= n <= MAX_BEATS
            assert cur // AXI_BOUNDARY == (cur + n * axi_bytes - 1) // AXI_BOUNDARY
        if ready_p == 1.0:
            assert cycles == len(ref) + 1, f"{cycles} cycles for {len(ref)} bursts ({t})"
        n_checked += len(ref)
    assert n_checked > 0


async def _drive(dut, t, ready_p, rng):
    """One transfer; `fire` = seg_v && ready in each cycle. Returns (accepted bursts, cycles after init)."""
    for k in ("init_addr", "rows", "cols", "row_stride", "pix_stride", "seg_bytes", "idx_step"):
        getattr(dut, k).value = t[{"init_addr": "base"}.get(k, k)]
    dut.init_idx.value = t["idx0"]
    dut.all_seg.value = int(t["mode"] == "all")
    dut.row_seg.value = int(t["mode"] == "row")
    dut.init.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")
    dut.init.value = 0
    dut.en.value = 1
    got, cycles = [], 0
    while True:                            # 1 ns after a clock edge: the registered outputs of this cycle
        valid, more = int(dut.seg_v.value), int(dut.more.value)
        if not valid and not more:
            break
        ready = bool(valid) and rng.random() < ready_p
        dut.fire.value = int(ready)
        if ready:
            got.append((int(dut.cur.value), int(dut.blen.value), bool(dut.first.value), bool(dut.blast.value),
                        int(dut.seg_start.value), int(dut.seg_end.value), int(dut.seg_idx.value)))
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        cycles += 1
        assert cycles < 100_000, "seg_gen does not finish"
    dut.fire.value = 0
    dut.en.value = 0
    return got, cycles


@pytest.fixture(scope="module", params=[128, 256], ids=["axi128", "axi256"])
def seg_build(request):
    """TINY's 128-bit m_axi (a 4 KB page holds AXI_MAX_BEATS beats) and the 256 bits of zcu19eg's board file (a page
    holds 128 beats)."""
    if request.param == 128:
        return UnitBuild("seg_gen")
    return UnitBuild("seg_gen", tiny_board(axi_data_width_bits=request.param), name=f"seg_gen_{request.param}")


def test_seg_gen_bursts(seg_build):
    axi_bytes = seg_build.board.accelerator.axi_data_width_bits // 8
    seg_build.run("test_seg_gen", "bursts_match_reference", {"seed": 1, "transfers": 60, "axi_bytes": axi_bytes})

"""hls_templates/bd/accel_hp.v, the HLS kernel's DDR path on two HP ports (the RTL's burst splitter behind the
LOAD module's read-only and the STORE module's write-only m_axi, as vivado_bd.tcl wires it), driven by
cocotbext-axi: an AXI4 write master on ``s_axi_store`` and a read master on ``s_axi_load`` (standard AXI4 signal
names, as a Vitis HLS m_axi has them; ID 0 throughout, as HLS issues), two AXI4 RAMs on ``m00_axi`` / ``m01_axi`` sharing one memory (the DDR both
HP ports reach). Checked against a bytearray model: random page-aligned-base writes of whole 32-byte beats, then
reads of random spans, byte for byte; both ports carry beats; and a 64 KB read moves about 32 bytes per cycle
(what the HLS estimate's two-port figures assume)."""
from __future__ import annotations

import mmap
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from rtl_unit import UnitBuild, unit_args

DW, AW = 256, 40
BEAT = DW // 8
MEM = 1 << 20


async def _setup(dut):
    from cocotbext.axi import AxiBus, AxiRam, AxiReadBus, AxiWriteBus, AxiMasterRead, AxiMasterWrite
    cocotb.start_soon(Clock(dut.aclk, 10, unit="ns").start())
    mem = mmap.mmap(-1, MEM)
    rams = [AxiRam(AxiBus.from_prefix(dut, f"m0{p}_axi"), dut.aclk, dut.aresetn, reset_active_level=False,
                   mem=mem) for p in range(2)]
    rd = AxiMasterRead(AxiReadBus.from_prefix(dut, "s_axi_load"), dut.aclk, dut.aresetn, reset_active_level=False)
    wr = AxiMasterWrite(AxiWriteBus.from_prefix(dut, "s_axi_store"), dut.aclk, dut.aresetn,
                        reset_active_level=False)
    for name in ("s_axi_load_awvalid", "s_axi_load_wvalid", "s_axi_load_bready", "s_axi_store_arvalid",
                 "s_axi_store_rready"):
        getattr(dut, name).value = 0
    dut.aresetn.value = 0
    await ClockCycles(dut.aclk, 5)
    dut.aresetn.value = 1
    await ClockCycles(dut.aclk, 5)
    return mem, rams, rd, wr


async def _count_beats(dut, counts):
    """Beats on each port's R and W channels (valid and ready at a clock edge)."""
    while True:
        await RisingEdge(dut.aclk)
        for p in range(2):
            if int(getattr(dut, f"m0{p}_axi_rvalid").value) and int(getattr(dut, f"m0{p}_axi_rready").value):
                counts[p] += 1
            if int(getattr(dut, f"m0{p}_axi_wvalid").value) and int(getattr(dut, f"m0{p}_axi_wready").value):
                counts[p] += 1


@cocotb.test()
async def random_transfers(dut):
    rng = random.Random(unit_args()["seed"])
    mem, _, rd, wr = await _setup(dut)
    model = bytearray(rng.randbytes(MEM))
    mem[:] = bytes(model)
    counts = [0, 0]
    cocotb.start_soon(_count_beats(dut, counts))
    for _ in range(24):
        beats = rng.choice([1, 2, 3, 7, 16, 33, 128, rng.randint(1, 300)])
        addr = rng.randrange(0, (MEM - beats * BEAT) // BEAT) * BEAT
        data = rng.randbytes(beats * BEAT)
        await wr.write(addr, data, awid=0)
        model[addr:addr + len(data)] = data
    for _ in range(24):
        beats = rng.choice([1, 2, 5, 16, 64, rng.randint(1, 300)])
        addr = rng.randrange(0, (MEM - beats * BEAT) // BEAT) * BEAT
        got = (await rd.read(addr, beats * BEAT, arid=0)).data
        assert bytes(got) == bytes(model[addr:addr + beats * BEAT]), (hex(addr), beats)
    assert bytes(mem[:]) == bytes(model), "DDR after the writes differs from the model"
    assert min(counts) > 0.4 * sum(counts), f"port beats {counts}: one port carries almost everything"


@cocotb.test()
async def read_rate(dut):
    mem, _, rd, _ = await _setup(dut)
    mem[:65536] = bytes(range(256)) * 256
    await RisingEdge(dut.aclk)
    t0 = cocotb.utils.get_sim_time("ns")
    got = (await rd.read(0, 65536, arid=0)).data
    cycles = (cocotb.utils.get_sim_time("ns") - t0) / 10
    assert bytes(got) == bytes(mem[:65536])
    beats = 65536 // BEAT
    dut._log.info("64 KB read: %d cycles for %d 32-byte beats", cycles, beats)
    assert cycles < 1.10 * beats + 100, f"64 KB read took {cycles:.0f} cycles for {beats} beats"


@pytest.fixture(scope="module")
def hp_build():
    from generator.backends.hls.kernel import BD_DIR
    return UnitBuild("accel_hp", name="accel_hp", parameters={"DW": DW, "AW": AW}, extra=[BD_DIR / "accel_hp.v"])


def test_accel_hp_random_transfers(hp_build):
    hp_build.run("test_accel_hp", "random_transfers", {"seed": 31})


def test_accel_hp_reads_32_bytes_per_cycle(hp_build):
    hp_build.run("test_accel_hp", "read_rate")

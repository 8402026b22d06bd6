"""hls_templates/bd/accel_hp.v, the HLS kernel's DDR path on two HP ports (the RTL's burst splitter behind the
load module's m_axi, LOAD's and PRE's reads and PRE's writes, and the STORE module's write-only m_axi, the two
interfaces' writes through accel_hp.v's write arbiter, as vivado_bd.tcl wires it), driven by cocotbext-axi: AXI4
write masters on ``s_axi_store`` and ``s_axi_load`` and a read master on ``s_axi_load`` (standard AXI4 signal
names, as a Vitis HLS m_axi has them; ID 0 throughout, as HLS issues), two AXI4 RAMs on ``m00_axi`` / ``m01_axi``
sharing one memory (the DDR both HP ports reach). Checked against a bytearray model: random page-aligned-base
writes of whole 32-byte beats, then reads of random spans, byte for byte; both ports carry beats; writes from both
interfaces at once (each on its own 4 KB pages, several bursts in flight, the RAMs and the masters pausing W and
B) all land, each burst's response reaches its own interface, and the channel changes hands many times; and a
64 KB read moves about 32 bytes per cycle (what the HLS estimate's two-port figures assume)."""
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


async def _setup(dut, pre_writes: bool = False):
    """Clock, the RAMs, the read master on s_axi_load and the write master on s_axi_store (with ``pre_writes`` also
    one on s_axi_load, else its write channels idle), reset. Returns (mem, rams, rd, wr, the load port's writer)."""
    from cocotbext.axi import AxiBus, AxiRam, AxiReadBus, AxiWriteBus, AxiMasterRead, AxiMasterWrite
    cocotb.start_soon(Clock(dut.aclk, 10, unit="ns").start())
    mem = mmap.mmap(-1, MEM)
    rams = [AxiRam(AxiBus.from_prefix(dut, f"m0{p}_axi"), dut.aclk, dut.aresetn, reset_active_level=False,
                   mem=mem) for p in range(2)]
    rd = AxiMasterRead(AxiReadBus.from_prefix(dut, "s_axi_load"), dut.aclk, dut.aresetn, reset_active_level=False)
    wr = AxiMasterWrite(AxiWriteBus.from_prefix(dut, "s_axi_store"), dut.aclk, dut.aresetn,
                        reset_active_level=False)
    pre = None
    if pre_writes:
        pre = AxiMasterWrite(AxiWriteBus.from_prefix(dut, "s_axi_load"), dut.aclk, dut.aresetn,
                             reset_active_level=False)
    idle = ("s_axi_store_arvalid", "s_axi_store_rready")
    for name in idle + (() if pre_writes else ("s_axi_load_awvalid", "s_axi_load_wvalid", "s_axi_load_bready")):
        getattr(dut, name).value = 0
    dut.aresetn.value = 0
    await ClockCycles(dut.aclk, 5)
    dut.aresetn.value = 1
    await ClockCycles(dut.aclk, 5)
    return mem, rams, rd, wr, pre


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
    mem, _, rd, wr, _ = await _setup(dut)
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


async def _count_handovers(dut, fired):
    """The interface of each AW handshake on the slave ports, in order ("s" STORE, "p" the load interface)."""
    while True:
        await RisingEdge(dut.aclk)
        for tag, port in (("s", "s_axi_store"), ("p", "s_axi_load")):
            if int(getattr(dut, f"{port}_awvalid").value) and int(getattr(dut, f"{port}_awready").value):
                fired.append(tag)


def _pauses(rng, n=257):
    """A pause pattern for a cocotbext-axi channel: about one cycle in four paused."""
    import itertools
    return itertools.cycle([rng.random() < 0.25 for _ in range(n)])


async def _writer(wr, rng, pages, model, n, resps):
    """``n`` writes of random whole beats within random pages of ``pages`` (4 KB each; a Vitis HLS m_axi's bursts
    never cross a page), up to four in flight; each write's response recorded in ``resps``."""
    async def one(addr, data):
        resps.append((await wr.write(addr, data, awid=0)).resp)
    tasks = []
    for _ in range(n):
        beats = rng.choice([1, 2, 3, 16, 64, 128, rng.randint(1, 128)])
        page = rng.choice(pages)
        addr = page * 4096 + rng.randrange(0, 4096 // BEAT - beats + 1) * BEAT
        data = rng.randbytes(beats * BEAT)
        model[addr:addr + len(data)] = data
        tasks.append(cocotb.start_soon(one(addr, data)))
        if len(tasks) >= 4:
            await tasks.pop(0)
        if rng.random() < 0.3:
            await ClockCycles(wr.aw_channel.clock, rng.randint(1, 40))
    for t in tasks:
        await t


@cocotb.test()
async def writes_from_both_ports(dut):
    """STORE's and PRE's (the load interface's) writes at once, each interface on its own pages: DDR equals the
    model, every write answered OKAY to its own interface, the channel handed over many times; reads meanwhile."""
    from cocotbext.axi import AxiResp
    rng = random.Random(unit_args()["seed"])
    mem, rams, rd, wr, pre = await _setup(dut, pre_writes=True)
    model = bytearray(rng.randbytes(MEM))
    mem[:] = bytes(model)
    for ram in rams:
        ram.write_if.w_channel.set_pause_generator(_pauses(rng))
        ram.write_if.b_channel.set_pause_generator(_pauses(rng))
    for w in (wr, pre):                                     # the masters hold off bready at times
        w.b_channel.set_pause_generator(_pauses(rng))
    fired, resps = [], {"s": [], "p": []}
    cocotb.start_soon(_count_handovers(dut, fired))
    pages = list(range(MEM // 4096 // 2))                   # the lower half written; reads of the upper half
    store = cocotb.start_soon(_writer(wr, random.Random(rng.random()), pages[0::2], model, 60, resps["s"]))
    prew = cocotb.start_soon(_writer(pre, random.Random(rng.random()), pages[1::2], model, 60, resps["p"]))
    for _ in range(12):
        beats = rng.randint(1, 128)
        addr = MEM // 2 + rng.randrange(0, (MEM // 2 - beats * BEAT) // BEAT) * BEAT
        got = (await rd.read(addr, beats * BEAT, arid=0)).data
        assert bytes(got) == bytes(model[addr:addr + beats * BEAT]), (hex(addr), beats)
    await store
    await prew
    assert len(resps["s"]) == len(resps["p"]) == 60
    assert all(r == AxiResp.OKAY for r in resps["s"] + resps["p"])
    assert bytes(mem[:]) == bytes(model), "DDR after both interfaces' writes differs from the model"
    hand = sum(1 for a, b in zip(fired, fired[1:]) if a != b)
    dut._log.info("%d AW handshakes, %d handovers between STORE and PRE", len(fired), hand)
    assert fired.count("s") >= 60 and fired.count("p") >= 60 and hand >= 10, (fired.count("s"), hand)


@cocotb.test()
async def read_rate(dut):
    mem, _, rd, _, _ = await _setup(dut)
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


def test_accel_hp_writes_from_both_ports(hp_build):
    hp_build.run("test_accel_hp", "writes_from_both_ports", {"seed": 7})


def test_accel_hp_reads_32_bytes_per_cycle(hp_build):
    hp_build.run("test_accel_hp", "read_rate")

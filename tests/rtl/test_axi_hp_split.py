"""rtl/axi_hp_split.sv (the core's 256-bit AXI4 master onto two 128-bit HP ports) against a Python model of the
core and of two DDR ports sharing one memory: random read and write bursts (beat-aligned, within a 4 KB page, as
the core issues them), random ready / valid on every channel and random port latencies. Checked every cycle: each
port burst is 16-byte aligned, has an even number of beats, stays in its 4 KB page and together with the other
port's part covers exactly the core's burst (port 0 its first half); the core gets its read data in order with
RLAST on each burst's last beat; the written memory equals the model's; each write response comes after both
parts' responses; the two ports carry the same bytes within one core beat. A second test streams long reads and
writes with every ready high: 32 bytes per cycle within 3% (the latency model's two-HP-port figures rest on it)."""
from __future__ import annotations

import random
from collections import deque

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from rtl_unit import UnitBuild, unit_args

DW, PW, AW = 256, 128, 40
IB, PB = DW // 8, PW // 8          # core / port beat bytes


def _bit(sig, p: int) -> int:
    return (int(sig.value) >> p) & 1


def _field(sig, p: int, w: int) -> int:
    return (int(sig.value) >> (p * w)) & ((1 << w) - 1)


class _Port:
    """One HP port's DDR: AR / AW queues, R beats from the shared memory after a latency, W beats with strobes,
    B after a delay."""

    def __init__(self, rng, mem, lat, p_ready):
        self.rng, self.mem, self.lat, self.p_ready = rng, mem, lat, p_ready
        self.ar, self.aw, self.b = deque(), deque(), deque()
        self.rd_bytes = self.wr_bytes = 0

    def check_burst(self, addr, ln):
        n = ln + 1
        assert addr % PB == 0 and n % 2 == 0 and n <= 256, (hex(addr), n)
        assert addr // 4096 == (addr + n * PB - 1) // 4096, ("crosses 4 KB", hex(addr), n)
        return n

    def r_beat(self, now):
        if self.ar and self.ar[0][2] <= now:
            addr, k, _, n = self.ar[0]
            return int.from_bytes(self.mem[addr + k * PB: addr + (k + 1) * PB], "little"), k == n - 1
        return None


def _expect_parts(exp, tog, ch, a, n):
    """The port bursts of a core burst of n beats at a: port 0 its first h0 (ceil(n / 2), or floor(n / 2) every
    other odd burst), port 1 the rest; as (address, port beats)."""
    h0 = (n + 1 - tog[ch]) // 2
    if n % 2:
        tog[ch] ^= 1
    if h0:
        exp[0].append((a, 2 * h0))
    if n - h0:
        exp[1].append((a + h0 * IB, 2 * (n - h0)))


def _bursts(rng, n_reads, n_writes, stream):
    """The core's bursts (address, beats): reads in [0, 32 KB); writes from 32 KB on, each to bytes of its own
    (the STORE module writes each output once; the ports may complete two bursts to the same bytes in either
    order). ``stream``: 128-beat bursts (whole 4 KB pages) back to back."""
    if stream:
        return (deque((k * 4096 % 32768, 128) for k in range(n_reads)),
                deque((32768 + k * 4096, 128) for k in range(n_writes)))

    def size():
        return rng.choice([1, 2, 3, 5, 8, 16, 33, 64, rng.randint(1, 128)])
    reads = deque()
    for _ in range(n_reads):
        n = size()
        reads.append((rng.randrange(8) * 4096 + rng.randrange(0, 4096 // IB - n + 1) * IB, n))
    writes, free = deque(), 32768
    for _ in range(n_writes):
        n = size()
        a = free + rng.randrange(3) * IB
        if a // 4096 != (a + n * IB - 1) // 4096:
            a = (a // 4096 + 1) * 4096
        free = a + n * IB
        writes.append((a, n))
    return reads, writes


class _SplitBench:
    """The core (random bursts, W data, ready) and two DDR ports (:class:`_Port`) around the splitter, one cycle
    at a time: :meth:`drive` sets the inputs, :meth:`sample` checks the outputs and returns the handshakes,
    :meth:`update` moves the model past the clock edge."""

    def __init__(self, dut, rng, n_reads, n_writes, stream):
        self.dut, self.rng, self.stream = dut, rng, stream
        self.mem = bytearray(rng.randbytes(1 << 20))
        self.expect = bytearray(self.mem)
        lat = (lambda: 12) if stream else (lambda: rng.randint(3, 30))
        rdy = (lambda: True) if stream else (lambda: rng.random() < 0.7)
        self.ports = [_Port(rng, self.mem, lat, rdy) for _ in range(2)]
        self.reads, self.writes = _bursts(rng, n_reads, n_writes, stream)
        self.r_out, self.w_beats, self.b_wait = deque(), deque(), 0
        self.exp = {"ar": [deque(), deque()], "aw": [deque(), deque()]}
        self.tog = {"r": 0, "w": 0}
        self.cyc, self.start, self.last = 0, None, 0

    def busy(self):
        return self.reads or self.writes or self.r_out or self.w_beats or self.b_wait

    def drive(self):
        dut, rng, st = self.dut, self.rng, self.stream
        self.ar = self.reads[0] if self.reads and (st or rng.random() < 0.5) else None
        dut.s_arvalid.value = int(self.ar is not None)
        if self.ar:
            dut.s_araddr.value, dut.s_arlen.value = self.ar[0], self.ar[1] - 1
        dut.s_rready.value = int(st or rng.random() < 0.8)
        self.aw = self.writes[0] if self.writes and (st or rng.random() < 0.5) else None
        dut.s_awvalid.value = int(self.aw is not None)
        if self.aw:
            dut.s_awaddr.value, dut.s_awlen.value = self.aw[0], self.aw[1] - 1
        self.wv = bool(self.w_beats) and (st or rng.random() < 0.8)
        dut.s_wvalid.value = int(self.wv)
        if self.w_beats:
            dut.s_wdata.value, dut.s_wstrb.value = self.w_beats[0][1], self.w_beats[0][2]
        dut.s_bready.value = 1
        arr = awr = wr = rv = rl = bv = rdata = 0
        for p, pt in enumerate(self.ports):
            arr |= int(pt.p_ready()) << p
            awr |= int(pt.p_ready()) << p
            wr |= int(pt.p_ready()) << p
            beat = pt.r_beat(self.cyc) if pt.p_ready() else None
            if beat:
                rv, rl, rdata = rv | 1 << p, rl | int(beat[1]) << p, rdata | beat[0] << (p * PW)
            bv |= int(bool(pt.b) and pt.b[0] <= self.cyc) << p
        dut.m_arready.value, dut.m_awready.value, dut.m_wready.value = arr, awr, wr
        dut.m_rvalid.value, dut.m_rlast.value, dut.m_rdata.value, dut.m_bvalid.value = rv, rl, rdata, bv

    def sample(self):
        """Check the core-side outputs; returns (core handshakes, port handshakes) of this cycle."""
        dut = self.dut
        core = dict(ar=self.ar is not None and int(dut.s_arready.value),
                    r=int(dut.s_rvalid.value) and int(dut.s_rready.value),
                    aw=self.aw is not None and int(dut.s_awready.value),
                    w=self.wv and int(dut.s_wready.value), b=int(dut.s_bvalid.value))
        if core["r"]:
            assert self.r_out, "read data without a burst"
            assert int(dut.s_rdata.value) == self.r_out[0][0], f"cycle {self.cyc}: read data"
            assert int(dut.s_rlast.value) == int(len(self.r_out[0]) == 1), f"cycle {self.cyc}: RLAST"
        assert not core["b"] or self.b_wait > 0, "write response without a burst"
        fires = []
        for p, pt in enumerate(self.ports):
            for ch in ("ar", "aw"):
                if _bit(getattr(dut, f"m_{ch}valid"), p) and _bit(getattr(dut, f"m_{ch}ready"), p):
                    a, ln = _field(getattr(dut, f"m_{ch}addr"), p, AW), _field(getattr(dut, f"m_{ch}len"), p, 8)
                    fires.append((ch, p, a, pt.check_burst(a, ln)))
            if _bit(dut.m_rvalid, p) and _bit(dut.m_rready, p):
                fires.append(("r", p))
            if _bit(dut.m_wvalid, p) and _bit(dut.m_wready, p):
                fires.append(("w", p, _field(dut.m_wdata, p, PW), _field(dut.m_wstrb, p, PB), _bit(dut.m_wlast, p)))
            if _bit(dut.m_bvalid, p) and _bit(dut.m_bready, p):
                fires.append(("b", p))
        return core, fires

    def update_core(self, core):
        if core["ar"]:
            self.start = self.cyc if self.start is None else self.start
            a, n = self.reads.popleft()
            self.r_out.append([int.from_bytes(self.mem[a + k * IB: a + (k + 1) * IB], "little") for k in range(n)])
            _expect_parts(self.exp["ar"], self.tog, "r", a, n)
        if core["r"]:
            self.r_out[0].pop(0)
            if not self.r_out[0]:
                self.r_out.popleft()
            self.last = self.cyc
        if core["aw"]:
            self.start = self.cyc if self.start is None else self.start
            a, n = self.writes.popleft()
            _expect_parts(self.exp["aw"], self.tog, "w", a, n)
            for k in range(n):
                data = self.rng.getrandbits(DW)
                strb = (1 << IB) - 1 if self.stream else self.rng.getrandbits(IB)
                for j in range(IB):
                    if strb >> j & 1:
                        self.expect[a + k * IB + j] = (data >> (8 * j)) & 0xFF
                self.w_beats.append((k == n - 1, data, strb))
            self.b_wait += 1
        if core["w"]:
            self.w_beats.popleft()
        if core["b"]:
            self.b_wait -= 1
            self.last = self.cyc

    def update_ports(self, fires):
        for f in fires:
            pt = self.ports[f[1]]
            if f[0] in ("ar", "aw"):
                want = self.exp[f[0]][f[1]]
                assert want and want.popleft() == (f[2], f[3]), (f, "not the expected part of the core's burst")
            if f[0] == "ar":
                pt.ar.append([f[2], 0, self.cyc + pt.lat(), f[3]])
                pt.rd_bytes += f[3] * PB
            elif f[0] == "r":
                pt.ar[0][1] += 1
                if pt.ar[0][1] == pt.ar[0][3]:
                    pt.ar.popleft()
            elif f[0] == "aw":
                pt.aw.append([f[2], 0, f[3]])
                pt.wr_bytes += f[3] * PB
            elif f[0] == "w":
                self._port_write(f, pt)
            elif f[0] == "b":
                pt.b.popleft()

    def _port_write(self, f, pt):
        assert pt.aw, f"port {f[1]}: W beat before its address"
        a, k, n = pt.aw[0]
        for j in range(PB):
            if f[3] >> j & 1:
                self.mem[a + k * PB + j] = (f[2] >> (8 * j)) & 0xFF
        assert f[4] == int(k == n - 1), f"port {f[1]}: WLAST"
        pt.aw[0][1] += 1
        if pt.aw[0][1] == n:
            pt.aw.popleft()
            pt.b.append(self.cyc + (2 if self.stream else self.rng.randint(1, 20)))

    def check_end(self):
        assert self.mem == self.expect, "memory differs from the model after the writes"
        for what in ("rd_bytes", "wr_bytes"):
            a, b = (getattr(pt, what) for pt in self.ports)
            assert abs(a - b) <= IB, f"{what}: the ports carry {a} and {b} bytes"


async def _split_run(dut, rng, n_reads, n_writes, stream=False):
    """Drive the splitter for a random (or, ``stream``, a back-to-back) mix; returns the cycles from the first
    core address to the last core beat or response."""
    tb = _SplitBench(dut, rng, n_reads, n_writes, stream)
    while tb.busy():
        tb.cyc += 1
        assert tb.cyc < 200000, "stuck"
        tb.drive()
        await Timer(1, unit="ns")
        core, fires = tb.sample()
        await RisingEdge(dut.clk)
        tb.update_core(core)
        tb.update_ports(fires)
        await Timer(1, unit="ns")
    await ClockCycles(dut.clk, 5)
    tb.check_end()
    return tb.last - tb.start + 1


async def _reset(dut):
    Clock(dut.clk, 10, unit="ns").start()
    for s in ("s_arvalid", "s_rready", "s_awvalid", "s_wvalid", "s_bready", "m_arready", "m_rvalid", "m_rlast",
              "m_awready", "m_wready", "m_bvalid", "s_araddr", "s_arlen", "s_awaddr", "s_awlen", "s_wdata",
              "s_wstrb", "m_rdata"):
        getattr(dut, s).value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst_n.value = 1
    await RisingEdge(dut.clk)
    await Timer(1, unit="ns")


@cocotb.test()
async def random_bursts(dut):
    rng = random.Random(unit_args()["seed"])
    await _reset(dut)
    await _split_run(dut, rng, 120, 120)


@cocotb.test()
async def streaming_rate(dut):
    rng = random.Random(1)
    await _reset(dut)
    n = 24
    cycles = await _split_run(dut, rng, n, 0, stream=True)
    assert cycles <= n * 128 * 1.03 + 200, f"reads: {cycles} cycles for {n * 128} beats"
    cycles = await _split_run(dut, rng, 0, n, stream=True)
    assert cycles <= n * 128 * 1.03 + 200, f"writes: {cycles} cycles for {n * 128} beats"


@pytest.fixture(scope="module")
def split_build():
    return UnitBuild("axi_hp_split", parameters={"DW": DW, "AW": AW})


def test_axi_hp_split_random(split_build):
    split_build.run("test_axi_hp_split", "random_bursts", {"seed": 23})


def test_axi_hp_split_streams_two_ports(split_build):
    split_build.run("test_axi_hp_split", "streaming_rate")

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


async def _split_run(dut, rng, n_reads, n_writes, stream=False):
    """Drive the splitter for a random (or, ``stream``, a back-to-back) mix; returns the cycles from the first
    core address to the last core beat or response."""
    mem = bytearray(rng.randbytes(1 << 20))
    expect = bytearray(mem)
    lat = (lambda: 12) if stream else (lambda: rng.randint(3, 30))
    rdy = (lambda: True) if stream else (lambda: rng.random() < 0.7)
    ports = [_Port(rng, mem, lat, rdy) for _ in range(2)]
    # the core's bursts: reads in [0, 32 KB); writes from 32 KB on, each to bytes of its own (the STORE module
    # writes each output once; the ports may complete two bursts to the same bytes in either order)
    def size():
        return 128 if stream else rng.choice([1, 2, 3, 5, 8, 16, 33, 64, rng.randint(1, 128)])

    def read_burst():
        n = size()
        return rng.randrange(8) * 4096 + rng.randrange(0, 4096 // IB - n + 1) * IB, n

    free = [32768]

    def write_burst():
        n = size()
        a = free[0] + rng.randrange(3) * IB
        if a // 4096 != (a + n * IB - 1) // 4096:
            a = (a // 4096 + 1) * 4096
        free[0] = a + n * IB
        return a, n
    reads = deque(read_burst() for _ in range(n_reads))
    writes = deque(write_burst() for _ in range(n_writes))
    r_out, w_beats, b_wait = deque(), deque(), 0
    if stream:
        reads = deque((k * 4096 % 32768, 128) for k in range(n_reads))
        writes = deque((32768 + k * 4096, 128) for k in range(n_writes))
    cyc, start, last = 0, None, 0
    exp_ar, exp_aw, tog = [deque(), deque()], [deque(), deque()], {"r": 0, "w": 0}
    while reads or writes or r_out or w_beats or b_wait:
        cyc += 1
        assert cyc < 200000, "stuck"
        ar = reads[0] if reads and (stream or rng.random() < 0.5) else None
        dut.s_arvalid.value = int(ar is not None)
        if ar:
            dut.s_araddr.value, dut.s_arlen.value = ar[0], ar[1] - 1
        dut.s_rready.value = int(stream or rng.random() < 0.8)
        aw = writes[0] if writes and (stream or rng.random() < 0.5) else None
        dut.s_awvalid.value = int(aw is not None)
        if aw:
            dut.s_awaddr.value, dut.s_awlen.value = aw[0], aw[1] - 1
        wv = bool(w_beats) and (stream or rng.random() < 0.8)
        dut.s_wvalid.value = int(wv)
        if w_beats:
            dut.s_wdata.value, dut.s_wstrb.value = w_beats[0][1], w_beats[0][2]
        dut.s_bready.value = 1
        arr = awr = wr = rv = rl = bv = 0
        rdata = 0
        rbeat = [None, None]
        for p, pt in enumerate(ports):
            arr |= int(pt.p_ready()) << p
            awr |= int(pt.p_ready()) << p
            wr |= int(pt.p_ready()) << p
            rbeat[p] = pt.r_beat(cyc) if pt.p_ready() else None
            if rbeat[p]:
                rv |= 1 << p
                rl |= int(rbeat[p][1]) << p
                rdata |= rbeat[p][0] << (p * PW)
            bv |= int(bool(pt.b) and pt.b[0] <= cyc) << p
        dut.m_arready.value, dut.m_awready.value, dut.m_wready.value = arr, awr, wr
        dut.m_rvalid.value, dut.m_rlast.value, dut.m_rdata.value, dut.m_bvalid.value = rv, rl, rdata, bv
        await Timer(1, unit="ns")
        # sample the handshakes of this cycle
        s_ar = ar is not None and int(dut.s_arready.value)
        s_r = int(dut.s_rvalid.value) and int(dut.s_rready.value)
        s_aw = aw is not None and int(dut.s_awready.value)
        s_w = wv and int(dut.s_wready.value)
        s_b = int(dut.s_bvalid.value)
        if s_r:
            assert r_out, "read data without a burst"
            beats = r_out[0]
            assert int(dut.s_rdata.value) == beats[0], f"cycle {cyc}: read data"
            assert int(dut.s_rlast.value) == int(len(beats) == 1), f"cycle {cyc}: RLAST"
        if s_b:
            assert b_wait > 0, "write response without a burst"
        fires = []
        for p, pt in enumerate(ports):
            if _bit(dut.m_arvalid, p) and _bit(dut.m_arready, p):
                a, ln = _field(dut.m_araddr, p, AW), _field(dut.m_arlen, p, 8)
                fires.append(("ar", p, a, pt.check_burst(a, ln)))
            if _bit(dut.m_rvalid, p) and _bit(dut.m_rready, p):
                fires.append(("r", p))
            if _bit(dut.m_awvalid, p) and _bit(dut.m_awready, p):
                a, ln = _field(dut.m_awaddr, p, AW), _field(dut.m_awlen, p, 8)
                fires.append(("aw", p, a, pt.check_burst(a, ln)))
            if _bit(dut.m_wvalid, p) and _bit(dut.m_wready, p):
                fires.append(("w", p, _field(dut.m_wdata, p, PW), _field(dut.m_wstrb, p, PB),
                              _bit(dut.m_wlast, p)))
            if _bit(dut.m_bvalid, p) and _bit(dut.m_bready, p):
                fires.append(("b", p))
        await RisingEdge(dut.clk)
        # the model after the edge
        if s_ar:
            start = cyc if start is None else start
            a, n = reads.popleft()
            r_out.append([int.from_bytes(mem[a + k * IB: a + (k + 1) * IB], "little") for k in range(n)])
            _expect_parts(exp_ar, tog, "r", a, n)
        if s_r:
            r_out[0].pop(0)
            if not r_out[0]:
                r_out.popleft()
            last = cyc
        if s_aw:
            start = cyc if start is None else start
            a, n = writes.popleft()
            _expect_parts(exp_aw, tog, "w", a, n)
            for k in range(n):
                data = rng.getrandbits(DW)
                strb = (1 << IB) - 1 if stream else rng.getrandbits(IB)
                for j in range(IB):
                    if strb >> j & 1:
                        expect[a + k * IB + j] = (data >> (8 * j)) & 0xFF
                w_beats.append((k == n - 1, data, strb))
            b_wait += 1
        if s_w:
            w_beats.popleft()
        if s_b:
            b_wait -= 1
            last = cyc
        for f in fires:
            pt = ports[f[1]]
            if f[0] in ("ar", "aw"):
                want = (exp_ar if f[0] == "ar" else exp_aw)[f[1]]
                assert want and want.popleft() == (f[2], f[3]), (f, "not the expected part of the core's burst")
            if f[0] == "ar":
                pt.ar.append([f[2], 0, cyc + pt.lat(), f[3]])
                pt.rd_bytes += f[3] * PB
            elif f[0] == "r":
                pt.ar[0][1] += 1
                if pt.ar[0][1] == pt.ar[0][3]:
                    pt.ar.popleft()
            elif f[0] == "aw":
                pt.aw.append([f[2], 0, f[3]])
                pt.wr_bytes += f[3] * PB
            elif f[0] == "w":
                assert pt.aw, f"port {f[1]}: W beat before its address"
                a, k, n = pt.aw[0]
                for j in range(PB):
                    if f[3] >> j & 1:
                        mem[a + k * PB + j] = (f[2] >> (8 * j)) & 0xFF
                assert f[4] == int(k == n - 1), f"port {f[1]}: WLAST"
                pt.aw[0][1] += 1
                if pt.aw[0][1] == n:
                    pt.aw.popleft()
                    pt.b.append(cyc + (2 if stream else rng.randint(1, 20)))
            elif f[0] == "b":
                pt.b.popleft()
        await Timer(1, unit="ns")
    await ClockCycles(dut.clk, 5)
    assert mem == expect, "memory differs from the model after the writes"
    for what in ("rd_bytes", "wr_bytes"):
        d = abs(getattr(ports[0], what) - getattr(ports[1], what))
        assert d <= IB, f"{what}: ports carry {getattr(ports[0], what)} and {getattr(ports[1], what)} bytes"
    return last - start + 1


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

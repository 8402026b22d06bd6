"""rtl/pre.sv (PRE's unit, run by the ISA's PRE through rtl/pre_insn.sv: the camera frame in DDR to the network input in DDR) against
host.pre.pre_run, the definition of PRE's arithmetic, bit for bit: the frame (random bytes, rows at a pitch) and the
rest of DDR random, every byte of DDR after the run compared with the reference's output placed at
dst_addr + y dst_row + x dst_pix + c elem_bytes over the untouched DDR (so a byte written outside the output's
elements shows), on cocotbext-axi's AxiRam (its own AXI4 checks; bursts checked against 4 KB pages here). The
frame reads are checked too: the AR bursts cover exactly the beats of the rows the vertical pass uses (iy, iy1 of
each placed output row), once per pair of line buffers that uses them (rtl/pre.sv: output rows of one parity per
pair); the AW bursts exactly each output row's span once. Cases: odd frame widths, a pitch larger than the row, portrait and
landscape, 1x1 frames and a 1x1 network input, upsampling and downsampling, the three resize modes of
host.preprocess.RESIZE_MODES (through host.pre.pre_geometry), int8 and int16, the channel swap on and off,
dst_pix above 3 x elem_bytes and rows with gaps, each on both AXI widths (128 and 256 bits: two builds); "fine"
cases (int16, q = 0.49 v - 16000 on a frame of 0 / 1 bytes) where every LSB of the bilinear result v shows in the
output; random cases with the DDR model stalling every channel; 640x480 -> 416x416 and 1920x1080 -> 416x416
(slow). Each run's cycles are logged ("PRE cycles") for the formula of docs/rtl.md ("PRE")."""
from __future__ import annotations

import logging
import random

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from host.pre import pre_geometry, pre_quant, pre_run, source_positions
from host.preprocess import RESIZE_MODES
from rtl_unit import UnitBuild, unit_args

DDR = 1 << 24
PAGE = 4096


def case_params(c: dict, rng: random.Random) -> dict:
    """The run's parameters (the unit's ports) and the reference objects of case ``c``: frame size, pitch slack,
    network size, mode, bits, swap, pixel / row slack (bytes), addresses."""
    g = pre_geometry(c["fw"], c["fh"], c["nw"], c["nh"], c["mode"])
    order = "bgr" if c["swap"] else "rgb"
    if c.get("fine"):    # q = 0.49 v - 16000 on a frame of 0 / 1 bytes: every LSB of v shows in int16
        q = pre_quant(1 / (65536 * 0.49), -16000, 16, "rgb255", order)
    else:
        q = pre_quant(rng.uniform(0.002, 0.02) if c["bits"] == 8 else rng.uniform(1e-5, 1e-4),
                      rng.randint(-20, 20) if c["bits"] == 8 else rng.randint(-300, 300), c["bits"], "rgb01", order)
    eb = c["bits"] // 8
    pitch = 3 * c["fw"] + c.get("pitch_pad", 0)
    dpix = 3 * eb + c.get("pix_pad", 0)
    drow = c["nw"] * dpix + c.get("row_pad", 0)
    src = 0x1000 + rng.randint(0, 200)
    dst = (src + (c["fh"] - 1) * pitch + 3 * c["fw"] + 0x2000 + rng.randint(0, 200))
    assert dst + (c["nh"] - 1) * drow + c["nw"] * dpix < DDR
    return dict(g=g, q=q, eb=eb, pitch=pitch, dpix=dpix, drow=drow, src=src, dst=dst)


def expected_ddr(mem: np.ndarray, frame_bytes: np.ndarray, p: dict) -> np.ndarray:
    """DDR after the run: host.pre.pre_run's output bytes at their addresses over ``mem``."""
    out = pre_run(frame_bytes, p["g"], p["q"], pitch=p["pitch"])           # [nh, nw, 3] int8 / int16
    b = out.astype("<i2" if p["eb"] == 2 else np.int8).view(np.uint8).reshape(out.shape[0], out.shape[1], -1)
    want = mem.copy()
    nh, nw = out.shape[:2]
    rows = p["dst"] + np.arange(nh)[:, None, None] * p["drow"] + np.arange(nw)[None, :, None] * p["dpix"]
    want[(rows + np.arange(b.shape[2])[None, None, :]).ravel()] = b.ravel()
    return want


def read_beats(p: dict, beat: int) -> int:
    """Beats the reader must fetch: per pair of line buffers (the output rows of one parity, counted from the
    frame's first output row), the rows of the vertical pass its rows use (iy, iy1 of each placed output row) that
    neither of the pair's buffers holds, each its 3 x frame_w bytes beat-aligned (a row both pairs use is read
    twice; consecutive rows of a pair share theirs)."""
    g = p["g"]
    iy, iy1, _ = source_positions(g.out_h, g.frame_h, g.step_y)
    held = {0: set(), 1: set()}
    n = 0
    for j, (a, b) in enumerate(zip(iy.tolist(), iy1.tolist())):
        pair = (g.top + j) % 2
        need = [r for r in dict.fromkeys((a, b)) if r not in held[pair]]
        keep = held[pair] & {a, b}
        held[pair] = keep | set(need)
        for r in need:
            addr = p["src"] + int(r) * p["pitch"]
            n += (addr + 3 * g.frame_w + beat - 1) // beat - addr // beat
    return n


async def _addr_monitor(dut, log: dict, beat: int):
    """Record every accepted AR and AW burst (address, beats) in ``log["ar"]`` / ``log["aw"]``; each must be
    beat-aligned and stay in its 4 KB page."""
    while True:
        await RisingEdge(dut.clk)
        for ch in ("ar", "aw"):
            if int(getattr(dut, f"m_axi_{ch}valid").value) and int(getattr(dut, f"m_axi_{ch}ready").value):
                a, n = int(getattr(dut, f"m_axi_{ch}addr").value), int(getattr(dut, f"m_axi_{ch}len").value) + 1
                assert a % beat == 0 and a // PAGE == (a + n * beat - 1) // PAGE, f"{ch} burst {a:#x} x {n}: 4 KB"
                log[ch].append((a, n))


async def run_case(dut, ram, c: dict, rng: random.Random, nrng) -> dict:
    """One PRE run of case ``c``: DDR random, the frame in it, the ports driven, start; DDR compared with the
    reference after done. Returns the measured figures (cycles, rows fetched, beats read / written, pixels)."""
    beat = len(dut.m_axi_wstrb)
    p = case_params(c, rng)
    g, q = p["g"], p["q"]
    mem = nrng.integers(0, 256, DDR, dtype=np.uint8)
    frame = mem[p["src"]:p["src"] + (g.frame_h - 1) * p["pitch"] + 3 * g.frame_w]
    if c.get("fine"):
        frame &= 1
    ram.write(0, mem.tobytes())
    ports = dict(src_addr=p["src"], src_row=0, src_pitch=p["pitch"], frame_w=g.frame_w, frame_h=g.frame_h, net_w=g.net_w,
                 y0=0, rows=g.net_h, sy0=0, out_w=g.out_w, out_h=g.out_h, left=g.left, top=g.top, step_x=g.step_x,
                 step_y=g.step_y, mult=q.mult, shift=q.shift, zero_point=q.zero_point & 0xFFFF,
                 prec=int(q.bits == 16), swap=int(q.swap), dst_addr=p["dst"], dst_row=p["drow"], dst_pix=p["dpix"],
                 span_e=(g.net_w - 1) * p["dpix"] + 3 * p["eb"])
    for k, v in ports.items():
        getattr(dut, k).value = v
    bursts: dict = {"ar": [], "aw": []}
    mon = cocotb.start_soon(_addr_monitor(dut, bursts, beat))
    dut.start.value = 1
    await RisingEdge(dut.clk)
    t0 = cocotb.utils.get_sim_time("ns")
    dut.start.value = 0
    await RisingEdge(dut.done)
    cycles = int(round((cocotb.utils.get_sim_time("ns") - t0) / 10))
    mon.cancel()
    await ClockCycles(dut.clk, 2)
    got = np.frombuffer(ram.read(0, DDR), np.uint8)
    want = expected_ddr(mem, frame, p)
    bad = np.flatnonzero(got != want)
    if bad.size:
        import sys
        print("DBG rows", sorted(set(((bad - p["dst"]) // p["drow"]).tolist())), "cols", sorted(set((((bad - p["dst"]) % p["drow"]) // p["dpix"]).tolist()))[:40], file=sys.stderr)
    assert bad.size == 0, (f"case {c}: {bad.size} DDR bytes differ, first (address, got, want, before): "
                           f"{[(hex(int(a)), int(got[a]), int(want[a]), int(mem[a])) for a in bad[:6]]}")
    beats = sum(n for _, n in bursts["ar"])
    assert beats == read_beats(p, beat), (c, beats, read_beats(p, beat))
    iy, iy1, _ = source_positions(g.out_h, g.frame_h, g.step_y)
    rows = len(np.unique(np.concatenate([iy, iy1])))
    span = (g.net_w - 1) * p["dpix"] + 3 * p["eb"]
    wbeats = sum((p["dst"] + y * p["drow"] + span + beat - 1) // beat - (p["dst"] + y * p["drow"]) // beat
                 for y in range(g.net_h))
    assert sum(n for _, n in bursts["aw"]) == wbeats, (c, bursts["aw"][:4], wbeats)   # each row's span once
    return dict(case=c, cycles=cycles, rows=rows, fw=g.frame_w, net_w=g.net_w, net_h=g.net_h, rbeats=beats,
                wbeats=wbeats, busy=int(dut.busy.value))


CASES = [
    dict(fw=37, fh=23, nw=24, nh=20, mode="stretch", bits=8, swap=0, pitch_pad=13),              # odd, pitch, down
    dict(fw=23, fh=41, nw=32, nh=32, mode="letterbox", bits=16, swap=1),                           # portrait, up
    dict(fw=61, fh=17, nw=32, nh=24, mode="letterbox_topleft", bits=8, swap=1, pix_pad=5, row_pad=7),
    dict(fw=1, fh=1, nw=9, nh=6, mode="stretch", bits=16, swap=0, pitch_pad=2),                    # 1x1 frame
    dict(fw=1, fh=1, nw=7, nh=5, mode="letterbox", bits=8, swap=1),
    dict(fw=7, fh=5, nw=33, nh=29, mode="stretch", bits=8, swap=0, pix_pad=1),                    # upsampling
    dict(fw=97, fh=83, nw=20, nh=16, mode="letterbox", bits=16, swap=0, pix_pad=2, pitch_pad=31),  # downsampling
    dict(fw=45, fh=30, nw=1, nh=1, mode="stretch", bits=8, swap=0),                               # 1x1 input
    dict(fw=3, fh=64, nw=16, nh=16, mode="letterbox_topleft", bits=16, swap=1, row_pad=40),         # tall
    dict(fw=200, fh=9, nw=40, nh=24, mode="letterbox", bits=8, swap=0, pix_pad=61, pitch_pad=100),  # wide, sparse
    dict(fw=29, fh=31, nw=29, nh=31, mode="stretch", bits=16, swap=1, pix_pad=3),                  # 1:1
    dict(fw=13, fh=11, nw=40, nh=36, mode="stretch", bits=16, swap=0, fine=1),                     # every LSB of v
    dict(fw=71, fh=53, nw=24, nh=30, mode="letterbox", bits=16, swap=1, fine=1, pitch_pad=5),
]
LARGE = [dict(fw=640, fh=480, nw=416, nh=416, mode="letterbox", bits=8, swap=1)]
#: the largest frame PRE takes from a camera (the board's 256-bit build only: about 5 minutes of Verilator)
FULL_HD = [dict(fw=1920, fh=1080, nw=416, nh=416, mode="letterbox", bits=16, swap=0, pitch_pad=128)]


def random_cases(n: int, seed: int) -> list:
    """``n`` random small cases (sizes, mode, precision, swap, pitch / pixel / row slack)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        bits = rng.choice([8, 16])
        out.append(dict(fw=rng.randint(1, 90), fh=rng.randint(1, 60), nw=rng.randint(1, 40), nh=rng.randint(1, 30),
                        mode=rng.choice(RESIZE_MODES), bits=bits, swap=rng.randint(0, 1),
                        pitch_pad=rng.choice([0, rng.randint(1, 70)]),
                        pix_pad=rng.choice([0, 0, rng.randint(1, 40), 255 - 3 * bits // 8]),
                        row_pad=rng.choice([0, rng.randint(1, 90)]), fine=int(bits == 16 and rng.random() < 0.5)))
    return out


async def _start(dut):
    import itertools
    from cocotbext.axi import AxiBus, AxiRam
    args = unit_args()
    Clock(dut.clk, 10, unit="ns").start()
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst_n, reset_active_level=False, size=DDR)
    logging.getLogger(f"cocotb.{dut._name}.m_axi").setLevel(logging.WARNING)
    if args.get("stall"):            # the DDR model pauses each channel at random (ready / valid low)
        prng = random.Random(args["seed"] + 1)
        for ch in (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel, ram.read_if.ar_channel,
                   ram.read_if.r_channel):
            ch.set_pause_generator(itertools.cycle([prng.random() < args["stall"] for _ in range(991)]))
    dut.start.value = 0
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    await Timer(1, unit="ns")
    return args, ram


@cocotb.test()
async def pre_matches_reference(dut):
    args, ram = await _start(dut)
    rng, nrng = random.Random(args["seed"]), np.random.default_rng(args["seed"])
    out = []
    for c in args["cases"]:
        r = await run_case(dut, ram, c, rng, nrng)
        assert r.pop("busy") == 0
        out.append(r)
    logging.getLogger("cocotb").warning("PRE cycles: %s", out)
    if args.get("record"):
        import json
        from pathlib import Path
        Path(args["record"]).write_text(json.dumps(out))


@pytest.fixture(scope="module", params=[pytest.param(128, marks=pytest.mark.slow), 256], ids=["axi128", "axi256"])
def pre_build(request):
    b = UnitBuild("pre", name=f"pre{request.param}", parameters={"DW": request.param})
    b.dw = request.param
    return b


def test_pre_cases(pre_build):
    pre_build.run("test_pre", "pre_matches_reference", {"seed": 45, "cases": CASES})


def test_pre_random_stalls(pre_build):
    """Random cases with the DDR model stalling every channel 30% of the cycles: the flow control (R FIFO, the
    pixel credits, the W FIFO, bursts ahead of their data) keeps the result exact."""
    pre_build.run("test_pre", "pre_matches_reference",
                  {"seed": 7 + pre_build.dw, "cases": random_cases(8, pre_build.dw), "stall": 0.3})


@pytest.mark.slow
def test_pre_large(pre_build):
    pre_build.run("test_pre", "pre_matches_reference",
                  {"seed": 416, "cases": LARGE + (FULL_HD if pre_build.dw == 256 else [])})

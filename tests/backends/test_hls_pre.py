"""PRE in the HLS kernel's C++ (hls_templates/kernel/accel_kernel_pre.h, a standalone unit this session): the g++
C-simulation (the project's flags, generator.exec.csim.GXX_FLAGS) of the small top tests/data/hls_pre/pre_top.cpp,
driven by tests/data/hls_pre/pre_tb.cpp on a DDR image of random bytes holding a frame, must leave the image exactly
as host.pre.pre_run's output placed at dst_addr + y dst_row + x dst_pix + c elem_bytes says, every other byte
unchanged (bytes between pixels, around the rows, the frame), over odd widths, pitches above the row, portrait and
landscape, 1x1 frames, up- and downsampling, the three resize modes, int8 and int16, swap on and off, dst_pix above
3 elem_bytes and above the beat, 4096-pixel rows, unaligned addresses, two beat widths and a 1920x1080 -> 416x416
frame. The loop counters the driver prints are checked against the formulas of the cycle estimate
(:func:`expected_counts`, written from the unit interface, not from the C++), and the rule checker's port analysis
of the folder (header + top) must pass with PRE_FETCH and PRE_PIXELS at analysed II 1 and no violation (manual
bursts, no maxi-burst finding)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest

from generator import ROOT_DIR
from generator.backends.hls.kernel import KERNEL_DIR
from generator.backends.hls.lint import analyse_folder
from generator.exec.csim import GXX_FLAGS, ap_types_dir
from generator.spec.board import load_board
from host.fileio import atomic_write
from host.pre import pre_geometry, pre_quant, pre_run
from host.preprocess import RESIZE_MODES

FIXTURE = ROOT_DIR / "tests" / "data" / "hls_pre"
SOURCES = [KERNEL_DIR / "accel_kernel_pre.h", KERNEL_DIR / "accel_maxi.h", FIXTURE / "pre_top.cpp",
           FIXTURE / "pre_tb.cpp"]
PAGE_BYTES, WR_OUTSTANDING = 4096, 16
#: cycle-estimate overheads (not from the loops): the row loop's body outside PRE_PIXELS (positions, the held-row
#: compares, the row's beats) and a fetch run's two requests, as generator/estimate/hls_cycles.py's SETUP
ROW_SETUP, FETCH_SETUP = 4, 4


@pytest.fixture(scope="module")
def pre_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hls_pre")
    for f in SOURCES:
        shutil.copy(f, d / f.name)
    return d


@pytest.fixture(scope="module")
def pre_exe(pre_dir):
    """axi -> the C-simulation binary of pre_top + pre_tb built with PRE_AXI_BYTES = axi (cached)."""
    cache = {}

    def get(axi):
        if axi not in cache:
            exe = pre_dir / f"pre_tb_{axi}"
            cmd = ["g++", *GXX_FLAGS, f"-DPRE_AXI_BYTES={axi}", "-isystem", str(ap_types_dir()), "-I", str(pre_dir),
                   str(pre_dir / "pre_top.cpp"), str(pre_dir / "pre_tb.cpp"), "-o", str(exe)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            assert r.returncode == 0 and not r.stderr.strip(), f"g++ failed or warned:\n{r.stderr[-4000:]}"
            cache[axi] = exe
        return cache[axi]
    return get


@dataclass(frozen=True)
class Case:
    """One PRE run: a frame_w x frame_h frame (row pitch 3 frame_w + pitch_extra) into net_w x net_h by mode, int
    ``bits``, model format fmt and frame order (swap when they differ), dst_pix bytes per output pixel, rows
    row_extra bytes apart beyond the row, the frame at src_off and the output at dst_off (bytes, unaligned)."""
    frame_w: int
    frame_h: int
    net_w: int
    net_h: int
    mode: str = "stretch"
    bits: int = 8
    fmt: str = "rgb01"
    order: str = "rgb"
    dst_pix: int = 0          # 0: 3 elem_bytes (packed)
    pitch_extra: int = 0
    row_extra: int = 0
    src_off: int = 0
    dst_off: int = 0
    scale: float = 1 / 255
    zp: int = -128
    seed: int = 0


CASES = {
    "odd_width_pitch_landscape_down": Case(37, 23, 16, 12, pitch_extra=5, src_off=3, dst_off=5),
    "portrait_letterbox_int16_swap_pix8": Case(19, 45, 24, 20, "letterbox", 16, order="bgr", dst_pix=8,
                                               scale=1 / 32000, zp=0, src_off=7, dst_off=2, row_extra=6),
    "one_by_one_letterbox_up": Case(1, 1, 5, 7, "letterbox", dst_pix=4, seed=1),
    "one_by_one_to_one": Case(1, 1, 1, 1, seed=2, src_off=31, dst_off=31),
    "upsample_int16_bgr255": Case(7, 5, 33, 29, "stretch", 16, fmt="bgr255", order="bgr", scale=0.01, zp=-3,
                                  dst_pix=7, seed=3),
    "topleft_swap_pix5_clamp": Case(50, 31, 40, 40, "letterbox_topleft", fmt="rgb01", order="bgr", dst_pix=5,
                                    scale=0.003, zp=-20, pitch_extra=64, seed=4, dst_off=9),
    "pix_above_beat_int16": Case(23, 17, 9, 6, "letterbox", 16, dst_pix=40, scale=1 / 40000, zp=100, seed=5,
                                 dst_off=13, row_extra=3),
    "pix_255": Case(12, 9, 10, 8, "stretch", 8, fmt="rgb255", dst_pix=255, scale=0.5, zp=5, seed=6, dst_off=1),
    "one_row": Case(9, 1, 6, 4, "letterbox", seed=7, pitch_extra=1),
    "one_column": Case(1, 9, 4, 6, "letterbox", 16, seed=8, scale=1 / 30000, zp=-7),
    "net_one_row": Case(30, 20, 17, 1, "stretch", seed=9, src_off=17),
    "long_rows_pages": Case(1500, 3, 1400, 3, "stretch", 16, dst_pix=7, scale=1 / 30000, zp=0, seed=10,
                            dst_off=4000),
    "max_width": Case(4096, 2, 4096, 3, "stretch", 16, scale=1 / 30000, zp=0, seed=12, src_off=31, pitch_extra=1,
                      dst_off=17),
}


def _layout(c: Case, axi: int):
    """(geometry, quantization, pitch, elem bytes, dst_pix, dst_row, src_addr, dst_addr, image bytes)."""
    g = pre_geometry(c.frame_w, c.frame_h, c.net_w, c.net_h, c.mode)
    q = pre_quant(c.scale, c.zp, c.bits, c.fmt, c.order)
    eb = c.bits // 8
    pitch = 3 * c.frame_w + c.pitch_extra
    dst_pix = c.dst_pix or 3 * eb
    dst_row = (c.net_w - 1) * dst_pix + 3 * eb + c.row_extra
    src = 64 + c.src_off
    frame_bytes = (c.frame_h - 1) * pitch + 3 * c.frame_w
    dst = -(-(src + frame_bytes + 64) // axi) * axi + c.dst_off
    size = dst + (c.net_h - 1) * dst_row + (c.net_w - 1) * dst_pix + 3 * eb + 77
    return g, q, pitch, eb, dst_pix, dst_row, src, dst, size


def _args(c: Case, axi: int) -> list[int]:
    g, q, pitch, eb, dst_pix, dst_row, src, dst, _ = _layout(c, axi)
    return [src, pitch, g.frame_w, g.frame_h, g.net_w, g.net_h, g.out_w, g.out_h, g.left, g.top, g.step_x, g.step_y,
            q.mult, q.shift, q.zero_point, eb - 1, int(q.swap), dst, dst_row, dst_pix]


def expected_image(c: Case, ddr: np.ndarray, axi: int) -> np.ndarray:
    """The DDR image after PRE: ``ddr`` with pre_run's elements (little-endian) at their output bytes."""
    g, q, pitch, eb, dst_pix, dst_row, src, dst, _ = _layout(c, axi)
    out = pre_run(ddr[src:src + (g.frame_h - 1) * pitch + 3 * g.frame_w], g, q, pitch)
    b = np.ascontiguousarray(out.astype("<i1" if eb == 1 else "<i2")).view(np.uint8).reshape(g.net_h, g.net_w, 3 * eb)
    at = (dst + np.arange(g.net_h)[:, None, None] * dst_row + np.arange(g.net_w)[None, :, None] * dst_pix
          + np.arange(3 * eb)[None, None, :])
    exp = ddr.copy()
    exp[at] = b
    return exp


def run_pre(exe, work, ddr: np.ndarray, args: list[int]) -> tuple[np.ndarray, dict]:
    """Run the driver on ``ddr`` (uint8) with the 20 parameters: (image after the run, {ok, counters})."""
    fin, fout = work / "ddr_in.bin", work / "ddr_out.bin"
    atomic_write(fin, ddr.tobytes())
    r = subprocess.run([str(exe), str(fin), str(fout), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"pre_tb failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    info = {k: int(v) for k, v in (t.split("=", 1) for t in r.stdout.split() if "=" in t)}
    return np.fromfile(fout, np.uint8), info


def _positions(n_out: int, n_src: int, step: int):
    """(i, i1) of each output position (the unit interface's step 2)."""
    s = np.arange(n_out, dtype=np.int64) * step
    i = np.minimum(s >> 20, n_src - 1)
    i[-1] = n_src - 1
    return i, np.minimum(i + 1, n_src - 1)


def expected_counts(c: Case, axi: int) -> dict:
    """The loop counters of one run from the unit interface: per placed output row the source rows iy, iy1 that the
    two line buffers do not hold are read (a PRE_FETCH run over their beats, the rows read in full beats); per output
    row PRE_PIXELS runs NB + net_w - D iterations (NB the row's beats, D the pixels starting in a later beat than the
    one before), writes NB beats in one request plus one per 4 KB page start."""
    g, _, pitch, eb, dst_pix, dst_row, src, dst, _ = _layout(c, axi)
    iy, iy1 = _positions(g.out_h, g.frame_h, g.step_y)
    held, runs, rows, beats = [-1, -1], 0, 0, 0
    for a, b in zip(iy.tolist(), iy1.tolist()):
        need = [v for v in dict.fromkeys((a, b)) if v not in held]
        if need:
            runs, rows = runs + 1, rows + len(need)
            for v in need:
                s = src + v * pitch
                beats += (s + 3 * g.frame_w - 1) // axi - s // axi + 1
            keep = [v for v in held if v in (a, b)]
            held = (keep + need + [-1, -1])[:2]
    steps = writes = requests = 0
    page = min(PAGE_BYTES // axi, 256)
    for y in range(g.net_h):
        d = dst + y * dst_row
        bx = (d + np.arange(g.net_w) * dst_pix) // axi
        b0, b1 = d // axi, (d + (g.net_w - 1) * dst_pix + 3 * eb - 1) // axi
        steps += (b1 - b0 + 1) + g.net_w - int(np.count_nonzero(np.diff(bx)))
        writes += b1 - b0 + 1
        requests += 1 + sum(1 for b in range(b0 + 1, b1 + 1) if b % page == 0)
    return {"fetch_runs": runs, "rows_fetched": rows, "fetch_beats": beats, "pixel_steps": steps,
            "write_beats": writes, "requests": requests}


def _random_image(c: Case, axi: int) -> np.ndarray:
    return np.random.default_rng(c.seed).integers(0, 256, _layout(c, axi)[-1], dtype=np.uint8)


def _check(exe, work, c: Case, axi: int):
    ddr = _random_image(c, axi)
    out, info = run_pre(exe, work, ddr, _args(c, axi))
    exp = expected_image(c, ddr, axi)
    assert info["ok"] == 1
    bad = np.flatnonzero(out != exp)
    assert bad.size == 0, f"{bad.size} bytes differ, first at {bad[:8].tolist()} (got {out[bad[:8]].tolist()}, " \
                          f"expected {exp[bad[:8]].tolist()})"
    assert {k: info[k] for k in expected_counts(c, axi)} == expected_counts(c, axi)
    return info


@pytest.mark.parametrize("name", sorted(CASES))
def test_pre_csim_bit_exact(pre_exe, tmp_path, name):
    _check(pre_exe(32), tmp_path, CASES[name], 32)


@pytest.mark.parametrize("name", ["odd_width_pitch_landscape_down", "portrait_letterbox_int16_swap_pix8",
                                  "pix_above_beat_int16", "long_rows_pages", "max_width"])
def test_pre_csim_bit_exact_128_bit_beats(pre_exe, tmp_path, name):
    _check(pre_exe(16), tmp_path, CASES[name], 16)


@pytest.mark.parametrize("mode", RESIZE_MODES)
@pytest.mark.parametrize("bits", [8, 16])
def test_pre_csim_modes(pre_exe, tmp_path, mode, bits):
    """Each resize mode in both precisions, swap on (int8) and off (int16), on a landscape frame with odd sizes."""
    c = Case(61, 29, 26, 22, mode, bits, order="bgr" if bits == 8 else "rgb", scale=1 / 255 if bits == 8 else 1e-4,
             zp=-128 if bits == 8 else 3, pitch_extra=11, src_off=1, dst_off=3, seed=bits)
    _check(pre_exe(32), tmp_path, c, 32)


def test_pre_refuses_parameters_outside_the_interface(pre_exe, tmp_path):
    """dst_pix below 3 elem_bytes, a placed rectangle outside the input, a short pitch: ok=0, nothing written."""
    c = CASES["odd_width_pitch_landscape_down"]
    ddr = _random_image(c, 32)
    good = _args(c, 32)
    for at, bad in ((19, 2), (8, c.net_w), (1, 3 * c.frame_w - 1), (13, 0)):
        args = list(good)
        args[at] = bad
        out, info = run_pre(pre_exe(32), tmp_path, ddr, args)
        assert info["ok"] == 0 and np.array_equal(out, ddr), (at, bad)


def pre_cycles(counts: dict, net_h: int, loops: dict, lr: int, lw: int) -> int:
    """The cycle estimate of a run from the analysed loops (trip counts x II + depth per loop run, as
    generator/estimate/hls_cycles.py): per output row ROW_SETUP + PRE_PIXELS; per PRE_FETCH run FETCH_SETUP + the
    read latency lr + its beats; the last write responses lw once."""
    px, fe = loops["PRE_PIXELS"], loops["PRE_FETCH"]
    return (net_h * (ROW_SETUP + px.depth) + counts["pixel_steps"] * px.ii
            + counts["fetch_runs"] * (FETCH_SETUP + lr + fe.depth) + counts["fetch_beats"] * fe.ii + lw)


def test_pre_lint_loops(pre_dir):
    """The rule checker passes on the folder (header + top), PRE's two loops at analysed II 1."""
    r = subprocess.run([sys.executable, "-m", "generator.backends.hls.lint", "--loops", str(pre_dir)],
                       capture_output=True, text=True, cwd=ROOT_DIR)
    assert r.returncode == 0, r.stdout + r.stderr
    loops, violations = analyse_folder(pre_dir)
    assert not violations
    got = {lp.label: (lp.requested_ii, lp.ii) for lp in loops}
    assert got == {"PRE_FETCH": (1, 1), "PRE_PIXELS": (1, 1)}, r.stdout


@pytest.mark.slow   # (a 1920x1080 frame in C-simulation: invoke test --slow)
def test_pre_full_hd_to_416(pre_exe, pre_dir, tmp_path):
    """1920x1080 -> 416x416 letterbox, int8, packed pixels: bit-exact; prints the cycle estimate (zcu19eg's DDR
    latencies) and each loop's trips."""
    c = Case(1920, 1080, 416, 416, "letterbox", 8, scale=1 / 255, zp=-128, seed=11, src_off=0, dst_off=0)
    info = _check(pre_exe(32), tmp_path, c, 32)
    loops = {lp.label: lp for lp in analyse_folder(pre_dir)[0]}
    ddr = load_board("zcu19eg").accelerator
    cyc = pre_cycles(info, c.net_h, loops, ddr.ddr_read_latency_cycles, ddr.ddr_write_latency_cycles)
    print(f"\nPRE 1920x1080 -> 416x416 letterbox int8: {info}; PRE_PIXELS II {loops['PRE_PIXELS'].ii} depth "
          f"{loops['PRE_PIXELS'].depth}, PRE_FETCH II {loops['PRE_FETCH'].ii} depth {loops['PRE_FETCH'].depth}; "
          f"estimate {cyc} cycles ({cyc / 300e3:.3f} ms at 300 MHz)")
    assert info["pixel_steps"] <= c.net_h * (c.net_w + 2)


def test_kernel_pre_constants_are_host_pre_s():
    """The kernel's PRE constants (accel_kernel_pre.h #defines) are host/pre.py's, where PRE's arithmetic is defined
    (the RTL gets them rendered into accel_pkg.sv)."""
    import re

    from host import pre

    text = (KERNEL_DIR / "accel_kernel_pre.h").read_text()
    got = {m.group(1): int(m.group(2)) for m in re.finditer(r"^#define (PRE_\w+) (\d+)\b", text, re.M)}
    want = {"PRE_MAX_FRAME": max(pre.MAX_FRAME), "PRE_MAX_PITCH": pre.MAX_PITCH, "PRE_PAD": pre.PAD,
            "PRE_POS_BITS": pre.POS_BITS, "PRE_FRAC_BITS": pre.FRAC_BITS}
    assert {k: got.get(k) for k in want} == want
    assert pre.MAX_FRAME[0] == pre.MAX_FRAME[1]

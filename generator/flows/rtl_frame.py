"""The RTL frame flow (``invoke rtl-frame``): the whole YOLOv4-tiny network, one frame of an image, through the
SystemVerilog RTL under Verilator (executor ``rtl`` of :mod:`generator.exec`), compared with the golden simulator
bit for bit; detections drawn from the RTL's DDR image; per-layer cycle report (RTL vs latency model, ideal
cycles, PE utilization, stall cycles, DDR bytes, FPS); with several precisions, a table comparing them.

Board configurations: ``config="board"`` is the board file as is; ``config="tiny"`` / ``"small"`` the same board with
a Tn = Tm = 8 array and small buffers (:data:`generator.exec.rtl.CONFIGS`), for runs that must finish in minutes.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np

from host.fileio import atomic_write
from generator import build_dir
from generator.spec.board import DEFAULT_BOARD

#: default output folder of the reports: build/rtl_frame/<board>-<config>-<resolution>-<quant>/
OUT_DIR = build_dir("rtl_frame")


def format_report(rows: list[dict], hw, total_rtl: int | None, clock_mhz: float, tail_model: int = 0) -> str:
    """Text table of :func:`layer_report` rows with totals and FPS at ``clock_mhz``. ``tail_model``: the model's
    cycles after the last layer (a PRE program's bands that found no idle LOAD time run there, before END: a
    ``(tail)`` row, its RTL cycles the frame's beyond the last layer's), so that the totals are the whole frame's."""
    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    out = [f"{'layer':<14}{'kind':<6}{'RTL cyc':>10}{'model':>10}{'RTL/mdl':>8}{'ideal':>10}{'PE util':>8}"
           f"{'PE busy':>8}{'stall':>9}{'DDR bytes':>11}"]
    for r in rows:
        out.append(f"{r['layer']:<14}{r['kind']:<6}{f(r.get('rtl'), 'd'):>10}{r['model']:>10}"
                   f"{f(r.get('ratio'), '.2f'):>8}{r['ideal']:>10.0f}{f(r.get('util'), '.0%'):>8}"
                   f"{f(r.get('pe_busy'), '.0%'):>8}{f(r.get('stall'), 'd'):>9}{r['ddr_bytes']:>11}")
    model = sum(r["model"] for r in rows)
    if tail_model > 0:
        tail = total_rtl - sum(r.get("rtl", 0) for r in rows) if total_rtl else None
        out.append(f"{'(tail)':<14}{'PRE':<6}{f(tail, 'd'):>10}{tail_model:>10}"
                   f"{f(tail and tail / tail_model, '.2f'):>8}{0:>10}{'-':>8}{'-':>8}{'-':>9}{'-':>11}")
        model += tail_model
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
    d = build_dir(f"yolov4-tiny-{size}", shared=True)
    out = d / f"yolov4-tiny-{size}.onnx"
    from generator.flows.pipeline import onnx_metadata

    if not out.is_file() or "class_names" not in onnx_metadata(out):    # a file from an older converter: again
        d.mkdir(parents=True, exist_ok=True)
        cfg = data.yolov4_tiny_cfg().read_text()
        cfg = re.sub(r"(?m)^width=\d+", f"width={size}", cfg)
        cfg = re.sub(r"(?m)^height=\d+", f"height={size}", cfg)
        atomic_write(d / "yolov4-tiny.cfg", cfg)
        darknet_to_onnx(d / "yolov4-tiny.cfg", data.yolov4_tiny_weights(), str(out), names=data.coco_names_path())
    return out


def _run_both(brd, prog, ddr, bases, tag: str, case_dir: Path, log, frame=None) -> tuple:
    """One frame on the RTL (built as build/rtl_sim/``tag``) and on the golden simulator; returns (RTL run, golden
    run, Verilator seconds) (:class:`generator.exec.ProgramRun`)."""
    from generator.exec import GoldenExecutor, RtlExecutor, run_frame

    t0 = time.time()
    log("building the RTL under Verilator ...")
    rtl = RtlExecutor(brd, tag, quiet=False).prepare()
    log(f"built in {time.time() - t0:.1f} s; running the frame (progress every 25 store-module instructions in "
        f"{case_dir / 'sim.log'}) ...")
    model = prog.cycles
    t1 = time.time()
    run, pro = run_frame(rtl, prog, ddr, bases, frame=frame, case=case_dir,
                         timeout_cycles=max(50 * model, 1_000_000), progress_every=25)
    sim_s = time.time() - t1
    gold, gpro = run_frame(GoldenExecutor(), prog, ddr, bases, frame=frame)
    run.prologue, run.prologue_ok = pro, True     # (the RTL's prologue run, None without PRE)
    if pro is not None and (pro.status or pro.timeout or int(np.count_nonzero(pro.ddr != gpro.ddr))):
        log(f"the prologue (PRE of the frame) differs: RTL status {pro.status:#x}, golden {gpro.status:#x}")
        run.prologue_ok = False
    return run, gold, sim_s


def pre_lines(prog, run, frame) -> tuple[str, dict]:
    """The report's lines on PRE (empty without it) and their figures: the prologue's RTL and model cycles, the
    main program's PRE bands (count, model cycles at this frame: run in the LOAD module's idle time)."""
    from generator.spec.timing import pre_cycles

    if not prog.prologue:
        return "", {}
    bands = [i for i in prog.insns if i.op == "PRE"]
    band_model = sum(pre_cycles(prog.hw, i.f, frame) for i in bands)
    pro_model = pre_cycles(prog.hw, prog.prologue[1].f, frame)
    pro = run.prologue
    figs = {"pre_prologue_rtl": int(pro.cycles) if pro is not None else None, "pre_prologue_model": pro_model,
            "pre_bands": len(bands), "pre_band_model_cycles": band_model,
            "pre_prologue_bit_exact": pro is not None and run.prologue_ok}
    text = (f"PRE: frame {frame.frame_w}x{frame.frame_h} (pitch {frame.pitch} B) -> {prog.prologue[1].f['net_w']}x"
            f"{prog.prologue[1].f['net_h']}; prologue (the first frame's input) {figs['pre_prologue_rtl']} RTL cycles "
            f"(model {pro_model}); the main program's {len(bands)} PRE bands (the next frame's input) {band_model} "
            f"model cycles, in the LOAD module's idle time (in the layers' cycles above)\n")
    return text, figs


def _header(brd, comp, image, quant, per_channel, config, resolution, verdict, golden_cycles, sim_s) -> str:
    """The two lines above the report table: what ran, and the verdict."""
    hw, a = comp.hw, brd.accelerator
    return (f"YOLOv4-tiny {resolution}x{resolution}, {quant}{'' if per_channel else ' per-tensor'}, board "
            f"{brd.name} ({config}: {hw.tn}x{hw.tm} PE array, DDR read latency {a.ddr_read_latency_cycles} "
            f"cycles, {brd.ddr_bytes_per_cycle:g} B/cycle), image {Path(image).name}\n"
            f"RTL vs golden simulator: {verdict}; golden simulator {golden_cycles} cycles; "
            f"Verilator run {sim_s:.0f} s\n")


def simulate_frame(board: str = "zcu19eg", image: str = "bus", quant: str = "int8-asym", per_channel=True,
                   config: str = "board", resolution: int = 416, out: Path | None = None, log=print,
                   precision: str | None = None, pre=None) -> dict:
    """Compile YOLOv4-tiny for ``board`` (accelerator overrides of ``config``), run one frame of ``image``
    through the RTL (Verilator) and the golden simulator, compare the DDR images bit for bit, draw the
    detections (from the RTL's DDR) and write ``report.txt`` / ``report.json`` / ``detections.png`` into ``out``
    (default :data:`OUT_DIR`/<tag>). Returns the report dict (``bit_exact``, ``diff_bytes``, ``rtl_cycles``,
    ``golden_cycles``, ``model_cycles``, ``layers`` (rows of :func:`generator.exec.rtl.layer_report`), ``fps`` at
    the board clock, ``pe_util`` (ideal / RTL cycles of the frame), ``max_layer_error`` (worst per-layer
    |RTL / model - 1|), ``quant``, ``bits``, ``clock_mhz``, ``sim_seconds``, ``detections``, ``out``,
    ``fmax_mhz`` / ``fps_at_fmax``: the estimated fmax of ``invoke timing`` for this board and configuration and
    the frames/s at it (capped at the board clock), None without an estimate). ``precision``: the per-layer
    precision spec (:mod:`generator.quant.precision`)."""
    from generator.exec.rtl import board_config, layer_report
    from generator.exec.runtime import read_tensor
    from generator.flows.pipeline import compile_model, detections_from_heads, input_ddr
    from generator.flows.inputs import real_image
    from generator.flows.request import Target
    from generator.flows.timing import fmax_line
    from host.draw import draw_detections

    brd = board_config(board, config)
    img = real_image(image)
    pre = (img.shape[1], img.shape[0]) if pre == "image" else pre
    suffix = Target(precision=precision, pre=pre).folder_suffix(None)
    tag = f"{board}-{config}-{resolution}-{quant}{'' if per_channel else '-pt'}{suffix}"
    out = Path(out).resolve() if out else OUT_DIR / tag
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    comp = compile_model(brd, quant, per_channel=per_channel, model=model_at_resolution(resolution), progress=False,
                         precision=precision, pre=pre)
    prog, hw = comp.program, comp.hw
    log(f"compiled {len(prog.insns)} instructions for {board} ({config}: {hw.tn}x{hw.tm}, int{hw.bits}) at "
        f"{resolution}x{resolution} in {time.time() - t0:.1f} s")
    ddr, bases, frame = input_ddr(comp, img)
    run, gold, sim_s = _run_both(brd, prog, ddr, bases, f"{board}-{config}", out / "case", log, frame)
    diff = int(np.count_nonzero(run.ddr != gold.ddr))
    ok = not run.timeout and run.status == 0 and gold.status == 0 and diff == 0 and getattr(run, "prologue_ok", True)
    rows = layer_report(prog, run.detail)
    total = run.detail.get("cycles")
    heads = {o: read_tensor(prog, comp.qgraph, run.ddr, bases, o) for o in comp.qgraph.outputs}
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    draw_detections(img, dets, out / "detections.png")
    tail = prog.cycles - sum(prog.layer_cycles) if prog.prologue else 0    # PRE bands left for the frame's end
    text = format_report(rows, hw, total, brd.pl_clock_mhz, tail)
    ptext, pfigs = pre_lines(prog, run, frame)
    text = ptext + text
    fmax, line = fmax_line(total, board, config, brd.pl_clock_mhz) if total else (None, "")
    text += f"\n{line}" if line else ""
    verdict = "bit-exact" if ok else (f"MISMATCH ({diff} bytes differ, timeout {run.timeout}, status "
                                      f"{run.detail.get('status')})")
    qname = quant + (f", precision {precision}" if precision else "")
    head = _header(brd, comp, image, qname, per_channel, config, resolution, verdict, gold.cycles, sim_s)
    atomic_write(out / "report.txt", head + text + "\n")
    rep = {**pfigs, "bit_exact": ok, "diff_bytes": diff, "rtl_cycles": total, "golden_cycles": gold.cycles,
           "model_cycles": prog.cycles, "layers": rows, "sim_seconds": sim_s,
           "clock_mhz": brd.pl_clock_mhz, "quant": quant, "bits": hw.bits, "precision": precision or "",
           "pe_util": sum(r["ideal"] for r in rows) / total if total else None,
           "max_layer_error": max(abs(r["ratio"] - 1) for r in rows) if all("ratio" in r for r in rows) else None,
           "fps": brd.pl_clock_mhz * 1e6 / total if total else None, "fmax_mhz": fmax,
           "fps_at_fmax": min(fmax, brd.pl_clock_mhz) * 1e6 / total if total and fmax else None,
           "detections": dets, "out": str(out)}
    atomic_write(out / "report.json", json.dumps(rep, indent=1))
    log(head + text)
    for d in dets:
        log(f"  {d['label']:<14} {d['score']:.2f}  box {[round(v) for v in d['box']]}")
    log(f"wrote {out / 'report.txt'} and {out / 'detections.png'}")
    return rep


def rtl_frame_flow(board=DEFAULT_BOARD, image="bus", quants=("int8-asym", "int16-sym"), per_channel=True,
                   config="board", resolution=416, out=None, log=print,
                   precision=None, pre=None) -> tuple[list[dict], Path | None]:
    """:func:`simulate_frame` for each precision of ``quants`` (into ``out``/<quant> when several); with several,
    also the table of :func:`compare_report` written to ``out`` (default :data:`OUT_DIR`) as
    compare-<board>-<config>-<resolution>.md. Returns (reports, that file or None). Raises FlowError for an
    unknown config or quant, an ``out`` that is not a writable folder, a bad image, or an RTL run that differs
    from the golden simulator."""
    from generator.exec.rtl import CONFIGS
    from generator.flows.inputs import FlowError, out_folder, real_image
    from generator.quant.quantize import MODES

    if config not in CONFIGS:
        raise FlowError(f"unknown config {config!r}; one of {', '.join(CONFIGS)}")
    if out:
        out_folder(out)
    for q in quants:
        if q not in MODES:
            raise FlowError(f"unknown --quant {q!r}; one of {', '.join(MODES)}")
    real_image(image)
    reps = []
    for q in quants:
        o = out if len(quants) == 1 or out is None else str(Path(out) / q)
        rep = simulate_frame(board, image, q, per_channel=per_channel, config=config, resolution=resolution,
                             out=o, log=log, precision=precision, pre=pre)
        if not rep["bit_exact"]:
            raise FlowError(f"the RTL differs from the golden simulator ({rep['diff_bytes']} DDR bytes), "
                            f"see {rep['out']}")
        reps.append(rep)
    if len(reps) < 2:
        return reps, None
    dest = Path(out) if out else OUT_DIR
    dest.mkdir(parents=True, exist_ok=True)
    table = dest / f"compare-{board}-{config}-{resolution}.md"
    atomic_write(table, compare_report(reps) + "\n")
    return reps, table

"""Project tasks (``invoke --list``). Run inside the virtual environment that ``./setup.sh`` creates."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from invoke import task

ROOT = Path(__file__).resolve().parent
QUANTS = "int8-asym|int8-sym|int16-sym|int16-asym"     # help text; the modes are generator.quantize.MODES


def _die(msg: str):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def _real_image(image: str):
    """IMAGE as an HxWx3 uint8 RGB array: a file path, or the name of a shipped real image (bus, zidane, dog, ...);
    exits with the loader's message when it is not an image."""
    from generator import data
    from host.preprocess import ImageError, load_image

    if not Path(image).exists():
        shipped = data.all_real_images()
        if image in shipped:
            image = str(shipped[image])
    try:
        return load_image(image)
    except ImageError as e:
        _die(str(e))


def _compile(board, quant, per_tensor, model, progress=True):
    from generator.board import BoardError
    from generator.codegen import ScheduleError
    from generator.compiler import compile_model
    from generator.ir import GraphError
    from generator.quantize import QuantError

    try:
        return compile_model(board, quant, per_channel=not per_tensor, model=model, progress=progress)
    except (BoardError, GraphError, QuantError, ScheduleError, FileNotFoundError) as e:
        _die(str(e))


def _out_dir(c, out):
    if out:
        return Path(out)
    return ROOT / "build" / c.board.name / c.model_path.stem / c.quant.name


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "model": "ONNX model (default: official YOLOv4-tiny)", "out": "artifact folder"})
def compile(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, out=None):
    """Compile the model to an instruction program for BOARD; print the per-layer schedule."""
    from generator.compiler import schedule_table, write_artifacts

    t0 = time.time()
    comp = _compile(board, quant, per_tensor, model)
    d = write_artifacts(comp, _out_dir(comp, out))
    print(schedule_table(comp))
    secs = ", ".join(f"{k} {v:.1f} s" for k, v in comp.seconds.items())
    print(f"compiled in {time.time() - t0:.1f} s ({secs}); {len(comp.program.insns)} instructions, "
          f"{len(comp.program.weights)} weight bytes -> {d}")


@task(help={"image": "image file, or a shipped image name (bus, zidane, dog, person, horses, ...)", "out": "output folder", "board": "board name", "quant": QUANTS,
            "per_tensor": "per-tensor weight scales", "model": "ONNX model"})
def detect(c, image, out="out", board="zcu19eg", quant="int8-asym", per_tensor=False, model=None):
    """Compile, run IMAGE through the golden ISA simulator, write OUT/detections.json and OUT/detections.png."""
    from generator.compiler import detections_from_heads, quantize_image, write_artifacts
    from generator.runtime import run_golden
    from host.draw import draw_detections

    img = _real_image(image)
    comp = _compile(board, quant, per_tensor, model)
    write_artifacts(comp, _out_dir(comp, None))
    xq = quantize_image(comp, img)
    t0 = time.time()
    heads, res, _, _ = run_golden(comp.program, comp.qgraph, xq, progress=True)
    secs = time.time() - t0
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    od = Path(out)
    od.mkdir(parents=True, exist_ok=True)
    (od / "detections.json").write_text(json.dumps(dets, indent=1))
    draw_detections(img, dets, od / "detections.png")
    for d in dets:
        print(f"  {d['label']:<14} {d['score']:.2f}  box {[round(v) for v in d['box']]}")
    hw = comp.hw
    print(f"golden simulator: {res.cycles} cycles = {res.cycles / hw.clock_mhz / 1e3:.2f} ms at "
          f"{hw.clock_mhz:.0f} MHz ({hw.clock_mhz * 1e6 / res.cycles:.1f} frames/s, int{hw.bits}, "
          f"{hw.tn}x{hw.tm} PE array); simulated in {secs:.1f} s")
    print(f"wrote {od / 'detections.json'} and {od / 'detections.png'}")


@task(help={"board": "board name", "out": "output folder", "images": "limit the number of images (0: all)"})
def accuracy(c, board="zcu19eg", out="build/accuracy", images=0):
    """Accuracy table: float vs int16/int8 (sym/asym, per-channel/per-tensor): mAP@0.5, SQNR, parameter bytes."""
    from generator.accuracy import accuracy_table

    accuracy_table(board, Path(out), max_images=int(images))


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "program": "program.bin to disassemble (default: compile)", "limit": "max lines (0: all)"})
def disasm(c, board="zcu19eg", quant="int8-asym", per_tensor=False, program=None, limit=0):
    """Disassemble a program (one instruction per line)."""
    from generator import isa

    if program:
        blob = Path(program).read_bytes()
    else:
        blob = _compile(board, quant, per_tensor, None, progress=False).program.blob
    try:
        text = isa.disasm_program(blob)
    except isa.IsaError as e:
        _die(f"{program}: {e}")
    lines = text.splitlines()
    print("\n".join(lines[:int(limit)] if int(limit) else lines))


@task(help={"slow": "include slow tests (full frames)"})
def test(c, slow=False):
    """Run the test suite (pytest)."""
    args = "-m ''" if slow else ""
    c.run(f"{sys.executable} -m pytest -q {args}", pty=False)


@task(help={"board": "board name (boards/*.yaml)",
            "rtl": "also synthesize the RTL with Yosys (synth_xilinx -family xcup; long for 32x32 arrays)",
            "out": "work folder of the RTL synthesis (default build/rtl_resources/BOARD)",
            "no_uram": "forbid URAM288 in the RTL synthesis (default: allowed when the part has URAM)",
            "mapping_only": "stop the RTL synthesis after DSP48E2 / RAM mapping (no LUT/FF figures; much faster)"})
def resources(c, board="zcu19eg", rtl=False, out=None, no_uram=False, mapping_only=False):
    """Resources of BOARD's accelerator vs the part's capacity: the HLS estimate (generator/resources.py) and, with
    --rtl, the RTL synthesized by Yosys (generator/rtl_resources.py) next to it. Exits 2 if it does not fit."""
    from generator import resources as hls_resources
    from generator import rtl_resources
    from generator.board import BoardError, load_board

    try:
        b = load_board(board)
    except (BoardError, FileNotFoundError) as e:
        _die(str(e))
    e = hls_resources.estimate(b)
    a = b.accelerator
    print(f"## {board} ({b.part}), Tn x Tm = {a.tn} x {a.tm}: HLS estimate\n\n{e.table()}\n\n{e.memory_table()}\n")
    over = e.over()
    if rtl:
        d = Path(out) if out else ROOT / "build" / "rtl_resources" / board
        try:
            r = rtl_resources.synthesize(b, d, uram=False if no_uram else None, mapping_only=mapping_only)
        except rtl_resources.RtlResourceError as err:
            _die(str(err))
        print(rtl_resources.report(r))
        if r.over():
            _die(f"the synthesized RTL does not fit {b.part}: " + ", ".join(
                f"{k} {r.used[k]:g} / {r.capacity[k]}" for k in r.over()))
    if over:
        _die(f"the HLS estimate does not fit {b.part}: " + ", ".join(f"{k} {e.used()[k]:g} / {e.capacity[k]}"
                                                                     for k in over))


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales", "model": "ONNX model",
            "overlay": "folder with the overlay .bit + .hwh (default: overlay/BOARD/ when built)",
            "out": "output folder (default: build/package)"})
def package(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, overlay=None, out=None):
    """Deployment package for BOARD: folder + tarball (program artifacts, host/, overlay when built, README)."""
    from generator.package import build_package

    comp = _compile(board, quant, per_tensor, model, progress=False)
    try:
        d, tar = build_package(comp, Path(out) if out else ROOT / "build" / "package", overlay_dir=overlay)
    except FileNotFoundError as e:
        _die(str(e))
    print(f"wrote {d}/ and {tar} ({tar.stat().st_size / 1e6:.1f} MB)")
    print(f"on the board: tar xzf {tar.name} && cd {d.name} && sudo -E python3 detect.py images/bus.jpg")


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "model": "ONNX model (default: official YOLOv4-tiny)", "image": "image file or shipped image name",
            "out": "artifact folder", "overlay": "where vivado_bd.tcl puts the .bit + .hwh (default overlay/BOARD/)",
            "require_tools": "fail if vitis_hls or vivado is not on PATH (scripted bitstream builds)"})
def build(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, image="bus", out=None, overlay=None,
          require_tools=False):
    """Compile, render the HLS kernel (program in its ROM) and the Vitis HLS / Vivado scripts, run the kernel's g++
    C-simulation on IMAGE bit-exact against the golden simulator, draw its detections, write report.md (resources,
    predicted cycles and FPS); then run vitis_hls and vivado if they are on PATH, else name the commands."""
    import shutil
    import subprocess

    from generator import hls, resources
    from generator.compiler import detections_from_heads, quantize_image, write_artifacts
    from generator.runtime import build_ddr, read_tensor
    from host.draw import draw_detections

    img = _real_image(image)
    comp = _compile(board, quant, per_tensor, model)
    try:
        est = resources.check(comp.board, len(comp.program.insns))
    except resources.ResourceError as e:
        _die(str(e))
    d = write_artifacts(comp, _out_dir(comp, out))
    ddr, bases = build_ddr(comp.program, quantize_image(comp, img))
    hd = Path(d) / "hls"
    print(f"rendering the HLS kernel and scripts into {hd} and running its C-simulation (g++) on {image} ...")
    try:
        r = hls.build_and_check(comp.board, comp.program, ddr, bases, hd,
                                overlay_dir=Path(overlay).resolve() if overlay else None)
    except hls.HlsError as e:
        _die(str(e))
    if not r["bit_exact"]:
        _die(f"C-simulation differs from the golden simulator: status {hls.status_names(r['status'])}, "
             f"{r['diff_bytes']} DDR bytes differ")
    # predicted cycles of both precisions (latency model) for the int8 / int16 ratio
    bits = comp.hw.bits
    cycles = {bits: sum(p.cycles for p in comp.program.plans)}
    other = _compile(board, "int16-sym" if bits == 8 else "int8-asym", per_tensor, model, progress=False)
    cycles[other.hw.bits] = sum(p.cycles for p in other.program.plans)
    heads = {o: read_tensor(comp.program, comp.qgraph, r["ddr"], bases, o) for o in comp.qgraph.outputs}
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    draw_detections(img, dets, Path(d) / "detections.png")
    (Path(d) / "detections.json").write_text(json.dumps(dets, indent=1))
    (Path(d) / "report.md").write_text(hls.report_md(comp.board, comp.quant.name, len(comp.program.insns), cycles,
                                                     bits, r, Path(image).name, dets, est))
    print(f"C-simulation bit-exact with the golden simulator ({r['csim_seconds']:.1f} s); latency model predicts "
          f"{cycles[bits]} cycles = {comp.board.pl_clock_mhz * 1e6 / cycles[bits]:.1f} FPS at "
          f"{comp.board.pl_clock_mhz:g} MHz (int8/int16 throughput {cycles[16] / cycles[8]:.2f}x); "
          f"{len(dets)} detections")
    print(f"wrote {Path(d) / 'report.md'} and {Path(d) / 'detections.png'}")
    missing = [t for t, _ in hls.tool_commands(hd) if shutil.which(t) is None]
    if missing:
        msg = hls.missing_tools_message(hd, missing)
        if require_tools:
            _die(msg)
        print(msg)
        return
    subprocess.run(["vitis_hls", "-f", "run_hls.tcl"], cwd=hd, check=True)
    subprocess.run(["vivado", "-mode", "batch", "-source", "vivado_bd.tcl"], cwd=hd, check=True)


@task(help={"board": "board name (boards/*.yaml)", "image": "image file or shipped image name",
            "quant": QUANTS + "; several, comma-separated (e.g. int8-asym,int16-sym), compares them",
            "per_tensor": "per-tensor weight scales",
            "config": "accelerator: 'board' (the board file, e.g. 32x32), 'small' or 'tiny' (8x8 array)",
            "resolution": "network input size (multiple of 32; 416 = the official model)", "out": "output folder"})
def sim(c, board="zcu19eg", image="bus", quant="int8-asym,int16-sym", per_tensor=False, config="board", resolution=416,
        out=None):
    """Whole YOLOv4-tiny frame through the RTL (cocotb + Verilator), bit-exact check against the golden simulator,
    detections drawn, per-layer cycle report (RTL vs latency model, ideal cycles, PE utilization, stall cycles,
    DDR bytes, FPS); with several --quant values, a table comparing them (e.g. int8 against int16)."""
    from generator.quantize import MODES
    from generator.rtl_sim import CONFIGS, compare_report, simulate_frame

    if config not in CONFIGS:
        _die(f"unknown config {config!r}; one of {', '.join(CONFIGS)}")
    quants = [q.strip() for q in quant.split(",") if q.strip()]
    for q in quants:
        if q not in MODES:
            _die(f"unknown --quant {q!r}; one of {', '.join(MODES)}")
    reps = []
    for q in quants:
        o = out if len(quants) == 1 or out is None else str(Path(out) / q)
        rep = simulate_frame(board, image, q, per_channel=not per_tensor, config=config,
                             resolution=int(resolution), out=o)
        if not rep["bit_exact"]:
            _die(f"the RTL differs from the golden simulator ({rep['diff_bytes']} DDR bytes), see {rep['out']}")
        reps.append(rep)
    if len(reps) > 1:
        table = compare_report(reps)
        dest = Path(out) if out else ROOT / "build" / "sim"
        dest.mkdir(parents=True, exist_ok=True)
        (dest / f"compare-{board}-{config}-{resolution}.md").write_text(table + "\n")
        print(table)
        print(f"wrote {dest / f'compare-{board}-{config}-{resolution}.md'}")


@task(help={"cases": "number of random cases", "seed": "random seed (the cases depend on it alone)",
            "executors": "comma-separated: golden,ref,csim,rtl (golden always runs; the others are compared with it)",
            "configs": "comma-separated hardware configurations (tiny, tiny-8x16, tiny-16x8, zcu19eg, zcu102; "
                       "default: all for golden/ref, the tiny ones with csim or rtl)",
            "board": "board file replacing each configuration's own", "case": "run only this case index",
            "json": "write every outcome to this JSON file"})
def fuzz(c, cases=200, seed=1, executors="golden,ref", configs=None, board=None, case=None, json=None):
    """Random layers and small graphs through the executors, compared bit for bit; one reproducer line per
    failure; last line 'N passed, M failed'. Exits 1 when a case fails."""
    from generator import fuzz as fz

    try:
        outs = fz.fuzz(int(cases), int(seed), [e.strip() for e in executors.split(",") if e.strip()],
                       [x.strip() for x in configs.split(",")] if configs else None, board,
                       None if case is None else int(case))
    except fz.FuzzError as e:
        _die(str(e))
    if json:
        Path(json).write_text(fz.outcomes_json(outs))
    if any(o.status == "fail" for o in outs):
        sys.exit(1)

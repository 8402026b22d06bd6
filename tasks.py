"""Project tasks (``invoke --list``). Run inside the virtual environment that ``./setup.sh`` creates."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from invoke import task

ROOT = Path(__file__).resolve().parent
QUANTS = "int8-asym|int8-sym|int16-sym|int16-asym"     # help text; the modes are generator.quant.quantize.MODES


def _die(msg: str):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def _real_image(image: str):
    """IMAGE as an HxWx3 uint8 RGB array: a file path, or the name of a shipped real image (bus, zidane, dog, ...);
    exits with the loader's message when it is not an image."""
    from generator.eval import data
    from host.preprocess import ImageError, load_image

    if not Path(image).exists():
        shipped = data.all_real_images()
        if image in shipped:
            image = str(shipped[image])
    try:
        return load_image(image)
    except ImageError as e:
        _die(str(e))


def _out_folder(out) -> Path:
    """Create the output folder OUT (with its parents) and check that it is writable by creating and deleting a
    probe file in it (permission bits alone say nothing when running as root); exits 2 naming OUT when it is an
    existing file, lies under a file, or cannot be created or written. Called before any other work."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        _die(f"output folder {out}: exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        _die(f"output folder {out}: not writable ({e.strerror or e})")
    return p


def _model(model, cfg, weights, names, onnx_dir) -> str | None:
    """The ONNX model to compile: MODEL, or the darknet CFG + WEIGHTS converted to ONNX (class names: NAMES, else
    the cfg's names=) as ONNX_DIR/<cfg stem>.onnx, or, without ONNX_DIR, build/darknet/<cfg stem>-<hash of the cfg,
    weights and names>/<cfg stem>.onnx. Exits 2 with the converter's message on bad darknet files."""
    if not (cfg or weights):
        return model
    if model:
        _die("give either --model or --cfg/--weights, not both")
    if not (cfg and weights):
        _die("--cfg and --weights go together")
    from generator.flows.compiler import file_sha256
    from generator.frontend.darknet import DarknetError, darknet_to_onnx

    for opt, f in (("--cfg", cfg), ("--weights", weights), ("--names", names)):
        if f is not None and not Path(f).is_file():
            _die(f"{opt} {f}: no such file")
    if onnx_dir is None:
        h = hashlib.sha256("".join(file_sha256(f) for f in (cfg, weights, names) if f).encode()).hexdigest()[:8]
        onnx_dir = ROOT / "build" / "darknet" / f"{Path(cfg).stem}-{h}"
    onnx_dir = _out_folder(onnx_dir)
    dest = onnx_dir / f"{Path(cfg).stem}.onnx"
    try:
        darknet_to_onnx(cfg, weights, dest, names=names)
    except DarknetError as e:
        _die(str(e))
    return str(dest)


def _compile(board, quant, per_tensor, model, progress=True, names=None, yolo_cfg=None, require_detection=False):
    """compile_model, exiting 2 with its message on bad input; REQUIRE_DETECTION checks the YOLO head parameters
    and class names (from the model, --names, --yolo-cfg) before calibration, hence before any simulation."""
    from generator.spec.board import BoardError
    from generator.codegen.program import ScheduleError
    from generator.flows.compiler import compile_model
    from generator.frontend.darknet import DarknetError
    from generator.ir.graph import GraphError
    from generator.quant.quantize import QuantError

    for opt, f in (("--names", names), ("--yolo-cfg", yolo_cfg)):
        if f is not None and not Path(f).is_file():
            _die(f"{opt} {f}: no such file")
    try:
        return compile_model(board, quant, per_channel=not per_tensor, model=model, progress=progress, names=names,
                             yolo_cfg=yolo_cfg, require_detection=require_detection)
    except (BoardError, GraphError, QuantError, ScheduleError, DarknetError, FileNotFoundError) as e:
        _die(str(e))


def _out_dir(c, out):
    """OUT, else build/<board>/<model key>/<quant>/ (model key: file stem + hash of its content)."""
    from generator.flows.compiler import model_key

    if out:
        return Path(out)
    return ROOT / "build" / c.board.name / model_key(c.model_path) / c.quant.name


MODEL_HELP = {"model": "ONNX model (default: official YOLOv4-tiny)",
              "cfg": "darknet cfg to compile from (with --weights; converted to ONNX under --out)",
              "weights": "darknet weights matching --cfg",
              "names": "class-names file, one per line (default: the model's, or names= of the cfg's [net])",
              "yolo_cfg": "darknet cfg whose [yolo] sections give anchors/mask/scale_x_y/classes (for an ONNX model "
                          "without YOLO metadata)"}


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "out": "artifact folder (default build/BOARD/MODEL-HASH/QUANT)", **MODEL_HELP})
def compile(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, out=None, cfg=None, weights=None,
            names=None, yolo_cfg=None):
    """Compile the model to an instruction program for BOARD; print the per-layer schedule."""
    from generator.codegen.artifacts import schedule_table, write_artifacts

    od = _out_folder(out) if out else None
    t0 = time.time()
    comp = _compile(board, quant, per_tensor, _model(model, cfg, weights, names, od), names=names,
                    yolo_cfg=yolo_cfg)
    d = write_artifacts(comp, _out_dir(comp, out))
    print(schedule_table(comp))
    secs = ", ".join(f"{k} {v:.1f} s" for k, v in comp.seconds.items())
    print(f"compiled in {time.time() - t0:.1f} s ({secs}); {len(comp.program.insns)} instructions, "
          f"{len(comp.program.weights)} weight bytes -> {d}")


@task(help={"image": "image file, or a shipped image name (bus, zidane, dog, person, horses, ...); default bus",
            "out": "output folder: detections.json/.png, program artifacts in OUT/artifacts/", "board": "board name",
            "quant": QUANTS, "per_tensor": "per-tensor weight scales", **MODEL_HELP})
def detect(c, image="bus", out="out", board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, cfg=None,
           weights=None, names=None, yolo_cfg=None):
    """Compile, run IMAGE through the golden ISA simulator, write OUT/detections.json and OUT/detections.png."""
    from generator.codegen.artifacts import write_artifacts
    from generator.flows.compiler import detections_from_heads, quantize_image
    from generator.exec.runtime import run_golden
    from host.draw import draw_detections

    od = _out_folder(out)
    img = _real_image(image)
    art = od / "artifacts"
    comp = _compile(board, quant, per_tensor, _model(model, cfg, weights, names, art), names=names,
                    yolo_cfg=yolo_cfg, require_detection=True)
    write_artifacts(comp, art)
    xq = quantize_image(comp, img)
    t0 = time.time()
    heads, res, _, _ = run_golden(comp.program, comp.qgraph, xq, progress=True)
    secs = time.time() - t0
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    (od / "detections.json").write_text(json.dumps(dets, indent=1))
    draw_detections(img, dets, od / "detections.png", num_classes=len(comp.names))
    for d in dets:
        print(f"  {d['label']:<14} {d['score']:.2f}  box {[round(v) for v in d['box']]}")
    hw = comp.hw
    print(f"golden simulator: {res.cycles} cycles = {res.cycles / hw.clock_mhz / 1e3:.2f} ms at "
          f"{hw.clock_mhz:.0f} MHz ({hw.clock_mhz * 1e6 / res.cycles:.1f} frames/s, int{hw.bits}, "
          f"{hw.tn}x{hw.tm} PE array); simulated in {secs:.1f} s")
    print(f"wrote {od / 'detections.json'} and {od / 'detections.png'} (program artifacts in {art})")


@task(help={"board": "board name", "out": "output folder", "images": "limit the number of images (0: all)"})
def accuracy(c, board="zcu19eg", out="build/accuracy", images=0):
    """Accuracy table: float vs int16/int8 (sym/asym, per-channel/per-tensor): mAP@0.5, SQNR, parameter bytes."""
    from generator.eval.accuracy import accuracy_table

    accuracy_table(board, _out_folder(out), max_images=int(images))


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "program": "program.bin to disassemble (default: compile)", "limit": "max lines (0: all)"})
def disasm(c, board="zcu19eg", quant="int8-asym", per_tensor=False, program=None, limit=0):
    """Disassemble a program (one instruction per line)."""
    from generator.spec import isa

    if program:
        try:
            blob = Path(program).read_bytes()
        except FileNotFoundError:
            _die(f"--program {program}: no such file")
        except OSError as e:
            _die(f"--program {program}: cannot read ({e.strerror or e})")
        if not blob:
            _die(f"--program {program}: empty file, not a program")
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
    """Resources of BOARD's accelerator vs the part's capacity: the HLS estimate (generator/estimate/hls_resources.py) and, with
    --rtl, the RTL synthesized by Yosys (generator/estimate/rtl_resources.py) next to it. Exits 2 if it does not fit."""
    from generator.estimate import hls_resources
    from generator.estimate import rtl_resources
    from generator.spec.board import BoardError, load_board

    try:
        b = load_board(board)
    except (BoardError, FileNotFoundError) as e:
        _die(str(e))
    if rtl and out:
        _out_folder(out)
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


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "overlay": "folder with the overlay .bit + .hwh (default: overlay/BOARD/ when built)",
            "out": "output folder (default: build/package)", **MODEL_HELP})
def package(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, overlay=None, out=None, cfg=None,
            weights=None, names=None, yolo_cfg=None):
    """Deployment package for BOARD: folder + tarball (program artifacts, host/, overlay when built, README)."""
    from generator.flows.package import build_package

    od = _out_folder(out if out else ROOT / "build" / "package")
    comp = _compile(board, quant, per_tensor, _model(model, cfg, weights, names, od if out else None),
                    progress=False, names=names, yolo_cfg=yolo_cfg, require_detection=True)
    try:
        d, tar = build_package(comp, od, overlay_dir=overlay)
    except FileNotFoundError as e:
        _die(str(e))
    print(f"wrote {d}/ and {tar} ({tar.stat().st_size / 1e6:.1f} MB)")
    print(f"on the board: tar xzf {tar.name} && cd {d.name} && sudo -E python3 detect.py images/bus.jpg")


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "image": "image file or shipped image name",
            "out": "artifact folder (default build/BOARD/MODEL-HASH/QUANT)",
            "overlay": "where vivado_bd.tcl puts the .bit + .hwh (default overlay/BOARD/)",
            "require_tools": "fail if vitis_hls or vivado is not on PATH (scripted bitstream builds)", **MODEL_HELP})
def build(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, image="bus", out=None, overlay=None,
          require_tools=False, cfg=None, weights=None, names=None, yolo_cfg=None):
    """Compile, render the HLS kernel (program in its ROM) and the Vitis HLS / Vivado scripts, run the kernel's g++
    C-simulation on IMAGE bit-exact against the golden simulator, draw its detections, write report.md (resources,
    predicted cycles and FPS); then run vitis_hls and vivado if they are on PATH, else name the commands."""
    import shutil
    import subprocess

    from generator.backends import hls
    from generator.estimate import hls_resources
    from generator.codegen.artifacts import write_artifacts
    from generator.flows.compiler import detections_from_heads, quantize_image
    from generator.exec import csim
    from generator.exec.runtime import build_ddr, read_tensor
    from generator.flows.compiler import detections_from_heads, quantize_image, write_artifacts
    from generator.spec import isa
    from host.draw import draw_detections

    od = _out_folder(out) if out else None
    if overlay:
        _out_folder(overlay)
    img = _real_image(image)
    model = _model(model, cfg, weights, names, od)
    comp = _compile(board, quant, per_tensor, model, names=names, yolo_cfg=yolo_cfg, require_detection=True)
    try:
        est = hls_resources.check(comp.board, len(comp.program.insns))
    except hls_resources.ResourceError as e:
        _die(str(e))
    d = write_artifacts(comp, _out_dir(comp, out))
    ddr, bases = build_ddr(comp.program, quantize_image(comp, img))
    hd = Path(d) / "hls"
    print(f"rendering the HLS kernel and scripts into {hd} and running its C-simulation (g++) on {image} ...")
    try:
        r = csim.build_and_check(comp.board, comp.program, ddr, bases, hd,
                                 overlay_dir=Path(overlay).resolve() if overlay else None)
    except hls.HlsError as e:
        _die(str(e))
    if not r["bit_exact"]:
        _die(f"C-simulation differs from the golden simulator: status {isa.status_names(r['status'])}, "
             f"{r['diff_bytes']} DDR bytes differ")
    # predicted cycles of both precisions (latency model) for the int8 / int16 ratio
    bits = comp.hw.bits
    cycles = {bits: sum(p.cycles for p in comp.program.plans)}
    other = _compile(board, "int16-sym" if bits == 8 else "int8-asym", per_tensor, model, progress=False,
                     names=names, yolo_cfg=yolo_cfg)
    cycles[other.hw.bits] = sum(p.cycles for p in other.program.plans)
    from generator.estimate import hls_cycles
    try:
        kest = hls_cycles.compare(comp.board, bits, comp.program.insns)
    except hls_cycles.EstimateError as e:
        _die(str(e))
    heads = {o: read_tensor(comp.program, comp.qgraph, r["ddr"], bases, o) for o in comp.qgraph.outputs}
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    draw_detections(img, dets, Path(d) / "detections.png", num_classes=len(comp.names))
    (Path(d) / "detections.json").write_text(json.dumps(dets, indent=1))
    (Path(d) / "report.md").write_text(hls.report_md(comp.board, comp.quant.name, len(comp.program.insns), cycles,
                                                     bits, r, Path(image).name, dets, est, kest))
    print(f"C-simulation bit-exact with the golden simulator ({r['csim_seconds']:.1f} s); latency model predicts "
          f"{cycles[bits]} cycles = {comp.board.pl_clock_mhz * 1e6 / cycles[bits]:.1f} FPS at "
          f"{comp.board.pl_clock_mhz:g} MHz (int8/int16 throughput {cycles[16] / cycles[8]:.2f}x); "
          f"{len(dets)} detections")
    print(f"kernel estimate from its loop structure (not a synthesis result): hls-cycles {kest['hls']}, "
          f"model-cycles {kest['model']} (ratio {kest['ratio']:.2f})")
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
    from generator.quant.quantize import MODES
    from generator.exec.rtl import CONFIGS, compare_report, simulate_frame

    if config not in CONFIGS:
        _die(f"unknown config {config!r}; one of {', '.join(CONFIGS)}")
    if out:
        _out_folder(out)
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
    from generator.eval import fuzz as fz

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


@task(help={"verbose": "print every refusal in full", "filter": "only node tests whose name contains this"})
def conformance(c, verbose=False, filter=None):
    """The ONNX backend node tests shipped in the onnx wheel, for every operator the compiler knows: each runs
    through the golden simulator (and the host tail) within quantization tolerance of its expected output, or is
    refused with one line naming the node; table and counts. Exits 1 when a test fails."""
    from generator.eval.conformance import main

    sys.exit(main((["-v"] if verbose else []) + ([filter] if filter else [])))

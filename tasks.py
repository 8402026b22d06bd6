"""Project tasks (``invoke --list``), numbered in the order of use. Run inside the virtual environment that
``./setup.sh`` creates. Each task parses its arguments, calls one flow of ``generator/flows/`` (or a check of
``generator/eval/``) and prints; every error exits 2 with one ``error: ...`` line."""
from __future__ import annotations

import sys
from pathlib import Path

from invoke import task

QUANTS = "int8-asym|int8-sym|int16-sym|int16-asym"     # help text; the modes are generator.quant.quantize.MODES
MODEL_HELP = {"model": "ONNX model (default: official YOLOv4-tiny)",
              "cfg": "darknet cfg to compile from (with --weights; converted to ONNX under --out)",
              "weights": "darknet weights matching --cfg",
              "names": "class-names file, one per line (default: the model's, or names= of the cfg's [net])",
              "yolo_cfg": "darknet cfg whose [yolo] sections give anchors/mask/scale_x_y/classes (for an ONNX model "
                          "without YOLO metadata)",
              "calib": "folder of calibration images (default: the shipped set; bus and zidane held out)"}


def _die(msg: str):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def _flow(fn, *args, **kw):
    """``fn(*args, **kw)``; a FlowError (bad input, failed check) exits 2 with its one line."""
    from generator.flows.inputs import FlowError

    try:
        return fn(*args, **kw)
    except FlowError as e:
        _die(str(e))


def _print_detections(dets):
    for d in dets:
        print(f"  {d['label']:<14} {d['score']:.2f}  box {[round(v) for v in d['box']]}")


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "out": "artifact folder (default build/BOARD/MODEL-HASH/QUANT)", **MODEL_HELP})
def compile(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, out=None, cfg=None, weights=None,
            names=None, yolo_cfg=None, calib=None):
    """1. Compile a model to a board's program; print the schedule.

    Compiles the model into an instruction program for BOARD, prints the per-layer schedule and writes the
    program artifacts (program.bin, weights.bin, manifest.json, schedule) into OUT."""
    from generator.flows.compile import compile_flow
    from generator.codegen.artifacts import schedule_table
    from generator.quant.ranges import calibration_summary

    r = _flow(compile_flow, board, quant, not per_tensor, model, out, cfg, weights, names, yolo_cfg, calib=calib)
    comp = r.compiled
    print(schedule_table(comp))
    secs = ", ".join(f"{k} {v:.1f} s" for k, v in comp.seconds.items())
    print(f"calibration: {calibration_summary(comp.qgraph)} (per region in manifest.json)")
    eq = comp.qgraph.metadata.get("equalization", {})
    if eq:
        print(f"equalization: {len(eq)} of {len(comp.qgraph.regions)} regions, channel gains up to "
              f"{max(max(v) for v in eq.values()):.2f} (per channel in manifest.json)")
    print(f"compiled in {r.seconds:.1f} s ({secs}); {len(comp.program.insns)} instructions, "
          f"{len(comp.program.weights)} weight bytes -> {r.out}")


@task(help={"image": "image file, or a shipped image name (bus, zidane, dog, person, horses, ...); default bus",
            "out": "output folder: detections.json/.png, program artifacts in OUT/artifacts/", "board": "board name",
            "quant": QUANTS, "per_tensor": "per-tensor weight scales", **MODEL_HELP})
def detect(c, image="bus", out="out", board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, cfg=None,
           weights=None, names=None, yolo_cfg=None, calib=None):
    """2. Detect objects in an image on the golden ISA simulator.

    Writes OUT/detections.json and OUT/detections.png. Compiles first (program artifacts in OUT/artifacts/);
    prints the detections and the simulated frame rate."""
    from generator.flows.detect import detect_flow

    r = _flow(detect_flow, image, out, board, quant, not per_tensor, model, cfg, weights, names, yolo_cfg, calib=calib)
    _print_detections(r.detections)
    hw = r.hw
    print(f"golden simulator: {r.cycles} cycles = {r.cycles / hw.clock_mhz / 1e3:.2f} ms at "
          f"{hw.clock_mhz:.0f} MHz ({hw.clock_mhz * 1e6 / r.cycles:.1f} frames/s, int{hw.bits}, "
          f"{hw.tn}x{hw.tm} PE array); simulated in {r.sim_seconds:.1f} s")
    print(f"wrote {r.json} and {r.png} (program artifacts in {r.artifacts})")


@task(help={"board": "board name (boards/*.yaml)",
            "rtl": "also synthesize the RTL with Yosys (synth_xilinx -family xcup; long for 32x32 arrays)",
            "out": "work folder of the RTL synthesis (default build/rtl_resources/BOARD)",
            "no_uram": "forbid URAM288 in the RTL synthesis (default: allowed when the part has URAM)",
            "mapping_only": "stop the RTL synthesis after DSP48E2 / RAM mapping (no LUT/FF figures; much faster)"})
def resources(c, board="zcu19eg", rtl=False, out=None, no_uram=False, mapping_only=False):
    """3. Resources of a board's accelerator vs its part (HLS, RTL).

    The resources of BOARD's accelerator against its part's capacity: the HLS estimate
    (generator/estimate/hls_resources.py) and, with --rtl, the RTL synthesized by Yosys
    (generator/estimate/rtl_resources.py). Exits 2 if it does not fit."""
    from generator.flows.resources import resources_flow

    _flow(resources_flow, board, rtl, out, no_uram, mapping_only, log=print)


@task(help={"board": "board name (boards/*.yaml) or all", "model": "ONNX model (default: the official YOLOv4-tiny)",
            "quant": "the int8 and the int16 mode to evaluate, comma-separated (default int8-asym,int16-sym)",
            "out": "output folder (default build/explore/BOARD)"})
def explore(c, board="zcu19eg", model=None, quant="int8-asym,int16-sym", out=None):
    """4. Design-space exploration: the accelerator configuration for a board and model.

    Searches Tn x Tm, m_axi width and buffer sizes under the RTL resource model, predicts frames/s with the
    latency model on the model's own layers, prints the Pareto front, draws it (pareto.png) and records the
    chosen configuration (chosen.yaml) in build/explore/BOARD."""
    from generator.flows.explore import explore_flow

    _flow(explore_flow, board, model, quant, out, log=print)


@task(help={"board": "board name (boards/*.yaml)", "config": "tiny (8x8 test configuration) | board (the board file's)",
            "unit": "one RTL module out of context (e.g. post, pe_array; default: the whole accelerator)",
            "out": "work folder (default build/timing/BOARD-CONFIG[-UNIT])", "check": "exit 2 when over the limits"})
def timing(c, board="zcu19eg", config="tiny", unit=None, out=None, check=False):
    """5. Timing estimate of the RTL from its Yosys netlist.

    Synthesizes the RTL (or one UNIT) with Yosys, walks the mapped netlist and reports, per endpoint, the longest
    register-to-register path: LUT levels, carry bits, DSP48E2 stages, an estimated delay for UltraScale+ -2 and
    the estimated fmax (generator/estimate/rtl_timing.py); limits 6 LUT levels, 32 carry bits, 300 MHz."""
    from generator.flows.timing import timing_flow

    _flow(timing_flow, board, config, unit, out, check, log=print)


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "image": "image file or shipped image name",
            "out": "artifact folder (default build/BOARD/MODEL-HASH/QUANT)",
            "overlay": "where vivado_bd.tcl puts the .bit + .hwh (default overlay/BOARD/, with --kernel rtl "
                       "overlay/BOARD/rtl/)",
            "require_tools": "fail if vitis_hls or vivado is not on PATH (scripted bitstream builds)",
            "kernel": "hls (default: the HLS kernel) or rtl (the verified RTL as a Vivado IP)", **MODEL_HELP})
def build(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, image="bus", out=None, overlay=None,
          require_tools=False, cfg=None, weights=None, names=None, yolo_cfg=None, kernel="hls", calib=None):
    """6. Build the bitstream sources: the HLS kernel (C-sim bit-exact, report) or the RTL IP; Vivado.

    --kernel hls (default): compiles, renders the HLS kernel (program in its ROM) and the Vitis HLS / Vivado
    scripts, runs the kernel's g++ C-simulation on IMAGE bit-exact against the golden simulator, draws its
    detections, writes report.md (resources, predicted cycles and FPS); then runs vitis_hls and vivado if they are
    on PATH, else names the commands. --kernel rtl: the verified RTL with the program in its ROM as a Vivado IP
    (package_ip.tcl, vivado_bd.tcl, XDC, sources), Verilator-linted; then vivado if on PATH, else the commands."""
    from generator.flows.build import build_flow, build_rtl_flow

    if kernel not in ("hls", "rtl"):
        _die(f"--kernel {kernel!r}: choose hls or rtl")
    if kernel == "rtl":
        r = _flow(build_rtl_flow, board, quant, not per_tensor, model, out, overlay, require_tools, cfg, weights,
                  names, yolo_cfg, log=print, calib=calib)
    else:
        r = _flow(build_flow, board, quant, not per_tensor, model, image, out, overlay, require_tools, cfg, weights,
                  names, yolo_cfg, log=print, calib=calib)
    if r.tools_message:
        print(r.tools_message)


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "overlay": "folder with the overlay .bit + .hwh (default: overlay/BOARD/ when built)",
            "out": "output folder (default: build/package)",
            "kernel": "whose overlay: hls (overlay/BOARD/) or rtl (overlay/BOARD/rtl/, invoke build --kernel rtl)",
            **MODEL_HELP})
def package(c, board="zcu19eg", quant="int8-asym", per_tensor=False, model=None, overlay=None, out=None, cfg=None,
            weights=None, names=None, yolo_cfg=None, kernel="hls", calib=None):
    """7. Deployment package for the board: folder + tarball.

    Program artifacts, host/, the overlay when built (the HLS kernel's or, with --kernel rtl, the RTL IP's), a
    README: what to copy onto BOARD's PYNQ image."""
    from generator.flows.package import package_flow

    d, tar = _flow(package_flow, board, quant, not per_tensor, model, overlay, out, cfg, weights, names, yolo_cfg,
                   kernel, calib=calib)
    print(f"wrote {d}/ and {tar} ({tar.stat().st_size / 1e6:.1f} MB)")
    print(f"on the board: tar xzf {tar.name} && cd {d.name} && sudo -E python3 detect.py images/bus.jpg")


@task(help={"board": "board name (boards/*.yaml)", "image": "image file or shipped image name",
            "quant": QUANTS + "; several, comma-separated (e.g. int8-asym,int16-sym), compares them",
            "per_tensor": "per-tensor weight scales",
            "config": "accelerator: 'board' (the board file, e.g. 32x32), 'small' or 'tiny' (8x8 array)",
            "resolution": "network input size (multiple of 32; 416 = the official model)",
            "out": "output folder (default build/rtl_frame/TAG)"}, aliases=["sim"])
def rtl_frame(c, board="zcu19eg", image="bus", quant="int8-asym,int16-sym", per_tensor=False, config="board",
              resolution=416, out=None):
    """8. Check: one whole frame through the RTL, bit-exact, cycles.

    YOLOv4-tiny through the RTL (cocotb + Verilator), bit-exact check against the golden simulator, detections
    drawn, per-layer cycle report (RTL vs latency model, ideal cycles, PE utilization, stall cycles, DDR bytes,
    FPS); with several --quant values, a table comparing them (e.g. int8 against int16)."""
    from generator.flows.rtl_frame import compare_report, rtl_frame_flow

    reps, table = _flow(rtl_frame_flow, board, image, [q.strip() for q in quant.split(",") if q.strip()],
                        not per_tensor, config, int(resolution), out)
    if table:
        print(compare_report(reps))
        print(f"wrote {table}")


@task(help={"board": "board name", "out": "output folder", "images": "limit the number of images (0: all)"})
def accuracy(c, board="zcu19eg", out="build/accuracy", images=0):
    """9. Check: mAP@0.5 and SQNR of each quantization vs float.

    Accuracy table: float vs int16/int8 (sym/asym, per-channel/per-tensor): mAP@0.5, SQNR, parameter bytes."""
    from generator.eval.accuracy import accuracy_table
    from generator.flows.inputs import out_folder

    accuracy_table(board, _flow(out_folder, out), max_images=int(images))


@task(help={"slow": "include slow tests (full frames)"})
def test(c, slow=False):
    """10. Check: run the test suite (pytest)."""
    args = "-m ''" if slow else ""
    c.run(f"{sys.executable} -m pytest -q --durations=40 {args}", pty=False)   # (the slowest 40: what to trim)


@task(help={"cases": "number of random cases", "seed": "random seed (the cases depend on it alone)",
            "executors": "comma-separated: golden,ref,csim,rtl (golden always runs; the others are compared with it)",
            "configs": "comma-separated hardware configurations (tiny, tiny-8x16, tiny-16x8, tiny-16x24, zcu19eg, zcu102; "
                       "default: all for golden/ref, the tiny ones with csim or rtl)",
            "board": "board file replacing each configuration's own", "case": "run only this case index",
            "json": "write every outcome to this JSON file"})
def fuzz(c, cases=200, seed=1, executors="golden,ref", configs=None, board=None, case=None, json=None):
    """11. Check: random layers through the executors, bit for bit.

    Random layers and small graphs through the executors, compared bit for bit; one reproducer line per
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
    """12. Check: the ONNX backend node tests of known operators.

    The node tests shipped in the onnx wheel, for every operator the compiler knows: each runs through the golden
    simulator (and the host tail) within quantization tolerance of its expected output, or is refused with one
    line naming the node; table and counts. Exits 1 when a test fails."""
    from generator.eval.conformance import main

    sys.exit(main((["-v"] if verbose else []) + ([filter] if filter else [])))


@task(help={"image": "image file or shipped image name (default bus)", "board": "board name", "quant": QUANTS,
            "per_tensor": "per-tensor weight scales",
            "out": "report folder (default build/compare/MODEL-QUANT)", **MODEL_HELP})
def compare(c, model=None, image="bus", board="zcu19eg", quant="int8-asym", per_tensor=False, out=None, cfg=None,
            weights=None, names=None, yolo_cfg=None, calib=None):
    """13. Check: float (onnxruntime) against the quantized program (golden simulator) on one image.

    SQNR in dB per accelerator layer and per model output, detection agreement for a YOLO detector; writes
    compare.md, compare.json and sqnr.png; the last line is `min SQNR: X dB` over the model outputs."""
    from generator.flows.compare import compare_flow

    _flow(compare_flow, model, image, board, quant, not per_tensor, out, cfg, weights, names, yolo_cfg, calib=calib)


@task(help={"out": "Markdown file for the table (default build/activations.md)"})
def activations(c, out="build/activations.md"):
    """14. Check: the error of POST's activation tables against the float functions (per activation, int8 / int16).

    Every integer input of each table, as the compiler builds it, against the function at the same input: the
    largest and RMS error in output steps and the SQNR in dB (generator/eval/act_error.py)."""
    from generator.eval.act_error import error_table, markdown

    text = markdown(error_table())
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text + "\n")
    print(text)


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "program": "program.bin to disassemble (default: compile)", "limit": "max lines (0: all)"})
def disasm(c, board="zcu19eg", quant="int8-asym", per_tensor=False, program=None, limit=0):
    """Tool: disassemble a program, one instruction per line."""
    from generator.flows.disasm import disasm_flow

    lines = _flow(disasm_flow, board, quant, not per_tensor, program)
    print("\n".join(lines[:int(limit)] if int(limit) else lines))

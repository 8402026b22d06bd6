"""Project tasks (``invoke --list``), numbered in the order of use. Run inside the virtual environment that
``./setup.sh`` creates. Each task parses its arguments, calls one flow of ``generator/flows/`` (or a check of
``generator/eval/``) and prints; every error exits 2 with one ``error: ...`` line."""
from __future__ import annotations

import os
import sys

from invoke import task
from generator.spec.board import DEFAULT_BOARD
from generator.quant.quantize import DEFAULT_QUANT
from generator.flows.cli import (MODEL_HELP, PRE_HELP, QUANTS, choice as _choice, die as _die,
                                  int_option as _int,
                                  pre_option as _pre, precision_option as _precision,
                                  print_detections as _print_detections,
                                  quants as _quants, request as _request, run_flow as _flow,
                                  write_output as _write)
from generator.flows.cli_errors import one_line_parse_errors

one_line_parse_errors(_die)


@task(help={"board": "board name (boards/*.yaml)", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "out": "artifact folder (default build/BOARD/MODEL-HASH/QUANT)", **MODEL_HELP, **PRE_HELP})
def compile(c, board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_tensor=False, model=None, out=None, cfg=None, weights=None,
            names=None, yolo_cfg=None, calib=None, input_size=None, precision=None, pre=None):
    """1. Compile a model to a board's program; print the schedule.

    Compiles the model into an instruction program for BOARD, prints the per-layer schedule and writes the
    program artifacts (program.bin, weights.bin, manifest.json, schedule) into OUT."""
    from generator.flows.compile import compile_flow
    from generator.flows.artifacts import schedule_table
    from generator.quant.ranges import calibration_summary

    target, source = _request(board, quant, per_tensor, precision, model, cfg, weights, names, yolo_cfg, calib,
                              input_size, pre)
    r = _flow(compile_flow, target, source, out)
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
            "quant": QUANTS, "per_tensor": "per-tensor weight scales", **MODEL_HELP, **PRE_HELP})
def detect(c, image="bus", out="out", board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_tensor=False, model=None, cfg=None,
           weights=None, names=None, yolo_cfg=None, calib=None, input_size=None, precision=None, pre=None):
    """2. Detect objects in an image on the golden ISA simulator.

    Writes OUT/detections.json and OUT/detections.png. Compiles first (program artifacts in OUT/artifacts/);
    prints the detections and the simulated frame rate."""
    from generator.flows.detect import detect_flow

    target, source = _request(board, quant, per_tensor, precision, model, cfg, weights, names, yolo_cfg, calib,
                              input_size, pre)
    r = _flow(detect_flow, image, out, target, source)
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
            "mapping_only": "stop the RTL synthesis after DSP48E2 / RAM mapping (no LUT/FF figures; much faster)",
            "config": "board (the board file's accelerator) or another of generator/exec/rtl.py's CONFIGS "
                      "(e.g. 32x48: zcu19eg's single-rate block; 32x40-2x: its pumped block on another board)"})
def resources(c, board=DEFAULT_BOARD, rtl=False, out=None, no_uram=False, mapping_only=False, config="board"):
    """3. Resources of a board's accelerator vs its part (HLS, RTL).

    The resources of BOARD's accelerator against its part's capacity: the HLS estimate
    (generator/estimate/hls_resources.py) and, with --rtl, the RTL synthesized by Yosys
    (generator/estimate/rtl_resources.py). Exits 2 if it does not fit."""
    from generator.flows.resources import resources_flow

    _flow(resources_flow, board, rtl, out, no_uram, mapping_only, log=print, config=config)


@task(help={"board": "board name (boards/*.yaml) or all", "model": "ONNX model (default: the official YOLOv4-tiny)",
            "quant": "the int8 and the int16 mode to evaluate, comma-separated (default int8-asym,int16-sym)",
            "out": "output folder (default build/explore/BOARD)",
            "hp_ports": "instead: every candidate on four HP ports beside the same on two (int8 frames/s)"})
def explore(c, board=DEFAULT_BOARD, model=None, quant="int8-asym,int16-sym", out=None, hp_ports=False):
    """4. Design-space exploration: the accelerator configuration for a board and model.

    Searches Tn x Tm, m_axi width and buffer sizes under the RTL resource model, predicts frames/s with the
    latency model on the model's own layers, prints the Pareto front, draws it (pareto.png) and records the
    chosen configuration (chosen.yaml) in build/explore/BOARD."""
    from generator.flows.explore import explore_flow, ports_flow

    _quants(quant, several=True)
    if hp_ports:
        _flow(ports_flow, board, model, quant, log=print)
    else:
        _flow(explore_flow, board, model, quant, out, log=print)


@task(help={"board": "board name (boards/*.yaml)",
            "config": "board (the board file's), tiny (the 8x8 test configuration), or one of generator/exec/rtl.py's "
                      "CONFIGS (tiny-2x, small, small-2hp, small-4hp, small-2x, 32x40-2x, 32x48)",
            "unit": "one RTL module out of context (e.g. post, pe_array; default: the whole accelerator)",
            "out": "work folder (default build/timing/BOARD-CONFIG[-UNIT])", "check": "exit 2 when over the limits"})
def timing(c, board=DEFAULT_BOARD, config="tiny", unit=None, out=None, check=False):
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
            "kernel": "hls (default: the HLS kernel) or rtl (the verified RTL as a Vivado IP)", **MODEL_HELP, **PRE_HELP})
def build(c, board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_tensor=False, model=None, image="bus", out=None, overlay=None,
          require_tools=False, cfg=None, weights=None, names=None, yolo_cfg=None, kernel="hls", calib=None,
          input_size=None, precision=None, pre=None):
    """6. Build the bitstream sources: the HLS kernel (C-sim bit-exact, report) or the RTL IP; Vivado.

    --kernel hls (default): compiles, renders the HLS kernel (program in its ROM) and the Vitis HLS / Vivado
    scripts, runs the kernel's g++ C-simulation on IMAGE bit-exact against the golden simulator, draws its
    detections, writes report.md (resources, predicted cycles and FPS); then runs vitis_hls and vivado if they are
    on PATH, else names the commands. --kernel rtl: the verified RTL with the program in its ROM as a Vivado IP
    (package_ip.tcl, vivado_bd.tcl, XDC, sources), Verilator-linted; then vivado if on PATH, else the commands."""
    from generator.flows.build import build_flow, build_rtl_flow

    _choice("--kernel", kernel, ("hls", "rtl"))
    target, source = _request(board, quant, per_tensor, precision, model, cfg, weights, names, yolo_cfg, calib,
                              input_size, pre)
    if kernel == "rtl":
        r = _flow(build_rtl_flow, target, source, out, overlay, require_tools, log=print)
    else:
        r = _flow(build_flow, target, source, image, out, overlay, require_tools, log=print)
    if r.tools_message:
        print(r.tools_message)


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "overlay": "folder with the overlay .bit + .hwh (default: overlay/BOARD/ when built)",
            "out": "output folder (default: build/package)",
            "kernel": "whose overlay: hls (overlay/BOARD/) or rtl (overlay/BOARD/rtl/, invoke build --kernel rtl)",
            **MODEL_HELP, **PRE_HELP})
def package(c, board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_tensor=False, model=None, overlay=None, out=None, cfg=None,
            weights=None, names=None, yolo_cfg=None, kernel="hls", calib=None, input_size=None, precision=None,
            pre=None):
    """7. Deployment package for the board: folder + tarball.

    Program artifacts, host/, the overlay when built (the HLS kernel's or, with --kernel rtl, the RTL IP's), a
    README: what to copy onto BOARD's PYNQ image."""
    from generator.flows.package import package_flow

    _choice("--kernel", kernel, ("hls", "rtl"))
    target, source = _request(board, quant, per_tensor, precision, model, cfg, weights, names, yolo_cfg, calib,
                              input_size, pre)
    d, tar = _flow(package_flow, target, source, overlay, out, kernel)
    print(f"wrote {d}/ and {tar} ({tar.stat().st_size / 1e6:.1f} MB)")
    print(f"on the board: tar xzf {tar.name} && cd {d.name} && sudo -E python3 detect.py images/bus.jpg")


@task(help={"board": "board name (boards/*.yaml)", "image": "image file or shipped image name",
            "quant": QUANTS + "; several, comma-separated (e.g. int8-asym,int16-sym), compares them",
            "per_tensor": "per-tensor weight scales",
            "config": "accelerator: 'board' (the board file's), 'small' or 'tiny' (8x8 arrays), or another of "
                      "generator/exec/rtl.py's CONFIGS (e.g. 32x48: zcu19eg's single-rate block)",
            "resolution": "network input size (multiple of 32; default 416 = the official model)",
            "out": "output folder (default build/rtl_frame/TAG)", "precision": MODEL_HELP["precision"],
            "pre": "image (default): PRE in the accelerator, the image goes in as the camera frame (the prologue "
                   "writes its input, the main program runs the network and the next frame's PRE in bands), priced "
                   "for the image's size; WxH: priced for that size; host: the host's pre-processing"},
      aliases=["sim"])
def rtl_frame(c, board=DEFAULT_BOARD, image="bus", quant="int8-asym,int16-sym", per_tensor=False, config="board",
              resolution=None, out=None, precision=None, pre="image"):
    """8. Check: one whole frame through the RTL, bit-exact, cycles.

    YOLOv4-tiny through the RTL (cocotb + Verilator), bit-exact check against the golden simulator, detections
    drawn, per-layer cycle report (RTL vs latency model, ideal cycles, PE utilization, stall cycles, DDR bytes,
    FPS); with several --quant values, a table comparing them (e.g. int8 against int16)."""
    from generator.exec.rtl import CONFIGS
    from generator.flows.rtl_frame import compare_report, rtl_frame_flow

    quants, config = _quants(quant, several=True), _choice("--config", config, CONFIGS)
    res = _int("--resolution", resolution, min=32, default=416)
    if res % 32:
        _die(f"--resolution {resolution}: not a multiple of 32")
    reps, table = _flow(rtl_frame_flow, board, image, quants, not per_tensor, config, res, out,
                        precision=_precision(precision),
                        pre="image" if pre == "image" else None if pre == "host" else _pre(pre))
    if table:
        print(compare_report(reps))
        print(f"wrote {table}")


@task(help={"board": "board name", "out": "output folder", "images": "limit the number of images (default 0: all)"})
def accuracy(c, board=DEFAULT_BOARD, out="build/accuracy", images=None):
    """9. Check: mAP@0.5 and SQNR of each quantization vs float.

    Accuracy table: float vs int16/int8 (sym/asym, per-channel/per-tensor): mAP@0.5, SQNR, parameter bytes."""
    from generator.flows.accuracy import accuracy_table
    from generator.flows.inputs import out_folder

    n = _int("--images", images, min=0, default=0)
    accuracy_table(board, _flow(out_folder, out), max_images=n)


@task(help={"slow": "every test: the default tier and the slow one (whole frames, Yosys syntheses, long RTL runs)",
            "workers": "pytest-xdist worker processes (default auto: one per core; 0: one process, no xdist)"})
def test(c, slow=False, workers=None):
    """10. Check: run the test suite (pytest): the fast default tier, or everything with --slow.

    `invoke test`: every test not marked slow (pyproject.toml), over the cores by pytest-xdist (tests sharing a build
    in one worker, the costliest work units first by tests/cpu_costs.json: tests/conftest.py; one BLAS thread per
    worker). `invoke test --slow`: every test. Both print the
    40 slowest tests (what to trim)."""
    n, tier = _int("--workers", workers, min=0, default=None), "-m ''" if slow else ""
    xdist = "-p no:xdist" if n == 0 else f"-n {'auto' if n is None else n} --dist loadgroup"
    env = {} if n == 0 else {k: os.environ.get(k, "1") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    c.run(f"{sys.executable} -m pytest -q --durations=40 {xdist} {tier}", pty=False, env=env)


@task(help={"cases": "number of random cases (default 200)", "seed": "random seed, >= 0 (default 1; the cases depend "
                                                                    "on it alone)",
            "executors": "comma-separated: golden,ref,csim,rtl (golden always runs; the others are compared with it)",
            "configs": "comma-separated hardware configurations (tiny, tiny-8x16, tiny-16x8, tiny-16x24, tiny-16x32-2hp, "
                       "tiny-2x, tiny-16x32-4hp, zcu19eg, zcu102; default: all for golden/ref, the tiny ones with csim "
                       "or rtl, without the 2- and 4-HP-port ones when csim runs)",
            "board": "board file replacing each configuration's own", "case": "run only this case index",
            "json": "write every outcome to this JSON file"})
def fuzz(c, cases=None, seed=None, executors="golden,ref", configs=None, board=None, case=None, json=None):
    """11. Check: random layers through the executors, bit for bit.

    Random layers and small graphs through the executors, compared bit for bit; one reproducer line per
    failure; last line 'N passed, M failed'. Exits 1 when a case fails."""
    from generator.eval import fuzz as fz
    from generator.flows.inputs import check_target

    n, s, k = _int("--cases", cases, 1, 200), _int("--seed", seed, 0, 1), _int("--case", case, 0)
    if json:
        _flow(check_target, json, "file", "the --json outcomes")
    try:
        outs = fz.fuzz(n, s, [e.strip() for e in executors.split(",") if e.strip()],
                       [x.strip() for x in configs.split(",")] if configs else None, board, k)
    except fz.FuzzError as e:
        _die(str(e))
    if json:
        _write(json, fz.outcomes_json(outs))
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


@task(help={"image": "image file or shipped image name (bus, zidane, dog, ...; page: a drawn document page); "
                     "default bus", "board": "board name", "quant": QUANTS,
            "per_tensor": "per-tensor weight scales",
            "out": "report folder (default build/compare/MODEL-QUANT)",
            **MODEL_HELP, "model": "ONNX model, or doclaynet (the DocLayNet YOLOv8n setup.sh fetches); default: "
                                   "the official YOLOv4-tiny"})
def compare(c, model=None, image="bus", board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_tensor=False, out=None, cfg=None,
            weights=None, names=None, yolo_cfg=None, calib=None, input_size=None, precision=None):
    """13. Check: float (onnxruntime) against the quantized program (golden simulator) on one image.

    For a YOLO detector first the detection agreement (mAP@0.5 of the quantized detections against the float
    ones); SQNR in dB per accelerator layer and per model output, a YOLO output's box coordinates (pixels) and
    scores (after the sigmoid) also apart; writes compare.md, compare.json and sqnr.png; the last line is
    `min SQNR: X dB` over the layers and the model outputs (whole, boxes and scores). --model doclaynet: the
    DocLayNet YOLOv8n setup.sh fetches; --image page: the drawn document page."""
    from generator.flows.compare import compare_flow

    target, source = _request(board, quant, per_tensor, precision, model, cfg, weights, names, yolo_cfg, calib,
                              input_size)
    _flow(compare_flow, target, source, image, out)


@task(help={"out": "Markdown file for the table (default build/activations.md)",
            "model": "also measure every table layer of this ONNX model or shipped name (doclaynet) over its "
                     "calibrated range, int8-asym and int16-sym",
            "board": "board name (with --model)",
            "readme": "instead: rewrite README.md's activation table from the records (generator/ir/activations.py)"})
def activations(c, out="build/activations.md", model=None, board=DEFAULT_BOARD, readme=False):
    """14. Check: the error of POST's activation tables against the float functions (per activation, int8 / int16).

    Pre-activation values on a dense grid, through POST's table as the compiler builds it (input rounding, table,
    identity above it), against the function: the largest and RMS error in output steps and the SQNR in dB, over
    [-8, 8] for every activation and, with --model, over each table layer's calibrated range
    (generator/eval/act_error.py, generator/flows/activations.py)."""
    from generator import ROOT_DIR
    from generator.flows.activations import activations_flow, update_readme

    if readme:
        _flow(update_readme, ROOT_DIR / "README.md")
        return
    _flow(activations_flow, out, model, board)


@task(help={"board": "board name", "quant": "comma-separated modes (default int8-asym,int16-sym)",
            "model": MODEL_HELP["model"], "out": "Markdown report (default build/pre.md)"})
def pre(c, board=DEFAULT_BOARD, quant="int8-asym,int16-sym", model=None, out="build/pre.md"):
    """15. Check: PRE's integer resize (host/pre.py) against the float resize, on every shipped image.

    Both inputs through the golden simulator: input elements differing, SQNR of each input and of the first layer,
    detections and their agreement (mAP@0.5); generator/flows/pre_check.py."""
    from generator.flows.pre_check import pre_flow

    target, source = _request(board, DEFAULT_QUANT, False, None, model)
    _flow(pre_flow, out, _quants(quant, several=True), target, source)


@task(help={"image": "image file or shipped image name (default bus)", "frames": "frames to run (default 5)",
            "cores": "host CPU cores to pin to, comma-separated (default 0: one core, as taskset -c 0)",
            "out": "Markdown report (default build/stream.md)", "board": "board name", "quant": QUANTS,
            "per_tensor": "per-tensor weight scales", **MODEL_HELP, **PRE_HELP})
def stream(c, image="bus", frames=None, cores="0", out="build/stream.md", board=DEFAULT_BOARD, quant=DEFAULT_QUANT,
           per_tensor=False, model=None, cfg=None, weights=None, names=None, yolo_cfg=None, calib=None,
           input_size=None, precision=None, pre=None):
    """16. Check: end to end, frames/s a user gets: the host's pre/post time per frame beside the accelerator's.

    The board's driver on the golden-simulator device, the host pinned to --cores; pre- and post-processing
    measured per frame (fastest of --frames), the accelerator by its latency-model cycles; frames/s accelerator-only
    and end to end on one and two host cores (generator/flows/stream.py)."""
    from generator.flows.stream import stream_flow

    try:
        cpus = tuple(int(x) for x in str(cores).split(",") if x.strip())
    except ValueError:
        _die(f"--cores {cores}: expected comma-separated CPU indices (e.g. 0 or 0,1)")
    target, source = _request(board, quant, per_tensor, precision, model, cfg, weights, names, yolo_cfg, calib,
                              input_size, pre)
    _flow(stream_flow, target, source, image, _int("--frames", frames, min=1, default=5), cpus, out)


@task(help={"board": "board name", "quant": QUANTS, "per_tensor": "per-tensor weight scales",
            "program": "program.bin to disassemble (default: compile)",
            "limit": "max lines (default 0: all); only these instructions are read"})
def disasm(c, board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_tensor=False, program=None, limit=None):
    """Tool: disassemble a program, one instruction per line.

    Streams the program: prints each instruction as it is decoded; a word that does not decode ends the listing
    with one error line naming its index and byte offset (exit 2)."""
    from generator.flows.disasm import disasm_flow
    from generator.flows.inputs import FlowError

    n = _int("--limit", limit, min=0, default=0)
    lines = _flow(disasm_flow, board, _quants(quant) if program is None else quant, not per_tensor, program, limit=n)
    try:
        for line in lines:
            print(line)
    except FlowError as e:
        sys.stdout.flush()
        _die(str(e))
    except BrokenPipeError:               # `invoke disasm | head`: the reader has gone; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)

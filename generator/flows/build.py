"""The build flow (``invoke build``): compile, render the HLS kernel (program in its ROM) and the Vitis HLS /
Vivado scripts, C-simulate the kernel on an image bit-exact against the golden simulator, estimate its resources
and cycles, write report.md and the detections; then run vitis_hls and vivado when they are on PATH.

``kernel="rtl"`` (:func:`build_rtl_flow`) takes the second bitstream path instead: the verified RTL of ``rtl/``
with the program in its instruction ROM, packaged as a Vivado IP (:mod:`generator.backends.rtl.ip`: sources,
package_ip.tcl, vivado_bd.tcl, the XDC), linted by Verilator; then vivado when it is on PATH."""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from host.fileio import atomic_write
from generator.flows.inputs import FlowError, check_artifact_target, check_target, flow_errors, out_folder, real_image
from generator.flows.request import ModelSource, Target, artifact_dir, compile_request, planned_artifact_dir


def _check_build_targets(target: Target, source: ModelSource, out, files=(), folders=()) -> None:
    """Probe, before the compile, the artifact folder the build will write (:func:`planned_artifact_dir`) and its
    ``files`` and ``folders`` (:func:`~generator.flows.inputs.check_target`). Raises FlowError naming the path."""
    d = planned_artifact_dir(target, source, out)
    if d is None:   # (no model file: the compile refuses it with its own message)
        return
    check_artifact_target(d)
    for f in files:
        check_target(d / f, "file", f"the build's {f}")
    for f in folders:
        check_target(d / f, "folder", f"the build's {f}/")


@dataclass
class BuildResult:
    """``out``: the artifact folder (report.md, detections.png/.json, hls/); ``check``: the C-simulation's result
    (:func:`generator.exec.csim.build_and_check`); ``cycles``: {bits: latency-model cycles per frame} for int8
    and int16; ``bits``: the compiled precision; ``clock_mhz``: PL clock; ``kernel_estimate``: {"hls", "model",
    "ratio"} (:func:`generator.estimate.hls_cycles.compare`); ``detections``; ``tools_message``: the Vitis /
    Vivado commands to run by hand when the tools are not on PATH ("" when they ran); ``mixed``: (the per-layer
    precision's label, :func:`precision_label`, and the program's cycles per frame), or None for a uniform build."""
    out: Path
    check: dict
    cycles: dict
    bits: int
    clock_mhz: float
    kernel_estimate: dict
    detections: list
    tools_message: str = ""
    mixed: tuple | None = None

    def summary(self) -> str:
        """Three lines: the C-simulation verdict with FPS of the latency model, the kernel estimate, the files."""
        c, k, mhz = self.cycles, self.kernel_estimate, self.clock_mhz
        cyc, what = (self.mixed[1], f" (precision {self.mixed[0]})") if self.mixed else (c[self.bits], "")
        return (f"C-simulation bit-exact with the golden simulator ({self.check['csim_seconds']:.1f} s); latency "
                f"model predicts {cyc} cycles = {mhz * 1e6 / cyc:.1f} FPS at {mhz:g} MHz{what} "
                f"(int8/int16 throughput {c[16] / c[8]:.2f}x); {len(self.detections)} detections\n"
                f"kernel estimate from its loop structure (not a synthesis result): hls-cycles {k['hls']}, "
                f"model-cycles {k['model']} (ratio {k['ratio']:.2f})\n"
                f"wrote {self.out / 'report.md'} and {self.out / 'detections.png'}")


def _rom_check(comp, log) -> tuple:
    """(HLS estimate, whether the program is baked into the instruction ROM) for ``comp``: the ROM when the
    program's instructions fit the part beside the buffers, else an empty ROM (the kernel fetches the program from
    DDR, ``fetch_ddr`` 1, as the PYNQ driver always does; logged). Raises FlowError when even that does not fit."""
    from generator.estimate import hls_resources

    n = len(comp.program.insns)
    try:
        return hls_resources.check(comp.board, n), True
    except hls_resources.ResourceError as e:
        try:
            est = hls_resources.check(comp.board, 0)
        except hls_resources.ResourceError:
            raise FlowError(str(e)) from None
    log(f"the program's {n} instructions do not fit an instruction ROM beside the buffers of {comp.board.name} "
        f"({', '.join(f'{k} {v:g}' for k, v in hls_resources.estimate(comp.board, n).used().items())}): the kernel "
        f"gets an empty ROM and fetches the program from DDR (fetch_ddr = 1, as the PYNQ driver does)")
    return est, False


def _rtl_rom_fits(comp, log) -> bool:
    """Whether the RTL IP's instruction ROM of ``comp``'s program (INSN_BITS-wide words in block RAM,
    ``rtl/fetch_dispatch.sv``) fits the part beside the block's memories (:func:`generator.estimate.rtl_model.estimate`);
    if not, logs that the IP gets no ROM and fetches the program from DDR (as the PYNQ driver does)."""
    from generator.estimate import rtl_model
    from generator.spec.isa import INSN_BITS
    from generator.spec.memories import bram36_for

    n = len(comp.program.insns)
    used, rom = rtl_model.estimate(comp.board).bram36, bram36_for(n, INSN_BITS)
    if used + rom <= comp.board.resources.bram36:
        return True
    log(f"the program's {n} instructions would take {rom:g} BRAM36 of instruction ROM beside the block's {used:g} "
        f"({comp.board.resources.bram36} on {comp.board.part}): the RTL IP gets no ROM and fetches the program "
        f"from DDR (fetch_ddr = 1, as the PYNQ driver does)")
    return False


def _csim_check(comp, img, hls_dir: Path, overlay, rom: bool = True) -> tuple[dict, dict]:
    """Render the deployment kernel into ``hls_dir`` (the program in its ROM, or with ``rom`` False fetched from
    DDR) and C-simulate it on ``img``; returns (check, DDR bases).
    Raises FlowError when it fails or differs from the golden simulator."""
    from generator.backends import hls
    from generator.exec import csim
    from generator.exec.runtime import build_ddr
    from generator.flows.pipeline import quantize_image
    from generator.spec import isa

    ddr, bases = build_ddr(comp.program, quantize_image(comp, img))
    try:
        r = csim.build_and_check(comp.board, comp.program, ddr, bases, hls_dir,
                                overlay_dir=Path(overlay).resolve() if overlay else None, rom=rom)
    except hls.HlsError as e:
        raise FlowError(str(e)) from None
    if not r["bit_exact"]:
        raise FlowError(f"C-simulation differs from the golden simulator: status {isa.status_names(r['status'])}, "
                        f"{r['diff_bytes']} DDR bytes differ")
    return r, bases


def hls_program_cycles(comp) -> int:
    """Latency-model cycles per frame of ``comp``'s program on the HLS kernel: the program's own cycles on a
    single-rate board; on a double-pumped one (``pump`` 2, RTL only) the same program timed on the single-rate
    machine (:meth:`generator.spec.hw.HwConfig.single_rate`), which the HLS kernel is."""
    from generator.spec.timing_engine import program_cycles

    hw = comp.program.hw
    return comp.program.cycles if hw.pump == 1 else program_cycles(hw.single_rate(), comp.program.insns)


def _frame_cycles(comp, target: Target, source: ModelSource, quant_other: str) -> dict:
    """Latency-model cycles per frame on the HLS kernel (:func:`hls_program_cycles`) of the model compiled
    uniformly in ``comp``'s mode (``comp`` itself unless it has a per-layer precision) and in ``quant_other``:
    {bits: cycles}."""
    base = compile_request(target.uniform(), source, progress=False) if target.precision else comp
    other = compile_request(target.with_quant(quant_other), source, progress=False)
    return {c.hw.bits: hls_program_cycles(c) for c in (base, other)}


def precision_label(comp) -> str:
    """"" for a uniform compile; for a per-layer precision its spec and how many layers write int16, e.g.
    ``"auto25: 17 of 21 layers int16"``."""
    p = comp.qgraph.metadata.get("precision")
    if not p:
        return ""
    return f"{p.get('spec', '')}: {len(p.get('int16_layers', []))} of {len(list(comp.qgraph.macro_nodes()))} " \
           f"layers int16"


def _run_tools(hls_dir: Path, require_tools: bool) -> str:
    """Run vitis_hls then vivado in ``hls_dir`` when both are on PATH and return ""; else the message naming the
    commands (FlowError with it when ``require_tools``)."""
    from generator.backends import hls

    missing = [t for t, _ in hls.tool_commands(hls_dir) if shutil.which(t) is None]
    if missing:
        msg = hls.missing_tools_message(hls_dir, missing)
        if require_tools:
            raise FlowError(msg)
        return msg
    subprocess.run(["vitis_hls", "-f", "run_hls.tcl"], cwd=hls_dir, check=True)
    subprocess.run(["vivado", "-mode", "batch", "-source", "vivado_bd.tcl"], cwd=hls_dir, check=True)
    return ""


@dataclass
class RtlBuildResult:
    """``out``: the RTL build folder (``src/``, package_ip.tcl, vivado_bd.tcl, accel_rtl_ooc.xdc, README.txt);
    ``files``: {name: Path}; ``n_insns``: instructions in the ROM; ``cycles``: latency-model cycles per frame;
    ``clock_mhz``: PL clock; ``fmax_line``: frames/s at the fmax ``invoke timing`` estimated, or how to get it;
    ``tools_message``: the Vivado commands to run by hand ("" when they ran)."""
    out: Path
    files: dict
    n_insns: int
    cycles: int
    clock_mhz: float
    fmax_line: str
    tools_message: str = ""

    def summary(self) -> str:
        """Lines naming what was written, the lint verdict and the predicted frame time."""
        mhz = self.clock_mhz
        return (f"RTL IP written: {len(self.files['sources'])} sources in {self.out / 'src'}, "
                f"{', '.join(self.files['tcl'])} in {self.out}; Verilator lint (-Wall) clean\n"
                f"program: {self.n_insns} instructions in the IP's ROM; latency model {self.cycles} cycles = "
                f"{mhz * 1e6 / self.cycles:.1f} FPS at the board's {mhz:g} MHz\n{self.fmax_line}")


@flow_errors
def build_rtl_flow(target: Target = Target(), source: ModelSource = ModelSource(), out=None, overlay=None,
                   require_tools=False, log=print) -> RtlBuildResult:
    """``invoke build --kernel rtl``: compile ``source`` for ``target``, write its artifacts and the RTL IP build
    (:func:`generator.backends.rtl.ip.render_ip`) into ``<out>/rtl/``, lint it with Verilator, and run Vivado
    (package_ip.tcl, then vivado_bd.tcl) when it is on PATH; ``overlay``: where vivado_bd.tcl puts the .bit + .hwh
    (default overlay/<board>/rtl/). Raises FlowError (RtlError, lint findings, a missing Vivado with
    ``require_tools``)."""
    from generator.backends.rtl import RtlError
    from generator.backends.rtl import ip
    from generator.flows.artifacts import write_artifacts
    from generator.flows.timing import fmax_line

    od = out_folder(out) if out else None
    if overlay:
        out_folder(overlay)
    source = source.resolved(od)
    _check_build_targets(target, source, out, folders=("rtl",))
    comp = compile_request(target, source)
    d = Path(write_artifacts(comp, artifact_dir(comp, out, target, source))) / "rtl"
    rom = _rtl_rom_fits(comp, log)
    log(f"writing the RTL IP ({'program in its instruction ROM' if rom else 'no instruction ROM'}) into {d} and "
        f"linting it with Verilator ...")
    try:
        r = ip.render_ip(comp.board, d, comp.program.blob if rom else None, overlay, jobs=4)
        ip.lint(r["sources"])
    except RtlError as e:
        raise FlowError(str(e)) from None
    cycles = comp.program.cycles
    atomic_write(d / "README.txt", ip.missing_tools_message(d) + "\n")
    res = RtlBuildResult(d, {"sources": r["sources"], "tcl": list(r["files"])}, len(comp.program.insns), cycles,
                         comp.board.pl_clock_mhz, fmax_line(cycles, comp.board.name, "board",
                                                            comp.board.pl_clock_mhz)[1])
    log(res.summary())
    try:
        res.tools_message = ip.run_tools(d, require_tools)
    except RtlError as e:
        raise FlowError(str(e)) from None
    return res


@flow_errors
def build_flow(target: Target = Target(), source: ModelSource = ModelSource(), image="bus", out=None,
               overlay=None, require_tools=False, log=print) -> BuildResult:
    """The whole build of the target board's accelerator for ``source`` (see the module docstring); ``out``: the
    artifact folder (default build/<board>/<model key>/<quant><suffix>/); ``overlay``: where vivado_bd.tcl puts the .bit + .hwh;
    ``require_tools``: fail when vitis_hls or vivado is missing; ``log`` gets the progress and summary lines
    (:meth:`BuildResult.summary`) before the tools run. Raises FlowError."""
    from generator.estimate import hls_cycles, hls_resources
    from generator.exec.runtime import read_tensor
    from generator.flows.hls_report import report_md
    from generator.flows.artifacts import write_artifacts
    from generator.flows.pipeline import detections_from_heads
    from host.draw import draw_detections

    od = out_folder(out) if out else None
    if overlay:
        out_folder(overlay)
    img = real_image(image)
    source = source.resolved(od)
    _check_build_targets(target, source, out, ("detections.png", "detections.json", "report.md"), ("hls",))
    try:   # the PE array and buffers against the part, before the compile (the ROM's share: after it)
        hls_resources.check(target.checked()[0])
    except hls_resources.ResourceError as e:
        raise FlowError(str(e)) from None
    comp = compile_request(target, source, require_detection=True)
    est, rom = _rom_check(comp, log)
    d = Path(write_artifacts(comp, artifact_dir(comp, out, target, source)))
    log(f"rendering the HLS kernel and scripts into {d / 'hls'} and running its C-simulation (g++) on {image} ...")
    r, bases = _csim_check(comp, img, d / "hls", overlay, rom)
    bits = comp.hw.bits
    cycles = _frame_cycles(comp, target, source, "int16-sym" if bits == 8 else "int8-asym")
    try:
        kest = hls_cycles.compare(comp.board, bits, comp.program.insns)
    except hls_cycles.EstimateError as e:
        raise FlowError(str(e)) from None
    heads = {o: read_tensor(comp.program, comp.qgraph, r["ddr"], bases, o) for o in comp.qgraph.outputs}
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    draw_detections(img, dets, d / "detections.png", num_classes=len(comp.names))
    atomic_write(d / "detections.json", json.dumps(dets, indent=1))
    label = precision_label(comp)
    mixed = (label, hls_program_cycles(comp)) if label else None
    atomic_write(d / "report.md", report_md(comp.board, comp.quant.name, len(comp.program.insns), cycles,
                                                bits, r, Path(image).name, dets, est, kest, mixed, rom))
    res = BuildResult(d, r, cycles, bits, comp.board.pl_clock_mhz, kest, dets, mixed=mixed)
    log(res.summary())
    res.tools_message = _run_tools(d / "hls", require_tools)
    return res

"""The timing flow (``invoke timing``): synthesize a board's RTL (or one unit of it, out of context) with the Yosys
flow of :mod:`generator.estimate.rtl_resources`, then estimate its register-to-register paths from the mapped
netlist with :mod:`generator.estimate.rtl_timing` (an estimate from an open netlist, not Vivado's timing)."""
from __future__ import annotations

import json
from pathlib import Path

from host.fileio import atomic_write
from generator import build_dir
from generator.flows.inputs import FlowError, out_folder
from generator.spec.board import DEFAULT_BOARD

CONFIGS = ("tiny", "board", "small", "small-2hp", "tiny-2x", "small-2x", "32x40-2x", "32x48")
#: units not in the design (not in RTL_SOURCES), synthesized out of context with their own sources (rtl/): none
#: now (the double-pumped PE array, rtl/pe_array_2x.sv, is in RTL_SOURCES: a unit of the design as any other)
UNIT_SOURCES: dict = {}


def timing_flow(board=DEFAULT_BOARD, config="tiny", unit=None, out=None, check=False, log=print):
    """Synthesize ``board``'s RTL in configuration ``config`` (``tiny``: the 8x8 test configuration, ``board``:
    the board file's) -- the whole accelerator, or only the module ``unit`` out of context -- into ``out``
    (default build/timing/<board>-<config>[-<unit>]) and log the timing report; writes ``timing.md``,
    ``timing.json`` and the Yosys netlist (``yosys/netlist.json``) there. Returns the
    :class:`~generator.estimate.rtl_timing.TimingReport`.

    Raises FlowError for a bad board, configuration, unit or work folder, a failed synthesis, and with ``check``
    when the design is over the limits (:data:`~generator.estimate.rtl_timing.MAX_LUT_LEVELS` LUT levels,
    :data:`~generator.estimate.rtl_timing.MAX_CARRY_BITS` carry bits, 300 MHz)."""
    from generator.backends.rtl import RTL_SOURCES, TOP
    from generator.backends.rtl.render import RTL_DIR
    from generator.estimate import rtl_resources, rtl_timing
    from generator.exec.rtl import board_config
    from generator.spec.board import BoardError

    if config not in CONFIGS:
        raise FlowError(f"--config {config!r}: choose one of {', '.join(CONFIGS)}")
    units = sorted([Path(s).stem for s in RTL_SOURCES if str(s).endswith(".sv")] + list(UNIT_SOURCES))
    top = unit or TOP
    if unit and unit not in units:
        raise FlowError(f"--unit {unit!r} is not an RTL module: choose one of {', '.join(units)}")
    try:
        b = board_config(board, config)
    except (BoardError, FileNotFoundError, ValueError) as e:
        raise FlowError(f"board {board!r}: {e}") from None
    d = Path(out_folder(out)) if out else timing_dir(board, config, unit)
    log(f"timing: synthesizing {top} ({board}, {config}: Tn x Tm = {b.accelerator.tn} x {b.accelerator.tm}) "
        f"with Yosys into {d} -- a few minutes for the whole TINY design, 45 minutes for a 32x32 board, over an hour "
        f"for 32x48")
    try:
        syn = rtl_resources.synthesize(b, d, log=log, top=top,
                                       extra=tuple(RTL_DIR / f for f in UNIT_SOURCES.get(unit or "", ())))
        r = rtl_timing.analyze(d / "yosys" / rtl_resources.NETLIST_JSON, top,
                               rtl_timing.instance_modules(sorted((d / "src").glob("*.sv"))))
    except (rtl_resources.RtlResourceError, rtl_timing.TimingError) as e:
        raise FlowError(str(e)) from None
    text = rtl_timing.report(r, f"{board} {config}, {top}, Yosys {syn.seconds:.0f} s")
    atomic_write(d / "timing.md", text)
    atomic_write(d / "timing.json", json.dumps({"board": board, "config": config, "top": top, **r.to_json()}, indent=1))
    log(text)
    log(f"written: {d / 'timing.md'}, {d / 'timing.json'}")
    if check and not r.meets():
        raise FlowError(f"timing: {r.over_levels} endpoint bits over {rtl_timing.MAX_LUT_LEVELS} LUT levels, "
                        f"{r.over_carry} over {rtl_timing.MAX_CARRY_BITS} carry bits, {r.over_chains} through more "
                        f"than {rtl_timing.MAX_CARRY_CHAINS} carry chain, estimated fmax "
                        f"{r.fmax_mhz:.0f} MHz (target {rtl_timing.TARGET_MHZ:g})")
    return r


def timing_dir(board: str, config: str, unit: str | None = None) -> Path:
    """Default work folder of :func:`timing_flow` (build/timing/<board>-<config>[-<unit>])."""
    return build_dir("timing") / f"{board}-{config}{'-' + unit if unit else ''}"


def fmax_line(cycles: int, board: str, config: str, clock_mhz: float, folder: Path | None = None) -> tuple:
    """(estimated fmax in MHz or None, one report line): frames/s of a frame of ``cycles`` at the fmax that
    ``invoke timing`` estimated for ``board`` / ``config`` (its ``timing.json`` in ``folder``, default
    :func:`timing_dir`), capped at the board clock ``clock_mhz``; or how to get the estimate when there is none."""
    f = (folder or timing_dir(board, config)) / "timing.json"
    if not f.exists():
        return None, (f"no timing estimate for {board} {config}: run `invoke timing --board {board} --config "
                      f"{config}` (frames/s above use the board file's assumed {clock_mhz:g} MHz)")
    fmax = float(json.loads(f.read_text())["fmax_mhz"])
    clk = min(fmax, clock_mhz)
    return fmax, (f"at the estimated fmax: {cycles} cycles at {clk:g} MHz = {clk * 1e6 / cycles:.2f} FPS "
                  f"(fmax {fmax:g} MHz estimated from the Yosys netlist, not Vivado: {f})")

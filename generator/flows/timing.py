"""The timing flow (``invoke timing``): synthesize a board's RTL (or one unit of it, out of context) with the Yosys
flow of :mod:`generator.estimate.rtl_resources`, then estimate its register-to-register paths from the mapped
netlist with :mod:`generator.estimate.rtl_timing` (an estimate from an open netlist, not Vivado's timing)."""
from __future__ import annotations

import json
from pathlib import Path

from generator import ROOT_DIR
from generator.flows.inputs import FlowError, out_folder

CONFIGS = ("tiny", "board", "small")


def timing_flow(board="zcu19eg", config="tiny", unit=None, out=None, check=False, log=print):
    """Synthesize ``board``'s RTL in configuration ``config`` (``tiny``: the 8x8 test configuration, ``board``:
    the board file's) -- the whole accelerator, or only the module ``unit`` out of context -- into ``out``
    (default build/timing/<board>-<config>[-<unit>]) and log the timing report; writes ``timing.md``,
    ``timing.json`` and the Yosys netlist (``yosys/netlist.json``) there. Returns the
    :class:`~generator.estimate.rtl_timing.TimingReport`.

    Raises FlowError for a bad board, configuration, unit or work folder, a failed synthesis, and with ``check``
    when the design is over the limits (:data:`~generator.estimate.rtl_timing.MAX_LUT_LEVELS` LUT levels,
    :data:`~generator.estimate.rtl_timing.MAX_CARRY_BITS` carry bits, 300 MHz)."""
    from generator.backends.rtl import RTL_SOURCES, TOP
    from generator.estimate import rtl_resources, rtl_timing
    from generator.exec.rtl import board_config
    from generator.spec.board import BoardError

    if config not in CONFIGS:
        raise FlowError(f"--config {config!r}: choose one of {', '.join(CONFIGS)}")
    units = sorted(Path(s).stem for s in RTL_SOURCES if str(s).endswith(".sv"))
    top = unit or TOP
    if unit and unit not in units:
        raise FlowError(f"--unit {unit!r} is not an RTL module: choose one of {', '.join(units)}")
    try:
        b = board_config(board, config)
    except (BoardError, FileNotFoundError, ValueError) as e:
        raise FlowError(f"board {board!r}: {e}") from None
    d = Path(out_folder(out)) if out else ROOT_DIR / "build" / "timing" / f"{board}-{config}{'-' + unit if unit else ''}"
    log(f"timing: synthesizing {top} ({board}, {config}: Tn x Tm = {b.accelerator.tn} x {b.accelerator.tm}) "
        f"with Yosys into {d} -- a few minutes for the whole TINY design, about half an hour for a 32x32 board")
    try:
        syn = rtl_resources.synthesize(b, d, log=log, top=top)
        r = rtl_timing.analyze(d / "yosys" / rtl_resources.NETLIST_JSON, top,
                               rtl_timing.instance_modules(sorted((d / "src").glob("*.sv"))))
    except (rtl_resources.RtlResourceError, rtl_timing.TimingError) as e:
        raise FlowError(str(e)) from None
    text = rtl_timing.report(r, f"{board} {config}, {top}, Yosys {syn.seconds:.0f} s")
    (d / "timing.md").write_text(text)
    (d / "timing.json").write_text(json.dumps({"board": board, "config": config, "top": top, **r.to_json()}, indent=1))
    log(text)
    log(f"written: {d / 'timing.md'}, {d / 'timing.json'}")
    if check and not r.meets():
        raise FlowError(f"timing: {r.over_levels} endpoint bits over {rtl_timing.MAX_LUT_LEVELS} LUT levels, "
                        f"{r.over_carry} over {rtl_timing.MAX_CARRY_BITS} carry bits, estimated fmax "
                        f"{r.fmax_mhz:.0f} MHz (target {rtl_timing.TARGET_MHZ:g})")
    return r

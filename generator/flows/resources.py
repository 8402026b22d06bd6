"""The resources flow (``invoke resources``): a board's accelerator against its part's capacity, from the HLS
estimate (:mod:`generator.estimate.hls_resources`) and, on request, the RTL synthesized by Yosys
(:mod:`generator.estimate.rtl_resources`)."""
from __future__ import annotations

from pathlib import Path

from host.fileio import atomic_path
from generator import build_dir
from generator.flows.inputs import FlowError, out_folder
from generator.spec.board import DEFAULT_BOARD


def resources_flow(board=DEFAULT_BOARD, rtl=False, out=None, no_uram=False, mapping_only=False, log=print,
                   config="board") -> None:
    """``log`` the HLS estimate's tables for ``board`` (its accelerator with the overrides of ``config``, one of
    :data:`generator.flows.timing.CONFIGS`); with ``rtl``, synthesize the RTL in ``out`` (default
    build/rtl_resources/<board>[-<config>], or the matching run of ``invoke timing --config <config>`` when there is one;
    ``no_uram``: no URAM288; ``mapping_only``: stop after DSP / RAM mapping) and log
    its report, with the netlist's LUTs against the resource model's parts (drawn to ``lut_by_part.png`` there). Raises FlowError for a bad board or work folder, a failed synthesis, or a design that does not fit
    the part (the synthesized RTL checked first)."""
    from generator.estimate import hls_resources, rtl_resources
    from generator.exec.rtl import board_config
    from generator.flows.timing import CONFIGS, timing_dir
    from generator.spec.board import BoardError

    if config not in CONFIGS:
        raise FlowError(f"--config {config!r}: choose one of {', '.join(CONFIGS)}")
    try:
        b = board_config(board, config)
    except (BoardError, FileNotFoundError, ValueError) as e:
        raise FlowError(f"board {board!r}: {e}") from None
    if rtl and out:
        out_folder(out)
    e = hls_resources.estimate(b)
    a = b.accelerator
    log(f"## {board} ({b.part}), Tn x Tm = {a.tn} x {a.tm}: HLS estimate\n\n{e.table()}\n\n{e.memory_table()}\n")
    if rtl:
        d = Path(out) if out else build_dir("rtl_resources", board if config == "board" else f"{board}-{config}")
        try:
            # (without --out, the whole-design run of `invoke timing --config CONFIG` is reused when it matches)
            r = rtl_resources.synthesize(b, d, uram=False if no_uram else None, mapping_only=mapping_only,
                                         also=() if out else (timing_dir(board, config),))
        except rtl_resources.RtlResourceError as err:
            raise FlowError(str(err)) from None
        log(rtl_resources.report(r))
        if r.units:
            from generator.estimate import rtl_model
            png = d / "lut_by_part.png"
            plot_lut_parts(b, r.units, png)
            log(f"LUTs by part of the resource model (generator/estimate/rtl_model.py `lut_terms`), Yosys against "
                f"the model:\n\n{rtl_model.lut_comparison_table(b, r.units)}\n\n-> {png}\n")
        if r.over():
            raise FlowError(f"the synthesized RTL does not fit {b.part}: " + ", ".join(
                f"{k} {r.used[k]:g} / {r.capacity[k]}" for k in r.over()))
    if e.over():
        raise FlowError(f"the HLS estimate does not fit {b.part}: " + ", ".join(
            f"{k} {e.used()[k]:g} / {e.capacity[k]}" for k in e.over()))


def plot_lut_parts(board, units: dict, path: Path) -> None:
    """``lut_by_part.png``: per part of the LUT model, Yosys' LUTs (its LUT3 full adders hatched) beside the
    model's (:func:`generator.estimate.rtl_model.lut_terms`); ``units``: the netlist's cells by unit."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from generator.estimate import rtl_model

    keys = list(rtl_model.LUT_TERMS)
    y, m = rtl_model.yosys_lut_terms(units), rtl_model.lut_terms(board)
    lut3 = {k: cells.get("LUT3", 0) for k, cells in rtl_model.unit_parts(units).items()}
    x = range(len(keys))
    fig, ax = plt.subplots(figsize=(10, 4.8))
    ax.bar([i - 0.2 for i in x], [y[k] for k in keys], 0.4, color="tab:blue", label="Yosys (synth_xilinx)")
    ax.bar([i - 0.2 for i in x], [lut3[k] for k in keys], 0.4, fill=False, hatch="//", edgecolor="0.15",
           label="of which LUT3")
    ax.bar([i + 0.2 for i in x], [m[k] for k in keys], 0.4, color="tab:orange", label="resource model")
    ax.set_xticks(list(x), [rtl_model.LUT_TERMS[k] for k in keys], fontsize=8, rotation=12)
    ax.set_ylabel("LUTs")
    ax.set_title(f"{board.name} Tn x Tm = {board.accelerator.tn} x {board.accelerator.tm}: LUTs, Yosys "
                 f"{sum(y.values()):,} against the model's {sum(m.values()):,}", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)

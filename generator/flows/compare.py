"""The compare flow (``invoke compare``): the float model under onnxruntime against the quantized program on the
golden ISA simulator, for one image.

Reported (and written to ``compare.md``, ``compare.json`` and the plot ``sqnr.png`` in the output folder):

* for a detector (YOLO metadata and class names), first, the headline: the detection agreement, mAP@0.5 of the
  quantized detections scored against the float ones (:func:`generator.eval.metrics.mean_average_precision`);
  both decoded by the same host code from the same network input, the float ones from onnxruntime's outputs;
* SQNR of every accelerator layer's output (its channels of its DDR region, read from the golden simulator's DDR
  image after the frame, dequantized with the tensor's scale and zero point) against the same ONNX tensor under
  onnxruntime; layers whose output is not an ONNX tensor (fused away) have no row;
* SQNR of every model output (the accelerator outputs dequantized, then the host-side tail if the model has one,
  :func:`host.tail.run_tail`) against onnxruntime's, and for a YOLO output the SQNR of its box coordinates (pixels
  of the network input) apart from that of its scores (after the sigmoid)
  (:func:`generator.eval.metrics.split_sqnr`): an export's output [1, 4 + classes, N] (YOLOv8) or [1, N, 5 +
  classes] (YOLOv5, YOLOX) split by its fields, a raw darknet head decoded by darknet's rules; the whole output's
  figure alone is dominated by the box coordinates (hundreds of pixels against scores of 0..1).

SQNR = 10 log10(sum ref^2 / sum (ref - quantized)^2) in dB, over all elements of the tensor (or part). The last
line printed is ``min SQNR: X dB``, the smallest figure over the layers and the model outputs (whole, boxes and
scores).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from host.fileio import atomic_path, atomic_write
from generator import build_dir
from generator.eval.metrics import sqnr_db, split_sqnr  # noqa: F401 - sqnr_db re-exported (the flow's definition)
from generator.flows.inputs import FlowError, check_target, flow_errors, out_folder, real_image
from generator.flows.request import ModelSource, Target, compile_request


@dataclass
class CompareResult:
    """``layers``: {layer: SQNR dB}; ``outputs``: {model output: SQNR dB}; ``parts``: {YOLO model output:
    {"boxes": dB, "scores": dB}} (:func:`generator.eval.metrics.split_sqnr`; {} for another model);
    ``detections``: None, or {"float", "quantized": lists of detections, "map50": float, nan without float
    detections}; ``min_sqnr``: the smallest of every layer, output and part SQNR (dB), ``min_at`` where it is
    ("layer X", "output X", "output X: boxes" / "scores"); ``out``: the folder written."""
    layers: dict
    outputs: dict
    detections: dict | None
    min_sqnr: float
    min_at: str
    out: Path
    parts: dict
    precision: str = ""


def _model_outputs(model_path: Path) -> list:
    import onnx

    return [o.name for o in onnx.load(str(model_path), load_external_data=False).graph.output]


def _report_dir(target: Target, source: ModelSource, out) -> Path | None:
    """The report folder, probed before the compile with the files it gets (``out``, else
    build/compare/<model stem>-<quant>/; None when ``model`` is no file). Raises FlowError naming a path in the way."""
    if out:
        d = Path(out)
    else:
        m = source.model_file()
        if m is None:
            return None
        d = build_dir("compare") / f"{m.stem}-{target.checked()[1].name}{target.folder_suffix(None)}"
    check_target(d, "folder", "the report folder")
    for f in ("compare.md", "compare.json", "sqnr.png"):
        check_target(d / f, "file", f"the report's {f}")
    return d


@flow_errors
def compare_flow(target: Target = Target(), source: ModelSource = ModelSource(), image="bus", out=None,
                 log=print) -> CompareResult:
    """Compare the float model of ``source`` (default: the official YOLOv4-tiny; a shipped name such as
    ``doclaynet``; darknet ``cfg`` + ``weights``) with its program for ``target`` on ``image`` (a file or a shipped
    image name); log and write the report into ``out`` (default build/compare/<model stem>-<quant><suffix>).
    Raises FlowError for bad inputs, a failed simulation, or a model output onnxruntime and the program disagree
    on in size (onnxruntime runs a symbolic-size export at the source's ``input_size``)."""
    from generator.flows.accuracy import ort_tensors
    from generator.eval.conformance import host_outputs
    from generator.exec import run_golden
    from generator.exec.runtime import read_tensor
    from generator.flows.pipeline import detections_from_heads, model_input, quantize_image
    from generator.quant.equalize import tensor_gains

    img = real_image(image)
    source = source.resolved(Path(out) if out else None)
    _report_dir(target, source, out)
    comp = compile_request(target, source)
    od = out_folder(out or build_dir("compare") / f"{comp.model_path.stem}-{comp.quant.name}"
                                                      f"{target.folder_suffix(None)}")
    g, prog = comp.qgraph, comp.program
    x = model_input(g, img)
    log(f"compare: {comp.model_path.name} float (onnxruntime) against {comp.quant.name} on the golden simulator "
        f"({comp.board.name}), image {image}")
    heads, _, ddr, bases = run_golden(prog, g, quantize_image(comp, img), progress=True)
    layer_out = {n.name: n.outputs[0] for n in g.macro_nodes()}
    ref = ort_tensors(comp.model_path, sorted(set(layer_out.values())), [x.astype(np.float32)])[0]

    def deq(name, q):   # (an equalized region's channels carry gains: undone, generator.quant.equalize)
        t = g.tensors[name]
        return (q.astype(np.float64) - t.zero_point) * t.deq_scale / tensor_gains(g, name).reshape(-1, 1, 1)

    layers = {}
    for layer, t in layer_out.items():
        if t in ref and ref[t].size == int(np.prod(g.tensors[t].shape)) and np.any(ref[t]):
            layers[layer] = sqnr_db(ref[t], deq(t, read_tensor(prog, g, ddr, bases, t)))
    vals = host_outputs(g, heads, x)
    outputs = {}
    for o in _model_outputs(comp.model_path):
        if o not in vals or vals[o].size != ref[o].size:
            raise FlowError(f"model output {o!r}: the program gives "
                            f"{'nothing' if o not in vals else f'{vals[o].size} values'}, onnxruntime {ref[o].size}")
        outputs[o] = sqnr_db(ref[o], vals[o])
    parts = {o: split_sqnr(ref[o], vals[o], *a) for o, a in _yolo_layouts(comp).items() if o in outputs}
    dets = _detections(comp, heads, img, ref, lambda c, hd, iw, ih: detections_from_heads(c, hd, iw, ih, x=x))
    res = CompareResult(layers, outputs, dets, *_min_sqnr(layers, outputs, parts), od, parts,
                        precision_line(comp, target, source) if target.precision else "")
    _write(res, comp, image, log)
    return res


def precision_line(comp, target: Target, source: ModelSource) -> str:
    """One line on a mixed-precision compile: its spec, the layers writing int16, and the frame's cycles and
    frames/s by the latency model against the same model compiled uniformly in the target's mode (compiled here;
    the compile cache makes it cheap the second time)."""
    base = compile_request(target.uniform(), source, progress=False)
    p = comp.qgraph.metadata.get("precision", {})
    wide, n = len(p.get("int16_layers", [])), len(list(comp.qgraph.macro_nodes()))
    mhz = comp.hw.clock_mhz

    def fps(cyc):
        return mhz * 1e6 / cyc

    return (f"precision {p.get('spec', '')}: {wide} of {n} layers write int16; latency model {comp.program.cycles:,} "
            f"cycles = {fps(comp.program.cycles):.1f} frames/s at {mhz:g} MHz, uniform {comp.quant.name}: "
            f"{base.program.cycles:,} cycles = {fps(base.program.cycles):.1f} frames/s "
            f"({comp.program.cycles / base.program.cycles - 1:+.0%} cycles)")


def _min_sqnr(layers: dict, outputs: dict, parts: dict) -> tuple:
    """(the smallest SQNR in dB over the layers, the outputs and the outputs' box / score parts, where: "layer X",
    "output X" or "output X: boxes" / "scores")."""
    figs = [(v, f"layer {k}") for k, v in layers.items()] + [(v, f"output {k}") for k, v in outputs.items()]
    figs += [(v, f"output {o}: {k}") for o, p in parts.items() for k, v in p.items() if v is not None]
    return min(figs, key=lambda f: f[0])


def _yolo_layouts(comp) -> dict:
    """{model output: (layout, YoloHead or None, net_w, net_h)}, the arguments of
    :func:`generator.eval.metrics.split_sqnr` for each YOLO output of the compiled model: its one decoded export
    output (``"obj"`` / ``"noobj"``, :func:`generator.flows.pipeline.exported_output`), or its raw darknet heads
    (``"darknet"``, metadata ``darknet_yolo``); {} for a model that is no YOLO detector with class names."""
    from generator.flows.pipeline import class_names, exported_output, net_size
    from host.yolo import YoloHead

    g = comp.qgraph
    names = class_names(comp)
    exp = exported_output(g, names) if names else None
    if exp:
        return {exp[0]: (exp[1], None, 0, 0)}
    w, h = net_size(g)
    yolo = {y.get("output"): y for y in g.metadata.get("darknet_yolo", []) if isinstance(y, dict)}
    return {o: ("darknet", YoloHead.from_dict(yolo[o]), w, h) for o in g.outputs if o in yolo}


def _detections(comp, heads: dict, img: np.ndarray, ref: dict, decode) -> dict | None:
    """Float and quantized detections and their agreement, or None when the model is not a YOLO detector with
    class names. The float detections are decoded from onnxruntime's outputs ``ref`` on the same network input as
    the program's (the model's own resize: darknet's stretch or a letterbox) by the one head decoder
    (:func:`generator.flows.decoding.head_decoder`, float heads; an export's decoded output directly)."""
    from generator.eval.metrics import mean_average_precision
    from generator.flows.decoding import exported_output, head_decoder
    from generator.flows.pipeline import class_names

    g = comp.qgraph
    names = class_names(comp)
    if not names or not (g.metadata.get("darknet_yolo") or exported_output(g, names)):
        return None
    iw, ih = img.shape[1], img.shape[0]
    exp = exported_output(g, names)
    fd = head_decoder(g, names, quantized=False).detect(
        {exp[0]: ref[exp[0]]} if exp else {o: ref[o] for o in g.outputs}, iw, ih)
    qd = decode(comp, heads, iw, ih)
    return {"float": fd, "quantized": qd, "map50": mean_average_precision([qd], [fd])}


def _fmt(v) -> str:
    """A dB figure for the report: one decimal, ``inf``, or ``-`` for None."""
    return "-" if v is None else f"{v:.1f}"


def _headline(d: dict | None) -> list:
    """The report's first lines: the detection agreement (or that the model is no detector)."""
    if not d:
        return ["detection agreement: none (not a YOLO detector with class names)"]
    m = "n/a (no float detection)" if math.isnan(d["map50"]) else f"{d['map50']:.3f}"
    return [f"detection agreement: mAP@0.5 of the quantized detections against the float ones: {m} (float "
            f"{len(d['float'])}, quantized {len(d['quantized'])} detections)"]


def _write(r: CompareResult, comp, image: str, log) -> None:
    """compare.md / compare.json / sqnr.png, and the log (last line ``min SQNR: X dB``)."""
    lines = [f"# {comp.model_path.name}: float (onnxruntime) vs {comp.quant.name} (golden simulator), image "
             f"{image}", "", *_headline(r.detections), "", *([r.precision, ""] if r.precision else []),
             "| layer | SQNR (dB) |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in r.layers.items()]
    lines += ["", "| model output | SQNR (dB) | boxes, pixels (dB) | scores, after the sigmoid (dB) |",
              "|---|---:|---:|---:|"]
    lines += [f"| {k} | {v:.1f} | {_fmt(r.parts.get(k, {}).get('boxes'))} | "
              f"{_fmt(r.parts.get(k, {}).get('scores'))} |" for k, v in r.outputs.items()]
    lines += ["", f"smallest SQNR over the layers and the model outputs (whole, boxes, scores): {r.min_at}", "",
              f"min SQNR: {r.min_sqnr:.1f} dB"]
    text = "\n".join(lines)
    atomic_write(r.out / "compare.md", text + "\n")
    m50 = r.detections["map50"] if r.detections else None
    m50 = None if m50 is None or math.isnan(m50) else m50      # (JSON has no NaN)
    atomic_write(r.out / "compare.json", json.dumps(
        {"map50": m50, "model": str(comp.model_path), "quant": comp.quant.name, "image": image,
         "layers": r.layers, "outputs": r.outputs, "output_parts": r.parts,
         "detections": r.detections and {**r.detections, "map50": m50}, "min_sqnr_db": r.min_sqnr,
         "min_sqnr_at": r.min_at, "precision": r.precision}, indent=1, default=float))
    _plot(r, comp, r.out / "sqnr.png")
    log(text.replace(f"\nmin SQNR: {r.min_sqnr:.1f} dB", f"\n(written: {r.out}/compare.md, compare.json, "
                     f"sqnr.png)\nmin SQNR: {r.min_sqnr:.1f} dB"))


def _plot(r: CompareResult, comp, path: Path) -> None:
    """Per-layer SQNR bars and, beside them, per model output its whole, box and score SQNR (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outs = list(r.outputs)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(max(6.0, 0.35 * len(r.layers)) + 1.2 * len(outs) + 1.5, 3.8),
                                 gridspec_kw={"width_ratios": [max(1, len(r.layers)), 3 * len(outs) + 1]})
    ax.bar(range(len(r.layers)), [min(v, 99.0) for v in r.layers.values()], color="tab:blue")
    ax.set_xticks(range(len(r.layers)), list(r.layers), rotation=90, fontsize=7)
    ax.set_xlim(-0.6, len(r.layers) - 0.4)
    ax.set_ylabel("SQNR vs onnxruntime (dB)")
    m = r.detections["map50"] if r.detections else float("nan")
    ax.set_title(f"{comp.model_path.name}, {comp.quant.name}: per-layer SQNR (min {r.min_sqnr:.1f} dB"
                 + ("" if math.isnan(m) else f"; detections mAP@0.5 {m:.3f}") + ")", fontsize=9)
    for k, (part, color) in enumerate((("whole", "tab:gray"), ("boxes", "tab:orange"), ("scores", "tab:green"))):
        v = [r.outputs[o] if part == "whole" else r.parts.get(o, {}).get(part) for o in outs]
        bx.bar([3 * i + k for i in range(len(outs))], [0 if x is None else min(x, 99.0) for x in v], color=color,
               label=part)
    bx.set_xticks([3 * i + 1 for i in range(len(outs))], outs, rotation=90, fontsize=7)
    bx.set_title("model outputs", fontsize=9)
    bx.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)

"""The compare flow (``invoke compare``): the float model under onnxruntime against the quantized program on the
golden ISA simulator, for one image.

Reported (and written to ``compare.md``, ``compare.json`` and the per-layer plot ``sqnr.png`` in the output folder):

* SQNR of every accelerator layer's output (its channels of its DDR region, read from the golden simulator's DDR
  image after the frame, dequantized with the tensor's scale and zero point) against the same ONNX tensor under
  onnxruntime; layers whose output is not an ONNX tensor (fused away) have no row;
* SQNR of every model output (the accelerator outputs dequantized, then the host-side tail if the model has one,
  :func:`host.tail.run_tail`) against onnxruntime's;
* for a detector (YOLO metadata and class names), the detections of both and their agreement: mAP@0.5 of the
  quantized detections scored against the float ones (:func:`generator.eval.metrics.mean_average_precision`).

SQNR = 10 log10(sum ref^2 / sum (ref - quantized)^2) in dB, over all elements of the tensor. The last line printed
is ``min SQNR: X dB`` over the model outputs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from host.fileio import atomic_path, atomic_write
from generator import ROOT_DIR
from generator.flows.inputs import (FlowError, check_target, compile_checked, flow_errors, model_file,
                                    names_checked, out_folder, real_image, resolve_model)


@dataclass
class CompareResult:
    """``layers``: {layer: SQNR dB}; ``outputs``: {model output: SQNR dB}; ``detections``: None, or {"float",
    "quantized": lists of detections, "map50": float}; ``min_sqnr``: the smallest output SQNR (dB); ``out``:
    the folder written."""
    layers: dict
    outputs: dict
    detections: dict | None
    min_sqnr: float
    out: Path


def sqnr_db(ref: np.ndarray, got: np.ndarray) -> float:
    """SQNR of ``got`` against ``ref`` (same number of elements), dB; +inf when they are equal. Raises ValueError for
    different sizes or an all-zero reference."""
    ref = np.asarray(ref, np.float64).ravel()
    got = np.asarray(got, np.float64).ravel()
    if ref.size != got.size:
        raise ValueError(f"{got.size} values against {ref.size}")
    sig, noise = float(np.sum(ref ** 2)), float(np.sum((ref - got) ** 2))
    if sig == 0:
        raise ValueError("the reference is all zeros")
    return float("inf") if noise == 0 else 10 * np.log10(sig / noise)


def _model_outputs(model_path: Path) -> list:
    import onnx

    return [o.name for o in onnx.load(str(model_path), load_external_data=False).graph.output]


def _report_dir(board, model, quant, per_channel, out) -> Path | None:
    """The report folder, probed before the compile with the files it gets (``out``, else
    build/compare/<model stem>-<quant>/; None when ``model`` is no file). Raises FlowError naming a path in the way."""
    if out:
        d = Path(out)
    else:
        m = model_file(model)
        if m is None:
            return None
        d = ROOT_DIR / "build" / "compare" / f"{m.stem}-{names_checked(board, quant, per_channel)[1].name}"
    check_target(d, "folder", "the report folder")
    for f in ("compare.md", "compare.json", "sqnr.png"):
        check_target(d / f, "file", f"the report's {f}")
    return d


@flow_errors
def compare_flow(model=None, image="bus", board="zcu19eg", quant="int8-asym", per_channel=True, out=None,
                 cfg=None, weights=None, names=None, yolo_cfg=None, calib=None, log=print,
                 input_size=None) -> CompareResult:
    """Compare the float ``model`` (default: the official YOLOv4-tiny; or darknet ``cfg`` + ``weights``) with its
    ``quant`` program for ``board`` on ``image`` (a file or a shipped image name); log and write the report into
    ``out`` (default build/compare/<model stem>-<quant>). Raises FlowError for bad inputs, a failed simulation, or
    a model output onnxruntime and the program disagree on in size. ``input_size``: (H, W) for a model with a
    symbolic input size (onnxruntime runs it at that size)."""
    from generator.eval.accuracy import ort_tensors
    from generator.eval.conformance import host_outputs
    from generator.exec import run_golden
    from generator.exec.runtime import read_tensor
    from generator.flows.pipeline import detections_from_heads, model_input, quantize_image
    from generator.quant.equalize import tensor_gains

    img = real_image(image)
    od0 = Path(out) if out else None
    model = resolve_model(model, cfg, weights, names, od0)
    _report_dir(board, model, quant, per_channel, out)
    comp = compile_checked(board, quant, per_channel, model, names=names, yolo_cfg=yolo_cfg, calib=calib,
                          input_size=input_size)
    od = out_folder(out or ROOT_DIR / "build" / "compare" / f"{comp.model_path.stem}-{comp.quant.name}")
    g, prog = comp.qgraph, comp.program
    x = model_input(g, img)
    log(f"compare: {comp.model_path.name} float (onnxruntime) against {comp.quant.name} on the golden simulator "
        f"({board}), image {image}")
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
    dets = _detections(comp, heads, img, lambda c, hd, iw, ih: detections_from_heads(c, hd, iw, ih, x=x))
    res = CompareResult(layers, outputs, dets, min(outputs.values()), od)
    _write(res, comp, image, log)
    return res


def _detections(comp, heads: dict, img: np.ndarray, decode) -> dict | None:
    """Float and quantized detections and their agreement, or None when the model is not a YOLO detector with
    class names."""
    from generator.eval.accuracy import float_detections
    from generator.eval.metrics import mean_average_precision
    from generator.flows.pipeline import class_names, exported_output

    names = class_names(comp)
    if not names or not (comp.qgraph.metadata.get("darknet_yolo") or exported_output(comp.qgraph, names)):
        return None
    fd = float_detections(comp.model_path, img, names=comp.names or None)
    qd = decode(comp, heads, img.shape[1], img.shape[0])
    return {"float": fd, "quantized": qd, "map50": mean_average_precision([qd], [fd])}


def _write(r: CompareResult, comp, image: str, log) -> None:
    """compare.md / compare.json / sqnr.png, and the log (last line ``min SQNR: X dB``)."""
    lines = [f"# {comp.model_path.name}: float (onnxruntime) vs {comp.quant.name} (golden simulator), image "
             f"{image}", "", "| layer | SQNR (dB) |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in r.layers.items()]
    lines += ["", "| model output | SQNR (dB) |", "|---|---:|"] + [f"| {k} | {v:.1f} |" for k, v in r.outputs.items()]
    if r.detections:
        d = r.detections
        lines += ["", f"detections: float {len(d['float'])}, quantized {len(d['quantized'])}; mAP@0.5 of the "
                      f"quantized against the float ones: {d['map50']:.3f}"]
    lines += ["", f"min SQNR: {r.min_sqnr:.1f} dB"]
    text = "\n".join(lines)
    atomic_write(r.out / "compare.md", text + "\n")
    atomic_write(r.out / "compare.json", json.dumps({"model": str(comp.model_path), "quant": comp.quant.name,
                                                     "image": image, "layers": r.layers, "outputs": r.outputs,
                                                     "detections": r.detections, "min_sqnr_db": r.min_sqnr},
                                                    indent=1, default=float))
    _plot(r, comp, r.out / "sqnr.png")
    log(text.replace(f"min SQNR: {r.min_sqnr:.1f} dB", f"(written: {r.out}/compare.md, compare.json, sqnr.png)\n"
                     f"min SQNR: {r.min_sqnr:.1f} dB"))


def _plot(r: CompareResult, comp, path: Path) -> None:
    """Per-layer SQNR bars (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(r.layers)), 3.5))
    ax.bar(range(len(r.layers)), [min(v, 99.0) for v in r.layers.values()], color="tab:blue")
    ax.set_xticks(range(len(r.layers)), list(r.layers), rotation=90, fontsize=7)
    ax.set_ylabel("SQNR vs onnxruntime (dB)")
    ax.set_title(f"{comp.model_path.name}, {comp.quant.name}: per-layer SQNR (min output {r.min_sqnr:.1f} dB)")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)

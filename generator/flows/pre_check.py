"""The PRE check (``invoke pre``, issue 45): the effect of PRE's integer resize (:mod:`host.pre`) against the
float one (:mod:`host.preprocess`, darknet's float32 arithmetic) on a compiled model's detections.

Per image, both inputs go through the golden simulator with the same program: the network input's elements that
differ and by how much, the SQNR of each input against the float resized image before quantization (what the
quantization of each costs), the SQNR of the first layer's output of the integer-PRE run against the float-PRE
run's, and the detection agreement (mAP@0.5 of the integer-PRE detections scored against the float-PRE ones); per
shipped image and precision, as Markdown.
"""
from __future__ import annotations

import numpy as np

from generator.eval.metrics import mean_average_precision
from generator.flows.inputs import check_target, flow_errors
from generator.flows.request import ModelSource, Target, compile_request


def _sqnr(ref: np.ndarray, got: np.ndarray) -> float:
    """10 log10(sum ref^2 / sum (got - ref)^2) in dB; inf when equal."""
    ref, got = np.asarray(ref, np.float64), np.asarray(got, np.float64)
    n = float(np.sum((got - ref) ** 2))
    return float("inf") if n == 0 else float(10 * np.log10(max(float(np.sum(ref ** 2)), 1e-300) / n))


def pre_inputs(comp, img_u8: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(float-PRE input, integer-PRE input, float resized image before quantization) of ``comp``'s network for one
    uint8 RGB image [H, W, 3]: int64 [C, h, w], int64 [C, h, w], float32 [C, h, w]. Raises ValueError for a
    model PRE does not take (input channels other than 3)."""
    from generator.flows.calibration import input_format, input_resize, model_input
    from generator.flows.pipeline import quantize_image
    from host.pre import pre_geometry, pre_quant, pre_run

    g = comp.qgraph
    t = g.tensors[g.inputs[0]]
    if t.shape[1] != 3:
        raise ValueError(f"PRE writes 3 channels; the model's input has {t.shape[1]}")
    h, w = t.shape[2], t.shape[3]
    geo = pre_geometry(img_u8.shape[1], img_u8.shape[0], w, h, input_resize(g))
    q = pre_quant(t.scale, t.zero_point, int(t.dtype[3:]), input_format(g))
    x_int = pre_run(img_u8, geo, q).transpose(2, 0, 1).astype(np.int64)
    return quantize_image(comp, img_u8), x_int, model_input(g, img_u8)[0]


def pre_effect(comp, images: dict) -> list[dict]:
    """For each ``{name: uint8 RGB image [H, W, 3]}`` one dict: ``image``, ``differ`` (fraction of the input's
    elements where integer and float PRE differ), ``max_lsb`` (largest difference), ``input_db_float`` /
    ``input_db_int`` (each quantized input's SQNR against the float resized image), ``layer1_db`` (the first
    layer's output, integer-PRE run against float-PRE run; inf if equal), ``map50`` (integer-PRE detections scored
    against the float-PRE ones; None without float-PRE detections), ``dets`` / ``dets_int`` (how many detections
    each). Raises as :func:`pre_inputs`; RuntimeError for a golden simulator error."""
    from generator.exec import run_program
    from generator.exec.runtime import build_ddr, read_tensor
    from generator.flows.pipeline import detections_from_heads

    prog, g = comp.program, comp.qgraph
    t = g.tensors[g.inputs[0]]
    first = next(iter(g.macro_nodes())).outputs[0]
    rows = []
    for name, img in images.items():
        xf, xi, x = pre_inputs(comp, img)
        runs = []
        for q in (xf, xi):
            ddr, bases = build_ddr(prog, q)
            r = run_program("golden", prog, ddr, bases)
            if r.status:
                raise RuntimeError(f"golden simulator on {name}: {r.error}")
            heads = {o: read_tensor(prog, g, r.ddr, bases, o) for o in g.outputs}
            runs.append((detections_from_heads(comp, heads, img.shape[1], img.shape[0]),
                         read_tensor(prog, g, r.ddr, bases, first)))
        d = np.abs(xi - xf)
        rows.append(dict(image=name, differ=float(np.mean(d != 0)), max_lsb=int(d.max()),
                         input_db_float=_sqnr(x, (xf - t.zero_point) * t.scale),
                         input_db_int=_sqnr(x, (xi - t.zero_point) * t.scale),
                         layer1_db=_sqnr(runs[0][1], runs[1][1]),
                         map50=float(mean_average_precision([runs[1][0]], [runs[0][0]])) if runs[0][0] else None,
                         dets=len(runs[0][0]), dets_int=len(runs[1][0])))
    return rows


def markdown(rows: list[dict], title: str) -> str:
    """The rows of :func:`pre_effect` as a Markdown table under ``title``."""
    out = [f"### {title}", "", "| image | input elements differing | max (LSB) | input SQNR float / integer PRE (dB) "
           "| layer 1, integer vs float PRE (dB) | detections float / integer PRE | mAP@0.5 |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    out += [f"| {r['image']} | {r['differ']:.2%} | {r['max_lsb']} | {r['input_db_float']:.1f} / {r['input_db_int']:.1f} "
            f"| {r['layer1_db']:.1f} | {r['dets']} / {r['dets_int']} | "
            f"{'-' if r['map50'] is None else format(r['map50'], '.3f')} |" for r in rows]
    return "\n".join(out)


@flow_errors
def pre_flow(out, quants=("int8-asym", "int16-sym"), target: Target = Target(), source: ModelSource = ModelSource(),
             log=print) -> str:
    """Write the PRE report to ``out`` (a Markdown file, probed first) and return its text: for each mode of
    ``quants`` the model of ``source`` compiled for ``target`` in that mode and every shipped image
    (:func:`generator.eval.data.all_real_images`) through the golden simulator with the float and the integer PRE.
    Raises FlowError for a bad target, model or a model PRE does not take."""
    from generator.eval.data import all_real_images
    from generator.flows.inputs import FlowError
    from host.fileio import atomic_write
    from host.preprocess import load_image

    dest = check_target(out, "file", "the PRE report")
    src = source.resolved()
    imgs = {k: load_image(p) for k, p in all_real_images().items()}
    parts = ["## PRE's integer resize against the float resize (golden simulator)", ""]
    for q in quants:
        comp = compile_request(target.with_quant(q), src, progress=False, require_detection=True)
        log(f"{comp.model_path.name} {q}: {len(imgs)} images, float and integer PRE ...")
        try:
            rows = pre_effect(comp, imgs)
        except (ValueError, RuntimeError) as e:
            raise FlowError(f"{comp.model_path.name}: {e}") from None
        parts += [markdown(rows, f"{comp.model_path.name}, {q}"), ""]
    body = "\n".join(parts)
    atomic_write(dest, body)
    log(body.rstrip("\n"))
    return body

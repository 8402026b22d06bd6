"""The PRE check flow (``invoke pre``): PRE's integer resize (:mod:`host.pre`) against the float resize on a
compiled model's detections, per shipped image and precision (:mod:`generator.eval.pre_effect`), as Markdown."""
from __future__ import annotations

from generator.flows.inputs import check_target, flow_errors
from generator.flows.request import ModelSource, Target, compile_request


@flow_errors
def pre_flow(out, quants=("int8-asym", "int16-sym"), target: Target = Target(), source: ModelSource = ModelSource(),
             log=print) -> str:
    """Write the PRE report to ``out`` (a Markdown file, probed first) and return its text: for each mode of
    ``quants`` the model of ``source`` compiled for ``target`` in that mode and every shipped image
    (:func:`generator.eval.data.all_real_images`) through the golden simulator with the float and the integer PRE.
    Raises FlowError for a bad target, model or a model PRE does not take."""
    from generator.eval.data import all_real_images
    from generator.eval.pre_effect import markdown, pre_effect
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

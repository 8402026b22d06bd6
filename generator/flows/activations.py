"""The activations flow (``invoke activations``): the error of POST's activation tables against the float functions.

Always: every table activation over the fixed pre-activation domain
(:func:`generator.eval.act_error.error_table`). With a model: that model compiled in each precision, and every
table layer's error over its own calibrated pre-activation range with the table the compiler chose for it
(:func:`generator.eval.act_error.layer_errors`), summarized per precision and listed per layer. The report is
Markdown, written atomically.
"""
from __future__ import annotations

from generator.flows.inputs import check_target, flow_errors
from generator.flows.request import ModelSource, Target, compile_request
from generator.spec.board import DEFAULT_BOARD

#: the precisions of the per-layer measurement
LAYER_MODES = ("int8-asym", "int16-sym")


@flow_errors
def activations_flow(out, model=None, board=DEFAULT_BOARD, log=print) -> str:
    """Write the activation-error report to ``out`` (a Markdown file, probed first) and return its text.
    ``model``: an ONNX file or a shipped model name (``doclaynet``) whose table layers are measured too (None:
    the fixed-domain table only). Raises FlowError for a bad target or model."""
    from generator.eval.act_error import error_table, layer_errors, layer_markdown, markdown
    from host.fileio import atomic_write

    target = check_target(out, "file", "the table")
    text = ["## Every table activation over [-8, 8]", "", markdown(error_table())]
    if model:
        source = ModelSource(model).resolved()
        per_mode, detail = {}, []
        for mode in LAYER_MODES:
            comp = compile_request(Target(board, mode), source, progress=False)
            per_mode[mode] = rows = layer_errors(comp.qgraph)
            detail += [f"| {mode} | {r['layer']} | {r['act']} | [{r['lo']:.2f}, {r['hi']:.2f}] | "
                       f"{'yes' if r['identity'] else 'no'} | {r['max_lsb']:.2f} | {r['rms_lsb']:.2f} | "
                       f"{r['sqnr_db']:.1f} |" for r in rows]
        text += ["", f"## The table layers of {comp.model_path.name} over their calibrated ranges", "",
                 layer_markdown(per_mode), "",
                 "| mode | layer | activation | calibrated range | identity above | max error (LSB) | RMS (LSB) | "
                 "SQNR (dB) |", "|---|---|---|---|---|---:|---:|---:|"] + detail
    body = "\n".join(text) + "\n"
    atomic_write(target, body)
    log(body.rstrip("\n"))
    return body

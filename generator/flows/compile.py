"""The compile flow (``invoke compile``): model -> instruction program for a board, artifacts written."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from generator.flows.inputs import (artifact_dir, check_artifact_target, compile_checked, flow_errors,
                                    out_folder, planned_artifact_dir, resolve_model)


@dataclass
class CompileResult:
    """``compiled``: the :class:`~generator.flows.pipeline.Compiled` model; ``out``: the artifact folder;
    ``seconds``: wall time of the whole flow."""
    compiled: object
    out: Path
    seconds: float


@flow_errors
def compile_flow(board="zcu19eg", quant="int8-asym", per_channel=True, model=None, out=None, cfg=None,
                 weights=None, names=None, yolo_cfg=None, calib=None, input_size=None, precision=None) -> CompileResult:
    """Compile ``model`` (or darknet ``cfg`` + ``weights``, converted under ``out``) for ``board`` and write the
    program artifacts into ``out`` (default build/<board>/<model key>/<quant>/); ``calib``: a folder of calibration
    images (default: the shipped set); ``input_size``: (H, W) for a model with a symbolic input size. The artifact folder is probed before the compile (a file in its way, a
    folder where one of its files goes, not writable: :func:`~generator.flows.inputs.check_artifact_target`).
    Raises FlowError."""
    from generator.codegen.artifacts import write_artifacts

    od = out_folder(out) if out else None
    t0 = time.time()
    model = resolve_model(model, cfg, weights, names, od)
    planned = planned_artifact_dir(board, quant, per_channel, model, out, input_size, precision)
    if planned is not None:
        check_artifact_target(planned)
    comp = compile_checked(board, quant, per_channel, model, names=names, yolo_cfg=yolo_cfg, calib=calib,
                          input_size=input_size, precision=precision)
    d = write_artifacts(comp, artifact_dir(comp, out, input_size, precision))
    return CompileResult(comp, d, time.time() - t0)

"""The compile flow (``invoke compile``): model -> instruction program for a board, artifacts written."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from generator.flows.inputs import check_artifact_target, flow_errors, out_folder
from generator.flows.request import ModelSource, Target, artifact_dir, compile_request, planned_artifact_dir


@dataclass
class CompileResult:
    """``compiled``: the :class:`~generator.flows.pipeline.Compiled` model; ``out``: the artifact folder;
    ``seconds``: wall time of the whole flow."""
    compiled: object
    out: Path
    seconds: float


@flow_errors
def compile_flow(target: Target = Target(), source: ModelSource = ModelSource(), out=None) -> CompileResult:
    """Compile ``source`` (darknet ``cfg`` + ``weights`` converted under ``out``) for ``target`` and write the
    program artifacts into ``out`` (default build/<board>/<model key>/<quant><suffix>/,
    :func:`~generator.flows.request.artifact_dir`). The artifact folder is probed before the compile (a file in its
    way, a folder where one of its files goes, not writable: :func:`~generator.flows.inputs.check_artifact_target`).
    Raises FlowError."""
    from generator.flows.artifacts import write_artifacts

    od = out_folder(out) if out else None
    t0 = time.time()
    source = source.resolved(od)
    planned = planned_artifact_dir(target, source, out)
    if planned is not None:
        check_artifact_target(planned)
    comp = compile_request(target, source)
    d = write_artifacts(comp, artifact_dir(comp, out, target, source))
    return CompileResult(comp, d, time.time() - t0)

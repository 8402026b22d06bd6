"""The detect flow (``invoke detect``): compile, run one image through the golden ISA simulator, write the
detections (JSON and a drawing)."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from host.fileio import atomic_write
from generator.flows.inputs import FlowError, check_artifact_target, check_target, flow_errors, out_folder, real_image
from generator.flows.request import ModelSource, Target, compile_request


@dataclass
class DetectResult:
    """``detections``: list of {"label", "score", "box" [x0, y0, x1, y1] in image pixels, ...}; ``cycles``: the
    golden simulator's PL clock cycles for the frame; ``hw``: the HwConfig; ``sim_seconds``: wall time of the
    simulation; ``json`` / ``png`` / ``artifacts``: what was written."""
    detections: list
    cycles: int
    hw: object
    sim_seconds: float
    json: Path
    png: Path
    artifacts: Path


@flow_errors
def detect_flow(image="bus", out="out", target: Target = Target(), source: ModelSource = ModelSource()) -> DetectResult:
    """Compile ``source`` for ``target`` (program artifacts in ``out``/artifacts/), run ``image`` (a file or a
    shipped image name) through the golden ISA simulator, write ``out``/detections.json and
    ``out``/detections.png. These targets are probed before the compile
    (:func:`~generator.flows.inputs.check_target`). Raises FlowError."""
    from generator.exec import GoldenExecutor, run_frame
    from generator.exec.runtime import read_tensor
    from generator.flows.artifacts import write_artifacts
    from generator.flows.pipeline import detections_from_heads, input_ddr
    from host.draw import draw_detections

    od = out_folder(out)
    img = real_image(image)
    art = check_artifact_target(od / "artifacts")
    check_target(od / "detections.json", "file", "the detections")
    check_target(od / "detections.png", "file", "the drawing of the detections")
    comp = compile_request(target, source.resolved(art), require_detection=True)
    write_artifacts(comp, art)
    prog, g = comp.program, comp.qgraph
    ddr, bases, frame = input_ddr(comp, img)
    t0 = time.time()
    run, _ = run_frame(GoldenExecutor(), prog, ddr, bases, frame=frame, progress=True)
    secs = time.time() - t0
    if run.status:
        raise FlowError(f"golden simulator: {run.error}")
    heads = {o: read_tensor(prog, g, run.ddr, bases, o) for o in g.outputs}
    dets = detections_from_heads(comp, heads, img.shape[1], img.shape[0])
    atomic_write(od / "detections.json", json.dumps(dets, indent=1))
    draw_detections(img, dets, od / "detections.png", num_classes=len(comp.names))
    return DetectResult(dets, run.cycles, comp.hw, secs, od / "detections.json", od / "detections.png", art)

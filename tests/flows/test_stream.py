"""generator/flows/stream.py (``invoke stream``): the driver on the golden device with the host pinned to one core
gives the detections `invoke detect` gives, and host times, frames/s and bytes that follow from the package."""
from __future__ import annotations

import os

import pytest

from generator.flows.inputs import FlowError
from generator.flows.request import ModelSource, Target
from generator.flows.stream import stream_flow


def test_one_core_stream_matches_detect(tmp_path):
    from generator.exec import run_golden
    from generator.flows.pipeline import detections_from_heads, quantize_image
    from helpers import compiled_model
    from host.preprocess import load_image
    from generator.eval.data import sample_images

    before = os.sched_getaffinity(0)
    r = stream_flow(Target(), ModelSource(), "bus", 1, (min(before),), tmp_path / "s.md", log=lambda *_: None)
    assert os.sched_getaffinity(0) == before                      # the pin is undone
    c = compiled_model()
    img = load_image(sample_images()["bus"])
    heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, img))
    assert r.detections == detections_from_heads(c, heads, img.shape[1], img.shape[0])
    assert r.pre_ms > 0 and r.post_ms > 0 and r.cycles == c.program.cycles
    assert r.fps(1) == pytest.approx(1e3 / max(r.cycles / r.clock_mhz / 1e3, r.pre_ms + r.post_ms))
    assert r.fps(2) >= r.fps(1) and r.frame_bytes == img.size
    t = c.qgraph.tensors[c.qgraph.inputs[0]]
    assert r.input_bytes >= t.shape[2] * t.shape[3] * t.shape[1]   # at least the interior's int8 elements
    md = (tmp_path / "s.md").read_text()
    assert f"| accelerator only | {r.clock_mhz * 1e6 / r.cycles:.1f} |" in md and (tmp_path / "s.png").stat().st_size


def test_a_core_the_machine_lacks_is_refused(tmp_path):
    with pytest.raises(FlowError, match="--cores 4096: this machine's cores are"):
        stream_flow(Target(), ModelSource(), "bus", 1, (4096,), tmp_path / "s.md", log=lambda *_: None)
    assert not (tmp_path / "s.md").exists()

"""The PYNQ notebook, executed (nbclient) against the golden-simulator backend from a real deployment package:
its detections must equal the golden simulator's (what `invoke detect` computes)."""
from generator import ROOT_DIR
import json

import numpy as np

import nbformat
from nbclient import NotebookClient

from generator.flows.pipeline import detections_from_heads, quantize_image
from helpers import compiled_model
from generator.flows.package import build_package
from generator.exec import run_golden
from host.preprocess import load_image
from pathlib import Path

ROOT = ROOT_DIR


def test_notebook_runs_and_detects_like_the_golden_simulator(tmp_path, monkeypatch):
    c = compiled_model("zcu19eg", "int8-asym")
    pkg, _ = build_package(c, tmp_path / "pkgs")
    assert (pkg / "notebooks" / "yolo_detect.ipynb").is_file()
    monkeypatch.setenv("YOLOFPGA_PACKAGE", str(pkg))
    monkeypatch.setenv("YOLOFPGA_BACKEND", "golden")
    monkeypatch.setenv("YOLOFPGA_OUT", str(tmp_path))
    monkeypatch.setenv("YOLOFPGA_VIDEO_FRAMES", "3")
    nb = nbformat.read(str(pkg / "notebooks" / "yolo_detect.ipynb"), as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(pkg / "notebooks")}}).execute()
    got = json.loads((tmp_path / "notebook_detections.json").read_text())
    assert set(got) == {p.stem for p in (pkg / "images").glob("*.jpg")} and "bus" in got
    for name, dets in got.items():
        img = load_image(pkg / "images" / f"{name}.jpg")
        heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, img))
        ref = detections_from_heads(c, heads, img.shape[1], img.shape[0])
        assert [(d["label"], round(d["score"], 5)) for d in dets] == [(d["label"], round(d["score"], 5)) for d in ref]
    # the video loop: a pan across bus.jpg (60% of its width), each frame's boxes those of the golden simulator
    video = json.loads((tmp_path / "notebook_video.json").read_text())
    bus = load_image(pkg / "images" / "bus.jpg")
    cw = int(bus.shape[1] * 0.6)
    assert sorted(video, key=int) == ["0", "1", "2"]
    for k, x in (("0", 0), ("2", bus.shape[1] - cw)):
        crop = np.ascontiguousarray(bus[:, x:x + cw])
        heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, crop))
        ref = detections_from_heads(c, heads, crop.shape[1], crop.shape[0])
        assert [(d["label"], d["box"]) for d in video[k]] == [(d["label"], d["box"]) for d in ref], k
    outs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outs), "the notebook shows the boxes as images"
    assert any("image/gif" in o.get("data", {}) for o in outs), "the video loop is kept as an animated GIF"
    text = "".join(o.get("text", "") for o in outs)
    assert "frames/s" in text and "post-processing" in text

"""host/driver.py on packages of models whose decode is in the graph (YOLOv5n- and YOLOX-nano-shaped exports, SiLU,
random weights): the manifest's ``export`` entry and ``tail_consts.npz`` let the driver run the host tail and the export
decode on the board side, letterboxing the image as the family does; its detections equal the golden-simulator
flow's (`invoke detect`) for the same image."""
import numpy as np
import onnx
import pytest

from generator.flows.artifacts import TAIL_CONSTS, write_artifacts
from generator.eval import data
from generator.exec import run_golden
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.flows.pipeline import compile_model, detections_from_heads, quantize_image
from generator.frontend.yolo_family import build
from host.driver import YoloAccelerator
from host.manifest import read_manifest
from host.preprocess import load_image

#: random weights: scores near the families' initial priors (YOLOX's are lower), so a low threshold gives detections
THRESH = {"yolov5n": 0.002, "yolox_nano": 1e-4}


@pytest.mark.parametrize("family,resize", [("yolov5n", "letterbox"), ("yolox_nano", "letterbox_topleft")])
def test_driver_runs_the_export_decode_like_invoke_detect(tmp_path, family, resize):
    path = tmp_path / f"{family}.onnx"
    onnx.save(build(family, 64, "silu", 17, classes=6, seed=5), str(path))
    c = compile_model("zcu19eg", "int8-asym", model=path, progress=False, require_detection=True)
    pkg = write_artifacts(c, tmp_path / "pkg")
    m = read_manifest(pkg / "manifest.json")
    assert m.export.format == "obj" and (pkg / TAIL_CONSTS).is_file()   # (YOLOv8's noobj: test_yolo_family)
    assert m.export.resize == resize
    assert all(h.yolo is None for h in m.heads) and m.names == [f"class{i}" for i in range(6)]
    img = load_image(data.sample_images()["bus"])
    heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, img))
    want = detections_from_heads(c, heads, img.shape[1], img.shape[0], thresh=THRESH[family])
    with active(GoldenSimDevice("zcu19eg")):
        got = YoloAccelerator(pkg, timeout_s=300.0, thresh=THRESH[family]).detect(img)
    assert want and got == want
    assert all(0 <= d["box"][0] <= d["box"][2] < img.shape[1] for d in got)
    assert np.isfinite([d["score"] for d in got]).all()

"""The one head decoder (host/decode.py) at its three call sites on a shipped image (bus): the PYNQ driver (over the
golden-simulator device, from the package's typed manifest), the golden flow (generator.flows.pipeline
.detections_from_heads, from the compiled graph) and the accuracy table's float reference (generator.flows.accuracy
.float_detections, onnxruntime) hold the same decode description, and each one's detections equal an independent
reference: the loop-by-loop darknet transcription of tests/host/test_host.py on the heads (dequantized here in
float64 from the quantized graph's own parameters, or onnxruntime's float outputs), and for exports with the decode
in the graph (YOLOv5- and YOLOX-shaped, random weights) a decode written here from the exporters' rules (Ultralytics'
centred letterbox with its ``round(d / 2 -+ 0.1)`` padding, YOLOX's top-left one and its unnormalized BGR input;
score = objectness x class probability; per-class greedy NMS)."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from generator.flows.artifacts import write_artifacts
from generator.eval import data
from generator.flows.accuracy import float_detections, float_model
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.flows.decoding import head_decoder
from generator.flows.pipeline import class_names, detections_from_heads
from generator.frontend.yolo_family import build
from host.driver import YoloAccelerator
from host.preprocess import darknet_resize, load_image
from host.yolo import YoloHead

from helpers import compiled_model
from test_host import ref_detections

SIM_TIMEOUT_S = 300.0


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The official YOLOv4-tiny (int8-asym) package run by the driver on bus: (Compiled, driver, image, the driver's
    detections, its integer heads {name: [C, H, W]})."""
    c = compiled_model("zcu19eg", "int8-asym")
    pkg = write_artifacts(c, tmp_path_factory.mktemp("pkg"))
    img = load_image(data.sample_images()["bus"])
    with active(GoldenSimDevice("zcu19eg")):
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S)
        dets = acc.detect(img)
    heads = {h.name: np.array(v).transpose(2, 0, 1).astype(np.int64)
             for h, v in zip(acc.manifest.heads, acc.sets[0].heads)}
    return c, acc, img, dets, heads


def _same(got: list, ref: list) -> None:
    """Detections ``got`` (dicts) equal the reference's (class, score, box) tuples as multisets (scores to 1e-5, box
    corners to 0.01 px: float32 against float64), sorted by score."""
    key = lambda t: (t[0], round(t[1], 4), [round(v, 1) for v in t[2]])
    g = sorted(((d["class_id"], d["score"], d["box"]) for d in got), key=key)
    r = sorted(ref, key=key)
    assert len(g) == len(r) and g, (len(g), len(r))
    for (gc, gs, gb), (rc, rs, rb) in zip(g, r):
        assert gc == rc and gs == pytest.approx(rs, abs=1e-5)
        np.testing.assert_allclose(gb, rb, atol=1e-2)
    assert [d["score"] for d in got] == sorted((d["score"] for d in got), reverse=True)


def _onnx_yolo(path) -> list:
    """The model's ``darknet_yolo`` metadata, read from the ONNX file (not through the generator)."""
    return json.loads({p.key: p.value for p in onnx.load(str(path)).metadata_props}["darknet_yolo"])


def test_three_call_sites_hold_one_decode_description(tiny):
    c, acc, _, _, _ = tiny
    drv = acc.decoder
    gold = head_decoder(c.qgraph, class_names(c))
    _, flo, _ = float_model(c.model_path)
    yolo = {y["output"]: YoloHead.from_dict(y) for y in _onnx_yolo(c.model_path)}
    for d in (drv, gold, flo):
        assert [(h.name, h.yolo) for h in d.heads] == [(o, yolo[o]) for o in c.qgraph.outputs]
        assert (d.net_w, d.net_h, d.names, d.export) == (416, 416, data.coco_names(), None)
    assert [(h.scale, h.zero_point) for h in gold.heads] == [(h.scale, h.zero_point) for h in drv.heads]
    assert all(h.scale is None for h in flo.heads)


def test_driver_and_golden_flow_decode_the_heads_as_darknet(tiny):
    c, _, img, dets, heads = tiny
    assert dets == detections_from_heads(c, heads, img.shape[1], img.shape[0])
    g = c.qgraph
    fl = {o: ((heads[o] - g.tensors[o].zero_point) * np.asarray(g.tensors[o].deq_scale, np.float64))[None]
          for o in g.outputs}
    yolo = _onnx_yolo(c.model_path)
    ref = ref_detections([fl[y["output"]] for y in yolo], [YoloHead.from_dict(y) for y in yolo], 416, 416,
                         img.shape[1], img.shape[0], 0.25, 0.45)
    _same(dets, ref)
    assert {d["label"] for d in dets} >= {"person", "bus"}


def test_float_reference_is_onnxruntime_decoded_as_darknet(tiny):
    c, _, img, _, _ = tiny
    yolo = _onnx_yolo(c.model_path)
    sess = ort.InferenceSession(str(c.model_path), providers=["CPUExecutionProvider"])
    outs = sess.run([y["output"] for y in yolo], {sess.get_inputs()[0].name:
                                                   darknet_resize(img, 416, 416).transpose(2, 0, 1)[None]})
    ref = ref_detections(outs, [YoloHead.from_dict(y) for y in yolo], 416, 416, img.shape[1], img.shape[0], 0.25,
                         0.45)
    _same(float_detections(c.model_path, img), ref)


def _letterboxed(img: np.ndarray, net: int, topleft: bool) -> tuple[np.ndarray, float, int, int]:
    """(float32 [net, net, 3] RGB 0..1 input, gain, left, top) as the exporters letterbox (the image part resized
    bilinearly by darknet_resize, the host's resampling): Ultralytics ``LetterBox`` (gain min(net/h, net/w), scaled
    size rounded, padding split ``round(d / 2 -+ 0.1)``), YOLOX ``preproc`` (scaled size truncated, top-left)."""
    h, w = img.shape[:2]
    r = min(net / h, net / w)
    if topleft:
        nw, nh, left, top = int(w * r), int(h * r), 0, 0
    else:
        nw, nh = int(round(w * r)), int(round(h * r))
        left, top = int(round((net - nw) / 2 - 0.1)), int(round((net - nh) / 2 - 0.1))
    x = np.full((net, net, 3), 114 / 255, np.float32)
    x[top:top + nh, left:left + nw] = darknet_resize(img, nw, nh)
    return x, r, left, top


def _ref_export(out: np.ndarray, gain: float, left: int, top: int, img_w: int, img_h: int, thresh: float,
                nms: float = 0.45) -> list:
    """(class, score, box) of a decoded [1, N, 5 + classes] export output (YOLOv5 / YOLOX), loop by loop: a
    candidate with objectness > thresh, score objectness x probability (0 at or below thresh), its box mapped back
    through the letterbox (``(v - pad) / gain``), per-class greedy NMS (IoU > nms), boxes clipped to the image."""
    cands = []
    for row in out[0].astype(np.float64):
        if not row[4] > thresh:
            continue
        cx, cy, bw, bh = row[:4]
        box = [(cx - bw / 2 - left) / gain, (cy - bh / 2 - top) / gain, (cx + bw / 2 - left) / gain,
               (cy + bh / 2 - top) / gain]
        cands.append((box, [p if p > thresh else 0.0 for p in row[4] * row[5:]]))

    def iou(a, b):
        iw, ih = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
        inter = iw * ih if iw > 0 and ih > 0 else 0.0
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0.0

    found = []
    for k in range(out.shape[2] - 5):
        order = sorted((i for i in range(len(cands)) if cands[i][1][k] > 0), key=lambda i: -cands[i][1][k])
        kept = []
        for i in order:
            if all(iou(cands[i][0], cands[j][0]) <= nms for j in kept):
                kept.append(i)
        for i in kept:
            if cands[i][1][k] > thresh:
                b = cands[i][0]
                found.append((k, cands[i][1][k], [min(max(b[0], 0.0), img_w - 1.0), min(max(b[1], 0.0), img_h - 1.0),
                                                  min(max(b[2], 0.0), img_w - 1.0), min(max(b[3], 0.0), img_h - 1.0)]))
    return found


@pytest.mark.parametrize("family,thresh", [("yolov5n", 0.002), ("yolox_nano", 1e-4)])
def test_float_reference_of_an_export_letterboxes_as_the_exporter(tmp_path, family, thresh):
    """An export with its decode in the graph: the float reference feeds onnxruntime the exporter's letterboxed
    input (YOLOX: BGR 0..255) and maps the decoded boxes back through that letterbox."""
    path = tmp_path / f"{family}.onnx"
    onnx.save(build(family, 64, "silu", 17, classes=6, seed=5), str(path))
    img = load_image(data.sample_images()["bus"])
    x, gain, left, top = _letterboxed(img, 64, family == "yolox_nano")
    if family == "yolox_nano":
        x = x[:, :, ::-1] * np.float32(255)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (out,) = sess.run(None, {sess.get_inputs()[0].name: np.ascontiguousarray(x.transpose(2, 0, 1)[None])})
    got = float_detections(path, img, thresh=thresh)
    _same(got, _ref_export(out, gain, left, top, img.shape[1], img.shape[0], thresh))
    assert float_model(path)[1].export.resize == ("letterbox_topleft" if family == "yolox_nano" else "letterbox")

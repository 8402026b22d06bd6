"""Tests of the darknet cfg + weights -> ONNX converter (generator/frontend/darknet/).

References used, all independent of the converter code:
* the official YOLOv4-tiny files (float count from the file size, head shapes from the published architecture);
* OpenCV's own darknet importer (cv2.dnn.readNetFromDarknet) run on a real photo;
* a plain numpy implementation of darknet's layers on a handmade cfg with random weights
  (tests/frontend/test_darknet_small.py).
"""
from __future__ import annotations

import json
import struct

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import shape_inference

from generator.eval.data import DataMissingError, sample_images, yolov4_tiny_cfg, yolov4_tiny_weights
from generator.frontend.darknet import DarknetError, Section, darknet_to_onnx, main, parse_cfg

OFFICIAL_FLOATS = 6_062_814          # DATA.md; also (24,251,276 - 20-byte header) / 4


def _official():
    try:
        return yolov4_tiny_cfg(), yolov4_tiny_weights()
    except DataMissingError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def official():
    cfg, weights = _official()
    return cfg, weights, darknet_to_onnx(cfg, weights)


def _meta(model):
    return {p.key: json.loads(p.value) for p in model.metadata_props}


def _shape(vi):
    return [d.dim_value for d in vi.type.tensor_type.shape.dim]


# ------------------------------------------------------------------------------------------------------------
# 1. official yolov4-tiny

def test_official_converts(official, tmp_path):
    cfg, weights, model = official
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 8
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 13)]
    inferred = shape_inference.infer_shapes(model, strict_mode=True)
    assert [i.name for i in inferred.graph.input] == ["input"]
    assert _shape(inferred.graph.input[0]) == [1, 3, 416, 416]
    assert [(o.name, _shape(o)) for o in inferred.graph.output] == [("layer_29", [1, 255, 13, 13]),
                                                                    ("layer_36", [1, 255, 26, 26])]
    # every float of the file is consumed: file size minus the 20-byte header (version 0.2.5, 64-bit seen)
    assert (weights.stat().st_size - 20) // 4 == OFFICIAL_FLOATS
    meta = _meta(model)
    assert meta["darknet_floats_consumed"] == OFFICIAL_FLOATS
    assert meta["darknet_header"] == {"major": 0, "minor": 2, "revision": 5, "seen": meta["darknet_header"]["seen"]}
    assert meta["darknet_net"] == {"width": 416, "height": 416, "channels": 3}
    anchors = [[10, 14], [23, 27], [37, 58], [81, 82], [135, 169], [344, 319]]
    assert meta["darknet_yolo"] == [
        {"output": "layer_29", "layer": 30, "anchors": anchors, "mask": [3, 4, 5], "classes": 80,
         "scale_x_y": 1.05, "cfg_line": 217},
        {"output": "layer_36", "layer": 37, "anchors": anchors, "mask": [1, 2, 3], "classes": 80,
         "scale_x_y": 1.05, "cfg_line": 266},
    ]
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("Conv") == 21 and ops.count("BatchNormalization") == 19 and ops.count("LeakyRelu") == 19
    assert ops.count("Split") == 3 and ops.count("MaxPool") == 3 and ops.count("Resize") == 1
    names = {n.name: n for n in model.graph.node}
    assert {"conv_0", "bn_0", "leaky_0", "split_3", "route_8", "maxpool_9", "upsample_33", "route_34",
            "conv_29", "conv_36"} <= set(names)
    assert "bn_29" not in names and len(names["conv_29"].input) == 3     # linear head: conv with bias, no BN
    assert len(names["conv_0"].input) == 2                               # BN conv: no bias input
    assert list(names["split_3"].output) == ["layer_3_part0", "layer_3"]  # group_id=1: second half
    maxpool_pads = {n.name: [a.ints for a in n.attribute if a.name == "pads"][0] for n in model.graph.node
                    if n.op_type == "MaxPool"}
    assert all(list(p) == [0, 0, 0, 0] for p in maxpool_pads.values())   # 2x2/2 on even sizes
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT
                 and not t.name.endswith(".scales"))
    assert params == OFFICIAL_FLOATS

    # CLI writes the same model
    out = tmp_path / "y.onnx"
    assert main([str(cfg), str(weights), str(out)]) == 0
    saved = onnx.load(str(out))
    assert [o.name for o in saved.graph.output] == ["layer_29", "layer_36"]
    assert _meta(saved)["darknet_floats_consumed"] == OFFICIAL_FLOATS


# ------------------------------------------------------------------------------------------------------------
# 2. OpenCV's darknet importer as an independent numerical reference

def _bus_blob(h, w):
    from PIL import Image

    img = Image.open(sample_images()["bus"]).convert("RGB").resize((w, h), Image.BILINEAR)
    return (np.asarray(img, np.float32) / 255.0).transpose(2, 0, 1)[None].copy()


def test_matches_opencv_darknet_importer(official):
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless (requirements.txt) not installed")
    if not hasattr(cv2, "dnn") or not hasattr(cv2.dnn, "readNetFromDarknet"):
        pytest.skip(f"OpenCV {cv2.__version__} has no readNetFromDarknet (removed in 5.x)")
    cfg, weights, model = official
    blob = _bus_blob(416, 416)
    net = cv2.dnn.readNetFromDarknet(str(cfg), str(weights))
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setInput(blob)
    # OpenCV names its darknet layers conv_<darknet index>: the raw head convolutions feeding the two [yolo]
    heads = [y["output"].replace("layer_", "conv_") for y in _meta(model)["darknet_yolo"]]
    assert heads == ["conv_29", "conv_36"] and set(heads) <= set(net.getLayerNames())
    ref = net.forward(heads)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ours = sess.run(None, {"input": blob})
    for name, a, b in zip(heads, ours, ref):
        assert a.shape == b.shape, name
        scale = float(np.abs(b).max())
        assert scale > 1.0, name        # a real, non-degenerate activation map
        err = float(np.abs(a - b).max())
        assert err <= 1e-3 * scale, f"{name}: max |ours - opencv| = {err} vs max |opencv| = {scale}"


# ------------------------------------------------------------------------------------------------------------
# 3. bad input

def test_truncated_weights(official, tmp_path):
    cfg, weights, _ = official
    data = weights.read_bytes()
    cut = tmp_path / "yolov4-tiny.weights"
    # header + 1000 floats: conv 0 (cfg line 25) needs 32*4 + 32*3*3*3 = 992, conv 1 (line 33) needs
    # 64*4 + 64*32*3*3 = 18688 and finds 8
    cut.write_bytes(data[:20 + 4 * 1000])
    with pytest.raises(DarknetError) as e:
        darknet_to_onnx(cfg, cut)
    msg = str(e.value)
    assert "yolov4-tiny.weights truncated" in msg
    assert "[convolutional] at yolov4-tiny.cfg:33" in msg and "needs 18688 floats, only 8 left" in msg
    # last 100 floats missing: the last head conv (line 259: 255 filters, 256 inputs, 1x1, bias) needs 65535
    cut.write_bytes(data[:-400])
    with pytest.raises(DarknetError, match=r"yolov4-tiny\.cfg:259 .*needs 65535 floats, only 65435 left"):
        darknet_to_onnx(cfg, cut)
    cut.write_bytes(data[:15])
    with pytest.raises(DarknetError, match="truncated: header"):
        darknet_to_onnx(cfg, cut)


def test_weights_with_extra_data(official, tmp_path):
    cfg, weights, _ = official
    extra = tmp_path / "yolov4-tiny.weights"
    extra.write_bytes(weights.read_bytes() + struct.pack("<2f", 1.0, 2.0))
    with pytest.raises(DarknetError) as e:
        darknet_to_onnx(cfg, extra)
    msg = str(e.value)
    assert "yolov4-tiny.weights" in msg and "2 unread float(s)" in msg
    assert f"needs {OFFICIAL_FLOATS} floats" in msg and f"holds {OFFICIAL_FLOATS + 2}" in msg
    extra.write_bytes(weights.read_bytes() + b"\0\0\0")
    with pytest.raises(DarknetError, match="0 unread float.* and 3 stray byte"):
        darknet_to_onnx(cfg, extra)


def _edited_cfg(tmp_path, cfg, inserts: dict[int, str], name="yolov4-tiny.cfg"):
    """Copy ``cfg`` inserting text before the given 1-based lines; returns the new path."""
    lines = cfg.read_text().splitlines()
    for at in sorted(inserts, reverse=True):
        lines[at - 1:at - 1] = inserts[at].splitlines()
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_unsupported_sections_all_listed(official, tmp_path):
    cfg, weights, _ = official
    # [dropout] inserted before line 84 ([maxpool]) lands on line 84; [reorg] before line 178 lands on 178 + 3
    bad = _edited_cfg(tmp_path, cfg, {84: "[dropout]\nprobability=0.5\ndropblock=0\n",
                                      178: "[reorg]\nstride=2\n"})
    assert bad.read_text().splitlines()[83] == "[dropout]" and bad.read_text().splitlines()[180] == "[reorg]"
    with pytest.raises(DarknetError) as e:
        darknet_to_onnx(bad, weights)
    msg = str(e.value)
    assert "2 unsupported section(s)" in msg
    assert "yolov4-tiny.cfg:84 [dropout]" in msg and "yolov4-tiny.cfg:181 [reorg]" in msg


def test_grouped_convolution_that_does_not_divide_is_rejected(official, tmp_path):
    cfg, weights, _ = official
    bad = _edited_cfg(tmp_path, cfg, {58: "groups=5"})      # inside the [convolutional] of line 54 (32 -> 32)
    with pytest.raises(DarknetError, match=r"yolov4-tiny\.cfg:54 \[convolutional\]: groups=5 must divide the 32 "
                                           r"input channels and filters=32"):
        darknet_to_onnx(bad, weights)


def test_other_cfg_errors(official, tmp_path):
    cfg, weights, _ = official
    bad = _edited_cfg(tmp_path, cfg, {31: "activation=hardtan"}, name="a.cfg")  # first key wins: line 31 of conv 25
    with pytest.raises(DarknetError, match=r"a\.cfg:25 \[convolutional\]: activation=.hardtan."):
        darknet_to_onnx(bad, weights)
    text = cfg.read_text().replace("layers = -4", "layers = -1")               # route 31 -> the [yolo] 30 (line 217)
    (tmp_path / "b.cfg").write_text(text)
    with pytest.raises(DarknetError, match=r"b\.cfg:234 \[route\]: routes to \[yolo\]"):
        darknet_to_onnx(tmp_path / "b.cfg", weights)
    (tmp_path / "c.cfg").write_text("width=3\n[net]\n")
    with pytest.raises(DarknetError, match=r"c\.cfg:1: option"):
        parse_cfg(tmp_path / "c.cfg")


def test_parse_cfg(tmp_path):
    p = tmp_path / "t.cfg"
    p.write_text("# comment\n[net]\n width = 32 \n;x=1\n\n[route]\nlayers = -1, 2 # inline\nlayers=9\n")
    assert parse_cfg(p) == [Section("net", 2, {"width": "32"}), Section("route", 6, {"layers": "-1,2"})]


def test_unknown_keys_are_errors_with_the_nearest_valid_key(tmp_path):
    """darknet only warns "Unused field" and runs a different network; we refuse, listing every unknown key."""
    p = tmp_path / "t.cfg"
    p.write_text("[net]\nwidth=32\nheight=32\nchannels=3\nbatchsize=1\n[convolutional]\nfilters=8\nsize=3\npd=1\n"
                 "activaton=leaky\n[yolo]\nnames=x.names\nzzzz=1\n")
    with pytest.raises(DarknetError) as e:
        darknet_to_onnx(p, tmp_path / "none.weights")
    msg = str(e.value)
    assert "t.cfg:5 [net]: unknown key 'batchsize' (did you mean 'batch'?)" in msg
    assert "t.cfg:9 [convolutional]: unknown key 'pd' (did you mean 'pad'?)" in msg
    assert "t.cfg:10 [convolutional]: unknown key 'activaton' (did you mean 'activation'?)" in msg
    assert "t.cfg:12 [yolo]: unknown key 'names' (names= belongs in the [net] section)" in msg
    assert "t.cfg:13 [yolo]: unknown key 'zzzz' (valid keys of [yolo]: " in msg


def test_missing_activation_names_darknets_default(tmp_path):
    p = tmp_path / "t.cfg"
    p.write_text("[net]\nwidth=32\nheight=32\nchannels=3\n[convolutional]\nfilters=8\nsize=3\n")
    with pytest.raises(DarknetError, match=r"t\.cfg:5 \[convolutional\]: no activation= given: darknet's default "
                                           r"is 'logistic'"):
        darknet_to_onnx(p, tmp_path / "none.weights")


def test_official_cfg_has_only_known_keys_and_yolo_params(official):
    from generator.frontend.darknet import yolo_params

    cfg, _, model = official
    heads, names = yolo_params(cfg)
    meta = _meta(model)
    assert names is None and "class_names" not in meta
    assert [{k: h[k] for k in ("anchors", "mask", "classes", "scale_x_y", "cfg_line", "layer")} for h in heads] == \
        [{k: y[k] for k in ("anchors", "mask", "classes", "scale_x_y", "cfg_line", "layer")}
         for y in meta["darknet_yolo"]]
    assert len(meta["darknet_weights_sha256"]) == 64

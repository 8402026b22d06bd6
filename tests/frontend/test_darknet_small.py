"""Tests of the darknet converter (generator/frontend/darknet/) on a handmade cfg with random weights that this test
writes in darknet's binary format itself, against a plain numpy implementation of darknet's layers (below).
The official YOLOv4-tiny files, OpenCV's importer and the error cases are in tests/frontend/test_darknet.py.
"""
from __future__ import annotations

import json
import struct

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from generator.frontend.darknet import DarknetError, darknet_to_onnx


def _meta(model):
    """The model's metadata_props, JSON-decoded: key -> value."""
    return {p.key: json.loads(p.value) for p in model.metadata_props}


SMALL_CFG = """\
[net]
width=20
height=16
channels=3

# 0: 3x16x20 -> 8x16x20
[convolutional]
batch_normalize=1
filters=8
size=3
stride=1
pad=1
activation=leaky

# 1: -> 8x8x10, no BN, relu
[convolutional]
filters=8
size=3
stride=2
pad=1
activation=relu

# 2: second half of the channels -> 4x8x10
[route]
layers=-1
groups=2
group_id=1

# 3: 1x1 (pad=1 means size//2 = 0) -> 6x8x10
[convolutional]
batch_normalize=1
filters=6
size=1
stride=1
pad=1
activation=linear

# 4: concat layers 3 and 1 -> 14x8x10
[route]
layers=-1,-3

# 5: darknet padding = size-1 = 1 -> 14x8x10
[maxpool]
size=2
stride=1

# 6: -> 14x4x5
[maxpool]
size=2
stride=2

# 7: explicit padding= -> 8x4x5
[convolutional]
batch_normalize=1
filters=8
size=3
stride=1
padding=1
activation=leaky

# 8: padding 2 (begin 1) on 4x5 -> 8x2x3
[maxpool]
size=3
stride=2

# 9: head 1
[convolutional]
filters=14
size=1
stride=1
pad=1
activation=linear

[yolo]
mask=0,1
anchors=2,3, 4,5, 6,7, 8,9
classes=2
num=4

# 11: absolute index
[route]
layers=7

# 12: -> 8x8x10
[upsample]
stride=2

# 13: -> 22x8x10
[route]
layers=-1,4

# 14: head 2, 3x3 with bias
[convolutional]
filters=14
size=3
stride=1
pad=1
activation=linear

[yolo]
mask=2,3
anchors=2,3, 4,5, 6,7, 8,9
classes=2
num=4
scale_x_y=1.1
"""

# (filters, c_in, size, batch_normalize) of each [convolutional] above, derived by hand
SMALL_CONVS = {0: (8, 3, 3, True), 1: (8, 8, 3, False), 3: (6, 4, 1, True), 7: (8, 14, 3, True),
               9: (14, 8, 1, False), 14: (14, 22, 3, False)}


def _random_weights(rng):
    params = {}
    for i, (f, c, k, bn) in SMALL_CONVS.items():
        d = {"bias": rng.normal(0, 0.5, f)}
        if bn:
            d.update(scale=rng.uniform(0.5, 1.5, f), mean=rng.normal(0, 0.5, f), var=rng.uniform(0.2, 2.0, f))
        d["weight"] = rng.normal(0, 1.0 / np.sqrt(c * k * k), (f, c, k, k))
        params[i] = {key: v.astype(np.float32) for key, v in d.items()}
    return params


def _write_weights(path, params, version=(0, 2, 5)):
    """Darknet format: int32 major, minor, revision; seen (int64 if major*10+minor >= 2 else int32); per conv
    biases, [scales, rolling_mean, rolling_variance], weights (OIHW), float32 little endian."""
    major, minor, rev = version
    with open(path, "wb") as fh:
        fh.write(struct.pack("<3i", major, minor, rev))
        fh.write(struct.pack("<q" if major * 10 + minor >= 2 else "<i", 12345))
        for i in sorted(params):
            for key in ("bias", "scale", "mean", "var", "weight"):
                if key in params[i]:
                    fh.write(params[i][key].astype("<f4").tobytes())


def _ref_conv(x, w, b, stride, pad):
    """Direct convolution: x [C, H, W], w [F, C, K, K] -> [F, OH, OW]."""
    c, h, wd = x.shape
    f, _, k, _ = w.shape
    xp = np.zeros((c, h + 2 * pad, wd + 2 * pad), np.float64)
    xp[:, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    out = np.zeros((f, oh, ow))
    for dy in range(k):
        for dx in range(k):
            patch = xp[:, dy:dy + stride * (oh - 1) + 1:stride, dx:dx + stride * (ow - 1) + 1:stride]
            out += np.einsum("fc,chw->fhw", w[:, :, dy, dx], patch)
    return out + (0 if b is None else b[:, None, None])


def _ref_maxpool(x, size, stride):
    """Darknet forward_maxpool_layer: padding = size-1, out = (w + padding - size)//stride + 1, window start
    = o*stride - padding//2, taps outside the image are skipped."""
    c, h, w = x.shape
    padding = size - 1
    oh, ow = (h + padding - size) // stride + 1, (w + padding - size) // stride + 1
    off = -(padding // 2)
    out = np.full((c, oh, ow), -np.inf)
    for i in range(oh):
        for j in range(ow):
            for n in range(size):
                for m in range(size):
                    y, xx = off + i * stride + n, off + j * stride + m
                    if 0 <= y < h and 0 <= xx < w:
                        out[:, i, j] = np.maximum(out[:, i, j], x[:, y, xx])
    return out


def _ref_forward(x, p):
    """Numpy float64 forward of SMALL_CFG, darknet semantics; returns the inputs of the two [yolo] layers."""
    def conv(i, x, stride, pad, act):
        d = p[i]
        y = _ref_conv(x, d["weight"], None if "scale" in d else d["bias"], stride, pad)
        if "scale" in d:
            y = (y - d["mean"][:, None, None]) / np.sqrt(d["var"][:, None, None] + 1e-5)
            y = y * d["scale"][:, None, None] + d["bias"][:, None, None]
        if act == "leaky":
            y = np.where(y > 0, y, 0.1 * y)
        elif act == "relu":
            y = np.maximum(y, 0)
        return y

    L = {}
    L[0] = conv(0, x, 1, 1, "leaky")
    L[1] = conv(1, L[0], 2, 1, "relu")
    L[2] = L[1][4:8]                                   # groups=2 group_id=1
    L[3] = conv(3, L[2], 1, 0, "linear")
    L[4] = np.concatenate([L[3], L[1]], 0)
    L[5] = _ref_maxpool(L[4], 2, 1)
    L[6] = _ref_maxpool(L[5], 2, 2)
    L[7] = conv(7, L[6], 1, 1, "leaky")
    L[8] = _ref_maxpool(L[7], 3, 2)
    L[9] = conv(9, L[8], 1, 0, "linear")
    L[11] = L[7]
    L[12] = L[11].repeat(2, axis=1).repeat(2, axis=2)  # nearest x2
    L[13] = np.concatenate([L[12], L[4]], 0)
    L[14] = conv(14, L[13], 1, 1, "linear")
    return L[9], L[14]


@pytest.mark.parametrize("version", [(0, 2, 5), (0, 1, 0)], ids=["seen64", "seen32"])
def test_small_cfg_matches_numpy_reference(tmp_path, version):
    rng = np.random.default_rng(7)
    cfg = tmp_path / "small.cfg"
    cfg.write_text(SMALL_CFG)
    params = _random_weights(rng)
    _write_weights(tmp_path / "small.weights", params, version)
    model = darknet_to_onnx(cfg, tmp_path / "small.weights", tmp_path / "small.onnx")
    onnx.checker.check_model(onnx.load(str(tmp_path / "small.onnx")), full_check=True)

    meta = _meta(model)
    n_floats = sum(f * (4 if bn else 1) + f * c * k * k for f, c, k, bn in SMALL_CONVS.values())
    assert meta["darknet_floats_consumed"] == n_floats
    assert meta["darknet_header"] == {"major": version[0], "minor": version[1], "revision": version[2],
                                      "seen": 12345}
    assert [(y["output"], y["layer"], y["mask"], y["classes"], y["scale_x_y"], y["cfg_line"])
            for y in meta["darknet_yolo"]] == [("layer_9", 10, [0, 1], 2, 1.0, 74),
                                               ("layer_14", 15, [2, 3], 2, 1.1, 100)]
    assert meta["darknet_yolo"][0]["anchors"] == [[2, 3], [4, 5], [6, 7], [8, 9]]
    lines = SMALL_CFG.splitlines()
    assert lines[73] == "[yolo]" and lines[99] == "[yolo]"

    x = rng.uniform(0, 1, (1, 3, 16, 20)).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ours = sess.run(None, {"input": x})
    refs = _ref_forward(x[0].astype(np.float64), params)
    assert [o.shape for o in ours] == [(1, 14, 2, 3), (1, 14, 8, 10)]
    for a, r in zip(ours, refs):
        np.testing.assert_allclose(a[0], r, rtol=1e-4, atol=1e-4 * np.abs(r).max())

    pads = {n.name: list([a.ints for a in n.attribute if a.name == "pads"][0]) for n in model.graph.node
            if n.op_type == "MaxPool"}
    assert pads == {"maxpool_5": [0, 0, 1, 1], "maxpool_6": [0, 0, 0, 0], "maxpool_8": [1, 1, 0, 1]}


def test_small_cfg_weight_count_errors(tmp_path):
    """Weights written for a cfg with one filter fewer are short by exactly the expected amount."""
    cfg = tmp_path / "small.cfg"
    cfg.write_text(SMALL_CFG)
    params = _random_weights(np.random.default_rng(0))
    params[14] = {k: v[:13] for k, v in params[14].items()}          # head 2 with 13 instead of 14 filters
    _write_weights(tmp_path / "small.weights", params)
    need, have = 14 + 14 * 22 * 9, 13 + 13 * 22 * 9
    with pytest.raises(DarknetError, match=rf"small\.weights truncated: \[convolutional\] at small\.cfg:93 "
                                           rf"\(layer 14\) needs {need} floats, only {have} left"):
        darknet_to_onnx(cfg, tmp_path / "small.weights")
    assert SMALL_CFG.splitlines()[92] == "[convolutional]"


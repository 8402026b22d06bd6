"""Darknet blocks beyond YOLOv4-tiny's (SPP max-pools, [shortcut] residuals) through the converter and the compiler:
the converted ONNX against darknet's semantics (numpy), and the golden simulator against the integer reference and
onnxruntime. Weights are random, written in darknet's binary format by tests/frontend/test_darknet_small.py's
helper."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from generator.frontend.darknet import DarknetError, darknet_to_onnx
from test_darknet_small import _ref_conv, _write_weights


SPP_CFG = """[net]
width=20
height=16
channels=3

# 0: -> 8x16x20
[convolutional]
batch_normalize=1
filters=8
size=3
stride=1
pad=1
activation=leaky

# 1-6: SPP as in yolov4.cfg / yolov3-spp.cfg: darknet pads a size-k stride-1 pool by (k-1)/2 on every side
[maxpool]
stride=1
size=5

[route]
layers=-2

[maxpool]
stride=1
size=9

[route]
layers=-4

[maxpool]
stride=1
size=13

# 7: -> 32x16x20
[route]
layers=-1,-3,-5,-6

# 8: head
[convolutional]
filters=14
size=1
stride=1
pad=1
activation=linear

[yolo]
mask=0,1
anchors=2,3, 4,5
classes=2
num=2
"""


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_spp_cfg_compiles_and_matches_onnxruntime(tmp_path, mode):
    """An SPP block from a darknet cfg (max-pools 5, 9, 13 at stride 1, darknet padding) converts to ONNX pools
    padded on every side, and compiles: the golden simulator equals the integer reference bit for bit and is within
    the quantization error of onnxruntime on the converted model (which matches darknet's own numpy semantics
    in the test above)."""
    from helpers import compile_small, run_both, sqnr_db

    rng = np.random.default_rng(5)
    (tmp_path / "spp.cfg").write_text(SPP_CFG)
    params = {0: {"bias": rng.normal(0, 0.5, 8), "scale": rng.uniform(0.5, 1.5, 8), "mean": rng.normal(0, 0.5, 8),
                  "var": rng.uniform(0.2, 2.0, 8), "weight": rng.normal(0, 0.2, (8, 3, 3, 3))},
              8: {"bias": rng.normal(0, 0.5, 14), "weight": rng.normal(0, 0.2, (14, 32, 1, 1))}}
    params = {i: {k: v.astype(np.float32) for k, v in d.items()} for i, d in params.items()}
    _write_weights(tmp_path / "spp.weights", params)
    model = darknet_to_onnx(tmp_path / "spp.cfg", tmp_path / "spp.weights", tmp_path / "spp.onnx")
    pads = sorted(list([a.ints for a in n.attribute if a.name == "pads"][0]) for n in model.graph.node
                  if n.op_type == "MaxPool")
    assert pads == [[2, 2, 2, 2], [4, 4, 4, 4], [6, 6, 6, 6]]
    gq, prog, xs = compile_small(model, mode)
    gold, ref, _ = run_both(gq, prog, xs[0])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input": xs[0]})[0]
    o = gq.outputs[0]
    assert np.array_equal(gold[o], ref[o])
    t = gq.tensors[o]
    assert sqnr_db(want[0], (ref[o] - t.zero_point) * t.deq_scale) > (30 if mode == "int8-asym" else 60)


SHORTCUT_CFG = """[net]
width=12
height=10
channels=3

# 0: -> 8x10x12
[convolutional]
batch_normalize=1
filters=8
size=3
stride=1
pad=1
activation=leaky

# 1: -> 8x10x12
[convolutional]
filters=8
size=3
stride=1
pad=1
activation=leaky

# 2: residual (yolov3-tiny-prn, darknet53): layer 1 + layer 0, then leaky
[shortcut]
from=-2
activation=leaky

# 3: head
[convolutional]
filters=14
size=1
stride=1
pad=1
activation=linear

[yolo]
mask=0,1
anchors=2,3, 4,5
classes=2
num=2
"""


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_shortcut_cfg_matches_numpy_and_compiles(tmp_path, mode):
    """A darknet [shortcut] (from=-2, activation=leaky) converts to Add + LeakyRelu matching darknet's semantics
    (numpy, below), and compiles: the golden simulator equals the integer reference and is within the quantization
    error of onnxruntime."""
    from helpers import compile_small, run_both, sqnr_db

    rng = np.random.default_rng(9)
    (tmp_path / "sc.cfg").write_text(SHORTCUT_CFG)
    params = {0: {"bias": rng.normal(0, 0.5, 8), "scale": rng.uniform(0.5, 1.5, 8), "mean": rng.normal(0, 0.5, 8),
                  "var": rng.uniform(0.2, 2.0, 8), "weight": rng.normal(0, 0.2, (8, 3, 3, 3))},
              1: {"bias": rng.normal(0, 0.5, 8), "weight": rng.normal(0, 0.2, (8, 8, 3, 3))},
              3: {"bias": rng.normal(0, 0.5, 14), "weight": rng.normal(0, 0.2, (14, 8, 1, 1))}}
    params = {i: {k: v.astype(np.float32) for k, v in d.items()} for i, d in params.items()}
    _write_weights(tmp_path / "sc.weights", params)
    model = darknet_to_onnx(tmp_path / "sc.cfg", tmp_path / "sc.weights", tmp_path / "sc.onnx")
    x = rng.uniform(0, 1, (1, 3, 10, 12)).astype(np.float32)

    def leaky(v):
        return np.where(v > 0, v, 0.1 * v)
    d0 = params[0]
    l0 = _ref_conv(x[0].astype(np.float64), d0["weight"], None, 1, 1)
    l0 = (l0 - d0["mean"][:, None, None]) / np.sqrt(d0["var"][:, None, None] + 1e-5)
    l0 = leaky(l0 * d0["scale"][:, None, None] + d0["bias"][:, None, None])
    l1 = leaky(_ref_conv(l0, params[1]["weight"], params[1]["bias"], 1, 1))
    l3 = _ref_conv(leaky(l1 + l0), params[3]["weight"], params[3]["bias"], 1, 0)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input": x})[0]
    np.testing.assert_allclose(want[0], l3, rtol=1e-4, atol=1e-4 * np.abs(l3).max())
    gq, prog, xs = compile_small(model, mode)
    gold, ref, _ = run_both(gq, prog, xs[0])
    o = gq.outputs[0]
    assert np.array_equal(gold[o], ref[o])
    t = gq.tensors[o]
    fl = sess.run(None, {"input": xs[0]})[0]
    assert sqnr_db(fl[0], (ref[o] - t.zero_point) * t.deq_scale) > (30 if mode == "int8-asym" else 60)


@pytest.mark.parametrize("edit,msg", [
    ("from=-2\nactivation=leaky", None),
    ("from=-2,-1\nactivation=leaky", r"sc.cfg:\d+ \[shortcut\]: from=-2,-1: exactly one layer is supported"),
    ("from=-2\nactivation=hardtan", r"\[shortcut\]: activation='hardtan' is not supported"),
    ("from=-2\nweights_type=per_channel", r"\[shortcut\]: weights_type=per_channel is not supported"),
    ("from=-3", r"\[shortcut\]: from=-3: layer -1 is not an earlier layer"),
])
def test_shortcut_refusals_name_the_cfg_line(tmp_path, edit, msg):
    from generator.frontend.darknet.cfg import parse_cfg
    from generator.frontend.darknet.layers import build_layers

    text = SHORTCUT_CFG.replace("from=-2\nactivation=leaky", edit)
    (tmp_path / "sc.cfg").write_text(text)
    secs = parse_cfg(tmp_path / "sc.cfg")
    if msg is None:
        build_layers(secs, "sc.cfg")
        return
    with pytest.raises(DarknetError, match=msg):
        build_layers(secs, "sc.cfg")


DEPTHWISE_CFG = """[net]
width=12
height=10
channels=3

# 0: -> 8x10x12
[convolutional]
batch_normalize=1
filters=8
size=3
stride=1
pad=1
activation=leaky

# 1: depthwise 3x3 stride 2 (MobileNet / YOLOX-nano style) -> 8x5x6
[convolutional]
batch_normalize=1
filters=8
groups=8
size=3
stride=2
pad=1
activation=relu

# 2: grouped 1x1, two groups -> 14x5x6 (the head)
[convolutional]
filters=14
groups=2
size=1
stride=1
pad=1
activation=linear

[yolo]
mask=0,1
anchors=2,3, 4,5
classes=2
num=2
"""


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_grouped_and_depthwise_cfg_compiles_and_matches_onnxruntime(tmp_path, mode):
    """darknet ``groups=`` (depthwise and grouped convolutions: ``filters * c/groups * size^2`` weights) converts to
    ONNX Conv ``group``, runs as dense block-diagonal convolutions: golden == integer reference, close to
    onnxruntime on the converted model, and that model equals a grouped convolution computed here in numpy."""
    from helpers import compile_small, run_both, sqnr_db

    rng = np.random.default_rng(9)
    (tmp_path / "dw.cfg").write_text(DEPTHWISE_CFG)
    bn = {"bias": rng.normal(0, 0.2, 8), "scale": rng.uniform(0.5, 1.5, 8), "mean": rng.normal(0, 0.2, 8),
          "var": rng.uniform(0.5, 2.0, 8)}
    params = {0: dict(bn, weight=rng.normal(0, 0.3, (8, 3, 3, 3))),
              1: dict(bn, weight=rng.normal(0, 0.3, (8, 1, 3, 3))),
              2: {"bias": rng.normal(0, 0.2, 14), "weight": rng.normal(0, 0.3, (14, 4, 1, 1))}}
    params = {i: {k: v.astype(np.float32) for k, v in d.items()} for i, d in params.items()}
    _write_weights(tmp_path / "dw.weights", params)
    model = darknet_to_onnx(tmp_path / "dw.cfg", tmp_path / "dw.weights", tmp_path / "dw.onnx")
    assert [a.i for n in model.graph.node for a in n.attribute if a.name == "group"] == [1, 8, 2]
    gq, prog, xs = compile_small(model, mode)
    gold, ref, _ = run_both(gq, prog, xs[0])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input": xs[0]})[0][0]
    o = gq.outputs[0]
    assert np.array_equal(gold[o], ref[o])
    t = gq.tensors[o]
    assert sqnr_db(want, (ref[o] - t.zero_point) * t.deq_scale) > (30 if mode == "int8-asym" else 60)

    def bn_leaky(v, p, slope):
        v = (v - p["mean"][:, None, None]) / np.sqrt(p["var"][:, None, None] + 1e-5) * p["scale"][:, None, None] \
            + p["bias"][:, None, None]
        return np.where(v > 0, v, slope * v)
    a = bn_leaky(_ref_conv(xs[0][0].astype(np.float64), params[0]["weight"], None, 1, 1), params[0], 0.1)
    d = np.concatenate([_ref_conv(a[c:c + 1], params[1]["weight"][c:c + 1], None, 2, 1) for c in range(8)])
    d = bn_leaky(d, params[1], 0.0)
    w2, b2 = params[2]["weight"], params[2]["bias"]
    y = np.concatenate([_ref_conv(d[4 * j:4 * j + 4], w2[7 * j:7 * j + 7], b2[7 * j:7 * j + 7], 1, 0) for j in range(2)])
    np.testing.assert_allclose(want, y, rtol=1e-3, atol=1e-3)


#: darknet activations.c: logistic, swish, mish, hard_swish (x * relu6(x + 3) / 6) in numpy
DARKNET_ACTS = {"logistic": lambda v: 1 / (1 + np.exp(-v)), "swish": lambda v: v / (1 + np.exp(-v)),
                "mish": lambda v: v * np.tanh(np.log1p(np.exp(v))),
                "hard_swish": lambda v: v * np.clip(v + 3, 0, 6) / 6}


@pytest.mark.parametrize("act", list(DARKNET_ACTS))
def test_darknet_table_activations_convert_and_run_in_post(tmp_path, act):
    """``activation=logistic|swish|mish|hard_swish`` convert to the ONNX forms exporters write, which equal
    darknet's formulas (numpy); the compiled network runs each through POST's activation table (golden == integer
    reference, close to onnxruntime)."""
    from generator.ir.passes import run_all
    from generator.frontend.onnx_loader import load_onnx
    from helpers import compile_small, run_both, sqnr_db

    rng = np.random.default_rng(3)
    cfg = DEPTHWISE_CFG.replace("activation=leaky", f"activation={act}", 1).replace("groups=8\n", "")
    (tmp_path / "a.cfg").write_text(cfg)
    params = {0: {"bias": rng.normal(0, 0.2, 8), "scale": rng.uniform(0.5, 1.5, 8), "mean": rng.normal(0, 0.2, 8),
                  "var": rng.uniform(0.5, 2.0, 8), "weight": rng.normal(0, 0.3, (8, 3, 3, 3))},
              1: {"bias": rng.normal(0, 0.2, 8), "scale": rng.uniform(0.5, 1.5, 8), "mean": rng.normal(0, 0.2, 8),
                  "var": rng.uniform(0.5, 2.0, 8), "weight": rng.normal(0, 0.3, (8, 8, 3, 3))},
              2: {"bias": rng.normal(0, 0.2, 14), "weight": rng.normal(0, 0.3, (14, 4, 1, 1))}}
    params = {i: {k: v.astype(np.float32) for k, v in d.items()} for i, d in params.items()}
    _write_weights(tmp_path / "a.weights", params)
    model = darknet_to_onnx(tmp_path / "a.cfg", tmp_path / "a.weights", tmp_path / "a.onnx")
    want_act = {"logistic": "sigmoid", "swish": "silu", "mish": "mish", "hard_swish": "hardswish"}[act]
    assert run_all(load_onnx(model)).macro_nodes()[0].attrs["macro"].act == want_act
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    v = np.linspace(-6, 6, 97, dtype=np.float32)     # the activation's nodes alone, against darknet's formula
    import onnx
    from onnx import helper
    sub = [n for n in model.graph.node if n.name.endswith("_0") and n.op_type not in ("Conv", "BatchNormalization")]
    g = helper.make_graph(sub, "act", [helper.make_tensor_value_info("layer_0_bn", onnx.TensorProto.FLOAT, [97])],
                          [helper.make_tensor_value_info("layer_0", onnx.TensorProto.FLOAT, [97])])
    m1 = helper.make_model(g, opset_imports=model.opset_import)
    got = ort.InferenceSession(m1.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"layer_0_bn": v})[0]
    np.testing.assert_allclose(got, DARKNET_ACTS[act](v.astype(np.float64)), rtol=1e-5, atol=1e-5)
    gq, prog, xs = compile_small(model, "int8-asym")
    gold, refq, _ = run_both(gq, prog, xs[0])
    o = gq.outputs[0]
    assert np.array_equal(gold[o], refq[o])
    t = gq.tensors[o]
    want = sess.run(None, {"input": xs[0]})[0][0]
    assert sqnr_db(want, (refq[o] - t.zero_point) * t.deq_scale) > 25

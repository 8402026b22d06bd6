"""Issue 41, values and models: non-finite weights, YOLO head parameters, invalid ONNX graphs, model-input bounds and
dynamic axes are refused at load with one line naming the tensor / node / cfg line / metadata key (or, for dynamic
axes, resolved), before any calibration. Loader-level tests on small models, then one CLI run per defect class."""
from __future__ import annotations

import json
import re
import time

import numpy as np
import onnx
import pytest
from onnx import numpy_helper as nh

from generator.frontend.darknet import DarknetError, darknet_to_onnx, yolo_params
from generator.frontend.modelgen import Builder
from generator.frontend.onnx_loader import MAX_INPUT_PIXELS, check_bounds, isa_limits, load_onnx
from generator.ir.graph import GraphError, Node, Tensor
from generator.quant.quantize import QuantError, calibrate
from generator.quant.ranges import collect_histograms, select_ranges
from generator.quant.quantize import QuantConfig
from test_darknet_small import SMALL_CFG, _random_weights, _write_weights
from helpers import invoke as _invoke, one_line_error as _one_line_error  # noqa: E402






def _conv_bn_model(in_shape=(1, 3, 8, 8)):
    """x -> conv (bias) -> BatchNormalization -> LeakyRelu -> conv; returns (model, names of the first conv's weight
    and bias, the BN variance initializer, the first conv output)."""
    b = Builder(list(in_shape))
    y = b.conv("x", 4)
    w, bias = b.inits[-2].name, b.inits[-1].name
    z = b.bn(y)
    var = b.inits[-1].name
    out = b.conv(b.leaky(z), 4)
    return b.model([out]), w, bias, var


def _set_init(m, name, fn):
    """Replace initializer ``name`` of ``m`` by fn(its array)."""
    for k, init in enumerate(m.graph.initializer):
        if init.name == name:
            a = nh.to_array(init).copy()
            m.graph.initializer[k].CopyFrom(nh.from_array(fn(a), name))
            return m
    raise KeyError(name)


# ------------------------------------------------------------------------------------------ 3: non-finite values
@pytest.mark.parametrize("which,value,kind", [("w", np.nan, "1 NaN"), ("bias", np.inf, "1 +inf"),
                                              ("w", -np.inf, "1 -inf")])
def test_non_finite_weights_are_named(which, value, kind):
    m, w, bias, _ = _conv_bn_model()
    name = w if which == "w" else bias

    def poison(a):
        a.flat[3 if a.ndim > 1 else 2] = value
        return a
    with pytest.raises(GraphError, match=rf"tensor '{name}' \(read by Conv_0 \(Conv\)\) holds {re.escape(kind)} of its"):
        load_onnx(_set_init(m, name, poison))


def test_negative_bn_variance_is_named():
    m, _, _, var = _conv_bn_model()

    def neg(a):
        a[2] = -0.5
        return a
    with pytest.raises(GraphError, match=rf"node BatchNormalization_1 \(BatchNormalization\): its variance '{var}' "
                                         rf"holds 1 negative value\(s\) of 4 \(-0.5 at channel 2\)"):
        load_onnx(_set_init(m, var, neg))


def test_non_finite_calibration_statistics_are_named():
    """The ranges module's guard: a NaN range (e.g. from a cache) or an input that produces inf is a QuantError
    naming the region, not numpy's 'supplied range of [nan, nan]'."""
    m, *_ = _conv_bn_model()
    from generator.ir import passes

    g = passes.run_all(load_onnx(m))
    x = np.random.default_rng(0).random((1, 3, 8, 8)).astype(np.float32)
    ranges = calibrate(g, [x], progress=False)
    region = g.tensors[g.outputs[0]].region
    bad = {**ranges, region: (float("nan"), float("nan"))}
    with pytest.raises(QuantError, match=rf"region {region}: calibration values span \[nan, nan\]"):
        collect_histograms(g, [x], bad)
    stats = collect_histograms(g, [x], ranges)
    stats[region]["lo"] = float("nan")
    with pytest.raises(QuantError, match=rf"region {region}: .*not finite"):
        select_ranges(stats, QuantConfig.from_mode("int8-asym"), inputs=g.inputs)
    with pytest.raises(QuantError, match=r"graph input 'x': calibration input 1 holds 192 non-finite value\(s\)"):
        calibrate(g, [x, np.full_like(x, np.inf)], progress=False)
    g.tensors[g.nodes[0].attrs["macro"].weight].data[...] = 3e38       # weights that overflow float32
    with pytest.raises(QuantError, match=r"region \w+: tensor '\w+' has values in \[.*\] on calibration input 0, "
                                         r"not finite numbers"), np.errstate(all="ignore"):
        calibrate(g, [np.full_like(x, 1e4)], progress=False)


def _small_darknet(tmp_path, cfg_text=SMALL_CFG, poison=None):
    """SMALL_CFG (or ``cfg_text``) and random weights (``poison(params)`` edits them) in tmp_path."""
    cfg = tmp_path / "small.cfg"
    cfg.write_text(cfg_text)
    params = _random_weights(np.random.default_rng(3))
    if poison:
        poison(params)
    _write_weights(tmp_path / "small.weights", params)
    return cfg, tmp_path / "small.weights"


def _line_of(text, needle, nth=0):
    """1-based line of the nth occurrence of ``needle`` in ``text``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    return text[:pos].count("\n") + 1


@pytest.mark.parametrize("layer,key,value,expect", [
    (7, "weight", np.nan, r"weights\[\[0, 1, 2, 2\]\] = nan is not finite"),
    (1, "bias", np.inf, r"biases\[2\] = inf is not finite"),
    (3, "var", -1.0, r"rolling_variance\[2\] = -1 is negative; a batch-normalization variance cannot be negative"),
    (0, "mean", np.nan, r"rolling_mean\[2\] = nan is not finite")])
def test_darknet_non_finite_weights_name_the_layer(tmp_path, layer, key, value, expect):
    def poison(p):
        a = p[layer][key]
        a[(0, 1, 2, 2) if a.ndim == 4 else 2] = value
    cfg, weights = _small_darknet(tmp_path, poison=poison)
    nth = {0: 0, 1: 1, 3: 2, 7: 3}[layer]      # which [convolutional] of SMALL_CFG
    line = _line_of(SMALL_CFG, "[convolutional]", nth)
    with pytest.raises(DarknetError, match=rf"small\.weights: .* of \[convolutional\] at small\.cfg:{line} \(layer "
                                           rf"{layer}\) hold 1 bad value\(s\) of \d+: {expect}"):
        darknet_to_onnx(cfg, weights)


# ------------------------------------------------------------------------------------------ 4: YOLO head parameters
_HEAD1 = "[yolo]\nmask=0,1\nanchors=2,3, 4,5, 6,7, 8,9\nclasses=2\nnum=4\n"


@pytest.mark.parametrize("new,expect", [
    ("[yolo]\nmask=0,1\nclasses=2\nnum=4\n", r"no anchors= given"),
    (_HEAD1 + "scale_x_y=nan\n", r"scale_x_y=nan: must be a finite number > 0"),
    (_HEAD1 + "scale_x_y=0\n", r"scale_x_y=0: must be a finite number > 0"),
    (_HEAD1.replace("mask=0,1", "mask=0,4"), r"num=4, 4 anchor pairs and mask=0,4 are inconsistent: darknet's"),
    (_HEAD1.replace("num=4", "num=3"), r"num=3, 4 anchor pairs and mask=0,1 are inconsistent"),
    (_HEAD1.replace("anchors=2,3,", "anchors=nan,3,"), r"anchors=nan,3,.*: nan is not a finite positive size"),
    (_HEAD1.replace("anchors=2,3,", "anchors=-2,3,"), r"anchors=-2,3,4,5,6,7,8,9: -2 is not a finite positive size"),
    (_HEAD1.replace("classes=2", "classes=0"), r"classes=0: a YOLO head needs at least one class")])
def test_darknet_yolo_parameters_are_checked(tmp_path, new, expect):
    assert SMALL_CFG.count(_HEAD1) == 1
    text = SMALL_CFG.replace(_HEAD1, new)
    line = _line_of(text, "[yolo]")
    cfg, weights = _small_darknet(tmp_path, text)
    with pytest.raises(DarknetError, match=rf"small\.cfg:{line} \[yolo\]: {expect}"):
        darknet_to_onnx(cfg, weights)
    with pytest.raises(DarknetError, match=rf"small\.cfg:{line} \[yolo\]: {expect}"):
        yolo_params(cfg)          # --yolo-cfg reads the same sections


@pytest.fixture(scope="module")
def small_onnx(tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    cfg, weights = _small_darknet(d)
    darknet_to_onnx(cfg, weights, d / "small.onnx", names=["cat", "dog"])
    return d / "small.onnx"


def _with_meta(src, dst, **meta):
    """Copy ONNX file ``src`` to ``dst`` with metadata entries replaced (values JSON-encoded unless str)."""
    m = onnx.load(str(src))
    props = {p.key: p.value for p in m.metadata_props}
    props.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()})
    del m.metadata_props[:]
    onnx.helper.set_model_props(m, props)
    onnx.save(m, str(dst))
    return dst


def _heads(small_onnx):
    m = onnx.load(str(small_onnx))
    return json.loads(next(p.value for p in m.metadata_props if p.key == "darknet_yolo"))


@pytest.mark.parametrize("edit,key", [
    (lambda h: h[0].pop("anchors"), "'darknet_yolo[0]': no 'anchors'"),
    (lambda h: h[0].update(anchors="2,3,4,5"), "'darknet_yolo[0].anchors' = 2,3,4,5: expected a non-empty list"),
    (lambda h: h[1].update(scale_x_y=float("nan")), "'darknet_yolo[1].scale_x_y' = nan: expected a finite number"),
    (lambda h: h[0].update(classes="2"), "'darknet_yolo[0].classes' = '2': expected an integer >= 1"),
    (lambda h: h[0].update(classes=3), "'darknet_yolo[0]': output 'layer_9' has 14 channels, expected"),
    (lambda h: h[0].update(mask=[0, 4]), "'darknet_yolo[0].mask' = [0, 4]: expected a non-empty list of anchor "
                                         "indices in 0..3"),
    (lambda h: h[1].update(output="nope"), "'darknet_yolo[1].output' = 'nope': not one of the model's outputs")])
def test_onnx_yolo_metadata_is_checked(tmp_path, small_onnx, edit, key):
    from generator.flows.pipeline import check_detection, check_yolo_heads, load_model

    heads = _heads(small_onnx)
    edit(heads)
    p = _with_meta(small_onnx, tmp_path / "m.onnx", darknet_yolo=heads)
    g = load_model(p)
    with pytest.raises(GraphError, match=rf"m\.onnx: ONNX metadata {re.escape(key)}"):
        check_yolo_heads(g, p)
    with pytest.raises(GraphError, match=r"ONNX metadata 'darknet_yolo"):
        check_detection(g, ["cat", "dog"], p)


@pytest.mark.parametrize("meta,msg", [
    ({"class_names": "cat"}, r"ONNX metadata 'class_names': expected a non-empty list of class names .*got str"),
    ({"class_names": ["cat", 7]}, r"ONNX metadata 'class_names': class name 1 is 7, not a non-empty string"),
    ({"class_names": []}, r"ONNX metadata 'class_names': expected a non-empty list"),
    ({"names": "{0: 'a', 2: 'b'}"}, r"ONNX metadata 'names': a dict of class names must have the keys 0..n-1"),
    ({"names": "person, car"}, r"ONNX metadata 'names' = 'person, car': not a dict or list of class names")])
def test_class_name_metadata_is_checked(meta, msg):
    from generator.flows.pipeline import resolve_class_names

    with pytest.raises(GraphError, match=msg):
        resolve_class_names(meta)
    assert resolve_class_names({"names": "{0: 'a', 1: 'b'}"}) == ["a", "b"]
    assert resolve_class_names({"class_names": ["a"]}) == ["a"]


# ------------------------------------------------------------------------------------------ 10: invalid ONNX
def test_tensor_defined_twice_is_named():
    b = Builder([1, 3, 8, 8])
    y = b.conv("x", 3)
    z = b.leaky(y)
    m = b.model([b.conv(z, 4)])
    m.graph.node[1].output[0] = y                  # the LeakyRelu overwrites the conv's output
    m.graph.node[2].input[0] = y
    with pytest.raises(GraphError, match=rf"tensor '{y}' is defined twice: by node Conv_0 \(Conv\) and by node "
                                         rf"LeakyRelu_1 \(LeakyRelu\); .*onnxruntime refuses"):
        load_onnx(m)
    m.graph.node[1].output[0] = m.graph.initializer[0].name        # shadows an initializer
    m.graph.node[2].input[0] = m.graph.initializer[0].name
    with pytest.raises(GraphError, match=r"defined twice: by an initializer and by node LeakyRelu_1"):
        load_onnx(m)


def test_checker_refusal_is_one_line():
    b = Builder([1, 3, 8, 8])
    m = b.model([b.leaky(b.conv("x", 4))])
    m.graph.node[1].input[0] = "nowhere"           # reads a tensor nothing defines
    with pytest.raises(GraphError, match=r"^invalid ONNX model: .*nowhere") as e:
        load_onnx(m)
    assert "\n" not in str(e.value)


# ------------------------------------------------------------------------------------------ 9: bounds
def test_huge_model_input_is_refused_at_once():
    b = Builder([1, 3, 10000, 10000])
    m = b.model([b.conv("x", 4, k=1)])
    t0 = time.time()
    with pytest.raises(GraphError, match=r"graph input 'x' is 10000 x 10000 = 100,000,000 pixels .* at most "
                                         rf"{MAX_INPUT_PIXELS:,} pixels \(4096 x 4096"):
        load_onnx(m)
    assert time.time() - t0 < 5


def test_bounds_follow_the_isa_fields():
    lim = isa_limits()
    assert lim == {"region_bytes": 2 ** 32 - 1, "pixel_bytes": 2 ** 24 - 1, "region_bits": 32, "pixel_bits": 24}
    c = 2 ** 23 + 1                                 # one pixel fits 24 bits at int8, not at int16
    tensors = {"x": Tensor("x", (1, c, 1, 1)), "y": Tensor("y", (1, 4, 1, 1))}
    nodes = [Node("n", "Conv", ["x"], ["y"], {})]
    check_bounds(nodes, tensors, "x", 1)
    with pytest.raises(GraphError, match=r"graph input 'x' has 8388609 channels: 16777218 bytes per pixel at 2 "
                                         r"byte\(s\) per element, beyond the 24-bit pix_stride"):
        check_bounds(nodes, tensors, "x", 2)
    tensors = {"x": Tensor("x", (1, 3, 4096, 4096)), "y": Tensor("y", (1, 300, 4096, 4096))}
    with pytest.raises(GraphError, match=r"tensor 'y' of node n \(Conv\) has shape \[1, 300, 4096, 4096\]: "
                                         r"5,033,164,800 bytes .* beyond the accelerator's 32-bit region"):
        check_bounds(nodes, tensors, "x", 1)


# ------------------------------------------------------------------------------------------ 12: dynamic axes
def _symbolic(m, dims=((0, "batch"), (2, "height"), (3, "width"))):
    """``m`` with its graph input's axes ``dims`` made symbolic (and the outputs' batch)."""
    for k, p in dims:
        m.graph.input[0].type.tensor_type.shape.dim[k].dim_param = p
    for o in m.graph.output:
        o.type.tensor_type.shape.dim[0].dim_param = "batch"
    return m


def _builder_model(hw=(16, 24)):
    b = Builder([1, 3, *hw])
    return b.model([b.conv(b.maxpool(b.leaky(b.conv("x", 8)), 2, 2), 6, k=1)])


def test_symbolic_batch_becomes_one():
    g = load_onnx(_symbolic(_builder_model(), ((0, "N"),)))
    assert g.tensors["x"].shape == (1, 3, 16, 24) and g.tensors[g.outputs[0]].shape == (1, 6, 8, 12)
    assert g.metadata["input_size"] == [16, 24]


def test_symbolic_height_width_need_a_size():
    m = _symbolic(_builder_model())
    with pytest.raises(GraphError, match=r"graph input 'x' has shape \[batch, 3, height, width\]: symbolic height "
                                         r"\(height\) and width \(width\) .* no 'imgsz' metadata; give the input "
                                         r"size with --input-size HxW"):
        load_onnx(m)
    g = load_onnx(m, input_size=(32, 40))          # shape inference runs again with the size
    assert g.tensors["x"].shape == (1, 3, 32, 40) and g.tensors[g.outputs[0]].shape == (1, 6, 16, 20)
    onnx.helper.set_model_props(m, {"imgsz": "[64, 48]"})
    g = load_onnx(m)
    assert g.tensors[g.outputs[0]].shape == (1, 6, 32, 24) and g.metadata["input_size"] == [64, 48]
    onnx.helper.set_model_props(m, {"imgsz": "[64, -1]"})
    with pytest.raises(GraphError, match=r"ONNX metadata 'imgsz' = '\[64, -1\]'"):
        load_onnx(m)
    with pytest.raises(GraphError, match=r"graph input 'x' has the fixed size 16 x 24 \(H x W\); --input-size 32x40"):
        load_onnx(_builder_model(), input_size=(32, 40))
    assert load_onnx(_builder_model(), input_size=(16, 24)).tensors["x"].shape == (1, 3, 16, 24)


def test_dynamic_yolov8_export_loads_like_the_static_one():
    """A YOLOv8n export with dynamic axes (Shape-derived reshapes and anchors, an int64 Mul as /model.22/Mul) loads
    with its imgsz, to the same accelerator graph and host tail as the static export, the shape arithmetic folded
    into the same anchor and stride constants; without imgsz it is refused naming the input and --input-size."""
    from generator.frontend.yolo_family import build

    static = load_onnx(build("yolov8n", 64, classes=3))
    m = build("yolov8n", 64, classes=3, dynamic=True)
    assert any(n.name == "/model.22/Mul" for n in m.graph.node)
    g = load_onnx(m)
    assert [n.op for n in g.nodes] == [n.op for n in static.nodes]
    assert [g.tensors[o].shape for o in g.outputs] == [static.tensors[o].shape for o in static.outputs]
    assert [n["op"] for n in g.metadata["host_tail"]] == [n["op"] for n in static.metadata["host_tail"]]
    assert list(g.metadata["host_tail_outputs"].values()) == [[1, 7, 84]]
    consts = [v for v in g.metadata["host_tail_consts"].values() if v.dtype == np.float32]
    for v in static.metadata["host_tail_consts"].values():
        if v.dtype == np.float32:
            assert any(c.shape == v.shape and np.array_equal(c, v) for c in consts), v.shape
    g = load_onnx(m, input_size=(96, 128))
    assert g.tensors["images"].shape == (1, 3, 96, 128)
    assert list(g.metadata["host_tail_outputs"].values()) == [[1, 7, 12 * 16 + 6 * 8 + 3 * 4]]
    with pytest.raises(GraphError, match=r"graph input 'images' has shape \[batch, 3, height, width\].*--input-size"):
        load_onnx(build("yolov8n", 64, classes=3, dynamic=True, imgsz=False))


# ------------------------------------------------------------------------------------------ CLI: one line, exit 2
def test_cli_non_finite_weight(tmp_path):
    m, w, _, _ = _conv_bn_model()
    p = tmp_path / "nan.onnx"
    onnx.save(_set_init(m, w, lambda a: np.where(a > 0, np.nan, a)), str(p))
    _one_line_error(_invoke("compile", "--model", str(p), "--out", str(tmp_path / "o")), f"tensor '{w}'",
                    "Conv_0 (Conv)", "NaN")


def test_cli_darknet_yolo_without_anchors(tmp_path):
    text = SMALL_CFG.replace(_HEAD1, _HEAD1.replace("anchors=2,3, 4,5, 6,7, 8,9\n", ""))
    cfg, weights = _small_darknet(tmp_path, text)
    _one_line_error(_invoke("compile", "--cfg", str(cfg), "--weights", str(weights), "--out", str(tmp_path / "o")),
                    f"small.cfg:{_line_of(text, '[yolo]')} [yolo]: no anchors= given")


def test_cli_onnx_yolo_metadata(tmp_path, small_onnx):
    heads = _heads(small_onnx)
    heads[1]["scale_x_y"] = float("nan")
    p = _with_meta(small_onnx, tmp_path / "m.onnx", darknet_yolo=heads)
    _one_line_error(_invoke("compile", "--model", str(p), "--out", str(tmp_path / "o")),
                    "m.onnx: ONNX metadata 'darknet_yolo[1].scale_x_y' = nan")


def test_cli_tensor_defined_twice(tmp_path):
    b = Builder([1, 3, 8, 8])
    y = b.conv("x", 3)
    m = b.model([b.conv(b.leaky(y), 4)])
    m.graph.node[1].output[0] = y
    m.graph.node[2].input[0] = y
    p = tmp_path / "dup.onnx"
    onnx.save(m, str(p))
    _one_line_error(_invoke("compile", "--model", str(p), "--out", str(tmp_path / "o")),
                    f"tensor '{y}' is defined twice")


def test_cli_huge_input(tmp_path):
    b = Builder([1, 3, 10000, 10000])
    p = tmp_path / "big.onnx"
    onnx.save(b.model([b.conv("x", 4, k=1)]), str(p))
    t0 = time.time()
    _one_line_error(_invoke("compile", "--model", str(p), "--out", str(tmp_path / "o")),
                    "graph input 'x' is 10000 x 10000", "4096 x 4096")
    assert time.time() - t0 < 30


def test_cli_symbolic_input_size(tmp_path):
    p = tmp_path / "dyn.onnx"
    onnx.save(_symbolic(_builder_model()), str(p))
    _one_line_error(_invoke("compile", "--model", str(p), "--out", str(tmp_path / "o")),
                    "graph input 'x'", "symbolic height", "--input-size")

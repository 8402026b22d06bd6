"""Darknet cfg + weights -> ONNX graph.

Naming (deterministic, tied to the darknet layer index ``i``: 0-based, counting every section after ``[net]``
including ``[yolo]``): nodes ``conv_i``, ``bn_i``, ``leaky_i`` / ``relu_i``, ``maxpool_i``, ``route_i``, ``shortcut_i``,
``split_i`` (``split_i_m`` for the m-th routed layer when a grouped route has several inputs), ``concat_i``,
``upsample_i``; the output tensor of layer ``i`` is ``layer_i`` (intermediates ``layer_i_conv``, ``layer_i_bn``);
initializers ``conv_i.weight``, ``conv_i.bias``, ``bn_i.scale|bias|mean|var``, ``split_i.sizes``,
``upsample_i.scales``.

Model metadata (``model.metadata_props``, JSON values):

* ``darknet_net``: ``{"width", "height", "channels"}``.
* ``darknet_yolo``: one entry per ``[yolo]`` in cfg order: ``{"output": "layer_j", "layer": i, "anchors":
  [[w, h], ...all anchors], "mask": [...], "classes": 80, "scale_x_y": 1.05, "cfg_line": n}``.
* ``darknet_floats_consumed``: number of float32 values read after the header (6,062,814 for yolov4-tiny).
* ``darknet_header``: ``{"major", "minor", "revision", "seen"}``.
* ``darknet_weights_sha256``: SHA-256 (hex) of the weights file (provenance; the compiler recognises the official
  YOLOv4-tiny weights by it and labels them with their COCO names).
* ``class_names``: list of class names (class-index order) and ``class_names_source`` (the file's base name, so the
  ONNX bytes do not depend on where the files are), when the cfg's [net] has ``names=FILE`` (this converter's
  extension; darknet keeps names in its ``.data`` file; a relative path is resolved against the cfg's folder) or
  ``darknet_to_onnx(..., names=)`` is given. Their count must equal every [yolo]'s ``classes``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

from generator.frontend.darknet.cfg import DarknetError, parse_cfg
from generator.frontend.darknet.layers import Layer, build_layers
from generator.frontend.darknet.names import cfg_names
from generator.frontend.darknet.weights import read_weights
from host.fileio import atomic_write

OPSET = 13
IR_VERSION = 8
BN_EPSILON = 1e-5
LEAKY_SLOPE = 0.1


def _vi(name: str, shape) -> onnx.ValueInfoProto:
    """float32 value info ``name`` of shape [1, *shape]."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, *shape])


def darknet_to_onnx(cfg_path, weights_path, out_path=None, names=None) -> onnx.ModelProto:
    """Convert a darknet cfg + weights into an ONNX model (opset 13, IR version 8), see the module docstring.

    Args:
        cfg_path: darknet ``.cfg`` file.
        weights_path: darknet ``.weights`` file matching the cfg.
        out_path: if given, the model is also saved there.
        names: class names (a names-file path or a list of str); default: the file named by ``names=`` in
            [net] (relative to the cfg's folder), else none (``class_names`` metadata absent).

    Returns:
        The shape-inferred ``onnx.ModelProto``: input ``input`` float32 ``[1, C, H, W]``; outputs ``layer_j``
        float32 ``[1, len(mask)*(classes+5), h, w]`` (the tensors feeding each ``[yolo]``, in cfg order); metadata
        ``darknet_net``, ``darknet_yolo``, ``darknet_floats_consumed``, ``darknet_header``,
        ``darknet_weights_sha256``, and ``class_names`` / ``class_names_source`` (the names file's base name)
        when names are known.

    Raises:
        DarknetError: any problem with the cfg, weights or names (see :func:`parse_cfg`, :func:`check_keys`,
            :func:`read_weights`, :func:`read_names`; a names count different from a [yolo]'s ``classes``).
    """
    cfg_path = Path(cfg_path)
    cfg_name = cfg_path.name
    sections = parse_cfg(cfg_path)
    net, layers = build_layers(sections, cfg_name)
    class_names, names_source = cfg_names(cfg_path, sections[0], layers, names)
    header, weights, n_floats = read_weights(weights_path, layers, cfg_name)

    nodes, inits = [], []
    prev = "input"
    yolo_meta, outputs = [], []
    for l in layers:
        out = f"layer_{l.index}"
        if l.kind == "convolutional":
            _conv_nodes(l, prev, out, weights[l.index], nodes, inits)
        elif l.kind == "maxpool":
            p = l.params
            nodes.append(helper.make_node("MaxPool", [prev], [out], name=f"maxpool_{l.index}",
                                          kernel_shape=[p["size"]] * 2, strides=[p["stride"]] * 2, pads=p["pads"]))
        elif l.kind == "route":
            _route_nodes(l, layers, out, nodes, inits)
        elif l.kind == "shortcut":
            _shortcut_nodes(l, layers, prev, out, nodes, inits)
        elif l.kind == "avgpool":
            nodes.append(helper.make_node("GlobalAveragePool", [prev], [out], name=f"avgpool_{l.index}"))
        elif l.kind in ("sam", "scale_channels"):   # from-layer x previous layer (broadcast [C, 1, 1]), activation
            t = out if l.params["activation"] == "linear" else f"layer_{l.index}_mul"
            nodes.append(helper.make_node("Mul", [f"layer_{l.params['from']}", prev], [t], name=f"{l.kind}_{l.index}"))
            _act_nodes(l.params["activation"], t, out, l.index, nodes)
        elif l.kind == "upsample":
            _upsample_nodes(l, prev, out, nodes, inits)
        else:  # yolo: its input becomes a graph output
            p = l.params
            outputs.append(_vi(prev, l.out_shape))
            yolo_meta.append({"output": prev, "layer": l.index, "anchors": p["anchors"], "mask": p["mask"],
                              "classes": p["classes"], "scale_x_y": p["scale_x_y"], "cfg_line": l.section.line})
            out = prev
        prev = out

    graph = helper.make_graph(nodes, cfg_path.stem, [_vi("input", (net["channels"], net["height"], net["width"]))],
                              outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="yolofpga.darknet", producer_version="1")
    model.ir_version = IR_VERSION
    meta = {"darknet_net": net, "darknet_yolo": yolo_meta, "darknet_floats_consumed": n_floats,
            "darknet_header": header,
            "darknet_weights_sha256": hashlib.sha256(Path(weights_path).read_bytes()).hexdigest()}
    if class_names is not None:
        meta["class_names"] = class_names
        meta["class_names_source"] = Path(names_source).name if names_source else None
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, json.dumps(value)
    onnx.checker.check_model(model, full_check=True)
    model = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    _check_inferred_shapes(model, layers)
    if out_path is not None:          # atomically: a cut-short conversion never leaves half a model
        atomic_write(out_path, model.SerializeToString())
    return model


def _conv_nodes(l: Layer, prev: str, out: str, w: dict, nodes: list, inits: list) -> None:
    """Append the Conv (+ BatchNormalization) (+ LeakyRelu / Relu) of [convolutional] layer ``l`` reading tensor
    ``prev`` and writing ``out`` to ``nodes``, and its weights ``w`` (float32 arrays by name, see
    :func:`read_weights`) to ``inits``."""
    i, p = l.index, l.params
    inits.append(numpy_helper.from_array(w["weight"], f"conv_{i}.weight"))
    conv_in = [prev, f"conv_{i}.weight"]
    if not p["bn"]:
        inits.append(numpy_helper.from_array(w["bias"], f"conv_{i}.bias"))
        conv_in.append(f"conv_{i}.bias")
    t = out if (not p["bn"] and p["activation"] == "linear") else f"layer_{i}_conv"
    nodes.append(helper.make_node("Conv", conv_in, [t], name=f"conv_{i}", kernel_shape=[p["size"]] * 2,
                                  strides=[p["stride"]] * 2, pads=[p["pad"]] * 4, dilations=[1, 1],
                                  group=p.get("groups", 1)))
    if p["bn"]:
        for key in ("scale", "bias", "mean", "var"):
            inits.append(numpy_helper.from_array(w[key], f"bn_{i}.{key}"))
        bn_out = out if p["activation"] == "linear" else f"layer_{i}_bn"
        nodes.append(helper.make_node("BatchNormalization",
                                      [t] + [f"bn_{i}.{k}" for k in ("scale", "bias", "mean", "var")],
                                      [bn_out], name=f"bn_{i}", epsilon=BN_EPSILON))
        t = bn_out
    _act_nodes(p["activation"], t, out, i, nodes)


def _act_nodes(act: str, t: str, out: str, i: int | str, nodes: list) -> None:
    """Append darknet activation ``act`` of layer ``i`` from tensor ``t`` to ``out`` (nothing for linear):
    leaky (LeakyRelu 0.1), relu, logistic (Sigmoid), swish (x * Sigmoid(x), as PyTorch exports SiLU), mish
    (x * Tanh(Softplus(x))), hard_swish (x * HardSigmoid(x), alpha 1/6) -- darknet's activations.c definitions."""
    if act == "leaky":
        nodes.append(helper.make_node("LeakyRelu", [t], [out], name=f"leaky_{i}", alpha=LEAKY_SLOPE))
    elif act == "relu":
        nodes.append(helper.make_node("Relu", [t], [out], name=f"relu_{i}"))
    elif act == "logistic":
        nodes.append(helper.make_node("Sigmoid", [t], [out], name=f"logistic_{i}"))
    elif act == "swish":
        nodes.append(helper.make_node("Sigmoid", [t], [f"layer_{i}_sig"], name=f"swish_sig_{i}"))
        nodes.append(helper.make_node("Mul", [t, f"layer_{i}_sig"], [out], name=f"swish_{i}"))
    elif act == "mish":
        nodes.append(helper.make_node("Softplus", [t], [f"layer_{i}_sp"], name=f"mish_sp_{i}"))
        nodes.append(helper.make_node("Tanh", [f"layer_{i}_sp"], [f"layer_{i}_tanh"], name=f"mish_tanh_{i}"))
        nodes.append(helper.make_node("Mul", [t, f"layer_{i}_tanh"], [out], name=f"mish_{i}"))
    elif act == "hard_swish":   # (HardSwish is opset 14; x * HardSigmoid(x) with alpha 1/6 is the same function)
        nodes.append(helper.make_node("HardSigmoid", [t], [f"layer_{i}_hsig"], name=f"hard_swish_sig_{i}",
                                      alpha=1.0 / 6.0, beta=0.5))
        nodes.append(helper.make_node("Mul", [t, f"layer_{i}_hsig"], [out], name=f"hard_swish_{i}"))


def _shortcut_nodes(l: Layer, layers: list[Layer], prev: str, out: str, nodes: list, inits: list) -> None:
    """Append the Add (+ activation) of [shortcut] layer ``l``: ``prev + layer_from``; with fewer channels in
    ``prev`` a channel Slice of ``layer_from`` first, with more a Split of ``prev`` whose second part is only
    activated and concatenated behind the sum (darknet adds the first min(C) channels)."""
    i, act, j = l.index, l.params["activation"], l.params["from"]
    c, cf = l.out_shape[0], layers[j].out_shape[0]
    src = f"layer_{j}"
    if cf > c:
        for name, v in (("starts", 0), ("ends", c), ("axes", 1)):
            inits.append(numpy_helper.from_array(np.array([v], np.int64), f"shortcut_{i}.{name}"))
        src = f"layer_{i}_from"
        nodes.append(helper.make_node("Slice", [f"layer_{j}", f"shortcut_{i}.starts", f"shortcut_{i}.ends",
                                               f"shortcut_{i}.axes"], [src], name=f"shortcut_slice_{i}"))
    if cf < c:
        inits.append(numpy_helper.from_array(np.array([cf, c - cf], np.int64), f"shortcut_{i}.sizes"))
        a, rest = f"layer_{i}_head", f"layer_{i}_rest"
        nodes.append(helper.make_node("Split", [prev, f"shortcut_{i}.sizes"], [a, rest], name=f"shortcut_split_{i}",
                                      axis=1))
        prev = a
    t = out if act == "linear" and cf >= c else f"layer_{i}_add"
    nodes.append(helper.make_node("Add", [prev, src], [t], name=f"shortcut_{i}"))
    if cf >= c:
        _act_nodes(act, t, out, i, nodes)
        return
    parts = [t, rest]
    if act != "linear":
        parts = [f"layer_{i}_sum", f"layer_{i}_pass"]
        _act_nodes(act, t, parts[0], i, nodes)
        _act_nodes(act, rest, parts[1], f"{i}_pass", nodes)
    nodes.append(helper.make_node("Concat", parts, [out], name=f"shortcut_concat_{i}", axis=1))


def _route_nodes(l: Layer, layers: list[Layer], out: str, nodes: list, inits: list) -> None:
    """Append the Identity, Concat and/or channel Splits of [route] layer ``l`` writing ``out`` (``groups`` > 1:
    one Split per routed layer keeping part ``group_id``; several routed layers: a Concat)."""
    i, p = l.index, l.params
    srcs = [f"layer_{j}" for j in p["inputs"]]
    groups, group_id = p["groups"], p["group_id"]
    if groups > 1:
        parts = []
        for m, (j, src) in enumerate(zip(p["inputs"], srcs)):
            c = layers[j].out_shape[0]
            sname = f"split_{i}" if len(srcs) == 1 else f"split_{i}_{m}"
            stem = out if len(srcs) == 1 else f"layer_{i}_in{m}"
            outs = [stem if q == group_id else f"{stem}_part{q}" for q in range(groups)]
            inits.append(numpy_helper.from_array(np.full(groups, c // groups, np.int64), f"{sname}.sizes"))
            nodes.append(helper.make_node("Split", [src, f"{sname}.sizes"], outs, name=sname, axis=1))
            parts.append(stem)
        srcs = parts
    if len(srcs) > 1:
        nodes.append(helper.make_node("Concat", srcs, [out], name=f"concat_{i}" if groups > 1 else f"route_{i}",
                                      axis=1))
    elif groups == 1:
        nodes.append(helper.make_node("Identity", srcs, [out], name=f"route_{i}"))


def _upsample_nodes(l: Layer, prev: str, out: str, nodes: list, inits: list) -> None:
    """Append the nearest Resize (scales [1, 1, stride, stride]) of [upsample] layer ``l``."""
    i, s = l.index, float(l.params["stride"])
    inits.append(numpy_helper.from_array(np.array([1, 1, s, s], np.float32), f"upsample_{i}.scales"))
    nodes.append(helper.make_node("Resize", [prev, "", f"upsample_{i}.scales"], [out], name=f"upsample_{i}",
                                  mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"))


def _check_inferred_shapes(model: onnx.ModelProto, layers: list[Layer]) -> None:
    """Check that ONNX shape inference (run on a graph without declared intermediate shapes) gives darknet's
    output size for every layer tensor ``layer_i`` (guards the MaxPool pads and Split/Concat logic)."""
    inferred = {vi.name: [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
                for vi in list(model.graph.value_info) + list(model.graph.output)}
    for l in layers:
        name = f"layer_{l.index}"
        if l.kind != "yolo" and inferred.get(name) != [1, *l.out_shape]:
            raise RuntimeError(f"internal error: ONNX infers {inferred.get(name)} for {name}, darknet gives "
                                 f"{[1, *l.out_shape]}")

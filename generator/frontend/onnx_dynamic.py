"""Dynamic (symbolic) input axes of an ONNX model made static, and the shape arithmetic an exporter traced from
``x.shape`` folded into constants, for :mod:`generator.frontend.onnx_loader` (ONNX IR specification: a tensor shape's
dimension is either a ``dim_value`` or a symbolic ``dim_param``, https://github.com/onnx/onnx/blob/main/docs/IR.md).

:func:`static_input`: a symbolic batch axis of the graph input becomes 1; symbolic height and width take
``input_size`` (H, W) if given, else the model's ``imgsz`` metadata (Ultralytics writes ``"[640, 640]"``), else a
GraphError names the input and the ``--input-size`` option. :func:`fold_shapes`: once the input is static and shapes
are inferred again, the Shape-derived arithmetic (Shape, Gather, Mul, Range, ConstantOfShape, ... whose operands are
all constant) is evaluated (``onnx.reference``) into initializers, as a static export would hold them.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import numpy_helper

from generator.ir.graph import GraphError


def _imgsz(model: onnx.ModelProto):
    """(H, W) from the ``imgsz`` metadata (Ultralytics: ``"[640, 640]"``, or one int for a square), None when
    absent. Raises GraphError naming the key for a value that is not one or two positive integers."""
    raw = next((p.value for p in model.metadata_props if p.key == "imgsz"), None)
    if raw is None:
        return None
    try:
        v = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        v = None
    v = [v] if isinstance(v, int) and not isinstance(v, bool) else v
    if (not isinstance(v, list) or len(v) not in (1, 2)
            or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)):
        raise GraphError(f"ONNX metadata 'imgsz' = {raw!r}: expected the input size as [H, W] (positive integers)")
    return (v[0], v[-1])


def static_input(model: onnx.ModelProto, input_size) -> tuple | None:
    """Make the graph input's symbolic axes static (in place): batch -> 1, height / width -> ``input_size`` (H, W)
    or the ``imgsz`` metadata; the intermediate value infos (symbolic) and the graph outputs' symbolic dimensions
    are dropped for shape inference to fill again. Returns the (H, W) used when an axis was symbolic, else None.

    Raises:
        GraphError: ``input_size`` not two positive integers, or different from a static input's size; a symbolic
            channel axis; a symbolic height / width without ``input_size`` or ``imgsz`` (names the input, its
            symbolic axes and the ``--input-size`` option).
    """
    if input_size is not None:
        if (len(tuple(input_size)) != 2
                or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0
                           for v in input_size)):
            raise GraphError(f"input size {input_size!r}: expected two positive integers (height, width)")
        input_size = (int(input_size[0]), int(input_size[1]))
    g = model.graph
    inits = {i.name for i in g.initializer}
    resolved = None
    for i in g.input:
        if i.name in inits or not i.type.HasField("tensor_type") or not i.type.tensor_type.HasField("shape"):
            continue
        dims = i.type.tensor_type.shape.dim
        sym = [k for k, d in enumerate(dims) if not d.HasField("dim_value")]
        label = [d.dim_param or "?" if k in sym else str(d.dim_value) for k, d in enumerate(dims)]
        if len(dims) != 4:
            continue   # refused later (the loader's _check_input_and_shapes) with the shape
        if 1 in sym:
            raise GraphError(f"graph input {i.name!r} has shape [{', '.join(label)}]: a symbolic channel axis is not "
                             f"supported, expected [1, C, H, W]")
        if not ({2, 3} & set(sym)):
            if input_size is not None and input_size != (dims[2].dim_value, dims[3].dim_value):
                raise GraphError(f"graph input {i.name!r} has the fixed size {dims[2].dim_value} x "
                                 f"{dims[3].dim_value} (H x W); --input-size {input_size[0]}x{input_size[1]} "
                                 f"applies only to a model exported with dynamic height and width")
            if 0 in sym:
                dims[0].dim_value = 1
                resolved = resolved or (dims[2].dim_value, dims[3].dim_value)
            continue
        size = input_size or _imgsz(model)
        if size is None:
            what = " and ".join(f"{'height' if k == 2 else 'width'} ({label[k]})" for k in (2, 3) if k in sym)
            raise GraphError(f"graph input {i.name!r} has shape [{', '.join(label)}]: symbolic {what} (a dynamic-"
                             f"axes export) and the model has no 'imgsz' metadata; give the input size with "
                             f"--input-size HxW (e.g. 640x640)")
        for k, v in ((2, size[0]), (3, size[1])):
            if k not in sym and dims[k].dim_value != v:
                raise GraphError(f"graph input {i.name!r} has shape [{', '.join(label)}]: its fixed "
                                 f"{'height' if k == 2 else 'width'} {dims[k].dim_value} differs from the input "
                                 f"size {size[0]} x {size[1]}")
        if 0 in sym:
            dims[0].dim_value = 1
        dims[2].dim_value, dims[3].dim_value = size
        resolved = size
    if resolved is not None:
        del g.value_info[:]
        for o in g.output:
            if o.type.HasField("tensor_type") and o.type.tensor_type.HasField("shape"):
                if any(not d.HasField("dim_value") for d in o.type.tensor_type.shape.dim):
                    o.type.tensor_type.ClearField("shape")
    return resolved


_NO_FOLD = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli",
            "If", "Loop", "Scan"}


def _evaluate(node, feeds: dict, opset: int) -> list:
    """Outputs (numpy arrays) of one ONNX ``node`` of the default domain at ``opset`` on the arrays ``feeds``, by
    ``onnx.reference`` (a one-node model, so that the node's opset version is the model's)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), None)
           for k, v in feeds.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    m = helper.make_model(helper.make_graph([node], "fold", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(m).run(None, {k: np.asarray(v) for k, v in feeds.items()})


def fold_shapes(model: onnx.ModelProto) -> bool:
    """Evaluate the shape arithmetic of a (now static) graph into initializers, in place: a Shape or Size of a tensor
    of static inferred shape, and every node whose inputs are all constant with at least one computed from such a
    Shape (``onnx.reference``), as an exporter's ``x.shape[k] * ...`` traced into Shape, Gather, Mul, Range,
    ConstantOfShape, Reshape... Constant-only arithmetic without a Shape in it is left as it is. Returns True if
    any node was folded."""
    g = model.graph
    if not any(n.op_type in ("Shape", "Size") for n in g.node):
        return False
    shapes = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is not None and tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = [d.dim_value for d in tt.shape.dim]
    values = {i.name: None for i in g.initializer}   # None: a constant not read yet
    init_of = {i.name: i for i in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            values[n.output[0]] = None
    derived, folded, keep = {}, [], []
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)

    def value(t):
        if values[t] is None:
            if t in init_of:
                values[t] = numpy_helper.to_array(init_of[t])
            else:
                node = next(n for n in g.node if n.op_type == "Constant" and n.output[0] == t)
                values[t] = _evaluate(node, {}, opset)[0]
        return values[t]

    for n in g.node:
        ins = [i for i in n.input if i]
        out = None
        try:
            if n.op_type in ("Shape", "Size") and ins and ins[0] in shapes:
                shp = np.array(shapes[ins[0]], np.int64)
                if n.op_type == "Size":
                    out = [np.array(int(np.prod(shp)), np.int64)]
                else:
                    a = {t.name: onnx.helper.get_attribute_value(t) for t in n.attribute}
                    out = [shp[a.get("start", 0):a["end"] if "end" in a else None]]
            elif (n.domain in ("", "ai.onnx") and n.op_type not in _NO_FOLD and ins
                  and all(i in values or i in derived for i in ins) and any(i in derived for i in ins)):
                feeds = {i: derived[i] if i in derived else value(i) for i in ins}
                out = _evaluate(n, feeds, opset)
        except Exception:  # noqa: BLE001 - a node the reference cannot run stays in the graph
            out = None
        if out is None:
            keep.append(n)
            continue
        for name, v in zip(n.output, out):
            if name:
                derived[name] = np.asarray(v)
        folded.append(n)
    if not folded:
        return False
    used = {i for n in keep for i in n.input} | {o.name for o in g.output}
    del g.node[:]
    g.node.extend(keep)
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in derived.items() if k in used)
    return True

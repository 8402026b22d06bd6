"""ONNX model -> graph IR (:mod:`generator.ir.graph`), with ONNX shape inference.

Supported operators (ONNX opset 11-21 semantics): Conv (any group; any padding below the kernel size: symmetric,
asymmetric, auto_pad SAME_UPPER / SAME_LOWER / VALID), BatchNormalization (inference), Relu,
LeakyRelu, MaxPool, AveragePool / GlobalAveragePool (as a diagonal convolution), GlobalMaxPool (square maps),
Resize/Upsample (nearest, integer scale), Concat (channel axis), Split and Slice (channel axis; and the stride-2
spatial Slices of a Focus read by a Conv, :mod:`generator.ir.passes.fold_focus`), Gemm/MatMul after Flatten (fully
connected), Identity, Constant.

Unsupported operators (and Slices / Splits off the channel axis) are an :class:`~generator.ir.graph.GraphError`
listing every such node, grouped by op type with counts (:func:`listing`),
unless they form a tail that ends at graph outputs (e.g. a YOLO decode: Reshape/Sigmoid/...): that tail is cut,
its inputs become the graph outputs (the host runs the post-processing with :func:`host.tail.run_tail`) and it
is recorded in ``graph.metadata["host_tail"]`` (nodes with JSON-able attributes), ``["host_tail_inputs"]`` (the
accelerator outputs it reads; it may also read the graph input, which the host has), ``["host_tail_input_shapes"]``
(their ONNX shapes: an FC output is [1, OC, 1, 1] on the accelerator, [1, OC] in ONNX),
``["host_tail_consts"]`` (its constant operands, numpy arrays) and ``["host_tail_outputs"]`` (the model's outputs it
produces, with their ONNX shapes). A tail op the host cannot run
(:data:`host.tail.HOST_OPS`), or a graph with nothing left for the accelerator, is a GraphError.

Every refusal is a :class:`~generator.ir.graph.GraphError` raised here or in :mod:`generator.ir.passes`, before any
quantization or simulation, naming the node (``name (OpType)``) and the reason: non-float or non-tensor graph
inputs, more than one graph input, inputs that are not [1, C, H, W], non-float node outputs (e.g. MaxPool's
Indices), training-mode BatchNormalization, outputs that are constants.

Before anything else the model is validated (:func:`check_model`): a tensor defined twice (by two nodes, or by a node
and an initializer or graph input: onnxruntime refuses such a model) is named with both definitions, then
``onnx.checker.check_model(full_check=True)`` (structure, types, strict shape inference) runs and its complaint is
reported on one line. Then (:func:`_check_values`) every floating-point constant a node reads must be finite (NaN
never; +-inf only as an operand of a bound or comparison: Clip, Min, Max, Where, Less, ...), and a
BatchNormalization's variance must not be negative: the message names the tensor, the reading node, the count of
bad values and the first one with its index.

Dynamic axes (:func:`_static_input`): a symbolic batch axis of the graph input becomes 1; symbolic height and width
take ``input_size`` (H, W) if given, else the model's ``imgsz`` metadata (Ultralytics writes ``"[640, 640]"``), else a
GraphError names the input and the ``--input-size`` option. The export's symbolic intermediate shapes are inferred
again, and the shape arithmetic an exporter traces from ``x.shape`` (Shape, Gather, Mul, Range, ConstantOfShape,
... whose operands are all constant once the input is static) is evaluated into constants (:func:`_fold_shapes`),
as a static export would hold them.

Bounds (:func:`check_bounds`), checked at load with the limit named: at most :data:`MAX_INPUT_PIXELS` input pixels
(a host-side cap: calibration runs the float graph over whole images); the input tensor's bytes within the ISA's
address reach (:func:`isa_limits`: LOAD/STORE ``ddr_offset`` and the base registers' ``*_size`` words are 32 bits,
``pix_stride`` 24 bits), at 1 byte per element here and again at the quantization's element size when compiling
(:func:`generator.flows.pipeline.compile_model`); every activation tensor within one 32-bit region; and the float32
activations of one image (the calibration keeps them all) within this machine's physical memory.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

from host.tail import HOST_OPS

from generator.ir.graph import Graph, GraphError, Node, Tensor
from generator.ir.passes.common import resolve_pads
from generator.ir.passes.fold_focus import focus_groups
from generator.ir.passes.fuse_activation import SINGLE_OPS, chains, gate_of

#: the largest model input, in pixels (H x W): 4096 x 4096. A host-side cap (calibration and bias correction run the
#: float graph over whole images and keep every activation; the largest published YOLO inputs are 1280-1536 square),
#: so that a 10000 x 10000 input is refused at load instead of failing in calibration
MAX_INPUT_PIXELS = 4096 * 4096

SUPPORTED = {"Conv", "BatchNormalization", "Relu", "LeakyRelu", "MaxPool", "Resize", "Upsample", "Concat",
             "Split", "Slice", "Gemm", "MatMul", "Flatten", "Identity", "Constant", "AveragePool",
             "GlobalAveragePool", "GlobalMaxPool", "Add", "Sub", "Mul", "Div"} | set(SINGLE_OPS)


def _attrs(node) -> dict:
    """Attributes of an ONNX node as {name: Python value}."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _jsonable(v):
    """An attribute value as plain JSON data (bytes -> str, tensors -> nested lists)."""
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v).tolist()
    if isinstance(v, (int, float, str)) or v is None:
        return v
    return str(v)


def _readers(nodes, t: str) -> str:
    """``name (Op)`` of the nodes reading tensor ``t`` (for messages), or "no node"."""
    r = [f"{n.name} ({n.op})" for n in nodes if t in n.inputs]
    return ", ".join(r) if r else "no node"


def _check_nodes(nodes: list, elem: dict) -> None:
    """Refusals that need only one node: non-float outputs (e.g. MaxPool Indices), training-mode
    BatchNormalization. Raises GraphError naming the node."""
    for n in nodes:
        if n.op not in SUPPORTED:
            continue
        if n.op == "BatchNormalization" and (n.attrs.get("training_mode", 0) or len([o for o in n.outputs if o]) > 1):
            raise GraphError(f"node {n.name} (BatchNormalization): training mode (running statistics outputs) is "
                             f"not supported; export the model in inference mode")
        for o in n.outputs:
            if o and o in elem and elem[o] != onnx.TensorProto.FLOAT:
                tn = onnx.helper.tensor_dtype_to_np_dtype(elem[o])
                raise GraphError(f"node {n.name} ({n.op}): output {o!r} has element type {tn}; only float32 "
                                 f"tensors are supported")


def load_onnx(model_or_path, input_size: tuple[int, int] | None = None) -> Graph:
    """Load an ONNX model (path or ``ModelProto``) into a :class:`Graph`.

    Activations are float32 NCHW with batch 1; initializers become constant tensors (float32 numpy arrays).
    ``graph.metadata`` gets the model's ``metadata_props`` (JSON values decoded where possible); for a model whose
    input had symbolic axes, ``metadata["input_size"]`` = [H, W] as resolved.

    Args:
        model_or_path: ``str`` / ``Path`` of an ``.onnx`` file, or an ``onnx.ModelProto`` (not modified).
        input_size: (H, W) in pixels for a graph input with symbolic height / width (a dynamic-axes export); None:
            the model's ``imgsz`` metadata. With a static input it must equal the input's size.

    Raises:
        GraphError: unreadable or invalid model (:func:`check_model`), non-finite weights or a negative
            BatchNormalization variance, a symbolic input size with neither ``input_size`` nor ``imgsz``, an input
            beyond the bounds of :func:`check_bounds`, a batch other than 1, a tensor without an inferred shape,
            unsupported operators (all of them listed as ``name (OpType)``) outside a host-side tail, or any refusal
            listed in the module docstring; messages name the node (``name (OpType)``), tensor or graph input and
            the reason, on one line except for the operator listings.
    """
    model, resolved = _read_model(model_or_path, input_size)
    g = model.graph
    tensors = {init.name: Tensor(init.name, tuple(init.dims), "float32", numpy_helper.to_array(init).copy())
               for init in g.initializer}
    nodes = _nodes_and_constants(g, tensors)
    shapes, elem = _value_infos(g)
    inputs = [i.name for i in g.input if i.name not in tensors]
    outputs = [o.name for o in g.output]
    _check_graph_io(g, tensors, nodes, elem, outputs)
    _check_values(nodes, tensors)
    _check_nodes(nodes, elem)
    focus = {s.name for f in focus_groups(nodes, tensors, shapes.get, outputs) for s in f.slices}
    shaped = {**{k: Tensor(k, tuple(v)) for k, v in shapes.items() if v is not None and None not in v}, **tensors}
    tail = _host_tail(nodes, shaped, focus | _gated(nodes, tensors, outputs), _decode_activations(nodes, outputs))
    meta = {}
    for p in model.metadata_props:
        try:
            meta[p.key] = json.loads(p.value)
        except (json.JSONDecodeError, TypeError):
            meta[p.key] = p.value
    if resolved is not None:
        meta["input_size"] = list(resolved)
    if tail:
        nodes, outputs = _cut_host_tail(nodes, tail, tensors, inputs, outputs, shapes, meta)
    _add_activations(nodes, tensors, shapes)
    if not nodes:
        raise GraphError("the graph has no node to run on the accelerator")
    _explicit_pads(nodes, tensors)
    _check_input_and_shapes(nodes, tensors, shapes, inputs)
    check_bounds(nodes, tensors, inputs[0])
    graph = Graph(g.name or "model", nodes, tensors, inputs, outputs, metadata=meta)
    graph.prune()
    graph.toposort()
    return graph


def _read_model(model_or_path, input_size=None) -> tuple[onnx.ModelProto, tuple | None]:
    """The model (loaded from a path if given one; a ModelProto is copied), validated (:func:`check_model`), its
    input made static (:func:`_static_input`), shape-inferred, its shape arithmetic folded (:func:`_fold_shapes`).
    Returns (model, the (H, W) resolved for a symbolic input or None). Raises GraphError if unreadable or invalid."""
    try:
        if isinstance(model_or_path, (str, Path)):
            model = onnx.load(str(model_or_path))
        else:
            model = onnx.ModelProto()
            model.CopyFrom(model_or_path)
    except Exception as e:  # noqa: BLE001 - onnx raises several types for a bad file
        raise GraphError(f"cannot read ONNX model {model_or_path}: {_one_line(e)}") from None
    check_model(model)
    resolved = _static_input(model, input_size)
    model = _infer(model)
    for _ in range(50):   # each round folds what the previous inference made static
        if not _fold_shapes(model):
            break
        del model.graph.value_info[:]
        model = _infer(model)
    return model, resolved


def _one_line(e) -> str:
    """An exception's message on one line (whitespace runs collapsed), at most 400 characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 400 else text[:397] + "..."


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX shape inference (not strict). Raises GraphError on failure."""
    try:
        return shape_inference.infer_shapes(model, strict_mode=False)
    except Exception as e:  # noqa: BLE001
        raise GraphError(f"ONNX shape inference failed: {_one_line(e)}") from None


def _node_name(n, k: int) -> str:
    """``name (OpType)`` of ONNX node ``n`` (k-th of its graph; an unnamed node is ``OpType_k``, as in the IR)."""
    return f"{n.name or f'{n.op_type}_{k}'} ({n.op_type})"


def check_model(model: onnx.ModelProto) -> None:
    """Validate an ONNX model before anything reads it: every tensor defined once, then
    ``onnx.checker.check_model(model, full_check=True)``.

    Raises:
        GraphError: ``tensor 'y' is defined twice: by node a (Conv) and by node b (Relu)`` (or by an initializer or
            the graph input), or ``invalid ONNX model: <the checker's message on one line>``.
    """
    g = model.graph
    defined = {}
    for i in g.input:
        defined.setdefault(i.name, f"graph input {i.name!r}")
    for init in g.initializer:
        if init.name in defined and not defined[init.name].startswith("graph input"):
            raise GraphError(f"tensor {init.name!r} is defined twice: by two initializers; an ONNX graph defines "
                             f"each tensor once (onnxruntime refuses this model)")
        defined[init.name] = "an initializer" if init.name not in defined else defined[init.name]
    for k, n in enumerate(g.node):
        for o in n.output:
            if not o:
                continue
            if o in defined:
                raise GraphError(f"tensor {o!r} is defined twice: by {defined[o]} and by node {_node_name(n, k)}; "
                                 f"an ONNX graph defines each tensor once (onnxruntime refuses this model)")
            defined[o] = f"node {_node_name(n, k)}"
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001 - ValidationError, InferenceError, and others for malformed protos
        raise GraphError(f"invalid ONNX model: {_one_line(e)}") from None


def _imgsz(model: onnx.ModelProto):
    """(H, W) from the ``imgsz`` metadata (Ultralytics: ``"[640, 640]"``, or one int for a square), None when
    absent. Raises GraphError naming the key for a value that is not one or two positive integers."""
    raw = next((p.value for p in model.metadata_props if p.key == "imgsz"), None)
    if raw is None:
        return None
    try:
        v = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        v = None
    v = [v] if isinstance(v, int) and not isinstance(v, bool) else v
    if (not isinstance(v, list) or len(v) not in (1, 2)
            or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)):
        raise GraphError(f"ONNX metadata 'imgsz' = {raw!r}: expected the input size as [H, W] (positive integers)")
    return (v[0], v[-1])


def _static_input(model: onnx.ModelProto, input_size) -> tuple | None:
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
            continue   # refused later (_check_input_and_shapes) with the shape
        if 1 in sym:
            raise GraphError(f"graph input {i.name!r} has shape [{', '.join(label)}]: a symbolic channel axis is not "
                             f"supported, expected [1, C, H, W]")
        if not ({2, 3} & set(sym)):
            if input_size is not None and input_size != (dims[2].dim_value, dims[3].dim_value):
                raise GraphError(f"graph input {i.name!r} has the fixed size {dims[2].dim_value} x "
                                 f"{dims[3].dim_value} (H x W); --input-size {input_size[0]} {input_size[1]} "
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
                             f"--input-size H W")
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


#: ops never evaluated at load (random, or with subgraphs)
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


def _fold_shapes(model: onnx.ModelProto) -> bool:
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
                    a = _attrs(n)
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


def _nodes_and_constants(g: onnx.GraphProto, tensors: dict) -> list:
    """The graph's nodes as IR :class:`Node` s (unnamed ones named ``Op_k``); Constant nodes become constant
    tensors in ``tensors`` (in place). Raises GraphError for a Constant without a 'value' attribute."""
    nodes = []
    for k, n in enumerate(g.node):
        name = n.name or f"{n.op_type}_{k}"
        if n.op_type == "Constant":
            a = _attrs(n)
            if "value" not in a:
                raise GraphError(f"node {name} (Constant): only the 'value' attribute is supported")
            arr = numpy_helper.to_array(a["value"]).copy()
            tensors[n.output[0]] = Tensor(n.output[0], tuple(arr.shape), "float32", arr)
            continue
        nodes.append(Node(name, n.op_type, list(n.input), list(n.output), _attrs(n)))
    return nodes


def _value_infos(g: onnx.GraphProto) -> tuple[dict, dict]:
    """(tensor name -> inferred shape tuple (None for an unknown dim), tensor name -> ONNX element type) of every
    tensor-typed value info, graph input and graph output."""
    shapes, elem = {}, {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        elem[vi.name] = tt.elem_type
        if tt.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            shapes[vi.name] = tuple(dims)
    return shapes, elem


def _check_graph_io(g: onnx.GraphProto, tensors: dict, nodes: list, elem: dict, outputs: list) -> None:
    """Refuse graph inputs that are not float32 tensors and graph outputs that are constants (GraphError)."""
    for i in g.input:
        if i.name in tensors:
            continue
        if not i.type.HasField("tensor_type"):
            kind = i.type.WhichOneof("value")
            raise GraphError(f"graph input {i.name!r} is of type {kind}, not a tensor (read by "
                             f"{_readers(nodes, i.name)}); only float32 tensor inputs are supported")
        if elem.get(i.name) != onnx.TensorProto.FLOAT:
            tn = onnx.helper.tensor_dtype_to_np_dtype(elem[i.name]) if elem.get(i.name) else "unknown"
            raise GraphError(f"graph input {i.name!r} has element type {tn} (read by {_readers(nodes, i.name)}); "
                             f"only float32 inputs are supported")
    for o in outputs:
        if o in tensors:
            src = [f"{n.name or f'{n.op_type}_{k}'} ({n.op_type})" for k, n in enumerate(g.node) if o in n.output]
            who = src[0] if src else "an initializer"
            raise GraphError(f"graph output {o!r} is a constant (from {who}); nothing to run on the accelerator")


def _const_ints(n, k: int, attr: str, tensors: dict):
    """Integer list of node ``n``'s input ``k`` (a constant) or, for the attribute form of older opsets, of its
    attribute ``attr``; None when absent or not constant."""
    if len(n.inputs) > k and n.inputs[k]:
        t = tensors.get(n.inputs[k])
        return None if t is None or t.data is None else [int(v) for v in np.asarray(t.data).ravel()]
    v = n.attrs.get(attr)
    return None if v is None else [int(x) for x in v]


def _gated(nodes: list, tensors: dict, outputs: list) -> set:
    """Names of the nodes that are an activation as PyTorch exports it: the Mul of x times a gate of x (SiLU,
    HardSwish, Mish: :func:`generator.ir.passes.fuse_activation.gate_of`) and every node of an element-wise chain
    equal to a table activation (GELU's Div, Erf, Add, Mul, Mul: :func:`~generator.ir.passes.fuse_activation.chains`)."""
    return ({n.name for n in nodes if n.op == "Mul" and gate_of(nodes, n, outputs)}
            | {c.name for _, _, _, cone in chains(nodes, tensors, outputs) for c in cone})


def _decode_activations(nodes: list, outputs: list) -> set:
    """Names of the activation nodes (:data:`SINGLE_OPS` the host tail runs, not gates) from which no Conv (nor any
    op the host tail lacks, such as MaxPool) is reachable: the output decode of a detector (YOLOX's objectness and class Sigmoids feed a Concat with the box
    regression). They stay with the host tail: on the accelerator their outputs would share one scale with the raw
    boxes."""
    gates = {gn.name for n in nodes if n.op == "Mul" for gn in (gate_of(nodes, n, outputs) or (0, 0, []))[2]}
    readers = {}
    for n in nodes:
        for i in n.inputs:
            readers.setdefault(i, []).append(n)
    feeds_conv = {}

    def reaches_conv(n) -> bool:   # (or any op the host tail does not run: then the accelerator runs it all)
        if n.name not in feeds_conv:
            feeds_conv[n.name] = False
            feeds_conv[n.name] = any(r.op in ("Conv", "Gemm", "MatMul") or r.op not in HOST_OPS or reaches_conv(r)
                                     for o in n.outputs for r in readers.get(o, []))
        return feeds_conv[n.name]
    return {n.name for n in nodes if n.op in SINGLE_OPS and n.op in HOST_OPS and n.name not in gates
            and not reaches_conv(n)}


def refusal(n, tensors: dict, focus=frozenset(), host=frozenset()) -> str | None:
    """Why the accelerator cannot run node ``n`` (an IR :class:`Node` straight from ONNX), or None: an op outside
    :data:`SUPPORTED`, a Slice other than a constant channel slice (axis 1, step 1) or one of the phase slices of a
    Focus (node names in ``focus``, :func:`generator.ir.passes.fold_focus.focus_groups`), a Split on another axis,
    an Add / Sub / Mul / Div other than of two tensors (Add, Sub, Mul: equal shapes or a [1, C, 1, 1] factor) or by a
    per-channel constant."""
    if n.name in host:
        return "op"
    if n.name in focus:     # a Focus phase Slice, a gated product (SiLU, HardSwish, Mish) or a chain (GELU)
        return None
    if n.op not in SUPPORTED:
        return "op"
    if n.op == "Slice":
        starts = _const_ints(n, 1, "starts", tensors)
        axes = _const_ints(n, 3, "axes", tensors)
        steps = _const_ints(n, 4, "steps", tensors)
        if starts is None or _const_ints(n, 2, "ends", tensors) is None:
            return "non-constant starts/ends"
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        if [a % 4 for a in axes] != [1] or steps != [1]:
            return "not a channel slice (axis 1, step 1) nor part of a Focus"
    if n.op == "Split" and n.attrs.get("axis", 0) not in (1, -3):
        return "not a channel split (axis 1)"
    if n.op in ("Add", "Sub", "Mul", "Div"):
        consts = [i for i in n.inputs if i in tensors and tensors[i].is_const]
        if len(consts) == 2:
            return "two constants"
        if not consts and n.op == "Div":
            return "a quotient of two tensors"
        if not consts and n.op == "Mul":
            shapes = [tuple(tensors[i].shape) if i in tensors and tensors[i].shape else None for i in n.inputs]
            if None in shapes or not _product_shapes(*shapes):
                return "a product of tensors of shapes other than equal or [1, C, 1, 1] broadcast"
        if n.op == "Div" and consts == [n.inputs[0]]:
            return "a constant divided by a tensor"
        v = tensors[consts[0]].data if consts else None
        if v is not None and v.size != 1 and not (v.ndim in (3, 4) and v.shape[-2:] == (1, 1)
                                                  and (v.ndim == 3 or v.shape[0] == 1)):
            return "a constant that is not per channel"
    return None


def _product_shapes(sa: tuple, sb: tuple) -> bool:
    """True when the hardware multiplies tensors of shapes ``sa`` and ``sb``: equal [1, C, H, W] shapes, or one of
    them [1, C, 1, 1] broadcast over the other's pixels."""
    if len(sa) != 4 or len(sb) != 4:
        return False
    return sa == sb or sb == (1, sa[1], 1, 1) or sa == (1, sb[1], 1, 1)


def listing(bad: list, tensors: dict | None = None, width: int = 100) -> str:
    """Nodes ``bad`` grouped by op type (most frequent first) with their counts, every node named, each group one
    wrapped paragraph: ``  Slice x 8 (not a channel slice (axis 1, step 1)): a, b, ...``."""
    import textwrap
    from collections import defaultdict

    groups = defaultdict(list)
    for n in bad:
        why = refusal(n, tensors or {}) if tensors is not None else "op"
        groups[(n.op, why if why and why != "op" else "")].append(n.name)
    order = sorted(groups, key=lambda k: (-len(groups[k]), k))
    lines = []
    for op, why in order:
        head = f"{op} x {len(groups[(op, why)])}" + (f" ({why})" if why else "") + ": "
        lines.append(textwrap.fill(head + ", ".join(groups[(op, why)]), width, initial_indent="  ",
                                   subsequent_indent="    ", break_on_hyphens=False))
    return "\n".join(lines)


def _supported_text(width: int = 100) -> str:
    import textwrap

    return textwrap.fill("supported ops: " + ", ".join(sorted(SUPPORTED)), width, subsequent_indent="    ")


def host_runnable(n, tensors: dict) -> bool:
    """Whether the host tail runner (:mod:`host.tail`) runs node ``n``: an op of :data:`host.tail.HOST_OPS`; a Conv
    only as a 1x1 convolution with one output channel (a weighted sum over channels, e.g. YOLOv8's DFL expectation
    over its 16 bins), so that a network does not drift onto the host behind an unsupported activation."""
    if n.op not in HOST_OPS:
        return False
    if n.op != "Conv":
        return True
    w = tensors.get(n.inputs[1]) if len(n.inputs) > 1 else None
    a = n.attrs
    return (w is not None and w.is_const and len(w.shape) == 4 and w.shape[0] == 1 and tuple(w.shape[2:]) == (1, 1)
            and a.get("group", 1) == 1 and list(a.get("strides", [1, 1])) == [1, 1]
            and not any(a.get("pads", [0, 0, 0, 0])))


def _host_tail(nodes: list, tensors: dict, focus=frozenset(), host=frozenset()) -> set:
    """Names of the nodes that form a tail ending at graph outputs (every consumer of their outputs is in the tail
    too) and must run on the host: the unsupported nodes and every node reading, directly or not, an output of one
    (an exported YOLO decode mixes Sigmoid with Concat, Mul and Split, which alone the accelerator could run). Raises
    GraphError for unsupported nodes outside such a tail (every one listed, grouped by op type, :func:`listing`), a
    tail that is the whole graph, or a tail op the host cannot run."""
    unsupported = [n for n in nodes if refusal(n, tensors, focus, host)]
    tail = set()
    if not unsupported:
        return tail
    cand = {n.name for n in unsupported}
    made = {o for n in unsupported for o in n.outputs}
    changed = True
    while changed:   # a node reading a host-side tensor cannot run on the accelerator either: the host may run it
        changed = False
        for n in nodes:
            if n.name not in cand and made & set(n.inputs) and host_runnable(n, tensors):
                cand.add(n.name)
                made.update(n.outputs)
                changed = True
    changed = True
    while changed:   # a node is in the tail if it is a candidate and every consumer of its outputs is in the tail
        changed = False
        for n in nodes:
            if n.name in cand and n.name not in tail:
                cons = [c for c in nodes if set(c.inputs) & set(n.outputs)]
                if all(c.name in tail for c in cons):
                    tail.add(n.name)
                    changed = True
    bad = [n for n in unsupported if n.name not in tail]
    if bad:
        raise GraphError(f"{len(bad)} unsupported ONNX node(s), by op type:\n{listing(bad, tensors)}\n"
                         f"{_supported_text()}")
    if len(tail) == len(nodes):
        raise GraphError(f"{len(unsupported)} unsupported ONNX node(s), by op type:\n{listing(unsupported, tensors)}"
                         f"\nno node is left for the accelerator (a host-side tail must follow accelerator layers); "
                         f"{_supported_text()}")
    host_bad = [n for n in nodes if n.name in tail and not host_runnable(n, tensors)]
    if host_bad:
        raise GraphError(f"{len(host_bad)} unsupported ONNX node(s) in the host-side tail:\n{listing(host_bad)}\n"
                         f"neither the accelerator nor the host tail runner has them (host ops: "
                         f"{', '.join(sorted(HOST_OPS))})")
    return tail


def _cut_host_tail(nodes: list, tail: set, tensors: dict, inputs: list, outputs: list, shapes: dict,
                   meta: dict) -> tuple[list, list]:
    """Remove the ``tail`` nodes; record them in ``meta`` (``host_tail``, ``host_tail_inputs``,
    ``host_tail_input_shapes``, ``host_tail_consts``, see the module docstring). Returns (nodes left, graph
    outputs: those not produced in the tail, then the tensors the tail reads)."""
    tail_nodes = [n for n in nodes if n.name in tail]
    produced_in_tail = {o for n in tail_nodes for o in n.outputs}
    cut = []
    for n in tail_nodes:
        for i in n.inputs:
            if i and i not in produced_in_tail and i not in tensors and i not in cut and i not in inputs:
                cut.append(i)   # a graph input the tail reads is not an accelerator output: the host has it
    meta["host_tail"] = [{"name": n.name, "op": n.op, "inputs": n.inputs, "outputs": n.outputs,
                          "attrs": {k: _jsonable(v) for k, v in n.attrs.items()}} for n in tail_nodes]
    meta["host_tail_inputs"] = cut
    meta["host_tail_input_shapes"] = {i: list(shapes[i]) for i in cut if shapes.get(i) is not None}
    meta["host_tail_consts"] = {i: np.asarray(tensors[i].data) for n in tail_nodes for i in n.inputs
                                if i in tensors}
    meta["host_tail_outputs"] = {o: list(shapes[o]) if shapes.get(o) is not None else None for o in outputs
                                 if o in produced_in_tail}
    nodes = [n for n in nodes if n.name not in tail]
    return nodes, [o for o in outputs if o not in produced_in_tail] + cut


def _add_activations(nodes: list, tensors: dict, shapes: dict) -> None:
    """Add a :class:`Tensor` with its inferred shape for every non-constant tensor a node reads or writes (in
    place). Raises GraphError for a tensor without a static shape or with an empty dimension."""
    for n in nodes:
        for t in list(n.inputs) + list(n.outputs):
            if not t or t in tensors:
                continue
            shp = shapes.get(t)
            if shp is None or any(d is None for d in shp):
                raise GraphError(f"node {n.name} ({n.op}): no static shape inferred for tensor {t!r}")
            if any(d <= 0 for d in shp):
                raise GraphError(f"node {n.name} ({n.op}): tensor {t!r} has shape {list(shp)}, an empty tensor "
                                 f"(an input smaller than the kernel or window?)")
            tensors[t] = Tensor(t, shp)


def _explicit_pads(nodes: list, tensors: dict) -> None:
    """auto_pad -> explicit pads on 2-D Conv/MaxPool/AveragePool nodes (in place), so every pass and the float
    executor see the same geometry."""
    for n in nodes:
        if n.op in ("Conv", "MaxPool", "AveragePool") and n.attrs.get("auto_pad", "NOTSET") not in ("NOTSET",
                                                                                                  b"NOTSET"):
            x = tensors.get(n.inputs[0])
            k = n.attrs.get("kernel_shape") or (list(tensors[n.inputs[1]].shape[2:]) if n.op == "Conv" else None)
            if x is None or k is None or len(x.shape) != 4 or len(k) != 2:
                continue
            st = n.attrs.get("strides", [1, 1])
            n.attrs["pads"] = resolve_pads(n, x.shape[2:], k, st, n.attrs.get("dilations", [1, 1]))
            n.attrs.pop("auto_pad")


def _check_input_and_shapes(nodes: list, tensors: dict, shapes: dict, inputs: list) -> None:
    """Exactly one graph input, of shape [1, C, H, W] (its Tensor added to ``tensors``), and 4-D activations
    except around fully-connected layers. Raises GraphError naming the input or node."""
    if len(inputs) != 1:
        listing = " and ".join(f"{i!r} read by {_readers(nodes, i)}" for i in inputs)
        raise GraphError(f"the graph has {len(inputs)} inputs ({listing}); the accelerator takes exactly one "
                         f"[1, C, H, W] input (weights must be initializers)")
    for i in inputs:
        if i not in tensors:
            if shapes.get(i) is None or any(d is None for d in shapes[i]):
                raise GraphError(f"graph input {i!r} (read by {_readers(nodes, i)}) has no static shape")
            tensors[i] = Tensor(i, shapes[i])
        shp = tensors[i].shape
        if len(shp) != 4 or shp[0] != 1:
            what = "a batch other than 1" if len(shp) == 4 else f"a {len(shp)}-D tensor"
            raise GraphError(f"graph input {i!r} (read by {_readers(nodes, i)}) has shape {list(shp)}: {what} is "
                             f"not supported, expected [1, C, H, W]")
    for n in nodes:
        for t in list(n.inputs[:1]) + list(n.outputs):
            shp = tensors[t].shape if t in tensors else None
            if shp is not None and not tensors[t].is_const and len(shp) != 4 and n.op not in (
                    "Gemm", "MatMul", "Flatten", "Identity", "Relu", "LeakyRelu"):
                raise GraphError(f"node {n.name} ({n.op}): tensor {t!r} has shape {list(shp)}; only 4-D "
                                 f"[1, C, H, W] activations are supported")


#: ops whose constant operands may hold +-inf (bounds, masks, comparisons); NaN is refused everywhere
INF_OK_OPS = {"Clip", "Min", "Max", "Where", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"}


def _check_values(nodes: list, tensors: dict) -> None:
    """Refuse non-finite constants and negative BatchNormalization variances (see the module docstring).

    Raises:
        GraphError: ``tensor 'w' (read by conv_3 (Conv)) holds 2 NaN of its 864 values (the first at index
            [0, 1, 2, 2]); weights must be finite`` or ``node bn_0 (BatchNormalization): its variance 'bn_0.var'
            holds 1 negative value of 8 (-0.5 at channel 3); a variance cannot be negative``.
    """
    readers = {}
    for n in nodes:
        for i in n.inputs:
            if i:
                readers.setdefault(i, []).append(n)
    for name, rs in readers.items():
        t = tensors.get(name)
        a = None if t is None or t.data is None else np.asarray(t.data)
        if a is None or not np.issubdtype(a.dtype, np.floating) or a.size == 0:
            continue
        bad = ~np.isfinite(a)
        if not bad.any():
            continue
        nan = np.isnan(a)
        if not nan.any() and all(r.op in INF_OK_OPS for r in rs):
            continue
        kinds = ", ".join(f"{int(c)} {k}" for k, c in (("NaN", nan.sum()), ("+inf", np.isposinf(a).sum()),
                                                       ("-inf", np.isneginf(a).sum())) if c)
        first = [int(v) for v in np.argwhere(bad)[0]]
        who = ", ".join(f"{r.name} ({r.op})" for r in rs)
        raise GraphError(f"tensor {name!r} (read by {who}) holds {kinds} of its {a.size} values (the first at index "
                         f"{first}); weights and constants must be finite numbers")
    for n in nodes:
        if n.op != "BatchNormalization" or len(n.inputs) < 5:
            continue
        t = tensors.get(n.inputs[4])
        if t is None or t.data is None:
            continue
        v = np.asarray(t.data, np.float64).ravel()
        neg = np.flatnonzero(v < 0)
        if neg.size:
            raise GraphError(f"node {n.name} (BatchNormalization): its variance {n.inputs[4]!r} holds {neg.size} "
                             f"negative value(s) of {v.size} ({v[neg[0]]:g} at channel {int(neg[0])}); a variance "
                             f"cannot be negative")


def isa_limits() -> dict:
    """The accelerator's address limits that bound a model's tensors, derived from the instruction set
    (:mod:`generator.spec.isa`): ``region_bytes`` (the largest byte offset a LOAD / STORE reaches in one base-register
    space, ``ddr_offset``, and the largest buffer the ``input_size`` / ``act_size`` registers describe, minus one),
    ``pixel_bytes`` (LOAD / STORE ``pix_stride``: the bytes of one pixel of a region)."""
    from generator.spec import isa

    fields = {op: dict(isa.FORMATS[op]) for op in ("LOAD", "STORE")}
    regs = {name: bits for name, _, bits, _ in isa.REGISTERS}
    region_bits = min(fields["LOAD"]["ddr_offset"], fields["STORE"]["ddr_offset"], regs["input_size"],
                      regs["act_size"], regs["output_size"])
    pix_bits = min(fields["LOAD"]["pix_stride"], fields["STORE"]["pix_stride"])
    return {"region_bytes": (1 << region_bits) - 1, "pixel_bytes": (1 << pix_bits) - 1,
            "region_bits": region_bits, "pixel_bits": pix_bits}


def _physical_memory() -> int | None:
    """This machine's physical memory in bytes, None when unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_bounds(nodes: list, tensors: dict, inp: str, elem_bytes: int = 1) -> None:
    """Refuse a model beyond the accelerator's or the host's limits (``nodes``, ``tensors`` as in the IR, ``inp`` the
    graph input's name, shape [1, C, H, W]; ``elem_bytes`` 1 (int8) or 2 (int16) bytes per quantized element):

    * the input's H x W at most :data:`MAX_INPUT_PIXELS`;
    * its pixel (C x elem_bytes bytes) within ``pix_stride``, and the whole input (C x H x W x elem_bytes bytes)
      and every activation tensor within one region (:func:`isa_limits`);
    * the float32 activations of one image (the calibration keeps all of them: 4 bytes per element) within this
      machine's physical memory.

    Raises:
        GraphError: naming the input or tensor, its size and the limit.
    """
    shp = tensors[inp].shape
    _, c, h, w = shp
    lim = isa_limits()
    if h * w > MAX_INPUT_PIXELS:
        raise GraphError(f"graph input {inp!r} is {h} x {w} = {h * w:,} pixels (shape {list(shp)}); the compiler "
                         f"takes at most {MAX_INPUT_PIXELS:,} pixels (4096 x 4096, MAX_INPUT_PIXELS)")
    if c * elem_bytes > lim["pixel_bytes"]:
        raise GraphError(f"graph input {inp!r} has {c} channels: {c * elem_bytes} bytes per pixel at {elem_bytes} "
                         f"byte(s) per element, beyond the {lim['pixel_bits']}-bit pix_stride of LOAD / STORE "
                         f"(at most {lim['pixel_bytes']:,} bytes)")
    total = 0
    for n in nodes:
        for t in dict.fromkeys(list(n.inputs) + list(n.outputs)):
            tt = tensors.get(t) if t else None
            if tt is None or tt.is_const or not tt.shape:
                continue
            size = int(np.prod(tt.shape, dtype=np.int64))
            if size * elem_bytes > lim["region_bytes"]:
                what = f"graph input {t!r}" if t == inp else f"tensor {t!r} of node {n.name} ({n.op})"
                raise GraphError(f"{what} has shape {list(tt.shape)}: {size * elem_bytes:,} bytes at {elem_bytes} "
                                 f"byte(s) per element, beyond the accelerator's {lim['region_bits']}-bit region "
                                 f"addresses (at most {lim['region_bytes']:,} bytes: LOAD / STORE ddr_offset, the "
                                 f"*_size registers)")
    seen = set()
    for n in nodes:
        for t in list(n.inputs) + list(n.outputs):
            tt = tensors.get(t) if t else None
            if tt is not None and not tt.is_const and tt.shape and t not in seen:
                seen.add(t)
                total += 4 * int(np.prod(tt.shape, dtype=np.int64))
    mem = _physical_memory()
    if mem and total > mem:
        raise GraphError(f"graph input {inp!r} of shape {list(shp)}: the float32 activations of one image take "
                         f"{total / 2 ** 30:.1f} GiB (calibration keeps them all), more than this machine's "
                         f"{mem / 2 ** 30:.1f} GiB of memory; export the model for a smaller input")

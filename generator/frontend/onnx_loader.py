"""ONNX model -> graph IR (:mod:`generator.ir.graph`), with ONNX shape inference.

Supported operators (ONNX opset 11-21 semantics): Conv (any group; any padding below the kernel size: symmetric,
asymmetric, auto_pad SAME_UPPER / SAME_LOWER / VALID), BatchNormalization (inference), Relu,
LeakyRelu, MaxPool, AveragePool / GlobalAveragePool (as a diagonal convolution), GlobalMaxPool (square maps),
Resize/Upsample (nearest, integer scale), Concat (channel axis), Split and Slice (channel axis; and the stride-2
spatial Slices of a Focus read by a Conv, :mod:`generator.ir.passes.fold_focus`), Gemm/MatMul after Flatten (fully
connected), Identity, Constant.

Unsupported operators (and Slices / Splits off the channel axis) are an :class:`~generator.ir.graph.GraphError`
listing every such node, grouped by op type with counts (:mod:`generator.frontend.onnx_tail`),
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

Before anything else the model is validated (:func:`generator.frontend.onnx_checks.check_model`): its strings must
be UTF-8 text and its shape operands sane (a corrupted file), a tensor defined twice (by two nodes, or by a node
and an initializer or graph input: onnxruntime refuses such a model) is named with both definitions, then
``onnx.checker.check_model(full_check=True)`` (structure, types, strict shape inference) runs and its complaint is
reported on one line; a tensor whose data do not match its dims is refused when read
(:func:`~generator.frontend.onnx_checks.tensor_array`). Then (:func:`~generator.frontend.onnx_checks.check_values`)
every floating-point constant a node reads must be finite (NaN never; +-inf only as an operand of a bound or
comparison: Clip, Min, Max, Where, Less, ...), and a BatchNormalization's variance must not be negative: the message
names the tensor, the reading node, the count of bad values and the first one with its index. The metadata values
that are JSON are decoded, the others kept as strings.

Dynamic axes (:mod:`generator.frontend.onnx_dynamic`): a symbolic batch axis of the graph input becomes 1; symbolic
height and width take ``input_size`` (H, W) if given, else the model's ``imgsz`` metadata (Ultralytics writes
``"[640, 640]"``), else a GraphError names the input and the ``--input-size`` option. The export's symbolic
intermediate shapes are inferred again, and the shape arithmetic an exporter traces from ``x.shape`` (Shape, Gather,
Mul, Range, ConstantOfShape, ... whose operands are all constant once the input is static) is evaluated into
constants (:func:`~generator.frontend.onnx_dynamic.fold_shapes`), as a static export would hold them.

Bounds (:func:`~generator.frontend.onnx_checks.check_bounds`), checked at load with the limit named: at most
:data:`MAX_INPUT_PIXELS` input pixels (a host-side cap: calibration runs the float graph over whole images); the
input tensor's bytes within the ISA's address reach (:func:`isa_limits`: LOAD/STORE ``ddr_offset`` and the base
registers' ``*_size`` words are 32 bits, ``pix_stride`` 24 bits), at 1 byte per element here and again at the
quantization's element size when compiling (:func:`generator.flows.pipeline.compile_model`); every activation tensor
within one 32-bit region; and the float32 activations of one image (the calibration keeps them all) within this
machine's physical memory.
"""
from __future__ import annotations

import json
from pathlib import Path

import onnx
from onnx import shape_inference

from generator.ir.graph import Graph, GraphError, Node, Tensor
from generator.ir.passes.common import resolve_pads
from generator.ir.passes.fold_focus import focus_groups

# re-exported (__all__): the checks, the dynamic axes and the host-side tail live in their own modules
from generator.frontend.onnx_checks import (INF_OK_OPS, MAX_INPUT_PIXELS, check_bounds,  # noqa: F401
                                             check_model, check_values, isa_limits, one_line, tensor_array)
from generator.frontend.onnx_dynamic import fold_shapes, static_input
from generator.frontend.onnx_tail import (SUPPORTED, cut_host_tail, decode_activations, gated,  # noqa: F401
                                          host_runnable, host_tail, listing, refusal)

__all__ = ["load_onnx", "check_model", "check_bounds", "isa_limits", "MAX_INPUT_PIXELS", "INF_OK_OPS", "SUPPORTED",
           "refusal", "listing", "host_runnable"]


def _attrs(node) -> dict:
    """Attributes of an ONNX node as {name: Python value}."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


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
    tensors = {init.name: Tensor(init.name, tuple(init.dims), "float32",
                                 tensor_array(init, f"initializer {init.name!r}").copy()) for init in g.initializer}
    nodes = _nodes_and_constants(g, tensors)
    shapes, elem = _value_infos(g)
    inputs = [i.name for i in g.input if i.name not in tensors]
    outputs = [o.name for o in g.output]
    _check_graph_io(g, tensors, nodes, elem, outputs)
    check_values(nodes, tensors)
    _check_nodes(nodes, elem)
    focus = {s.name for f in focus_groups(nodes, tensors, shapes.get, outputs) for s in f.slices}
    shaped = {**{k: Tensor(k, tuple(v)) for k, v in shapes.items() if v is not None and None not in v}, **tensors}
    tail = host_tail(nodes, shaped, focus | gated(nodes, tensors, outputs), decode_activations(nodes, outputs))
    meta = {}
    for p in model.metadata_props:   # UTF-8 text (check_model): JSON, else kept as the string
        try:
            meta[p.key] = json.loads(p.value)
        except (ValueError, TypeError, RecursionError):
            meta[p.key] = p.value
    if resolved is not None:
        meta["input_size"] = list(resolved)
    if tail:
        nodes, outputs = cut_host_tail(nodes, tail, tensors, inputs, outputs, shapes, meta)
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
    input made static (:func:`static_input`), shape-inferred, its shape arithmetic folded (:func:`fold_shapes`).
    Returns (model, the (H, W) resolved for a symbolic input or None). Raises GraphError if unreadable or invalid."""
    try:
        if isinstance(model_or_path, (str, Path)):
            model = onnx.load(str(model_or_path))
        else:
            model = onnx.ModelProto()
            model.CopyFrom(model_or_path)
    except Exception as e:  # noqa: BLE001 - onnx raises several types for a bad file
        raise GraphError(f"cannot read ONNX model {model_or_path}: {one_line(e)}") from None
    check_model(model, model_or_path if isinstance(model_or_path, (str, Path)) else None)
    resolved = static_input(model, input_size)
    model = _infer(model)
    for _ in range(50):   # each round folds what the previous inference made static
        if not fold_shapes(model):
            break
        del model.graph.value_info[:]
        model = _infer(model)
    return model, resolved


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX shape inference (not strict). Raises GraphError on failure."""
    try:
        return shape_inference.infer_shapes(model, strict_mode=False)
    except Exception as e:  # noqa: BLE001
        raise GraphError(f"ONNX shape inference failed: {one_line(e)}") from None


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
            arr = tensor_array(a["value"], f"node {name} (Constant)").copy()
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
        which = " and ".join(f"{i!r} read by {_readers(nodes, i)}" for i in inputs)
        raise GraphError(f"the graph has {len(inputs)} inputs ({which}); the accelerator takes exactly one "
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

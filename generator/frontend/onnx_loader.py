"""ONNX model -> graph IR (:mod:`generator.ir`), with ONNX shape inference.

Supported operators (ONNX opset 11-21 semantics): Conv (group 1), BatchNormalization (inference), Relu,
LeakyRelu, MaxPool, Resize/Upsample (nearest, integer scale), Concat (channel axis), Split and Slice (channel
axis), Gemm/MatMul after Flatten (fully connected), Identity, Constant.

Unsupported operators are an :class:`~generator.ir.GraphError` listing every such node by name and op type,
unless they form a tail that ends at graph outputs (e.g. a YOLO decode: Reshape/Sigmoid/...): that tail is cut,
its inputs become the graph outputs (the host runs the post-processing) and it is recorded in
``graph.metadata["host_tail"]``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

from ..ir import Graph, GraphError, Node, Tensor

SUPPORTED = {"Conv", "BatchNormalization", "Relu", "LeakyRelu", "MaxPool", "Resize", "Upsample", "Concat",
             "Split", "Slice", "Gemm", "MatMul", "Flatten", "Identity", "Constant"}


def _attrs(node) -> dict:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def load_onnx(model_or_path) -> Graph:
    """Load an ONNX model (path or ``ModelProto``) into a :class:`Graph`.

    Activations are float32 NCHW with batch 1; initializers become constant tensors (float32 numpy arrays).
    ``graph.metadata`` gets the model's ``metadata_props`` (JSON values decoded where possible).

    Raises:
        GraphError: unreadable model, a batch other than 1, a tensor without an inferred shape, or unsupported
            operators (all of them listed as ``name (OpType)``) outside a host-side tail.
    """
    try:
        model = onnx.load(str(model_or_path)) if isinstance(model_or_path, (str, Path)) else model_or_path
    except Exception as e:  # noqa: BLE001 - onnx raises several types for a bad file
        raise GraphError(f"cannot read ONNX model {model_or_path}: {e}") from None
    try:
        model = shape_inference.infer_shapes(model, strict_mode=False)
    except Exception as e:  # noqa: BLE001
        raise GraphError(f"ONNX shape inference failed: {e}") from None
    g = model.graph
    tensors: dict[str, Tensor] = {}
    for init in g.initializer:
        tensors[init.name] = Tensor(init.name, tuple(init.dims), "float32",
                                    numpy_helper.to_array(init).copy())
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

    shapes = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        if tt.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            shapes[vi.name] = tuple(dims)
    inputs = [i.name for i in g.input if i.name not in tensors]
    outputs = [o.name for o in g.output]

    # Unsupported ops: a tail that only leads to graph outputs runs on the host; anything else is an error.
    unsupported = [n for n in nodes if n.op not in SUPPORTED]
    tail = set()
    if unsupported:
        changed = True
        cand = {n.name for n in unsupported}
        while changed:   # a node is in the tail if it is unsupported and every consumer of its outputs is in the tail
            changed = False
            for n in nodes:
                if n.name in cand and n.name not in tail:
                    cons = [c for c in nodes if set(c.inputs) & set(n.outputs)]
                    if all(c.name in tail for c in cons):
                        tail.add(n.name)
                        changed = True
        bad = [n for n in unsupported if n.name not in tail]
        if bad:
            listing = ", ".join(f"{n.name} ({n.op})" for n in bad)
            raise GraphError(f"{len(bad)} unsupported ONNX node(s): {listing}; supported ops: "
                             f"{', '.join(sorted(SUPPORTED))}")
    meta = {}
    for p in model.metadata_props:
        try:
            meta[p.key] = json.loads(p.value)
        except (json.JSONDecodeError, TypeError):
            meta[p.key] = p.value
    if tail:
        tail_nodes = [n for n in nodes if n.name in tail]
        produced_in_tail = {o for n in tail_nodes for o in n.outputs}
        cut = []
        for n in tail_nodes:
            for i in n.inputs:
                if i and i not in produced_in_tail and i not in tensors and i not in cut:
                    cut.append(i)
        meta["host_tail"] = [{"name": n.name, "op": n.op, "inputs": n.inputs, "outputs": n.outputs}
                             for n in tail_nodes]
        meta["host_tail_inputs"] = cut
        nodes = [n for n in nodes if n.name not in tail]
        outputs = [o for o in outputs if o not in produced_in_tail] + cut

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
    for i in inputs:
        if i not in tensors:
            tensors[i] = Tensor(i, shapes[i])
        shp = tensors[i].shape
        if len(shp) != 4 or shp[0] != 1:
            raise GraphError(f"graph input {i!r} has shape {shp}; expected [1, C, H, W]")
    graph = Graph(g.name or "model", nodes, tensors, inputs, outputs, metadata=meta)
    graph.prune()
    graph.toposort()
    return graph

"""Pass: fully-connected layers (Flatten -> Gemm/MatMul) -> convolutions."""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, Tensor
from generator.ir.passes.common import ACT_OPS


def fc_to_conv(graph: Graph) -> Graph:
    """Rewrite fully-connected layers (Flatten -> Gemm/MatMul) as convolutions.

    A Gemm on Flatten([1, C, H, W]) becomes a Conv with an H x W kernel producing [1, OC, 1, 1]; a following FC
    sees that 4-D tensor. Graph outputs keep their names with shape [1, OC, 1, 1] (``metadata["fc_outputs"]``).
    Raises GraphError for a Gemm with alpha/beta != 1 or transA, or whose input is not a flattened NCHW tensor.
    """
    g = graph.copy()
    for n in [n for n in g.nodes if n.op in ("Gemm", "MatMul")]:
        if n.op == "Gemm" and (n.attrs.get("alpha", 1.0) != 1.0 or n.attrs.get("beta", 1.0) != 1.0
                               or n.attrs.get("transA", 0)):
            raise GraphError(f"node {n.name} (Gemm): only alpha=1, beta=1, transA=0 is supported")
        src = g.producer(n.inputs[0])
        if src is not None and src.op == "Flatten" and src.attrs.get("axis", 1) not in (1, -3):
            raise GraphError(f"node {src.name} (Flatten): only axis 1 (flattening C, H, W of [1, C, H, W] for a "
                             f"fully connected layer) is supported, got axis {src.attrs.get('axis')}")
        if src is not None and src.op == "Flatten":
            x4 = src.inputs[0]
        elif n.op == "MatMul" and len(xs := g.tensors[n.inputs[0]].shape) == 4 and xs[1:3] != (1, 1):
            raise GraphError(f"node {n.name} (MatMul): on a 4-D tensor {list(xs)} MatMul multiplies the last axis "
                             f"only; only Flatten -> MatMul/Gemm (fully connected) is supported")
        elif len(g.tensors[n.inputs[0]].shape) == 4:
            x4 = n.inputs[0]
        elif (len(g.tensors[n.inputs[0]].shape) == 2 and src is not None and src.op in ACT_OPS | {"Identity"}
              and len(g.tensors[src.inputs[0]].shape) == 4):
            x4 = n.inputs[0]   # an activation between two FCs: [1, K] is the [1, K, 1, 1] output of the first
            g.tensors[x4].shape = tuple(g.tensors[src.inputs[0]].shape)
        else:
            raise GraphError(f"node {n.name} ({n.op}): input is not a flattened [1, C, H, W] tensor")
        _, c, h, w = g.tensors[x4].shape
        if h != w:
            raise GraphError(f"node {n.name} ({n.op}): a fully-connected layer on a non-square input [C, H, W] = "
                             f"[{c}, {h}, {w}] is not supported (it becomes an H x W convolution: H = W only)")
        if not g.tensors[n.inputs[1]].is_const or g.tensors[n.inputs[1]].data.ndim != 2:
            raise GraphError(f"node {n.name} ({n.op}): the weight {n.inputs[1]!r} must be a 2-D constant, got shape "
                             f"{list(g.tensors[n.inputs[1]].shape)}")
        wt = g.const(n.inputs[1])
        if n.op == "Gemm" and n.attrs.get("transB", 0):
            wt = wt.T
        wt = np.ascontiguousarray(wt.T)  # [OC, K]
        oc = wt.shape[0]
        if wt.shape[1] != c * h * w:
            raise GraphError(f"node {n.name} ({n.op}): weight has {wt.shape[1]} inputs, expected {c * h * w}")
        wname = g.unique_name(n.name + "_wconv")
        g.tensors[wname] = Tensor(wname, (oc, c, h, w), data=wt.reshape(oc, c, h, w).astype(np.float32))
        ins = [x4, wname]
        if n.op == "Gemm" and len(n.inputs) > 2 and n.inputs[2]:
            b = g.const(n.inputs[2]).reshape(-1)
            if b.size == 1:
                b = np.full(oc, b[0], np.float32)
            bname = g.unique_name(n.name + "_bconv")
            g.tensors[bname] = Tensor(bname, (oc,), data=b.astype(np.float32))
            ins.append(bname)
        out = n.outputs[0]
        g.tensors[out].shape = (1, oc, 1, 1)
        n.op, n.inputs, n.attrs = "Conv", ins, {"kernel_shape": [h, w], "strides": [1, 1], "pads": [0, 0, 0, 0]}
        if out in g.outputs:
            g.metadata.setdefault("fc_outputs", []).append(out)
    # activations after an FC-conv: their [1, OC] outputs are [1, OC, 1, 1] now too
    for n in g.nodes:
        if n.op in ACT_OPS and len(g.tensors[n.outputs[0]].shape) == 2 \
                and len(g.tensors[n.inputs[0]].shape) == 4:
            g.tensors[n.outputs[0]].shape = tuple(g.tensors[n.inputs[0]].shape)
            if n.outputs[0] in g.outputs:
                g.metadata.setdefault("fc_outputs", []).append(n.outputs[0])
    # a Flatten of an FC-conv output (feeding the next FC) is now a no-op on [1, OC, 1, 1]
    for f in [n for n in g.nodes if n.op == "Flatten"]:
        if not g.consumers(f.outputs[0]) and f.outputs[0] not in g.outputs:
            g.nodes.remove(f)
    g.prune()
    return g

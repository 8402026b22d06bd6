"""Pass: BatchNormalization folded into the preceding Conv (or a diagonal 1x1 Conv)."""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph, GraphError, Tensor
from generator.ir.passes.common import single_consumer


def fold_batchnorm(graph: Graph) -> Graph:
    """Fold inference BatchNormalization into the preceding Conv (weights and bias rescaled per channel).

    w' = w * gamma / sqrt(var + eps); b' = (b - mean) * gamma / sqrt(var + eps) + beta  (Ioffe & Szegedy 2015).
    A BatchNormalization that does not follow a Conv with a single consumer becomes a 1x1 Conv with the diagonal
    weight ``gamma / sqrt(var + eps)`` and that bias. Raises GraphError (naming the node) for non-constant
    statistics or an input that is not [1, C, H, W].
    """
    g = graph.copy()
    for bn in [n for n in g.nodes if n.op == "BatchNormalization"]:
        if not all(x in g.tensors and g.tensors[x].is_const for x in bn.inputs[1:5]):
            raise GraphError(f"node {bn.name} (BatchNormalization): scale, bias, mean and variance must be "
                             f"constants")
        gamma, beta, mean, var = (g.const(x).astype(np.float64) for x in bn.inputs[1:5])
        eps = float(bn.attrs.get("epsilon", 1e-5))
        k = gamma / np.sqrt(var + eps)
        conv = g.producer(bn.inputs[0])
        if conv is None or conv.op != "Conv" or single_consumer(g, bn.inputs[0]) is not bn:
            shp = g.tensors[bn.inputs[0]].shape
            if len(shp) != 4:
                raise GraphError(f"node {bn.name} (BatchNormalization): input shape {list(shp)} is not [1, C, H, W]")
            c = shp[1]
            wname, bname = g.unique_name(bn.name + "_wdiag"), g.unique_name(bn.name + "_bdiag")
            wd = np.zeros((c, c, 1, 1), np.float32)
            wd[np.arange(c), np.arange(c), 0, 0] = k
            g.tensors[wname] = Tensor(wname, wd.shape, data=wd)
            g.tensors[bname] = Tensor(bname, (c,), data=(beta - mean * k).astype(np.float32))
            bn.op, bn.inputs = "Conv", [bn.inputs[0], wname, bname]
            bn.outputs = bn.outputs[:1]
            bn.attrs = {"kernel_shape": [1, 1], "strides": [1, 1], "pads": [0, 0, 0, 0]}
            continue
        w = g.const(conv.inputs[1]).astype(np.float64)
        b = g.const(conv.inputs[2]).astype(np.float64) if len(conv.inputs) > 2 and conv.inputs[2] else 0.0
        wname = g.unique_name(conv.name + "_wfold")
        bname = g.unique_name(conv.name + "_bfold")
        g.tensors[wname] = Tensor(wname, w.shape, data=(w * k[:, None, None, None]).astype(np.float32))
        g.tensors[bname] = Tensor(bname, k.shape, data=((b - mean) * k + beta).astype(np.float32))
        conv.inputs = [conv.inputs[0], wname, bname]
        out = bn.outputs[0]
        g.nodes.remove(bn)
        conv.outputs = [out]
    g.prune()
    return g

"""Graph passes. Each is a function ``Graph -> Graph`` with one job, in a module of its name; none mutates its
input or touches codegen. Shared helpers (:func:`resolve_pads`, pool / resize / activation checks) are in
:mod:`generator.ir.passes.common`.

Order used by :func:`run_all` (:data:`PIPELINE`):

1. lower_pooling: AveragePool / GlobalAveragePool -> diagonal Conv, GlobalMaxPool -> MaxPool;
   fold_focus: Focus (four stride-2 phase Slices + Concat) + Conv -> one Conv with twice the kernel and stride;
   lower_grouped_conv: grouped / depthwise Conv -> a dense Conv with block-diagonal weights;
   split_large_pools: a stride-1 MaxPool wider than POST's window -> a chain of narrower ones;
2. fold_batchnorm: BatchNormalization into the preceding Conv (or a diagonal 1x1 Conv);
   fuse_activation: Sigmoid, SiLU (Sigmoid x Mul), Tanh, Mish, HardSigmoid, HardSwish, Softplus, Elu -> ``Act``;
   lower_elementwise: Add / Sub of two tensors -> Concat + 1x1 Conv, by a per-channel constant -> diagonal Conv;
3. fc_to_conv: Flatten -> Gemm/MatMul -> an H x W Conv;
4. hoist_pool_above_concat: op(concat(a, b)) -> concat(op(a), op(b)) for MaxPool and activations;
5. fuse_macro: Conv + activation + MaxPool + Resize -> ``Macro`` conv layer;
6. lower_standalone: the MaxPool / activation / Resize left over -> ``Macro`` copy layer;
7. assign_regions: one DDR region per activation;
8. eliminate_concat: Concat inputs written side by side into one region;
9. eliminate_split: Split/Slice outputs become channel views;
10. merge_pool_copies: a k x k / stride k pool copy of a conv output -> the conv's second, pooled output;
11. separate_pool_borders: a padded max-pool reads a copy of a region a padded convolution reads too.

Every pass is checked numerically against onnxruntime on small random graphs (tests/ir/test_passes.py).
"""
from __future__ import annotations

from generator.ir.graph import Graph
from generator.ir.passes.assign_regions import assign_regions
from generator.ir.passes.common import resolve_pads
from generator.ir.passes.eliminate_concat import eliminate_concat
from generator.ir.passes.eliminate_split import eliminate_split
from generator.ir.passes.fc_to_conv import fc_to_conv
from generator.ir.passes.fold_batchnorm import fold_batchnorm
from generator.ir.passes.fold_focus import fold_focus
from generator.ir.passes.fuse_activation import fuse_activation
from generator.ir.passes.fuse_macro import fuse_macro
from generator.ir.passes.hoist_pool_above_concat import hoist_pool_above_concat
from generator.ir.passes.lower_elementwise import lower_elementwise
from generator.ir.passes.lower_grouped_conv import lower_grouped_conv
from generator.ir.passes.lower_pooling import lower_pooling
from generator.ir.passes.lower_standalone import lower_standalone
from generator.ir.passes.merge_pool_copies import merge_pool_copies
from generator.ir.passes.separate_pool_borders import separate_pool_borders
from generator.ir.passes.split_large_pools import split_large_pools

__all__ = ["PIPELINE", "run_all", "resolve_pads", "fold_focus", "fuse_activation", "lower_grouped_conv", "lower_pooling", "split_large_pools", "fold_batchnorm",
           "lower_elementwise",
           "fc_to_conv", "hoist_pool_above_concat", "fuse_macro", "lower_standalone", "assign_regions",
           "eliminate_concat", "eliminate_split", "merge_pool_copies", "separate_pool_borders"]

#: the passes :func:`run_all` applies, in order
PIPELINE = (lower_pooling, fold_focus, lower_grouped_conv, split_large_pools, fold_batchnorm, fuse_activation,
            lower_elementwise, fc_to_conv, hoist_pool_above_concat,
            fuse_macro, lower_standalone, assign_regions, eliminate_concat, eliminate_split, merge_pool_copies,
            separate_pool_borders)


def run_all(graph: Graph) -> Graph:
    """The full pass pipeline (:data:`PIPELINE`), from a loaded ONNX graph to accelerator layers over shared DDR
    regions; the regions of the graph outputs get the OUTPUT base register. Raises GraphError from any pass."""
    g = graph
    for p in PIPELINE:
        g = p(g)
    for t in g.outputs:
        reg = g.regions[g.tensors[t].region]
        reg.base_reg = "OUTPUT"
    return g

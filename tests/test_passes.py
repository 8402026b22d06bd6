"""Every graph pass, applied in order, keeps the graph numerically equal to onnxruntime on the original model."""
import numpy as np
import pytest

from generator import passes
from generator.float_exec import run_float
from generator.frontend.onnx_loader import load_onnx
from generator.ir import GraphError
from onnx_builders import Builder, ort_run

PIPELINE = [passes.fold_batchnorm, passes.fc_to_conv, passes.hoist_pool_above_concat, passes.fuse_macro,
            passes.lower_standalone, passes.assign_regions, passes.eliminate_concat, passes.eliminate_split,
            passes.merge_pool_copies]


def csp_block(b):
    """A YOLOv4-tiny CSP block: conv, split, convs, concat, 1x1, concat, maxpool after concat."""
    x = b.leaky(b.bn(b.conv("x", 16, bias=False)))
    _, hi = b.split(x)
    a = b.leaky(b.bn(b.conv(hi, 8, bias=False)))
    c = b.leaky(b.bn(b.conv(a, 8, bias=False)))
    d = b.leaky(b.bn(b.conv(b.concat(c, a), 16, k=1, bias=False)))
    return b.maxpool(b.concat(x, d))


def graphs():
    out = []
    b = Builder([1, 3, 16, 18], seed=1)
    y = csp_block(b)
    out.append(("csp_block", b.model([y])))

    b = Builder([1, 5, 12, 12], seed=2)
    y = b.upsample(b.relu(b.maxpool(b.conv("x", 7, k=3, s=2), k=2, s=1, pad_end=1)))
    out.append(("conv_pool_s1_upsample", b.model([y])))

    b = Builder([1, 4, 6, 6], seed=3)
    f = b.op("Flatten", ["x"], [1, 144], axis=1)
    w1 = b.const(np.random.default_rng(0).standard_normal((10, 144)).astype(np.float32) * 0.1)
    b1 = b.const(np.zeros(10, np.float32))
    g1 = b.op("Gemm", [f, w1, b1], [1, 10], transB=1)
    r = b.relu(g1)
    w2 = b.const(np.random.default_rng(1).standard_normal((10, 6)).astype(np.float32))
    g2 = b.op("Gemm", [r, w2], [1, 6])
    out.append(("fully_connected", b.model([g2])))

    b = Builder([1, 6, 8, 8], seed=4)
    a = b.conv("x", 8, k=1)
    c = b.conv("x", 4, k=3)
    cat1 = b.concat(a, c, a)           # the same tensor twice
    cat2 = b.concat(c, b.slice(a, 2, 6))  # c in two concats; a slice as a concat input
    y = b.conv(b.leaky(cat2), 5, k=1)  # activation after concat is hoisted
    out.append(("shared_regions_and_copies", b.model([cat1, y])))
    return out


@pytest.mark.parametrize("name,model", graphs(), ids=[n for n, _ in graphs()])
def test_each_pass_matches_onnxruntime(name, model):
    x = np.random.default_rng(7).random(model.graph.input[0].type.tensor_type.shape.dim and
                                       [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
                                       ).astype(np.float32)
    ref = ort_run(model, x)
    g = load_onnx(model)
    for p in PIPELINE:
        g = p(g)
        got = run_float(g, {"x": x})
        for o, r in ref.items():
            assert o in got, f"{p.__name__} lost output {o}"
            np.testing.assert_allclose(got[o].reshape(r.shape), r, rtol=1e-4, atol=1e-4,
                                       err_msg=f"after {p.__name__}")
    assert all(n.op == "Macro" for n in g.nodes)


def test_passes_do_not_mutate_their_input():
    _, m = graphs()[0]
    g = load_onnx(m)
    before = [(n.op, tuple(n.inputs)) for n in g.nodes]
    passes.run_all(g)
    assert [(n.op, tuple(n.inputs)) for n in g.nodes] == before


def test_concat_elimination_shares_regions_and_copies_when_needed():
    _, m = graphs()[3]
    g = passes.run_all(load_onnx(m))
    copies = [n for n in g.nodes if n.attrs["macro"].kind == "copy"]
    # 'a' twice in cat1 (one copy), 'c' in two concats (one copy), the slice of 'a' in cat2 (one copy)
    assert len(copies) == 3
    cat_regions = {g.tensors[o].region for o in g.outputs}
    assert len(cat_regions) == 2


def test_pool_after_concat_is_hoisted_and_fused():
    _, m = graphs()[0]
    g = passes.run_all(load_onnx(m))
    pooled = [n for n in g.nodes if n.attrs["macro"].pool]
    # the 1x1 conv gets the pool fused; the first conv's output is also split, so the hoisted pool of it first
    # becomes a copy layer, which merge_pool_copies then folds into that conv as a second (pooled) output
    assert [n.attrs["macro"].kind for n in pooled] == ["conv"]
    side = [n for n in g.nodes if n.attrs["macro"].side_pools]
    assert len(side) == 1 and len(side[0].outputs) == 2 and side[0].attrs["macro"].side_pools == [(2, 2, 0)]
    assert not any(n.op in ("Concat", "Split", "MaxPool") for n in g.nodes)
    assert not any(n.attrs["macro"].kind == "copy" for n in g.nodes)


def test_batchnorm_without_conv_is_an_error():
    b = Builder([1, 3, 4, 4])
    y = b.bn("x")
    with pytest.raises(GraphError, match="BatchNormalization"):
        passes.fold_batchnorm(load_onnx(b.model([y])))

"""Every graph pass, applied in order, keeps the graph numerically equal to onnxruntime on the original model."""
import numpy as np
import pytest

from generator.ir import passes
from generator.ref.float_ref import run_float
from generator.frontend.onnx_loader import load_onnx
from generator.ir.graph import GraphError
from generator.frontend.modelgen import Builder, ort_run

PIPELINE = passes.PIPELINE


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

    b = Builder([1, 3, 9, 9], seed=5)    # auto_pad resolved by the loader (SAME_LOWER conv, SAME_UPPER pool)
    y = b.op("Conv", ["x", b.const(np.random.default_rng(2).standard_normal((4, 3, 3, 3)).astype(np.float32))],
             [1, 4, 5, 5], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER")
    y = b.op("MaxPool", [b.leaky(y)], [1, 4, 5, 5], kernel_shape=[2, 2], strides=[1, 1], auto_pad="SAME_UPPER")
    out.append(("auto_pad_same", b.model([y])))

    b = Builder([1, 3, 12, 12], seed=6)   # average pools become diagonal convolutions
    y = b.op("AveragePool", [b.conv("x", 5, k=3)], [1, 5, 6, 6], kernel_shape=[2, 2], strides=[2, 2])
    y = b.op("AveragePool", [b.leaky(y)], [1, 5, 6, 6], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=1)
    ga = b.op("GlobalAveragePool", [y], [1, 5, 1, 1])
    gm = b.op("GlobalMaxPool", [b.conv(y, 4, k=1)], [1, 4, 1, 1])
    out.append(("average_and_global_pools", b.model([ga, gm])))

    b = Builder([1, 4, 15, 13], seed=7)   # SPP: padded stride-1 pools, 9 and 13 split into chains; ceil_mode pool
    a = b.leaky(b.conv("x", 6, k=1))
    c = b.concat(b.maxpool(a, 13, 1, pads=[6] * 4), b.maxpool(a, 9, 1, pads=[4] * 4),
                 b.maxpool(a, 5, 1, pads=[2] * 4), a)
    y = b.maxpool(b.conv(c, 5, k=1), 3, 2, pads=[1, 0, 1, 0], ceil_mode=1)
    out.append(("spp_pools", b.model([y])))

    b = Builder([1, 5, 9, 11], seed=8)    # element-wise arithmetic lowered to 1x1 convolutions
    a = b.leaky(b.conv("x", 6, k=3))
    r = b.conv(a, 6, k=3)
    y = b.leaky(b.op("Add", [a, r], [1, 6, 9, 11]))                                  # residual
    y = b.op("Sub", [b.const(np.float32(0.5)), y], [1, 6, 9, 11])                    # k - x
    y = b.op("Div", [y, b.const(np.linspace(0.5, 3, 6).astype(np.float32).reshape(6, 1, 1))], [1, 6, 9, 11])
    z = b.op("Sub", [y, a], [1, 6, 9, 11])                                           # a tensor minus a tensor
    z = b.op("Mul", [b.const(np.full((1, 6, 1, 1), -2.0, np.float32)), z], [1, 6, 9, 11])
    out.append(("elementwise", b.model([z, b.op("Add", [a, a], [1, 6, 9, 11])])))

    b = Builder([1, 3, 12, 16], seed=9)   # Focus stems (YOLOX / YOLOv5 < 6.0) in both export forms, BN and stride 2
    y1 = b.leaky(b.bn(b.conv(b.focus("x"), 8, k=3, bias=False)))
    y2 = b.relu(b.conv(b.focus("x", one_slice=True), 4, k=3, s=2, p=[1, 0, 1, 1]))
    out.append(("focus", b.model([y1, y2])))

    b = Builder([1, 6, 10, 9], seed=10)   # depthwise (YOLOX-nano, MobileNet) and grouped convolutions, BN folded
    d = b.op("Conv", ["x", b.const(np.random.default_rng(3).standard_normal((6, 1, 3, 3)).astype(np.float32))],
             [1, 6, 5, 5], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], group=6)
    y = b.op("Conv", [b.leaky(b.bn(d)), b.const(np.random.default_rng(4).standard_normal((4, 3, 1, 1))
                                                .astype(np.float32)), b.const(np.ones(4, np.float32))],
             [1, 4, 5, 5], kernel_shape=[1, 1], group=2)
    out.append(("grouped_conv", b.model([y])))
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


def test_focus_folds_into_a_conv_with_twice_the_kernel_and_stride():
    """Focus + 3x3 conv -> one 6x6 stride-2 conv on the image (pads doubled); a Focus whose concat is read by a
    second node, or a stride-2 row slice alone, is no Focus: the loader refuses its spatial Slices."""
    b = Builder([1, 3, 12, 16], seed=9)
    y = b.conv(b.focus("x"), 8, k=3, p=[1, 0, 1, 1])
    g = passes.fold_focus(load_onnx(b.model([y])))
    assert [n.op for n in g.nodes] == ["Conv"] and g.nodes[0].inputs[0] == "x"
    assert g.nodes[0].attrs == {"kernel_shape": [6, 6], "strides": [2, 2], "pads": [2, 0, 2, 2]}
    assert g.tensors[g.nodes[0].inputs[1]].shape == (8, 3, 6, 6)
    b = Builder([1, 3, 12, 16], seed=9)
    f = b.focus("x")
    with pytest.raises(GraphError, match=r"Slice x 8 \(not a channel slice \(axis 1, step 1\) nor part of a Focus"):
        load_onnx(b.model([b.conv(f, 8, k=3), b.conv(f, 4, k=1)]))


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


def test_batchnorm_without_conv_becomes_a_diagonal_1x1_conv():
    b = Builder([1, 3, 4, 4])
    y = b.conv(b.bn("x"), 4, k=3)
    m = b.model([y])
    g = passes.fold_batchnorm(load_onnx(m))
    assert [n.op for n in g.nodes] == ["Conv", "Conv"]
    x = np.random.default_rng(0).random((1, 3, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(run_float(passes.run_all(load_onnx(m)), {"x": x})[y], ort_run(m, x)[y],
                               rtol=1e-4, atol=1e-4)


def _one(op, in_shape, out_shape, inputs=None, **attrs):
    b = Builder(in_shape)
    return b.model([b.op(op, ["x"] + (inputs or []), out_shape, **attrs)]), b


@pytest.mark.parametrize("attrs,out,msg", [
    (dict(dilations=[2, 2]), [1, 2, 6, 6], r"MaxPool.*dilations \[2, 2\] are not supported"),
    (dict(pads=[2, 0, 2, 0]), [1, 2, 11, 7], r"MaxPool.*padding \[2, 0, 2, 0\].*must be below the window size 2"),
    (dict(kernel_shape=[9, 9], strides=[2, 2]), [1, 2, 1, 1], r"MaxPool.*9x9 window is wider than the 7.*stride 1"),
])
def test_maxpool_refusals_name_node_and_attribute(attrs, out, msg):
    a = dict(kernel_shape=[2, 2], strides=[1, 1])
    a.update(attrs)
    m, _ = _one("MaxPool", [1, 2, 8, 8], out, **a)
    with pytest.raises(GraphError, match=msg):
        passes.run_all(load_onnx(m))


def test_maxpool_ceil_mode_that_does_not_change_the_size_is_accepted():
    m, _ = _one("MaxPool", [1, 2, 8, 8], [1, 2, 4, 4], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    g = passes.run_all(load_onnx(m))
    assert g.nodes[0].attrs["macro"].pool == (2, 2, 0)


@pytest.mark.parametrize("attrs,out,pads", [
    (dict(pads=[1, 1, 1, 1], kernel_shape=[3, 3]), [1, 2, 8, 8], (1, 1, 1, 1)),          # SPP-style "same"
    (dict(auto_pad="SAME_LOWER"), [1, 2, 8, 8], (1, 1, 0, 0)),                            # top/left only
    (dict(ceil_mode=1, strides=[2, 2], kernel_shape=[3, 3]), [1, 2, 4, 4], (0, 0, 1, 1)),  # ceil: one more row
])
def test_padded_maxpool_is_a_copy_layer_reading_a_padded_input(attrs, out, pads):
    """A max-pool the conv's post-processing cannot take (top/left padding, ceil_mode) is a copy layer whose pads
    are the pool's -inf padding."""
    a = dict(kernel_shape=[2, 2], strides=[1, 1])
    a.update(attrs)
    m, _ = _one("MaxPool", [1, 2, 8, 8], out, **a)
    g = passes.run_all(load_onnx(m))
    ma = g.nodes[0].attrs["macro"]
    assert ma.kind == "copy" and ma.pads == pads and ma.pool[2] == 0


@pytest.mark.parametrize("attrs,wshape,out,msg", [
    (dict(dilations=[2, 2]), (4, 2, 3, 3), [1, 4, 4, 4], r"Conv.*dilations \[2, 2\]"),
    (dict(pads=[3, 0, 1, 0]), (4, 2, 3, 3), [1, 4, 10, 6], r"Conv.*pads \[3, 0, 1, 0\].*less than the kernel size 3"),
    (dict(strides=[1, 2]), (4, 2, 3, 3), [1, 4, 6, 3], r"Conv.*square kernels and strides"),
])
def test_conv_refusals_name_node_and_attribute(attrs, wshape, out, msg):
    b = Builder([1, 2, 8, 8])
    w = b.const(np.ones(wshape, np.float32))
    y = b.op("Conv", ["x", w], out, kernel_shape=[3, 3], **attrs)
    with pytest.raises(GraphError, match=msg):
        passes.run_all(load_onnx(b.model([y])))


@pytest.mark.parametrize("ctm,nm,ok", [("asymmetric", "floor", True), ("half_pixel", "round_prefer_floor", True),
                                       ("asymmetric", "round_prefer_floor", False), ("half_pixel", "ceil", False),
                                       ("align_corners", "floor", False),
                                       ("pytorch_half_pixel", "round_prefer_floor", True)])
def test_resize_nearest_mapping_is_checked(ctm, nm, ok):
    """Only coordinate modes mapping output x to input x // f are plain nearest upsampling (factor 4 here, where
    asymmetric + round_prefer_floor maps x = 2, 3 to input 1)."""
    b = Builder([1, 2, 3, 3])
    sc = b.const(np.array([1, 1, 4, 4], np.float32))
    y = b.op("Resize", ["x", "", sc], [1, 2, 12, 12], mode="nearest", coordinate_transformation_mode=ctm,
             nearest_mode=nm)
    m = b.model([y])
    if ok:
        g = passes.run_all(load_onnx(m))
        x = np.random.default_rng(0).random((1, 2, 3, 3)).astype(np.float32)
        np.testing.assert_array_equal(run_float(g, {"x": x})[y], ort_run(m, x)[y])
        assert g.nodes[0].attrs["macro"].upsample == 4
    else:
        with pytest.raises(GraphError, match=rf"Resize.*{ctm} with nearest_mode={nm} does not map"):
            passes.run_all(load_onnx(m))


def test_resolve_pads():
    from generator.ir.graph import Node
    n = Node("p", "MaxPool", ["x"], ["y"], {"auto_pad": "SAME_UPPER"})
    assert passes.resolve_pads(n, (5, 4), (3, 3), (2, 2)) == [1, 0, 1, 1]
    n.attrs["auto_pad"] = "SAME_LOWER"
    assert passes.resolve_pads(n, (5, 4), (3, 3), (2, 2)) == [1, 1, 1, 0]
    n.attrs["auto_pad"] = "VALID"
    assert passes.resolve_pads(n, (5, 4), (3, 3), (2, 2)) == [0, 0, 0, 0]


def test_matmul_on_a_4d_tensor_and_flatten_axis_are_refused():
    b = Builder([1, 2, 3, 4])
    y = b.op("MatMul", ["x", b.const(np.ones((4, 5), np.float32))], [1, 2, 3, 5])
    with pytest.raises(GraphError, match=r"MatMul.*multiplies the last axis only"):
        passes.run_all(load_onnx(b.model([y])))
    b = Builder([1, 2, 3, 4])
    f = b.op("Flatten", ["x"], [2, 12], axis=2)
    y = b.op("Gemm", [f, b.const(np.ones((12, 5), np.float32))], [2, 5])
    with pytest.raises(GraphError, match=r"Flatten.*only axis 1"):
        passes.run_all(load_onnx(b.model([y])))


def test_average_pool_refusals():
    b = Builder([1, 2, 8, 8])
    y = b.op("AveragePool", ["x"], [1, 2, 8, 8], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    with pytest.raises(GraphError, match=r"AveragePool.*count_include_pad=0"):
        passes.run_all(load_onnx(b.model([y])))
    b = Builder([1, 2, 8, 6])
    y = b.op("GlobalMaxPool", ["x"], [1, 2, 1, 1])
    with pytest.raises(GraphError, match=r"GlobalMaxPool.*only square inputs.*8x6"):
        passes.run_all(load_onnx(b.model([y])))


@pytest.mark.parametrize("op,second,msg", [
    ("Div", "tensor", r"Div x 1 \(a quotient of two tensors\)"),
    ("Mul", "column", r"Mul x 1 \(a product of tensors of shapes other than equal or \[1, C, 1, 1\] broadcast\)"),
    ("Div", "const_first", r"Div x 1 \(a constant divided by a tensor\)"),
    ("Add", "row", r"Add x 1 \(a constant that is not per channel\)"),
])
def test_elementwise_refusals_name_node_and_reason(op, second, msg):
    """Element-wise forms the accelerator has no layer for are refused (when not a host-side tail), each node
    named with the reason."""
    b = Builder([1, 4, 6, 6], seed=9)
    a = b.conv("x", 4, k=1)
    other = {"tensor": b.conv("x", 4, k=1), "const_first": b.const(np.float32(2.0)),
             "row": b.const(np.ones(6, np.float32)),
             "column": b.op("MaxPool", ["x"], [1, 4, 1, 6], kernel_shape=[6, 1], strides=[1, 1])}[second]
    ins = [other, a] if second == "const_first" else [a, other]
    y = b.conv(b.op(op, ins, [1, 4, 6, 6]), 3, k=1)
    with pytest.raises(GraphError, match=msg):
        passes.run_all(load_onnx(b.model([y])))

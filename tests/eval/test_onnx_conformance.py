"""ONNX conformance: the onnx wheel's backend node tests run through the compiler and the golden simulator
(generator/eval/conformance.py), models of any input channel count calibrate and run, the input range comes from the
calibration data, and a host tail runs after the accelerator."""
import re
import time

import numpy as np
import onnx
import pytest

from generator.eval import conformance

from generator.ir import passes
from generator.flows.pipeline import compile_model, quantize_image
from generator.frontend.onnx_loader import load_onnx
from generator.ir.graph import GraphError
from generator.quant.quantize import QuantConfig, QuantError, calibrate, quantize
from generator.exec import run_golden
from generator.frontend.modelgen import Builder, ort_run
from helpers import sqnr_db


def test_node_tests_pass_or_are_refused_with_a_reason():
    t0 = time.time()
    dirs = conformance.select_tests()
    res = [conformance.run_test(d) for d in dirs]
    dt = time.time() - t0
    print("\n" + conformance.format_table(res) + f"\nran in {dt:.1f} s")
    assert len(res) >= 150, "the onnx wheel's node tests were not found"
    fails = [f"{r.name}: {r.detail}" for r in res if r.status == "FAIL"]
    assert not fails, "\n".join(fails)
    for r in res:
        assert r.status in ("pass", "refused")
        if r.status == "refused":
            m = onnx.load(str(conformance.NODE_DIR / r.name / "model.onnx"), load_external_data=False)
            # the loader names nodes "name (OpType)" or, listing unsupported nodes, "OpType x N: name, ...";
            # unnamed ones "OpType_<index>"
            names = {n.name or f"{n.op_type}_{k}" for k, n in enumerate(m.graph.node)}
            assert any(re.search(rf"(?<![\w/]){re.escape(x)}(?![\w/])", r.detail) for x in names), \
                f"{r.name}: refusal names no node: {r.detail}"
            reason = r.detail.split(": ", 1)[1]
            assert len(reason) > 20 and "\n" not in r.detail and "Traceback" not in r.detail, r.detail
        else:
            assert r.sqnr_db >= conformance.SQNR_MIN_DB and r.err_rel <= conformance.MAX_ERR_REL
    passed = {r.name for r in res if r.status == "pass"}
    # the node tests the accelerator runs today; a regression shows up here
    assert {"test_basic_conv_with_padding", "test_basic_conv_without_padding", "test_conv_with_strides_padding",
            "test_conv_with_strides_no_padding", "test_conv_with_autopad_same", "test_maxpool_2d_default",
            "test_maxpool_2d_strides", "test_maxpool_2d_precomputed_strides", "test_maxpool_2d_same_upper",
            "test_identity", "test_resize_upsample_sizes_nearest_not_smaller", "test_averagepool_2d_default",
            "test_averagepool_2d_pads_count_include_pad", "test_globalaveragepool", "test_globalmaxpool"} <= passed
    assert dt < 180


def test_unexpected_exception_is_a_failure_not_a_refusal(monkeypatch, tmp_path):
    def boom(*a, **k):
        raise IndexError("tuple index out of range")
    monkeypatch.setattr(conformance, "compile_case", boom)
    r = conformance.run_test(conformance.NODE_DIR / "test_basic_conv_with_padding")
    assert r.status == "FAIL" and "IndexError" in r.detail


@pytest.mark.parametrize("channels", [1, 4])
def test_model_with_other_than_3_input_channels_compiles_and_runs_on_a_real_image(channels, tmp_path, monkeypatch):
    """Calibration images follow the model's input channels (1: luminance, 4: R, G, B, R); the folded first
    layer runs with IC != 3; the output matches onnxruntime on the same derived input."""
    from generator.eval import data
    from host.preprocess import darknet_resize, load_image, to_channels

    b = Builder([1, channels, 32, 32], seed=channels)
    y = b.conv(b.leaky(b.conv("x", 8, k=3, s=2)), 6, k=3)
    path = tmp_path / f"ch{channels}_model.onnx"
    onnx.save(b.model([y]), str(path))
    from generator.flows import calibration, pipeline
    monkeypatch.setattr(calibration, "BUILD", tmp_path)   # the calibration cache goes to tmp_path/<model key>/
    c = compile_model("zcu19eg", "int16-sym", model=str(path), progress=False, log=lambda *a: None)
    cache = pipeline.calib_cache_path(path).parent   # (calib-eq*.json: the ranges of the equalized graph)
    assert cache.parent == tmp_path and any(p.name.startswith("calib") for p in cache.iterdir())
    img = load_image(data.sample_images()["bus"])
    xq = quantize_image(c, img)
    assert xq.shape == (channels, 32, 32)
    out, _, _, _ = run_golden(c.program, c.qgraph, xq)
    t = c.qgraph.tensors[y]
    got = (out[y] - t.zero_point) * t.deq_scale
    x = to_channels(darknet_resize(img, 32, 32), channels).transpose(2, 0, 1)[None]
    ref = ort_run(b.model([y]), np.ascontiguousarray(x, np.float32))[y][0]
    assert sqnr_db(ref, got) > 40


def test_to_channels():
    from host.preprocess import to_channels

    rgb = np.random.default_rng(0).random((4, 5, 3)).astype(np.float32)
    assert to_channels(rgb, 3) is rgb
    np.testing.assert_allclose(to_channels(rgb, 1)[..., 0], rgb @ [0.299, 0.587, 0.114], rtol=1e-6)
    np.testing.assert_array_equal(to_channels(rgb, 4), rgb[..., [0, 1, 2, 0]])
    with pytest.raises(ValueError):
        to_channels(rgb, 0)


def test_input_range_comes_from_the_calibration_data():
    b = Builder([1, 2, 8, 8], seed=5)
    y = b.conv("x", 4, k=3)
    m = b.model([y])
    g = passes.run_all(load_onnx(m))
    x = (np.random.default_rng(1).standard_normal((1, 2, 8, 8)) * 5).astype(np.float32)
    r = calibrate(g, [x], progress=False)
    assert r["x"] == (float(x.min()), float(x.max()))
    assert calibrate(g, [x], progress=False, input_range=(0.0, 1.0))["x"] == (0.0, 1.0)
    gq = quantize(g, r, QuantConfig.from_mode("int8-asym"), 32)
    assert gq.tensors["x"].scale == pytest.approx((x.max() - x.min()) / 255)   # not the 0..1 pixel grid
    with pytest.raises(QuantError, match=r"calibration input of shape \[1, 3, 8, 8\].*\[1, 2, 8, 8\]"):
        calibrate(g, [np.zeros((1, 3, 8, 8), np.float32)], progress=False)
    gq, prog = conformance.compile_case(m, x)
    got = conformance.run_compiled(gq, prog, x)[y]
    assert sqnr_db(ort_run(m, x)[y], got) > 60


def test_host_tail_runs_after_the_accelerator():
    b = Builder([1, 3, 8, 8], seed=2)
    y = b.conv("x", 6, k=3)
    s = b.op("Sigmoid", [y], [1, 6, 8, 8])
    r = b.op("Reshape", [s, b.const(np.array([1, 6, 64], np.int64))], [1, 6, 64])
    t = b.op("Transpose", [r], [1, 64, 6], perm=[0, 2, 1])
    m = b.model([t])
    x = np.random.default_rng(3).random((1, 3, 8, 8)).astype(np.float32)
    gq, prog = conformance.compile_case(m, x)
    assert [n["op"] for n in gq.metadata["host_tail"]] == ["Sigmoid", "Reshape", "Transpose"]
    got = conformance.run_compiled(gq, prog, x)[t]
    ref = ort_run(m, x)[t]
    assert got.shape == ref.shape and sqnr_db(ref, got) > 60


def test_tail_op_the_host_cannot_run_is_refused_at_load():
    b = Builder([1, 3, 8, 8])
    y = b.conv("x", 4, k=3)
    z = b.op("Sin", [y], [1, 4, 8, 8])
    with pytest.raises(GraphError, match=r"host-side tail:\n  Sin x 1: Sin_\w+\n"):
        load_onnx(b.model([z]))


@pytest.mark.parametrize("ic", [1, 2, 4, 5])
@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_first_layer_with_any_input_channel_count_is_bit_exact(ic, mode):
    """The first layer (folded when KxKxIC packs better into Tn) with 1, 2, 4, 5 input channels on the TINY
    8x8 array with buffers that force tiling: golden simulator == layer-level integer reference."""
    from generator.exec.rtl import TINY
    from helpers import board, compile_small, run_both

    b = Builder([1, ic, 12, 14], seed=ic)
    y = b.maxpool(b.leaky(b.conv("x", 10, k=3, s=1)), k=2, s=2)
    gq, prog, xs = compile_small(b.model([y]), mode, brd=board(**TINY))
    gold, ref, _ = run_both(gq, prog, xs[0])
    np.testing.assert_array_equal(gold[y], ref[y])


def test_host_preprocess_follows_the_input_channels():
    from host.preprocess import darknet_resize, preprocess, quantize_input, to_channels

    img = (np.random.default_rng(0).random((20, 30, 3)) * 255).astype(np.uint8)
    for c in (1, 3, 4):
        q = preprocess(img, 16, 12, 1 / 255, -128, 8, channels=c)
        assert q.shape == (12, 16, c)
        want = quantize_input(to_channels(darknet_resize(img, 16, 12), c), 1 / 255, -128, 8)
        np.testing.assert_array_equal(q, want)


def test_standalone_batchnorm_runs_as_a_diagonal_convolution():
    b = Builder([1, 3, 6, 6], seed=4)
    y = b.bn("x")
    m = b.model([y])
    x = (np.random.default_rng(5).standard_normal((1, 3, 6, 6)) * 3).astype(np.float32)
    gq, prog = conformance.compile_case(m, x)
    assert sqnr_db(ort_run(m, x)[y], conformance.run_compiled(gq, prog, x)[y]) > 60


def test_host_tail_reading_the_graph_input_and_an_fc_output():
    """A residual Add(conv(x), x) tail reads the graph input (the host has it); a Softmax tail after a fully
    connected layer sees the ONNX [1, N] shape, not the accelerator's [1, N, 1, 1]."""
    b = Builder([1, 3, 6, 6], seed=7)
    y = b.conv("x", 3, k=3)
    r = b.op("Add", [y, "x"], [1, 3, 6, 6])
    f = b.op("Flatten", [y], [1, 108], axis=1)
    fc = b.op("Gemm", [f, b.const(np.random.default_rng(1).standard_normal((108, 5)).astype(np.float32) * 0.1)],
              [1, 5])
    sm = b.op("Softmax", [fc], [1, 5], axis=1)
    m = b.model([r, sm])
    x = np.random.default_rng(2).random((1, 3, 6, 6)).astype(np.float32)
    gq, prog = conformance.compile_case(m, x)
    assert "x" not in gq.outputs
    got = conformance.run_compiled(gq, prog, x)
    ref = ort_run(m, x)
    for o in (r, sm):
        assert got[o].shape == ref[o].shape and sqnr_db(ref[o], got[o]) > 50, o


def test_exporters_padding_forms_pass():
    """Convolution padding as TensorFlow / Keras exporters write it (auto_pad SAME_UPPER, asymmetric pads), and
    max-pool padding (-inf: symmetric pads, SAME_LOWER, ceil_mode) run within tolerance of the node tests' expected
    outputs."""
    for name in ("test_conv_with_autopad_same", "test_conv_with_strides_and_asymmetric_padding",
                 "test_maxpool_2d_pads", "test_maxpool_2d_same_lower", "test_maxpool_2d_ceil",
                 "test_maxpool_2d_precomputed_same_upper"):
        r = conformance.run_test(conformance.NODE_DIR / name)
        assert r.status == "pass", f"{name}: {r.detail}"

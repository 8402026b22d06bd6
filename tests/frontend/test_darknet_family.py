"""YOLOv4-tiny-3l-, YOLOv7-tiny- and YOLOv3-tiny-PRN-shaped darknet cfgs (generator/frontend/darknet/family.py,
random weights in darknet's binary format, 64x64): they convert to ONNX, compile for zcu19eg, the golden simulator
equals the independent integer reference bit for bit on the whole DDR image and is within the quantization error of
onnxruntime on the converted model; every [yolo] head reaches the manifest. The partial residuals of YOLOv3-tiny-PRN
([shortcut] between layers of different channel counts) and the attention layers ([sam], [scale_channels] with
[avgpool]) are checked against darknet's rules in numpy."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from generator.exec import run_golden
from generator.ref.int_ref import compare_ddr
from generator.frontend.darknet import darknet_to_onnx
from generator.frontend.darknet.family import BUILDERS
from test_darknet_cfgs import _random_weights

CASES = [("yolov4_tiny_3l", {}, 24, 3), ("yolov4_tiny_3l", {"upsample4": True}, 24, 3),
         ("yolov7_tiny", {}, 63, 3), ("yolov3_tiny_prn", {}, 22, 2)]


def _convert(tmp_path, name, text, seed=3):
    cfg = tmp_path / f"{name}.cfg"
    cfg.write_text(text)
    _random_weights(cfg, tmp_path / f"{name}.weights", seed=seed)
    return darknet_to_onnx(cfg, tmp_path / f"{name}.weights", tmp_path / f"{name}.onnx")


@pytest.mark.parametrize("name,kw,layers,heads", CASES, ids=["v4-tiny-3l", "v4-tiny-3l-up4", "v7-tiny", "v3-tiny-prn"])
def test_family_cfg_compiles_bit_exact_and_close_to_float(tmp_path, name, kw, layers, heads):
    from helpers import compile_small, quantize_input, sqnr_db

    model = _convert(tmp_path, name, BUILDERS[name](64, **kw))
    gq, prog, xs, iref = compile_small(model, "int8-asym", with_ref=True)
    assert len(gq.macro_nodes()) == layers
    assert len(gq.metadata["darknet_yolo"]) == heads == len(gq.outputs)
    xq = quantize_input(gq, xs[0])
    gold, res, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in model.graph.output], sess.run(None, {"input": xs[0]})))
    for o in gq.outputs:
        t = gq.tensors[o]
        s = sqnr_db(want[o][0], (gold[o] - t.zero_point) * t.deq_scale)
        assert s > 20, f"{name} {o}: SQNR {s:.1f} dB against onnxruntime"
    assert res.cycles > 0


def _layer_outputs(model, x):
    """Every ``layer_i`` tensor of the converted model under onnxruntime, by i."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for vi in m.graph.value_info:
        if vi.name.startswith("layer_") and vi.name[6:].isdigit() and vi.name not in have:
            m.graph.output.append(vi)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in m.graph.output]
    return {int(n[6:]): v[0] for n, v in zip(names, sess.run(None, {"input": x})) if n[6:].isdigit()}


@pytest.mark.parametrize("c_prev,c_from,act", [(8, 16, "leaky"), (16, 8, "leaky"), (16, 8, "linear")])
def test_partial_shortcut_follows_darknet(tmp_path, c_prev, c_from, act):
    """[shortcut] with different channel counts: out = act(prev[:m] + from[:m]) on the first m = min(C) channels,
    act(prev) on the rest (darknet's shortcut_cpu); the compiled program matches the integer reference."""
    from helpers import compile_small, quantize_input

    text = ("[net]\nwidth=16\nheight=16\nchannels=3\n"
            f"[convolutional]\nbatch_normalize=1\nfilters={c_from}\nsize=3\nstride=1\npad=1\nactivation=leaky\n"
            f"[convolutional]\nbatch_normalize=1\nfilters={c_prev}\nsize=3\nstride=1\npad=1\nactivation=leaky\n"
            f"[shortcut]\nfrom=-2\nactivation={act}\n"
            "[convolutional]\nfilters=18\nsize=1\nstride=1\npad=1\nactivation=linear\n"
            "[yolo]\nmask=0,1,2\nanchors=10,13, 16,30, 33,23\nclasses=1\nnum=3\n")
    model = _convert(tmp_path, "prn", text)
    x = np.random.default_rng(5).random((1, 3, 16, 16)).astype(np.float32)
    out = _layer_outputs(model, x)
    m = min(c_prev, c_from)
    s = out[1].copy()
    s[:m] += out[0][:m]
    want = np.where(s < 0, np.float32(0.1) * s, s) if act == "leaky" else s
    assert out[2].shape == (c_prev, 16, 16)
    np.testing.assert_allclose(out[2], want, rtol=1e-6, atol=1e-6)
    gq, prog, xs, iref = compile_small(model, "int8-asym", with_ref=True)
    xq = quantize_input(gq, xs[0])
    _, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []


@pytest.mark.parametrize("act", ["linear", "logistic"])
def test_sam_and_scale_channels_follow_darknet(tmp_path, act):
    """[scale_channels] (an SE block: [avgpool], two 1x1 convolutions, the C x 1 x 1 gate times an earlier layer) and
    [sam] (spatial attention: an earlier layer times the previous one, element by element), as darknet's
    forward_scale_channels_layer / forward_sam_layer compute them, checked on onnxruntime's layer outputs; the
    compiled program (COMPUTE emul) matches the integer reference and onnxruntime."""
    from helpers import compile_small, quantize_input, sqnr_db

    text = ("[net]\nwidth=8\nheight=8\nchannels=3\n"
            "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=3\nstride=1\npad=1\nactivation=leaky\n"
            "[avgpool]\n"
            "[convolutional]\nfilters=4\nsize=1\nstride=1\npad=1\nactivation=relu\n"
            "[convolutional]\nfilters=16\nsize=1\nstride=1\npad=1\nactivation=logistic\n"
            f"[scale_channels]\nfrom=-4\nactivation={act}\n"
            "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=3\nstride=1\npad=1\nactivation=leaky\n"
            "[convolutional]\nfilters=16\nsize=1\nstride=1\npad=1\nactivation=logistic\n"
            f"[sam]\nfrom=-2\nactivation={act}\n"
            "[convolutional]\nfilters=18\nsize=1\nstride=1\npad=1\nactivation=linear\n"
            "[yolo]\nmask=0,1,2\nanchors=10,13, 16,30, 33,23\nclasses=1\nnum=3\n")
    model = _convert(tmp_path, "attention", text)
    x = np.random.default_rng(6).random((1, 3, 8, 8)).astype(np.float32)
    out = _layer_outputs(model, x)
    f = (lambda v: 1 / (1 + np.exp(-v))) if act == "logistic" else (lambda v: v)
    np.testing.assert_allclose(out[1], out[0].mean(axis=(1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[4], f(out[0] * out[3]), rtol=1e-5, atol=1e-6)    # one factor per channel
    np.testing.assert_allclose(out[7], f(out[5] * out[6]), rtol=1e-5, atol=1e-6)    # element by element
    gq, prog, xs, iref = compile_small(model, "int8-asym", with_ref=True)
    assert sum(n.attrs["macro"].kind == "emul" for n in gq.macro_nodes()) == 2
    xq = quantize_input(gq, xs[0])
    gold, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    o = gq.outputs[0]
    t = gq.tensors[o]
    s = sqnr_db(sess.run(None, {"input": xs[0]})[0][0], (gold[o] - t.zero_point) * t.deq_scale)
    assert s > 20, f"SQNR {s:.1f} dB against onnxruntime"

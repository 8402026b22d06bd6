"""Whole darknet networks nobody here wrote: the cfg files Debian's ``darknet`` package ships
(``/usr/share/darknet/cfg``, installed by setup.sh), with random weights in darknet's binary format, at a reduced
input size. YOLOv3-tiny (max-pool size=2 stride=1, two heads) and YOLOv3-SPP (Darknet-53: 23 ``[shortcut]``
residuals, stride-2 convolutions, the SPP pools 5/9/13, three heads, two upsamples) convert to ONNX, compile for
zcu19eg, and the golden simulator equals the integer reference bit for bit and is within the quantization error of
onnxruntime on the converted model; every ``[yolo]`` head reaches the manifest's YOLO parameters."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from generator.frontend.darknet import darknet_to_onnx
from generator.frontend.darknet.cfg import parse_cfg
from generator.frontend.darknet.layers import build_layers
from helpers import tiered
from test_darknet_small import _write_weights

CFG_DIR = Path("/usr/share/darknet/cfg")


def _random_weights(cfg: Path, path: Path, seed: int) -> None:
    """Darknet weights for every [convolutional] of ``cfg``: He-scaled weights, small biases, BN statistics."""
    net, layers = build_layers(parse_cfg(cfg), cfg.name)
    rng = np.random.default_rng(seed)
    params = {}
    for l in layers:
        if l.kind != "convolutional":
            continue
        f, k, c = l.params["filters"], l.params["size"], l.params["c_in"]
        p = {"bias": rng.normal(0, 0.1, f)}
        if l.params["bn"]:
            p.update(scale=rng.uniform(0.5, 1.5, f), mean=rng.normal(0, 0.1, f), var=rng.uniform(0.5, 2.0, f))
        p["weight"] = rng.normal(0, 1 / np.sqrt(c * k * k), (f, c, k, k))
        params[l.index] = {key: v.astype(np.float32) for key, v in p.items()}
    _write_weights(path, params)


@pytest.mark.parametrize("name,size,layers,heads", tiered([("yolov3-tiny", 96, 13, 2), ("yolov3-spp", 64, 104, 3)],
                                                           [("yolov3-tiny", 96, 13, 2)]))
def test_shipped_darknet_cfg_compiles_bit_exact_and_close_to_float(tmp_path, name, size, layers, heads):
    from helpers import compile_small, run_both, sqnr_db

    src = CFG_DIR / f"{name}.cfg"
    if not src.exists():
        pytest.fail(f"{src} missing: setup.sh installs Debian's darknet package")
    text = re.sub(r"(?m)^height=\d+", f"height={size}", re.sub(r"(?m)^width=\d+", f"width={size}", src.read_text()))
    cfg = tmp_path / src.name
    cfg.write_text(text)
    _random_weights(cfg, tmp_path / f"{name}.weights", seed=len(name))
    model = darknet_to_onnx(cfg, tmp_path / f"{name}.weights", tmp_path / f"{name}.onnx")
    gq, prog, xs = compile_small(model, "int8-asym")
    assert len(gq.macro_nodes()) == layers
    assert len(gq.metadata["darknet_yolo"]) == heads == len(gq.outputs)
    gold, ref, res = run_both(gq, prog, xs[0])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in model.graph.output], sess.run(None, {model.graph.input[0].name: xs[0]})))
    for o in gq.outputs:
        assert np.array_equal(gold[o], ref[o]), f"{name} {o}: golden simulator differs from the integer reference"
        t = gq.tensors[o]
        s = sqnr_db(want[o][0], (ref[o] - t.zero_point) * t.deq_scale)
        assert s > 25, f"{name} {o}: SQNR {s:.1f} dB against onnxruntime"
    assert res.cycles > 0

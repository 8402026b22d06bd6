"""Shared test helpers: compile a small ONNX model for a (possibly tiny) board and run it."""
from __future__ import annotations

import numpy as np

from generator import codegen

from generator.ir import passes

from generator.exec import run_graph

from generator.exec import run_golden
from generator.exec.rtl import board_config
from generator.spec.board import Board
from generator.frontend.onnx_loader import load_onnx
from generator.spec.timing import HwConfig
from generator.exec.int_ref import IndependentRef
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.quant.ranges import channel_ranges, collect_histograms


def board(name="zcu19eg", **acc) -> Board:
    """A board from boards/NAME.yaml with accelerator fields overridden (e.g. the tiny buffers of
    :data:`generator.exec.rtl.TINY`, which force tiling)."""
    return board_config(name, **acc)


def compile_small(model, mode="int8-asym", per_channel=True, brd=None, seed=0, n_calib=4, with_ref=False, **kw):
    """Passes, calibration on random inputs, quantization and program for ``model`` (``kw``: to
    :func:`generator.codegen.compile_program`, e.g. the traffic ``tolerance``).
    Returns (quantized graph, program, calibration inputs); with ``with_ref`` also the independent integer
    reference (:class:`generator.exec.int_ref.IndependentRef`) built from the float graph and the same ranges."""
    brd = brd or board()
    cfg = QuantConfig.from_mode(mode, per_channel)
    hw = HwConfig.from_board(brd, cfg.bits)
    g = passes.run_all(load_onnx(model))
    shp = g.tensors[g.inputs[0]].shape
    rng = np.random.default_rng(seed)
    xs = [rng.random(shp).astype(np.float32) for _ in range(n_calib)]
    ranges = calibrate(g, xs, progress=False)
    chans = channel_ranges(collect_histograms(g, xs, ranges))   # the graph outputs' per-channel ranges
    gq = quantize(g, ranges, cfg, hw.acc_bits, channel_ranges=chans)
    prog = codegen.compile_program(gq, hw, **kw)
    if with_ref:
        return gq, prog, xs, IndependentRef(g, ranges, cfg.bits, cfg.symmetric, cfg.per_channel, channel_ranges=chans)
    return gq, prog, xs


def quantize_input(gq, x):
    t = gq.tensors[gq.inputs[0]]
    q = QuantConfig(bits=int(t.dtype[3:]))
    # float64, round half up: as the host (host.preprocess.quantize_input)
    return np.clip(np.floor(np.asarray(x[0], np.float64) / t.scale + 0.5) + t.zero_point, q.qmin, q.qmax).astype(np.int64)


def run_both(gq, prog, x):
    """(golden simulator outputs, layer-level reference outputs, SimResult) for float input x [1, C, H, W]."""
    xq = quantize_input(gq, x)
    gold, res, _, _ = run_golden(prog, gq, xq)
    ref = run_graph("ref", gq, xq)
    return gold, {k: v[0] for k, v in ref.items() if k != "regions"}, res


def sqnr_db(ref, got):
    ref, got = np.asarray(ref, np.float64).ravel(), np.asarray(got, np.float64).ravel()
    return 10 * np.log10(np.sum(ref ** 2) / max(np.sum((ref - got) ** 2), 1e-30))


INVOKE = str(__import__("pathlib").Path(__import__("sys").executable).parent / "invoke")


def invoke(*args, timeout=300):
    """``invoke ARGS`` in a subprocess from the repository root; stdout and stderr captured as text."""
    import subprocess

    from generator import ROOT_DIR

    return subprocess.run([INVOKE, *args], cwd=ROOT_DIR, capture_output=True, text=True, timeout=timeout)


def one_line_error(r, *needles):
    """The error contract on a finished ``invoke`` run: exit 2, stderr exactly one line starting with 'error:'
    that contains every needle, no traceback."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])


def small_yolo(path, seed: int):
    """A 32x32 two-convolution ONNX model with one YOLO head (3 anchors, 1 class "thing") in its metadata, written
    to ``path``: compiles and detects in about a second. ``seed`` makes the weights, hence the file and its
    calibration cache folder, unique. Returns ``path``."""
    import json

    import onnx

    from generator.frontend.modelgen import Builder

    b = Builder([1, 3, 32, 32], seed=seed)
    y = b.conv(b.leaky(b.conv("x", 8, k=3)), 18, k=1)
    m = b.model([y])
    onnx.helper.set_model_props(m, {"darknet_yolo": json.dumps([{
        "output": y, "anchors": [[10, 14], [23, 27], [37, 58]], "mask": [0, 1, 2], "classes": 1, "scale_x_y": 1.0}]),
        "class_names": json.dumps(["thing"])})
    path.write_bytes(m.SerializeToString())
    return path

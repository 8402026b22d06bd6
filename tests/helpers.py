"""Shared test helpers: compile a small ONNX model for a (possibly tiny) board and run it; the compiled artifacts
several test modules share, made once per pytest process (:func:`shared_executor`, :func:`compiled_model`: one per
pytest-xdist worker, each worker building into its own folders, :func:`generator.build_dir`)."""
from __future__ import annotations

import functools
import hashlib

import numpy as np
import pytest

from generator import codegen

from generator.ir import passes

from generator.exec import run_graph

from generator.exec import run_golden
from generator.exec.rtl import board_config
from generator.spec.board import Board
from generator.frontend.onnx_loader import load_onnx
from generator.spec.hw import HwConfig
from generator.ref.int_ref import IndependentRef
from generator.quant.precision import layer_bits, parse_precision, region_bits
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.quant.ranges import channel_ranges, collect_histograms


def tiered(values, default) -> list:
    """Parameters ``values`` for ``pytest.mark.parametrize``, those not in ``default`` marked slow (``invoke test
    --slow``): the default tier keeps ``default``, the slow tier runs every value."""
    return [v if v in default else pytest.param(*(v if isinstance(v, tuple) else (v,)), marks=pytest.mark.slow)
            for v in values]


def board(name="zcu19eg", **acc) -> Board:
    """A board from boards/NAME.yaml with accelerator fields overridden (e.g. the tiny buffers of
    :data:`generator.exec.rtl.TINY`, which force tiling)."""
    return board_config(name, **acc)


def mixed_region_bits(g, base_bits: int, precision: str | None):
    """{region: bits} for a ``--precision`` spec on the fused graph ``g`` (None: None, uniform); ``"alternate"``:
    every other layer's output (the first, the third, ...) in the other precision than ``base_bits``."""
    if precision is None:
        return None
    if precision == "alternate":
        other = 24 - base_bits
        precision = ",".join(f"{n.name}=int{other}" for n in list(g.macro_nodes())[::2])
    return region_bits(g, layer_bits(g, parse_precision(precision), base_bits), base_bits)


def compile_small(model, mode="int8-asym", per_channel=True, brd=None, seed=0, n_calib=4, with_ref=False,
                  precision=None, **kw):
    """Passes, calibration on random inputs, quantization and program for ``model`` (``kw``: to
    :func:`generator.codegen.compile_program`, e.g. the traffic ``tolerance``; ``precision``: a per-layer precision
    spec or ``"alternate"``, :func:`mixed_region_bits`).
    Returns (quantized graph, program, calibration inputs); with ``with_ref`` also the independent integer
    reference (:class:`generator.ref.int_ref.IndependentRef`) built from the float graph and the same ranges."""
    brd = brd or board()
    cfg = QuantConfig.from_mode(mode, per_channel)
    hw = HwConfig.from_board(brd, cfg.bits)
    g = passes.run_all(load_onnx(model))
    shp = g.tensors[g.inputs[0]].shape
    rng = np.random.default_rng(seed)
    xs = [rng.random(shp).astype(np.float32) for _ in range(n_calib)]
    ranges = calibrate(g, xs, progress=False)
    chans = channel_ranges(collect_histograms(g, xs, ranges))   # the graph outputs' per-channel ranges
    rb = mixed_region_bits(g, cfg.bits, precision)
    acc = {8: hw.at(8).acc_bits, 16: hw.at(16).acc_bits}
    gq = quantize(g, ranges, cfg, acc, channel_ranges=chans, region_bits=rb)
    prog = codegen.compile_program(gq, hw, **kw)
    if with_ref:
        return gq, prog, xs, IndependentRef(g, ranges, cfg.bits, cfg.symmetric, cfg.per_channel, channel_ranges=chans,
                                            region_bits=rb)
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


_EXECUTORS: dict = {}


def shared_executor(name: str, brd: Board, tag: str | None = None):
    """The ``csim`` or ``rtl`` program executor (:func:`generator.exec.program_executor`'s) for the hardware
    configuration ``brd``, made once per pytest process (each xdist worker has its own) and configuration: the
    test modules that run programs on one configuration share its one g++ or Verilator build (made on the first
    run). The RTL builds into build/rtl_sim/``tag``, the C-simulation into build/csim/tests-``tag`` (both per xdist
    worker, :func:`generator.build_dir`); ``tag`` (default ``tiny`` for the TINY board, else ``cfg-<8 hex digits
    of the configuration>``) names the folder only, the configuration is the key. Raises ExecutorError for another
    executor name."""
    from generator import build_dir
    from generator.exec import CsimExecutor, ExecutorError, RtlExecutor
    from generator.exec.rtl import TINY

    if name not in ("csim", "rtl"):
        raise ExecutorError(f"shared_executor: {name!r} is not a built executor (csim or rtl)")
    key = hashlib.sha256(brd.model_dump_json().encode()).hexdigest()[:8]
    if (name, key) not in _EXECUTORS:
        folder = tag or ("tiny" if brd == board(**TINY) else f"cfg-{key}")
        _EXECUTORS[name, key] = (RtlExecutor(brd, folder) if name == "rtl" else
                                 CsimExecutor(brd, build_dir("csim", f"tests-{folder}")))
    return _EXECUTORS[name, key]


@functools.lru_cache(maxsize=None)
def compiled_model(board_name: str = "zcu19eg", quant: str = "int8-asym", model: str | None = None):
    """:func:`generator.flows.pipeline.compile_model` of ``model`` (default: the official YOLOv4-tiny) for
    ``board_name`` in ``quant`` (per-channel weights, bias correction, without progress output), compiled once per
    pytest process and shared by every test that asks for the same arguments: read it, never change it."""
    from generator.flows.pipeline import compile_model

    return compile_model(board_name, quant, model=model, progress=False)

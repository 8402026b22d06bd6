"""The ``invoke`` tasks' options and error contract (tasks.py): option values checked and parsed, each bad one
exiting 2 with one ``error: ...`` line naming the option (:func:`die`); the compile request built from a task's
options (:func:`request`); a flow run with its FlowError as that line (:func:`run_flow`). Imports nothing heavy at
module level, so ``invoke --list`` stays fast."""
from __future__ import annotations

import sys
from pathlib import Path

QUANTS = "int8-asym|int8-sym|int16-sym|int16-asym"     # help text; the modes are generator.quant.quantize.MODES
MODEL_HELP = {"model": "ONNX model, or doclaynet (the DocLayNet YOLOv8n setup.sh fetches); default: the official "
                       "YOLOv4-tiny",
              "cfg": "darknet cfg to compile from (with --weights; converted to ONNX under --out)",
              "weights": "darknet weights matching --cfg",
              "names": "class-names file, one per line (default: the model's, or names= of the cfg's [net])",
              "yolo_cfg": "darknet cfg whose [yolo] sections give anchors/mask/scale_x_y/classes (for an ONNX model "
                          "without YOLO metadata)",
              "calib": "folder of calibration images (default: the shipped set; bus and zidane held out)",
              "precision": "per-layer precision: auto[:dB] (int16 where int8 costs too much: lowest layer SQNR "
                           "target, default 25 dB), int8, int16, LAYER-GLOB=int8|int16; comma-separated",
              "input_size": "the model input's height x width for a model whose input size is symbolic (dynamic "
                             "axes): HxW (e.g. 640x640) or one integer for a square input"}

#: the ``--pre`` option of the tasks that compile for a board
PRE_HELP = {"pre": "PRE in the accelerator: the program takes camera frames (uint8 RGB/BGR, any size up to 4096x4096) "
                   "and resizes, converts and quantizes them on the PL; WxH: the frame size its cycles are priced "
                   "for (e.g. 1920x1080); default: the host pre-processes"}


def die(msg: str):
    """Print ``error: msg`` on stderr and exit 2 (the tasks' error contract)."""
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def int_option(name: str, value, min: int | None = None, default: int | None = None) -> int | None:
    """The integer option ``name`` (e.g. ``"--limit"``) given as ``value`` (invoke passes the command line's str;
    None: the option was not given, giving ``default``). Exits 2 with one line naming the option
    (``error: --limit abc: not an integer``, ``error: --limit -3: must be >= 0``)."""
    if value is None:
        return default
    try:
        v = int(str(value).strip())
    except ValueError:
        die(f"{name} {value}: not an integer")
    if min is not None and v < min:
        die(f"{name} {value}: must be >= {min}")
    return v


def choice(name: str, value: str, choices) -> str:
    """``value`` if it is one of ``choices``, else exit 2 naming the option ``name`` and the choices."""
    if value not in choices:
        die(f"{name} {value}: choose one of {', '.join(choices)}")
    return value


def quants(value: str, several: bool = False):
    """The quantization mode of ``--quant`` (``several``: the list of its comma-separated modes), each one of
    :data:`generator.quant.quantize.MODES`; exit 2 naming ``--quant`` otherwise."""
    from generator.quant.quantize import MODES

    modes = [q.strip() for q in str(value).split(",") if q.strip()] if several else [value]
    if not modes:
        die(f"--quant {value!r}: no quantization mode given; choose from {', '.join(MODES)}")
    for q in modes:
        if q not in MODES:
            die(f"--quant {q}: unknown quantization mode; choose one of {', '.join(MODES)}")
    return modes if several else modes[0]


def precision_option(value) -> str | None:
    """``--precision`` checked (:func:`generator.flows.request.parse_precision`); exits 2 naming the bad item."""
    from generator.flows.request import parse_precision

    return run_flow(parse_precision, value)


def pre_option(value) -> tuple | None:
    """``--pre WxH`` as (frame_w, frame_h) or None (:func:`generator.flows.request.parse_pre`); exits 2 naming it."""
    from generator.flows.request import parse_pre

    return run_flow(parse_pre, value)


def input_size_option(value) -> tuple | None:
    """``--input-size`` as (H, W) or None (:func:`generator.flows.request.parse_input_size`); exits 2 naming it."""
    from generator.flows.request import parse_input_size

    return run_flow(parse_input_size, value)


def request(board, quant, per_tensor, precision, model=None, cfg=None, weights=None, names=None, yolo_cfg=None,
             calib=None, input_size=None, pre=None) -> tuple:
    """The compile request of a task's options, checked: (:class:`generator.flows.request.Target`,
    :class:`generator.flows.request.ModelSource`); exits 2 naming a bad option."""
    from generator.flows.request import ModelSource, Target

    return (Target(board, quants(quant), not per_tensor, precision_option(precision), pre_option(pre)),
            ModelSource(model, cfg, weights, names, yolo_cfg, calib, input_size_option(input_size)))


def run_flow(fn, *args, **kw):
    """``fn(*args, **kw)``; a FlowError (bad input, failed check) exits 2 with its one line."""
    from generator.flows.inputs import FlowError

    try:
        return fn(*args, **kw)
    except FlowError as e:
        die(str(e))


def write_output(path, text: str) -> None:
    """Write a task's own output file atomically (:func:`host.fileio.atomic_write`, its folder created); an
    ``OSError`` exits 2 with one line naming the path."""
    from generator.flows.inputs import os_error_message
    from host.fileio import atomic_write

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    except OSError as e:
        die(os_error_message(e))


def print_detections(dets):
    """Print one line per detection (label, score, box in pixels)."""
    for d in dets:
        print(f"  {d['label']:<14} {d['score']:.2f}  box {[round(v) for v in d['box']]}")



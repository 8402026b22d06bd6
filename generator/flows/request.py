"""One compile request: what to compile (:class:`ModelSource`) for what (:class:`Target`), built once from a task's
options (``tasks.py``) and handed whole to the flows, which pass it on to :func:`compile_request`. The defaults
live here and nowhere else (after FINN's ``DataflowBuildConfig`` and TVM-VTA's ``Environment``: one object every
step reads).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from generator import build_dir
from generator.flows.inputs import FlowError, model_file, os_error_message, resolve_model

from generator.quant.quantize import DEFAULT_QUANT
from generator.spec.board import DEFAULT_BOARD


@dataclass(frozen=True)
class Target:
    """What the program is compiled for: ``board`` (a name of ``boards/*.yaml``, a board file's path, or a loaded
    :class:`~generator.spec.board.Board`), ``quant`` (a mode of :data:`generator.quant.quantize.MODES`),
    ``per_channel`` weight scales, ``precision`` (the per-layer spec of :mod:`generator.quant.precision`; None:
    every layer in the mode's precision), ``pre`` (None: the host writes the network input; (frame_w, frame_h):
    the accelerator's PRE instruction does, from camera frames, its cycles priced for frames of that size,
    :mod:`generator.codegen.pre`)."""
    board: object = DEFAULT_BOARD
    quant: str = DEFAULT_QUANT
    per_channel: bool = True
    precision: str | None = None
    pre: tuple | None = None

    def checked(self) -> tuple:
        """(the loaded Board, the QuantConfig), validated before any work; the precision spec parsed too.
        Raises FlowError (unknown board or bad board file, unknown mode, bad precision item)."""
        from generator.flows.inputs import names_checked

        out = names_checked(self.board, self.quant, self.per_channel)
        self.folder_suffix(None)
        return out

    def with_quant(self, quant: str) -> "Target":
        """The same target in another quantization mode (uniform precision)."""
        return replace(self, quant=quant, precision=None)

    def uniform(self) -> "Target":
        """The same target without its per-layer precision (every layer in the mode's precision)."""
        return replace(self, precision=None)

    def folder_suffix(self, input_size) -> str:
        """``-<H>x<W>`` for a compile at an input size, ``-auto<dB>`` / ``-mixed-<8 hex digits of the spec>`` for a
        per-layer precision, so two sizes or precisions of one model never share a folder. Raises FlowError for a
        bad precision spec."""
        from generator.quant.precision import parse_precision
        from generator.quant.quantize import QuantError

        try:
            spec = parse_precision(self.precision).text
        except QuantError as e:
            raise FlowError(str(e)) from None
        size = f"-{input_size[0]}x{input_size[1]}" if input_size else ""
        if self.pre:
            size += f"-pre{self.pre[0]}x{self.pre[1]}"
        if not spec:
            return size
        return size + ("-" + spec.replace(":", "") if spec.startswith("auto") and "," not in spec else
                       "-mixed-" + hashlib.sha256(spec.encode()).hexdigest()[:8])


@dataclass(frozen=True)
class ModelSource:
    """What is compiled: ``model`` (an ONNX path, a shipped model name such as ``doclaynet``, or None: the official
    YOLOv4-tiny) or darknet ``cfg`` + ``weights``; ``names`` (a class-names file or list), ``yolo_cfg`` (a darknet
    cfg giving the YOLO head parameters), ``calib`` (a folder of calibration images; None: the shipped set),
    ``input_size`` ((H, W) in pixels for an export with a symbolic input size)."""
    model: str | None = None
    cfg: str | None = None
    weights: str | None = None
    names: object = None
    yolo_cfg: str | None = None
    calib: str | None = None
    input_size: tuple | None = None

    def resolved(self, onnx_dir=None) -> "ModelSource":
        """The source with ``model`` the ONNX file to compile: a shipped name replaced by its file, darknet files
        converted (into ``onnx_dir``, default build/darknet/...; :func:`generator.flows.inputs.resolve_model`).
        ``calib`` "documents" becomes the drawn document pages' folder (:func:`generator.flows.doc_calibration.
        named_calib`). Raises FlowError."""
        from generator.flows.doc_calibration import named_calib

        return replace(self, model=resolve_model(self.model, self.cfg, self.weights, self.names, onnx_dir),
                       cfg=None, weights=None, calib=named_calib(self.calib))

    def model_file(self) -> Path | None:
        """The ONNX file of a resolved source (:func:`generator.flows.inputs.model_file`), None when no file."""
        return model_file(self.model)


def planned_artifact_dir(target: Target, source: ModelSource, out) -> Path | None:
    """The folder :func:`artifact_dir` will give after the compile, computed before it: ``out``, else
    build/<board>/<model key>/<quant><suffix>/ (:meth:`Target.folder_suffix`); None when the resolved source names
    no file. Raises FlowError (bad board, mode or precision)."""
    from generator.flows.pipeline import model_key

    if out:
        return Path(out)
    b, q = target.checked()
    m = source.model_file()
    return None if m is None else build_dir(b.name, model_key(m)) / (q.name + target.folder_suffix(source.input_size))


def artifact_dir(c, out, target: Target, source: ModelSource) -> Path:
    """``out``, else build/<board>/<model key>/<quant><suffix>/ of the compiled model ``c`` (model key: file stem
    + hash of its content; :meth:`Target.folder_suffix`)."""
    from generator.flows.pipeline import model_key

    if out:
        return Path(out)
    return build_dir(c.board.name, model_key(c.model_path)) / (c.quant.name + target.folder_suffix(source.input_size))


def compile_request(target: Target, source: ModelSource, progress: bool = True, require_detection: bool = False):
    """:func:`generator.flows.pipeline.compile_model` of a resolved ``source`` for ``target``, raising FlowError
    with its message on bad input; ``require_detection`` checks the YOLO head parameters and class names (from
    the model, ``names``, ``yolo_cfg``) before calibration, hence before any simulation. An OSError (a cache path
    in the way or not writable, a full disk) becomes FlowError with :func:`os_error_message`'s line."""
    from generator.codegen.program import ScheduleError
    from generator.flows.inputs import need_files
    from generator.flows.pipeline import compile_model
    from generator.frontend.darknet import DarknetError
    from generator.ir.graph import GraphError
    from generator.quant.quantize import QuantError
    from generator.spec.board import BoardError
    from host.preprocess import ImageError

    if source.cfg or source.weights:
        source = source.resolved()
    need_files(names=source.names, yolo_cfg=source.yolo_cfg)
    try:
        return compile_model(target.board, target.quant, per_channel=target.per_channel, model=source.model,
                             progress=progress, names=source.names, yolo_cfg=source.yolo_cfg,
                             require_detection=require_detection, calib=source.calib,
                             input_size=source.input_size, precision=target.precision, pre=target.pre)
    except (BoardError, GraphError, QuantError, ScheduleError, DarknetError, FileNotFoundError, ImageError) as e:
        raise FlowError(str(e)) from None
    except OSError as e:   # a cache or output path in the way, not writable, a full disk: one line naming it
        raise FlowError(os_error_message(e)) from None


def parse_precision(value) -> str | None:
    """``--precision`` checked (:func:`generator.quant.precision.parse_precision`): the spec, or None when not
    given. Raises FlowError naming the bad item."""
    if value is None:
        return None
    from generator.quant.precision import parse_precision as parse
    from generator.quant.quantize import QuantError

    try:
        parse(str(value))
    except QuantError as e:
        raise FlowError(str(e)) from None
    return str(value)


def parse_pre(value) -> tuple | None:
    """``--pre`` as the nominal camera frame (frame_w, frame_h): None when not given, else from ``WxH`` (e.g.
    ``1920x1080``; width first, as cameras name their modes), 1..4096 each. Raises FlowError naming the option."""
    if value is None or value is False:
        return None
    parts = str(value).lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise FlowError(f"--pre {value}: expected the camera frame's WxH (e.g. 1920x1080)")
    w, h = (int(p) for p in parts)
    if not (1 <= w <= 4096 and 1 <= h <= 4096):
        raise FlowError(f"--pre {value}: PRE takes frames of 1x1 to 4096x4096 pixels")
    return w, h


def parse_input_size(value) -> tuple | None:
    """``--input-size`` as (H, W): None when not given, else from ``HxW`` (e.g. ``640x640``, ``384x640``) or one
    integer N (N x N); H, W >= 1. Raises FlowError naming the option otherwise."""
    if value is None:
        return None
    parts = str(value).lower().replace("*", "x").split("x")
    if len(parts) not in (1, 2) or not all(p.strip().isdigit() for p in parts):
        raise FlowError(f"--input-size {value}: expected HxW (e.g. 640x640) or one integer for a square input")
    hw = [int(p) for p in parts]
    if min(hw) < 1:
        raise FlowError(f"--input-size {value}: height and width must be >= 1")
    return hw[0], hw[-1]

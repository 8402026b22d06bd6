"""What every flow resolves first: the output folder, the image, the model (ONNX or darknet files) and the compiled
program. Each raises :class:`FlowError` with one line for the user; the tasks (``tasks.py``) print it as
``error: ...`` and exit 2."""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from generator import ROOT_DIR

#: the darknet -> ONNX conversions made without an output folder: build/darknet/<cfg stem>-<hash>/
DARKNET_DIR = ROOT_DIR / "build" / "darknet"


class FlowError(Exception):
    """A flow cannot go on: bad input (file, folder, board, model) or a failed check; the message is one line."""


def out_folder(out) -> Path:
    """Create the output folder ``out`` (with its parents) and check that it is writable by creating and deleting a
    probe file in it (permission bits alone say nothing when running as root). Raises FlowError naming ``out`` when
    it is an existing file, lies under a file, or cannot be created or written. Called before any other work."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise FlowError(f"output folder {out}: exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise FlowError(f"output folder {out}: not writable ({e.strerror or e})") from None
    return p


def real_image(image: str):
    """``image`` as an HxWx3 uint8 RGB array: a file path, or the name of a shipped real image (bus, zidane, dog,
    ...). Raises FlowError with the loader's message when it is not an image."""
    from generator.eval import data
    from host.preprocess import ImageError, load_image

    if not Path(image).exists():
        shipped = data.all_real_images()
        if image in shipped:
            image = str(shipped[image])
    try:
        return load_image(image)
    except ImageError as e:
        raise FlowError(str(e)) from None


def _need_files(**files) -> None:
    """Raise FlowError for the first option (``--name`` from the keyword) whose file is given and missing."""
    for opt, f in files.items():
        if f is not None and not Path(f).is_file():
            raise FlowError(f"--{opt.replace('_', '-')} {f}: no such file")


def resolve_model(model, cfg, weights, names, onnx_dir) -> str | None:
    """The ONNX model to compile: ``model``, or the darknet ``cfg`` + ``weights`` converted to ONNX (class names:
    ``names``, else the cfg's names=) as ``onnx_dir``/<cfg stem>.onnx, or, without ``onnx_dir``,
    build/darknet/<cfg stem>-<hash of the cfg, weights and names>/<cfg stem>.onnx. Raises FlowError with the
    converter's message on bad darknet files."""
    if not (cfg or weights):
        return model
    if model:
        raise FlowError("give either --model or --cfg/--weights, not both")
    if not (cfg and weights):
        raise FlowError("--cfg and --weights go together")
    from generator.flows.pipeline import file_sha256
    from generator.frontend.darknet import DarknetError, darknet_to_onnx

    _need_files(cfg=cfg, weights=weights, names=names)
    if onnx_dir is None:
        h = hashlib.sha256("".join(file_sha256(f) for f in (cfg, weights, names) if f).encode()).hexdigest()[:8]
        onnx_dir = DARKNET_DIR / f"{Path(cfg).stem}-{h}"
    dest = out_folder(onnx_dir) / f"{Path(cfg).stem}.onnx"
    try:
        darknet_to_onnx(cfg, weights, dest, names=names)
    except DarknetError as e:
        raise FlowError(str(e)) from None
    return str(dest)


def compile_checked(board, quant, per_channel, model, progress=True, names=None, yolo_cfg=None,
                    require_detection=False, calib=None):
    """:func:`generator.flows.pipeline.compile_model`, raising FlowError with its message on bad input;
    ``require_detection`` checks the YOLO head parameters and class names (from the model, ``names``,
    ``yolo_cfg``) before calibration, hence before any simulation."""
    from generator.codegen.program import ScheduleError
    from generator.flows.pipeline import compile_model
    from generator.frontend.darknet import DarknetError
    from generator.ir.graph import GraphError
    from generator.quant.quantize import QuantError
    from generator.spec.board import BoardError
    from host.preprocess import ImageError

    _need_files(names=names, yolo_cfg=yolo_cfg)
    try:
        return compile_model(board, quant, per_channel=per_channel, model=model, progress=progress, names=names,
                             yolo_cfg=yolo_cfg, require_detection=require_detection, calib=calib)
    except (BoardError, GraphError, QuantError, ScheduleError, DarknetError, FileNotFoundError, ImageError) as e:
        raise FlowError(str(e)) from None


def artifact_dir(c, out) -> Path:
    """``out``, else build/<board>/<model key>/<quant>/ (model key: file stem + hash of its content)."""
    from generator.flows.pipeline import model_key

    if out:
        return Path(out)
    return ROOT_DIR / "build" / c.board.name / model_key(c.model_path) / c.quant.name

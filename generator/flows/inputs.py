"""What every flow resolves first: the output folder, the image, the model (ONNX or darknet files) and the compiled
program. Each raises :class:`FlowError` with one line for the user; the tasks (``tasks.py``) print it as
``error: ...`` and exit 2."""
from __future__ import annotations

import functools
import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from generator import build_dir

#: the darknet -> ONNX conversions made without an output folder: build/darknet/<cfg stem>-<hash>/
DARKNET_DIR = build_dir("darknet", shared=True)


class FlowError(Exception):
    """A flow cannot go on: bad input (file, folder, board, model) or a failed check; the message is one line."""


def os_error_message(e: OSError) -> str:
    """One line for an ``OSError`` (FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError, a full
    disk, :class:`host.fileio.LockedError`, ...): ``<path>: <reason>`` when the error names a path, else its text."""
    if e.filename is not None and e.strerror:
        msg = f"{e.filename}: {e.strerror}" + (f" (renaming to {e.filename2})" if e.filename2 is not None else "")
    else:
        msg = str(e) or type(e).__name__
    return " ".join(msg.split())


def flow_errors(fn):
    """Decorator of a flow function: an ``OSError`` escaping it (an output path in the way, a folder not writable,
    a full disk, a lock held by another run) becomes a :class:`FlowError` with :func:`os_error_message`'s one
    line, so the task prints ``error: <path>: <reason>`` and exits 2 instead of a traceback."""
    @functools.wraps(fn)
    def run(*args, **kw):
        try:
            return fn(*args, **kw)
        except OSError as e:
            raise FlowError(os_error_message(e)) from None
    return run


def _probe_writable(folder: Path, target: Path) -> None:
    """Create and delete a probe file in the existing ``folder`` (permission bits alone say nothing as root)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise FlowError(f"{target}: folder {folder} is not writable ({e.strerror or e})") from None


def check_target(path, kind: str = "file", what: str = "output") -> Path:
    """Check, creating nothing, that ``path`` can be written as a file (``kind`` "file": absent, or a file or a
    symbolic link that an atomic write replaces) or as a folder (``kind`` "folder": absent, or a folder): no folder
    where a file goes, no file where a folder goes, no file among its parents, its nearest existing folder
    writable. ``what`` names the output in the message (e.g. "the detections").

    Returns:
        ``path`` as a pathlib.Path.
    Raises:
        FlowError: one line naming ``path`` and what is in the way.
        ValueError: ``kind`` is neither "file" nor "folder".
    """
    if kind not in ("file", "folder"):
        raise ValueError(f"check_target kind {kind!r}: file or folder")
    p = Path(path)
    if kind == "file" and p.is_dir():
        raise FlowError(f"{p}: is a folder, where {what} (a file) goes")
    if kind == "folder" and (p.exists() or p.is_symlink()) and not p.is_dir():
        raise FlowError(f"{p}: exists and is not a folder, where {what} (a folder) goes")
    a = p if kind == "folder" and p.is_dir() else p.parent
    while not a.is_dir():
        if a.exists() or a.is_symlink():
            raise FlowError(f"{p}: {a} is a file, not a folder ({what} cannot go under it)")
        if a == a.parent:
            break
        a = a.parent
    _probe_writable(a, p)
    return p


#: the files :func:`generator.flows.artifacts.write_artifacts` writes into an artifact folder
ARTIFACT_FILES = ("program.bin", "weights.bin", "manifest.json", "schedule.txt", "schedule.png", "program.asm",
                  "tail_consts.npz")


def check_artifact_target(folder, what: str = "the program artifacts") -> Path:
    """:func:`check_target` of an artifact folder and of every file of :data:`ARTIFACT_FILES` in it (a folder
    with other content is fine: only these files are replaced). Returns ``folder`` as a Path; raises FlowError."""
    d = check_target(folder, "folder", what)
    for f in ARTIFACT_FILES:
        check_target(d / f, "file", f"{what}' {f}")
    return d


def names_checked(board, quant, per_channel) -> tuple:
    """(the loaded :class:`~generator.spec.board.Board`, the :class:`~generator.quant.quantize.QuantConfig`) of the
    options, validated before any work. Raises FlowError (unknown board or bad board file, unknown mode)."""
    from generator.quant.quantize import QuantConfig, QuantError
    from generator.spec.board import BoardError, load_board

    try:
        b = board if not isinstance(board, (str, Path)) else load_board(board)
        return b, QuantConfig.from_mode(quant, per_channel)
    except (BoardError, QuantError) as e:
        raise FlowError(str(e)) from None


#: the shipped model names ``--model`` takes besides a path (a path that exists wins)
SHIPPED_MODELS = ("doclaynet",)


def shipped_model(model):
    """``model`` with a shipped model name (:data:`SHIPPED_MODELS`) replaced by its file: ``doclaynet``, the real
    trained YOLOv8n of DocLayNet (:func:`generator.eval.data.doclaynet_onnx`); anything else (None, a path, an
    existing file of that name) unchanged. Raises FlowError naming ``setup.sh`` when the shipped file is absent."""
    from generator.eval import data

    if model not in SHIPPED_MODELS or Path(model).exists():
        return model
    try:
        return str(data.doclaynet_onnx())
    except data.DataMissingError as e:
        raise FlowError(f"--model {model}: {e}") from None


def model_file(model) -> Path | None:
    """The ONNX file a compile of ``model`` reads (the default YOLOv4-tiny when None, converted once; a shipped
    model name, :func:`shipped_model`), or None when ``model`` names no regular file (the compile then refuses it
    with its own message). Raises FlowError for a shipped model name whose file is absent."""
    from generator.flows.pipeline import default_onnx

    model = shipped_model(model)
    p = Path(model) if model else default_onnx()
    return p if p.is_file() else None


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
    """``image`` as an HxWx3 uint8 RGB array: a file path, or the name of a shipped image: a real photo (bus,
    zidane, dog, ...) or ``page``, the drawn document page (:func:`generator.eval.data.page_image`, made once).
    Raises FlowError with the loader's message when it is not an image."""
    from generator.eval import data
    from host.preprocess import ImageError, load_image

    if not Path(image).exists():
        if image == "page":
            image = str(data.page_image())
        else:
            shipped = data.all_real_images()
            if image in shipped:
                image = str(shipped[image])
    try:
        return load_image(image)
    except ImageError as e:
        raise FlowError(str(e)) from None


def need_files(**files) -> None:
    """Raise FlowError for the first option (``--name`` from the keyword) whose file is given and missing."""
    for opt, f in files.items():
        if f is not None and not Path(f).is_file():
            raise FlowError(f"--{opt.replace('_', '-')} {f}: no such file")


def resolve_model(model, cfg, weights, names, onnx_dir) -> str | None:
    """The ONNX model to compile: ``model``, or the darknet ``cfg`` + ``weights`` converted to ONNX (class names:
    ``names``, else the cfg's names=) as ``onnx_dir``/<cfg stem>.onnx, or, without ``onnx_dir``,
    build/darknet/<cfg stem>-<hash of the cfg, weights and names>/<cfg stem>.onnx. Raises FlowError with the
    converter's message on bad darknet files; a shipped model name (``doclaynet``) gives its file
    (:func:`shipped_model`)."""
    if not (cfg or weights):
        return shipped_model(model)
    if model:
        raise FlowError("give either --model or --cfg/--weights, not both")
    if not (cfg and weights):
        raise FlowError("--cfg and --weights go together")
    from generator.flows.pipeline import file_sha256
    from generator.frontend.darknet import DarknetError, darknet_to_onnx

    need_files(cfg=cfg, weights=weights, names=names)
    if onnx_dir is None:
        h = hashlib.sha256("".join(file_sha256(f) for f in (cfg, weights, names) if f).encode()).hexdigest()[:8]
        onnx_dir = DARKNET_DIR / f"{Path(cfg).stem}-{h}"
    made = not Path(onnx_dir).exists()
    dest = out_folder(onnx_dir) / f"{Path(cfg).stem}.onnx"
    try:
        darknet_to_onnx(cfg, weights, dest, names=names)
    except DarknetError as e:
        if made:       # a folder this call created for the conversion is not left behind empty
            with contextlib.suppress(OSError):
                Path(onnx_dir).rmdir()
        raise FlowError(str(e)) from None
    return str(dest)

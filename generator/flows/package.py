"""Deployment package for a board: everything to copy onto a PYNQ image to run the accelerator.

Layout of ``<out>/<name>/`` (and the same tree in ``<out>/<name>.tar.gz``)::

    manifest.json program.bin weights.bin   program artifacts (host/driver.py's "package" folder)
    schedule.txt program.asm                for reference
    <overlay>.bit <overlay>.hwh             only when a bitstream has been built (overlay/<board>/)
    host/                                   the host code (driver, preprocess, YOLO decode/NMS, drawing)
    notebooks/                              the PYNQ notebooks of the repository, when present
    images/                                 a few test images
    detect.py                               command-line detection on the board
    README.md                               how to run it on the board

Check, then act: the options, the overlay and the targets are checked before the compile and before anything is
deleted; the folder is built beside the target (``.<name>.<random>.tmp``, :func:`host.fileio.atomic_dir`) and
swapped in at the end, the tarball written with :func:`host.fileio.atomic_path`: an error or a kill in the middle
leaves the previous package whole. A run holds ``<out>/.<name>.lock`` (:func:`host.fileio.lock_file`) from its
checks to its end; a second run into the same package is refused with one line. An existing ``<out>/<name>/`` is
replaced only when it is empty or a package (has ``manifest.json``); any other folder there is refused, not deleted.
"""
from __future__ import annotations
from generator import ROOT_DIR, build_dir

import contextlib
import glob
import os
import shutil
import tarfile
from pathlib import Path

from generator.eval import data
from generator.flows.artifacts import write_artifacts
from generator.flows.inputs import FlowError, flow_errors
from generator.flows.request import ModelSource, Target, compile_request
from generator.flows.pipeline import Compiled

ROOT = ROOT_DIR
IMAGES = ("bus", "zidane", "dog")

DETECT_PY = '''\
"""Detect objects in images on the board: sudo python3 detect.py images/bus.jpg [more images] [--draw]"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from host.draw import draw_detections          # noqa: E402
from host.driver import YoloAccelerator         # noqa: E402
from host.preprocess import load_image          # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("images", nargs="+")
ap.add_argument("--draw", action="store_true", help="write <image>.detections.png next to each image")
ap.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the accelerator per frame")
a = ap.parse_args()
acc = YoloAccelerator(HERE, timeout_s=a.timeout)
for p in a.images:
    img = load_image(p)
    dets = acc.detect(img)
    t = acc.last_timing
    print(f"{p}: {len(dets)} detections; pre {t['pre_ms']:.1f} ms, accelerator {t['accel_ms']:.1f} ms "
          f"({t['accel_cycles']} cycles), post {t['post_ms']:.1f} ms")
    print(json.dumps(dets, indent=1))
    if a.draw:
        draw_detections(img, dets, str(p) + ".detections.png")
'''

README = """# YOLO accelerator deployment package: {name}

Board **{board}** ({part}), program for the **{quant}** YOLOv4-tiny ({n_insns} instructions, {weights} weight
bytes, Tn x Tm = {tn} x {tm}, configuration id `{config_id:#010x}`, predicted {ms:.2f} ms per frame at {clock:.0f} MHz).
Overlay: {overlay}

## On the board

1. Boot a PYNQ 3.x image (Python 3.10, numpy 1.x, Pillow and `pynq` preinstalled). The ZCU104 has an official
   image; for ZCU102 / xczu19eg boards build one with the PYNQ SD-card flow (`make BOARDS=<board>`) and the
   board's `.spec`.
2. Copy and unpack the tarball, e.g. into the Jupyter folder:
   `scp {name}.tar.gz xilinx@<board-ip>:/home/xilinx/jupyter_notebooks/` then on the board
   `tar xzf {name}.tar.gz`.
3. Run detection (PYNQ needs root for the PL and contiguous memory):

       cd /home/xilinx/jupyter_notebooks/{name}
       sudo -E python3 detect.py images/bus.jpg --draw

   or open the notebook in `notebooks/` from Jupyter (`http://<board-ip>:9090`), when present.

## From Python

```python
from host.driver import YoloAccelerator
from host.preprocess import load_image

acc = YoloAccelerator(".")                  # loads the *.bit of this folder with pynq.Overlay
dets = acc.detect(load_image("images/bus.jpg"))
print(dets, acc.last_timing)                # [{{label, class_id, score, box: [x1, y1, x2, y2]}}], milliseconds
for dets in acc.detect_stream(frames):      # video: host pre/post overlaps the accelerator's run
    ...
```

The driver checks the accelerator's `hw_info`/`config_id` registers against `manifest.json` and refuses a
package built for another configuration (`PackageMismatchError`); a run that does not finish within
`timeout_s` raises `AcceleratorTimeout` and a non-zero status register `AcceleratorError`, both with the
register values.
"""


def find_overlay(board: str, overlay_dir=None, kernel: str = "hls") -> list[Path]:
    """The overlay's ``.bit`` + ``.hwh`` (empty when no bitstream has been built).

    Looks in ``overlay_dir`` if given, else for ``kernel`` "hls" in ``overlay/<board>/`` and
    ``build/<board>/overlay/``, for "rtl" (the RTL IP of ``invoke build --kernel rtl``) in ``overlay/<board>/rtl/``.
    Raises FileNotFoundError: ``overlay_dir`` given but holds no .bit, or a .bit without its .hwh; ValueError: an
    unknown ``kernel``.
    """
    if kernel not in ("hls", "rtl"):
        raise ValueError(f"kernel {kernel!r}: choose hls or rtl")
    defaults = ([ROOT / "overlay" / board / "rtl"] if kernel == "rtl" else
                [ROOT / "overlay" / board, ROOT / "build" / board / "overlay"])
    dirs = [Path(overlay_dir)] if overlay_dir else defaults
    for d in dirs:
        bits = sorted(d.glob("*.bit")) if d.is_dir() else []
        if len(bits) > 1:
            raise FileNotFoundError(f"{d}: several bitstreams {[b.name for b in bits]}")
        if bits:
            hwh = bits[0].with_suffix(".hwh")
            if not hwh.is_file():
                raise FileNotFoundError(f"{bits[0]}: no {hwh.name} next to it (pynq.Overlay needs it)")
            return [bits[0], hwh]
    if overlay_dir:
        raise FileNotFoundError(f"{overlay_dir}: no .bit file")
    return []


def package_name(board: str, model_path, quant: str) -> str:
    """``yolofpga-<board>-<model key>-<quant>`` (:func:`generator.flows.pipeline.model_key`: two models never
    share a folder), e.g. ``yolofpga-zcu19eg-yolov4-tiny-1a2b3c4d-int8-asym-pc``. Raises OSError: the model file
    cannot be read."""
    from generator.flows.pipeline import model_key

    return f"yolofpga-{board}-{model_key(model_path)}-{quant}"


def check_package_target(out_root, name: str) -> tuple[Path, Path]:
    """Check, creating and deleting nothing, that the package ``<out_root>/<name>/`` and its tarball
    ``<out_root>/<name>.tar.gz`` can be written: the folder absent, empty or a package (has ``manifest.json``),
    never a file, a symbolic link or a folder of other content; the tarball absent or a file; ``out_root``
    writable. Returns (folder, tarball). Raises FlowError: one line naming the path in the way."""
    from generator.flows.inputs import check_target

    out_root = Path(out_root)
    d, tar = out_root / name, out_root / f"{name}.tar.gz"
    if d.is_symlink():
        raise FlowError(f"{d}: is a symbolic link, where the package folder goes; not replacing it")
    check_target(d, "folder", "the package folder")
    try:
        foreign = d.is_dir() and any(d.iterdir()) and not (d / "manifest.json").is_file()
    except OSError as e:
        raise FlowError(f"{d}: cannot be read ({e.strerror or e})") from None
    if foreign:
        raise FlowError(f"{d}: a folder that is not a deployment package (no manifest.json) is where the package "
                        f"goes; not deleting it (move it away or choose another --out)")
    check_target(tar, "file", "the package tarball")
    return d, tar


def _prepare(out_root: Path, name: str, stack: contextlib.ExitStack) -> tuple[Path, Path]:
    """Take ``<out_root>/.<name>.lock`` (held until ``stack`` closes), check the targets
    (:func:`check_package_target`) and delete the temporaries a killed run of this package left (a previous
    package a run killed in the middle of its swap had renamed aside is first put back). Raises FlowError (another
    run holds the lock, a target in the way), OSError."""
    from host.fileio import TMP_SUFFIX, LockedError, lock_file

    lock = out_root / f".{name}.lock"
    try:
        stack.enter_context(lock_file(lock))
    except LockedError:
        raise FlowError(f"{out_root / name}: in use by another run (lock {lock} held); "
                        f"try again when it has finished") from None
    olds = sorted(out_root.glob(f".{glob.escape(name)}.old.*{TMP_SUFFIX}"))
    if olds and olds[0].is_dir() and not (out_root / name).exists() and not (out_root / name).is_symlink():
        os.replace(olds[0], out_root / name)   # a run killed between the two renames of its swap: the old package back
    targets = check_package_target(out_root, name)
    for p in out_root.glob(f".{glob.escape(name)}.*{TMP_SUFFIX}"):   # ours: we hold the lock
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()
    return targets


def _write_package(c: Compiled, d: Path, tar: Path, name: str, overlay: list) -> tuple[Path, Path]:
    """Build the package of ``c`` in a folder beside ``d``, write the tarball from it, then swap it in as ``d``;
    on an exception ``d`` and ``tar`` keep their old content. Raises OSError."""
    from host.fileio import atomic_dir, atomic_path

    with atomic_dir(d) as tmp:
        write_artifacts(c, tmp)
        for f in overlay:
            shutil.copy2(f, tmp / f.name)
        shutil.copytree(ROOT / "host", tmp / "host", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        nb = ROOT / "notebooks"
        if nb.is_dir():
            shutil.copytree(nb, tmp / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        (tmp / "images").mkdir()
        shipped = data.all_real_images()
        for k in IMAGES:
            if k in shipped:
                shutil.copy2(shipped[k], tmp / "images" / f"{k}{Path(shipped[k]).suffix}")
        (tmp / "detect.py").write_text(DETECT_PY)
        hw = c.hw
        (tmp / "README.md").write_text(README.format(
            name=name, board=c.board.name, part=c.board.part, quant=c.quant.name, n_insns=len(c.program.insns),
            weights=len(c.program.weights), tn=hw.tn, tm=hw.tm, config_id=hw.config_id, clock=hw.clock_mhz,
            ms=c.program.cycles / hw.clock_mhz / 1e3,
            overlay=", ".join(f"`{f.name}`" for f in overlay) if overlay else
            "**none built yet** (no Vivado here): put `<name>.bit` + `<name>.hwh` into this folder."))
        os.chmod(tmp, 0o755)    # (mkdtemp makes it 0700)
        with atomic_path(tar) as t, tarfile.open(t, "w:gz") as tf:
            tf.add(tmp, arcname=name)
    return d, tar


def build_package(c: Compiled, out_root, overlay_dir=None, name: str | None = None,
                  kernel: str = "hls") -> tuple[Path, Path]:
    """Write the package folder and its tarball under ``out_root`` (created if missing), named
    :func:`package_name` unless ``name`` is given, with the overlay of ``kernel`` (:func:`find_overlay`: the HLS
    kernel's or the RTL IP's; the driver binds either); built aside and swapped in (see the module docstring).
    Returns (folder, tarball).

    Raises:
        FileNotFoundError, ValueError: as :func:`find_overlay` (before anything is written).
        FlowError: ``out_root`` or a target in the way (:func:`check_package_target`), another run holding the
            lock.
        OSError: a write failed (the previous package is left whole).
    """
    from generator.flows.inputs import out_folder

    name = name or package_name(c.board.name, c.model_path, c.quant.name)
    overlay = find_overlay(c.board.name, overlay_dir, kernel)
    out_root = out_folder(out_root)
    with contextlib.ExitStack() as stack:
        d, tar = _prepare(out_root, name, stack)
        return _write_package(c, d, tar, name, overlay)


def _overlay_checked(board: str, overlay, kernel: str) -> list:
    """:func:`find_overlay` with its errors as FlowError naming the option."""
    if kernel not in ("hls", "rtl"):
        raise FlowError(f"--kernel {kernel!r}: choose hls or rtl")
    try:
        return find_overlay(board, overlay, kernel)
    except (FileNotFoundError, ValueError) as e:
        raise FlowError(f"--overlay {e}" if overlay else str(e)) from None


@flow_errors
def package_flow(target: Target = Target(), source: ModelSource = ModelSource(), overlay=None, out=None,
                 kernel="hls") -> tuple[Path, Path]:
    """Compile ``source`` for ``target`` (darknet ``cfg`` + ``weights`` converted under ``out`` when given) and
    write its deployment package into ``out`` (default build/package/) with the overlay of ``kernel`` ("hls" or
    "rtl"): (package folder, tarball).

    Before the compile: the board, mode, ``kernel`` and overlay are checked, the package targets probed
    (:func:`check_package_target`) and the package's lock taken. Raises FlowError (one line: a bad option, a target
    in the way, another run into the same package, a failed compile or write; the previous package stays whole).
    """
    from generator.flows.inputs import out_folder

    b, q = target.checked()
    overlay_files = _overlay_checked(b.name, overlay, kernel)
    od = out_folder(out if out else build_dir("package"))
    source = source.resolved(od if out else None)
    m, tail = source.model_file(), target.folder_suffix(source.input_size)
    with contextlib.ExitStack() as stack:
        planned = _prepare(od, package_name(b.name, m, q.name + tail), stack) if m is not None else None
        comp = compile_request(target, source, progress=False, require_detection=True)
        name = package_name(comp.board.name, comp.model_path, comp.quant.name + tail)
        d, tar = planned if planned and planned[0].name == name else _prepare(od, name, stack)
        return _write_package(comp, d, tar, name, overlay_files)

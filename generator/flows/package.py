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
"""
from __future__ import annotations
from generator import ROOT_DIR

import shutil
import tarfile
from pathlib import Path

from generator.eval import data
from generator.codegen.artifacts import write_artifacts
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


def build_package(c: Compiled, out_root, overlay_dir=None, name: str | None = None,
                  kernel: str = "hls") -> tuple[Path, Path]:
    """Write the package folder and its tarball under ``out_root``, named
    ``yolofpga-<board>-<model key>-<quant>`` (:func:`generator.flows.pipeline.model_key`: two models never share a
    folder), with the overlay of ``kernel`` (:func:`find_overlay`: the HLS kernel's or the RTL IP's; the driver
    binds either). Returns (folder, tarball)."""
    from generator.flows.pipeline import model_key

    out_root = Path(out_root)
    name = name or f"yolofpga-{c.board.name}-{model_key(c.model_path)}-{c.quant.name}"
    d = out_root / name
    if d.exists():
        shutil.rmtree(d)
    write_artifacts(c, d)
    overlay = find_overlay(c.board.name, overlay_dir, kernel)
    for f in overlay:
        shutil.copy2(f, d / f.name)
    shutil.copytree(ROOT / "host", d / "host", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    nb = ROOT / "notebooks"
    if nb.is_dir():
        shutil.copytree(nb, d / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (d / "images").mkdir()
    shipped = data.all_real_images()
    for k in IMAGES:
        if k in shipped:
            shutil.copy2(shipped[k], d / "images" / f"{k}{Path(shipped[k]).suffix}")
    (d / "detect.py").write_text(DETECT_PY)
    hw = c.hw
    cycles = c.program.cycles
    (d / "README.md").write_text(README.format(
        name=name, board=c.board.name, part=c.board.part, quant=c.quant.name, n_insns=len(c.program.insns),
        weights=len(c.program.weights), tn=hw.tn, tm=hw.tm, config_id=hw.config_id, clock=hw.clock_mhz,
        ms=cycles / hw.clock_mhz / 1e3,
        overlay=", ".join(f"`{f.name}`" for f in overlay) if overlay else
        "**none built yet** (no Vivado here): put `<name>.bit` + `<name>.hwh` into this folder."))
    tar = out_root / f"{name}.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        t.add(d, arcname=name)
    return d, tar


def package_flow(board="zcu19eg", quant="int8-asym", per_channel=True, model=None, overlay=None, out=None,
                 cfg=None, weights=None, names=None, yolo_cfg=None, kernel="hls", calib=None) -> tuple[Path, Path]:
    """Compile ``model`` for ``board`` (darknet ``cfg`` + ``weights`` converted under ``out`` when given) and write
    its deployment package into ``out`` (default build/package/) with the overlay of ``kernel`` ("hls" or "rtl"):
    (package folder, tarball). Raises FlowError."""
    from generator.flows.inputs import FlowError, compile_checked, out_folder, resolve_model

    od = out_folder(out if out else ROOT / "build" / "package")
    comp = compile_checked(board, quant, per_channel, resolve_model(model, cfg, weights, names, od if out else None),
                           progress=False, names=names, yolo_cfg=yolo_cfg, require_detection=True, calib=calib)
    try:
        return build_package(comp, od, overlay_dir=overlay, kernel=kernel)
    except (FileNotFoundError, ValueError) as e:
        raise FlowError(str(e)) from None

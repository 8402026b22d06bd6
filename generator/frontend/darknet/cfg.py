"""Darknet cfg reading: sections, option keys, and the error type of the darknet front end.

an unknown key (``pd=1``, ``activaton=leaky``) is a :class:`DarknetError` naming ``file:line`` and the nearest valid
key (``difflib``). Darknet only warns about such keys and runs a different network.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

SUPPORTED_SECTIONS = ("net", "network", "convolutional", "conv", "maxpool", "max", "route", "upsample", "shortcut",
                      "sam", "scale_channels", "avgpool", "yolo")
CANONICAL = {"network": "net", "conv": "convolutional", "max": "maxpool"}
ACTIVATIONS = ("leaky", "relu", "linear", "logistic", "swish", "mish", "hard_swish")


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
    "shortcut": ("from", "activation", "weights_type", "weights_normalization") + _COMMON_LAYER_KEYS,
    "sam": ("from", "activation") + _COMMON_LAYER_KEYS,
    "avgpool": _COMMON_LAYER_KEYS,
    "scale_channels": ("from", "scale_wh", "activation") + _COMMON_LAYER_KEYS,
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


def check_keys(sections: list[Section], cfg_name: str) -> None:
    """Reject every option key darknet would not read in its section (see :data:`KNOWN_KEYS`).

    Sections of unsupported types are skipped (they are reported by
    :func:`generator.frontend.darknet.layers.build_layers`).

    Raises:
        DarknetError: one line per unknown key, ``cfg:line [section]: unknown key 'pd' (did you mean 'pad'?)``,
            the suggestion being :func:`difflib.get_close_matches` over that section type's keys; all unknown keys
            of the file are listed at once.
    """
    problems = []
    for s in sections:
        kind = CANONICAL.get(s.type, s.type)
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

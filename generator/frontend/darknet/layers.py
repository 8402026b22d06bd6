"""Darknet sections -> layers with shapes, propagated exactly as darknet's ``parser.c`` does."""
from __future__ import annotations

from dataclasses import dataclass, field

from generator.frontend.darknet.cfg import ACTIVATIONS, CANONICAL, SUPPORTED_SECTIONS, DarknetError, Section, check_keys


@dataclass
class Layer:
    """One darknet layer after shape propagation.

    Attributes:
        index: darknet layer index (0-based, every section after [net], [yolo] included).
        section: its cfg section.
        kind: canonical section type (``convolutional``, ``maxpool``, ``route``, ``upsample``, ``yolo``).
        out_shape: output (C, H, W).
        params: the options the converter uses, typed (per kind, see :func:`build_layers`).
    """

    index: int
    section: Section
    kind: str
    out_shape: tuple[int, int, int]
    params: dict = field(default_factory=dict)


class OptionReader:
    """Reads typed options of a section; a missing or malformed value is a :class:`DarknetError` naming
    ``cfg:line [section]`` (``cfg_name`` is the cfg's file name)."""

    def __init__(self, cfg_name: str):
        self.cfg_name = cfg_name

    def where(self, s: Section) -> str:
        """``cfg:line [type]`` of section ``s``."""
        return f"{self.cfg_name}:{s.line} [{s.type}]"

    def err(self, s: Section, msg: str) -> DarknetError:
        """A DarknetError ``cfg:line [type]: msg`` (returned, for the caller to raise)."""
        return DarknetError(f"{self.where(s)}: {msg}")

    def int_(self, s: Section, key: str, default=None) -> int:
        """Integer option ``key``; ``default`` when absent (required when ``default`` is None)."""
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
        """Float option ``key``, ``default`` when absent."""
        v = s.options.get(key)
        if v is None:
            return default
        try:
            return float(v)
        except ValueError:
            raise self.err(s, f"option {key}={v!r} is not a number") from None

    def ints(self, s: Section, key: str) -> list[int]:
        """Comma-separated integers of option ``key`` ([] when absent)."""
        v = s.options.get(key, "")
        try:
            return [int(x) for x in v.split(",") if x != ""]
        except ValueError:
            raise self.err(s, f"option {key}={v!r} is not a list of integers") from None

    def numbers(self, s: Section, key: str) -> list:
        """Comma-separated numbers of option ``key`` (int where it parses as one, else float; [] when absent)."""
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


def build_layers(sections: list[Section], cfg_name: str) -> tuple[dict, list[Layer]]:
    """Check the sections and propagate shapes exactly as darknet's parser does.

    Returns:
        (net dict with width/height/channels, layers in darknet order)

    Raises:
        DarknetError: missing/misplaced [net], unsupported sections (all listed at once), bad options.
    """
    opts = OptionReader(cfg_name)
    if not sections:
        raise DarknetError(f"{cfg_name}: no sections found")
    head = sections[0]
    if head.type not in ("net", "network"):
        raise DarknetError(f"{cfg_name}:{head.line} [{head.type}]: the first section must be [net] or [network]")
    bad = [s for s in sections[1:] if s.type not in SUPPORTED_SECTIONS or CANONICAL.get(s.type, s.type) == "net"]
    if bad:
        listing = ", ".join(f"{cfg_name}:{s.line} [{s.type}]" for s in bad)
        raise DarknetError(f"{len(bad)} unsupported section(s): {listing} "
                           f"(supported: {', '.join('[' + t + ']' for t in SUPPORTED_SECTIONS)}; "
                           f"[net] only first)")
    check_keys(sections, cfg_name)
    net = {"width": opts.int_(head, "width", 0), "height": opts.int_(head, "height", 0),
           "channels": opts.int_(head, "channels", 0)}
    if min(net.values()) <= 0:
        raise opts.err(head, f"width, height and channels must all be > 0, got {net}")

    layers: list[Layer] = []
    shape = (net["channels"], net["height"], net["width"])
    for i, s in enumerate(sections[1:]):
        kind = CANONICAL.get(s.type, s.type)
        if kind == "convolutional":
            layer = _conv(opts, i, s, shape)
        elif kind == "maxpool":
            layer = _maxpool(opts, i, s, shape)
        elif kind == "route":
            layer = _route(opts, i, s, layers)
        elif kind == "shortcut":
            layer = _shortcut(opts, i, s, shape, layers)
        elif kind in ("sam", "scale_channels"):
            layer = _product(opts, i, s, shape, layers, kind)
        elif kind == "avgpool":   # global average pool (darknet's forward_avgpool_layer): C x 1 x 1
            layer = Layer(i, s, kind, (shape[0], 1, 1), {})
        elif kind == "upsample":
            stride = opts.int_(s, "stride", 2)
            if stride < 1:
                raise opts.err(s, f"stride={stride}: only upsampling (stride >= 1) is supported")
            if opts.float_(s, "scale", 1.0) != 1.0:
                raise opts.err(s, "scale != 1 is not supported")
            c, h, w = shape
            layer = Layer(i, s, kind, (c, h * stride, w * stride), {"stride": stride})
        else:  # yolo
            layer = yolo_layer(opts, i, s, shape)
        layers.append(layer)
        shape = layer.out_shape
    yolo_idx = {l.index for l in layers if l.kind == "yolo"}
    for l in layers:
        if l.kind == "route":
            used = yolo_idx.intersection(l.params["inputs"])
            if used:
                raise opts.err(l.section, f"routes to [yolo] layer {sorted(used)}: the yolo output (decoded, "
                                         f"logistic-activated) is not modelled; route to the layer before it")
        if l.kind in ("shortcut", "sam", "scale_channels") and l.params["from"] in yolo_idx:
            raise opts.err(l.section, f"adds [yolo] layer {l.params['from']}, which is not modelled")
        if l.kind in ("convolutional", "maxpool", "upsample", "shortcut", "sam", "scale_channels", "avgpool", "yolo") \
                and l.index - 1 in yolo_idx:
            raise opts.err(l.section, f"takes its input from [yolo] layer {l.index - 1}, which is not modelled")
    if not yolo_idx:
        raise DarknetError(f"{cfg_name}: no [yolo] section, the model would have no output")
    return net, layers


def _conv(opts: OptionReader, i: int, s: Section, shape) -> Layer:
    """[convolutional] ``s``, layer ``i``, on input ``shape`` (C, H, W). params: c_in, filters, size, stride, pad,
    bn, activation, n_floats (its float32 count in the weights file), groups (grouped / depthwise convolution,
    ``filters * c_in / groups * size * size`` weights)."""
    c, h, w = shape
    filters = opts.int_(s, "filters", 1)
    size = opts.int_(s, "size", 1)
    stride = opts.int_(s, "stride", 1)
    groups = opts.int_(s, "groups", 1)
    if groups < 1 or c % groups or filters % groups:
        raise opts.err(s, f"groups={groups} must divide the {c} input channels and filters={filters}")
    for key, default in (("dilation", 1), ("binary", 0), ("xnor", 0), ("antialiasing", 0)):
        if opts.int_(s, key, default) != default:
            raise opts.err(s, f"option {key}={s.options[key]} is not supported")
    for key in ("stride_x", "stride_y"):
        if key in s.options and opts.int_(s, key) != stride:
            raise opts.err(s, f"{key}={s.options[key]} differs from stride={stride}: not supported")
    if "share_index" in s.options:
        raise opts.err(s, "share_index is not supported")
    if filters < 1 or size < 1 or stride < 1:
        raise opts.err(s, f"filters={filters}, size={size}, stride={stride} must all be >= 1")
    pad = size // 2 if opts.int_(s, "pad", 0) else opts.int_(s, "padding", 0)
    act = s.options.get("activation")
    if act is None:
        raise opts.err(s, f"no activation= given: darknet's default is 'logistic', which is not supported "
                         f"(supported: {', '.join(ACTIVATIONS)})")
    if act not in ACTIVATIONS:
        raise opts.err(s, f"activation={act!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
    bn = opts.int_(s, "batch_normalize", 0) != 0
    oh, ow = (h + 2 * pad - size) // stride + 1, (w + 2 * pad - size) // stride + 1
    if oh < 1 or ow < 1:
        raise opts.err(s, f"output size {oh}x{ow} from input {h}x{w} (size={size}, stride={stride}, pad={pad})")
    n_floats = filters * (4 if bn else 1) + filters * (c // groups) * size * size   # darknet l.nweights
    return Layer(i, s, "convolutional", (filters, oh, ow),
                  {"c_in": c, "filters": filters, "size": size, "stride": stride, "pad": pad, "bn": bn,
                   "activation": act, "n_floats": n_floats, "groups": groups})


def _maxpool(opts: OptionReader, i: int, s: Section, shape) -> Layer:
    """[maxpool] ``s``, layer ``i``, on input ``shape`` (C, H, W). params: size, stride, pads (ONNX [top, left,
    bottom, right] giving darknet's output size)."""
    c, h, w = shape
    size = opts.int_(s, "size", 1)
    stride = opts.int_(s, "stride", size)
    padding = opts.int_(s, "padding", size - 1)
    for key in ("stride_x", "stride_y"):
        if key in s.options and opts.int_(s, key) != stride:
            raise opts.err(s, f"{key}={s.options[key]} differs from stride={stride}: not supported")
    for key in ("maxpool_depth", "antialiasing"):
        if opts.int_(s, key, 0) != 0:
            raise opts.err(s, f"option {key}={s.options[key]} is not supported")
    if size < 1 or stride < 1 or padding < 0:
        raise opts.err(s, f"size={size}, stride={stride}, padding={padding} out of range")
    oh, ow = (h + padding - size) // stride + 1, (w + padding - size) // stride + 1
    begin = padding // 2
    # Smallest end pad so that ONNX's floor((x + begin + end - size)/stride) + 1 equals darknet's output size.
    end_h = max(0, (oh - 1) * stride + size - h - begin)
    end_w = max(0, (ow - 1) * stride + size - w - begin)
    if oh < 1 or ow < 1 or max(begin, end_h, end_w) >= size:
        raise opts.err(s, f"padding={padding} with size={size}, stride={stride} on {h}x{w} gives windows made only "
                         f"of padding; not supported")
    return Layer(i, s, "maxpool", (c, oh, ow),
                  {"size": size, "stride": stride, "pads": [begin, begin, end_h, end_w]})


def _route(opts: OptionReader, i: int, s: Section, layers: list[Layer]) -> Layer:
    """[route] ``s``, layer ``i``, over the earlier ``layers``. params: inputs (absolute layer indices), groups,
    group_id."""
    refs = opts.ints(s, "layers")
    if not refs:
        raise opts.err(s, "route needs layers=")
    inputs = []
    for r in refs:
        j = i + r if r < 0 else r
        if not 0 <= j < i:
            raise opts.err(s, f"layers={s.options['layers']}: index {r} -> layer {j} is not an earlier layer "
                             f"(this is layer {i})")
        inputs.append(j)
    groups = opts.int_(s, "groups", 1)
    group_id = opts.int_(s, "group_id", 0)
    if groups < 1 or not 0 <= group_id < groups:
        raise opts.err(s, f"groups={groups}, group_id={group_id} out of range")
    shapes = [layers[j].out_shape for j in inputs]
    if len({sh[1:] for sh in shapes}) != 1:
        raise opts.err(s, "routed layers have different spatial sizes: "
                         + ", ".join(f"layer {j} {sh[1]}x{sh[2]}" for j, sh in zip(inputs, shapes)))
    for j, sh in zip(inputs, shapes):
        if sh[0] % groups:
            raise opts.err(s, f"layer {j} has {sh[0]} channels, not divisible by groups={groups}")
    c = sum(sh[0] for sh in shapes) // groups
    return Layer(i, s, "route", (c, shapes[0][1], shapes[0][2]),
                  {"inputs": inputs, "groups": groups, "group_id": group_id})


def _from_layer(opts: OptionReader, i: int, s: Section) -> int:
    """The absolute index of the one earlier layer that ``from=`` of section ``s`` (layer ``i``) names (negative:
    relative to ``i``). Raises DarknetError naming the cfg line for several layers or one that is not earlier."""
    refs = opts.ints(s, "from")
    if len(refs) != 1:
        raise opts.err(s, f"from={s.options.get('from')}: exactly one layer is supported")
    j = i + refs[0] if refs[0] < 0 else refs[0]
    if not 0 <= j < i:
        raise opts.err(s, f"from={s.options['from']}: layer {j} is not an earlier layer (this is layer {i})")
    return j


def _shortcut(opts: OptionReader, i: int, s: Section, shape, layers: list[Layer]) -> Layer:
    """[shortcut] ``s``, layer ``i``: the previous layer's output (``shape``) plus layer ``from``'s (a residual
    connection), then ``activation`` (default linear). params: from (absolute index), activation. Only one
    ``from``, of the same height and width, and no weights (``weights_type=none``). The channel counts may differ
    (partial residuals, YOLOv3-tiny-PRN): as darknet's ``shortcut_cpu`` the first min(C) channels are added, the
    output keeps the previous layer's channels (the rest pass through, activated)."""
    j = _from_layer(opts, i, s)
    if tuple(layers[j].out_shape[1:]) != tuple(shape[1:]):
        raise opts.err(s, f"from={s.options['from']}: layer {j} is {layers[j].out_shape[0]}x{layers[j].out_shape[1]}"
                          f"x{layers[j].out_shape[2]}, the previous layer {shape[0]}x{shape[1]}x{shape[2]} (C x H x "
                          f"W); only equal heights and widths are supported")
    wt = s.options.get("weights_type", "none")
    if wt != "none":
        raise opts.err(s, f"weights_type={wt} is not supported (only none)")
    act = s.options.get("activation", "linear")
    if act not in ACTIVATIONS:
        raise opts.err(s, f"activation={act!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
    return Layer(i, s, "shortcut", tuple(shape), {"from": j, "activation": act})


def _product(opts: OptionReader, i: int, s: Section, shape, layers: list[Layer], kind: str) -> Layer:
    """[sam] / [scale_channels] ``s``, layer ``i``: layer ``from``'s output times the previous layer's (``shape``),
    then ``activation`` (default linear), as darknet's ``forward_sam_layer`` (element by element, equal shapes:
    spatial attention) and ``forward_scale_channels_layer`` (the previous layer C x 1 x 1, one factor per channel
    of ``from``'s C x H x W; ``scale_wh=0`` only). params: from (absolute index), activation. The output has
    ``from``'s shape."""
    j = _from_layer(opts, i, s)
    fs = tuple(layers[j].out_shape)
    want = (fs[0], 1, 1) if kind == "scale_channels" else fs
    if kind == "scale_channels" and opts.int_(s, "scale_wh", 0) != 0:
        raise opts.err(s, "scale_wh=1 (one factor per pixel) is not supported (only 0: one per channel)")
    if tuple(shape) != want:
        raise opts.err(s, f"from={s.options['from']}: layer {j} is {'x'.join(map(str, fs))} (C x H x W), the "
                          f"previous layer {'x'.join(map(str, shape))}; [{kind}] needs it "
                          f"{'x'.join(map(str, want))}")
    act = s.options.get("activation", "linear")
    if act not in ACTIVATIONS:
        raise opts.err(s, f"activation={act!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
    return Layer(i, s, kind, fs, {"from": j, "activation": act})


def yolo_layer(opts: OptionReader, i: int, s: Section, shape) -> Layer:
    """[yolo] ``s``, layer ``i``, on input ``shape`` (C, H, W; None: not checked). params: anchors ([w, h] pairs),
    mask, classes, scale_x_y.

    Darknet's rule (``parse_yolo`` in parser.c): ``num`` anchors in all (this converter's default: the pairs given),
    ``anchors=`` gives their 2 * ``num`` values (darknet reads at most that many, and keeps placeholder anchors of 0.5
    for the missing ones), ``mask`` picks this head's anchors by index < ``num`` (default all ``num``), and the input
    has ``len(mask) * (classes + 5)`` channels. Beyond darknet (which decodes such values into NaN or negative
    boxes): anchors finite and > 0, ``classes`` >= 1, ``scale_x_y`` finite and > 0.

    Raises:
        DarknetError: ``cfg:line [yolo]: ...`` for new_coords, no or malformed anchors, inconsistent
            anchors / num / mask, classes < 1, a non-finite or non-positive scale_x_y, or channels other than
            len(mask) * (classes + 5).
    """
    import math

    if opts.int_(s, "new_coords", 0) != 0:
        raise opts.err(s, f"new_coords={s.options['new_coords']} (scaled-YOLOv4 decode) is not supported")
    classes = opts.int_(s, "classes", 20)
    if classes < 1:
        raise opts.err(s, f"classes={classes}: a YOLO head needs at least one class")
    if not s.options.get("anchors"):
        raise opts.err(s, "no anchors= given: darknet would decode this head with placeholder anchors of 0.5 x 0.5 "
                          "pixels; give the anchors' 2 * num values (w, h pairs)")
    anchors = opts.numbers(s, "anchors")
    if len(anchors) % 2:
        raise opts.err(s, f"anchors has an odd count ({len(anchors)}): expected w, h pairs")
    bad = [a for a in anchors if not (math.isfinite(a) and a > 0)]
    if bad:
        raise opts.err(s, f"anchors={s.options['anchors']}: {bad[0]} is not a finite positive size in pixels")
    pairs = [[anchors[k], anchors[k + 1]] for k in range(0, len(anchors), 2)]
    num = opts.int_(s, "num", len(pairs))
    mask = opts.ints(s, "mask") or list(range(num))
    if num < 1 or len(pairs) != num or any(not 0 <= m < num for m in mask):
        raise opts.err(s, f"num={num}, {len(pairs)} anchor pairs and mask={','.join(map(str, mask))} are "
                          f"inconsistent: darknet's [yolo] needs anchors= with 2 * num values and every mask index "
                          f"in 0..num-1")
    scale_x_y = opts.float_(s, "scale_x_y", 1.0)
    if not (math.isfinite(scale_x_y) and scale_x_y > 0):
        raise opts.err(s, f"scale_x_y={s.options['scale_x_y']}: must be a finite number > 0 (1.0: plain YOLOv3 "
                          f"decoding)")
    if shape is not None and shape[0] != len(mask) * (classes + 5):
        raise opts.err(s, f"input has {shape[0]} channels, expected len(mask)*(classes+5) = "
                         f"{len(mask)}*({classes}+5) = {len(mask) * (classes + 5)}")
    return Layer(i, s, "yolo", shape,
                  {"anchors": pairs, "mask": mask, "classes": classes, "scale_x_y": scale_x_y})

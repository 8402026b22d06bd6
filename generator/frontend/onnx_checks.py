"""Validity checks of an ONNX model before and while :mod:`generator.frontend.onnx_loader` reads it, after the ONNX IR
specification (https://github.com/onnx/onnx/blob/main/docs/IR.md) and the operators' specification
(https://github.com/onnx/onnx/blob/main/docs/Operators.md):

* every string of the model (names, op types, metadata keys and values, ...) is UTF-8 text, as the IR's protobuf
  ``string`` fields must be (:func:`check_text`; a byte flipped in a file otherwise reaches Python as ``bytes``);
* every tensor is defined once: the IR's graphs are in single static assignment form (a node output, an initializer
  or a graph input), then ``onnx.checker.check_model(full_check=True)`` (structure, types, strict shape inference;
  :func:`check_model`), after the shape operands whose corruption crashes onnx's native shape inference (a
  Resize / Upsample scale or size, a Conv / pool kernel, stride, dilation or pad) have been checked
  (:func:`check_shape_operands`);
* every tensor's data matches its dims and element type (:func:`tensor_array`);
* every floating-point constant a node reads is finite (NaN never; +-inf only as an operand of a bound or a
  comparison: :data:`INF_OK_OPS`) and a BatchNormalization's variance is not negative (:func:`check_values`);
* the input and every activation within the host's and the accelerator's bounds (:func:`check_bounds`,
  :data:`MAX_INPUT_PIXELS`, :func:`isa_limits`: the address fields of :mod:`generator.spec.isa`).

Every refusal is one line of :class:`~generator.ir.graph.GraphError` naming the tensor, node, metadata key or input.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
from google.protobuf.message import Message
from onnx import numpy_helper

from generator.ir.graph import GraphError

#: the largest model input, in pixels (H x W): 4096 x 4096. A host-side cap (calibration and bias correction run the
#: float graph over whole images and keep every activation; the largest published YOLO inputs are 1280-1536 square),
#: so that a 10000 x 10000 input is refused at load instead of failing in calibration
MAX_INPUT_PIXELS = 4096 * 4096


def one_line(e) -> str:
    """An exception's message on one line (whitespace runs collapsed), at most 400 characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 400 else text[:397] + "..."


def _node_name(n, k: int) -> str:
    """``name (OpType)`` of ONNX node ``n`` (k-th of its graph; an unnamed node is ``OpType_k``, as in the IR)."""
    return f"{n.name or f'{n.op_type}_{k}'} ({n.op_type})"


def check_model(model: onnx.ModelProto, source=None) -> None:
    """Validate an ONNX model before anything reads it: its strings UTF-8 text (:func:`check_text`), every tensor
    defined once, its shape operands sane (:func:`check_shape_operands`), then
    ``onnx.checker.check_model(model, full_check=True)``. ``source``: the file it came from, for the messages.

    Raises:
        GraphError: ``tensor 'y' is defined twice: by node a (Conv) and by node b (Relu)`` (or by an initializer or
            the graph input), or ``invalid ONNX model: <the checker's message on one line>``, or the refusals of
            :func:`check_text` and :func:`check_shape_operands`.
    """
    check_text(model, source)
    g = model.graph
    defined = {}
    for i in g.input:
        defined.setdefault(i.name, f"graph input {i.name!r}")
    for init in g.initializer:
        if init.name in defined and not defined[init.name].startswith("graph input"):
            raise GraphError(f"tensor {init.name!r} is defined twice: by two initializers; an ONNX graph defines "
                             f"each tensor once (onnxruntime refuses this model)")
        defined[init.name] = "an initializer" if init.name not in defined else defined[init.name]
    for k, n in enumerate(g.node):
        for o in n.output:
            if not o:
                continue
            if o in defined:
                raise GraphError(f"tensor {o!r} is defined twice: by {defined[o]} and by node {_node_name(n, k)}; "
                                 f"an ONNX graph defines each tensor once (onnxruntime refuses this model)")
            defined[o] = f"node {_node_name(n, k)}"
    check_shape_operands(model)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001 - ValidationError, InferenceError, and others for malformed protos
        raise GraphError(f"invalid ONNX model: {one_line(e)}") from None


def _label(msg, path: str) -> str | None:
    """A readable name for protobuf message ``msg`` found at ``path``: ``node conv_3 (Conv)`` (an unnamed node:
    ``node graph.node[3] (Conv)``), ``tensor 'w' (graph.initializer[0])``, ``metadata key 'names'``; None for other
    messages."""
    name = getattr(msg, "name", None) if "name" in msg.DESCRIPTOR.fields_by_name else None
    name = name if isinstance(name, str) and name else None
    if isinstance(msg, onnx.NodeProto):
        return f"node {name or path} ({msg.op_type if isinstance(msg.op_type, str) else '?'})"
    if isinstance(msg, onnx.StringStringEntryProto):
        return f"metadata key {msg.key!r}" if isinstance(msg.key, str) else f"metadata entry {path}"
    if isinstance(msg, (onnx.TensorProto, onnx.ValueInfoProto, onnx.SparseTensorProto)):
        return f"tensor {name!r} ({path})" if name else f"tensor {path}"
    return None


def _bytes_field(msg, path: str, place: str = "the model", rel: str = ""):
    """(the place, the field, the raw bytes) of the first ``string`` field under protobuf message ``msg`` whose
    value is not UTF-8 (the Python protobuf runtime hands such a value over as ``bytes``), or None. ``path``: where
    ``msg`` is in the model; ``place``, ``rel``: the nearest named message above it and the path from there."""
    label = _label(msg, path)
    place, rel = (label, "") if label else (place, rel)
    for fd, value in msg.ListFields():
        if fd.type == fd.TYPE_STRING:
            vals = [value] if isinstance(value, (str, bytes)) else list(value)
            for k, v in enumerate(vals):
                if isinstance(v, bytes):
                    return place, rel + fd.name + (f"[{k}]" if len(vals) > 1 else ""), v
        elif fd.type == fd.TYPE_MESSAGE:
            single = isinstance(value, Message)
            for k, sub in enumerate([value] if single else value):
                sub_path = ".".join(x for x in (path, fd.name) if x) + ("" if single else f"[{k}]")
                hit = _bytes_field(sub, sub_path, place, rel + fd.name + ("" if single else f"[{k}]") + ".")
                if hit:
                    return hit
    return None


def check_text(model: onnx.ModelProto, source=None) -> None:
    """Every ``string`` field of ``model`` (names, op types, attribute names, metadata keys and values, doc strings,
    in subgraphs too) is UTF-8 text, as the ONNX IR's protobuf schema requires; ``source``: the file, for the message.

    Raises:
        GraphError: ``ONNX model m.onnx: metadata key 'names': its value is not UTF-8 text (b'{"0": "p\\xe5'); the
            file is corrupted`` (the place: a node ``name (OpType)``, a tensor, a metadata key, or the protobuf path).
    """
    hit = _bytes_field(model, "")
    if hit:
        where, field, raw = hit
        of = f"ONNX model {source}" if source is not None else "ONNX model"
        shown = raw[:40] + (b"..." if len(raw) > 40 else b"")
        raise GraphError(f"{of}: {where}: its {field} is not UTF-8 text ({shown!r}); the file is corrupted")


#: (op type, attribute, least value) of the shape attributes checked before onnx's shape inference reads them
_SHAPE_ATTRS = [(op, a, lo) for op in ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool")
                for a, lo in (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("pads", 0))]


def check_shape_operands(model: onnx.ModelProto) -> None:
    """The operands that set an output's shape, checked before ``onnx.checker`` and shape inference see them: a
    corrupted one (a negative scale, pad or size) makes onnx's native shape inference abort the process (a failed
    C++ assertion) instead of raising. Checked: the kernel_shape / strides / dilations (at least 1) and pads (at least
    0) attributes of Conv and the pools, and the constant scales (finite, positive) and sizes (positive) of a
    Resize / Upsample, as the ONNX operators' specification requires.

    Raises:
        GraphError: ``node up_3 (Resize): its scales 'sc' hold -4 at index 1; scales must be finite and positive``
            (or the attribute and its values).
    """
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
    for k, n in enumerate(g.node):
        for op, attr, lo in _SHAPE_ATTRS:
            if n.op_type != op:
                continue
            a = next((x for x in n.attribute if x.name == attr), None)
            if a is not None and any(v < lo for v in a.ints):
                raise GraphError(f"node {_node_name(n, k)}: its {attr} {list(a.ints)} must be at least {lo} "
                                 f"(ONNX operator specification); is the file corrupted?")
        if n.op_type not in ("Resize", "Upsample"):
            continue
        old = n.op_type == "Upsample" or opset < 11     # Upsample, Resize-10: (X, scales); else (X, roi, scales, sizes)
        for pos, what in ((1, "scales"),) if old else ((2, "scales"), (3, "sizes")):
            if len(n.input) <= pos or n.input[pos] not in inits:
                continue
            v = tensor_array(inits[n.input[pos]], f"initializer {n.input[pos]!r}")
            if not np.issubdtype(v.dtype, np.number):
                continue   # a wrong element type: the checker refuses it
            v = v.astype(np.float64).ravel()
            bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
            if bad.size:
                raise GraphError(f"node {_node_name(n, k)}: its {what} {n.input[pos]!r} hold {v[bad[0]]:g} at index "
                                 f"{int(bad[0])}; {what} must be finite and positive")


def tensor_array(t: onnx.TensorProto, what: str) -> np.ndarray:
    """The numpy array of ONNX tensor ``t`` (``numpy_helper.to_array``; shape its dims, dtype its element type);
    ``what`` names it in messages (``initializer 'w'``, ``node c (Constant)``).

    Raises:
        GraphError: ``initializer 'w' (dims [2, 18, 1, 1], element type 1) cannot be read: cannot reshape array of
            size 4 into shape (2,18,1,1)``: data not matching the dims or the element type (a corrupted file).
    """
    try:
        return numpy_helper.to_array(t)
    except Exception as e:  # noqa: BLE001 - ValueError, TypeError, KeyError for a malformed tensor
        raise GraphError(f"{what} (dims {list(t.dims)}, element type {t.data_type}) cannot be read: "
                         f"{one_line(e)}; its data do not match its dims and type (is the file corrupted?)") from None


#: ops whose constant operands may hold +-inf (bounds, masks, comparisons); NaN is refused everywhere
INF_OK_OPS = {"Clip", "Min", "Max", "Where", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"}


def check_values(nodes: list, tensors: dict) -> None:
    """Refuse non-finite constants and negative BatchNormalization variances (see the module docstring).

    Raises:
        GraphError: ``tensor 'w' (read by conv_3 (Conv)) holds 2 NaN of its 864 values (the first at index
            [0, 1, 2, 2]); weights must be finite`` or ``node bn_0 (BatchNormalization): its variance 'bn_0.var'
            holds 1 negative value of 8 (-0.5 at channel 3); a variance cannot be negative``.
    """
    readers = {}
    for n in nodes:
        for i in n.inputs:
            if i:
                readers.setdefault(i, []).append(n)
    for name, rs in readers.items():
        t = tensors.get(name)
        a = None if t is None or t.data is None else np.asarray(t.data)
        if a is None or not np.issubdtype(a.dtype, np.floating) or a.size == 0:
            continue
        bad = ~np.isfinite(a)
        if not bad.any():
            continue
        nan = np.isnan(a)
        if not nan.any() and all(r.op in INF_OK_OPS for r in rs):
            continue
        kinds = ", ".join(f"{int(c)} {k}" for k, c in (("NaN", nan.sum()), ("+inf", np.isposinf(a).sum()),
                                                       ("-inf", np.isneginf(a).sum())) if c)
        first = [int(v) for v in np.argwhere(bad)[0]]
        who = ", ".join(f"{r.name} ({r.op})" for r in rs)
        raise GraphError(f"tensor {name!r} (read by {who}) holds {kinds} of its {a.size} values (the first at index "
                         f"{first}); weights and constants must be finite numbers")
    for n in nodes:
        if n.op != "BatchNormalization" or len(n.inputs) < 5:
            continue
        t = tensors.get(n.inputs[4])
        if t is None or t.data is None:
            continue
        v = np.asarray(t.data, np.float64).ravel()
        neg = np.flatnonzero(v < 0)
        if neg.size:
            raise GraphError(f"node {n.name} (BatchNormalization): its variance {n.inputs[4]!r} holds {neg.size} "
                             f"negative value(s) of {v.size} ({v[neg[0]]:g} at channel {int(neg[0])}); a variance "
                             f"cannot be negative")


def isa_limits() -> dict:
    """The accelerator's address limits that bound a model's tensors, derived from the instruction set
    (:mod:`generator.spec.isa`): ``region_bytes`` (the largest byte offset a LOAD / STORE reaches in one base-register
    space, ``ddr_offset``, and the largest buffer the ``input_size`` / ``act_size`` registers describe, minus one),
    ``pixel_bytes`` (LOAD / STORE ``pix_stride``: the bytes of one pixel of a region)."""
    from generator.spec import isa

    fields = {op: dict(isa.FORMATS[op]) for op in ("LOAD", "STORE")}
    regs = {name: bits for name, _, bits, _ in isa.REGISTERS}
    region_bits = min(fields["LOAD"]["ddr_offset"], fields["STORE"]["ddr_offset"], regs["input_size"],
                      regs["act_size"], regs["output_size"])
    pix_bits = min(fields["LOAD"]["pix_stride"], fields["STORE"]["pix_stride"])
    return {"region_bytes": (1 << region_bits) - 1, "pixel_bytes": (1 << pix_bits) - 1,
            "region_bits": region_bits, "pixel_bits": pix_bits}


def _physical_memory() -> int | None:
    """This machine's physical memory in bytes, None when unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_bounds(nodes: list, tensors: dict, inp: str, elem_bytes: int = 1) -> None:
    """Refuse a model beyond the accelerator's or the host's limits (``nodes``, ``tensors`` as in the IR, ``inp`` the
    graph input's name, shape [1, C, H, W]; ``elem_bytes`` 1 (int8) or 2 (int16) bytes per quantized element):

    * the input's H x W at most :data:`MAX_INPUT_PIXELS`;
    * its pixel (C x elem_bytes bytes) within ``pix_stride``, and the whole input (C x H x W x elem_bytes bytes)
      and every activation tensor within one region (:func:`isa_limits`);
    * the float32 activations of one image (the calibration keeps all of them: 4 bytes per element) within this
      machine's physical memory.

    Raises:
        GraphError: naming the input or tensor, its size and the limit.
    """
    shp = tensors[inp].shape
    _, c, h, w = shp
    lim = isa_limits()
    if h * w > MAX_INPUT_PIXELS:
        raise GraphError(f"graph input {inp!r} is {h} x {w} = {h * w:,} pixels (shape {list(shp)}); the compiler "
                         f"takes at most {MAX_INPUT_PIXELS:,} pixels (4096 x 4096, MAX_INPUT_PIXELS)")
    if c * elem_bytes > lim["pixel_bytes"]:
        raise GraphError(f"graph input {inp!r} has {c} channels: {c * elem_bytes} bytes per pixel at {elem_bytes} "
                         f"byte(s) per element, beyond the {lim['pixel_bits']}-bit pix_stride of LOAD / STORE "
                         f"(at most {lim['pixel_bytes']:,} bytes)")
    total = 0
    for n in nodes:
        for t in dict.fromkeys(list(n.inputs) + list(n.outputs)):
            tt = tensors.get(t) if t else None
            if tt is None or tt.is_const or not tt.shape:
                continue
            size = int(np.prod(tt.shape, dtype=np.int64))
            if size * elem_bytes > lim["region_bytes"]:
                what = f"graph input {t!r}" if t == inp else f"tensor {t!r} of node {n.name} ({n.op})"
                raise GraphError(f"{what} has shape {list(tt.shape)}: {size * elem_bytes:,} bytes at {elem_bytes} "
                                 f"byte(s) per element, beyond the accelerator's {lim['region_bits']}-bit region "
                                 f"addresses (at most {lim['region_bytes']:,} bytes: LOAD / STORE ddr_offset, the "
                                 f"*_size registers)")
    seen = set()
    for n in nodes:
        for t in list(n.inputs) + list(n.outputs):
            tt = tensors.get(t) if t else None
            if tt is not None and not tt.is_const and tt.shape and t not in seen:
                seen.add(t)
                total += 4 * int(np.prod(tt.shape, dtype=np.int64))
    mem = _physical_memory()
    if mem and total > mem:
        raise GraphError(f"graph input {inp!r} of shape {list(shp)}: the float32 activations of one image take "
                         f"{total / 2 ** 30:.1f} GiB (calibration keeps them all), more than this machine's "
                         f"{mem / 2 ** 30:.1f} GiB of memory; export the model for a smaller input")

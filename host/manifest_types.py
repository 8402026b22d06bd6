"""The typed form of ``manifest.json``: one frozen dataclass per entry kind of :data:`host.manifest.SCHEMA`.

:func:`host.manifest.read_manifest` parses the file, checks every value the driver uses
(:func:`host.manifest_check.driver_problem`), then returns a :class:`Manifest` built from it by
:meth:`Manifest.from_dict`, so the driver reads ``m.hardware.precisions`` and ``m.heads[0].scale`` instead of nested
dicts. The writer (:mod:`generator.flows.artifacts`) keeps building the file as dicts through
:func:`host.manifest.entry`; the file format is unchanged. Each class lists its kind's keys in file order (the schema's
keys, then the optional ones of :data:`host.manifest.OPTIONAL`; ``tests/host/test_host_manifest.py`` checks that they
agree), every field keyword-only. A key the file may lack has a default: an optional key its documented meaning when
absent (``Tensor.format`` ``"rgb01"``, ``Export.resize`` ``"stretch"``) or None, a top-level key the driver does not
need (:data:`host.manifest.DRIVER_KEYS`) None or empty. Keys the schema does not know are ignored. Values keep their
JSON types (lists stay lists, numbers Python numbers) except the nested entries, which become their dataclasses
(a head's ``yolo`` a :class:`host.yolo.YoloHead`). Pure Python: runs on the board without the generator.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields

from .yolo import YoloHead

__all__ = ["Manifest", "Hardware", "Register", "Net", "Region", "Tensor", "Layer", "FileEntry", "Export",
           "EntryError", "KINDS"]


class EntryError(ValueError):
    """An entry that cannot be typed: not an object, or a key without a default missing (names its key path)."""


def _nested(conv, default=MISSING):
    """A field whose JSON value is converted by ``conv(value, where)`` (``where``: its key path)."""
    return field(default=default, metadata={"conv": conv})


def _build(cls, v, where: str):
    """``cls`` (a dataclass of this module) from the JSON object ``v``; ``where`` names it in errors.

    Raises:
        EntryError: ``v`` is not an object, or a key of ``cls`` without a default is missing.
    """
    if not isinstance(v, dict):
        raise EntryError(f"{where or 'manifest'}: {str(v)[:40]} is not an object")
    kw = {}
    for f in fields(cls):
        if f.name not in v:
            if f.default is MISSING and f.default_factory is MISSING:
                raise EntryError(f"{where or 'manifest'}: no {f.name}")
            continue
        conv = f.metadata.get("conv")
        key = f"{where}.{f.name}" if where else f.name
        kw[f.name] = conv(v[f.name], key) if conv is not None and v[f.name] is not None else v[f.name]
    return cls(**kw)


def _one(cls):
    return lambda v, where: _build(cls, v, where)


def _list_of(cls):
    def conv(v, where):
        if not isinstance(v, list):
            raise EntryError(f"{where}: not a list")
        return tuple(_build(cls, e, f"{where}[{i}]") for i, e in enumerate(v))
    return conv


def _map_of(cls):
    def conv(v, where):
        if not isinstance(v, dict):
            raise EntryError(f"{where}: not an object")
        return {k: _build(cls, e, f"{where}.{k}") for k, e in v.items()}
    return conv


def _yolo(v, where: str) -> YoloHead:
    try:
        return YoloHead.from_dict(v)
    except (KeyError, TypeError, ValueError) as e:
        raise EntryError(f"{where}: not YOLO head parameters ({e})") from None


class _Entry:
    @classmethod
    def from_dict(cls, v: dict, where: str = ""):
        """This entry from its parsed JSON object ``v`` (nested entries typed too); ``where``: its key path in the
        manifest, for errors ("": the top level). Raises :class:`EntryError`."""
        return _build(cls, v, where)


@dataclass(frozen=True, kw_only=True)
class Hardware(_Entry):
    """The accelerator the program is compiled for (``hw_info`` / ``config_id``); ``precisions``: names of
    :data:`host.manifest.PRECISIONS` the regions use, narrowest first; ``pix_lanes``: output pixels per DSP per
    cycle in int8."""
    tn: int
    tm: int
    precisions: list
    config_id: int
    pix_lanes: int | None = None


@dataclass(frozen=True, kw_only=True)
class Register(_Entry):
    """One AXI-Lite register: byte ``offset``, 32 or 64 ``bits``, ``access`` "r" / "w" / "rw"."""
    offset: int
    bits: int
    access: str | None = None


@dataclass(frozen=True, kw_only=True)
class Net(_Entry):
    """The network input size in pixels."""
    width: int
    height: int


@dataclass(frozen=True, kw_only=True)
class Region(_Entry):
    """A DDR region: ``h`` x ``w`` x ``channels`` elements of ``bits`` 8 / 16 with a ``pad``-wide border holding
    ``zp``, at byte ``addr`` of its base register's buffer (``bytes`` border included); ``im2col`` (a dict of
    :data:`host.manifest.IM2COL_KEYS`) for an im2col input region."""
    name: str
    base_reg: str
    addr: int
    channels: int
    h: int
    w: int
    pad: int
    bits: int
    zp: int
    scale: float | list
    bytes: int
    im2col: dict | None = None


@dataclass(frozen=True, kw_only=True)
class Tensor(_Entry):
    """The input or a head: ``channels`` channels from ``ch_offset`` of region ``region``'s interior, of its
    precision (``bits``, ``dtype``); ``scale`` (one, or one per channel) and ``zero_point`` dequantize it; a darknet
    head's ``yolo`` parameters; the input's pixel ``format`` (:data:`host.preprocess.INPUT_FORMATS`)."""
    name: str
    region: str
    base_reg: str
    offset: int
    ch_offset: int
    channels: int
    h: int
    w: int
    pad: int
    pixel_stride: int
    layout: str
    scale: float | list
    zero_point: int
    dtype: str
    bits: int
    yolo: YoloHead | None = _nested(_yolo, None)
    format: str = "rgb01"


@dataclass(frozen=True, kw_only=True)
class Layer(_Entry):
    """One layer of the schedule (``insns``: [first, end) instruction indices)."""
    name: str
    kind: str
    insns: list
    plan: str
    predicted_cycles: int
    macs: int
    ddr_bytes: int


@dataclass(frozen=True, kw_only=True)
class FileEntry(_Entry):
    """A package file's size in bytes and SHA-256 (64 lowercase hex digits)."""
    bytes: int
    sha256: str


@dataclass(frozen=True, kw_only=True)
class Export(_Entry):
    """A model whose decode is in the graph (YOLOv5, YOLOX, YOLOv8 exports, :mod:`host.exported`): the host-tail
    nodes (``tail``, :func:`host.tail.run_tail`), the ONNX shapes of the accelerator outputs it reads
    (``input_shapes``), its constants' file (``consts``), the graph input's name (``graph_input``, for a tail that
    reads it), its decoded ``output`` and that output's ``format`` (:data:`host.exported.FORMATS`), and how an image
    becomes the input (``resize``, :data:`host.preprocess.RESIZE_MODES`)."""
    format: str
    output: str
    tail: list
    consts: str
    input_shapes: dict
    graph_input: str | None = None
    resize: str = "stretch"


@dataclass(frozen=True, kw_only=True)
class Pre(_Entry):
    """The accelerator's PRE (:mod:`host.pre`, :data:`host.manifest.OPTIONAL`): the model's ``resize`` mode and
    input ``format``, the ``frame_w`` x ``frame_h`` frame the prologue's ``predicted_cycles`` were priced for, and
    the prologue's ``prologue_insns`` instructions (after the main program's in program.bin)."""
    resize: str
    format: str
    frame_w: int
    frame_h: int
    predicted_cycles: int
    prologue_insns: int


@dataclass(frozen=True, kw_only=True)
class Manifest(_Entry):
    """The whole ``manifest.json`` (see :mod:`host.manifest` for each key)."""
    isa_version: int
    insn_bytes: int
    n_insns: int
    board: str | None = None
    part: str | None = None
    clock_mhz: float | None = None
    hardware: Hardware = _nested(_one(Hardware))
    quant: str | None = None
    base_sizes: dict
    registers: dict = _nested(_map_of(Register))
    ctrl_bits: dict
    status_bits: dict
    regions: tuple = _nested(_list_of(Region))
    input: Tensor = _nested(_one(Tensor))
    heads: tuple = _nested(_list_of(Tensor))
    net: Net = _nested(_one(Net))
    names: list
    layers: tuple = _nested(_list_of(Layer), ())
    predicted_cycles: int | None = None
    param_bytes: int | None = None
    calibration: dict | None = None
    export: Export | None = _nested(_one(Export), None)
    files: dict | None = _nested(_map_of(FileEntry), None)
    pre: Pre | None = _nested(_one(Pre), None)


#: entry kind of :data:`host.manifest.SCHEMA` -> its dataclass
KINDS = {"manifest": Manifest, "hardware": Hardware, "register": Register, "net": Net, "region": Region,
         "tensor": Tensor, "layer": Layer, "file": FileEntry, "pre": Pre}

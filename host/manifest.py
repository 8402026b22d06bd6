"""The deployment contract's ``manifest.json``: its schema, the DDR layout it describes, and its reader.

The generator's writer (:mod:`generator.codegen.artifacts`) builds every entry through :func:`entry` and the whole
file through :func:`build_manifest`; the driver reads it through :func:`read_manifest`. Both sides therefore agree on
one key list per entry kind (:data:`SCHEMA`), in file order (the writer's output is byte-stable). Pure Python: runs
on the board without the generator.

DDR layout: the accelerator addresses DDR through four base registers (:data:`BASE_REGS`, in the order of the
instruction's ``base_reg`` field); the host allocates one buffer per base register (``base_sizes`` bytes, rounded up
to whole :data:`PAGE` pages). Each *region* is an NHWC tensor of ``h x w x channels`` elements with a ``pad``-wide
zero-point border, at byte ``addr`` of its base register's buffer (:func:`region_shape`). A *tensor* (the input,
each head) is ``channels`` consecutive channels from ``ch_offset`` of a region's interior (:func:`tensor_window`).

An *im2col* region (the entry has an ``im2col`` key, the input tensor's ``layout`` is ``"IM2COL"``) holds the input
of a first convolution with few input channels as that convolution's patches: pixel (oy, ox) of its ``h x w``
(the convolution's output size, no border) is the K x K x C patch of the image under the kernel, in (ky, kx, c)
order, padded to ``channels`` elements with the zero point (:func:`im2col_into`); the accelerator then reads one
contiguous run per output pixel instead of K strided runs (``generator/codegen/emit.py``).
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from .errors import PackageError, PackageFileMismatchError

#: the base registers, in the order of their number in the instruction's ``base_reg`` field
BASE_REGS = ("WEIGHTS", "ACT", "INPUT", "OUTPUT")
#: host buffers are whole pages (bytes)
PAGE = 4096

_NUMBER = (int, float)
#: a scale: one number, or a list of per-channel scales (a head quantized per output channel)
_SCALE = (int, float, list)
#: key -> JSON type of each entry kind, in file order. ``manifest``: the top level; ``hardware``: the accelerator the
#: program is compiled for (compared with the ``hw_info`` / ``config_id`` registers); ``register``: one AXI-Lite
#: register (byte offset, 32 or 64 bits, access "r" / "w" / "rw"); ``net``: the network input size in pixels;
#: ``region``: a DDR region
#: (``addr`` bytes into its base register's buffer, ``zp`` the value its border holds: the zero point, or the
#: smallest integer for a region read with padding by max-pools only; ``bytes`` border included);
#: ``tensor``: the input or a head (``offset`` = its region's ``addr``; ``pixel_stride`` = the region's channels;
#: ``scale`` (a number, or one per channel) / ``zero_point`` dequantize it; heads add ``yolo``, the YOLO head parameters); ``layer``: one layer of
#: the schedule (``insns`` = [first, end) instruction indices).
SCHEMA = {
    "manifest": {"isa_version": int, "insn_bytes": int, "n_insns": int, "board": str, "part": str,
                 "clock_mhz": _NUMBER, "hardware": dict, "quant": str, "base_sizes": dict, "registers": dict,
                 "ctrl_bits": dict, "status_bits": dict, "regions": list, "input": dict, "heads": list, "net": dict,
                 "names": list, "layers": list, "predicted_cycles": int, "param_bytes": int},
    "hardware": {"tn": int, "tm": int, "bits": int, "config_id": int, "pix_lanes": int},
    "register": {"offset": int, "bits": int, "access": str},
    "net": {"width": int, "height": int},
    "region": {"name": str, "base_reg": str, "addr": int, "channels": int, "h": int, "w": int, "pad": int,
               "zp": int, "scale": _SCALE, "bytes": int},
    "tensor": {"name": str, "region": str, "base_reg": str, "offset": int, "ch_offset": int, "channels": int,
               "h": int, "w": int, "pad": int, "pixel_stride": int, "layout": str, "scale": _SCALE,
               "zero_point": int, "dtype": str},
    "layer": {"name": str, "kind": str, "insns": list, "plan": str, "predicted_cycles": int, "macs": int,
              "ddr_bytes": int},
    "file": {"bytes": int, "sha256": str},
}
#: optional trailing keys per entry kind (``calibration``: per region the activation-range method, range and
#: headroom the compiler chose, and per layer the bias correction; the driver does not need it)
#: ``export``: a model whose decode is in the graph (YOLOv5, YOLOX, YOLOv8 exports): the host-tail nodes, the ONNX
#: shapes of the accelerator outputs it reads, its constants' file (``tail_consts.npz`` beside the manifest), its
#: decoded output and that output's format (:mod:`host.exported`); such a manifest's heads carry no ``yolo``)
#: ``region.im2col``: the image an im2col region is made of and the convolution's geometry (:func:`im2col_into`)
#: ``files``: {file name: ``file`` entry (``bytes``: its size, ``sha256``: 64 lowercase hex digits of its SHA-256)}
#: of the package's binary files (``program.bin``, ``weights.bin``, the export's constants), which the driver
#: verifies at load (:func:`verify_file`); written by the generator since the integrity rules (a manifest without
#: it is an older package: the driver then checks the sizes the manifest implies)
OPTIONAL = {"tensor": {"yolo": dict, "format": str}, "manifest": {"calibration": dict, "export": dict, "files": dict},
            "region": {"im2col": dict}}
#: the files a ``files`` entry must list (a package's binaries; plus the export's ``consts`` when there is one)
REQUIRED_FILES = ("program.bin", "weights.bin")
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: keys of a region's ``im2col`` entry: kernel ``k``, stride ``s``, ``pads`` (top, left, bottom, right) and the
#: image's ``h``, ``w``, ``c`` (NHWC)
IM2COL_KEYS = ("k", "s", "pads", "h", "w", "c")
#: the keys the driver needs (a manifest without one is refused)
DRIVER_KEYS = ("isa_version", "insn_bytes", "n_insns", "hardware", "base_sizes", "registers", "ctrl_bits",
               "status_bits", "regions", "input", "heads", "net", "names")


class ManifestError(ValueError):
    """An entry does not follow :data:`SCHEMA` (the message names the kind and the key)."""


def entry(kind: str, /, **fields) -> dict:
    """One entry of kind ``kind`` (a :data:`SCHEMA` key), its keys in schema order, optional ones last.

    Raises:
        ManifestError: a key missing or unknown, or a value of another JSON type (bool is not int).
    """
    spec, opt = SCHEMA[kind], OPTIONAL.get(kind, {})
    missing = [k for k in spec if k not in fields]
    unknown = [k for k in fields if k not in spec and k not in opt]
    if missing or unknown:
        raise ManifestError(f"manifest {kind} entry: missing keys {missing}, unknown keys {unknown}")
    out = {}
    for k, typ in list(spec.items()) + [(k, t) for k, t in opt.items() if k in fields]:
        v = fields[k]
        if isinstance(v, bool) or not isinstance(v, typ):
            raise ManifestError(f"manifest {kind} entry: {k} = {v!r} is not {typ}")
        out[k] = v
    return out


def build_manifest(**fields) -> dict:
    """The whole manifest (JSON-able dict) from its top-level fields (:data:`SCHEMA` ``"manifest"``), each nested
    entry checked against its kind and ``base_sizes`` keyed by :data:`BASE_REGS`. Raises ManifestError (see
    :func:`entry`)."""
    m = entry("manifest", **fields)
    entry("hardware", **m["hardware"])
    entry("net", **m["net"])
    for r in m["registers"].values():
        entry("register", **r)
    if sorted(m["base_sizes"]) != sorted(BASE_REGS):
        raise ManifestError(f"manifest base_sizes {sorted(m['base_sizes'])}: not the base registers {BASE_REGS}")
    for kind, items in (("region", m["regions"]), ("tensor", [m["input"], *m["heads"]]), ("layer", m["layers"])):
        for e in items:
            entry(kind, **e)
    if "files" in m:
        problem = _files_problem(m)
        if problem:
            raise ManifestError(f"manifest files entry: {problem}")
    return m


def file_entry(data: bytes) -> dict:
    """The ``files`` entry (:data:`SCHEMA` ``"file"``) of a file whose content is ``data``: its size in bytes and
    its SHA-256 (hex, FIPS 180-4)."""
    return entry("file", bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


def _files_problem(m: dict) -> str | None:
    """What is wrong with manifest ``m``'s ``files`` entry (None: nothing): not a dict of plain file names to
    ``file`` entries (non-negative ``bytes``, 64 lowercase hex digits of ``sha256``), or a required file missing."""
    files = m["files"]
    if not isinstance(files, dict):
        return f"{files!r} is not an object"
    for name, e in files.items():
        if not name or name in (".", "..") or "/" in name or "\\" in name:
            return f"{name!r} is not a plain file name"
        if not isinstance(e, dict) or sorted(e) != sorted(SCHEMA["file"]):
            return f"{name}: {e!r} is not {{bytes, sha256}}"
        if isinstance(e["bytes"], bool) or not isinstance(e["bytes"], int) or e["bytes"] < 0:
            return f"{name}: bytes = {e['bytes']!r} is not a byte count"
        if not isinstance(e["sha256"], str) or not _SHA256.fullmatch(e["sha256"]):
            return f"{name}: sha256 = {e['sha256']!r} is not 64 lowercase hex digits"
    consts = m.get("export", {}).get("consts") if isinstance(m.get("export"), dict) else None
    missing = [f for f in (*REQUIRED_FILES, *([consts] if consts else [])) if f not in files]
    if missing:
        return f"lists no {', '.join(missing)}"
    return None


def verify_file(path, spec: dict | None, data: bytes | None = None, expect_bytes: int | None = None) -> None:
    """Check a package file against its manifest ``files`` entry ``spec`` (size first, then SHA-256); with no
    ``spec`` (an older manifest) against ``expect_bytes`` when that is given.

    Args:
        path: the file (named in the error).
        spec: its ``file`` entry ({"bytes", "sha256"}) or None.
        data: the file's content when already read (else the file is read).
        expect_bytes: the exact size an older manifest implies (only used when ``spec`` is None).
    Raises:
        PackageError: the file is missing or unreadable.
        host.errors.PackageFileMismatchError: its size or SHA-256 differs (names the file, both values).
    """
    p = Path(path)
    if spec is None and expect_bytes is None:
        return
    if data is None:
        try:
            data = p.read_bytes()
        except OSError as e:
            raise PackageError(f"{p}: cannot be read ({e.strerror or e})") from None
    want = spec["bytes"] if spec is not None else expect_bytes
    if len(data) != want:
        d = len(data) - want
        how = f"{abs(d)} byte{'s' if abs(d) != 1 else ''} {'longer' if d > 0 else 'shorter'} than the manifest says"
        raise PackageFileMismatchError(p, "bytes", want, len(data), how)
    if spec is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != spec["sha256"]:
            raise PackageFileMismatchError(p, "sha256", spec["sha256"], got,
                                           "content differs from the manifest (SHA-256)")


def read_manifest(path) -> dict:
    """Parse a package's ``manifest.json`` and check everything the driver uses (:func:`driver_problem`).

    Raises:
        PackageError: no such file, not valid JSON, one of :data:`DRIVER_KEYS` missing, a ``files`` entry off
            its schema (see :data:`OPTIONAL`), or a value the driver uses that is of the wrong type, out of range
            or inconsistent with another (the message names the file and the key).
    """
    p = Path(path)
    if not p.is_file():
        raise PackageError(f"{p}: no such file (not a deployment package?)")
    try:
        m = json.loads(p.read_text())
    except ValueError as e:
        raise PackageError(f"{p}: not valid JSON ({e})") from e
    if not isinstance(m, dict):
        raise PackageError(f"{p}: not a JSON object")
    missing = [k for k in DRIVER_KEYS if k not in m]
    if missing:
        raise PackageError(f"{p}: missing keys {missing}")
    if "files" in m:
        problem = _files_problem(m)
        if problem:
            raise PackageError(f"{p}: files entry: {problem}")
    problem = driver_problem(m)
    if problem:
        raise PackageError(f"{p}: {problem}")
    return m


class _Bad(Exception):
    """A value of the manifest the driver cannot use (the message names its key path)."""


#: bounds of the manifest values the driver uses: a register offset (bytes of the AXI-Lite space), a bit index of
#: CTRL / status, a tensor or region dimension, a base register's buffer (bytes; the accelerator's 32-bit sizes)
_MAX_REG_OFFSET, _MAX_BIT, _MAX_DIM, _MAX_BUFFER = 1 << 16, 31, 1 << 16, 1 << 32
#: registers the driver reads or writes (the base-address ones from :data:`BASE_REGS` are added below)
DRIVER_REGISTERS = ("CTRL", "hw_info", "config_id", "status", "cycles", "insns", "n_insns", "fetch_ddr")
#: CTRL and status bits the driver uses
DRIVER_CTRL_BITS, DRIVER_STATUS_BITS = ("ap_start", "ap_done", "ap_idle"), ("PARTIAL_INSN", "NO_END")


def _int(v, where: str, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        raise _Bad(f"{where} = {v!r}: not an integer in [{lo}, {hi if hi is not None else 'inf'}]")
    return v


def _pos(v, where: str, hi: float = 1e30) -> float:
    """A finite positive number below ``hi`` (a scale: its products with the integers stay finite in float32)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < hi):
        raise _Bad(f"{where} = {v!r}: not a finite positive number")
    return float(v)


def _of(v, typ, where: str):
    if isinstance(v, bool) or not isinstance(v, typ):
        raise _Bad(f"{where} = {str(v)[:60]}: not {typ.__name__ if isinstance(typ, type) else typ}")
    return v


def _bits_map(v, where: str, need) -> dict:
    _of(v, dict, where)
    for k, b in v.items():
        _int(b, f"{where}.{k}", 0, _MAX_BIT)
    missing = [k for k in need if k not in v]
    if missing:
        raise _Bad(f"{where}: no {', '.join(missing)}")
    return v


def _tensor(t, where: str, regions: dict, bits: int, head: bool) -> None:
    """A ``tensor`` entry the driver reads (input) or dequantizes (head), against its region."""
    _of(t, dict, where)
    for k, typ in SCHEMA["tensor"].items():
        if k not in t:
            raise _Bad(f"{where}: no {k}")
    r = regions.get(t["region"]) if isinstance(t["region"], str) else None
    if r is None:
        raise _Bad(f"{where}.region = {str(t['region'])[:40]}: no such region")
    if t["base_reg"] != r["base_reg"]:
        raise _Bad(f"{where}.base_reg = {t['base_reg']!r}: its region {r['name']} is in {r['base_reg']}")
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    _int(t["zero_point"], f"{where}.zero_point", lo, hi)
    ch = _int(t["channels"], f"{where}.channels", 1, _MAX_DIM)
    c0 = _int(t["ch_offset"], f"{where}.ch_offset", 0, _MAX_DIM)
    if t["layout"] not in ("NHWC", "IM2COL"):
        raise _Bad(f"{where}.layout = {str(t['layout'])[:20]!r}: not NHWC or IM2COL")
    h, w = _int(t["h"], f"{where}.h", 1, _MAX_DIM), _int(t["w"], f"{where}.w", 1, _MAX_DIM)
    pad = _int(t["pad"], f"{where}.pad", 0, _MAX_DIM)
    if t["layout"] == "IM2COL":
        if head or "im2col" not in r:
            raise _Bad(f"{where}.layout = 'IM2COL': {'a head' if head else 'its region is NHWC'}")
        spec = r["im2col"]
        if (h, w, ch) != (spec["h"], spec["w"], spec["c"]):
            raise _Bad(f"{where}: [{h}, {w}, {ch}], its im2col region is made of [{spec['h']}, {spec['w']}, "
                       f"{spec['c']}]")
    else:
        if "im2col" in r:
            raise _Bad(f"{where}.layout = 'NHWC': its region {r['name']} is an im2col region")
        if (h, w, pad) != (r["h"], r["w"], r["pad"]) or c0 + ch > r["channels"]:
            raise _Bad(f"{where}: channels [{c0}, {c0 + ch}) of {h}x{w} pad {pad} do not lie in its region "
                       f"{r['name']} ({r['channels']} channels, {r['h']}x{r['w']} pad {r['pad']})")
    sc = t["scale"]
    if isinstance(sc, list):
        if not head or len(sc) != ch:
            raise _Bad(f"{where}.scale: {len(sc)} scales for {'the input' if not head else f'{ch} channels'}")
        for i, v in enumerate(sc):
            _pos(v, f"{where}.scale[{i}]")
    else:
        _pos(sc, f"{where}.scale")


def _yolo(y, where: str, channels: int) -> int:
    """A head's ``yolo`` entry (darknet decode on the host): returns its class count."""
    _of(y, dict, where)
    anchors, mask, classes = y.get("anchors"), y.get("mask"), y.get("classes")
    if not isinstance(anchors, list) or not anchors or not all(
            isinstance(a, list) and len(a) == 2 and all(_num_ok(v) and v > 0 for v in a) for a in anchors):
        raise _Bad(f"{where}.anchors = {str(anchors)[:60]}: not a list of [w, h] positive numbers")
    if not isinstance(mask, list) or not mask:
        raise _Bad(f"{where}.mask = {str(mask)[:40]}: not a non-empty list")
    for i, k in enumerate(mask):
        _int(k, f"{where}.mask[{i}]", 0, len(anchors) - 1)
    _int(classes, f"{where}.classes", 1, 1 << 20)
    if "scale_x_y" in y:
        _pos(y["scale_x_y"], f"{where}.scale_x_y", 1e3)
    if len(mask) * (5 + classes) != channels:
        raise _Bad(f"{where}: {len(mask)} anchors x (5 + {classes} classes) = {len(mask) * (5 + classes)} "
                   f"channels, the head has {channels}")
    return classes


def _num_ok(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and v == v and abs(v) < 1e30


def driver_problem(m: dict) -> str | None:
    """What in manifest ``m`` the driver cannot use (None: nothing), naming the key: every :data:`DRIVER_KEYS`
    value of its schema type and in range (instruction size and count, hardware, the register map with
    :data:`DRIVER_REGISTERS` and the base-address registers, the CTRL / status bits the driver uses, base
    register sizes up to 4 GiB, regions inside their base register's buffer, input and heads inside their regions
    with finite positive scales and zero points of the element type, darknet heads' YOLO parameters consistent
    with their channels and the class names), ``clock_mhz`` a number when present, the ``export`` entry's keys."""
    try:
        _driver_check(m)
    except _Bad as e:
        return str(e)
    return None


def _driver_check(m: dict) -> None:
    _int(m["isa_version"], "isa_version", 0, 255)
    _int(m["insn_bytes"], "insn_bytes", 1, 4096)
    _int(m["n_insns"], "n_insns", 0, 1 << 31)
    hw = _of(m["hardware"], dict, "hardware")
    for k in SCHEMA["hardware"]:
        _int(hw.get(k), f"hardware.{k}", 0, (1 << 32) - 1)
    if hw["bits"] not in (8, 16):
        raise _Bad(f"hardware.bits = {hw['bits']}: not 8 or 16")
    bits = hw["bits"]
    regs = _of(m["registers"], dict, "registers")
    for name, r in regs.items():
        _of(r, dict, f"registers.{name}")
        _int(r.get("offset"), f"registers.{name}.offset", 0, _MAX_REG_OFFSET - 8)
        if r.get("bits") not in (32, 64) or isinstance(r.get("bits"), bool):
            raise _Bad(f"registers.{name}.bits = {r.get('bits')!r}: not 32 or 64")
    need = [*DRIVER_REGISTERS, *(n.lower() for n in BASE_REGS)]
    missing = [n for n in need if n not in regs]
    if missing:
        raise _Bad(f"registers: no {', '.join(missing)}")
    _bits_map(m["ctrl_bits"], "ctrl_bits", DRIVER_CTRL_BITS)
    _bits_map(m["status_bits"], "status_bits", DRIVER_STATUS_BITS)
    sizes = _of(m["base_sizes"], dict, "base_sizes")
    if sorted(sizes) != sorted(BASE_REGS):
        raise _Bad(f"base_sizes {sorted(sizes)}: not the base registers {list(BASE_REGS)}")
    for k, v in sizes.items():
        _int(v, f"base_sizes.{k}", 0, _MAX_BUFFER)
    net = _of(m["net"], dict, "net")
    _int(net.get("width"), "net.width", 1, _MAX_DIM)
    _int(net.get("height"), "net.height", 1, _MAX_DIM)
    names = _of(m["names"], list, "names")
    if not all(isinstance(n, str) for n in names):
        raise _Bad("names: not a list of strings")
    if "clock_mhz" in m and m["clock_mhz"] is not None and not (_num_ok(m["clock_mhz"]) and m["clock_mhz"] >= 0):
        raise _Bad(f"clock_mhz = {m['clock_mhz']!r}: not a number")
    eb = 1 if bits == 8 else 2
    regions = {}
    for i, r in enumerate(_of(m["regions"], list, "regions")):
        where = f"regions[{i}]"
        _of(r, dict, where)
        for k in SCHEMA["region"]:
            if k not in r:
                raise _Bad(f"{where}: no {k}")
        if not isinstance(r["name"], str) or r["name"] in regions:
            raise _Bad(f"{where}.name = {str(r['name'])[:40]!r}: not a string, or a name used twice")
        where = f"region {r['name']}"
        if r["base_reg"] not in BASE_REGS:
            raise _Bad(f"{where}.base_reg = {str(r['base_reg'])[:20]!r}: not one of {list(BASE_REGS)}")
        dims = [_int(r[k], f"{where}.{k}", 1, _MAX_DIM) for k in ("channels", "h", "w")]
        pad = _int(r["pad"], f"{where}.pad", 0, _MAX_DIM)
        _int(r["zp"], f"{where}.zp", -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        end = _int(r["addr"], f"{where}.addr", 0, _MAX_BUFFER) + \
            dims[0] * (dims[1] + 2 * pad) * (dims[2] + 2 * pad) * eb
        if end > page_round(max(sizes[r["base_reg"]], 1)):       # (the driver's buffer: whole pages)
            raise _Bad(f"{where}: bytes [{r['addr']}, {end}) beyond its {r['base_reg']} buffer of "
                       f"{sizes[r['base_reg']]} bytes")
        if "im2col" in r:
            spec = _of(r["im2col"], dict, f"{where}.im2col")
            if sorted(spec) != sorted(IM2COL_KEYS):
                raise _Bad(f"{where}.im2col: keys {sorted(spec)}, not {sorted(IM2COL_KEYS)}")
            k, st = _int(spec["k"], f"{where}.im2col.k", 1, 64), _int(spec["s"], f"{where}.im2col.s", 1, 64)
            pads = spec["pads"]
            if not isinstance(pads, list) or len(pads) != 4:
                raise _Bad(f"{where}.im2col.pads = {str(pads)[:40]}: not 4 integers")
            t, left, b, right = (_int(v, f"{where}.im2col.pads", 0, 64) for v in pads)
            ih, iw, ic = (_int(spec[x], f"{where}.im2col.{x}", 1, _MAX_DIM) for x in ("h", "w", "c"))
            oh, ow = (ih + t + b - k) // st + 1, (iw + left + right - k) // st + 1
            if pad or (oh, ow) != (dims[1], dims[2]) or dims[0] < k * k * ic:
                raise _Bad(f"{where}: {dims[1]}x{dims[2]} pad {pad} x {dims[0]} channels is not the {k}x{k} "
                           f"stride-{st} im2col of [{ih}, {iw}, {ic}]")
        regions[r["name"]] = r
    _tensor(m["input"], "input", regions, bits, head=False)
    if m["input"].get("format") is not None:
        from .preprocess import INPUT_FORMATS
        if m["input"]["format"] not in INPUT_FORMATS:
            raise _Bad(f"input.format = {str(m['input']['format'])[:20]!r}: not one of {INPUT_FORMATS}")
    heads = _of(m["heads"], list, "heads")
    export = m.get("export")
    classes = set()
    for i, h in enumerate(heads):
        _tensor(h, f"heads[{i}]", regions, bits, head=True)
        if export is None:
            if "yolo" not in h:
                raise _Bad(f"heads[{i}]: no yolo entry (and no export entry)")
            classes.add(_yolo(h["yolo"], f"heads[{i}].yolo", h["channels"]))
    if len(classes) > 1:
        raise _Bad(f"heads: YOLO heads disagree on the number of classes {sorted(classes)}")
    if classes and len(names) < max(classes):
        raise _Bad(f"names: {len(names)} class names for {max(classes)} classes")
    if export is not None:
        from .preprocess import RESIZE_MODES
        _of(export, dict, "export")
        for k, typ in (("format", str), ("output", str), ("tail", list), ("consts", str), ("input_shapes", dict)):
            _of(export.get(k), typ, f"export.{k}")
        c = export["consts"]
        if not c or "/" in c or "\\" in c or c in ("..", "."):
            raise _Bad(f"export.consts = {export['consts']!r}: not a file name")
        if export.get("resize", "stretch") not in RESIZE_MODES:
            raise _Bad(f"export.resize = {str(export.get('resize'))[:20]!r}: not one of {RESIZE_MODES}")


def page_round(nbytes: int) -> int:
    """``nbytes`` rounded up to whole :data:`PAGE` pages (0 stays 0)."""
    return -(-int(nbytes) // PAGE) * PAGE


def region_shape(r: dict) -> tuple[int, int, int]:
    """[H + 2 pad, W + 2 pad, C] elements of region entry ``r`` (its border included)."""
    p = r["pad"]
    return r["h"] + 2 * p, r["w"] + 2 * p, r["channels"]


def tensor_window(t: dict) -> tuple[slice, slice, slice]:
    """The [h, w, channels] window of tensor entry ``t`` (input or head) in its region's [H+2p, W+2p, C] array."""
    p = t["pad"]
    return slice(p, p + t["h"]), slice(p, p + t["w"]), slice(t["ch_offset"], t["ch_offset"] + t["channels"])


def im2col_into(out: np.ndarray, x: np.ndarray, spec: dict, fill: int) -> np.ndarray:
    """Write the im2col patches of image ``x`` into ``out`` (an im2col region, see the module docstring).

    Element (oy, ox, (ky K + kx) C + c) of ``out`` [OH, OW, CP] is ``x[oy S - top + ky, ox S - left + kx, c]`` of
    ``x`` [H, W, C] (int8 / int16, NHWC), ``fill`` (the zero point) where that falls into the padding and for the
    elements from K K C on. ``spec``: the region's ``im2col`` entry (:data:`IM2COL_KEYS`). Returns ``out``.

    Raises:
        ValueError: ``x`` is not [h, w, c] of ``spec``, or ``out`` is not [OH, OW, >= K K C] of that convolution.
    """
    k, s, (top, left, bottom, right) = int(spec["k"]), int(spec["s"]), spec["pads"]
    h, w, c = int(spec["h"]), int(spec["w"]), int(spec["c"])
    oh, ow = (h + top + bottom - k) // s + 1, (w + left + right - k) // s + 1
    if x.shape != (h, w, c):
        raise ValueError(f"im2col: image {x.shape}, the region is made of [{h}, {w}, {c}]")
    if out.shape[:2] != (oh, ow) or out.shape[2] < k * k * c:
        raise ValueError(f"im2col: region {out.shape}, a {k}x{k} stride-{s} convolution of [{h}, {w}, {c}] needs "
                         f"[{oh}, {ow}, >= {k * k * c}]")
    # kernel row ky of every patch is K x C consecutive elements of the bordered image's row oy S + ky, from column
    # ox S: one strided view of the bordered image per kernel row (K copies of K C-element runs)
    xp = np.full((h + top + bottom, w + left + right, c), fill, out.dtype)
    xp[top:top + h, left:left + w] = x
    sy, sx, se = xp.strides
    for ky in range(k):
        out[:, :, ky * k * c:(ky + 1) * k * c] = np.lib.stride_tricks.as_strided(
            xp[ky:], shape=(oh, ow, k * c), strides=(s * sy, s * sx, se), writeable=False)
    out[:, :, k * k * c:] = fill
    return out


def input_target(region: np.ndarray, t: dict, r: dict):
    """``(x, commit)``: the [h, w, channels] array the host writes input tensor entry ``t`` into, and the call that
    puts it into ``region``, the [H + 2p, W + 2p, C] array of region entry ``r``: for an NHWC region ``x`` is the
    window itself (``commit`` does nothing), for an im2col region a host array whose patches ``commit`` writes
    (:func:`im2col_into`, the border value ``r["zp"]`` in the padding).

    Raises:
        PackageError: ``t``'s layout is neither NHWC nor IM2COL, or disagrees with the region.
    """
    if t["layout"] not in ("NHWC", "IM2COL") or (t["layout"] == "IM2COL") != ("im2col" in r):
        raise PackageError(f"input tensor {t['name']}: layout {t['layout']!r} with region {r['name']} "
                           f"({'im2col' if 'im2col' in r else 'NHWC'}): not a layout this driver writes")
    if "im2col" not in r:
        return region[tensor_window(t)], lambda: None
    x = np.empty((t["h"], t["w"], t["channels"]), region.dtype)
    return x, lambda: im2col_into(region, x, r["im2col"], r["zp"])

"""The deployment contract's ``manifest.json``: its schema, the DDR layout it describes, and its reader.

The generator's writer (:mod:`generator.flows.artifacts`) builds every entry through :func:`entry` and the whole
file through :func:`build_manifest`; the driver reads it through :func:`read_manifest`. Both sides therefore agree on
one key list per entry kind (:data:`SCHEMA`), in file order (the writer's output is byte-stable); the reader also
checks every value the driver uses (:mod:`host.manifest_check`) and returns the typed form
(:class:`host.manifest_types.Manifest`: one dataclass per entry kind, ``m.hardware.precisions``), and
:func:`verify_file` checks a package file against its ``files`` entry. Pure Python: runs on the board without the
generator.

DDR layout: the accelerator addresses DDR through four base registers (:data:`BASE_REGS`, in the order of the
instruction's ``base_reg`` field); the host allocates one buffer per base register (``base_sizes`` bytes, rounded up
to whole :data:`PAGE` pages). Each *region* is an NHWC tensor of ``h x w x channels`` elements with a ``pad``-wide
zero-point border, at byte ``addr`` of its base register's buffer (:func:`region_shape`), its elements of its own
precision: ``bits`` 8 (int8, one byte) or 16 (int16, two bytes little-endian; :func:`region_dtype`), so that one
program mixes int8 and int16 regions (ISA version 6: a layer computes in its input's precision and writes in its
output's). A *tensor* (the input, each head) is ``channels`` consecutive channels from ``ch_offset`` of a region's
interior (:func:`tensor_window`), of its region's precision. The ``hardware`` entry's ``precisions`` lists the
precisions the program's regions use, which the bitstream must implement (``hw_info``'s mode bits,
:func:`host.registers.unpack_hw_info`).

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
from .manifest_types import EntryError, Manifest, Region, Tensor

#: the base registers, in the order of their number in the instruction's ``base_reg`` field
BASE_REGS = ("WEIGHTS", "ACT", "INPUT", "OUTPUT")
#: host buffers are whole pages (bytes)
PAGE = 4096

_NUMBER = (int, float)
#: a scale: one number, or a list of per-channel scales (a head quantized per output channel)
_SCALE = (int, float, list)
#: key -> JSON type of each entry kind, in file order. ``manifest``: the top level; ``hardware``: the accelerator the
#: program is compiled for (compared with the ``hw_info`` / ``config_id`` registers; ``precisions``: the names of
#: :data:`PRECISIONS` the regions use, narrowest first; ``pix_lanes``: output pixels per DSP per cycle in int8);
#: ``register``: one AXI-Lite register (byte offset, 32 or 64 bits, access "r" / "w" / "rw"); ``net``: the network
#: input size in pixels; ``region``: a DDR region (``addr`` bytes into its base register's buffer, ``bits`` its
#: element precision 8 or 16, ``zp`` the value its border holds: the zero point, or the smallest integer of its
#: precision for a region read with padding by max-pools only; ``bytes`` border included);
#: ``tensor``: the input or a head (``offset`` = its region's ``addr``; ``pixel_stride`` = the region's channels;
#: ``bits`` = its region's, ``dtype`` its name; ``scale`` (a number, or one per channel) / ``zero_point``
#: dequantize it; heads add ``yolo``, the YOLO head parameters); ``layer``: one layer of the schedule (``insns`` =
#: [first, end) instruction indices).
SCHEMA = {
    "manifest": {"isa_version": int, "insn_bytes": int, "n_insns": int, "board": str, "part": str,
                 "clock_mhz": _NUMBER, "hardware": dict, "quant": str, "base_sizes": dict, "registers": dict,
                 "ctrl_bits": dict, "status_bits": dict, "regions": list, "input": dict, "heads": list, "net": dict,
                 "names": list, "layers": list, "predicted_cycles": int, "param_bytes": int},
    "hardware": {"tn": int, "tm": int, "precisions": list, "config_id": int, "pix_lanes": int},
    "register": {"offset": int, "bits": int, "access": str},
    "net": {"width": int, "height": int},
    "region": {"name": str, "base_reg": str, "addr": int, "channels": int, "h": int, "w": int, "pad": int,
               "bits": int, "zp": int, "scale": _SCALE, "bytes": int},
    "tensor": {"name": str, "region": str, "base_reg": str, "offset": int, "ch_offset": int, "channels": int,
               "h": int, "w": int, "pad": int, "pixel_stride": int, "layout": str, "scale": _SCALE,
               "zero_point": int, "dtype": str, "bits": int},
    "layer": {"name": str, "kind": str, "insns": list, "plan": str, "predicted_cycles": int, "macs": int,
              "ddr_bytes": int},
    "file": {"bytes": int, "sha256": str},
    "pre": {"resize": str, "format": str, "frame_w": int, "frame_h": int, "predicted_cycles": int,
            "prologue_insns": int},
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
#: ``pre``: the accelerator turns camera frames into the network input (PRE, issue 45): the model's ``resize`` mode
#: (:data:`host.preprocess.RESIZE_MODES`) and input ``format``, the frame size the prologue's ``predicted_cycles``
#: were priced for, and the prologue: ``prologue_insns`` instructions after the main program's ``n_insns`` in
#: program.bin (CONFIG, PRE of the whole input, END), run once for a stream's first frame; every main run then
#: computes the network on the input in the INPUT buffer and, in bands where its LOAD module would wait, PRE of the
#: frame in the PRE registers (:class:`host.pre.PreFrame`): the next frame of the stream. The driver writes no input
OPTIONAL = {"tensor": {"yolo": dict, "format": str},
            "manifest": {"calibration": dict, "export": dict, "files": dict, "pre": dict},
            "region": {"im2col": dict}}
#: the files a ``files`` entry must list (a package's binaries; plus the export's ``consts`` when there is one)
REQUIRED_FILES = ("program.bin", "weights.bin")
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: keys of a region's ``im2col`` entry: kernel ``k``, stride ``s``, ``pads`` (top, left, bottom, right) and the
#: image's ``h``, ``w``, ``c`` (NHWC)
IM2COL_KEYS = ("k", "s", "pads", "h", "w", "c")
#: element precision name -> bits, narrowest first (the names of ``hw_info``'s mode bits,
#: :data:`host.registers.HW_INFO_MODES`, and of the ISA's ``prec`` field)
PRECISIONS = {"int8": 8, "int16": 16}
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
    if "pre" in m:
        entry("pre", **m["pre"])
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


def verify_file(path, spec, data: bytes | None = None, expect_bytes: int | None = None) -> None:
    """Check a package file against its manifest ``files`` entry ``spec`` (size first, then SHA-256); with no
    ``spec`` (an older manifest) against ``expect_bytes`` when that is given.

    Args:
        path: the file (named in the error).
        spec: its ``file`` entry ({"bytes", "sha256"}, or a typed :class:`host.manifest_types.FileEntry`) or None.
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
    want = _get(spec, "bytes") if spec is not None else expect_bytes
    if len(data) != want:
        d = len(data) - want
        how = f"{abs(d)} byte{'s' if abs(d) != 1 else ''} {'longer' if d > 0 else 'shorter'} than the manifest says"
        raise PackageFileMismatchError(p, "bytes", want, len(data), how)
    if spec is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != _get(spec, "sha256"):
            raise PackageFileMismatchError(p, "sha256", _get(spec, "sha256"), got,
                                           "content differs from the manifest (SHA-256)")


def read_manifest(path) -> Manifest:
    """Parse a package's ``manifest.json``, check everything the driver uses
    (:func:`host.manifest_check.driver_problem`) and return its typed form (:class:`host.manifest_types.Manifest`).

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
    from .manifest_check import driver_problem     # (it imports this module's schema)
    problem = driver_problem(m)
    if problem:
        raise PackageError(f"{p}: {problem}")
    try:
        return Manifest.from_dict(m)
    except EntryError as e:         # (an entry the driver does not use, e.g. a layer, that is not an object)
        raise PackageError(f"{p}: {e}") from None


def page_round(nbytes: int) -> int:
    """``nbytes`` rounded up to whole :data:`PAGE` pages (0 stays 0)."""
    return -(-int(nbytes) // PAGE) * PAGE


def precision_names(bits) -> list[str]:
    """The ``hardware.precisions`` entry of a program whose regions have the element widths ``bits`` (an iterable of
    8 / 16): their :data:`PRECISIONS` names, each once, narrowest first. Raises ManifestError for another width."""
    names = {b: n for n, b in PRECISIONS.items()}
    bad = sorted({b for b in bits if b not in names}, key=str)
    if bad:
        raise ManifestError(f"manifest precisions: element widths {bad} are not {sorted(names)}")
    return [n for n, b in PRECISIONS.items() if b in set(bits)]


def _get(e, key: str, default=None):
    """Value ``key`` of entry ``e``: a dict (as the generator's layout holds regions) or a typed entry
    (:mod:`host.manifest_types`); ``default`` when it has none."""
    return e.get(key, default) if isinstance(e, dict) else getattr(e, key, default)


def region_dtype(r) -> np.dtype:
    """numpy element type of region (or tensor) entry ``r`` (a dict or a typed entry): int8 for ``bits`` 8,
    little-endian int16 for 16 (the accelerator's DDR layout). Raises PackageError for another ``bits``."""
    bits = _get(r, "bits")
    if bits == 8:
        return np.dtype(np.int8)
    if bits == 16:
        return np.dtype("<i2")
    raise PackageError(f"region {_get(r, 'name')}: bits = {bits!r}, not 8 or 16")


def region_shape(r) -> tuple[int, int, int]:
    """[H + 2 pad, W + 2 pad, C] elements of region entry ``r`` (a dict or a typed entry; its border included)."""
    p = _get(r, "pad")
    return _get(r, "h") + 2 * p, _get(r, "w") + 2 * p, _get(r, "channels")


def tensor_window(t) -> tuple[slice, slice, slice]:
    """The [h, w, channels] window of tensor entry ``t`` (input or head; a dict or a typed entry) in its region's
    [H+2p, W+2p, C] array."""
    p, c0 = _get(t, "pad"), _get(t, "ch_offset")
    return slice(p, p + _get(t, "h")), slice(p, p + _get(t, "w")), slice(c0, c0 + _get(t, "channels"))


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


def input_target(region: np.ndarray, t: Tensor, r: Region):
    """``(x, commit)``: the [h, w, channels] array the host writes input tensor entry ``t`` into, and the call that
    puts it into ``region``, the [H + 2p, W + 2p, C] array of region entry ``r`` (typed entries,
    :mod:`host.manifest_types`): for an NHWC region ``x`` is the window itself (``commit`` does nothing), for an
    im2col region a host array whose patches ``commit`` writes (:func:`im2col_into`, the border value ``r.zp`` in the
    padding).

    Raises:
        PackageError: ``t``'s layout is neither NHWC nor IM2COL, or disagrees with the region.
    """
    im2col = r.im2col is not None
    if t.layout not in ("NHWC", "IM2COL") or (t.layout == "IM2COL") != im2col:
        raise PackageError(f"input tensor {t.name}: layout {t.layout!r} with region {r.name} "
                           f"({'im2col' if im2col else 'NHWC'}): not a layout this driver writes")
    if not im2col:
        return region[tensor_window(t)], lambda: None
    x = np.empty((t.h, t.w, t.channels), region.dtype)
    return x, lambda: im2col_into(region, x, r.im2col, r.zp)

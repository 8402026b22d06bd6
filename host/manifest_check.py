"""The manifest values the PYNQ driver uses, checked before it uses any (:func:`driver_problem`).

:func:`host.manifest.read_manifest` calls :func:`driver_problem` on every manifest it reads, so that a damaged or
hand-edited ``manifest.json`` is refused at load with one :class:`host.errors.PackageError` naming the key (its
path in the manifest, e.g. ``heads[1].yolo.mask[0]``) instead of failing later inside numpy or on the hardware.
One function per entry kind: the top level (instruction size and count, hardware, register map, CTRL / status
bits, base register sizes, network size, class names, clock), the regions (each of its own precision, ``bits`` 8
or 16: its border value and byte size by it), the input and head tensors (of their region's precision, with the
heads' YOLO parameters) and the ``export`` entry. Pure Python: runs on the board without the generator.
"""
from __future__ import annotations

from .manifest import BASE_REGS, IM2COL_KEYS, PRECISIONS, SCHEMA, page_round

__all__ = ["driver_problem", "DRIVER_REGISTERS", "DRIVER_CTRL_BITS", "DRIVER_STATUS_BITS"]


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


def _tensor(t, where: str, regions: dict, head: bool) -> None:
    """A ``tensor`` entry the driver reads (input) or dequantizes (head), against its region (its ``bits`` and
    ``dtype`` the region's precision, its zero point of that precision)."""
    _of(t, dict, where)
    for k, typ in SCHEMA["tensor"].items():
        if k not in t:
            raise _Bad(f"{where}: no {k}")
    r = regions.get(t["region"]) if isinstance(t["region"], str) else None
    if r is None:
        raise _Bad(f"{where}.region = {str(t['region'])[:40]}: no such region")
    if t["base_reg"] != r["base_reg"]:
        raise _Bad(f"{where}.base_reg = {t['base_reg']!r}: its region {r['name']} is in {r['base_reg']}")
    bits = r["bits"]
    if isinstance(t["bits"], bool) or not isinstance(t["bits"], int) or t["bits"] != bits:
        raise _Bad(f"{where}.bits = {str(t['bits'])[:20]}: its region {r['name']} has bits {bits}")
    if t["dtype"] != f"int{bits}":
        raise _Bad(f"{where}.dtype = {str(t['dtype'])[:20]!r}: its region {r['name']} is int{bits}")
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
    """What in manifest ``m`` the driver cannot use (None: nothing), naming the key: every
    :data:`host.manifest.DRIVER_KEYS` value of its schema type and in range (instruction size and count, hardware,
    the register map with :data:`DRIVER_REGISTERS` and the base-address registers, the CTRL / status bits the
    driver uses, base register sizes up to 4 GiB, regions of 8 or 16 bits inside their base register's buffer,
    ``hardware.precisions`` the precisions the regions use, input and heads inside their regions, of their
    precision, with finite positive scales and zero points of that precision, darknet heads' YOLO parameters
    consistent with their channels and the class names), ``clock_mhz`` a number when present, the ``export``
    entry's keys. ``m`` must hold every :data:`host.manifest.DRIVER_KEYS` key (KeyError otherwise)."""
    try:
        precisions, sizes = _check_top(m)
        regions = _check_regions(m["regions"], sizes)
        used = [n for n, b in PRECISIONS.items() if any(r["bits"] == b for r in regions.values())]
        if precisions != used:
            raise _Bad(f"hardware.precisions = {precisions}: the regions use {used}")
        _check_tensors(m, regions)
        if m.get("export") is not None:
            _check_export(m["export"])
    except _Bad as e:
        return str(e)
    return None


def _check_top(m: dict) -> tuple[list, dict]:
    """The top-level values (instructions, hardware, registers, CTRL / status bits, base sizes, net, names,
    clock); returns the hardware's precisions (names of :data:`host.manifest.PRECISIONS`, each once, narrowest
    first) and the base sizes."""
    _int(m["isa_version"], "isa_version", 0, 255)
    _int(m["insn_bytes"], "insn_bytes", 1, 4096)
    _int(m["n_insns"], "n_insns", 0, 1 << 31)
    hw = _of(m["hardware"], dict, "hardware")
    for k, typ in SCHEMA["hardware"].items():
        if typ is int:
            _int(hw.get(k), f"hardware.{k}", 0, (1 << 32) - 1)
    precisions = _of(hw.get("precisions"), list, "hardware.precisions")
    if not precisions or precisions != [n for n in PRECISIONS if n in precisions] \
            or len(set(map(str, precisions))) != len(precisions):
        raise _Bad(f"hardware.precisions = {str(precisions)[:40]}: not distinct names of {list(PRECISIONS)}, "
                   f"narrowest first")
    _check_registers(m["registers"])
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
    return precisions, sizes


def _check_registers(regs) -> None:
    """The register map: offsets inside the AXI-Lite space and 32-bit aligned (AXI4-Lite data is 32 bits wide; pynq's
    MMIO refuses an unaligned offset), 32 or 64 bits, every register the driver uses."""
    regs = _of(regs, dict, "registers")
    for name, r in regs.items():
        _of(r, dict, f"registers.{name}")
        _int(r.get("offset"), f"registers.{name}.offset", 0, _MAX_REG_OFFSET - 8)
        if r["offset"] % 4:
            raise _Bad(f"registers.{name}.offset = {r['offset']:#x}: not a multiple of 4 (32-bit AXI-Lite registers)")
        if r.get("bits") not in (32, 64) or isinstance(r.get("bits"), bool):
            raise _Bad(f"registers.{name}.bits = {r.get('bits')!r}: not 32 or 64")
    need = [*DRIVER_REGISTERS, *(n.lower() for n in BASE_REGS)]
    missing = [n for n in need if n not in regs]
    if missing:
        raise _Bad(f"registers: no {', '.join(missing)}")


def _check_regions(items, sizes: dict) -> dict:
    """Every region entry: unique name, a base register, dimensions, its precision (``bits`` 8 or 16), a border
    value of that precision, ``bytes`` its size at that precision, inside its base register's (page-rounded)
    buffer, a consistent ``im2col`` entry. Returns {name: region}."""
    regions = {}
    for i, r in enumerate(_of(items, list, "regions")):
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
        bits = r["bits"]
        if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (8, 16):
            raise _Bad(f"{where}.bits = {str(bits)[:20]}: not 8 or 16")
        _int(r["zp"], f"{where}.zp", -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        nbytes = dims[0] * (dims[1] + 2 * pad) * (dims[2] + 2 * pad) * (bits // 8)
        if _int(r["bytes"], f"{where}.bytes", 0, _MAX_BUFFER) != nbytes:
            raise _Bad(f"{where}.bytes = {r['bytes']}: {dims[1]}x{dims[2]} pad {pad} x {dims[0]} channels of "
                       f"int{bits} are {nbytes} bytes")
        end = _int(r["addr"], f"{where}.addr", 0, _MAX_BUFFER) + nbytes
        if end > page_round(max(sizes[r["base_reg"]], 1)):       # (the driver's buffer: whole pages)
            raise _Bad(f"{where}: bytes [{r['addr']}, {end}) beyond its {r['base_reg']} buffer of "
                       f"{sizes[r['base_reg']]} bytes")
        if "im2col" in r:
            _check_im2col(r["im2col"], where, dims, pad)
        regions[r["name"]] = r
    return regions


def _check_im2col(spec, where: str, dims: list, pad: int) -> None:
    """A region's ``im2col`` entry: its keys, and the region ([channels, h, w] ``dims``, no border) being that
    convolution's patches."""
    spec = _of(spec, dict, f"{where}.im2col")
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


def _check_tensors(m: dict, regions: dict) -> None:
    """The input tensor (and its ``format``) and the heads; without an ``export`` every head's ``yolo`` entry,
    the heads agreeing on one class count that the class names cover."""
    _tensor(m["input"], "input", regions, head=False)
    if m["input"].get("format") is not None:
        from .preprocess import INPUT_FORMATS
        if m["input"]["format"] not in INPUT_FORMATS:
            raise _Bad(f"input.format = {str(m['input']['format'])[:20]!r}: not one of {INPUT_FORMATS}")
    heads = _of(m["heads"], list, "heads")
    export = m.get("export")
    classes = set()
    for i, h in enumerate(heads):
        _tensor(h, f"heads[{i}]", regions, head=True)
        if export is None:
            if "yolo" not in h:
                raise _Bad(f"heads[{i}]: no yolo entry (and no export entry)")
            classes.add(_yolo(h["yolo"], f"heads[{i}].yolo", h["channels"]))
    if len(classes) > 1:
        raise _Bad(f"heads: YOLO heads disagree on the number of classes {sorted(classes)}")
    if classes and m["names"] and len(m["names"]) < max(classes):   # (none: a compile without names, labels by id)
        raise _Bad(f"names: {len(m['names'])} class names for {max(classes)} classes")


def _check_export(export) -> None:
    """The ``export`` entry (a decode in the graph): its keys' types, ``consts`` a plain file name, a resize mode
    the pre-processing knows."""
    from .preprocess import RESIZE_MODES
    _of(export, dict, "export")
    for k, typ in (("format", str), ("output", str), ("tail", list), ("consts", str), ("input_shapes", dict)):
        _of(export.get(k), typ, f"export.{k}")
    c = export["consts"]
    if not c or "/" in c or "\\" in c or c in ("..", "."):
        raise _Bad(f"export.consts = {export['consts']!r}: not a file name")
    if export.get("resize", "stretch") not in RESIZE_MODES:
        raise _Bad(f"export.resize = {str(export.get('resize'))[:20]!r}: not one of {RESIZE_MODES}")

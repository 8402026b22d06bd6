"""The memories of the port analysis (:mod:`generator.backends.hls.lint.ports`): what an array, pointer or stream of
a top function (or a local array) is after its pragmas -- its storage and ports, its ARRAY_PARTITION /
ARRAY_RESHAPE per dimension -- and which physical memory (bank) an access reaches.

Storage and ports per cycle (UG1399 "pragma HLS interface" ``storage_type``, "pragma HLS bind_storage"):
``ram_1p`` one access (read or write): II >= R + W; ``ram_2p`` / ``ram_s2p`` one read and one write: II >=
max(R, W); ``ram_t2p`` two accesses of any kind: II >= ceil((R + W) / 2); an m_axi bundle one read beat and one
write beat (its read and write channels): II >= max(R, W); a stream one transfer: II >= R + W; registers (an array
partitioned completely in every dimension) unlimited. An ``INTERFACE mode=bram`` / ``ap_memory`` port without
``storage_type`` is ``ram_1p``; a local array without ``BIND_STORAGE`` ``ram_2p``; a global (constant) array a
``ram_2p`` ROM.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import clang.cindex as ci

from generator.backends.hls.lint import clang_ast

K = ci.CursorKind
TK = ci.TypeKind
#: storage types with their port rule (see the module docstring)
STORAGES = ("ram_1p", "ram_2p", "ram_s2p", "ram_t2p", "m_axi", "stream", "reg")


def port_ii(storage: str, r: int, w: int) -> int:
    """The II lower bound of ``r`` reads and ``w`` writes per iteration on one physical memory of ``storage``."""
    if storage == "reg" or r + w == 0:
        return 1 if r + w else 0
    if storage in ("ram_2p", "ram_s2p", "m_axi"):
        return max(r, w)
    if storage == "ram_t2p":
        return math.ceil((r + w) / 2)
    return r + w          # ram_1p, stream


def pragma_kv(args) -> tuple[dict, list]:
    """The ``key=value`` pairs (keys lower case) and bare words of a pragma's argument tokens."""
    words = " ".join(args).replace(" = ", "=").replace("= ", "=").replace(" =", "=").split()
    kv, bare = {}, []
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            kv[k.lower()] = v
        else:
            bare.append(w.lower())
    return kv, bare


@dataclass(eq=False)
class Memory:
    """One array / pointer / stream of a top (``kind`` bram, m_axi, axis, fifo, rom) or a local array (bram):
    ``dims`` the array's sizes (None unknown), ``part`` / ``reshape`` {dim (1-based): (type, factor)}, ``bundle``
    the m_axi bundle, ``burst`` accessed through hls::burst_maxi."""
    name: str
    kind: str
    storage: str
    dims: list = field(default_factory=list)
    part: dict = field(default_factory=dict)
    reshape: dict = field(default_factory=dict)
    bundle: str | None = None
    top: str = ""
    line: int = 0

    @property
    def is_reg(self) -> bool:
        """Every dimension partitioned completely: registers, no port limit."""
        return bool(self.dims) and all(self.part.get(d + 1, ("",))[0] == "complete" for d in range(len(self.dims)))

    def banks(self, d: int) -> int:
        """Physical memories dimension ``d`` (1-based, partitioned) splits into."""
        typ, factor = self.part[d]
        size = self.dims[d - 1] if d - 1 < len(self.dims) else None
        if typ == "complete":
            return size or 1
        return factor or 1

    def bank_of(self, d: int, value: int) -> int:
        """The bank of dimension ``d`` a constant index selects."""
        typ, factor = self.part[d]
        if typ == "complete":
            return value
        if typ == "cyclic":
            return value % factor
        size = self.dims[d - 1] or factor
        return value // max(1, math.ceil(size / factor))

    def physical(self) -> str:
        """The identity of the port group: the bundle for m_axi (its arrays share the ports), else the name."""
        return f"m_axi bundle {self.bundle}" if self.kind == "m_axi" else self.name


def array_dims(t) -> list:
    """Sizes of the dimensions of an array type (a pointer: one unknown dimension; a scalar: none)."""
    t = clang_ast.strip_ref(t) if t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE) else t.get_canonical()
    dims = []
    while True:
        if t.kind == TK.CONSTANTARRAY:
            dims.append(t.element_count)
            t = t.element_type.get_canonical()
        elif t.kind in (TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY):
            dims.append(None)
            t = t.element_type.get_canonical()
        elif t.kind == TK.POINTER and not dims:
            dims.append(None)
            t = t.get_pointee().get_canonical()
        else:
            return dims


def apply_partitions(mem: Memory, pragmas, var: str) -> None:
    """ARRAY_PARTITION / ARRAY_RESHAPE pragmas (``variable=var``) onto ``mem`` (``dim=0``: every dimension)."""
    for p in pragmas:
        if p.directive not in ("ARRAY_PARTITION", "ARRAY_RESHAPE"):
            continue
        kv, bare = pragma_kv(p.args)
        if kv.get("variable") != var:
            continue
        typ = kv.get("type", next((b for b in bare if b in ("complete", "cyclic", "block")), "complete")).lower()
        factor = int(kv["factor"]) if kv.get("factor", "").isdigit() else 0
        dim = int(kv.get("dim", "1")) if kv.get("dim", "1").isdigit() else 1
        dims = range(1, len(mem.dims) + 1) if dim == 0 else [dim]
        for d in dims:
            (mem.part if p.directive == "ARRAY_PARTITION" else mem.reshape)[d] = (typ, factor)


def top_memories(fn, pragmas) -> dict:
    """{parameter cursor hash: Memory} of the top function ``fn`` from its INTERFACE, ARRAY_PARTITION and
    ARRAY_RESHAPE pragmas (``pragmas``: those of its body). Scalars are left out."""
    ports = {}
    for p in pragmas:
        if p.directive == "INTERFACE":
            kv, bare = pragma_kv(p.args)
            mode = kv.get("mode", bare[0] if bare else "").lower()
            if "port" in kv and not (mode == "s_axilite" and kv["port"] in ports):   # (an m_axi offset register)
                ports[kv["port"]] = (mode, kv, p.line)
    out = {}
    for prm in (c for c in fn.get_children() if c.kind == K.PARM_DECL):
        name, t = prm.spelling, prm.type
        mode, kv, line = ports.get(name, ("", {}, prm.location.line))
        spelled = clang_ast.strip_ref(t).spelling
        if clang_ast.is_stream_type(t):
            mem = Memory(name, "axis" if mode == "axis" else "fifo", "stream")
        elif "burst_maxi" in spelled or mode == "m_axi":
            mem = Memory(name, "m_axi", "m_axi", [None], bundle=kv.get("bundle", "gmem"))
        elif array_dims(t) and (mode in ("bram", "ap_memory", "") or t.get_canonical().kind != TK.POINTER):
            dims = array_dims(t)
            if t.get_canonical().kind == TK.POINTER and mode == "":
                mem = Memory(name, "m_axi", "m_axi", [None], bundle="gmem")
            else:
                st = kv.get("storage_type", "ram_1p").lower()
                mem = Memory(name, "bram", st if st in STORAGES else "ram_1p", dims)
                apply_partitions(mem, pragmas, name)
        else:
            continue
        mem.top, mem.line = fn.spelling, line
        out[prm.hash] = mem
    return out


def local_memory(v, pragmas, top: str) -> Memory | None:
    """The Memory of a local (or global) array ``v`` (VAR_DECL) from its function's pragmas (BIND_STORAGE,
    ARRAY_PARTITION, ARRAY_RESHAPE), None for a scalar or a pointer."""
    t = v.type.get_canonical()
    if t.kind not in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
        if clang_ast.is_stream_type(v.type):
            return Memory(v.spelling, "fifo", "stream", top=top, line=v.location.line)
        return None
    glob = v.semantic_parent is not None and v.semantic_parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE)
    mem = Memory(v.spelling, "rom" if glob else "bram", "ram_2p", array_dims(v.type), top=top, line=v.location.line)
    for p in pragmas:
        if p.directive == "BIND_STORAGE":
            kv, _ = pragma_kv(p.args)
            if kv.get("variable") == v.spelling and kv.get("type", "").lower() in STORAGES:
                mem.storage = kv["type"].lower()
    apply_partitions(mem, pragmas, v.spelling)
    if mem.is_reg:
        mem.storage = "reg"
    return mem

"""Dependency tokens from dependencies: the flags of a program derived from which instruction must wait for which.

The four token FIFOs of :mod:`generator.spec.isa` are positional: the m-th pop of a FIFO waits for its m-th push,
and both modules run their instructions in program order, so the pushes of a FIFO happen in program order. A
dependency "consumer waits for producer" (the producer in the module that pushes onto the FIFO, the consumer in the
module that pops from it) therefore holds if the producer pushes and, counting in program order, the consumer's
pops up to and including its own reach the producer's push. :func:`set_tokens` gives every producer one push and
places the fewest early pops so that each consumer, popping at most once, reaches its latest producer and the pops
balance the pushes at the end (a pop beyond a consumer's own need only waits longer; it never reorders).
:func:`token_pairs` reads the dependencies back from a program's flags.
"""
from __future__ import annotations

from generator.spec import isa

#: per FIFO: (producer module, its push flag, consumer module, its pop flag); see generator.spec.timing_engine
CHANNELS = {"l2c": ("load", "push_next", "compute", "pop_prev"),
            "c2l": ("compute", "push_prev", "load", "pop_next"),
            "c2s": ("compute", "push_next", "store", "pop_prev"),
            "s2c": ("store", "push_prev", "compute", "pop_next")}


def _members(insns: list, module: str) -> list:
    """The instructions of ``module`` up to the first END, in program order."""
    out = []
    for ins in insns:
        if ins.module == module:
            out.append(ins)
        if ins.op == "END":
            break
    return out


def token_pairs(insns: list, ch: str) -> list[tuple]:
    """(producer, consumer) instruction pairs of FIFO ``ch`` in ``insns``: the m-th push and the m-th pop.
    Raises ValueError if pushes and pops do not balance."""
    prod_mod, push, cons_mod, pop = CHANNELS[ch]
    pushes = [i for i in _members(insns, prod_mod) if i.f[push]]
    pops = [i for i in _members(insns, cons_mod) if i.f[pop]]
    if len(pushes) != len(pops):
        raise ValueError(f"token FIFO {ch}: {len(pushes)} pushes, {len(pops)} pops")
    return list(zip(pushes, pops))


def set_tokens(insns: list, ch: str, deps: list[tuple]) -> None:
    """Set FIFO ``ch``'s push and pop flags of ``insns`` from ``deps``, (producer, consumer) instruction pairs (see
    the module docstring): a dependency already implied -- an earlier consumer (or this one) waits for a producer
    at or after this one's, and both modules run in order -- needs no token; every other consumer pops once and
    its latest producer pushes. Raises ValueError for a producer or consumer of the wrong module."""
    prod_mod, push, cons_mod, pop = CHANNELS[ch]
    producers, consumers = _members(insns, prod_mod), _members(insns, cons_mod)
    order = {id(ins): k for k, ins in enumerate(producers)}
    latest = {}
    for p, c in deps:
        if p.module != prod_mod or c.module != cons_mod or id(p) not in order:
            raise ValueError(f"token FIFO {ch}: {p.op} -> {c.op} is not {prod_mod} -> {cons_mod} of the program")
        latest[id(c)] = max(latest.get(id(c), -1), order[id(p)])
    needed, covered = set(), -1
    for ins in consumers:
        k = latest.get(id(ins), -1)
        ins.f[pop] = int(k > covered)
        if ins.f[pop]:
            needed.add(k)
            covered = k
    for k, ins in enumerate(producers):
        ins.f[push] = int(k in needed)


def _elem_bytes(ins) -> int:
    """Bytes per element of a LOAD / STORE: 1 + its ``prec`` (PBUF and TBUF records: 16 bytes)."""
    f = ins.f
    return isa.PARAM_RECORD_BYTES if ins.op == "LOAD" and f["buf"] >= isa.BUFFERS["PBUF"] else 1 + f["prec"]


def ddr_extent(ins) -> tuple[int, int, int]:
    """(base register, first byte, end byte) a LOAD or STORE touches in DDR (bounding interval, byte offsets from
    its base register; strides are unsigned fields; elements of its ``prec``'s size)."""
    f = ins.f
    eb = _elem_bytes(ins)
    if not (f["rows"] and f["cols"] and f["elems"]):
        return f["base_reg"], f["ddr_offset"], f["ddr_offset"]
    end = f["ddr_offset"] + (f["rows"] - 1) * f["row_stride"] + (f["cols"] - 1) * f["pix_stride"] + f["elems"] * eb
    return f["base_reg"], f["ddr_offset"], end


def _box(ins, row: int, pix: int):
    """The (row, pixel, byte-in-pixel) index ranges a LOAD / STORE touches, in a tensor of ``row`` / ``pix``
    byte strides, or None when its own strides are not those or its runs do not fit a pixel."""
    f = ins.f
    run = f["elems"] * _elem_bytes(ins)
    if (f["rows"] > 1 and f["row_stride"] != row) or (f["cols"] > 1 and f["pix_stride"] != pix) or run > pix:
        return None
    r0, rest = divmod(f["ddr_offset"], row)
    p0, b0 = divmod(rest, pix)
    if b0 + run > pix or p0 + f["cols"] > row // pix:
        return None
    return (r0, r0 + f["rows"]), (p0, p0 + f["cols"]), (b0, b0 + run)


def ddr_overlap(a, b) -> bool:
    """Whether LOAD / STORE ``a`` and ``b`` may touch a common DDR byte: their bounding intervals
    (:func:`ddr_extent`) overlap and, when both walk one tensor (equal row and pixel strides), so do their row,
    pixel and byte-in-pixel ranges. Elements of each one's ``prec``."""
    (ra, lo_a, hi_a), (rb, lo_b, hi_b) = ddr_extent(a), ddr_extent(b)
    if ra != rb or hi_a <= lo_a or hi_b <= lo_b or not (lo_a < hi_b and lo_b < hi_a):
        return False
    row, pix = b.f["row_stride"], b.f["pix_stride"]
    if not (row and pix and row % pix == 0):
        return True
    box_a, box_b = _box(a, row, pix), _box(b, row, pix)
    if box_a is None or box_b is None:
        return True
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(box_a, box_b))

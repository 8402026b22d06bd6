"""Cross-layer prefetch of a layer's constants: its PBUF records and its first weight tile are loaded while the
previous layer drains (its last POSTs and STOREs), not after the layer barrier.

A layer's instructions begin with its PBUF LOAD and its first step's LOADs; the barrier (the previous layer's last
STORE -> SYNC -> this layer's first LOAD) orders the layer after everything the previous one wrote. Only the ifmap
depends on it: weights and parameters are constants in DDR. :func:`prefetch_constants` moves the PBUF LOAD and the
first step's weight LOAD ahead of the barrier, behind a token from the previous layer's last COMPUTE (no COMPUTE of
that layer reads WBUF any more, so either bank may be refilled), and leaves the ifmap LOADs (and an activation
table's TBUF LOAD) behind it. The previous layer's POSTs still read PBUF while the next layer's records arrive, so
consecutive layers take disjoint PBUF records (:func:`pbuf_bases`, a ring); a layer whose records do not fit beside
its predecessor's keeps its PBUF LOAD behind the barrier. The ordering follows the module / token model of
:mod:`generator.spec.isa` (TVM-VTA's decoupled access-execute), so every executor honours it without change.
"""
from __future__ import annotations

from generator.spec import isa

PBUF, WBUF = isa.BUFFERS["PBUF"], isa.BUFFERS["WBUF"]


def pbuf_bases(records: list[int], capacity: int) -> list[int | None]:
    """PBUF record base of each layer (``records[k]``: the layer's PBUF records, a multiple of the lane pitch;
    ``capacity``: :attr:`generator.spec.timing.HwConfig.pbuf_index`): right after its predecessor's records if both
    fit, else at 0 if that is below the predecessor's, else None (its records overlap the predecessor's: loaded
    behind the barrier, at 0). The first layer is at 0."""
    bases: list[int | None] = []
    prev_lo, prev_hi = 0, 0
    for k, n in enumerate(records):
        if k == 0:
            base = 0
        elif prev_hi + n <= capacity:
            base = prev_hi
        elif n <= prev_lo:
            base = 0
        else:
            base = None
        bases.append(base)
        lo = base or 0
        prev_lo, prev_hi = lo, lo + n
    return bases


def place_pbuf(body: list, base: int) -> None:
    """Put a layer's PBUF records at record ``base``: its PBUF LOAD's ``dst_word`` and every POST's ``pbuf_oc``
    (``base`` a multiple of the lane pitch, as ``pbuf_oc`` must be)."""
    for ins in body:
        if ins.op == "LOAD" and ins.f["buf"] == PBUF:
            ins.f["dst_word"] += base
        elif ins.op == "POST":
            ins.f["pbuf_oc"] += base


def prefetch_constants(prev_body: list, body: list, pbuf_early: bool) -> list:
    """Reorder the head of ``body`` (a layer after ``prev_body``, both as :func:`generator.codegen.emit.emit_layer`
    returns them) for the prefetch of the module docstring and set its token flags; returns the new body.

    The head: the LOADs before the first COMPUTE. Early (ahead of the barrier): the PBUF LOAD if ``pbuf_early``,
    and the first step's weight LOAD; the first early LOAD pops the token the previous layer's last COMPUTE now
    pushes (``push_prev``). Late: the rest, in their order; its first LOAD pops the barrier token, its last pushes
    the first COMPUTE's token. Without early LOADs only the barrier flag is set."""
    first_compute = next(k for k, ins in enumerate(body) if ins.op == "COMPUTE")
    head, tail = body[:first_compute], body[first_compute:]
    early = [ins for ins in head if (ins.f["buf"] == PBUF and pbuf_early) or ins.f["buf"] == WBUF]
    late = [ins for ins in head if all(ins is not e for e in early)]
    for ins in head:
        ins.f["pop_next"], ins.f["push_next"] = 0, 0
    late[0].f["pop_next"], late[-1].f["push_next"] = 1, 1
    if early:
        last_compute = next(ins for ins in reversed(prev_body) if ins.op == "COMPUTE")
        last_compute.f["push_prev"] = 1
        early[0].f["pop_next"] = 1
    return early + late + tail

"""Layers joined into one program, overlapping at their boundaries: the next layer's constants are prefetched and
its first output tile runs while the previous layer drains.

Each layer's instructions (:func:`generator.codegen.emit.emit_layer`) begin with its PBUF LOAD and its first
step's LOADs and end with the POSTs and STOREs of its last tiles. A plain barrier (the previous layer's last STORE
-> SYNC -> the layer's first LOAD) orders the whole layer after everything the previous one wrote; two things at a
boundary do not need it:

* Constants: weights and parameters do not depend on the previous layer. The PBUF LOAD and the first step's weight
  LOAD go ahead of the barrier, behind the previous layer's last COMPUTE (no COMPUTE of it reads WBUF any more).
  Its last POSTs still read PBUF, so consecutive layers take disjoint PBUF records (:func:`pbuf_bases`, a ring).
* The first output tile: its ifmap rows were written by the previous layer's early tiles. The barrier SYNC waits
  for the STOREs of the latest tile the first tile's LOADs read (DDR footprints, :func:`generator.codegen.tokens.ddr_overlap`),
  not for the last; a second SYNC, right after the first tile's COMPUTEs, waits for the last STORE and holds back
  every later LOAD. The first tile accumulates into the bank of the previous layer's second-to-last tile (the
  layer's ACC banks are swapped when needed) and waits for that tile's POSTs; the second tile's bank is freed by
  the second SYNC. Boundaries where the first tile reads the last two tiles' outputs, or the layer loads an
  activation table (TBUF, read by the previous POSTs), keep the plain barrier.

The dependencies are listed and the token flags derived from them (:func:`generator.codegen.tokens.set_tokens`),
following the module / token model of :mod:`generator.spec.isa` (TVM-VTA's decoupled access-execute), so every
executor honours the overlap without change.
"""
from __future__ import annotations

from generator.codegen.tokens import ddr_overlap, set_tokens, token_pairs
from generator.spec import isa

PBUF, WBUF, TBUF, IBUF = (isa.BUFFERS[k] for k in ("PBUF", "WBUF", "TBUF", "IBUF"))


def pbuf_bases(records: list[int], capacity: int) -> list[int | None]:
    """PBUF record base of each layer (``records[k]``: the layer's PBUF records, a multiple of the lane pitch;
    ``capacity``: :attr:`generator.spec.hw.HwConfig.pbuf_index`): right after its predecessor's records if both
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


def _tiles(body: list) -> tuple[list, list]:
    """(store-module instructions per output tile, index in ``body`` of each tile's first COMPUTE): a tile's
    POSTs and STOREs start at a POST that pops (waits for its COMPUTEs); its COMPUTEs at one that initialises the
    accumulators."""
    stores, starts = [], []
    for k, ins in enumerate(body):
        if ins.op == "POST" and ins.f["pop_prev"]:
            stores.append([])
        if ins.module == "store":
            stores[-1].append(ins)
        if ins.op == "COMPUTE" and ins.f["acc_init"]:
            starts.append(k)
    return stores, starts


def _hoist_constants(body: list, pbuf_early: bool) -> tuple[list, list, list]:
    """(body, early LOADs, late LOADs): the head of ``body`` (the LOADs before its first COMPUTE) reordered, the
    PBUF LOAD (if ``pbuf_early``) and the first weight LOAD first, the rest (ifmap, TBUF) after them; the last
    late LOAD pushes the first COMPUTE's token (l2c)."""
    first_compute = next(k for k, ins in enumerate(body) if ins.op == "COMPUTE")
    head = body[:first_compute]
    early = [ins for ins in head if (ins.f["buf"] == PBUF and pbuf_early) or ins.f["buf"] == WBUF]
    late = [ins for ins in head if all(ins is not e for e in early)]
    for ins in head:
        ins.f["push_next"] = 0
    late[-1].f["push_next"] = 1
    return early + late + body[first_compute:], early, late


def _first_tile_reads(body: list, prev_stores: list, end: int) -> int:
    """The latest tile of ``prev_stores`` (store-module instructions per tile of the previous layer) whose STOREs
    may write DDR bytes an ifmap LOAD of ``body[:end]`` reads (:func:`generator.codegen.tokens.ddr_overlap`;
    -1: none)."""
    reads = [ins for ins in body[:end] if ins.op == "LOAD" and ins.f["buf"] == IBUF]
    for t in range(len(prev_stores) - 1, -1, -1):
        if any(ddr_overlap(ins, r) for ins in prev_stores[t] if ins.op == "STORE" for r in reads):
            return t
    return -1


def join_layers(bodies: list, bases: list, hw, cycles=None) -> tuple[list, list]:
    """The program's layers: ``bodies`` (each layer's instructions, intra-layer token flags set) with their PBUF
    records at ``bases`` (:func:`pbuf_bases`), joined as the module docstring says for the
    :class:`~generator.spec.hw.HwConfig` ``hw``: at each boundary the plain barrier and every overlap the
    previous layer's STOREs allow (the first one or two tiles early; the second SYNC after the first COMPUTE or
    after the early tiles) are timed on the two layers alone, and the fastest is taken. Returns (instructions
    without CONFIG and END, (first, end) index range of each layer in them); the c2l and s2c token flags are
    re-derived for the whole program (:func:`generator.codegen.tokens.set_tokens`). ``cycles(insns)``: how a
    boundary's option is timed (default :func:`generator.spec.timing_engine.program_cycles` without the END token
    check; the scheduler passes its memo of instruction costs, the same count)."""
    deps = {"c2l": [], "s2c": []}
    for body in bodies:
        for ch in deps:
            deps[ch] += token_pairs(body, ch)
    for k, body in enumerate(bodies):
        place_pbuf(body, bases[k] or 0)
        if k > 0:
            early = bases[k] is not None
            choice = min(_choices(bodies[k - 1], body, early),
                         key=lambda c: (_pair_cycles(hw, bodies[k - 1], body, early, c, cycles), c is not None))
            body, extra = _join(bodies[k - 1], body, early, choice)
            for ch in deps:
                deps[ch] += extra[ch]
        if k < len(bodies) - 1:
            body.append(isa.make("SYNC"))
        bodies[k] = body
    insns, ranges = [], []
    for body in bodies:
        ranges.append((len(insns), len(insns) + len(body)))
        insns.extend(body)
    for ch, d in deps.items():
        set_tokens(insns, ch, d)
    return insns, ranges


def _choices(prev: list, body: list, pbuf_early: bool) -> list:
    """The boundary's options: None (the plain barrier), and (j, a, slot) for every overlap the previous layer's
    STOREs allow: tiles 0..j early (j = 0, 1), reading its tiles <= a <= n - 2, the second SYNC after the
    first COMPUTE (slot 0) or after tile j's COMPUTEs (slot 1)."""
    prev_stores, _ = _tiles(prev)
    _, starts = _tiles(body)
    n = len(prev_stores)
    if n < 2 or not pbuf_early or any(ins.op == "LOAD" and ins.f["buf"] == TBUF for ins in body):
        return [None]
    out = [None]
    for j in range(min(2, len(starts))):
        a = _first_tile_reads(body, prev_stores, _tile_end(body, starts, j))
        if a <= n - 2:
            out += [(j, a, slot) for slot in ((0, 1) if j + 1 < len(starts) else (1,))]
    return out


def _tile_end(body: list, starts: list, t: int) -> int:
    """The index in ``body`` just past tile t's last COMPUTE (the next tile's LOADs follow it)."""
    stop = starts[t + 1] if t + 1 < len(starts) else len(body)
    return 1 + max(k for k in range(stop) if body[k].op == "COMPUTE")


def _pair_cycles(hw, prev: list, body: list, pbuf_early: bool, choice, cycles=None) -> int:
    """Cycles of ``prev`` then ``body`` joined by ``choice`` (on copies), run alone by the timing engine."""
    from generator.codegen.emit import config_insn
    from generator.spec.timing_engine import program_cycles

    prev, body = _copies(prev) + [isa.make("SYNC")], _copies(body)
    deps = {ch: token_pairs(prev, ch) + token_pairs(body, ch) for ch in ("c2l", "s2c")}
    body, extra = _join(prev, body, pbuf_early, choice)
    insns = [config_insn(hw)] + prev + body + [isa.make("END")]
    for ch in deps:
        set_tokens(insns, ch, deps[ch] + extra[ch])
    return cycles(insns) if cycles else program_cycles(hw, insns, check_end_tokens=False)


def _copies(insns: list) -> list:
    """Copies of ``insns`` whose fields :func:`_join` and the token flags may change (the fields are ints)."""
    return [isa.Insn(i.op, dict(i.f)) for i in insns]


def _join(prev: list, body: list, pbuf_early: bool, choice) -> tuple[list, dict]:
    """``body`` after ``prev`` (ending with its SYNC) joined by ``choice`` (see :func:`_choices`): the reordered
    body (with a second SYNC when its first tiles overlap the previous layer's drain) and the boundary's
    dependencies ({"c2l": [...], "s2c": [...]} of (producer, consumer) pairs)."""
    deps = {"c2l": [], "s2c": []}
    sync_a = prev[-1]
    prev_stores, _ = _tiles(prev)
    last_compute = next(ins for ins in reversed(prev) if ins.op == "COMPUTE")
    body, early, late = _hoist_constants(body, pbuf_early)
    if early:
        deps["c2l"].append((last_compute, early[0]))
    deps["c2l"].append((sync_a, late[0]))
    if choice is None:
        deps["s2c"].append((prev_stores[-1][-1], sync_a))   # the plain barrier
        return body, deps
    j, a, slot = choice
    _, starts = _tiles(body)
    n = len(prev_stores)
    if a >= 0:
        deps["s2c"].append((prev_stores[a][-1], sync_a))
    posts = [[ins for ins in prev_stores[t] if ins.op == "POST"][-1] for t in (n - 2, n - 1)]
    if body[starts[0]].f["acc_bank"] != posts[0].f["acc_bank"]:   # tile 0 takes tile n-2's bank, tile 1 n-1's
        for ins in body:
            if ins.op in ("COMPUTE", "POST"):
                ins.f["acc_bank"] ^= 1
    for t in range(min(2, len(starts))):
        deps["s2c"].append((posts[t], body[starts[t]]))
    # the previous layer's last STORE: before any LOAD after the early tiles (a second SYNC), or, when they are
    # the whole layer, before its last tile's COMPUTE, so that every later boundary finds its POSTs done
    if j + 1 < len(starts):
        at = starts[0] + 1 if slot == 0 else _tile_end(body, starts, j)
        sync_b = isa.make("SYNC")
        body = body[:at] + [sync_b] + body[at:]
        deps["s2c"].append((prev_stores[-1][-1], sync_b))
        later = [ins for ins in body[_tile_end(body, _tiles(body)[1], j):] if ins.op == "LOAD"]
        if later:
            deps["c2l"].append((sync_b, later[0]))
    else:
        deps["s2c"].append((prev_stores[-1][-1], body[starts[j]]))
    return body, deps

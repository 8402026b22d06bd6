"""Layers overlapping at their boundaries (generator/codegen/overlap.py): every conflicting pair of accesses of a
compiled program -- DDR bytes, IBUF / WBUF / ACC banks, PBUF records, TBUF -- is ordered by the program's module
order and dependency tokens (checked on a happens-before graph built from the flags alone, with exact byte
sets); the token flags derived from dependency lists (generator/codegen/tokens.py); and the overlap pays."""
from __future__ import annotations

import numpy as np
import pytest

from generator.codegen.tokens import CHANNELS, set_tokens, token_pairs
from generator.exec.rtl import SMALL
from generator.flows.pipeline import compile_model
from generator.flows.rtl_frame import model_at_resolution
from generator.spec import isa
from helpers import board, compiled_model

IBUF, WBUF, PBUF, TBUF = (isa.BUFFERS[k] for k in ("IBUF", "WBUF", "PBUF", "TBUF"))


def _ancestors(insns: list) -> list[int]:
    """Per instruction (up to END) the bitset of the instructions that complete before it starts: its module's
    earlier instructions and, through the token FIFOs, the producers of the tokens it pops (transitively)."""
    n = next(k for k, i in enumerate(insns) if i.op == "END") + 1
    idx = {id(i): k for k, i in enumerate(insns[:n])}
    preds = [[] for _ in range(n)]
    last = {}
    for k, ins in enumerate(insns[:n]):
        if ins.module in last:
            preds[k].append(last[ins.module])
        last[ins.module] = k
    for ch in CHANNELS:
        for p, c in token_pairs(insns[:n], ch):
            preds[idx[id(c)]].append(idx[id(p)])
    indeg = [len(p) for p in preds]
    succ = [[] for _ in range(n)]
    for k, ps in enumerate(preds):
        for p in ps:
            succ[p].append(k)
    anc, ready = [0] * n, [k for k in range(n) if not indeg[k]]
    while ready:
        k = ready.pop()
        for s in succ[k]:
            anc[s] |= anc[k] | (1 << k)
            indeg[s] -= 1
            if not indeg[s]:
                ready.append(s)
    assert not any(indeg), "the happens-before graph has a cycle (the program deadlocks)"
    return anc


def _bytes(ins, eb: int) -> np.ndarray:
    """The DDR byte offsets (from its base register) a LOAD / STORE touches, element by element."""
    f = ins.f
    r = np.arange(f["rows"])[:, None, None] * f["row_stride"]
    c = np.arange(f["cols"])[None, :, None] * f["pix_stride"]
    e = np.arange(f["elems"] * eb)[None, None, :]
    return np.unique((f["ddr_offset"] + r + c + e).ravel())


def _onchip(ins, hw) -> list[tuple]:
    """(resource, write?) pairs of one instruction's on-chip accesses: ("ibuf" | "wbuf" | "acc", bank),
    ("pbuf", record), ("tbuf",)."""
    f, out = ins.f, []
    if ins.op == "LOAD":
        if f["buf"] in (IBUF, WBUF):
            out.append((("ibuf" if f["buf"] == IBUF else "wbuf", f["bank"]), True))
        elif f["buf"] == PBUF:
            out += [(("pbuf", r), True) for r in range(f["dst_word"], f["dst_word"] + f["elems"])]
        else:
            out.append((("tbuf",), True))
    elif ins.op == "COMPUTE":
        out += [(("ibuf", f["ibuf_bank"]), False), (("acc", f["acc_bank"]), True)]
        if not f["bypass"]:
            out.append((("wbuf", f["wbuf_bank"]), False))
    elif ins.op == "POST":
        out.append((("acc", f["acc_bank"]), False))
        out += [(("pbuf", r), False) for r in range(f["pbuf_oc"], f["pbuf_oc"] + f["og"] * hw.tm_pitch)]
        if f["act"] & isa.ACTIVATIONS["table"]:
            out.append((("tbuf",), False))
    return out


def unordered_conflicts(insns: list, hw) -> list[str]:
    """Conflicting pairs that the happens-before graph (:func:`_ancestors`) does not order, as text: a write and
    an earlier access (the last write, the reads since it) of the same DDR byte (STOREs against ifmap LOADs), IBUF /
    WBUF / ACC bank, PBUF record or TBUF, in different modules."""
    anc = _ancestors(insns)
    n, bad = len(anc), []

    def check(d, k, what):
        if d >= 0 and insns[d].module != insns[k].module and not (anc[k] >> d) & 1:
            bad.append(f"{insns[d].op} {d} -> {insns[k].op} {k} on {what}")

    ddr = [(k, i) for k, i in enumerate(insns[:n]) if i.op == "STORE" or (i.op == "LOAD" and i.f["buf"] == IBUF)]
    spans = {k: _bytes(i, hw.elem_bytes) for k, i in ddr}
    size = {}
    for k, i in ddr:
        size[i.f["base_reg"]] = max(size.get(i.f["base_reg"], 0), int(spans[k].max(initial=0)) + 1)
    last_store = {r: np.full(sz, -1, np.int64) for r, sz in size.items()}
    last_load = {r: np.full(sz, -1, np.int64) for r, sz in size.items()}
    writer, readers = {}, {}
    for k, ins in enumerate(insns[:n]):
        if k in spans:
            reg, b = ins.f["base_reg"], spans[k]
            for d in np.unique(last_store[reg][b]):
                check(int(d), k, f"DDR reg {reg}")
            if ins.op == "STORE":
                for d in np.unique(last_load[reg][b]):
                    check(int(d), k, f"DDR reg {reg}")
                last_store[reg][b] = k
            else:
                last_load[reg][b] = k
        for q, write in _onchip(ins, hw):
            check(writer.get(q, -1), k, q)
            if write:
                for d in readers.get(q, []):
                    check(d, k, q)
                writer[q], readers[q] = k, []
            else:
                rs = readers.setdefault(q, [])
                rs[:] = [r for r in rs if insns[r].module != ins.module] + [k]
        if len(bad) > 20:
            break
    return bad


@pytest.fixture(scope="module")
def yolo64():
    return compiled_model("zcu19eg", "int8-asym", str(model_at_resolution(64)))


def test_every_conflict_is_ordered_on_yolov4_tiny(yolo64):
    """YOLOv4-tiny at 64x64 on zcu19eg (32x48): every conflicting access pair of the program is ordered; every
    layer after the first begins with a constant LOAD (PBUF records or weights) ahead of the barrier."""
    prog = yolo64.program
    assert unordered_conflicts(prog.insns, prog.hw) == []
    for (a, _), (b, e) in zip(prog.ranges, prog.ranges[1:]):
        first = prog.insns[b]
        assert first.op == "LOAD" and first.f["buf"] in (PBUF, WBUF) and first.f["pop_next"], (b, first)


@pytest.mark.parametrize("quant,res", [("int8-asym", 96), ("int16-sym", 64)])
def test_every_conflict_is_ordered_on_an_8x8_array(quant, res):
    """The 8x8 SMALL configuration (many tiles per layer: every boundary option in play): no conflict
    unordered; in int8 at 96x96 a layer's first tiles run during the previous layer's drain (a second SYNC inside
    it)."""
    c = compile_model(board(**SMALL), quant, model=model_at_resolution(res), progress=False)
    assert unordered_conflicts(c.program.insns, c.program.hw) == []
    inner = sum(i.op == "SYNC" for i in c.program.insns) - (len(c.program.layers) - 1)
    assert inner >= (1 if quant == "int8-asym" else 0), inner


@pytest.mark.parametrize("quant", ["int8-asym", "int16-sym"])
def test_every_conflict_is_ordered_on_the_board_frame(quant):
    """The shipped frame (YOLOv4-tiny 416x416 on zcu19eg): no conflict unordered; the overlap makes the frame
    shorter than its layers timed alone."""
    prog = compiled_model("zcu19eg", quant).program
    assert unordered_conflicts(prog.insns, prog.hw) == []
    assert prog.cycles < sum(p.cycles for p in prog.plans)


def test_a_missing_token_is_found(yolo64):
    """The checker is not vacuous: dropping the barrier SYNC's wait or one write-after-read token of a program
    leaves a conflict unordered."""
    prog = yolo64.program
    for k, ins in enumerate(prog.insns):
        if ins.op == "SYNC" and ins.f["pop_next"]:
            insns = [_copy(i) if j == k else i for j, i in enumerate(prog.insns)]
            break
    _drop(insns, k, "s2c")
    assert unordered_conflicts(insns, prog.hw)


def _copy(ins):
    return isa.Insn(ins.op, dict(ins.f))


def _drop(insns, k, ch):
    """Remove instruction k's pop of ``ch`` and the push it was paired with (the program stays balanced)."""
    pairs = token_pairs(insns, ch)
    prod = next(p for p, c in pairs if c is insns[k])
    _, push, _, pop = CHANNELS[ch]
    j = next(j for j, i in enumerate(insns) if i is prod)
    insns[j] = _copy(prod)
    insns[j].f[push] = 0
    insns[k].f[pop] = 0


def test_set_tokens_from_dependencies():
    """Flags derived from dependencies: an implied dependency (a consumer after one that waited for a later
    producer) gets no token; the pops read back pair each consumer with its latest producer."""
    c = [isa.make("COMPUTE") for _ in range(4)]
    ld = [isa.make("LOAD") for _ in range(4)]
    prog = [ld[0], c[0], c[1], ld[1], c[2], ld[2], c[3], ld[3], isa.make("END")]
    set_tokens(prog, "c2l", [(c[0], ld[1]), (c[1], ld[1]), (c[0], ld[2]), (c[3], ld[3])])
    assert [i.f["push_prev"] for i in c] == [0, 1, 0, 1]
    assert [i.f["pop_next"] for i in ld] == [0, 1, 0, 1]
    assert token_pairs(prog, "c2l") == [(c[1], ld[1]), (c[3], ld[3])]
    with pytest.raises(ValueError, match="c2l"):
        set_tokens(prog, "c2l", [(ld[0], c[1])])

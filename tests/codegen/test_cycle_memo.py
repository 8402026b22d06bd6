"""The scheduler's instruction-cost memo (generator/codegen/program.py: CycleMemo): the timing engine with it
counts the cycles program_cycles counts, and it evaluates each distinct instruction's cost once."""
from __future__ import annotations

from generator.codegen import program
from generator.codegen.emit import config_insn, emit_layer
from generator.frontend.modelgen import Builder
from generator.spec import isa
from generator.spec.timing_engine import program_cycles
from helpers import compile_small


def test_memo_counts_what_program_cycles_counts(monkeypatch):
    b = Builder([1, 16, 24, 20], seed=5)
    y = b.maxpool(b.leaky(b.conv(b.leaky(b.conv("x", 32, k=3)), 48, k=3)))
    gq, prog, _ = compile_small(b.model([y]))
    memo = program.CycleMemo(prog.hw)
    evaluated = []
    real = program.insn_cycles
    monkeypatch.setattr(program, "insn_cycles",
                        lambda hw, ins, frame=None: evaluated.append(ins) or real(hw, ins, frame))
    for L, plan in zip(prog.layers, prog.plans):      # each layer's chosen plan alone, as the scheduler timed it
        insns = [config_insn(prog.hw)] + emit_layer(gq, L, plan, prog.hw, prog.layout) + [isa.make("END")]
        assert memo.cycles(insns) == program_cycles(prog.hw, insns, check_end_tokens=False) == plan.cycles
    assert memo.cycles(prog.insns) == program_cycles(prog.hw, prog.insns)
    keys = [(i.op, *i.f.values()) for i in evaluated]
    assert len(keys) == len(set(keys)) == len(memo.memo)        # one evaluation per distinct instruction
    total, per_layer = program.frame_timing(prog.hw, prog.insns, prog.ranges)
    assert (total, per_layer) == (prog.cycles, prog.layer_cycles)

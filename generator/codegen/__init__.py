"""Code generation: quantized graph + :class:`~generator.spec.hw.HwConfig` -> instruction program.

Modules: :mod:`~generator.codegen.tiling` (layer geometry, the tilings that fit, their latency estimate),
:mod:`~generator.codegen.allocate` (DDR regions, weights blob), :mod:`~generator.codegen.emit` (one layer's
instructions), :mod:`~generator.codegen.overlap` (layers joined, overlapping at their boundaries),
:mod:`~generator.codegen.tokens` (token flags from dependency lists), :mod:`~generator.codegen.program` (the plan per
layer, the whole program, the token check). What is specific to a layer kind (its window, input-channel chunks,
IBUF words, ifmap LOADs, COMPUTE mode, cost terms) is that kind's (:mod:`generator.kinds`).

Public API: :func:`compile_program` (-> :class:`Program`), :func:`check_tokens` (a program's token FIFOs) and
:class:`ScheduleError` (a layer that no tiling fits, naming the layer and the buffer).
"""
from generator.codegen.program import Program, check_tokens, compile_program
from generator.codegen.tiling import ScheduleError

__all__ = ["Program", "ScheduleError", "check_tokens", "compile_program"]

"""Code generation: per-layer tiling and loop order (latency model), DDR allocation, instruction emission.

Public API: :func:`compile_program` (quantized graph + :class:`~generator.spec.timing.HwConfig` -> :class:`Program`)
and :class:`ScheduleError` (a layer that no tiling fits, naming the layer and the buffer).
"""
from generator.codegen.program import Program, ScheduleError, compile_program

__all__ = ["Program", "ScheduleError", "compile_program"]

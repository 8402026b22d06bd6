"""The disassembly flow (``invoke disasm``): a program file, or a freshly compiled program, one instruction per
line."""
from __future__ import annotations

from pathlib import Path

from generator.flows.inputs import FlowError, compile_checked


def disasm_flow(board="zcu19eg", quant="int8-asym", per_channel=True, program=None) -> list[str]:
    """The disassembly of ``program`` (a program.bin path), else of the default model compiled for ``board``, as
    lines. Raises FlowError for a missing, unreadable or empty file, or one that is not a program."""
    from generator.spec import isa

    if program:
        try:
            blob = Path(program).read_bytes()
        except FileNotFoundError:
            raise FlowError(f"--program {program}: no such file") from None
        except OSError as e:
            raise FlowError(f"--program {program}: cannot read ({e.strerror or e})") from None
        if not blob:
            raise FlowError(f"--program {program}: empty file, not a program")
    else:
        blob = compile_checked(board, quant, per_channel, None, progress=False).program.blob
    try:
        return isa.disasm_program(blob).splitlines()
    except isa.IsaError as e:
        raise FlowError(f"{program}: {e}") from None

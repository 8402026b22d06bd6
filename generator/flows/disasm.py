"""The disassembly flow (``invoke disasm``): a program file, or a freshly compiled program, one instruction per
line, streamed (``--limit N`` reads N instructions, whatever the file's size)."""
from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator

from generator.flows.inputs import FlowError
from generator.flows.request import ModelSource, Target, compile_request
from generator.spec.board import DEFAULT_BOARD
from generator.quant.quantize import DEFAULT_QUANT


def disasm_flow(board=DEFAULT_BOARD, quant=DEFAULT_QUANT, per_channel=True, program=None, limit: int = 0) -> Iterator[str]:
    """The disassembly of ``program`` (a program.bin path), else of the default model compiled for ``board``.

    The file is checked at once (FlowError for a missing, unreadable, non-regular or empty file, or a bad
    ``limit``); its instructions are then read and decoded one at a time (:func:`generator.spec.isa.disasm_stream`)
    as the returned iterator is consumed, at most ``limit`` of them (0: all).

    Returns:
        an iterator of str, one line per instruction (``     K: OP  field=value ...``).
    Raises:
        FlowError: at once for the checks above; while iterating, ``--program P: instruction K (byte offset B):
            <why>`` for the first instruction that does not decode, after the lines of those before it.
    """
    from generator.spec import isa

    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise FlowError(f"--limit {limit}: not an integer >= 0")
    if program:
        f = _open_program(program)
        what = f"--program {program}"
    else:
        blob = compile_request(Target(board, quant, per_channel), ModelSource(), progress=False).program.blob
        f, what = io.BytesIO(blob), "the compiled program"
    return _lines(isa, f, limit, what)


def _open_program(program) -> io.BufferedReader:
    try:
        f = open(program, "rb")
    except FileNotFoundError:
        raise FlowError(f"--program {program}: no such file") from None
    except OSError as e:
        raise FlowError(f"--program {program}: cannot read ({e.strerror or e})") from None
    st = os.fstat(f.fileno())
    why = "not a regular file" if not stat.S_ISREG(st.st_mode) else "empty file, not a program" if not st.st_size \
        else None
    if why:
        f.close()
        raise FlowError(f"--program {program}: {why}")
    return f


def _lines(isa, f, limit: int, what: str) -> Iterator[str]:
    with f:
        try:
            yield from isa.disasm_stream(f, limit)
        except isa.IsaError as e:
            raise FlowError(f"{what}: {e}") from None
        except OSError as e:
            raise FlowError(f"{what}: cannot read ({e.strerror or e})") from None

"""The accumulator layout of a double-pumped PE array (``pump`` 2) as the golden simulator checks it: the RTL keeps
the ACC words of odd tile columns in a second copy (rtl/buffers.sv), so every read of an ACC word must see it in a
column of the parity that wrote it (:class:`AccLayoutError` otherwise)."""
from __future__ import annotations

import numpy as np


class AccLayoutError(RuntimeError):
    """A program reads accumulator words in another tile geometry than the one that wrote them, which a
    double-pumped array (``pump`` 2) cannot run as the ISA says: it keeps the words of odd tile columns in a second
    ACC copy (rtl/buffers.sv), so a COMPUTE accumulating onto them (``acc_init`` 0) or a POST must see each word in
    a column of the parity that wrote it. Not a hardware status (the RTL would compute silently otherwise): a
    compiler error, raised with the instruction index ``insn``."""

    def __init__(self, msg: str, insn: int):
        super().__init__(msg)
        self.insn = insn


def check(tags: np.ndarray, k: int, f: dict, op: str, write: bool) -> None:
    """Check the ACC words instruction ``k`` (``op`` COMPUTE or POST, fields ``f``: oh, ow, og, acc_init) reads
    against ``tags`` (int8, one per ACC word of its bank: the column parity of the COMPUTE that last wrote it, -1
    none since reset): a POST's words, a COMPUTE's with acc_init 0. A COMPUTE (``write``) then records its own
    parities. Raises :class:`AccLayoutError` naming the first word read at another parity."""
    oh, ow, og = f["oh"], f["ow"], f["og"]
    par = ((np.arange(oh * ow * og) // og) % ow % 2).astype(np.int8)
    t = tags[:par.size]
    if not (write and f["acc_init"]):
        bad = np.flatnonzero((t >= 0) & (t != par))
        if bad.size:
            raise AccLayoutError(f"instruction {k}: {op} reads ACC word {int(bad[0])} in a column of parity "
                                 f"{int(par[bad[0]])}, written at parity {int(t[bad[0]])}: a double-pumped "
                                 f"array keeps odd tile columns in a second ACC copy", k)
    if write:
        t[:] = par

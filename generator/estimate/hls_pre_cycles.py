"""The loop trip counts of the HLS kernel's PRE unit (``hls_templates/kernel/accel_kernel_pre.h``, ``accel_pre``) for
one PRE instruction, derived from its fields and the frame registers exactly as the unit's C++ walks them; the
cycles are :meth:`generator.estimate.hls_cycles.KernelEstimate.pre_cycles` (analysed II and depth of its loops).

Per band (the instruction's rows ``y0`` .. ``y0 + rows - 1`` of the ``net_h``-row run):

* ``fetch_runs`` / ``fetch_beats``: per placed output row of the band, the source rows ``iy`` / ``iy1`` (host/pre.py step 2) that
  neither of the two line buffers holds are read (``pre_fetch_rows``: ``iy`` into the buffer not holding ``iy1``,
  buffer 0 when both are read), one ``PRE_FETCH`` run per row that reads any, each row's beats those of its first
  3 x frame_w bytes from ``frame + row x pitch``;
* ``pixel_steps``: per output row, ``PRE_PIXELS`` runs NB + net_w - D iterations (NB the row's output beats from
  ``ddr_offset + (y - y0) x row_stride``, base registers page-aligned; D the pixels starting in a later beat than the pixel
  before).
"""
from __future__ import annotations

import numpy as np

#: host/pre.py's Q12.20 positions
POS_BITS, FRAC_BITS = 20, 12


def _rows(out_h: int, frame_h: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(iy, iy1) int64 [out_h] as the unit's pre_pos computes them (a 32-bit accumulator; the last row at the end)."""
    s = (np.arange(out_h, dtype=np.int64) * int(step)) & 0xFFFFFFFF
    i = np.minimum(s >> POS_BITS, frame_h - 1)
    i[-1] = frame_h - 1
    return i, np.minimum(i + 1, frame_h - 1)


def fetch_counts(frame, axi_bytes: int, y0: int = 0, rows: int | None = None) -> tuple[int, int]:
    """(fetch_runs, fetch_beats) of PRE on the frame registers ``frame`` (:class:`host.pre.PreFrame`, checked) for
    the band of output rows ``y0`` .. ``y0 + rows - 1`` (None: to the placed rectangle's end; the line buffers
    start empty)."""
    iy, iy1 = _rows(frame.out_h, frame.frame_h, frame.step_y)
    j0 = max(y0 - frame.top, 0)
    j1 = frame.out_h if rows is None else min(y0 + rows - frame.top, frame.out_h)
    iy, iy1 = iy[j0:max(j1, j0)], iy1[j0:max(j1, j0)]
    held = [-1, -1]
    runs = beats = 0
    for a, b in zip(iy.tolist(), iy1.tolist()):
        need_a, need_b = a not in held, b not in held and b != a
        if not (need_a or need_b):
            continue
        ja = 0 if need_b else (1 if held[0] == b else 0)
        jb = 1 if need_a else (1 if held[0] == a else 0)
        for need, row, j in ((need_a, a, ja), (need_b, b, jb)):
            if need:
                start = frame.addr + row * frame.pitch
                beats += (start + 3 * frame.frame_w - 1) // axi_bytes - start // axi_bytes + 1
                held[j] = row
        runs += 1
    return runs, beats


def pixel_steps(f: dict, axi_bytes: int) -> int:
    """PRE_PIXELS iterations of the output rows (the band of ``rows`` rows) of the PRE instruction with fields ``f``."""
    net_w, ps = f["net_w"], f["pix_stride"]
    span = (net_w - 1) * ps + 3 * (1 + f["prec"])
    starts = f["ddr_offset"] + np.arange(f["rows"], dtype=np.int64) * f["row_stride"]
    offs, counts = np.unique(starts % axi_bytes, return_counts=True)   # a row's walk depends on its offset only
    rel = offs[:, None] + np.arange(net_w, dtype=np.int64)[None, :] * ps
    bx = rel // axi_bytes
    nb = (offs + span - 1) // axi_bytes + 1
    d = (np.diff(bx, axis=1) > 0).sum(axis=1)
    return int(((nb + net_w - d) * counts).sum())

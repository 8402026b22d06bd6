"""The loop trip counts of the HLS kernel's PRE unit (``hls_templates/kernel/accel_kernel_pre.h``, ``accel_pre``) for
one PRE instruction, derived from its fields and the frame registers exactly as the unit's C++ walks them; the
cycles are :meth:`generator.estimate.hls_cycles.KernelEstimate.pre_cycles` (analysed II and depth of its loops).

Per band (the instruction's rows ``y0`` .. ``y0 + rows - 1`` of the ``net_h``-row run):

* ``fetch_runs`` / ``fetch_beats``: per placed output row of the band, the source rows ``iy`` / ``iy1`` (host/pre.py step 2) that
  neither of the two line buffers holds are read (``pre_fetch_rows``: ``iy`` into the buffer not holding ``iy1``,
  buffer 0 when both are read), one ``PRE_FETCH`` run per row that reads any, each row's beats those of its first
  3 x frame_w bytes from ``frame + row x pitch`` (:func:`generator.spec.timing.pre_fetch_runs`; rtl/pre.sv applies
  the rule per pair of its four buffers);
* ``pixel_steps``: per output row, ``PRE_PIXELS`` runs NB + net_w - D iterations (NB the row's output beats from
  ``ddr_offset + (y - y0) x row_stride``, base registers page-aligned; D the pixels starting in a later beat than the pixel
  before).
"""
from __future__ import annotations

import numpy as np

from generator.spec.timing import pre_fetch_runs


def fetch_counts(frame, axi_bytes: int, y0: int = 0, rows: int | None = None) -> tuple[int, int]:
    """(fetch_runs, fetch_beats) of PRE on the frame registers ``frame`` (:class:`host.pre.PreFrame`, checked) for
    the band of output rows ``y0`` .. ``y0 + rows - 1`` (None: to the placed rectangle's end; the line buffers
    start empty): :func:`generator.spec.timing.pre_fetch_runs`, the kernel's rule."""
    runs, _, beats = pre_fetch_runs(frame, axi_bytes, y0, rows)
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

"""rtl/pre.sv's fetch rule: which frame rows each output row of a PRE band reads, into which pair of line buffers
(the latency model's :func:`generator.spec.timing.pre_cycles` schedules them). The HLS kernel's rule, two line
buffers for every row, is :func:`generator.spec.timing.pre_fetch_runs`."""
from __future__ import annotations


def pair_fetches(frame, y0: int = 0, rows: int | None = None, net_h: int | None = None):
    """rtl/pre.sv's fetch rule for the band of output rows ``y0`` .. ``y0 + rows - 1`` of a frame (``frame``: its
    :class:`host.pre.PreGeometry` or :class:`host.pre.PreFrame`, their ``top``, ``out_h``, ``frame_h``, ``step_y``;
    ``net_h``: the input's rows, default ``top + out_h``): per output row (in order) (placed, the source rows it reads in request
    order, the row walk's steps before them). A row's source rows ``iy`` / ``iy1`` (host/pre.py step 2) go to its
    pair of line buffers (the row's parity): those the pair does not hold are read (``iy`` into the buffer not
    holding ``iy1``, buffer 0 when both are read; ``iy1`` not when it is ``iy``); the row address walks one row per
    cycle from the band's first source row to each (one row back at most: the other pair's rows came before)."""
    from host.pre import source_positions

    net_h = net_h if net_h is not None else frame.top + frame.out_h
    rows = net_h - y0 if rows is None else rows
    iy, iy1, _ = source_positions(frame.out_h, frame.frame_h, frame.step_y)
    held = {0: [-1, -1], 1: [-1, -1]}
    j0 = max(y0 - frame.top, 0)
    ptr = int(iy[j0]) if j0 < frame.out_h else 0
    for y in range(y0, y0 + rows):
        j = y - frame.top
        if not 0 <= j < frame.out_h:
            yield False, [], 0
            continue
        a, b, h = int(iy[j]), int(iy1[j]), held[y & 1]
        need_a, need_b = a not in h, b not in h and b != a
        ja = 0 if need_b else (1 if h[0] == b else 0)
        jb = 1 if need_a else (1 if h[0] == a else 0)
        run, walk = [], 0
        for need, row, k in ((need_a, a, ja), (need_b, b, jb)):
            if need:
                h[k] = row
                run.append(row)
                walk += abs(row - ptr)
                ptr = row
        yield True, run, walk

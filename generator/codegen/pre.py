"""PRE in the program (issue 45): the instruction that turns the camera frame into the network input, and the frame
its cycles are priced for.

With PRE the INPUT region is a plain NHWC region with its zero-point border (no im2col patches: the first
convolution gathers its patches with strided LOADs, :meth:`generator.kinds.conv.ConvKind.ifmap_loads`); PRE writes
its interior from the frame the driver hands over (the frame registers, :class:`host.pre.PreFrame`), resized by the
model's mode (``input_resize`` metadata: darknet's stretch, Ultralytics' letterbox, YOLOX's top-left letterbox),
converted to the model's pixel format (``input_format``) and quantized with the input region's scale and zero point
(:func:`host.pre.pre_quant`, the 16-bit multiplier and shift in the instruction).
"""
from __future__ import annotations

from generator.codegen.allocate import DdrLayout
from generator.codegen.tiling import ScheduleError
from generator.ir.graph import Graph
from generator.spec import isa
from host.pre import PreError, PreFrame, frame_bytes, pre_geometry, pre_quant
from host.preprocess import INPUT_FORMATS, RESIZE_MODES


def model_pixels(g: Graph) -> tuple[str, str]:
    """(resize mode, input format) of ``g`` from its metadata (defaults: ``stretch``, ``rgb01``). Raises
    ScheduleError for a value outside :data:`host.preprocess.RESIZE_MODES` / :data:`host.preprocess.INPUT_FORMATS`."""
    mode, fmt = g.metadata.get("input_resize", "stretch"), g.metadata.get("input_format", "rgb01")
    if mode not in RESIZE_MODES:
        raise ScheduleError(f"model metadata input_resize={mode!r}: PRE resizes by one of {RESIZE_MODES}")
    if fmt not in INPUT_FORMATS:
        raise ScheduleError(f"model metadata input_format={fmt!r}: PRE writes one of {INPUT_FORMATS}")
    return mode, fmt


def _input(g: Graph, lay: DdrLayout):
    """(input tensor, its region's layout entry); raises ScheduleError when PRE cannot write it."""
    t = g.tensors[g.inputs[0]]
    r = lay.regions[t.region]
    if r["base_reg"] != "INPUT" or r["channels"] != 3 or t.ch_offset or r.get("im2col"):
        raise ScheduleError(f"input {g.inputs[0]!r}: PRE writes a 3-channel NHWC INPUT region, this one has "
                            f"{r['channels']} channels ({'im2col' if r.get('im2col') else r['base_reg']})")
    return t, r


def nominal_frame(g: Graph, size: tuple) -> PreFrame:
    """The frame registers of a ``size`` = (frame_w, frame_h) packed RGB frame for ``g``'s input (the model's resize
    mode): what the latency model prices PRE for. Raises ScheduleError for a size PRE cannot take."""
    mode, _ = model_pixels(g)
    _, _, h, w = g.tensors[g.inputs[0]].shape
    try:
        geo = pre_geometry(int(size[0]), int(size[1]), int(w), int(h), mode)
    except PreError as e:
        raise ScheduleError(f"PRE frame of {size[0]} x {size[1]}: {e}") from None
    return PreFrame.of(geo, 0, frame_bytes(geo, 3 * geo.frame_w))


def pre_insn(g: Graph, lay: DdrLayout, y0: int = 0, rows: int | None = None):
    """The PRE instruction writing ``g``'s input region (its interior, at the region's precision) as laid out in
    ``lay``: its rows ``y0`` .. ``y0 + rows - 1`` (default: all). Raises ScheduleError for an input PRE cannot
    write (not 3 channels, not an INPUT region)."""
    t, r = _input(g, lay)
    _, fmt = model_pixels(g)
    bits, eb = r["bits"], r["bits"] // 8
    try:
        q = pre_quant(t.scale, t.zero_point, bits, fmt, "rgb")
    except PreError as e:
        raise ScheduleError(f"input {g.inputs[0]!r}: PRE cannot quantize it: {e}") from None
    row = (r["w"] + 2 * r["pad"]) * r["channels"] * eb
    return isa.make("PRE", base_reg=isa.BASE_REGS["INPUT"], ddr_offset=t.ddr_addr, row_stride=row,
                    pix_stride=r["channels"] * eb, net_w=r["w"], net_h=r["h"], mult=q.mult, shift=q.shift,
                    zp=q.zero_point, model_bgr=int(fmt.startswith("bgr")), prec=0 if bits == 8 else 1, y0=y0,
                    rows=r["h"] - y0 if rows is None else rows)


#: cycles left free in a LOAD-module gap after the bands placed in it (the fetch's issue of the inserted
#: instructions, and a frame a little larger than the nominal one)
BAND_MARGIN = 64


def _load_gaps(insns: list, t, first: int) -> list[tuple[int, int, int]]:
    """[(index of the LOAD-module instruction that ends an idle interval of the LOAD module, the interval's start
    cycle, its cycles)] for the LOAD-module instructions after instruction ``first`` of a timed program (``t``: its
    ModuleTimer after run), plus (index of END, the LOAD module's last end, the idle cycles from it to the
    program's end). An interval starts no earlier than the instruction's dispatch (a band inserted before it is
    fetched just before it: with full command queues the fetch runs behind the LOAD module)."""
    ks = [k for k, ins in enumerate(insns) if ins.module == "load" and k > first]
    prev = int(t.end[first])
    out = []
    for k in ks:
        s = max(prev, int(t.dispatched[k]) - 1)
        out.append((k, s, max(int(t.start[k]) - s, 0)))
        prev = max(prev, int(t.end[k]))
    end = next(k for k, ins in enumerate(insns) if ins.op == "END")
    out.append((end, prev, max(int(t.cycles) - prev, 0)))
    return out


def _dispatch_deadlines(insns: list, t, depth: int):
    """``deadline(k, j)``: for bands inserted before the LOAD-module instruction ``k`` of a timed program (``t``),
    the cycle by which the read of the LOAD-queue entry ``j`` places before ``k`` (j = 0: ``k`` itself) must have
    happened so that no instruction waits for the fetch: the fetch puts an instruction in its module's queue of
    ``depth`` entries only once the module has read the entry ``depth`` places ahead (rtl/fetch_dispatch.sv, the
    timing engine's ``cmd_depth``), and stops for every module behind it. The LOAD-module instruction ``depth - j``
    places after ``k`` waits for that read, so every instruction after it in program order must start no earlier
    (their starts in ``t``, the program without bands). None: no such instruction (no deadline)."""
    end = next(k for k, ins in enumerate(insns) if ins.op == "END")
    after = [None] * (end + 2)                      # after[i]: earliest start of instructions i .. END
    for i in range(end, -1, -1):
        after[i] = int(t.start[i]) if after[i + 1] is None else min(after[i + 1], int(t.start[i]))
    loads = [k for k, ins in enumerate(insns[:end + 1]) if ins.module == "load"]
    pos = {k: p for p, k in enumerate(loads)}

    def deadline(k: int, j: int) -> int | None:
        if k not in pos:                             # (END: nothing after it)
            return None
        if j >= depth:                               # the entry waiting is a band itself: no more bands here
            return 0
        q = pos[k] + depth - j
        return None if q >= len(loads) else after[loads[q] + 1]
    return deadline


def interleave_bands(insns: list, ranges: list, full, t, cost, depth: int | None = None) -> tuple[list, list]:
    """The program with the next frame's PRE in bands in the LOAD module's idle time (issue 45): after the last LOAD
    that reads the INPUT buffer (the network input, free once the first layer has read it), each idle interval of
    the LOAD module in the timed schedule ``t`` of ``insns`` gets the bands (consecutive rows of ``full``, the
    whole-input PRE) whose cycles (``cost(insn)``, the latency model at the nominal frame) fit it, inserted before
    the instruction that ends it, so that they run while the LOAD module would wait; rows left over go before END.
    ``depth``: the module command queues' entries (rtl/fetch_dispatch.sv's MQ_DEPTH; None: unbounded): a band
    holds the LOAD queue while it runs, and the fetch stops once that queue is full, so the bands of a gap also
    end before any instruction behind the blocked entry would start (:func:`_dispatch_deadlines`).
    Returns (instructions, the layers' instruction ranges renumbered)."""
    inp = full.f["base_reg"]
    first = max((k for k, ins in enumerate(insns) if ins.op == "LOAD" and ins.f["base_reg"] == inp), default=0)
    deadline = _dispatch_deadlines(insns, t, depth) if depth else (lambda k, j: None)
    net_h, y = full.f["net_h"], 0
    place = {}                                   # instruction index -> the bands inserted before it

    def fits(k: int, s: int, gap: int, costs: list) -> bool:
        """Bands of ``costs`` (in order) before ``k`` from cycle ``s`` fit the gap and the fetch's deadlines."""
        end, n = s, len(costs)
        for i, c in enumerate(costs):
            end += c
            d = deadline(k, n - 1 - i)           # the entry after band i is read at its end
            if d is not None and end > d - BAND_MARGIN:
                return False
        return end <= s + gap - BAND_MARGIN

    for k, s, gap in _load_gaps(insns, t, first):
        costs = []
        while y < net_h:
            r = 0
            while y + r < net_h and fits(k, s, gap, costs + [cost(_band(full, y, r + 1))]):
                r += 1
            if r == 0:
                break
            place.setdefault(k, []).append(_band(full, y, r))
            costs.append(cost(_band(full, y, r)))
            y += r
    if y < net_h:
        end = next(k for k, ins in enumerate(insns) if ins.op == "END")
        place.setdefault(end, []).append(_band(full, y, net_h - y))
    out, new_at = [], []
    for k, ins in enumerate(insns):
        out.extend(place.get(k, ()))
        new_at.append(len(out))
        out.append(ins)
    new_at.append(len(out))
    return out, [(new_at[a], new_at[b] if b < len(insns) else len(out)) for a, b in ranges]


def _band(full, y0: int, rows: int):
    """``full`` (a whole-input PRE) restricted to the rows ``y0`` .. ``y0 + rows - 1`` (its ``ddr_offset`` that of
    row ``y0``)."""
    f = {k: v for k, v in full.f.items() if k in dict(isa.FORMATS["PRE"])}
    return isa.make("PRE", **{**f, "y0": y0, "rows": rows, "ddr_offset": f["ddr_offset"] + y0 * f["row_stride"]})

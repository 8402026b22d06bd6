"""Design-space exploration: which accelerator configuration a board's part should carry for a model.

For a board, :func:`candidates` enumerates configurations the RTL can be rendered with: the PE array Tn x Tm
(Tn a power of two from 8 to 64, Tm from :data:`TM_SIDES`: powers of two and multiples of 8 between them) and the
DDR path (:func:`port_options`: an m_axi of :data:`AXI_WIDTHS` up to the board's ``hp_port_width_bits`` on one HP
port -- a wider one would move no more bytes -- or one of twice the port width split over two HP ports,
``rtl/axi_hp_split.sv``, or of four times over four, ``rtl/axi_hp_ports.sv``, RTL only) that :func:`generator.spec.arch.array_error` allows (m_axi at least 128 bits, the
bypass's two-word window, Tm at least the m_axi bytes), single- or double-pumped (:data:`PUMPS`: the PE array on a
second clock of twice the board's, ``rtl/pe_array_2x.sv``, with IBUF and ACC copies), and a buffer preset (:data:`BUFFER_PRESETS`: IBUF / OBUF bytes
per bank, WBUF bytes per PE, ACC words). :func:`explore` keeps those the RTL resource model (:mod:`generator.estimate.rtl_model`) fits
within :data:`UTILIZATION_LIMIT` of the part (every DSP48E2, BRAM and URAM block, 90% of LUTs and FFs),
compiles the model's quantized graphs for each with the latency model
(:func:`generator.codegen.program.compile_program`: the same predictions the golden simulator counts and the RTL
matches per layer within 1%), and returns every evaluated point with its int8 frames/s (and int16 for the
Pareto front), its resources and its DDR traffic. :func:`pareto_front`: the points no other point beats in
frames/s without using more of some resource (DSP48E2, BRAM36, URAM, LUT); :func:`choose`: the fastest int8 point
whose HLS kernel fits too, ties to the fewest DSP48E2 then BRAM36. A board file's ``accelerator:`` block serves
both back ends (``invoke build`` renders the HLS kernel from it, ``--kernel rtl`` the RTL), so each point also
carries the HLS kernel's estimate (:func:`generator.estimate.hls_resources.estimate`, single-rate, programs
fetched from DDR: ``invoke build`` drops the instruction ROM that does not fit) against the same limits; a point
only the RTL fits is kept on the front, marked, and chosen only when no point fits both.

The clock is the board's ``pl_clock_mhz``; frames/s are latency-model figures at that clock.
"""
from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import pickle
from dataclasses import dataclass

from generator.codegen.program import compile_program
from generator.codegen.tiling import ScheduleError, layer_of
from generator.estimate import hls_resources, rtl_model
from generator.spec.arch import array_error
from generator.spec.board import Board
from generator.spec.hw import HwConfig

#: Tn the search tries (the RTL needs powers of two: its adder trees)
ARRAY_SIDES = (8, 16, 32, 64)
#: Tm the search tries: powers of two and 24, 40, 48, 56 (non-powers of two where they fit the part better:
#: xczu19eg's 1,968 DSP48E2 hold 32x48 but not 32x64)
TM_SIDES = (8, 16, 24, 32, 40, 48, 56, 64)
#: PE array pumping factors the search tries (1: single-rate; 2: the DSP48E2s on twice the logic clock)
PUMPS = (1, 2)
#: m_axi widths the search tries (bits), capped by the board's HP port width
AXI_WIDTHS = (64, 128)
#: four HP ports are tried for PE arrays of at least this many PE steps per logic cycle (Tn x Tm x pump): on
#: YOLOv4-tiny (zcu19eg, int8-asym, latency model; ``invoke explore --hp-ports``) they gain -0.7% to +1.4% over two
#: ports with the S-L buffers and up to +12.7% on pumped arrays with the XXS / XS ones, 0.0% on 16x16 (docs/rtl.md,
#: "Four HP ports")
FOUR_PORT_MIN_LANES = 1024
#: buffer presets: (name, IBUF bytes per bank, WBUF bytes per PE per bank, ACC words per bank, OBUF bytes); XXS
#: differs from XS in WBUF only: 32 int8 words per bank, so both banks share one 64-word LUTRAM per row (a byte
#: of it one RAM64M8 pair, no bank select) where XS's 64-word banks take a memory each and a 2:1 select
#: (:func:`generator.spec.memories.wbuf_one_memory`): about 5 LUTs per WBUF bit against 2
BUFFER_PRESETS = (("XXS", 16384, 32, 512, 16384), ("XS", 16384, 64, 512, 16384), ("S", 65536, 144, 1024, 65536), ("M", 131072, 288, 2048, 131072),
                  ("L", 262144, 288, 4096, 262144))
#: the fraction of each resource of the part a configuration may use: every DSP48E2, BRAM and URAM block, 90% of
#: the LUTs and flip-flops (the rest for routing and the platform's interconnect)
UTILIZATION_LIMIT = {"dsp48e2": 1.0, "bram36": 1.0, "uram": 1.0, "lut": 0.9, "ff": 0.9}
RESOURCE_KEYS = tuple(UTILIZATION_LIMIT)


@dataclass
class Point:
    """One evaluated configuration: ``board`` (the board with this accelerator), ``resources`` (modelled, keys of
    :data:`RESOURCE_KEYS`), ``fps8`` / ``fps16`` (int8 / int16 frames/s at the board clock; 0 when no tiling fits,
    None when not evaluated), ``cycles8`` / ``cycles16`` (predicted cycles per frame), ``traffic8`` (DDR bytes per
    int8 frame) and ``compulsory8`` (the frame's compulsory bytes), ``error`` (why the model does not compile),
    ``hls`` (the HLS kernel's estimated resources, keys of :data:`RESOURCE_KEYS`; {} when not estimated) and
    ``hls_over`` (what stops the HLS kernel, :func:`hls_point`: empty when it fits)."""
    board: Board
    resources: dict
    preset: str
    hls: dict = dataclasses.field(default_factory=dict)
    hls_over: tuple = ()
    fps8: float = 0.0
    cycles8: int = 0
    traffic8: int = 0
    compulsory8: int = 0
    fps16: float | None = None
    cycles16: int = 0
    error: str = ""
    pareto: bool = False
    chosen: bool = False

    @property
    def label(self) -> str:
        """``TnxTm/AXI bits/preset``, e.g. ``32x32/128/L``; two / four HP ports: ``32x48/2x128/M``, ``.../4x128/...``; double-pumped:
        ``/2clk`` after it (``32x32/2x128/M/2clk``)."""
        a = self.board.accelerator
        axi = f"{a.hp_ports}x{a.axi_data_width_bits // a.hp_ports}" if a.hp_ports > 1 else str(a.axi_data_width_bits)
        return f"{a.tn}x{a.tm}/{axi}/{self.preset}" + ("/2clk" if a.pump == 2 else "")

    def row(self) -> dict:
        """JSON-able summary."""
        a = self.board.accelerator
        return dict(label=self.label, tn=a.tn, tm=a.tm, axi_bits=a.axi_data_width_bits, preset=self.preset, pump=a.pump,
                    accelerator=a.model_dump(), resources=self.resources, fps_int8=round(self.fps8, 2),
                    cycles_int8=self.cycles8, fps_int16=None if self.fps16 is None else round(self.fps16, 2),
                    cycles_int16=self.cycles16, ddr_bytes_int8=self.traffic8, compulsory_bytes_int8=self.compulsory8,
                    pareto=self.pareto, chosen=self.chosen, error=self.error, hls_resources=self.hls,
                    hls_over=list(self.hls_over))


def configured(board: Board, **acc) -> Board:
    """``board`` with accelerator fields replaced (validated as a board file would be); an m_axi no wider than the
    board's HP port gets one HP port unless ``hp_ports`` is given (so a two-port board file narrows cleanly)."""
    acc = dict(dict(hp_ports=1) if acc.get("axi_data_width_bits", 0) <= board.hp_port_width_bits else {}, **acc)
    return Board.model_validate(dict(board.model_dump(), accelerator=dict(board.accelerator.model_dump(), **acc)))


def port_options(board: Board) -> list[tuple[int, int]]:
    """(m_axi bits, HP ports) the search tries on ``board``: each of :data:`AXI_WIDTHS` up to the board's
    ``hp_port_width_bits`` on one HP port, twice the port width over two HP ports, and four times the port width over
    four (RTL only) where the PS DDR moves more bytes per PL cycle than two ports do (not ultra96v2: LPDDR4 at 4.2 GB/s
    is 21 bytes per 200 MHz cycle, under two 128-bit ports' 32)."""
    out = [(w, 1) for w in AXI_WIDTHS if w <= board.hp_port_width_bits] + [(2 * board.hp_port_width_bits, 2)]
    ddr = board.ps_ddr.bandwidth_gbps * 1e9 / (board.pl_clock_mhz * 1e6)
    if ddr > 2 * board.hp_port_width_bits / 8:
        out.append((4 * board.hp_port_width_bits, 4))
    return out


def candidates(board: Board) -> list[tuple[Board, str]]:
    """Every (board with a candidate accelerator, buffer preset name) of the search space (module docstring),
    the board file's own configuration first (preset ``board``)."""
    out = [(board, "board")]
    for tn in ARRAY_SIDES:
        for tm in TM_SIDES:
            for axi, ports in port_options(board):
                if array_error(tn, tm, axi):
                    continue
                for name, ib, wb_pe, acc, ob in BUFFER_PRESETS:
                    for pump in PUMPS:
                        if ports == 4 and tn * tm * pump < FOUR_PORT_MIN_LANES:
                            continue
                        out.append((configured(board, tn=tn, tm=tm, axi_data_width_bits=axi, hp_ports=ports,
                                               ibuf_bank_bytes=ib, wbuf_bank_bytes=wb_pe * tn * tm,
                                               acc_bank_words=acc, obuf_bytes=ob, pump=pump), name))
    return out


def fits(res: dict, capacity: dict, limit: dict = UTILIZATION_LIMIT) -> bool:
    """Whether every modelled resource is within its ``limit`` (fraction) of the part's capacity."""
    return not over(res, capacity, limit)


def over(res: dict, capacity: dict, limit: dict = UTILIZATION_LIMIT) -> tuple:
    """The keys of :data:`RESOURCE_KEYS` whose ``res`` is over ``limit`` (fraction) of the part's capacity."""
    return tuple(k for k in RESOURCE_KEYS if res[k] > limit[k] * capacity[k])


def hls_point(point: "Point", limit: dict = UTILIZATION_LIMIT) -> "Point":
    """Set ``point.hls`` / ``hls_over``: the HLS kernel's estimate of ``point.board`` (single-rate, without
    instruction ROM: :func:`generator.estimate.hls_resources.estimate`) against ``limit`` of the part.
    ``hls_over``: what stops the HLS kernel, as text (empty: it fits), e.g. ``("bram36 276",)``, or the reason the
    kernel cannot be rendered for it (:func:`generator.spec.memories.hls_obuf_k`: ``"OBUF K=3"``; four HP ports:
    ``"4 HP ports: RTL only"``)."""
    if point.board.accelerator.hp_ports > 2:      # (the HLS block design has one splitter: hls_templates/bd/accel_hp.v)
        point.hls = {k: 0 for k in RESOURCE_KEYS}
        point.hls_over = (f"{point.board.accelerator.hp_ports} HP ports: RTL only",)
        return point
    try:
        point.hls = hls_resources.estimate(point.board).used()
    except ValueError:
        a = point.board.accelerator
        point.hls = {k: 0 for k in RESOURCE_KEYS}
        point.hls_over = (f"OBUF K={-(-a.axi_data_width_bits // 8 // a.tm)}",)
        return point
    point.hls_over = tuple(f"{k} {point.hls[k]:g}" for k in over(point.hls, point.board.resources.model_dump(), limit))
    return point


def evaluate(point: Point, graphs: dict) -> None:
    """Fill ``point``'s frames/s, cycles and traffic for each precision of ``graphs`` ({8 or 16: quantized graph});
    a configuration no tiling of the model fits gets 0 frames/s and the scheduler's message in ``error``."""
    b = point.board
    for bits, g in graphs.items():
        hw = HwConfig.from_board(b, bits)
        try:
            prog = compile_program(g, hw)
        except ScheduleError as e:
            _fill(point, bits, 0, 0, 0, str(e).split(";")[0])
            continue
        compulsory = (sum(layer_of(g, n, hw).compulsory_bytes(hw.elem_bytes) for n in g.macro_nodes())
                      if bits == 8 else 0)
        _fill(point, bits, prog.cycles, sum(p.ddr_bytes for p in prog.plans), compulsory, "")


def pareto_front(points: list[Point]) -> list[Point]:
    """The points (with int8 frames/s > 0) that no other point dominates: at least as fast in int8 with no more
    DSP48E2, BRAM36, URAM and LUT, and better in one of them. Sets ``pareto``; returns them fastest first."""
    keys = ("dsp48e2", "bram36", "uram", "lut")
    ok = [p for p in points if p.fps8 > 0]
    for p in ok:
        p.pareto = not any(
            q is not p and q.fps8 >= p.fps8 and all(q.resources[k] <= p.resources[k] for k in keys)
            and (q.fps8 > p.fps8 or any(q.resources[k] < p.resources[k] for k in keys)) for q in ok)
    return sorted((p for p in ok if p.pareto), key=lambda p: -p.fps8)


def choose(points: list[Point]) -> Point | None:
    """The fastest int8 point that compiles and whose HLS kernel fits (``hls_over`` empty; when no point's does,
    the fastest of all), ties (within 0.1%) to the fewest DSP48E2, then BRAM36, then URAM."""
    ok = [p for p in points if p.fps8 > 0 and not p.hls_over] or [p for p in points if p.fps8 > 0]
    if not ok:
        return None
    best = max(p.fps8 for p in ok)
    near = [p for p in ok if p.fps8 >= best * 0.999]
    pick = min(near, key=lambda p: (p.resources["dsp48e2"], p.resources["bram36"], p.resources["uram"]))
    pick.chosen = True
    return pick


_WORK: tuple = ()   # (points, graphs) of the running exploration, inherited by the forked workers


def _evaluate_one(job: tuple) -> tuple:
    """Worker of :func:`_evaluate_all`: point ``job[0]`` of :data:`_WORK` for precision ``job[1]``; returns the
    fields :func:`evaluate` set."""
    k, bits = job
    p = _WORK[0][k]
    evaluate(p, {bits: _WORK[1][bits]})
    return k, p.fps8, p.cycles8, p.traffic8, p.compulsory8, p.fps16, p.cycles16, p.error


def timing_key(board: Board, bits: int, graph_id: str) -> tuple:
    """The key under which a configuration's latency-model results are the same on every board: the graph
    (``graph_id``, e.g. :func:`graph_fingerprint`), the precision and ``board``'s :class:`HwConfig` without its
    clock, name and config id (the compiler's cycles and bytes do not depend on them)."""
    return bits, graph_id, dataclasses.replace(HwConfig.from_board(board, bits), clock_mhz=0.0, board="", config_id=0)


#: fields the compiler's DDR allocation writes into a graph it compiles (``Tensor.ddr_addr``, ``Region.addr`` and
#: ``Region.pad``, generator/codegen/allocate.py ``_place_regions``, set anew by every compile): results of a
#: compile, not inputs, so :func:`graph_fingerprint` leaves them out
ALLOCATION_FIELDS = frozenset({"ddr_addr", "addr", "pad"})


def graph_fingerprint(g) -> str:
    """SHA-256 (hex) of a quantized graph's pickle without the DDR addresses a compile writes into it
    (:data:`ALLOCATION_FIELDS`): equal for the same model and quantization on any board, before and after the graph
    is compiled (the first board of an ``explore --board all`` run compiles the graphs the next ones key by)."""
    def plain(items):
        return [(k, {f: v for f, v in vars(x).items() if f not in ALLOCATION_FIELDS}) for k, x in items]
    state = {k: v for k, v in vars(g).items() if k not in ("tensors", "regions")}
    return hashlib.sha256(pickle.dumps((state, plain(g.tensors.items()), plain(g.regions.items())))).hexdigest()


def _fill(p: Point, bits: int, cycles: int, traffic: int, compulsory: int, error: str) -> None:
    """Set ``p``'s results for ``bits`` from cycles per frame (0: no tiling fits, ``error`` says why)."""
    fps = p.board.pl_clock_mhz * 1e6 / cycles if cycles else 0.0
    if bits == 8:
        p.fps8, p.cycles8, p.traffic8, p.compulsory8 = fps, cycles, traffic, compulsory
    else:
        p.fps16, p.cycles16 = fps, cycles
    if error:
        p.error = error.replace("{board}", p.board.name)


def _evaluate_all(pts: list, graphs: dict, bits: int, progress=None, workers: int | None = None,
                  cache: dict | None = None) -> None:
    """:func:`evaluate` every point of ``pts`` for ``bits``, in ``workers`` forked processes (default: one per
    CPU; 1 or no ``fork`` on this platform: in this process). ``cache``: {:func:`timing_key`: (cycles, bytes,
    compulsory bytes, error)} of earlier evaluations (another board of the same run), read and extended."""
    global _WORK
    gid = graph_fingerprint(graphs[bits]) if cache is not None else ""
    todo = []
    for p in pts:
        key = timing_key(p.board, bits, gid) if cache is not None else None
        if key is not None and key in cache:
            _fill(p, bits, *cache[key])
        else:
            todo.append(p)
    workers = workers or os.cpu_count() or 1
    if workers < 2 or len(todo) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for p in (progress(todo) if progress else todo):
            evaluate(p, {bits: graphs[bits]})
    else:
        _WORK = (todo, graphs)
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                res = pool.imap_unordered(_evaluate_one, [(k, bits) for k in range(len(todo))])
                for k, *fields in (progress(res, total=len(todo)) if progress else res):
                    p = todo[k]
                    (p.fps8, p.cycles8, p.traffic8, p.compulsory8, p.fps16, p.cycles16, p.error) = fields
        finally:
            _WORK = ()
    if cache is not None:
        for p in todo:
            cyc = p.cycles8 if bits == 8 else p.cycles16
            ok = (p.fps8 if bits == 8 else p.fps16) > 0
            cache[timing_key(p.board, bits, gid)] = (cyc if ok else 0, p.traffic8 if bits == 8 else 0,
                                                     p.compulsory8 if bits == 8 else 0,
                                                     "" if ok else p.error.replace(p.board.name, "{board}"))


def explore(board: Board, graphs: dict, progress=None, limit: dict = UTILIZATION_LIMIT,
            workers: int | None = None, cache: dict | None = None) -> list[Point]:
    """Evaluate every candidate of ``board`` that fits within ``limit`` of the part (module docstring).
    ``graphs``: {8: int8 quantized graph, 16: int16 quantized graph}; int16 is evaluated for the Pareto front
    only. ``progress``: a callable taking an iterable and ``total`` (e.g. tqdm) or None; ``workers``: processes
    (default one per CPU); ``cache``: results shared between the boards of one run (:func:`_evaluate_all`; the same
    configuration is compiled once). Returns all fitting points, each with its HLS kernel's estimate
    (:func:`hls_point`), the front marked (``pareto``) and the choice marked (``chosen``: :func:`choose`; its int16
    evaluated too)."""
    pts = []
    for b, preset in candidates(board):
        res = rtl_model.estimate(b).used()
        if fits(res, board.resources.model_dump(), limit):
            pts.append(hls_point(Point(b, res, preset), limit))
    _evaluate_all(pts, graphs, 8, progress, workers, cache)
    front = pareto_front(pts)
    pick = choose(pts)
    _evaluate_all(front + ([pick] if pick is not None and not pick.pareto else []), graphs, 16, None, workers, cache)
    return pts


def port_pairs(board: Board, graphs: dict, progress=None, limit: dict = UTILIZATION_LIMIT,
               workers: int | None = None) -> list[tuple[Point, Point]]:
    """(two-port point, four-port point) for every candidate of ``board`` on four HP ports (:func:`port_options`)
    that fits within ``limit`` of the part, beside the same configuration on two ports; both evaluated in int8
    (``graphs[8]``) with the latency model. Returns the pairs in candidate order (none on a board whose PS DDR moves
    no more than two ports)."""
    pairs = []
    for b, preset in candidates(board):
        a = b.accelerator
        if a.hp_ports != 4:
            continue
        res = rtl_model.estimate(b).used()
        if fits(res, board.resources.model_dump(), limit):
            two = configured(board, **dict(a.model_dump(), axi_data_width_bits=a.axi_data_width_bits // 2, hp_ports=2))
            pairs.append((Point(two, rtl_model.estimate(two).used(), preset), Point(b, res, preset)))
    _evaluate_all([p for pair in pairs for p in pair], graphs, 8, progress, workers)
    return pairs


"""FPGA resource estimate of one accelerator configuration (the HLS kernel of ``hls_templates/accel.cpp.j2``
rendered for a board), from the design's parameters alone: nothing here has been synthesized, and every number is
an *estimate*. :func:`check` refuses a configuration that does not fit the board's part with
:class:`ResourceError`, listing the numbers.

Units: DSP48E2 slices; BRAM36 blocks (36 Kb; a memory that fits one BRAM18 counts 0.5, as Vivado reports
"Block RAM Tile"); URAM blocks (288 Kb, 4096 x 72); LUTs and FFs (CLB).

**DSP48E2** = ``Tn * Tm`` (one per PE, in both modes: in int8 each DSP multiplies one weight by two activations
packed into its 27-bit A port, so int8 does twice the MACs on the same slices) ``+ Tm * dsp_per_requant``
(post-processing: one requantization multiplier per output lane, ``(acc_bits + 1)``-bit accumulator-plus-bias
times the ``MULT_BITS``-bit multiplier; a 27 x 18 signed DSP48E2 takes 27 bits of the wide operand, each further
slice 26 more: ``1 + ceil(max(0, a - 27) / 26)``, 2 slices for the 48-bit int16 accumulator).

**Memories**: the kernel's buffers as the block design holds them (``vivado_bd.tcl``, :func:`block_design`):
IBUF, WBUF, ACC and PBUF are memory ports of the HLS IPs onto simple-dual-port RAMs in the block design (one
``accel_ram`` cell per memory: port A written by the producer IP, port B read by the consumer IP), one RAM per
ping-pong bank, the lanes of a word side by side (``ARRAY_RESHAPE`` on the lane dimension: one wide word per
address). OBUF stays inside the store IP (``ARRAY_PARTITION`` on its lanes, ``BIND_STORAGE``). Elements are
stored 16 bits wide at the int8 depth, accumulators ``max(acc_bits_int8, acc_bits_int16)`` wide:

=========  =====================  =========================================  ===============
memory     memories               depth (words)                              width (bits)
=========  =====================  =========================================  ===============
IBUF       2 (banks)              ibuf_bank_bytes / Tn                       16 * Tn
WBUF       2 * Tm (banks x rows)  wbuf_bank_bytes / (Tn * Tm)                16 * Tn
ACC        2 (banks)              acc_bank_words                             acc bits * Tm
OBUF       Tm (store IP inside)   obuf_bytes / Tm                            16
PBUF       Tm (cyclic)            pbuf_entries / Tm                          128 (16-byte record)
ROM        1                      instructions of the baked-in program       256
FIFOs      12 ``axis_data_fifo``  see :data:`BD_STREAMS`                     the stream's TDATA
=========  =====================  =========================================  ===============

The block design's AXI4-Stream FIFOs (:func:`block_design`): the three command queues (``arch.CMD_QUEUE_DEPTH``
instructions of 256 bits), the two run-descriptor queues (320 bits) and three done queues (64 bits) at the
``axis_data_fifo`` minimum depth of 16, and the four dependency-token queues of
:data:`generator.spec.isa.TOKEN_QUEUE_DEPTH` (8-bit TDATA). Counted as memories of the same rule (the FIFO IP maps a
shallow FIFO to distributed RAM, a deep one to block RAM) plus :data:`LUT_PER_FIFO` / :data:`FF_PER_FIFO` of
control each.

Mapping rule, per group of identical partitioned memories:

1. depth <= :data:`LUTRAM_MAX_DEPTH` (64): distributed RAM, ``ceil(depth / 64) * width`` LUTs each (one LUT6 is a
   64 x 1 RAM);
2. the instruction ROM and the FIFOs deeper than 64 are BRAM (URAM cannot be initialized by the bitstream;
   ``axis_data_fifo`` has no URAM mode);
3. otherwise each memory takes the cheapest BRAM aspect ratio: BRAM36 as 32K x 1 ... 1K x 36, 512 x 72 (simple
   dual port), or half a block as BRAM18 16K x 1 ... 1K x 18, 512 x 36: ``min(ceil(width / w) * ceil(depth / d))``;
4. if the part has URAM, groups move from BRAM to URAM (``ceil(width / 72) * ceil(depth / 4096)`` each) in order
   of BRAM36 saved per URAM used, a whole group at a time, while the URAMs left suffice and the move saves BRAM.
   The block design's ``accel_ram`` cells take the same choice as their ``MEMORY_PRIMITIVE`` (and the store IP's
   OBUF as ``BIND_STORAGE``; :func:`storage_binding`).

**LUT / FF**: a bit-width-based engineering estimate, not calibrated against a synthesis run of this kernel
(there is no Vivado here): a b-bit adder or comparator is b LUTs (CARRY8 chains), a b-bit register b FFs.
Per PE (Tn*Tm): :data:`LUT_PER_PE` / :data:`FF_PER_PE` (operand fan-out registers, the int8/int16 operand select,
cascade glue); per ``PACK_GROUP`` PEs the split of the two packed int8 lanes with the sign carry (2 x 24-bit
adds); per output lane (Tm): the fabric adder tree of the ``ceil(Tn / PACK_GROUP)`` cascade outputs for two
lanes, the accumulator read-add-write and range check (2 x 64-bit adds and compares) and the requantization
datapath (bias add, rounding add, 64-bit barrel shifter, zero-point add, clamp, max-pool compare):
:data:`LUT_PER_LANE` / :data:`FF_PER_LANE`; per partitioned memory :data:`LUT_PER_MEMORY` (write-enable decode,
read-data mux of the two banks); plus :data:`LUT_FIXED` / :data:`FF_FIXED` for the m_axi adapter at the AXI width,
the s_axilite register file, instruction fetch / validate / decode and the load / store address generators.
Expect the LUT/FF figures to be off by tens of percent; DSP and memory counts follow the structure exactly,
barring synthesis choices (e.g. HLS widening the requantization multiply beyond the data's width).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.spec import arch, isa
from generator.spec.board import Board

#: BRAM36 aspect ratios (depth, width); 512 x 72 is the simple-dual-port mode
BRAM36_SHAPES = [(32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72)]
#: BRAM18 aspect ratios (each half a BRAM36)
BRAM18_SHAPES = [(16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36)]
URAM_DEPTH, URAM_WIDTH = 4096, 72
#: memories this shallow are distributed RAM (LUTs)
LUTRAM_MAX_DEPTH = 64
#: the fetch -> load / compute / store instruction queues (depth arch.CMD_QUEUE_DEPTH)
N_QUEUES = 3
#: the block design's axis_data_fifo cannot be shallower than this (FIFO_DEPTH 16 ... 32768, a power of two)
AXIS_FIFO_MIN_DEPTH = 16
#: TDATA bits of the streams: instruction, run descriptor (4 x 48-bit base + 4 x 32-bit size), done report,
#: token (1 bit, padded to a byte)
RUN_BITS = len(isa.BASE_REGS) * (48 + 32)
DONE_BITS, TOKEN_TDATA_BITS = 64, 8
#: control logic of one axis_data_fifo (pointers, flags, the AXI4-Stream register slice)
LUT_PER_FIFO, FF_PER_FIFO = 60, 80
#: one stream of the block design: (name, producer IP, its port, consumer IP, its port, depth, TDATA bits);
#: IPs are the top functions of generator.backends.hls.TOPS (accel, accel_load, accel_compute, accel_store)
BD_STREAMS = [
    ("load_q", "accel", "load_q", "accel_load", "q", arch.CMD_QUEUE_DEPTH, isa.INSN_BITS),
    ("compute_q", "accel", "compute_q", "accel_compute", "q", arch.CMD_QUEUE_DEPTH, isa.INSN_BITS),
    ("store_q", "accel", "store_q", "accel_store", "q", arch.CMD_QUEUE_DEPTH, isa.INSN_BITS),
    ("load_run", "accel", "load_run", "accel_load", "run", arch.RUN_QUEUE_DEPTH, RUN_BITS),
    ("store_run", "accel", "store_run", "accel_store", "run", arch.RUN_QUEUE_DEPTH, RUN_BITS),
    ("load_done", "accel_load", "done", "accel", "load_done", arch.RUN_QUEUE_DEPTH, DONE_BITS),
    ("compute_done", "accel_compute", "done", "accel", "compute_done", arch.RUN_QUEUE_DEPTH, DONE_BITS),
    ("store_done", "accel_store", "done", "accel", "store_done", arch.RUN_QUEUE_DEPTH, DONE_BITS),
    ("l2c", "accel_load", "l2c", "accel_compute", "l2c", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("c2l", "accel_compute", "c2l", "accel_load", "c2l", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("c2s", "accel_compute", "c2s", "accel_store", "c2s", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("s2c", "accel_store", "s2c", "accel_compute", "s2c", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
]
#: int8 packed-lane split per PACK_GROUP PEs: two 24-bit adds
LUT_PER_PACK_GROUP = 48
LUT_PER_PE, FF_PER_PE = 10, 24
LUT_PER_LANE, FF_PER_LANE = 560, 620
LUT_PER_MEMORY = 8
LUT_FIXED, FF_FIXED = 15000, 20000
#: 8-bit + 16-bit element width and the packing shift of the int8 DSP trick (see generator/backends/hls.py)
ELEM_BITS = 16


class ResourceError(ValueError):
    """The configuration does not fit the part: the message lists each resource, estimate vs capacity."""


@dataclass
class Memory:
    """One group of identical partitioned memories and where it is mapped (``impl``: bram, uram or lutram)."""
    name: str
    count: int
    depth: int
    width: int
    impl: str = "bram"
    bram36: float = 0.0
    uram: int = 0
    lut: int = 0

    @property
    def kbits(self) -> float:
        return self.count * self.depth * self.width / 1024


@dataclass
class Estimate:
    """Estimated resources of a configuration (see the module docstring for the formulas) and the capacity."""
    board: str
    part: str
    tn: int
    tm: int
    dsp48e2: int
    bram36: float
    uram: int
    lut: int
    ff: int
    capacity: dict
    memories: list = field(default_factory=list)
    dsp_pe: int = 0
    dsp_post: int = 0

    def used(self) -> dict:
        """{resource: estimate}, keys as in the board file's ``resources``."""
        return {"dsp48e2": self.dsp48e2, "bram36": self.bram36, "uram": self.uram, "lut": self.lut, "ff": self.ff}

    def over(self) -> list[str]:
        """Resources whose estimate exceeds the capacity."""
        return [k for k, v in self.used().items() if v > self.capacity[k]]

    def table(self) -> str:
        """Markdown table: resource, estimate, capacity, utilization."""
        rows = ["| resource | estimate | capacity | utilization |", "|---|---:|---:|---:|"]
        for k, v in self.used().items():
            cap = self.capacity[k]
            u = f"{v / cap:.0%}" if cap else ("-" if not v else "over")
            rows.append(f"| {k.upper() if k != 'dsp48e2' else 'DSP48E2'} | {v:g} | {cap} | {u} |")
        return "\n".join(rows)

    def memory_table(self) -> str:
        """Markdown table of the memory mapping."""
        rows = ["| memory | count x depth x width | mapped to | BRAM36 | URAM | LUT |", "|---|---|---|---:|---:|---:|"]
        for m in self.memories:
            rows.append(f"| {m.name} | {m.count} x {m.depth} x {m.width} | {m.impl} | {m.bram36:g} | {m.uram} | "
                        f"{m.lut} |")
        return "\n".join(rows)


def bram36_for(depth: int, width: int) -> float:
    """BRAM36 blocks (0.5 steps) of one depth x width memory: the cheapest BRAM36 or BRAM18 aspect ratio."""
    if depth <= 0 or width <= 0:
        return 0.0
    best = min(math.ceil(width / w) * math.ceil(depth / d) for d, w in BRAM36_SHAPES)
    half = min(math.ceil(width / w) * math.ceil(depth / d) for d, w in BRAM18_SHAPES)
    return min(float(best), half / 2)


def uram_for(depth: int, width: int) -> int:
    """URAM blocks (4096 x 72) of one depth x width memory."""
    if depth <= 0 or width <= 0:
        return 0
    return math.ceil(width / URAM_WIDTH) * math.ceil(depth / URAM_DEPTH)


def dsp_per_requant(acc_bits: int, mult_bits: int = isa.MULT_BITS) -> int:
    """DSP48E2 slices of one ``(acc_bits + 1)`` x ``mult_bits`` signed multiply (27 x 18 per slice, 26 more
    bits of the wide operand per extra slice)."""
    a, b = acc_bits + 1, mult_bits
    if b > 18:
        a, b = b, a
    return 1 + math.ceil(max(0, a - 27) / 26)


def fifo_depth(depth: int) -> int:
    """``axis_data_fifo`` FIFO_DEPTH for a stream of ``depth`` entries: a power of two, at least 16."""
    return max(AXIS_FIFO_MIN_DEPTH, 1 << max(0, int(depth) - 1).bit_length())


def is_fifo(m: "Memory") -> bool:
    return "FIFO" in m.name


def memories(board: Board, rom_insns: int = 0) -> list[Memory]:
    """The kernel's memory groups (before mapping) for ``board``'s accelerator and a ROM of ``rom_insns``."""
    a = board.accelerator
    tn, tm = a.tn, a.tm
    acc_store = max(a.acc_bits_int8, a.acc_bits_int16)
    mems = [Memory("IBUF", 2, a.ibuf_bank_bytes // tn, ELEM_BITS * tn),
            Memory("WBUF", 2 * tm, a.wbuf_bank_bytes // (tn * tm), ELEM_BITS * tn),
            Memory("ACC", 2, a.acc_bank_words, acc_store * tm),
            Memory("OBUF", tm, a.obuf_bytes // tm, ELEM_BITS),
            Memory("PBUF", tm, -(-a.pbuf_entries // tm), isa.PARAM_RECORD_BYTES * 8)]
    fifos: dict = {}
    for _, _, _, _, _, depth, bits in BD_STREAMS:
        d = fifo_depth(depth)
        fifos[(d, bits)] = fifos.get((d, bits), 0) + 1
    names = {isa.INSN_BITS: "cmd FIFOs", RUN_BITS: "run FIFOs", DONE_BITS: "done FIFOs",
             TOKEN_TDATA_BITS: "token FIFOs"}
    for (d, bits), n in fifos.items():
        mems.append(Memory(names.get(bits, f"FIFOs {bits}b"), n, d, bits))
    if rom_insns:
        mems.append(Memory("ROM", 1, rom_insns, isa.INSN_BITS))
    return mems


def _map(mems: list[Memory], uram_cap: int) -> None:
    for m in mems:
        if m.depth <= LUTRAM_MAX_DEPTH and m.name != "ROM":
            m.impl, m.lut = "lutram", m.count * math.ceil(m.depth / 64) * m.width
        else:
            m.impl, m.bram36 = "bram", m.count * bram36_for(m.depth, m.width)
    left = uram_cap
    cands = [m for m in mems if m.impl == "bram" and m.name != "ROM" and not is_fifo(m)]
    cands.sort(key=lambda m: -m.bram36 / max(1, m.count * uram_for(m.depth, m.width)))
    for m in cands:
        u = m.count * uram_for(m.depth, m.width)
        if u <= left and m.bram36 > u:
            m.impl, m.uram, m.bram36 = "uram", u, 0.0
            left -= u


def estimate(board: Board, rom_insns: int = 0) -> Estimate:
    """Estimated DSP48E2 / BRAM36 / URAM / LUT / FF of ``board``'s accelerator configuration with an instruction
    ROM of ``rom_insns`` instructions (0: programs fetched from DDR only). See the module docstring."""
    a = board.accelerator
    tn, tm = a.tn, a.tm
    acc_store = max(a.acc_bits_int8, a.acc_bits_int16)
    dsp_pe = tn * tm
    dsp_post = tm * dsp_per_requant(acc_store)
    mems = memories(board, rom_insns)
    _map(mems, board.resources.uram)
    g = arch.PACK_GROUP
    n_mem = sum(m.count for m in mems if not is_fifo(m))
    n_fifo = sum(m.count for m in mems if is_fifo(m))
    lut = (tn * tm * LUT_PER_PE + math.ceil(tn / g) * tm * LUT_PER_PACK_GROUP
           + tm * (LUT_PER_LANE + 2 * math.ceil(tn / g) * acc_store) + n_mem * LUT_PER_MEMORY
           + LUT_FIXED * a.axi_data_width_bits // 128 + sum(m.lut for m in mems) + n_fifo * LUT_PER_FIFO)
    ff = tn * tm * FF_PER_PE + tm * FF_PER_LANE + FF_FIXED * a.axi_data_width_bits // 128 + n_fifo * FF_PER_FIFO
    return Estimate(board=board.name, part=board.part, tn=tn, tm=tm, dsp48e2=dsp_pe + dsp_post,
                    bram36=sum(m.bram36 for m in mems), uram=sum(m.uram for m in mems), lut=int(lut), ff=int(ff),
                    capacity=board.resources.model_dump(), memories=mems, dsp_pe=dsp_pe, dsp_post=dsp_post)


def check(board: Board, rom_insns: int = 0) -> Estimate:
    """:func:`estimate`, refusing a configuration that does not fit.

    Raises ResourceError naming the board, part, configuration and every resource (estimate / capacity)."""
    e = estimate(board, rom_insns)
    over = e.over()
    if over:
        a = board.accelerator
        nums = ", ".join(f"{k} {v:g} / {e.capacity[k]}{' (over)' if k in over else ''}" for k, v in e.used().items())
        raise ResourceError(
            f"accelerator configuration Tn={a.tn} x Tm={a.tm} of board {board.name} ({board.part}) does not fit: "
            f"{', '.join(over)} over capacity (estimate / capacity: {nums}); reduce tn/tm or the buffer sizes "
            f"in boards/{board.name}.yaml (estimates of generator/estimate/hls_resources.py)")
    return e


def lane_memories(board: Board) -> list[Memory]:
    """The buffers as the RTL (``rtl/``) holds them: one memory per lane (IBUF Tn, WBUF Tn x Tm, ACC / OBUF Tm,
    PBUF Tm cyclic), the two ping-pong banks one address bit of each: the shapes :func:`storage_binding` maps for
    ``per_lane=True`` (the RTL's ``ram_style``, :func:`generator.backends.rtl.ram_styles`)."""
    a = board.accelerator
    tn, tm = a.tn, a.tm
    acc_store = max(a.acc_bits_int8, a.acc_bits_int16)
    return [Memory("IBUF", tn, 2 * (a.ibuf_bank_bytes // tn), ELEM_BITS),
            Memory("WBUF", tn * tm, 2 * (a.wbuf_bank_bytes // (tn * tm)), ELEM_BITS),
            Memory("ACC", tm, 2 * a.acc_bank_words, acc_store),
            Memory("OBUF", tm, a.obuf_bytes // tm, ELEM_BITS),
            Memory("PBUF", tm, -(-a.pbuf_entries // tm), isa.PARAM_RECORD_BYTES * 8)]


def storage_binding(board: Board, rom_insns: int = 0, per_lane: bool = False) -> dict:
    """{kernel array name: storage impl} for the buffers, from :func:`estimate`: the block design's memories'
    primitive and the store IP's OBUF ``BIND_STORAGE impl=``. ``per_lane``: the same mapping rule over the RTL's
    per-lane memories (:func:`lane_memories`; the ROM and FIFOs are never URAM, so they do not change it)."""
    names = {"IBUF": "ibuf", "WBUF": "wbuf", "ACC": "acc", "OBUF": "obuf", "PBUF": "pbuf"}
    if per_lane:
        mems = lane_memories(board)
        _map(mems, board.resources.uram)
    else:
        mems = estimate(board, rom_insns).memories
    return {names[m.name]: m.impl for m in mems if m.name in names}


#: the block design's memories: (name, kernel array, producer IP, consumer IPs); ACC's port B is shared by the
#: compute IP (accumulation reads) and the store IP (POST reads), which never read one bank at the same time
#: (the c2s / s2c tokens hand a bank over), so one accel_ram port B serves both
BD_MEMORY_PORTS = [("IBUF", "ibuf", "accel_load", ["accel_compute"]),
                   ("WBUF", "wbuf", "accel_load", ["accel_compute"]),
                   ("ACC", "acc", "accel_compute", ["accel_compute", "accel_store"]),
                   ("PBUF", "pbuf", "accel_load", ["accel_store"])]
XPM_PRIMITIVE = {"bram": "block", "uram": "ultra", "lutram": "distributed"}


def block_design(board: Board, rom_insns: int = 0) -> dict:
    """What ``vivado_bd.tcl`` instantiates besides the PS and the four HLS IPs, and what this estimate counts:
    ``streams``: [{name, src, src_port, dst, dst_port, depth (the kernel's), fifo_depth (axis_data_fifo
    FIFO_DEPTH), bits, memory_type (block / distributed)}]; ``memories``: [{name, var, cells: [{cell, port}]
    (one per memory: bank, and row of WBUF / lane of PBUF), depth, width, impl, addr_lsb (log2 of the
    bytes between words on the HLS bram port's byte address), primitive (xpm MEMORY_PRIMITIVE),
    producer, consumers}]."""
    e = estimate(board, rom_insns)
    by = {m.name: m for m in e.memories}
    a = board.accelerator
    streams = []
    for name, src, sp, dst, dp, depth, bits in BD_STREAMS:
        fd = fifo_depth(depth)
        streams.append(dict(name=name, src=src, src_port=sp, dst=dst, dst_port=dp, depth=depth, fifo_depth=fd,
                            bits=bits, memory_type="distributed" if fd <= LUTRAM_MAX_DEPTH else "block"))
    mems = []
    for name, var, prod, cons in BD_MEMORY_PORTS:
        m = by[name]
        if name == "WBUF":
            ports = [f"{var}_{b}_{r}" for b in range(2) for r in range(a.tm)]
        elif name == "PBUF":
            ports = [f"{var}_{r}" for r in range(a.tm)]
        else:
            ports = [f"{var}_{b}" for b in range(2)]
        assert len(ports) == m.count
        mems.append(dict(name=name, var=var, ports=ports, depth=m.depth, width=m.width, impl=m.impl,
                         addr_lsb=max(0, math.ceil(math.log2(m.width / 8))),
                         primitive=XPM_PRIMITIVE[m.impl], producer=prod, consumers=cons))
    return {"streams": streams, "memories": mems}


if __name__ == "__main__":          # python -m generator.estimate.hls_resources [board ...]: the estimate of each board file
    import sys

    from generator.spec.board import known_boards, load_board

    for name in sys.argv[1:] or known_boards():
        b = load_board(name)
        e = estimate(b)
        print(f"## {name} ({b.part}), Tn x Tm = {b.accelerator.tn} x {b.accelerator.tm}, {b.pl_clock_mhz:g} MHz"
              f" (without instruction ROM)\n\n{e.table()}\n\n{e.memory_table()}\n")

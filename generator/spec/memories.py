"""How the accelerator's buffers and queues map onto FPGA memories: an architecture decision that both back ends
(the HLS block design, the RTL's ``ram_tdp`` styles) and the resource estimates take from here.

Units: BRAM36 blocks (36 Kb; a memory that fits one BRAM18 counts 0.5, as Vivado reports "Block RAM Tile"); URAM
blocks (288 Kb, 4096 x 72); LUTs.

**The HLS kernel's memories** (:func:`kernel_memories`, as the block design ``vivado_bd.tcl`` holds them): IBUF,
WBUF, ACC, OBUF, PBUF and TBUF are memory ports of the HLS IPs (``mode=bram``) onto RAMs in the block design (one
``accel_ram`` cell per memory, :mod:`generator.backends.hls.block_design`), one RAM per ping-pong bank with the
lanes of a word side by side (``ARRAY_RESHAPE`` on the lane dimension: one wide word per address: WBUF per bank and
row, ACC), or one RAM per lane (``ARRAY_PARTITION``: IBUF per bank and lane, OBUF, PBUF, TBUF). Elements are stored 16 bits wide at the int8
depth, accumulators ``max(acc_bits_int8, acc_bits_int16)`` wide. Ports: SDP = simple dual port (the producer writes
port A, the consumer reads port B); TDP = true dual port (both ports read and write; block RAM at most 36 bits wide
per RAMB36E2, no 512 x 72 shape, UG573; never LUTRAM, rule 5):

=========  =====================  ===========================  ===============  =====  ==============================
memory     memories               depth (words)                width (bits)     ports  IPs on the ports
=========  =====================  ===========================  ===============  =====  ==============================
IBUF       2 * Tn (banks x lanes) ibuf_bank_bytes / Tn         16               TDP    A: LOAD's write, else COMPUTE's
                                                                                       read; B: COMPUTE (``ram_t2p``:
                                                                                       the int8 pixel pair)
WBUF       2 * Tm (banks x rows)  wbuf_bank_bytes / (Tn * Tm)  16 * Tn          SDP    LOAD -> COMPUTE
ACC        2 (banks)              acc_bank_words               acc bits * Tm    TDP    A: COMPUTE; B: COMPUTE's write,
                                                                                       else POST's read, else COMPUTE
OBUF       K x Tm (lanes)         obuf_bytes / Tm / K          16               SDP    POST -> STORE
PBUF       Tm (lanes)             ceil(pbuf_entries / Tm)      128 (record)     SDP    LOAD -> POST
TBUF       Tm (lanes)             isa.TBUF_ROWS (64)           128 (record)     SDP    LOAD -> POST
ROM        1                      the baked-in program         256              -      (inside the fetch IP)
FIFOs      14 ``axis_data_fifo``  see :data:`BD_STREAMS`       the stream's     -      producer -> consumer
                                                               TDATA
=========  =====================  ===========================  ===============  =====  ==============================

PBUF and TBUF hold the raw 16-byte records (``trec_t pbuf[PBUF_ROWS][TM]``, the lane dimension partitioned: POST
reads lane m's record from lane m's memory); the kernel decodes them. OBUF has K = :func:`hls_obuf_k` rows of Tm
lanes side by side (K x Tm >= the m_axi bytes: a beat reads each lane memory once).

The block design's AXI4-Stream FIFOs: the three command queues (:data:`CMD_QUEUE_DEPTH` instructions of 256 bits),
the two run-descriptor queues (320 bits) and three done queues (64 bits) at the ``axis_data_fifo`` minimum depth
of 16, the store -> post command queue and the post -> store progress queue (:data:`POST_MSG_BITS`) at depth 16,
and the four dependency-token queues of :data:`generator.spec.isa.TOKEN_QUEUE_DEPTH` (8-bit TDATA), counted
as memories of the same rule (the FIFO IP maps a shallow FIFO to distributed RAM, a deep one to block RAM).

**The RTL's memories** (:func:`lane_memories`): the RAMs of ``rtl/buffers.sv``, per ping-pong bank Tn IBUF and
Tm ACC lane memories, Tm WBUF memories of Tn elements holding both banks (the bank the address's low bit;
per bank where :func:`wbuf_one_memory` says so), OL OBUF lane memories, Tm PBUF memories, Tm TBUF
memories (the activation table, one copy per POST lane).

Mapping rule (:func:`bind`), per group of identical partitioned memories:

1. depth <= :data:`LUTRAM_MAX_DEPTH` (64): distributed RAM, ``ceil(depth / 64) * width`` LUTs each (one LUT6 is a
   64 x 1 RAM), or for the RTL's byte-enabled memories (``granule``) the primitives per granule of
   :func:`lutram_luts`;
2. the instruction ROM and the FIFOs deeper than 64 are BRAM (URAM cannot be initialized by the bitstream;
   ``axis_data_fifo`` has no URAM mode);
3. otherwise each memory takes the cheapest BRAM aspect ratio: BRAM36 as 32K x 1 ... 1K x 36, 512 x 72 (simple
   dual port), or half a block as BRAM18 16K x 1 ... 1K x 18, 512 x 36: ``min(ceil(width / w) * ceil(depth / d))``
   (a true-dual-port memory without the 512-word simple-dual-port shapes);
4. if the part has URAM, groups move from BRAM to URAM (``ceil(width / 72) * ceil(depth / 4096)`` each) in order
   of BRAM36 saved per URAM used, a whole group at a time, while the URAMs left suffice and the move saves at least
   :data:`URAM_MIN_BRAM_SAVED` BRAM36 per URAM; then, if the block RAM still exceeds the part's (a budget given:
   the RTL's lane memories), groups that save at least one BRAM36 per URAM move too, in the same order (a
   double-pumped array's IBUF copies of 2K x 16, one BRAM36 each);
5. (the HLS kernel's memories, :func:`bound_kernel_memories`) a true-dual-port group that rule 1 made LUTRAM is
   block RAM instead: distributed RAM writes through one port only (UG974, XPM_MEMORY_DPDISTRAM: "Write operations
   are not allowed through port B").

The block design's ``accel_ram`` cells take the same choice as their ``MEMORY_PRIMITIVE``, the RTL as each buffer's
``ram_tdp`` STYLE (:func:`storage_binding`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from generator.spec import isa
from generator.spec.board import Board

#: BRAM36 aspect ratios (depth, width); 512 x 72 is the simple-dual-port mode
BRAM36_SHAPES = [(32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72)]
#: BRAM18 aspect ratios (each half a BRAM36)
BRAM18_SHAPES = [(16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36)]
URAM_DEPTH, URAM_WIDTH = 4096, 72
#: a group moves to URAM only if it saves at least this many BRAM36 per URAM288 it takes (a URAM holds eight
#: BRAM36's bits: a group using a small part of its URAMs is better left in block RAM)
URAM_MIN_BRAM_SAVED = 2
#: memories this shallow are distributed RAM (LUTs)
LUTRAM_MAX_DEPTH = 64
from generator.spec.arch import (CMD_QUEUE_DEPTH, POST_MSG_DEPTH, POST_QUEUE_DEPTH,  # noqa: E402
                                 RUN_QUEUE_DEPTH)  # (architecture constants)
#: the block design's axis_data_fifo cannot be shallower than this (FIFO_DEPTH 16 ... 32768, a power of two)
AXIS_FIFO_MIN_DEPTH = 16
#: TDATA bits of the streams: instruction, run descriptor (4 x 48-bit base + 4 x 32-bit size), done report,
#: token (1 bit, padded to a byte)
RUN_BITS = len(isa.BASE_REGS) * (48 + 32)
DONE_BITS, TOKEN_TDATA_BITS = 64, 8
#: TDATA bits of the post -> store progress message (words 24, done 1, err 32, iters 32; padded to bytes)
POST_MSG_BITS = 96
#: one stream of the block design: (name, producer IP, its port, consumer IP, its port, depth, TDATA bits);
#: IPs are the top functions of generator.backends.hls.kernel.TOPS (accel, accel_load, accel_compute, accel_store,
#: accel_post)
BD_STREAMS = [
    ("load_q", "accel", "load_q", "accel_load", "q", CMD_QUEUE_DEPTH, isa.INSN_BITS),
    ("compute_q", "accel", "compute_q", "accel_compute", "q", CMD_QUEUE_DEPTH, isa.INSN_BITS),
    ("store_q", "accel", "store_q", "accel_store", "q", CMD_QUEUE_DEPTH, isa.INSN_BITS),
    ("load_run", "accel", "load_run", "accel_load", "run", RUN_QUEUE_DEPTH, RUN_BITS),
    ("store_run", "accel", "store_run", "accel_store", "run", RUN_QUEUE_DEPTH, RUN_BITS),
    ("load_done", "accel_load", "done", "accel", "load_done", RUN_QUEUE_DEPTH, DONE_BITS),
    ("compute_done", "accel_compute", "done", "accel", "compute_done", RUN_QUEUE_DEPTH, DONE_BITS),
    ("store_done", "accel_store", "done", "accel", "store_done", RUN_QUEUE_DEPTH, DONE_BITS),
    ("l2c", "accel_load", "l2c", "accel_compute", "l2c", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("c2l", "accel_compute", "c2l", "accel_load", "c2l", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("c2s", "accel_compute", "c2s", "accel_store", "c2s", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("s2c", "accel_store", "s2c", "accel_compute", "s2c", isa.TOKEN_QUEUE_DEPTH, TOKEN_TDATA_BITS),
    ("post_q", "accel_store", "post_q", "accel_post", "q", POST_QUEUE_DEPTH, isa.INSN_BITS),
    ("p2s", "accel_post", "p2s", "accel_store", "p2s", POST_MSG_DEPTH, POST_MSG_BITS),
]
#: stored width of one activation / weight element (int8 and int16 share the int16 width)
ELEM_BITS = 16
#: buffer memory name -> the kernel's array name (the keys of storage_binding)
ARRAY_NAMES = {"IBUF": "ibuf", "WBUF": "wbuf", "ACC": "acc", "OBUF": "obuf", "PBUF": "pbuf", "TBUF": "tbuf"}


@dataclass
class Memory:
    """One group of ``count`` identical memories of ``depth`` words x ``width`` bits and where it is mapped
    (``impl``: bram, uram or lutram; ``bram36`` / ``uram`` / ``lut``: what the whole group takes); ``tdp``: both
    ports may write (true dual port: block RAM at most 36 / 18 bits wide per RAMB36E2 / RAMB18E2)."""
    name: str
    count: int
    depth: int
    width: int
    tdp: bool = False
    impl: str = "bram"
    bram36: float = 0.0
    uram: int = 0
    lut: int = 0
    granule: int = 0        # bits per write enable (the RTL's ram_tdp W / NB); 0: not modelled (one LUT per bit)

    @property
    def kbits(self) -> float:
        """Storage of the group in kilobits (count x depth x width / 1024)."""
        return self.count * self.depth * self.width / 1024


def bram36_for(depth: int, width: int, tdp: bool = False) -> float:
    """BRAM36 blocks (0.5 steps) of one depth x width memory: the cheapest BRAM36 or BRAM18 aspect ratio (UG573;
    ``tdp``: true dual port, without the 72- and 36-bit simple-dual-port shapes)."""
    if depth <= 0 or width <= 0:
        return 0.0
    best = min(math.ceil(width / w) * math.ceil(depth / d) for d, w in BRAM36_SHAPES if not (tdp and w > 36))
    half = min(math.ceil(width / w) * math.ceil(depth / d) for d, w in BRAM18_SHAPES if not (tdp and w > 18))
    return min(float(best), half / 2)


def uram_for(depth: int, width: int) -> int:
    """URAM blocks (4096 x 72) of one depth x width memory."""
    if depth <= 0 or width <= 0:
        return 0
    return math.ceil(width / URAM_WIDTH) * math.ceil(depth / URAM_DEPTH)


def fifo_depth(depth: int) -> int:
    """``axis_data_fifo`` FIFO_DEPTH for a stream of ``depth`` entries: a power of two, at least 16."""
    return max(AXIS_FIFO_MIN_DEPTH, 1 << max(0, int(depth) - 1).bit_length())


def is_fifo(m: Memory) -> bool:
    """Whether a memory group of :func:`kernel_memories` is a group of the block design's stream FIFOs."""
    return "FIFO" in m.name


def hls_obuf_k(tm: int, axi_bytes: int) -> int:
    """K: the OBUF words (of ``tm`` elements) side by side in one row of the HLS kernel's OBUF, ceil(``axi_bytes`` /
    ``tm``), so its K x Tm lane memories hold every element of an m_axi beat in one row or the next, and STORE reads
    each lane memory once per beat (II=1 on one read port; the RTL's OL = max(Tm, AXI bytes) lanes,
    ``rtl/buffers.sv``). OBUF word w is row w / K, lanes (w mod K) x Tm + m, a shift and a mask: K a power of two.
    Raises ValueError when K is not (e.g. Tm 24 on a 64-byte m_axi: K = 3)."""
    k = -(-axi_bytes // tm)
    if k & (k - 1):
        raise ValueError(f"accelerator.tm {tm} with a {axi_bytes}-byte m_axi beat (accelerator.axi_data_width_bits): "
                         f"the HLS kernel's OBUF puts ceil({axi_bytes} / {tm}) = {k} words in a row, which must be "
                         f"a power of two (choose a Tm that divides the beat's bytes or is at least as large)")
    return k


def kernel_memories(board: Board, rom_insns: int = 0) -> list[Memory]:
    """The HLS kernel's memory groups (before mapping) for ``board``'s accelerator and a ROM of ``rom_insns``: the
    module docstring's table (IBUF per bank and lane and ACC true dual port, PBUF / TBUF one 128-bit memory per
    lane), then the FIFO
    groups by (depth, TDATA bits) and the ROM if ``rom_insns``."""
    a = board.accelerator
    tn, tm = a.tn, a.tm
    acc_store = max(a.acc_bits_int8, a.acc_bits_int16)
    k = hls_obuf_k(tm, a.axi_data_width_bits // 8)
    mems = [Memory("IBUF", 2 * tn, a.ibuf_bank_bytes // tn, ELEM_BITS, tdp=True),   # compute: two reads a cycle
            Memory("WBUF", 2 * tm, a.wbuf_bank_bytes // (tn * tm), ELEM_BITS * tn),
            Memory("ACC", 2, a.acc_bank_words, acc_store * tm, tdp=True),   # compute: two read-write ports
            Memory("OBUF", k * tm, -(-(a.obuf_bytes // tm) // k), ELEM_BITS),
            Memory("PBUF", tm, -(-a.pbuf_entries // tm), isa.PARAM_RECORD_BYTES * 8),
            Memory("TBUF", tm, isa.TBUF_ROWS, isa.PARAM_RECORD_BYTES * 8)]
    fifos: dict = {}
    for _, _, _, _, _, depth, bits in BD_STREAMS:
        d = fifo_depth(depth)
        fifos[(d, bits)] = fifos.get((d, bits), 0) + 1
    names = {(fifo_depth(CMD_QUEUE_DEPTH), isa.INSN_BITS): "cmd FIFOs", (fifo_depth(POST_QUEUE_DEPTH), isa.INSN_BITS):
             "post cmd FIFO", (fifo_depth(POST_MSG_DEPTH), POST_MSG_BITS): "post progress FIFO"}
    names.update({(fifo_depth(RUN_QUEUE_DEPTH), RUN_BITS): "run FIFOs", (fifo_depth(RUN_QUEUE_DEPTH), DONE_BITS):
                  "done FIFOs", (fifo_depth(isa.TOKEN_QUEUE_DEPTH), TOKEN_TDATA_BITS): "token FIFOs"})
    for (d, bits), n in fifos.items():
        mems.append(Memory(names.get((d, bits), f"FIFOs {d}x{bits}b"), n, d, bits))
    if rom_insns:
        mems.append(Memory("ROM", 1, rom_insns, isa.INSN_BITS))
    return mems


def wbuf_one_memory(words: int) -> bool:
    """Whether the RTL keeps WBUF's two ping-pong banks of ``words`` words each in one memory per row (word
    {row, bank}; ``accel_pkg`` WB_ONE): when the banks are block RAM or UltraRAM (more than
    :data:`LUTRAM_MAX_DEPTH` words: the same or fewer blocks, and no bank multiplexer after the read) or when both
    fit one LUT6's 64 words (at most 32 each). Banks of 33-64 words stay two LUTRAMs (64 words each) and a 2:1
    select: one memory of 128 words would cost the same LUTs and add the multiplexer inside the LUTRAM."""
    return words > LUTRAM_MAX_DEPTH or 2 * words <= LUTRAM_MAX_DEPTH


def lane_memories(board: Board) -> list[Memory]:
    """The RAMs of ``rtl/buffers.sv`` with the geometry of the rendered ``accel_pkg`` (words per bank the larger
    of the int8 and int16 counts): per ping-pong bank Tn IBUF lane memories (true dual port) and Tm ACC lane
    memories (true dual port); Tm WBUF memories of Tn elements holding both banks (word {row, bank}: twice a
    bank's words, so COMPUTE reads one word without a bank multiplexer; 2 x Tm of a bank each where
    :func:`wbuf_one_memory` says so); OL = max(Tm, AXI bytes) OBUF lane memories (one
    bank); Tm PBUF memories of parameter records; Tm TBUF memories of activation-table records. A double-pumped
    array (``pump`` 2) has two copies of every IBUF and ACC lane memory (rtl/buffers.sv)."""
    from generator.spec.hw import HwConfig

    a = board.accelerator
    h8, h16 = HwConfig.from_board(board, 8), HwConfig.from_board(board, 16)
    ol = max(a.tm, a.axi_data_width_bits // 8)
    acc_w = max(h8.acc_bits, h16.acc_bits)
    wb = max(h8.wbuf_words, h16.wbuf_words)
    return [Memory("IBUF", 2 * a.tn * a.pump, max(h8.ibuf_words, h16.ibuf_words), ELEM_BITS, tdp=True, granule=8),
            (Memory("WBUF", a.tm, 2 * wb, ELEM_BITS * a.tn, granule=8) if wbuf_one_memory(wb)
             else Memory("WBUF", 2 * a.tm, wb, ELEM_BITS * a.tn, granule=8)),
            Memory("ACC", 2 * a.tm * a.pump, a.acc_bank_words, acc_w, tdp=True),
            Memory("OBUF", ol, -(-max(h8.obuf_words, h16.obuf_words) * a.tm // ol), ELEM_BITS, tdp=True),
            Memory("PBUF", a.tm, -(-a.pbuf_entries // a.tm), isa.PARAM_RECORD_BYTES * 8, granule=8),
            Memory("TBUF", a.tm, isa.TBUF_ROWS, isa.PARAM_RECORD_BYTES * 8, granule=8)]


def lutram_luts(depth: int, width: int, granule: int = 0) -> int:
    """LUTs of one simple-dual-port distributed RAM of ``depth`` words x ``width`` bits. ``granule`` 0: one LUT6 per
    bit and 64 words. Else the write enable covers ``granule`` bits, and each granule takes primitives of its own
    (UG574: RAM32M16, 32 x 14 bits in 8 LUTs, at most 32 words; RAM64M8, 64 x 7 bits in 8 LUTs; what Yosys'
    memory_libmap maps to on kv260's WBUF, 4,096 RAM64M8 for 32 x 64 words x 512 bits of 8-bit granules): 8 x
    ceil(granule / bits) LUTs per granule and 64 words."""
    if not granule:
        return math.ceil(depth / 64) * width
    per = 14 if depth <= 32 else 7
    return math.ceil(depth / 64) * (width // granule) * 8 * math.ceil(granule / per)


def bind(mems: list[Memory], uram_cap: int, bram_cap: float | None = None) -> list[Memory]:
    """Apply the mapping rule (module docstring) to ``mems`` in place, with ``uram_cap`` URAM blocks available
    (and, for the second pass of rule 4, ``bram_cap`` BRAM36 blocks): sets each group's ``impl`` and its
    ``bram36`` / ``uram`` / ``lut``. Returns ``mems``."""
    for m in mems:
        if m.depth <= LUTRAM_MAX_DEPTH and m.name != "ROM":
            m.impl, m.lut = "lutram", m.count * lutram_luts(m.depth, m.width, m.granule)
        else:
            m.impl, m.bram36 = "bram", m.count * bram36_for(m.depth, m.width, m.tdp)
    left = uram_cap
    cands = [m for m in mems if m.impl == "bram" and m.name != "ROM" and not is_fifo(m)]
    cands.sort(key=lambda m: -m.bram36 / max(1, m.count * uram_for(m.depth, m.width)))
    for m in cands:
        u = m.count * uram_for(m.depth, m.width)
        if u <= left and m.bram36 >= URAM_MIN_BRAM_SAVED * u:
            m.impl, m.uram, m.bram36 = "uram", u, 0.0
            left -= u
    for m in cands:                          # the second pass: only while the block RAM does not fit
        u = m.count * uram_for(m.depth, m.width)
        over = bram_cap is not None and sum(x.bram36 for x in mems) > bram_cap
        if over and m.impl == "bram" and u <= left and m.bram36 >= u:
            m.impl, m.uram, m.bram36 = "uram", u, 0.0
            left -= u
    return mems


def bound_kernel_memories(board: Board, rom_insns: int = 0) -> list[Memory]:
    """:func:`kernel_memories` of ``board`` mapped by :func:`bind` onto the part's URAM, a true-dual-port group that
    came out LUTRAM moved to block RAM (rule 5 of the module docstring: the block design's ``accel_ram`` builds a
    TDP memory from ``xpm_memory_tdpram``, which cannot be distributed RAM)."""
    mems = bind(kernel_memories(board, rom_insns), board.resources.uram)
    for m in mems:
        if m.tdp and m.impl == "lutram":
            m.impl, m.lut, m.bram36 = "bram", 0, m.count * bram36_for(m.depth, m.width, True)
    return mems


#: rtl/pre.sv's line buffers: two pairs (a row's fetch into one beside the other's pixel reads), each a true-dual-port
#: block RAM of a frame row's raw m_axi beats (the HLS kernel's accel_kernel_pre.h has two)
RTL_PRE_LINE_BUFFERS = 4


def pre_line_beats(axi_bytes: int) -> int:
    """m_axi beats of one PRE line buffer (accel_kernel_pre.h ``PRE_LINE_BEATS``, rtl/pre.sv ``LBEATS``): a row of
    3 x host.pre.MAX_FRAME bytes from any byte of its first beat plus the beat after the last."""
    from host.pre import MAX_FRAME
    return 3 * MAX_FRAME[0] // axi_bytes + 2


def rtl_pre_bram36(board: Board) -> float:
    """BRAM36 of rtl/pre.sv's :data:`RTL_PRE_LINE_BUFFERS` line buffers at ``board``'s m_axi width (true dual port,
    block RAM): what the lane memories' binding leaves them."""
    w = board.accelerator.axi_data_width_bits
    return RTL_PRE_LINE_BUFFERS * yosys_bram36(pre_line_beats(w // 8), w, True)


def yosys_bram36(depth: int, width: int, tdp: bool) -> float:
    """BRAM36 blocks Yosys' ``memory_libmap`` takes for one RAM: the cheapest aspect ratio as
    :func:`generator.spec.memories.bram36_for`, except that a simple-dual-port RAM wider than 36 bits is built
    from 512 x 72 RAMB36E2 alone (zcu19eg's 512-bit WBUF words: 8 RAMB36E2, not 7 and a RAMB18E2)."""
    if not tdp and width > 36 and depth <= 512:
        return float(math.ceil(width / 72))
    return bram36_for(depth, width, tdp)


def yosys_uram(depth: int, width: int) -> int:
    """URAM288 blocks Yosys takes for one RAM: 4096 x 72 each, two words of at most 36 bits side by side in a
    72-bit row (zcu19eg's 8192 x 16 OBUF lanes: one URAM288 each, the word picked by a multiplexer)."""
    per = 2 if width <= 36 else 1
    return math.ceil(width * per / 72) * math.ceil(depth / (4096 * per))


def rtl_lane_binding(board: Board) -> list[Memory]:
    """The RTL's per-lane memories (:func:`lane_memories`) bound by :func:`bind` onto the part's URAM, with the
    block RAM PRE's line buffers take (:func:`rtl_pre_bram36`) set aside."""
    return bind(lane_memories(board), board.resources.uram, board.resources.bram36 - rtl_pre_bram36(board))


def rtl_lane_memories(board: Board) -> list[Memory]:
    """:func:`rtl_lane_binding`, each group counted as Yosys maps it (:func:`yosys_bram36`, :func:`yosys_uram`)."""
    mems = rtl_lane_binding(board)
    for m in mems:
        if m.impl == "bram":
            m.bram36 = m.count * yosys_bram36(m.depth, m.width, m.tdp)
        elif m.impl == "uram":
            m.uram = m.count * yosys_uram(m.depth, m.width)
    return mems


def rtl_pre_binding(board: Board) -> str:
    """Storage of rtl/pre.sv's line buffers (accel_pkg's PRE_LB_STYLE): "bram", or "uram" when the block RAM the
    lane memories leave (:func:`rtl_lane_memories`) cannot hold them and the URAM they leave can (zcu19eg's 32 x 48:
    968 BRAM36 of 984 for the lanes, 32 URAM288 free beside the ACC's 96)."""
    w = board.accelerator.axi_data_width_bits
    lanes = rtl_lane_memories(board)
    bram_left = board.resources.bram36 - sum(m.bram36 for m in lanes)
    uram_left = board.resources.uram - sum(m.uram for m in lanes)
    depth = pre_line_beats(w // 8)
    need_b = RTL_PRE_LINE_BUFFERS * yosys_bram36(depth, w, True)
    need_u = RTL_PRE_LINE_BUFFERS * yosys_uram(depth, w)
    return "uram" if need_b > bram_left and need_u <= uram_left else "bram"


def storage_binding(board: Board, rom_insns: int = 0, per_lane: bool = False) -> dict:
    """{kernel array name: storage impl (bram / uram / lutram)} for the buffers: the HLS block design's memories'
    primitive. ``per_lane``: the same mapping rule over the RTL's
    per-lane memories (:func:`lane_memories`; the ROM and FIFOs are never URAM, so they do not change it), with the
    block RAM left beside PRE's line buffers (:func:`rtl_pre_bram36`)."""
    if per_lane:
        mems = rtl_lane_binding(board)
    else:
        mems = bound_kernel_memories(board, rom_insns)
    return {ARRAY_NAMES[m.name]: m.impl for m in mems if m.name in ARRAY_NAMES}

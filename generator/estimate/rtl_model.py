"""Resource model of the RTL (``rtl/``) for one accelerator configuration, from its parameters alone: what the
design-space exploration (:mod:`generator.estimate.dse`) ranks configurations with, checked against Yosys
(:mod:`generator.estimate.rtl_resources`) on the TINY and the board configurations.

Units: DSP48E2 slices; BRAM36 blocks (a RAMB18E2 counts 0.5, as Yosys' and Vivado's reports add them); URAM288
blocks; LUTs and flip-flops (CLB).

**DSP48E2** = Tn x Tm (one per PE, ``rtl/pe_array.sv``) + Tm (``rtl/requant.sv``: each output lane's
requantization multiply, the accumulator-plus-bias pre-shifted to 27 bits times the MULT_BITS-bit multiplier, is one
27 x 18 slice, UG579) + Tm (``rtl/compute.sv``:
the 18 x 18 multiply of the element-wise product, ``emul``, per output lane) + 21 (PRE, below).

**Memories**: the RAMs of ``rtl/buffers.sv`` with the geometry of the rendered ``accel_pkg`` (:func:`rtl_memories`):
per ping-pong bank Tn IBUF lane memories (16-bit elements, true dual port) and Tm ACC lane memories; Tm WBUF
memories of Tn elements holding both banks (simple dual port, twice a bank's words); OL = max(Tm, AXI bytes) OBUF lane memories; Tm PBUF memories of
parameter records and Tm TBUF memories of the activation table (64 records: LUTRAM). Each is counted as Yosys' ``memory_libmap`` maps it under the binding the RTL is rendered with
(:func:`generator.spec.memories.bind`): block RAM as the cheapest aspect ratio of RAMB36E2 or RAMB18E2 (UG573:
true dual port up to 36 / 18 bits wide, simple dual port 72 / 36 bits at 512 words; a simple-dual-port RAM wider
than 36 bits as 512 x 72 RAMB36E2 only), UltraRAM as 4096 x 72 URAM288 with two words of at most 36 bits per row,
memories of at most 64 words as LUTRAM. Checked against Yosys: TINY 80 DSP48E2, 72 BRAM36, 0 URAM, equal (the slow
tests); zcu19eg's 32 x 48 on two HP ports, 1,632 / 968 / 96, equal (the whole design through ``invoke resources
--board zcu19eg --rtl`` at commit 224519d, before WBUF's banks shared one memory); kv260's 32 x 32, 1,109 / 96 /
64, equal (``invoke resources --board kv260 --rtl`` on this RTL).

**LUT / FF**: the structural estimate of :mod:`generator.estimate.hls_resources` (fixed parts, what Vivado maps
adders and registers to: CARRY8 chains, DSP48E2 internal registers) with the RTL's own parts where they differ
(:func:`lut_terms`): this module's LUTRAM in place of the HLS kernel's; the PE array's fabric sums without per-PE
LUTs (its operand registers are the DSP48E2's, ``rtl/pe_dsp.sv``); the output lanes' units priced from Yosys'
netlists of the units synthesized out of context plus COMPUTE's wide selections counted from the code
(:func:`lane_units`: Yosys builds the lanes' multi-operand sums from LUT3 full adders where Vivado would use
carry chains, so these are Yosys' counts, not Vivado's); LOAD's IBUF rotators (:func:`load_rotation`). Checked
against whole-design Yosys runs (docs/rtl.md, "Where the LUTs are"; attributed by unit by ``invoke resources
--rtl``, :func:`generator.estimate.netlist.cells_by_unit`). Two HP ports add the burst splitter
(:func:`generator.estimate.hls_resources.hp_split_lut_ff`, which the HLS block design has too).

**Double pumping** (``pump`` 2, ``rtl/pe_array_2x.sv``): the same DSP48E2s; the memories' IBUF and ACC copies
(:func:`generator.spec.memories.lane_memories`); LUTs and FFs of :func:`pump_fabric` on top of the single-rate
array's.

**PRE** (``rtl/pre_insn.sv`` and under it ``rtl/pre.sv``, the readers and writers, ``rtl/axi_wr_arb.sv``, the write
arbiter it adds to STORE's port): :data:`generator.estimate.rtl_resources.PRE_DSP` = 21 DSP48E2 (seven per
channel, ``rtl/pre_chan.sv``; the HLS kernel's PRE takes 16, a different unit); its four line buffers
(:func:`pre_memories`: ``rtl/ram_tdp.sv`` of raw m_axi beats, the HLS kernel's PRE_LINE_BEATS x DW, true dual
port, bound to block RAM: 4 BRAM36 each at 128 bits, 7.5 at 256); its
LUTs and FFs by :func:`pre_lut_ff`, the model's ``pre`` part (:data:`LUT_TERMS`; units ``pre`` and ``axi_wr_arb``
of :func:`generator.estimate.netlist.cell_units`).
"""
from __future__ import annotations

import math

from generator.estimate import hls_resources
from generator.estimate.rtl_resources import PRE_CHANNELS, PRE_DSP, expected_dsp
from generator.spec.arch import AXI_ADDR_BITS, DSP_A_BITS, DSP_B_BITS, RTL_QUEUES, pe_chain
from generator.spec.board import Board
from generator.spec import memories
from generator.spec.memories import Memory, yosys_bram36, yosys_uram


#: PRE's line buffers (``rtl/pre.sv`` ``g_buf``): four ``ram_tdp`` (two pairs: a row's fetch into one pair beside
#: the other's pixel reads) of a frame row's raw m_axi beats, STYLE 1 (block RAM), each the HLS kernel's size
#: (accel_kernel_pre.h, which has two: PRE_LINE_BEATS words of the m_axi width,
#: :func:`generator.spec.memories.pre_line_beats`)
PRE_LINE_BUFFERS = memories.RTL_PRE_LINE_BUFFERS
#: rtl/pre_wr.sv's WB: beats of a PRE write burst at most (its W FIFO holds 2 WB beats, a burst's address waits for
#: all its beats); rtl/axi_wr_arb.sv's QDEPTH: bursts accepted and not yet answered (its two unit queues)
PRE_WRITE_BURST, WR_ARB_QDEPTH = RTL_QUEUES["PRE_WBURST"], RTL_QUEUES["WR_QDEPTH"]


def pre_memories(board: Board) -> list[Memory]:
    """PRE's line buffers as Yosys maps them for ``board``'s m_axi width DW: :data:`PRE_LINE_BUFFERS` true-dual-port
    memories of PRE_LINE_BEATS = 3 x 4096 / B + 2 words of DW bits (B = DW / 8), bound to block RAM
    (:func:`yosys_bram36`: 128 bits, 770 words: 4 BRAM36 each, eight 1024 x 18 RAMB18E2 or four 1024 x 36
    RAMB36E2; 256 bits, 386 words: 7.5, fifteen 1024 x 18 RAMB18E2), or to UltraRAM where the block RAM does not
    hold them (:func:`generator.spec.memories.rtl_pre_binding`; :func:`yosys_uram`)."""
    w = board.accelerator.axi_data_width_bits
    impl = memories.rtl_pre_binding(board)
    m = Memory("PRE line buffers", PRE_LINE_BUFFERS, memories.pre_line_beats(w // 8), w, tdp=True, impl=impl)
    if impl == "uram":
        m.uram = m.count * yosys_uram(m.depth, m.width)
    else:
        m.bram36 = m.count * yosys_bram36(m.depth, m.width, m.tdp)
    return [m]


def rtl_memories(board: Board) -> list[Memory]:
    """The RAM groups of ``rtl/buffers.sv`` for ``board``'s accelerator
    (:func:`generator.spec.memories.lane_memories`), bound as the RTL is rendered (:func:`~generator.spec.memories.bind`,
    the ``ram_tdp`` STYLE of each buffer) and counted as Yosys maps them (:func:`yosys_bram36`,
    :func:`yosys_uram`), then PRE's line buffers (:func:`pre_memories`)."""
    return memories.rtl_lane_memories(board) + pre_memories(board)



def _mux(n: int) -> int:
    """LUT6 of one bit of an n:1 multiplexer (a LUT6 takes 4:1, each further LUT three more inputs)."""
    return max(0, math.ceil((n - 1) / 3))


def _lutram(depth: int, width: int) -> int:
    """LUTs of a depth x width LUTRAM FIFO store as RAM32M (UG574: 6 bits x 32 words per 4 LUTs)."""
    return math.ceil(width / 6) * 4 * math.ceil(depth / 32)


def pre_terms(board: Board) -> dict:
    """{PRE part: (LUT, FF)} for ``board``'s m_axi width DW (B = DW / 8 bytes, A = AXI_ADDR_BITS), counted from
    the RTL as :mod:`generator.estimate.hls_resources` counts (a b-bit adder or compare b LUTs, a b-bit register b
    FFs, an n:1 multiplexer :func:`_mux` LUTs per bit, LUTRAM 6 bits x 32 words per 4 LUTs):

    * ``channels``: per ``rtl/pre_chan.sv`` (x 3) outside its DSP48E2s: the rounding add (26) and padding select
      (24), the 40-bit shift by 8 (S-1)[5:3] and by (S-1)[2:0] (8:1 each), the zero-point add (21), the
      saturation groups (4), the two clamp compares (20 each) and select (16), the row weights' 4-clock delay
      as shift-register LUTs (2 x 13 SRL16E); registers: v, x1, y (24 + 40 + 40), qz, q, the flags (20 + 16 +
      15);
    * ``pixels``: ``rtl/pre.sv``'s pixel pipeline c1 .. c9 and the packing: the 32-bit accumulator sx, the column
      compares, 3 ix (14 bits) and its clamp, per line buffer the beat addresses k, k + 1 (two 15-bit adds) and
      the byte offset (LB bits) and port A's address select (the fill), per line buffer the 9 bytes of a 4-byte
      group of the two-beat window (72 bits, a B/4:1 select each) and the 6 bytes of pixels ix, ix + 1 from them
      (48 bits, 4:1), the top / bottom pixel selects (4 x 24, the right ones 4:1 with ix1 = ix at the clamp), the
      weights (2 x 13), the element order (48); its registers (the three selection stages: 2 x 72 + 2 x 48 bits);
    * ``rows``: ``rtl/pre.sv``'s run parameters (latched with their seven 13-bit sums) and row sequencer (row
      counters, the 32-bit sy accumulator, the A-bit row address plus pitch, the tags' compares and iy = iy1, the
      requested row's address and the line buffers' byte offsets, credits);
    * ``reader``: ``rtl/pre_rd.sv`` and its burst splitter (``rtl/pre_burst.sv``): the row's beats (a 17-bit sum of
      3 npix), the two rows requested (last beat, line buffer), the beat address and its compare, the registered
      line-buffer write (DW data bits: the R beats go raw into the line buffers, no FIFO, no unpacking);
    * ``writer``: ``rtl/pre_wr.sv`` and its burst splitter: a pixel's 48 bits placed at any byte lane of a
      two-beat word (2 DW bits, a 6:1 select each), the beat being collected (DW, byte-merge select), the
      2 :data:`PRE_WRITE_BURST` x (DW + B) write FIFO (LUTRAM), the beats not yet under an address (a 7-bit add
      and compare), the row address (A-bit add), burst lengths, outstanding count;
    * ``insn``: ``rtl/pre_insn.sv``: the instruction fields held (170 bits), six serial products
      (``rtl/seq_mul2.sv``: PW = 29, 29, 32, 29, 21, 28; each an add of 0 / x / 2x / 3x, 3x formed at load, the
      shifts: 5 PW LUTs, 3 PW + 14 FFs), five A-bit carry-select address sums (1.5 A each) and their registers,
      the range compares (two 32-bit, about ten 13/14-bit), the read-port multiplexer (A + 10);
    * ``arbiter``: ``rtl/axi_wr_arb.sv``: the W / AW multiplexer (DW + B + A + 12), the round robin, and the two
      :data:`WR_ARB_QDEPTH` x 1 unit queues (LUTRAM, pointers and counts).
    """
    dw = board.accelerator.axi_data_width_bits
    b, a = dw // 8, AXI_ADDR_BITS
    lb, kw = (b - 1).bit_length(), (memories.pre_line_beats(b) - 1).bit_length()   # byte offset, beat address
    seq = [29, 29, 32, 29, 21, 28]
    q = WR_ARB_QDEPTH.bit_length()                  # a queue's pointer / count bits
    return {
        "channels": (PRE_CHANNELS * (26 + 24 + 2 * 40 * _mux(8) + 21 + 4 + 2 * 20 + 16 + 2 * 13),
                     PRE_CHANNELS * (24 + 40 + 40 + 20 + 16 + 15)),
        "pixels": (32 + 3 * 13 + 2 * 14 + 2 * (2 * 15 + lb + kw) + 2 * 72 * _mux(b // 4) + 2 * 48 * _mux(4)
                   + 2 * 24 + 2 * 24 * _mux(4) + 2 * 13 + 48,
                   30 + 100 + 56 + 82 + 151 + 32 + 50 + 4 * kw + 4 * lb + 2 * 72 + 2 * 48 + 3 * 30 - 31),
        "rows": (7 * 13 + 7 * 13 + 32 + a + 6 * 13 + 50,
                 a + 21 + 48 + 12 * 13 + 96 + 16 + 7 * 13 + 24 + 32 + a + 50 + a + 2 * lb + 4),
        "reader": (17 + 15 + 4 * kw + 2 + a + 60, dw + 2 * a + 16 + 15 + 4 * kw + 2 + 8 + 60),
        "writer": (2 * dw * _mux(6) + 2 * dw + _lutram(2 * PRE_WRITE_BURST, dw + b) + _lutram(32, 24) + 2 * a + 140,
                   2 * dw + 2 * b + dw + b + 3 * a + 128),
        "insn": (5 * sum(seq) + 5 * 3 * a // 2 + 2 * 32 + 10 * 14 + a + 10 + 40,
                 170 + sum(3 * w + 14 for w in seq) + 6 * a + 15 + 28 + 32 + 3 + 26 + 40),
        "arbiter": (dw + b + a + 12 + 6 + 2 * (_lutram(WR_ARB_QDEPTH, 1) + 3 * q), 3 + 2 * 3 * q),
    }


def pre_lut_ff(board: Board) -> tuple[int, int]:
    """(LUT, FF) of PRE with its write arbiter for ``board``: the sums of :func:`pre_terms`."""
    t = pre_terms(board).values()
    return sum(x for x, _ in t), sum(y for _, y in t)


def pump_fabric(board: Board) -> tuple[int, int]:
    """(LUT, FF) a double-pumped PE array (``pump`` 2, ``rtl/pe_array_2x.sv``) adds to the single-rate one's
    (:func:`generator.estimate.hls_resources.pe_fabric`), counted from the unit's code: the clk registers of the
    weights (16 bits per PE) and of both pairs' packed operands (DSP_A_BITS per input lane each), the 2:1
    multiplexer into the DSP48E2 A inputs and the second pair's packing (a LUT per bit and input lane each), per
    chain output the clk2x registers pe_x (an even chain length), pd, ha, hb and the clk leaves of both pairs (the
    45-bit P each), and the second pair's adder trees (those of ``pe_fabric`` again). (0, 0) single-pumped. An upper
    bound of the FFs: Yosys keeps 98,779 FF and 21,150 LUT of the unit at 32 x 48 (docs/rtl.md)."""
    a = board.accelerator
    if a.pump == 1:
        return 0, 0
    g = pe_chain(a.tn)
    chains = a.tm * (a.tn // g)
    tree_lut, tree_ff = hls_resources.pe_fabric(board)
    skew = sum(j - 1 for j in range(2, g)) * (a.tn // g) * (16 * a.tm + DSP_A_BITS)
    hold = (5 + (1 - g % 2)) * chains * (DSP_A_BITS + DSP_B_BITS)
    ff = a.tn * a.tm * 16 + 2 * a.tn * DSP_A_BITS + hold + (tree_ff - skew)
    lut = 2 * a.tn * DSP_A_BITS + tree_lut
    return lut, ff


def estimate(board: Board):
    """Modelled DSP48E2 / BRAM36 / URAM / LUT / FF of the RTL for ``board``'s accelerator (module docstring), as
    a :class:`generator.estimate.hls_resources.Estimate` (``memories``: the RTL's RAM groups)."""
    a = board.accelerator
    mems = rtl_memories(board)
    hls = hls_resources.estimate(board)
    lut = sum(lut_terms(board).values())
    return hls_resources.Estimate(board=board.name, part=board.part, tn=a.tn, tm=a.tm, dsp48e2=expected_dsp(board),
                                  bram36=sum(m.bram36 for m in mems), uram=sum(m.uram for m in mems), lut=int(lut),
                                  ff=int(hls.ff) + pre_lut_ff(board)[1] + pump_fabric(board)[1],
                                  capacity=board.resources.model_dump(),
                                  memories=mems, dsp_pe=a.tn * a.tm, dsp_post=a.tm,
                                  dsp_emul=expected_dsp(board) - a.tn * a.tm - a.tm - PRE_DSP, dsp_pre=PRE_DSP)


#: LUTs of the output lanes' units, from Yosys' mapped netlists of the units synthesized out of context
#: (``rtl_resources.synthesize(top=unit)``, synth_xilinx -family xcup, kv260's part, 64 KB-class XS buffers,
#: single-rate, ACC_W 48; Tn x Tm 16 x 16, 32 x 16 and 16 x 32; the cells of each RTL file by
#: :func:`generator.estimate.netlist.cells_by_unit`): per output lane ``requant`` (rtl/requant.sv: the bias add,
#: the pre-shift, the rounding and output shifts, the zero point and clamp: 537-562), ``act_table``
#: (rtl/act_table.sv: the table's delta x fraction shift-and-add multiply in LUTs, the identity path's shifts and
#: clamps: 490), ``post`` (rtl/post.sv per lane: pooling compares and selects, 42); per output lane and ACC copy
#: ``compute_acc`` per ACC bit (rtl/compute_acc.sv: two pixels' running-sum and read-modify-write carry-select
#: adders, the first-step, bank and acc_init selects: 10.75-11.0 LUTs per ACC bit); fixed: POST's control with its
#: serial multipliers and dividers (1,125 at every Tm), COMPUTE's control, loop counters, address steps
#: (rtl/mul_tree.sv) and range checks (rtl/compute_chk.sv): 2,520.
LANE_LUT = {"requant": 562, "act_table": 490, "post": 42}
ACC_LUT_PER_BIT = 11
POST_FIXED_LUT, COMPUTE_FIXED_LUT = 1125, 2520


def lane_units(board: Board) -> dict:
    """{RTL unit: LUTs} of the output lanes' datapaths (the model's ``lanes`` part): per output lane
    :data:`LANE_LUT` and ACC_W x :data:`ACC_LUT_PER_BIT` per ACC copy (``pump`` copies), POST's and COMPUTE's
    fixed LUTs, and COMPUTE's wide selections counted from the code (a 2:1 multiplexer a LUT per bit, a logarithmic
    shifter of 2^k positions ceil(k / 2) LUT6 levels of 4:1 per bit):

    * ``wbuf_select``: the ping-pong bank select of COMPUTE's WBUF word (``rtl/compute.sv`` wb: 16 bits per PE)
      when WBUF keeps a memory per bank (:func:`generator.spec.memories.wbuf_one_memory` false: 33-64 words per
      bank, LUTRAM); none when both banks share one memory;
    * ``bypass``: the bypass elements' funnel shifter (``rtl/log_shift.sv`` u_byp: Tn + Tm 16-bit elements,
      log2(Tn) stages).

    The IBUF words' bank select lands in the PE array's operand registers (:func:`lut_terms`, ``pe_array``); the
    ACC words' in ``compute_acc``. Raises nothing; ``board`` is a validated :class:`Board`."""
    from generator.spec.hw import HwConfig
    a = board.accelerator
    acc_w = max(HwConfig.from_board(board, 8).acc_bits, HwConfig.from_board(board, 16).acc_bits)
    wb = max(HwConfig.from_board(board, b).wbuf_words for b in (8, 16))
    return {**{u: a.tm * v for u, v in LANE_LUT.items()},
            "compute_acc": a.pump * a.tm * acc_w * ACC_LUT_PER_BIT,
            "post_fixed": POST_FIXED_LUT, "compute_fixed": COMPUTE_FIXED_LUT,
            "wbuf_select": 0 if memories.wbuf_one_memory(wb) else 16 * a.tn * a.tm,
            "bypass": 16 * (a.tn + a.tm) * math.ceil(math.log2(a.tn) / 2)}


def load_rotation(board: Board) -> int:
    """LUTs of LOAD's IBUF lane writes (``rtl/load_wr.sv``; the model's ``fixed`` part), counted from the code as
    :func:`lane_units`: per port (2) the window of two beats rotated to its base (2 x AXI bits, log2(2 x AXI bytes)
    stages) and the Tn 16-bit elements rotated over the lanes (log2(Tn) stages), the int8 / int16 element select
    (Tn x 16)."""
    a = board.accelerator
    win_bytes = 2 * a.axi_data_width_bits // 8
    return 2 * (2 * a.axi_data_width_bits * math.ceil(math.log2(win_bytes) / 2)
                + a.tn * 16 * (math.ceil(math.log2(a.tn) / 2) + 1))


def lut_terms(board: Board) -> dict:
    """{part (a :data:`LUT_TERMS` key): LUTs} of the modelled RTL LUT count: the parts of
    :func:`generator.estimate.hls_resources.lut_terms` with the RTL's own where they differ -- the PE array's fabric
    (:func:`generator.estimate.hls_resources.pe_fabric` and :func:`pump_fabric`: the RTL has no per-PE LUTs, its
    operand registers are the DSP48E2's), the output lanes (:func:`lane_units`), LOAD's rotators
    (:func:`load_rotation`), the RTL's LUTRAM (:func:`rtl_memories`) in place of the HLS kernel's -- and PRE's
    :func:`pre_lut_ff`; their sum is :func:`estimate`'s LUT."""
    hls_mems = memories.bound_kernel_memories(board, 0)
    t = hls_resources.lut_terms(board, hls_mems)
    t["memories"] += sum(m.lut for m in rtl_memories(board)) - sum(m.lut for m in hls_mems)
    t["pre"] = pre_lut_ff(board)[0]
    t["pe_array"] = hls_resources.pe_fabric(board)[0] + pump_fabric(board)[0]
    t["lanes"] = sum(lane_units(board).values())
    t["fixed"] += load_rotation(board)
    return t


#: the parts of the RTL's LUT model (:func:`lut_terms`): the HLS estimate's and PRE's
LUT_TERMS = {**hls_resources.LUT_TERMS, "pre": "PRE (pre_insn, axi_wr_arb)"}
#: the RTL's units (:func:`generator.estimate.netlist.cell_units`) under the model's LUT terms; others: "fixed"
UNIT_TERMS = {"pe_array": "pe_array", "compute": "lanes", "requant": "lanes", "post": "lanes", "buffers": "memories",
              "axi_hp_split": "axi_hp_split", "pre": "pre", "axi_wr_arb": "pre"}


def unit_parts(units: dict) -> dict:
    """{part (a :data:`LUT_TERMS` key): {cell type: count}}: a Yosys netlist's
    cells by unit (:attr:`generator.estimate.rtl_resources.RtlResources.units`) grouped as :func:`lut_terms`
    (:data:`UNIT_TERMS`)."""
    res: dict = {k: {} for k in LUT_TERMS}
    for u, cells in units.items():
        part = res[UNIT_TERMS.get(u, "fixed")]
        for k, v in cells.items():
            part[k] = part.get(k, 0) + v
    return res


def yosys_lut_terms(units: dict) -> dict:
    """{part: LUTs} of :func:`unit_parts`, LUTs counted as :func:`generator.estimate.rtl_resources.count` does
    (LUTRAM and SRL sites included)."""
    from generator.estimate.rtl_resources import count
    return {k: count(cells)["lut"] for k, cells in unit_parts(units).items()}


def lut_comparison_table(board: Board, units: dict) -> str:
    """Markdown table: per part of the LUT model (:data:`LUT_TERMS`) Yosys' LUTs
    (:func:`yosys_lut_terms` of ``units``), the model's (:func:`lut_terms`) and their ratio, then the totals."""
    y, m = yosys_lut_terms(units), lut_terms(board)
    rows = ["| part | Yosys LUT | model LUT | Yosys / model |", "|---|---:|---:|---:|"]
    for k, label in list(LUT_TERMS.items()) + [("total", "total")]:
        yv, mv = (sum(y.values()), sum(m.values())) if k == "total" else (y[k], m[k])
        rows.append(f"| {label} | {yv:,} | {mv:,} | {yv / mv:.2f} |" if mv else f"| {label} | {yv:,} | 0 | - |")
    return "\n".join(rows)

"""Resource model of the RTL (``rtl/``) for one accelerator configuration, from its parameters alone: what the
design-space exploration (:mod:`generator.estimate.dse`) ranks configurations with, checked against Yosys
(:mod:`generator.estimate.rtl_resources`) on the TINY and the board configurations.

Units: DSP48E2 slices; BRAM36 blocks (a RAMB18E2 counts 0.5, as Yosys' and Vivado's reports add them); URAM288
blocks; LUTs and flip-flops (CLB).

**DSP48E2** = Tn x Tm (one per PE, ``rtl/pe_array.sv``) + Tm (``rtl/requant.sv``: each output lane's
requantization multiply, the accumulator-plus-bias pre-shifted to 27 bits times the MULT_BITS-bit multiplier, is one
27 x 18 slice, UG579) + Tm (``rtl/compute.sv``:
the 18 x 18 multiply of the element-wise product, ``emul``, per output lane).

**Memories**: the RAMs of ``rtl/buffers.sv`` with the geometry of the rendered ``accel_pkg`` (:func:`rtl_memories`):
per ping-pong bank Tn IBUF lane memories (16-bit elements, true dual port), Tm WBUF memories of Tn elements
(simple dual port), Tm ACC lane memories; OL = max(Tm, AXI bytes) OBUF lane memories; Tm PBUF memories of
parameter records and Tm TBUF memories of the activation table (64 records: LUTRAM). Each is counted as Yosys' ``memory_libmap`` maps it under the binding the RTL is rendered with
(:func:`generator.spec.memories.bind`): block RAM as the cheapest aspect ratio of RAMB36E2 or RAMB18E2 (UG573:
true dual port up to 36 / 18 bits wide, simple dual port 72 / 36 bits at 512 words; a simple-dual-port RAM wider
than 36 bits as 512 x 72 RAMB36E2 only), UltraRAM as 4096 x 72 URAM288 with two words of at most 36 bits per row,
memories of at most 64 words as LUTRAM. Checked against Yosys: TINY 80 DSP48E2, 72 BRAM36, 0 URAM, equal (the slow
tests); zcu19eg's board configuration, 32 x 48 on two HP ports, 1,632 / 968 / 96, equal (the whole design through
``invoke resources --board zcu19eg --rtl`` at commit 224519d).

**LUT / FF**: the structural estimate of :mod:`generator.estimate.hls_resources` (per PE, per output lane, fixed
parts, what Vivado maps adders and registers to: CARRY8 chains, DSP48E2 internal registers) with this module's
LUTRAM in place of the HLS kernel's. Yosys counts about twice as many LUTs (TINY: 37,509 against 24,336 modelled;
zcu19eg's 32 x 48: 225,598 against 114,284). Attributed by unit (``invoke resources --rtl``,
:func:`generator.estimate.netlist.cells_by_unit`; docs/rtl.md, "Where the LUTs are"), the model leaves out the
ping-pong bank select of the IBUF / WBUF / ACC read words, LOAD's IBUF lane-write rotation and the second barrel
shifter of the requantization, and Yosys builds multi-operand sums from LUT3 full adders where Vivado uses carry
chains; the PE array's DSP48E2s are instantiated (``rtl/pe_dsp.sv``), their registers inside the primitive. Two HP ports add the burst splitter
(:func:`generator.estimate.hls_resources.hp_split_lut_ff`, which the HLS block design has too).
"""
from __future__ import annotations

import math

from generator.estimate import hls_resources
from generator.estimate.rtl_resources import expected_dsp
from generator.spec.board import Board
from generator.spec import memories
from generator.spec.memories import Memory, bind, bram36_for, lane_memories


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


def rtl_memories(board: Board) -> list[Memory]:
    """The RAM groups of ``rtl/buffers.sv`` for ``board``'s accelerator
    (:func:`generator.spec.memories.lane_memories`), bound as the RTL is rendered (:func:`~generator.spec.memories.bind`,
    the ``ram_tdp`` STYLE of each buffer) and counted as Yosys maps them (:func:`yosys_bram36`,
    :func:`yosys_uram`)."""
    mems = bind(lane_memories(board), board.resources.uram)
    for m in mems:
        if m.impl == "bram":
            m.bram36 = m.count * yosys_bram36(m.depth, m.width, m.tdp)
        elif m.impl == "uram":
            m.uram = m.count * yosys_uram(m.depth, m.width)
    return mems


def estimate(board: Board):
    """Modelled DSP48E2 / BRAM36 / URAM / LUT / FF of the RTL for ``board``'s accelerator (module docstring), as
    a :class:`generator.estimate.hls_resources.Estimate` (``memories``: the RTL's RAM groups)."""
    a = board.accelerator
    mems = rtl_memories(board)
    hls = hls_resources.estimate(board)
    lut = sum(lut_terms(board).values())
    return hls_resources.Estimate(board=board.name, part=board.part, tn=a.tn, tm=a.tm, dsp48e2=expected_dsp(board),
                                  bram36=sum(m.bram36 for m in mems), uram=sum(m.uram for m in mems), lut=int(lut),
                                  ff=int(hls.ff), capacity=board.resources.model_dump(), memories=mems,
                                  dsp_pe=a.tn * a.tm, dsp_post=a.tm,
                                  dsp_emul=expected_dsp(board) - a.tn * a.tm - a.tm)


def lut_terms(board: Board) -> dict:
    """{part: LUTs} of the modelled RTL LUT count (:func:`generator.estimate.hls_resources.lut_terms` with the
    RTL's LUTRAM, :func:`rtl_memories`, in place of the HLS kernel's); their sum is :func:`estimate`'s LUT."""
    hls_mems = memories.bound_kernel_memories(board, 0)
    t = hls_resources.lut_terms(board, hls_mems)
    t["memories"] += sum(m.lut for m in rtl_memories(board)) - sum(m.lut for m in hls_mems)
    return t


#: the RTL's units (:func:`generator.estimate.netlist.cell_units`) under the model's LUT terms; others: "fixed"
UNIT_TERMS = {"pe_array": "pe_array", "compute": "lanes", "requant": "lanes", "post": "lanes", "buffers": "memories",
              "axi_hp_split": "axi_hp_split"}


def unit_parts(units: dict) -> dict:
    """{part (a :data:`generator.estimate.hls_resources.LUT_TERMS` key): {cell type: count}}: a Yosys netlist's
    cells by unit (:attr:`generator.estimate.rtl_resources.RtlResources.units`) grouped as :func:`lut_terms`
    (:data:`UNIT_TERMS`)."""
    res: dict = {k: {} for k in hls_resources.LUT_TERMS}
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
    """Markdown table: per part of the LUT model (:data:`generator.estimate.hls_resources.LUT_TERMS`) Yosys' LUTs
    (:func:`yosys_lut_terms` of ``units``), the model's (:func:`lut_terms`) and their ratio, then the totals."""
    y, m = yosys_lut_terms(units), lut_terms(board)
    rows = ["| part | Yosys LUT | model LUT | Yosys / model |", "|---|---:|---:|---:|"]
    for k, label in list(hls_resources.LUT_TERMS.items()) + [("total", "total")]:
        yv, mv = (sum(y.values()), sum(m.values())) if k == "total" else (y[k], m[k])
        rows.append(f"| {label} | {yv:,} | {mv:,} | {yv / mv:.2f} |" if mv else f"| {label} | {yv:,} | 0 | - |")
    return "\n".join(rows)

"""FPGA resource estimate of one accelerator configuration (the HLS kernel of ``hls_templates/accel.cpp.j2``
rendered for a board), from the design's parameters alone: nothing here has been synthesized, and every number is
an *estimate*. :func:`check` refuses a configuration that does not fit the board's part with
:class:`ResourceError`, listing the numbers.

Units: DSP48E2 slices; BRAM36 blocks (36 Kb; a memory that fits one BRAM18 counts 0.5, as Vivado reports
"Block RAM Tile"); URAM blocks (288 Kb, 4096 x 72); LUTs and FFs (CLB).

**DSP48E2** = ``Tn * Tm`` (one per PE, in both modes: in int8 each DSP multiplies one weight by two activations
packed into its 27-bit A port, so int8 does twice the MACs on the same slices) ``+ Tm * DSP_PER_REQUANT_LANE``
(post-processing: one requantization multiply per output lane, the accumulator-plus-bias pre-shifted to
:data:`generator.spec.isa.REQUANT_OPERAND_BITS` = 27 bits times the ``MULT_BITS``-bit multiplier: one 27 x 18
signed DSP48E2 in both modes) ``+ Tm``
(COMPUTE's element-wise product, ``emul``: one 18 x 18 multiply per output lane, :data:`DSP_PER_EMUL_LANE`)
``+`` PRE's multipliers (the load module's PRE unit, ``hls_templates/kernel/accel_kernel_pre.h``,
:data:`PRE_PRODUCTS`, :func:`pre_dsp`: the pixel loop's bilinear and quantization products per channel and the
per-row address products, each as many slices as its operands' widths need). The instructions' range checks
(LOAD's, STORE's and PRE's scalar ``(rows - 1) * row_stride`` products, once per instruction) are not counted.

**Memories**: the kernel's buffers, instruction ROM and the block design's stream FIFOs, each group mapped onto
BRAM, URAM or LUTRAM by the rule of :mod:`generator.spec.memories`, and PRE's two line buffers
(:func:`pre_memories`: block RAM, ``BIND_STORAGE ram_t2p impl=bram``)
(:func:`generator.spec.memories.bound_kernel_memories`, the architecture's choice that the back ends also render):
IBUF and ACC true dual port (block RAM without the 512 x 72 / 512 x 36 simple-dual-port shapes, URAM as two
read-write ports, never LUTRAM), PBUF and TBUF one 128-bit record memory per lane; each FIFO adds
:data:`LUT_PER_FIFO` / :data:`FF_PER_FIFO` of control. The block design's shared memory ports
(``hls_templates/bd/accel_ram.v``: IBUF's two per bank, ACC's port B) each add an address multiplexer and a
write-enable gate, about ``log2(depth) + width / 8`` LUTs, which :data:`LUT_PER_MEMORY` does not count: they are
left inside the LUT estimate's error stated below.

**LUT / FF**: a bit-width-based engineering estimate, not calibrated against a synthesis run of this kernel
(there is no Vivado here): a b-bit adder or comparator is b LUTs (CARRY8 chains), a b-bit register b FFs.
Per PE (Tn*Tm): :data:`LUT_PER_PE` / :data:`FF_PER_PE` (operand fan-out registers, the int8/int16 operand select,
cascade glue); the PE array's fabric sums and skew registers (:func:`pe_fabric`: per output lane the adder tree of
the ``Tn / pe_chain(Tn)`` cascade outputs' three product fields); per output lane (Tm): for two
pixels, the accumulator read-add-write and range check (2 x 64-bit adds and compares) and the requantization
datapath (bias add, rounding add, 64-bit barrel shifter, zero-point add, clamp, max-pool compare):
:data:`LUT_PER_LANE` / :data:`FF_PER_LANE`; per partitioned memory :data:`LUT_PER_MEMORY` (write-enable decode,
read-data mux of the two banks); plus :data:`LUT_FIXED` / :data:`FF_FIXED` for the m_axi adapter at the AXI width,
the s_axilite register file, instruction fetch / validate / decode and the load / store address generators; with
two HP ports the block design's burst splitter (``hls_templates/bd/accel_hp.v``, :func:`hp_split_lut_ff`). Expect the LUT/FF figures to be off by tens of percent; DSP and memory counts follow the structure exactly,
barring synthesis choices (e.g. HLS widening the requantization multiply beyond the data's width).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.spec import isa
from generator.spec import memories
from generator.spec.board import Board
from generator.spec.arch import (AXI_ADDR_BITS, DSP_A_BITS, DSP_B_BITS, HP_SPLIT_FIFO_WORDS, HP_SPLIT_OUTSTANDING,
                                  PACK_SHIFT, pe_chain)

#: control logic of one axis_data_fifo (pointers, flags, the AXI4-Stream register slice)
LUT_PER_FIFO, FF_PER_FIFO = 60, 80
LUT_PER_PE, FF_PER_PE = 10, 24
LUT_PER_LANE, FF_PER_LANE = 560, 620
LUT_PER_MEMORY = 8
LUT_FIXED, FF_FIXED = 15000, 20000


class ResourceError(ValueError):
    """The configuration does not fit the part: the message lists each resource, estimate vs capacity."""


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
    dsp_emul: int = 0
    dsp_pre: int = 0

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


#: DSP48E2 slices per output lane of COMPUTE's element-wise product (an 18 x 18 signed multiply)
DSP_PER_EMUL_LANE = 1


#: DSP48E2 slices per output lane of POST's requantization: one REQUANT_OPERAND_BITS x MULT_BITS (27 x 16) signed
#: multiply (UG579: 27 x 18 per slice)
DSP_PER_REQUANT_LANE = 1


#: PRE's products (accel_kernel_pre.h): (what, how many, operand bits, operand bits), widths as signed operands
#: (an unsigned b-bit operand takes b + 1): per channel (3) of the pipelined PRE_PIXELS loop (II 1, so none
#: shared) the horizontal pass f (b - a) of both held rows (12-bit weight x 9-bit difference), the vertical
#: f (h1 - h0) (12 x 21 bits) and the quantization v mult (24 x 16 bits unsigned); per output row the source row's
#: byte offset row x src_pitch (13 x 16), the row's span (net_w - 1) x dst_pix (13 x 8) and, once per band, its
#: first placed row's position r x step_y (13 x 32: wider than a slice's 27-bit port)
PRE_PRODUCTS = (("horizontal pass", 2 * 3, 13, 9), ("vertical pass", 3, 13, 21), ("quantization", 3, 25, 17),
                ("source row offset", 1, 14, 17), ("row span", 1, 14, 9), ("band row position", 1, 33, 14))
#: PRE's line buffers (accel_kernel_pre.h line0 / line1): two frame rows of host.pre.MAX_FRAME pixels
PRE_LINE_BUFFERS = 2


def dsp_slices(a_bits: int, b_bits: int) -> int:
    """DSP48E2 slices of one a_bits x b_bits signed product (UG579: 27 x 18 per slice; a wider operand in
    port-sized parts, the cheaper orientation)."""
    return min(math.ceil(a_bits / DSP_A_BITS) * math.ceil(b_bits / DSP_B_BITS),
               math.ceil(b_bits / DSP_A_BITS) * math.ceil(a_bits / DSP_B_BITS))


def pre_dsp() -> int:
    """DSP48E2 slices of PRE's multipliers (:data:`PRE_PRODUCTS`), the same for every board."""
    return sum(n * dsp_slices(a, b) for _, n, a, b in PRE_PRODUCTS)


def pre_memories(board: Board) -> list:
    """PRE's line buffers as one memory group (:class:`generator.spec.memories.Memory`): :data:`PRE_LINE_BUFFERS`
    of :func:`generator.spec.memories.pre_line_beats` words of the m_axi width, true dual port (``ram_t2p``: two beats read a cycle),
    block RAM (the kernel binds them so: never URAM or LUTRAM)."""
    w = board.accelerator.axi_data_width_bits
    m = memories.Memory("PRE line buffers", PRE_LINE_BUFFERS, memories.pre_line_beats(w // 8), w, tdp=True)
    m.bram36 = m.count * memories.bram36_for(m.depth, m.width, tdp=True)
    return [m]


def hp_split_lut_ff(board: Board) -> tuple[int, int]:
    """(LUT, FF) of the HP ports' burst splitters for ``board`` ((0, 0) with one HP port; ``rtl/axi_hp_ports.sv``:
    one ``rtl/axi_hp_split.sv`` of the m_axi width W for two ports, for four a root of width W and two leaves of
    W / 2). Per splitter of width w: its FIFOs as LUTRAM (RAM64M, UG574: 3 bits of 64 words per 4 LUTs) -- two R
    data FIFOs of w bits and two W FIFOs of w + strobes + last,
    :data:`~generator.spec.arch.HP_SPLIT_FIFO_WORDS` deep, three order FIFOs of 18 / 18 / 2 bits,
    :data:`~generator.spec.arch.HP_SPLIT_OUTSTANDING` deep; flip-flops: the R output slice and its skid register,
    the R beat-pairing registers, the four port addresses and lengths, counters and flags."""
    a = board.accelerator
    if a.hp_ports == 1:
        return 0, 0
    w = a.axi_data_width_bits
    widths = [w] if a.hp_ports == 2 else [w, w // 2, w // 2]
    lut = ff = 0
    for w in widths:
        data_bits, order_bits = 2 * w + 2 * (w + w // 8 + 1), 18 + 18 + 2
        lut += (math.ceil(data_bits / 3) * math.ceil(HP_SPLIT_FIFO_WORDS / 64)
                + math.ceil(order_bits / 3) * math.ceil(HP_SPLIT_OUTSTANDING / 64)) * 4
        ff += 2 * (w + 1) + w + 4 * (AXI_ADDR_BITS + 8) + 200
    return lut, ff


def pe_fabric(board: Board) -> tuple[int, int]:
    """(LUT, FF) of the PE array outside its DSP48E2s for ``board``'s Tn x Tm (``rtl/pe_array.sv`` and the HLS
    kernel's ``pe_sums``, one structure): per output lane an adder tree over the Tn / G chain outputs (G =
    :func:`generator.spec.arch.pe_chain`) of the three product fields (the signed high field, the low field and
    its borrow, each widened by log2(Tn) bits: one LUT per bit, CARRY8) plus the combining level (the high field
    plus the low field's carry-out, twice); registers after every second level and after the last; the operand
    skew of chain positions j >= 2 (j - 1 fabric registers in front of the DSP48E2's own two: 16 bits of w per
    PE, DSP_A_BITS of A per input lane)."""
    a = board.accelerator
    g, lg = pe_chain(a.tn), a.tn.bit_length() - 1
    leaves = a.tn // g
    sa, sb, sc = DSP_A_BITS + DSP_B_BITS - PACK_SHIFT + lg, PACK_SHIFT + lg, lg + 1
    field = sa + sb + sc
    lut = a.tm * ((leaves - 1) * field + 2 * (sa + 1) + sc + 1)
    reg_nodes = sum(leaves >> lv for lv in range(2, leaves.bit_length(), 2))
    skew = sum(j - 1 for j in range(2, g))
    ff = a.tm * (reg_nodes * field + 2 * (sa + 1)) + skew * (a.tn // g) * (16 * a.tm + DSP_A_BITS)
    return lut, ff


#: the parts of the LUT estimate (:func:`lut_terms`), as the RTL's units group under them
LUT_TERMS = {"pe_array": "PE array (per PE, the fabric sums)", "lanes": "output lanes (compute, requant, post)",
             "fixed": "LOAD, STORE, control (fixed)", "memories": "buffers, FIFOs (LUTRAM, decode)",
             "axi_hp_split": "HP burst splitter"}


def lut_terms(board: Board, mems: list) -> dict:
    """{part (a :data:`LUT_TERMS` key): LUTs} of the LUT estimate for ``board`` with the bound memories ``mems``
    (their LUTRAM, :data:`LUT_PER_MEMORY` each, :data:`LUT_PER_FIFO` per FIFO); their sum is the estimate's LUT."""
    a = board.accelerator
    n_mem = sum(m.count for m in mems if not memories.is_fifo(m))
    n_fifo = sum(m.count for m in mems if memories.is_fifo(m))
    return {"pe_array": a.tn * a.tm * LUT_PER_PE + pe_fabric(board)[0], "lanes": a.tm * LUT_PER_LANE,
            "fixed": LUT_FIXED * a.axi_data_width_bits // 128,
            "memories": n_mem * LUT_PER_MEMORY + sum(m.lut for m in mems) + n_fifo * LUT_PER_FIFO,
            "axi_hp_split": hp_split_lut_ff(board)[0]}


def estimate(board: Board, rom_insns: int = 0) -> Estimate:
    """Estimated DSP48E2 / BRAM36 / URAM / LUT / FF of ``board``'s accelerator configuration with an instruction
    ROM of ``rom_insns`` instructions (0: programs fetched from DDR only). See the module docstring."""
    a = board.accelerator
    tn, tm = a.tn, a.tm
    dsp_pe = tn * tm
    dsp_post = tm * DSP_PER_REQUANT_LANE
    dsp_emul = tm * DSP_PER_EMUL_LANE
    dsp_pre = pre_dsp()
    mems = memories.bound_kernel_memories(board, rom_insns)
    n_fifo = sum(m.count for m in mems if memories.is_fifo(m))
    _, pe_ff = pe_fabric(board)
    lut = sum(lut_terms(board, mems).values())
    mems = mems + pre_memories(board)
    _, split_ff = hp_split_lut_ff(board)
    ff = (tn * tm * FF_PER_PE + pe_ff + tm * FF_PER_LANE + FF_FIXED * a.axi_data_width_bits // 128
          + n_fifo * FF_PER_FIFO + split_ff)
    return Estimate(board=board.name, part=board.part, tn=tn, tm=tm, dsp48e2=dsp_pe + dsp_post + dsp_emul + dsp_pre,
                    bram36=sum(m.bram36 for m in mems), uram=sum(m.uram for m in mems), lut=int(lut), ff=int(ff),
                    capacity=board.resources.model_dump(), memories=mems, dsp_pe=dsp_pe, dsp_post=dsp_post,
                    dsp_emul=dsp_emul, dsp_pre=dsp_pre)


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


if __name__ == "__main__":          # python -m generator.estimate.hls_resources [board ...]: the estimate of each board file
    import sys

    from generator.spec.board import known_boards, load_board

    for name in sys.argv[1:] or known_boards():
        b = load_board(name)
        e = estimate(b)
        print(f"## {name} ({b.part}), Tn x Tm = {b.accelerator.tn} x {b.accelerator.tm}, {b.pl_clock_mhz:g} MHz"
              f" (without instruction ROM)\n\n{e.table()}\n\n{e.memory_table()}\n")

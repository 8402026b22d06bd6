"""Architecture constants of the accelerator that are not part of the ISA, each defined once here and handed to the
HLS and RTL templates through their render context (:mod:`generator.backends.hls`, :mod:`generator.backends.rtl`).

The constants the PYNQ driver needs too (kernel VLNV, ``hw_info`` packing, DDR page size, base registers) live in
``host/`` (:mod:`host.registers`, :mod:`host.manifest`), which runs on the board without the generator; the ISA's
own (instruction format, register map, status bits, token queue depth) in :mod:`generator.spec.isa`.
"""
from __future__ import annotations

import math

#: int8 packing into one DSP48E2: A = (x_hi << PACK_SHIFT) + x_lo, so the low product occupies bits
#: [PACK_SHIFT-1:0] of the P output (signed) and the high one the bits above
PACK_SHIFT = 18
#: packed int8 products (|x*w| <= 128*128) summed in the DSP cascade before the low lane's signed PACK_SHIFT-bit
#: field could overflow into the high lane: the largest G with G * 2^14 <= 2^(PACK_SHIFT-1) - 1
PACK_GROUP = ((1 << (PACK_SHIFT - 1)) - 1) // (128 * 128)
#: depth of the fetch -> load / compute / store command queues (instructions)
CMD_QUEUE_DEPTH = 512
#: depth of the HLS kernel's run-descriptor and done-report queues (one entry per run is ever in them)
RUN_QUEUE_DEPTH = 2
#: the HLS kernel's POST unit beside its STORE (the RTL's rtl/post.sv beside rtl/store.sv): the store -> post
#: command queue (CONFIG, POST, END; one POST runs at a time), the post -> store progress queue, and the OBUF words
#: per progress message (a STORE segment waits until its words are reported written). The store module reads the
#: progress queue during every STORE and drains it before any other instruction and whenever its command queue is
#: empty, so the POST never waits on a full progress queue for long.
POST_QUEUE_DEPTH, POST_MSG_DEPTH, POST_MSG_WORDS = 4, 16, 8
#: depths of the RTL's own queues (rendered into accel_pkg.sv): instructions per fetch burst, the fetched-instruction
#: FIFO, each module's instruction FIFO, STORE burst descriptors ahead of the data, the STORE output (W) FIFO, the
#: STORE write-address (AW) FIFO (the data side starts a burst's beats as it enters, not when AW is accepted), PRE's
#: write bursts at most (rtl/pre_wr.sv holds a burst's beats, 2 PRE_WBURST in its W FIFO, before its address), the
#: write arbiter's bursts accepted and not yet answered (rtl/axi_wr_arb.sv's unit queues; its default, which the
#: block design's accel_hp.v keeps)
RTL_QUEUES = {"FETCH_BURST": 4, "IFQ_DEPTH": 16, "MQ_DEPTH": 16, "ST_OUTST": 16, "OQ_DEPTH": 8, "AWQ_DEPTH": 4,
              "PRE_WBURST": 32, "WR_QDEPTH": 64}
#: AXI4 (ARM IHI0022): no burst crosses a 4 KB boundary; an INCR burst has at most 256 beats
AXI_BOUNDARY_BYTES, AXI_MAX_BURST_BEATS = 4096, 256
#: byte-address width of the AXI4 master (rendered into the RTL package as AXI_AW, the Vivado IP's m_axi_gmem)
AXI_ADDR_BITS = 40
#: two HP ports (rtl/axi_hp_split.sv): bursts in flight per direction (order FIFO entries) and data FIFO words
#: (of the m_axi width) per port and direction -- half of the longest burst (4 KB at 256 bits: 128 beats) with
#: room to spare, so port 1 can run half a burst ahead of the in-order output
HP_SPLIT_OUTSTANDING, HP_SPLIT_FIFO_WORDS = 64, 128
#: DSP48E2 multiplier port widths (UG579: signed 27 x 18)
DSP_A_BITS, DSP_B_BITS = 27, 18
#: register stages of the requantization pipeline in POST (rtl/requant.sv, rendered into the package as RQ_LAT):
#: from the ACC / PBUF RAM outputs to the requantized value, so that no stage has more than a few LUT levels
REQUANT_STAGES = 11
#: register stages of POST's activation table (rtl/act_table.sv, rendered as TB_LAT), after the requantization:
#: entry index, TBUF read, entry select, two of the shift-and-add tree of delta x fraction (LUTs, no DSP48E2),
#: the rounding shift, the add of the base, the clamp. Only a POST with the table bit runs through them (the others keep REQUANT_STAGES).
TABLE_STAGES = 8
#: cycles of POST's per-instruction setup (rtl/post.sv: serial multipliers and dividers, no wide multiply or divide
#: in one cycle; rendered into the package as POST_SETUP)
POST_SETUP = 39
#: DSP48E2s per PE-array chain (rtl/pe_array.sv): the products of PE_CHAIN adjacent input lanes are summed along
#: the chain, each DSP48E2 adding its product to the previous one's P in its post-adder (the PCOUT -> PCIN cascade,
#: UG579 ch. 2: P = M + PCIN), so the fabric adder trees sum Tn / PE_CHAIN chain outputs instead of Tn products. At
#: most PACK_GROUP: the int8 low field holds the sum of a chain's low products without carrying into the high field.
PE_CHAIN = 4
assert PE_CHAIN <= PACK_GROUP and PE_CHAIN & (PE_CHAIN - 1) == 0
#: cycles of COMPUTE's per-instruction setup (rtl/compute.sv: the address steps in_cols*ig, ig*stride and
#: in_cols*ig*stride by registered shift-and-add multiplies (rtl/mul_tree.sv), two in series: 2 + 1 clocks;
#: rendered into the package as CP_SETUP)
COMPUTE_SETUP = 3
#: cycles from COMPUTE's read of an ACC word to its write (rtl/compute.sv: the RAM read, the ACC word and the sums
#: registered, their sum registered); odd, so that a word issued every other cycle never reads while one is written
ACC_RMW_DISTANCE = 3
#: cycles of STORE's per-instruction setup (rtl/store.sv: segment constants and range extents by registered
#: shift-and-add multiplies, two in series, then the DDR extent's three sums and compare; rendered as SD_SETUP)
STORE_SETUP = 6
#: register stages of STORE's read side (rtl/store.sv): the beat taken (its OBUF read rows registered), the OBUF
#: RAM output, the RAM output register (a URAM / BRAM output register in Vivado), the coarse byte rotation (by 8s)
STORE_READ_STAGES = 4
#: cycles of LOAD's per-instruction setup (rtl/load.sv LD_SETUP: segment constants and range extents by registered
#: shift-and-add multiplies, two in series, the span test, the extents' sums and compares; rendered as LD_SETUP_CYC)
LOAD_SETUP_CYCLES = 6
#: register stages of LOAD's data side a burst's last beat adds to the LOAD (rtl/load_rd.sv, rtl/load_wr.sv): the
#: beat FIFO, the walker's beat register, the chunk register, load_wr's two stages (x2, x3); its output registers
#: write the buffers in the cycle the LOAD completes
LOAD_DATA_STAGES = 5


def pe_chain(tn: int) -> int:
    """DSP48E2s per chain of a Tn-lane PE array (rtl/pe_array.sv, PE_G): ``min(PE_CHAIN, tn)``. Raises ValueError
    unless ``tn`` is a power of two >= 2."""
    if tn < 2 or tn & (tn - 1):
        raise ValueError(f"tn must be a power of two >= 2, got {tn}")
    return min(PE_CHAIN, tn)


def pe_dsp_stages(tn: int, pump: int = 1) -> int:
    """Register stages (logic clock cycles) of the PE array before its adder trees. Single-pumped (rtl/pe_array.sv):
    the DSP48E2's A/B and M registers, then one P register per DSP48E2 of a chain (position j of a chain takes its
    operands j clocks after position 0, so its P holds the sum of positions 0..j of one operand set):
    ``2 + G`` with G = ``pe_chain(tn)``. Double-pumped (``pump`` 2, rtl/pe_array_2x.sv): the operand register,
    the chain's L = 1 + G + (G even) cycles of the 2x clock (an even number: both operand sets' sums ready at one
    middle edge), the hold and leaf registers: ``3 + L / 2`` (= ``2 + G`` for G = 4). Raises ValueError as
    :func:`pe_chain` and for a pump other than 1 or 2."""
    g = pe_chain(tn)
    if pump == 1:
        return 2 + g
    if pump == 2:
        return 3 + (1 + g + (1 - g % 2)) // 2
    raise ValueError(f"pump must be 1 or 2, got {pump}")


def pe_tree_stages(tn: int) -> int:
    """Register stages of a PE-array adder tree over the ``tn / pe_chain(tn)`` chain outputs of one output lane
    (rtl/pe_array.sv, PE_TREE_ST): log2 of that adder levels plus the level combining the int8 / int16 product
    fields, a register after every second level and after the last: ``ceil((log2(tn / G) + 1) / 2)``. Raises
    ValueError as :func:`pe_chain`."""
    leaves = tn // pe_chain(tn)
    return (leaves.bit_length() - 1) // 2 + 1


def array_error(tn: int, tm: int, axi_bits: int) -> str:
    """Why the RTL (and the HLS kernel, one microarchitecture) cannot be built with a Tn x Tm PE array on an
    ``axi_bits``-bit m_axi port, or "" when it can:

    - the burst generator covers a :data:`AXI_BOUNDARY_BYTES` page in at most :data:`AXI_MAX_BURST_BEATS` beats
      (m_axi at least 128 bits wide);
    - Tn a power of two >= 2 (the adder trees, :func:`pe_tree_stages`; IBUF words split by bit slicing);
    - Tm a power of two, or a multiple of 8 of at least the m_axi width in bytes: the OBUF then has Tm lanes, a
      row per output word, and STORE rotates a row in 8-byte steps (rtl/store.sv); PBUF / TBUF records and WBUF
      elements are addressed at a power-of-two lane pitch (:func:`generator.spec.isa.lane_pitch`);
    - Tn - gcd(Tn, Tm) + Tm <= 2 Tn: a bypass (copy / product) reads the Tm elements of output group o from two
      IBUF words, starting at lane o*Tm mod Tn (rtl/compute.sv)."""
    if axi_bits * AXI_MAX_BURST_BEATS < 8 * AXI_BOUNDARY_BYTES:
        return (f"the burst generator needs a {AXI_BOUNDARY_BYTES}-byte page in at most {AXI_MAX_BURST_BEATS} "
                f"beats: m_axi at least {8 * AXI_BOUNDARY_BYTES // AXI_MAX_BURST_BEATS} bits wide, got {axi_bits}")
    if tn < 2 or tn & (tn - 1):
        return f"tn must be a power of two >= 2 (the PE array's adder trees), got {tn}"
    axi_bytes = axi_bits // 8
    if tm < 2 or (tm & (tm - 1) and (tm % 8 or tm < axi_bytes)):
        return (f"tm must be a power of two, or a multiple of 8 of at least the m_axi width in bytes ({axi_bytes}: "
                f"OBUF rows of Tm lanes rotated in 8-byte steps), got {tm}")
    if tn - math.gcd(tn, tm) + tm > 2 * tn:
        return (f"a bypass reads Tm elements from two IBUF words at lane o*Tm mod Tn: needs Tn - gcd(Tn, Tm) + Tm "
                f"<= 2*Tn, got {tn}x{tm}")
    return ""

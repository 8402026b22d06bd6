"""SystemVerilog back end, rendering: ``rtl/templates/accel_pkg.sv.j2`` (the ISA of :mod:`generator.spec.isa` and the
accelerator configuration of a board, as localparams: the shared render context of
:mod:`generator.backends.context` plus the RTL's own entries), the ``$readmemh`` instruction-ROM image of a program
and the source list (:data:`RTL_SOURCES`, copied next to the package by :func:`write_rtl`).

The hand-written RTL in ``rtl/*.sv`` uses only the rendered package: opcodes, field positions, register offsets,
status bits, PE-array size and buffer depths are never typed by hand.
"""
from __future__ import annotations

from pathlib import Path

import jinja2
import numpy as np

from host.fileio import atomic_write
from generator import ROOT_DIR
from generator.backends.context import shared_context
from generator.spec import isa
from generator.spec.arch import (array_error, ACC_RMW_DISTANCE, AXI_ADDR_BITS, AXI_BOUNDARY_BYTES, AXI_MAX_BURST_BEATS,
                                  HP_SPLIT_FIFO_WORDS, HP_SPLIT_OUTSTANDING,
                                  COMPUTE_SETUP, DSP_A_BITS, DSP_B_BITS, LOAD_SETUP_CYCLES, PACK_SHIFT, pe_chain, pe_dsp_stages,
                                  POST_SETUP, REQUANT_STAGES, RTL_QUEUES, STORE_SETUP, TABLE_STAGES, pe_tree_stages)
from generator.spec.board import Board
from generator.spec.memories import rtl_pre_binding, storage_binding, wbuf_one_memory
from generator.spec.hw import HwConfig
from generator.spec.timing import MAX_READ_BURSTS
from host.pre import FRAC_BITS as PRE_FRAC_BITS, MAX_FRAME as PRE_MAX_FRAME
from host.registers import SIZE_REGS

RTL_DIR = ROOT_DIR / "rtl"
TEMPLATES = RTL_DIR / "templates"
#: hand-written RTL sources, in compile order (after the rendered package): primitives, the units, the top
RTL_SOURCES = ["sync_fifo.sv", "ram_tdp.sv", "log_shift.sv", "pe_dsp.sv", "pe_array.sv", "ctrl_regs.sv", "token_queues.sv", "axi_rd_arb.sv",
               "axi_wr_arb.sv",
               "fetch_dispatch.sv", "seg_gen.sv", "load_rd.sv", "load_wr.sv", "load.sv", "mul_tree.sv",
               "pe_array_2x.sv", "compute_chk.sv", "compute_acc.sv", "compute.sv",
               "seq_mul.sv", "seq_mul2.sv", "seq_div.sv", "pre_burst.sv", "pre_rd.sv", "pre_chan.sv", "pre_wr.sv", "pre.sv",
               "pre_insn.sv", "requant.sv", "act_table.sv", "post.sv", "store.sv", "buffers.sv", "status.sv", "hp_seq.sv", "axi_hp_split.sv", "axi_hp_ports.sv",
               "accel_top.sv"]
TOP = "accel_top"


class RtlError(ValueError):
    """The board's accelerator configuration cannot be rendered as RTL (the message says which field)."""


#: storage binding of generator/spec/memories.py (``storage_binding``) -> ``ram_tdp`` STYLE (lutram: left to
#: synthesis, which maps such shallow memories to LUTRAM)
RAM_STYLES = {"lutram": 0, "bram": 1, "uram": 2}


def ram_styles(board: Board) -> dict:
    """{buffer: ram_tdp STYLE} for ``board``: each buffer bound by the architecture's mapping rule
    (:mod:`generator.spec.memories`) applied to the RTL's own per-lane memories (``storage_binding(per_lane=True)``:
    block RAM, UltraRAM on parts that have it, LUTRAM; UG573). The HLS block design's memories are shaped
    differently (one word of all lanes per bank) and may map differently. ``PRE_LB``: PRE's line buffers
    (:func:`generator.spec.memories.rtl_pre_binding`)."""
    styles = {k.upper(): RAM_STYLES[v] for k, v in storage_binding(board, per_lane=True).items()}
    return {**styles, "PRE_LB": RAM_STYLES[rtl_pre_binding(board)]}


def package_context(board: Board, rom_words: int = 1) -> dict:
    """Template variables of ``accel_pkg.sv``: the shared context of ``board`` (ISA tables and the accelerator in
    both precisions, :func:`generator.backends.context.shared_context`) plus the RTL's own entries (field,
    register and parameter-record tables as (name, position, width), element counts, ROM words, RAM styles).

    Raises RtlError if the configuration cannot be rendered as RTL (lane counts, AXI width, accumulator)."""
    a = board.accelerator
    h8, h16 = HwConfig.from_board(board, 8), HwConfig.from_board(board, 16)
    bad = array_error(a.tn, a.tm, a.axi_data_width_bits)
    if bad:
        raise RtlError(f"{board.name}: accelerator (tn {a.tn}, tm {a.tm}, axi_data_width_bits "
                       f"{a.axi_data_width_bits}): {bad}")
    if a.axi_data_width_bits > 2 * isa.INSN_BITS:
        raise RtlError(f"{board.name}: axi_data_width_bits={a.axi_data_width_bits}: the fetch takes at most two "
                       f"instructions ({isa.INSN_BITS} bits each) per beat")
    acc_w = max(a.acc_bits_int8, a.acc_bits_int16)
    if not 27 <= acc_w <= 52:
        raise RtlError(f"{board.name}: the RTL's requantization splits the (acc_bits + 1)-bit operand into two "
                       f"27 x 18 DSP48E2 multiplies: needs 27 <= max(acc_bits) <= 52, got {acc_w}")
    fields = []
    for op, lay in isa.LAYOUTS.items():
        for name, pos, width in lay:
            if name in dict(isa.HEADER):
                continue
            fields.append((f"F_{op}_{name}".upper(), pos, width))
    header = [(f"H_{name}".upper(), pos, width) for name, pos, width in isa.LAYOUTS["NOP"]]
    regs = [(f"REG_{n}".upper(), off, bits) for n, off, bits, _ in isa.REGISTERS]
    reg_off = {n.lower(): off for n, off, _, _ in isa.REGISTERS}
    params = [(n, off * 8, np.dtype(t).itemsize * 8) for n, t, off in isa.PARAM_RECORD]
    return dict(
        shared_context(board), header=header, fields=fields, registers=regs, params=params,
        base_regs=[reg_off[isa.BASE_REG_NAMES[i].lower()] for i in range(len(isa.BASE_REGS))],
        size_regs=[reg_off[SIZE_REGS[isa.BASE_REG_NAMES[i]]] for i in range(len(isa.BASE_REGS))],
        unused_masks={op: ((1 << isa.INSN_BITS) - 1) ^ ((1 << (isa.LAYOUTS[op][-1][1] + isa.LAYOUTS[op][-1][2])) - 1)
                      for op in sorted(isa.OPCODES, key=isa.OPCODES.get)},
        token_count_bits=isa.TOKEN_COUNT_BITS, axil_aw=max(isa.REGISTERS[-1][1] + 4, 4).bit_length(),
        ibuf_elems=max(h8.ibuf_words * a.tn, h16.ibuf_words * a.tn),
        wbuf_elems=max(h8.wbuf_words, h16.wbuf_words) * a.tn * a.tm,
        wb_one=int(wbuf_one_memory(max(h8.wbuf_words, h16.wbuf_words))),
        obuf_elems=max(h8.obuf_words, h16.obuf_words) * a.tm,
        acc_w=max(h8.acc_bits, h16.acc_bits), ld_outst=MAX_READ_BURSTS, rom_words=max(rom_words, 1),
        ram_styles=ram_styles(board), rtl_queues=RTL_QUEUES, axi_boundary=AXI_BOUNDARY_BYTES,
        axi_max_beats=AXI_MAX_BURST_BEATS, axi_addr_bits=AXI_ADDR_BITS, hp_ports=a.hp_ports,
        pre_max_frame=max(PRE_MAX_FRAME), pre_frac_bits=PRE_FRAC_BITS,
        hp_outst=HP_SPLIT_OUTSTANDING, hp_fdepth=HP_SPLIT_FIFO_WORDS,
        dsp_a_w=DSP_A_BITS, dsp_b_w=DSP_B_BITS, pack_shift=PACK_SHIFT,
        rq_lat=REQUANT_STAGES, tb_lat=TABLE_STAGES, post_setup=POST_SETUP,
        cp_setup=COMPUTE_SETUP, acc_rmw=ACC_RMW_DISTANCE, sd_setup=STORE_SETUP, ld_setup=LOAD_SETUP_CYCLES, pe_tree_st=pe_tree_stages(board.accelerator.tn),
        pe_dsp_st=pe_dsp_stages(board.accelerator.tn, board.accelerator.pump), pump=board.accelerator.pump,
        pe_chain=pe_chain(board.accelerator.tn))


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def render_package(board: Board, rom_words: int = 1) -> str:
    """``accel_pkg.sv`` text for ``board``."""
    return _env().get_template("accel_pkg.sv.j2").render(**package_context(board, rom_words))


def rom_image(blob: bytes) -> str:
    """``$readmemh`` image of a program: one 64-hex-digit 256-bit word per instruction."""
    if len(blob) % isa.INSN_BYTES:
        raise RtlError(f"program size {len(blob)} is not a multiple of {isa.INSN_BYTES} bytes")
    return "".join(f"{int.from_bytes(blob[i:i + isa.INSN_BYTES], 'little'):064x}\n"
                   for i in range(0, len(blob), isa.INSN_BYTES))


def write_rtl(board: Board, out: Path, program: bytes | None = None, rom_words: int | None = None) -> list[Path]:
    """Render the package (and the ROM image ``insn_rom.hex`` if ``program`` is given) into ``out``, copy the
    hand-written sources next to it; returns the source list in compile order."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n = rom_words or (len(program) // isa.INSN_BYTES if program else 1)
    atomic_write(out / "accel_pkg.sv", render_package(board, n))
    if program is not None:
        atomic_write(out / "insn_rom.hex", rom_image(program))
    srcs = [out / "accel_pkg.sv"]
    for s in RTL_SOURCES:
        atomic_write(out / s, (RTL_DIR / s).read_bytes())
        srcs.append(out / s)
    return srcs

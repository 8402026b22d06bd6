"""SystemVerilog back end: renders ``rtl/templates/accel_pkg.sv.j2`` (the ISA of :mod:`generator.isa` and the
accelerator configuration of a board, as localparams) and the ``$readmemh`` instruction-ROM image of a program.

The hand-written RTL in ``rtl/*.sv`` uses only the rendered package: opcodes, field positions, register offsets,
status bits, PE-array size and buffer depths are never typed by hand.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import jinja2

from . import isa
from .board import Board
from .hls import PACK_SHIFT
from .hwmodel import MAX_READ_BURSTS, HwConfig

ROOT = Path(__file__).resolve().parent.parent
RTL_DIR = ROOT / "rtl"
TEMPLATES = RTL_DIR / "templates"
#: hand-written RTL sources, in compile order (after the rendered package): primitives, the units, the top
RTL_SOURCES = ["sync_fifo.sv", "ram_tdp.sv", "pe_array.sv", "ctrl_regs.sv", "token_queues.sv", "axi_rd_arb.sv",
               "fetch_dispatch.sv", "seg_gen.sv", "load.sv", "load_wr.sv", "compute.sv", "post.sv", "store.sv",
               "buffers.sv", "status.sv", "accel_top.sv"]
TOP = "accel_top"
#: depths of the RTL's own queues (rendered into accel_pkg): instructions per fetch burst, the fetched-instruction
#: FIFO, each module's instruction FIFO, STORE burst descriptors ahead of the data, the STORE output (W) FIFO
RTL_QUEUES = {"FETCH_BURST": 4, "IFQ_DEPTH": 16, "MQ_DEPTH": 8, "ST_OUTST": 16, "OQ_DEPTH": 4}
#: AXI4 (IHI0022): no burst crosses a 4 KB boundary, an INCR burst has at most 256 beats
AXI_BOUNDARY_BYTES, AXI_MAX_BURST_BEATS = 4096, 256
#: DSP48E2 multiplier port widths (UG579: signed 27 x 18)
DSP_A_BITS, DSP_B_BITS = 27, 18


class RtlError(ValueError):
    """The board's accelerator configuration cannot be rendered as RTL (the message says which field)."""


def _pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


#: RAM binding of generator/resources.py (``storage_binding``) -> ``ram_tdp`` STYLE (lutram: left to synthesis,
#: which maps such shallow memories to LUTRAM)
RAM_STYLES = {"lutram": 0, "bram": 1, "uram": 2}


def ram_styles(board: Board) -> dict:
    """{buffer: ram_tdp STYLE} for ``board``: each buffer bound by the HLS estimate's mapping rule applied to the
    RTL's own per-lane memories (``storage_binding(per_lane=True)``: block RAM, UltraRAM on parts that have it,
    LUTRAM; UG573). The HLS block design's memories are shaped differently (one word of all lanes per bank) and
    may map differently."""
    from .resources import storage_binding

    return {k.upper(): RAM_STYLES[v] for k, v in storage_binding(board, per_lane=True).items()}


def package_context(board: Board, rom_words: int = 1) -> dict:
    """Template variables of ``accel_pkg.sv``: ISA tables and the board's accelerator (both precisions)."""
    a = board.accelerator
    h8, h16 = HwConfig.from_board(board, 8), HwConfig.from_board(board, 16)
    if not (_pow2(a.tn) and _pow2(a.tm)):
        raise RtlError(f"{board.name}: the RTL needs power-of-two tn/tm, got {a.tn}x{a.tm}")
    if a.axi_data_width_bits > isa.INSN_BITS:
        raise RtlError(f"{board.name}: axi_data_width_bits={a.axi_data_width_bits} wider than an instruction")
    if a.tn < 2 or a.tm < 2 or a.tm > 2 * a.tn:
        raise RtlError(f"{board.name}: the RTL needs 2 <= tn and 2 <= tm <= 2*tn (bypass reads Tm elements from at "
                       f"most two IBUF words), got {a.tn}x{a.tm}")
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
    modes = sum(1 << b for b in isa.HW_INFO_MODES.values())    # hw_info[31:24]: both precisions
    params = [(n, off * 8, {"i8": 64, "i2": 16, "u1": 8, "u2": 16}[t]) for n, t, off in isa.PARAM_RECORD]
    return dict(
        board=board.name, isa_version=isa.ISA_VERSION, insn_bits=isa.INSN_BITS, opcodes=isa.OPCODES,
        header=header, fields=fields, registers=regs, ctrl_bits=isa.CTRL_BITS, status_bits=isa.STATUS_BITS,
        buffers=isa.BUFFERS, precisions=isa.PRECISIONS, activations=isa.ACTIVATIONS, params=params,
        param_bytes=isa.PARAM_RECORD_BYTES,
        base_regs=[reg_off[isa.BASE_REG_NAMES[i].lower()] for i in range(len(isa.BASE_REGS))],
        size_regs=[reg_off[isa.SIZE_REGS[isa.BASE_REG_NAMES[i]]] for i in range(len(isa.BASE_REGS))],
        unused_masks={op: ((1 << isa.INSN_BITS) - 1) ^ ((1 << (isa.LAYOUTS[op][-1][1] + isa.LAYOUTS[op][-1][2])) - 1)
                      for op in sorted(isa.OPCODES, key=isa.OPCODES.get)},
        token_queue_depth=isa.TOKEN_QUEUE_DEPTH, token_count_bits=isa.TOKEN_COUNT_BITS,
        watchdog_cycles=isa.WATCHDOG_CYCLES,
        ibuf_words8=h8.ibuf_words, ibuf_words16=h16.ibuf_words, wbuf_words8=h8.wbuf_words,
        wbuf_words16=h16.wbuf_words, obuf_words8=h8.obuf_words, obuf_words16=h16.obuf_words,
        axil_aw=max(isa.REGISTERS[-1][1] + 4, 4).bit_length(),
        tn=a.tn, tm=a.tm, axi_dw=a.axi_data_width_bits,
        ibuf_elems=max(h8.ibuf_words * a.tn, h16.ibuf_words * a.tn),
        wbuf_elems=max(h8.wbuf_words, h16.wbuf_words) * a.tn * a.tm,
        acc_words=h8.acc_words, obuf_elems=max(h8.obuf_words, h16.obuf_words) * a.tm, pbuf_entries=a.pbuf_entries,
        acc_w=max(h8.acc_bits, h16.acc_bits), config_id=h8.config_id, ld_outst=MAX_READ_BURSTS,
        hw_info=isa.ISA_VERSION | a.tn << 8 | a.tm << 16 | modes << 24, rom_words=max(rom_words, 1),
        ram_styles=ram_styles(board), rtl_queues=RTL_QUEUES, axi_boundary=AXI_BOUNDARY_BYTES,
        axi_max_beats=AXI_MAX_BURST_BEATS, dsp_a_w=DSP_A_BITS, dsp_b_w=DSP_B_BITS, pack_shift=PACK_SHIFT)


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
    (out / "accel_pkg.sv").write_text(render_package(board, n))
    if program is not None:
        (out / "insn_rom.hex").write_text(rom_image(program))
    srcs = [out / "accel_pkg.sv"]
    for s in RTL_SOURCES:
        shutil.copyfile(RTL_DIR / s, out / s)
        srcs.append(out / s)
    return srcs

"""The render context both back ends share: the ISA tables of :mod:`generator.spec.isa` and the accelerator
configuration of a board (both precisions, through :class:`generator.spec.hw.HwConfig`), built once. The HLS
back end (:mod:`generator.backends.hls.kernel`) and the RTL back end (:mod:`generator.backends.rtl`) each add only
their own entries (formatted field tables, register lists, tool settings) to this dict.

Legend of the accelerator keys: ``tn`` / ``tm`` the PE array's input / output lanes; ``*_words8`` / ``*_words16``
the words per bank of IBUF (Tn elements per word), WBUF (Tn x Tm) and OBUF (Tm) in int8 / int16;
``acc_words`` the ACC words per bank; ``acc_bits8`` / ``acc_bits16`` the accumulator width of each precision;
``axi_bits`` the m_axi data width; ``config_id`` / ``hw_info`` the values of the CONFIG and HW_INFO registers.
"""
from __future__ import annotations

from generator.spec import isa
from generator.spec.board import Board
from generator.spec.hw import HwConfig
from host.registers import pack_hw_info


def isa_tables() -> dict:
    """The ISA entries both back ends render unchanged: version, instruction width, opcodes, buffer / precision /
    activation codes, control and status bits, parameter-record bytes, the activation table's geometry (entries,
    entries per record, interpolation bits, TBUF rows per lane), token queue depth, watchdog cycles."""
    return dict(isa_version=isa.ISA_VERSION, insn_bits=isa.INSN_BITS, opcodes=isa.OPCODES, buffers=isa.BUFFERS,
                precisions=isa.PRECISIONS, activations=isa.ACTIVATIONS, ctrl_bits=isa.CTRL_BITS,
                status_bits=isa.STATUS_BITS, param_bytes=isa.PARAM_RECORD_BYTES, table_entries=isa.TABLE_ENTRIES,
                table_per_record=isa.TABLE_PER_RECORD, table_frac_bits=isa.TABLE_FRAC_BITS, tbuf_rows=isa.TBUF_ROWS,
                token_queue_depth=isa.TOKEN_QUEUE_DEPTH, watchdog_cycles=isa.WATCHDOG_CYCLES)


def hw_info(board: Board) -> int:
    """The HW_INFO register of ``board``'s accelerator: ISA_VERSION | Tn << 8 | Tm << 16 | modes << 24, with both
    precision bits of :data:`host.registers.HW_INFO_MODES` set (one bitstream runs int8 and int16)."""
    return pack_hw_info(isa.ISA_VERSION, board.accelerator.tn, board.accelerator.tm)


def accelerator(board: Board) -> dict:
    """The accelerator entries of ``board`` (keys: see the module docstring's legend)."""
    h8, h16 = HwConfig.from_board(board, 8), HwConfig.from_board(board, 16)
    a = board.accelerator
    return dict(board=board.name, tn=a.tn, tm=a.tm, axi_bits=a.axi_data_width_bits, config_id=h8.config_id,
                ibuf_words8=h8.ibuf_words, ibuf_words16=h16.ibuf_words, wbuf_words8=h8.wbuf_words,
                wbuf_words16=h16.wbuf_words, obuf_words8=h8.obuf_words, obuf_words16=h16.obuf_words,
                acc_words=h8.acc_words, pbuf_entries=a.pbuf_entries, pbuf_rows=h8.pbuf_rows,
                tm_pitch=h8.tm_pitch, wbuf_pitch=h8.wbuf_pitch, acc_bits8=h8.acc_bits,
                acc_bits16=h16.acc_bits, hw_info=hw_info(board))


def shared_context(board: Board) -> dict:
    """:func:`isa_tables` and :func:`accelerator` of ``board`` in one dict (a new dict each call)."""
    return dict(isa_tables(), **accelerator(board))

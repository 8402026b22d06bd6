"""Hardware model: the accelerator configuration in the units the ISA uses, and the cycle cost of each
instruction. The golden simulator counts cycles with it and the scheduler predicts with it, so both agree by
construction; it describes what the RTL (``rtl/accel_top.sv``) does and is calibrated against the RTL's cycle
counts (``invoke sim``, :mod:`generator.rtl_sim`).

Cost model (cycles of the PL clock):

* LOAD / STORE: the AXI4 latency (``ddr_read_latency_cycles`` to the first read beat; ``ddr_write_latency_cycles``
  from the last write beat to its response) once per instruction, since the bursts of an instruction are
  pipelined, plus the data beats at the smaller of the m_axi width and the PS DDR bandwidth. The beats are those
  the RTL's address generator issues: a transfer is cut into *segments* (the whole transfer when rows and pixels
  are contiguous, else one per row when the pixels of a row are, else, for LOAD only, one per row *span* when
  the pixel runs overlap or nearly touch (stride < run <= 2 x stride) and the span takes no more beats than the
  runs, else one per pixel run); each segment costs ``ceil((addr % beat + bytes) / beat)`` beats at its real
  address (base registers are page-aligned). At most :data:`MAX_READ_BURSTS` read bursts are in flight (one
  address per cycle), which bounds a LOAD of many short bursts to that many bursts per read latency.
* COMPUTE: ``COMPUTE_FILL`` + oh * ceil(ow / P) * og * ig * kh * kw, with P = 2 output pixels per DSP48E2 in
  int8 (two activations packed in the 27-bit A port share the weight on the 18-bit B port) and P = 1 in int16.
* POST: ``POST_FILL`` + output words x pooling-window size (one accumulator word of a window per cycle, Tm
  lanes wide; an upsampled output word re-reads its source, so nearest upsampling costs one cycle per output).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .board import Board

COMPUTE_FILL = 4
POST_FILL = 4
SIMPLE_OP_CYCLES = 1
#: read bursts the LOAD module keeps in flight (rendered into the RTL package as LD_OUTST)
MAX_READ_BURSTS = 32
#: cycles of a LOAD/STORE besides latency and beats (instruction issue, first address, completion)
XFER_OVERHEAD = 4


@dataclass(frozen=True)
class HwConfig:
    """Accelerator configuration for one precision.

    Attributes: tn, tm (PE array), pix_lanes (output pixels per DSP per cycle: 2 in int8, 1 in int16),
    elem_bytes (1 or 2), bits, words per bank of each buffer (IBUF word = Tn elements, WBUF word = Tn*Tm,
    ACC/OBUF word = Tm), pbuf_entries, bytes_per_cycle (DDR), axi_bytes (m_axi beat), read/write latency (cycles), acc_bits,
    config_id (32-bit), clock_mhz.
    """
    tn: int
    tm: int
    bits: int
    pix_lanes: int
    elem_bytes: int
    ibuf_words: int
    wbuf_words: int
    acc_words: int
    obuf_words: int
    pbuf_entries: int
    bytes_per_cycle: float
    axi_bytes: int
    rd_latency: int
    wr_latency: int
    acc_bits: int
    config_id: int
    clock_mhz: float
    board: str

    @classmethod
    def from_board(cls, board: Board, bits: int) -> "HwConfig":
        """Derive the configuration of ``board`` for ``bits`` (8 or 16). Raises ValueError for other widths."""
        if bits not in (8, 16):
            raise ValueError(f"precision must be 8 or 16 bits, got {bits}")
        a = board.accelerator
        eb = bits // 8
        return cls(tn=a.tn, tm=a.tm, bits=bits, pix_lanes=2 if bits == 8 else 1, elem_bytes=eb,
                   ibuf_words=a.ibuf_bank_bytes // (a.tn * eb), wbuf_words=a.wbuf_bank_bytes // (a.tn * a.tm * eb),
                   acc_words=a.acc_bank_words, obuf_words=a.obuf_bytes // (a.tm * eb),
                   pbuf_entries=a.pbuf_entries, bytes_per_cycle=board.ddr_bytes_per_cycle,
                   axi_bytes=a.axi_data_width_bits // 8,
                   rd_latency=a.ddr_read_latency_cycles, wr_latency=a.ddr_write_latency_cycles,
                   acc_bits=a.acc_bits_int8 if bits == 8 else a.acc_bits_int16, config_id=a.config_id(),
                   clock_mhz=board.pl_clock_mhz, board=board.name)

    @property
    def macs_per_cycle(self) -> int:
        """Peak MACs per cycle of the PE array (Tn x Tm x pixel lanes)."""
        return self.tn * self.tm * self.pix_lanes

    def summary(self) -> dict:
        """All fields as a dict (for reports and manifests)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _beats(addr, nbytes, beat: int):
    """Beats of the AXI bursts covering ``nbytes`` bytes from byte address ``addr`` (int or array)."""
    return (np.asarray(addr) % beat + nbytes + beat - 1) // beat


def use_span(rows: int, cols: int, run_bytes: int, pix_stride: int, beat: int) -> bool:
    """True if the LOAD address generator fetches each row as one span (overlapping or nearly touching pixel
    runs: 0 < stride < run <= 2 x stride, and the span takes no more beats than the runs, counted aligned)."""
    if cols == 1 or pix_stride == run_bytes or not 0 < pix_stride < run_bytes <= 2 * pix_stride:
        return False
    span = (cols - 1) * pix_stride + run_bytes
    return -(-span // beat) <= cols * -(-run_bytes // beat)


def transfer_cycles(hw: HwConfig, rows: int, cols: int, run_bytes: int, row_stride: int, pix_stride: int,
                    write: bool = False, addr: int = 0) -> int:
    """Cycles of a strided 2-D DDR transfer (a LOAD, or a STORE if ``write``) of rows x cols pixel runs of
    ``run_bytes`` bytes, strides in bytes, starting at byte address ``addr`` (alignment counts; see the module
    docstring)."""
    latency = hw.wr_latency if write else hw.rd_latency
    if rows == 0 or cols == 0 or run_bytes == 0:
        return latency
    beat = hw.axi_bytes
    r_addr = addr + np.arange(rows, dtype=np.int64) * row_stride
    if cols == 1 or pix_stride == run_bytes:
        row_bytes = cols * run_bytes
        if rows == 1 or row_stride == row_bytes:
            beats, bursts = int(_beats(addr, rows * row_bytes, beat)), 1
        else:
            beats, bursts = int(_beats(r_addr, row_bytes, beat).sum()), rows
    elif not write and use_span(rows, cols, run_bytes, pix_stride, beat):
        beats, bursts = int(_beats(r_addr, (cols - 1) * pix_stride + run_bytes, beat).sum()), rows
    else:
        p_addr = r_addr[:, None] + np.arange(cols, dtype=np.int64)[None, :] * pix_stride
        beats, bursts = int(_beats(p_addr, run_bytes, beat).sum()), rows * cols
    data = math.ceil(beats * beat / hw.bytes_per_cycle)
    if not write:
        data = max(data, math.ceil(bursts * latency / MAX_READ_BURSTS))
    return XFER_OVERHEAD + latency + data


def insn_cycles(hw: HwConfig, insn) -> int:
    """Cycles an instruction occupies its module (see the module docstring)."""
    f, op = insn.f, insn.op
    if op == "LOAD":
        eb = 16 if f["buf"] == 2 else hw.elem_bytes
        return transfer_cycles(hw, f["rows"], f["cols"], f["elems"] * eb, f["row_stride"], f["pix_stride"],
                               addr=f["ddr_offset"])
    if op == "STORE":
        return transfer_cycles(hw, f["rows"], f["cols"], f["elems"] * hw.elem_bytes, f["row_stride"],
                               f["pix_stride"], write=True, addr=f["ddr_offset"])
    if op == "COMPUTE":
        px = f["oh"] * math.ceil(f["ow"] / hw.pix_lanes) * f["og"]
        if f["bypass"]:
            return COMPUTE_FILL + px
        return COMPUTE_FILL + px * f["ig"] * f["kh"] * f["kw"]
    if op == "POST":
        k = max(f["pool_k"], 1)
        return POST_FILL + f["out_rows"] * f["out_cols"] * k * k * f["og"]
    return SIMPLE_OP_CYCLES

"""Hardware model: the accelerator configuration in the units the ISA uses, and the cycle cost of each
instruction. The golden simulator counts cycles with it and the scheduler predicts with it, so both agree by
construction; the RTL is calibrated against it.

Cost model (cycles of the PL clock):

* LOAD / STORE: the AXI4 first-beat latency (``ddr_read_latency_cycles`` / ``ddr_write_latency_cycles``) once
  per instruction (requests are pipelined), plus beats: a fully contiguous transfer moves
  ``ddr_bytes_per_cycle`` bytes per cycle; a strided one is fetched row by row, each row either as one burst
  spanning its pixels or pixel by pixel, whichever is shorter.
* COMPUTE: ``COMPUTE_FILL`` + oh * ceil(ow / P) * og * ig * kh * kw, with P = 2 output pixels per DSP48E2 in
  int8 (two activations packed in the 27-bit A port share the weight on the 18-bit B port) and P = 1 in int16.
* POST: ``POST_FILL`` + max(accumulator words read, output words written).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .board import Board

COMPUTE_FILL = 8
POST_FILL = 6
SIMPLE_OP_CYCLES = 1


@dataclass(frozen=True)
class HwConfig:
    """Accelerator configuration for one precision.

    Attributes: tn, tm (PE array), pix_lanes (output pixels per DSP per cycle: 2 in int8, 1 in int16),
    elem_bytes (1 or 2), bits, words per bank of each buffer (IBUF word = Tn elements, WBUF word = Tn*Tm,
    ACC/OBUF word = Tm), pbuf_entries, bytes_per_cycle (DDR), read/write latency (cycles), acc_bits,
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


def transfer_cycles(hw: HwConfig, rows: int, cols: int, run_bytes: int, row_stride: int, pix_stride: int,
                    latency: int) -> int:
    """Cycles of a strided 2-D DDR transfer of rows x cols runs of ``run_bytes`` bytes (see module docstring)."""
    if rows == 0 or cols == 0 or run_bytes == 0:
        return latency
    B = hw.bytes_per_cycle
    if cols == 1 or pix_stride == run_bytes:
        row_bytes = cols * run_bytes
        if rows == 1 or row_stride == row_bytes:
            return latency + math.ceil(rows * row_bytes / B)
        return latency + rows * math.ceil(row_bytes / B)
    span = (cols - 1) * pix_stride + run_bytes
    return latency + rows * min(math.ceil(span / B), cols * math.ceil(run_bytes / B))


def insn_cycles(hw: HwConfig, insn) -> int:
    """Cycles an instruction occupies its module (see the module docstring)."""
    f, op = insn.f, insn.op
    if op == "LOAD":
        eb = 16 if f["buf"] == 2 else hw.elem_bytes
        return transfer_cycles(hw, f["rows"], f["cols"], f["elems"] * eb, f["row_stride"], f["pix_stride"],
                               hw.rd_latency)
    if op == "STORE":
        return transfer_cycles(hw, f["rows"], f["cols"], f["elems"] * hw.elem_bytes, f["row_stride"],
                               f["pix_stride"], hw.wr_latency)
    if op == "COMPUTE":
        px = f["oh"] * math.ceil(f["ow"] / hw.pix_lanes) * f["og"]
        if f["bypass"]:
            return COMPUTE_FILL + px
        return COMPUTE_FILL + px * f["ig"] * f["kh"] * f["kw"]
    if op == "POST":
        return POST_FILL + max(f["oh"] * f["ow"], f["out_rows"] * f["out_cols"]) * f["og"]
    return SIMPLE_OP_CYCLES

"""The accelerator's configuration at one precision (:class:`HwConfig`): the PE array, the buffers' words, the DDR
path and the clock, derived from a board file (``boards/*.yaml``); what the compiler tiles for, the latency model
(:mod:`generator.spec.timing`) prices and the simulators size their buffers by."""
from __future__ import annotations

from dataclasses import dataclass, replace

from generator.spec import isa
from generator.spec.arch import ACC_RMW_DISTANCE, COMPUTE_SETUP, pe_dsp_stages, pe_tree_stages
from generator.spec.board import Board

#: cycles of a COMPUTE besides its steps and its PE array's pipeline (:attr:`HwConfig.compute_fill`): the queue
#: pop, the setup, the read-address, RAM and RAM-data register stages, the ACC read-modify-write, the token push
COMPUTE_BASE = 7 + COMPUTE_SETUP + ACC_RMW_DISTANCE - 1

@dataclass(frozen=True)
class HwConfig:
    """Accelerator configuration for one precision.

    Attributes: tn, tm (PE array), pix_lanes (output pixels per DSP per logic cycle: 2 in int8, 1 in int16, twice
    that with ``pump`` 2), pump (1, or 2: the PE array double-pumped, :class:`AcceleratorConfig`),
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
    hp_ports: int = 1
    pump: int = 1
    acc_bits_int8: int = 0
    acc_bits_int16: int = 0

    @classmethod
    def from_board(cls, board: Board, bits: int) -> "HwConfig":
        """Derive the configuration of ``board`` for ``bits`` (8 or 16). Raises ValueError for other widths."""
        if bits not in (8, 16):
            raise ValueError(f"precision must be 8 or 16 bits, got {bits}")
        a = board.accelerator
        eb = bits // 8
        return cls(tn=a.tn, tm=a.tm, bits=bits, pix_lanes=(2 if bits == 8 else 1) * a.pump, elem_bytes=eb,
                   ibuf_words=a.ibuf_bank_bytes // (a.tn * eb), wbuf_words=a.wbuf_bank_bytes // (a.tn * a.tm * eb),
                   acc_words=a.acc_bank_words, obuf_words=a.obuf_bytes // (a.tm * eb),
                   pbuf_entries=a.pbuf_entries, bytes_per_cycle=board.ddr_bytes_per_cycle,
                   axi_bytes=a.axi_data_width_bits // 8,
                   rd_latency=a.ddr_read_latency_cycles, wr_latency=a.ddr_write_latency_cycles,
                   acc_bits=a.acc_bits_int8 if bits == 8 else a.acc_bits_int16, config_id=a.config_id(),
                   clock_mhz=board.pl_clock_mhz, board=board.name, hp_ports=a.hp_ports, pump=a.pump,
                   acc_bits_int8=a.acc_bits_int8, acc_bits_int16=a.acc_bits_int16)

    def at(self, bits: int) -> "HwConfig":
        """The same accelerator seen at precision ``bits`` (8 or 16): the words per bank of IBUF / WBUF / OBUF for
        that element size (the banks' bytes are fixed), its pixel lanes and accumulator width. A mixed-precision
        program runs each instruction at its ``prec`` field's precision (:mod:`generator.spec.isa`). Raises
        ValueError for other widths."""
        if bits == self.bits:
            return self
        if bits not in (8, 16):
            raise ValueError(f"precision must be 8 or 16 bits, got {bits}")
        eb, k = bits // 8, self.elem_bytes
        return replace(self, bits=bits, pix_lanes=(2 if bits == 8 else 1) * self.pump, elem_bytes=eb,
                       ibuf_words=self.ibuf_words * k // eb, wbuf_words=self.wbuf_words * k // eb,
                       obuf_words=self.obuf_words * k // eb,
                       acc_bits=self.acc_bits_int8 if bits == 8 else self.acc_bits_int16)

    def single_rate(self) -> "HwConfig":
        """The same accelerator single-pumped (``pump`` 1): the machine the HLS kernel is for any board (Vitis HLS
        has no second clock for a loop), running the same programs (same config id) with half the pixel lanes of a
        double-pumped array. ``self`` when already single-pumped."""
        if self.pump == 1:
            return self
        return replace(self, pump=1, pix_lanes=2 if self.bits == 8 else 1)

    def at_prec(self, prec: int) -> "HwConfig":
        """:meth:`at` for an instruction's ``prec`` field value (:data:`generator.spec.isa.PRECISIONS`)."""
        return self.at(16 if prec == isa.PRECISIONS["int16"] else 8)

    @property
    def compute_fill(self) -> int:
        """Cycles of a COMPUTE besides its steps (rtl/compute.sv): :data:`COMPUTE_BASE` plus the PE array's
        pipeline (the DSP48E2's A/B, M, P registers and the adder tree's register stages for Tn; double-pumped:
        :func:`generator.spec.arch.pe_dsp_stages` with ``pump`` 2)."""
        return COMPUTE_BASE + pe_dsp_stages(self.tn, self.pump) + pe_tree_stages(self.tn)

    @property
    def tm_pitch(self) -> int:
        """PBUF / TBUF record index pitch of a row of Tm lanes (:func:`generator.spec.isa.lane_pitch`)."""
        return isa.lane_pitch(self.tm)

    @property
    def wbuf_pitch(self) -> int:
        """WBUF element index pitch of a word of Tn x Tm elements (:func:`generator.spec.isa.lane_pitch`)."""
        return isa.lane_pitch(self.tn * self.tm)

    @property
    def pbuf_rows(self) -> int:
        """PBUF rows (one record per output lane each): ceil(pbuf_entries / Tm)."""
        return -(-self.pbuf_entries // self.tm)

    @property
    def pbuf_index(self) -> int:
        """PBUF record indices (rows x :attr:`tm_pitch`): a LOAD or POST beyond them is OUT_OF_RANGE."""
        return self.pbuf_rows * self.tm_pitch

    @property
    def macs_per_cycle(self) -> int:
        """Peak MACs per cycle of the PE array (Tn x Tm x pixel lanes)."""
        return self.tn * self.tm * self.pix_lanes

    def summary(self) -> dict:
        """All fields as a dict (for reports and manifests)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

"""Board files (``boards/*.yaml``): schema, validation and derived hardware parameters.

Each board file is the single source of truth for a board: FPGA part, resource capacity, PS DDR and HP-port
bandwidth, PL clock, and the default accelerator configuration (PE array Tn x Tm, on-chip buffer sizes). The
schema is a pydantic model with ``extra="forbid"``, so a misspelt key is an error naming the key and the file.

``accelerator_source``: ``file`` (default: the board file pins its ``accelerator:`` block) or ``explore`` (the
configuration ``invoke explore --board B`` chose and recorded in ``build/explore/B/chosen.yaml``; the file's block is
then the exploration's reference point only). :func:`load_board` applies it, so ``compile``, ``build``, ``sim`` and
``package`` use the chosen configuration for such a board.

Capacities follow the Zynq UltraScale+ product tables (DS891): DSP48E2 slices, BRAM36 (36 Kb) blocks, URAM
(288 Kb) blocks, CLB LUTs and flip-flops.
"""
from __future__ import annotations
from generator import ROOT_DIR, build_dir

import hashlib
import json
from pathlib import Path

import yaml
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

BOARDS_DIR = ROOT_DIR / "boards"
#: the board a task or flow compiles for when not told otherwise
DEFAULT_BOARD = "zcu19eg"
#: where ``invoke explore`` records each board's chosen configuration (``<board>/chosen.yaml``)
EXPLORE_DIR = build_dir("explore")


class BoardError(ValueError):
    """Unknown board name or invalid board file (the message names the file and the offending key)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Resources(_Strict):
    """FPGA resource capacity of the part (DS891 counts)."""
    dsp48e2: int = Field(gt=0)
    bram36: int = Field(ge=0)
    uram: int = Field(ge=0)
    lut: int = Field(gt=0)
    ff: int = Field(gt=0)


class PsDdr(_Strict):
    """Processing-system DDR: data width in bits and peak bandwidth in GB/s."""
    data_width_bits: int = Field(gt=0)
    bandwidth_gbps: float = Field(gt=0)


class AcceleratorConfig(_Strict):
    """Hardware configuration of the accelerator (what the bitstream is built for).

    Attributes:
        tn, tm: PE array size; Tn input-channel lanes x Tm output-channel lanes, one DSP48E2 per PE. In int8 mode
            each DSP48E2 multiplies one weight by two packed activations (two adjacent output pixels), so the array
            does 2 x Tn x Tm MACs per cycle.
        ibuf_bank_bytes, wbuf_bank_bytes: ifmap / weight buffer size per ping-pong bank, bytes.
        acc_bank_words: accumulator words (Tm accumulators each) per bank; two banks.
        obuf_bytes: post-processed output tile buffer, bytes.
        pbuf_entries: per-output-channel parameter records (bias, requantization multipliers and shifts).
        axi_data_width_bits: m_axi data width to DDR (bits per beat) of the units.
        hp_ports: PS-side HP ports (S_AXI_HPn_FPD, UG1085 ch. 35; the PS has HP0-HP3) the m_axi is spread over: 1,
            or 2 / 4 with ``axi_data_width_bits`` that many times the board's ``hp_port_width_bits`` (the RTL splits
            every burst across them, rtl/axi_hp_ports.sv: one rtl/axi_hp_split.sv for 2, a tree of three for 4),
            so DDR moves 2 / 4 ports' bytes per cycle, up to the PS DDR's bandwidth (``ps_ddr``). 4 is RTL only:
            the HLS block design has one splitter (hls_templates/bd/accel_hp.v).
        pump: 1, or 2 for the PE array double-pumped (rtl/pe_array_2x.sv: the DSP48E2 cascades on a second clock
            of twice ``pl_clock_mhz``, each DSP48E2 taking two operand sets per logic cycle, as the Vitis AI DPU's
            ``dpu_2x_clk``): an int8 COMPUTE step then takes four output pixels, int16 two; IBUF and ACC get a second
            copy (rtl/buffers.sv) to feed it. RTL only: the HLS kernel stays single-pumped.
        ddr_read_latency_cycles / ddr_write_latency_cycles: first-beat latency of an AXI4 read / write, PL cycles.
        acc_bits_int8 / acc_bits_int16: accumulator width per mode, bits (signed).
    """
    tn: int = Field(gt=0, le=128)
    tm: int = Field(gt=0, le=128)
    ibuf_bank_bytes: int = Field(gt=0)
    wbuf_bank_bytes: int = Field(gt=0)
    acc_bank_words: int = Field(gt=0)
    obuf_bytes: int = Field(gt=0)
    pbuf_entries: int = Field(gt=0, le=4096)
    axi_data_width_bits: int
    hp_ports: Literal[1, 2, 4] = 1
    pump: Literal[1, 2] = 1
    ddr_read_latency_cycles: int = Field(ge=0)
    ddr_write_latency_cycles: int = Field(ge=0)
    acc_bits_int8: int = Field(ge=16, le=64)
    acc_bits_int16: int = Field(ge=32, le=64)

    @model_validator(mode="after")
    def _check(self):
        if self.axi_data_width_bits not in (32, 64, 128, 256, 512):
            raise ValueError(f"axi_data_width_bits={self.axi_data_width_bits} is not an AXI4 width (32..512)")
        return self

    def config_id(self) -> int:
        """32-bit identifier of this configuration (hash of its fields); the CONFIG instruction carries it."""
        # ids of one-port, single-pumped boards kept
        d = self.model_dump(exclude={k for k in ("hp_ports", "pump") if getattr(self, k) == 1})
        blob = json.dumps(d, sort_keys=True).encode()
        return int.from_bytes(hashlib.sha256(blob).digest()[:4], "little")


class Board(_Strict):
    """One board file. ``pl_clock_mhz`` is the accelerator clock in MHz. ``vivado_board_part``: the Vivado board
    part without its version (``vendor:board:part0``) whose PS preset the block design applies; absent for boards
    without a Vivado board file (the PS then keeps Vivado's defaults)."""
    name: str
    description: str
    part: str
    pynq_board: str
    vivado_board_part: str | None = None
    resources: Resources
    ps_ddr: PsDdr
    hp_port_width_bits: int
    pl_clock_mhz: float = Field(gt=0)
    accelerator: AcceleratorConfig
    accelerator_source: Literal["file", "explore"] = "file"

    @model_validator(mode="after")
    def _check_ports(self):
        a = self.accelerator
        n = a.hp_ports
        if n > 1 and a.axi_data_width_bits != n * self.hp_port_width_bits:
            raise ValueError(f"accelerator.hp_ports: {n} HP ports split an m_axi of {n} times the port width: "
                             f"axi_data_width_bits must be {n * self.hp_port_width_bits} ({n} x hp_port_width_bits), "
                             f"got {a.axi_data_width_bits}")
        return self

    @property
    def ddr_bytes_per_cycle(self) -> float:
        """Sustained DDR bytes per PL cycle: the smallest of the m_axi beat, the HP ports' width (``hp_ports`` x
        ``hp_port_width_bits``: one port narrows a wider m_axi through the interconnect) and the PS DDR bandwidth
        per cycle."""
        a = self.accelerator
        beat = min(a.axi_data_width_bits, a.hp_ports * self.hp_port_width_bits) / 8
        ddr = self.ps_ddr.bandwidth_gbps * 1e9 / (self.pl_clock_mhz * 1e6)
        return min(beat, ddr)


def known_boards() -> list[str]:
    """Names of the boards that have a file in ``boards/``."""
    return sorted(p.stem for p in BOARDS_DIR.glob("*.yaml"))


def chosen_path(name: str) -> Path:
    """The chosen configuration ``invoke explore --board name`` records (``build/explore/<name>/chosen.yaml``)."""
    return EXPLORE_DIR / name / "chosen.yaml"


def load_board(name_or_path: str | Path, chosen: bool = True) -> Board:
    """Load and validate a board by name (``boards/<name>.yaml``) or path. For a board file with
    ``accelerator_source: explore`` (and ``chosen``), the ``accelerator:`` block is the one in
    :func:`chosen_path` (validated the same way); ``chosen=False`` keeps the file's block (the exploration itself).

    Raises:
        BoardError (one line): unknown board (the message lists the known ones), a file that cannot be read, is
            not UTF-8 or not valid YAML (:func:`read_yaml`: the byte offset, or ``file:line:column``), or a schema
            violation (the message names the file and the key path, e.g. ``accelerator.tn``); ``accelerator_source:
            explore`` without a recorded choice (the message says to run ``invoke explore --board <name>``).
    """
    p = Path(name_or_path)
    if not p.suffix:
        p = BOARDS_DIR / f"{name_or_path}.yaml"
    if not p.exists():
        raise BoardError(f"unknown board {str(name_or_path)!r}; known boards: {', '.join(known_boards())}")
    raw = read_yaml(p)
    if not isinstance(raw, dict):
        raise BoardError(f"{p}: expected a mapping at top level")
    b = _validate(raw, p)
    if not chosen or b.accelerator_source != "explore":
        return b
    c = chosen_path(b.name)
    if not c.is_file():
        raise BoardError(f"{p}: accelerator_source: explore, but no configuration has been chosen for {b.name} "
                         f"({c} does not exist): run `invoke explore --board {b.name}` first, or set "
                         f"accelerator_source: file to use the file's accelerator block")
    acc = read_yaml(c)
    if not isinstance(acc, dict) or set(acc) != {"accelerator"}:
        raise BoardError(f"{c}: expected a mapping with one key, accelerator (as `invoke explore` writes it)")
    return _validate({**raw, "accelerator": acc["accelerator"]}, c)


def read_yaml(p: Path):
    """The YAML document of the file ``p`` (UTF-8), parsed with ``yaml.safe_load`` (None for an empty file).

    Raises:
        BoardError with one line naming ``p``: the file cannot be read (a folder, no permission: the OS reason);
            it is not UTF-8 (the byte offset and line of the first bad byte); it is not valid YAML
            (``file:line:column: not valid YAML: <problem>``, with where the enclosing construct began).
    """
    try:
        data = Path(p).read_bytes()
    except OSError as e:
        raise BoardError(f"{p}: cannot read ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise BoardError(f"{p}: not UTF-8 text: byte 0x{data[e.start]:02x} at byte offset {e.start} (line {line}); "
                         f"save the file as UTF-8") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        raise BoardError(_yaml_message(p, e)) from None
    except yaml.YAMLError as e:   # a reader error (a control character): its reason and character offset
        text = str(e).replace('in "<unicode string>", ', "at character ")
        raise BoardError(f"{p}: not valid YAML: {' '.join(text.split())}") from None


def _yaml_message(p: Path, e) -> str:
    """One line for a PyYAML ``MarkedYAMLError``: ``file:line:column: not valid YAML: problem (context)``."""
    m = e.problem_mark or e.context_mark
    where = f"{p}:{m.line + 1}:{m.column + 1}" if m is not None else str(p)
    what = " ".join(str(e.problem or e.context or type(e).__name__).split())
    if e.problem and e.context:
        cm = e.context_mark
        what += f" ({' '.join(e.context.split())}" + (f" started at {cm.line + 1}:{cm.column + 1})" if cm else ")")
    return f"{where}: not valid YAML: {what}"


def _validate(raw: dict, p: Path) -> Board:
    try:
        return Board.model_validate(raw)
    except ValidationError as e:
        msgs = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "(top)"
            msgs.append(f"key '{loc}': {err['msg']}")
        raise BoardError(f"{p}: invalid board file: " + "; ".join(msgs)) from None

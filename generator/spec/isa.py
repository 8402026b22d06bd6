"""The accelerator's instruction set, defined once (fields, widths, opcodes, semantics).

Every instruction is ``INSN_BITS`` (256) bits wide, little-endian, fields packed from bit 0 upwards in the order
listed in :data:`FORMATS`. The HLS header and the SystemVerilog package are rendered from these tables; nothing
here is ever re-typed by hand elsewhere.

Execution model (after TVM-VTA, Moreau et al., "A Hardware-Software Blueprint for Flexible Deep Learning
Specialization", IEEE Micro 2019): a fetch unit dispatches instructions in program order to three modules that
run concurrently:

* LOAD module:    ``LOAD`` (strided DMA from DDR into IBUF/WBUF/PBUF banks), ``PRE`` (the camera frame to the
                  network input in DDR: :mod:`host.pre`);
* COMPUTE module: ``COMPUTE`` (Tn x Tm PE-array tile into an accumulator bank), ``SYNC``;
* STORE module:   ``POST`` (bias, requantization, activation, max-pool, upsample: ACC -> OBUF), ``STORE``
                  (OBUF -> DDR, strided, into a shared region), ``END``.

Modules synchronise through four dependency-token FIFOs: LOAD->COMPUTE (``l2c``), COMPUTE->LOAD (``c2l``),
COMPUTE->STORE (``c2s``) and STORE->COMPUTE (``s2c``). Each instruction carries four flags: ``pop_prev`` /
``push_prev`` pop from / push to the FIFO shared with the previous module (LOAD<-COMPUTE<-STORE), ``pop_next`` /
``push_next`` the FIFO with the next module. Pops happen before the instruction starts (blocking while the FIFO
is empty); pushes after it completes.

DDR addresses are byte offsets relative to one of four base-address registers the host writes
(:data:`BASE_REGS`), so one program runs wherever the driver allocates its buffers. ``CONFIG`` (first
instruction) carries the ISA version and the hardware configuration id; the hardware refuses a mismatch.

Buffers (per board, see ``boards/*.yaml``): IBUF words hold Tn activations, WBUF words Tn x Tm weights
(``[m][n]``, m = output lane), ACC words Tm accumulators, OBUF words Tm activations, PBUF one 16-byte record per
output channel (:data:`PARAM_RECORD_BYTES`). The ``prec`` field of LOAD (IBUF / WBUF), COMPUTE (int8: two packed
multiplies per DSP48E2), POST (clamp, table) and STORE selects int8 (0) or int16 (1, :data:`PRECISIONS`): 1 or 2
bytes per element in DDR, half as many int16 words per buffer (``HwConfig.at``). A layer computes in its input's
precision and writes its output's (mixed precision: POST's requantization crosses between them).
"""
from __future__ import annotations

from dataclasses import dataclass

from host.manifest import BASE_REGS as BASE_REG_ORDER
from host.pre import PreFrame
from host.registers import HW_INFO_MODES, status_bit_names

ISA_VERSION = 7
from generator.spec.isa_status import INSN_BITS, INSN_BYTES  # noqa: E402  (the width, defined there)

OPCODES = {"NOP": 0, "CONFIG": 1, "LOAD": 2, "COMPUTE": 3, "POST": 4, "STORE": 5, "SYNC": 6, "END": 7, "PRE": 8}
OPCODE_NAMES = {v: k for k, v in OPCODES.items()}
#: module that executes each opcode
MODULE_OF = {"NOP": "compute", "CONFIG": "load", "LOAD": "load", "COMPUTE": "compute", "SYNC": "compute",
             "POST": "store", "STORE": "store", "END": "store", "PRE": "load"}

#: base register -> its number in the ``base_reg`` field (the order is the deployment contract's, host/manifest.py)
BASE_REGS = {name: k for k, name in enumerate(BASE_REG_ORDER)}
BASE_REG_NAMES = {v: k for k, v in BASE_REGS.items()}
BUFFERS = {"IBUF": 0, "WBUF": 1, "PBUF": 2, "TBUF": 3}
BUFFER_NAMES = {v: k for k, v in BUFFERS.items()}
PRECISIONS = dict(HW_INFO_MODES)   # the ``prec`` field's values: the numbering of hw_info's mode bits (host/registers.py)
#: POST.act bits: neg_mult (bit 0) v < 0 uses the negative-side multiplier (ReLU, LeakyReLU); table (bit 1) the
#: requantized value indexes the activation table in TBUF (Sigmoid, SiLU, Mish, HardSwish, ...: :data:`TABLE_ENTRIES`)
ACTIVATIONS = {"linear": 0, "neg_mult": 1, "table": 2}

#: Activation table (TBUF): TABLE_ENTRIES entries of (base, delta), both int16, 4 bytes each, four to a 16-byte
#: record; every POST lane holds the whole table (TBUF = Tm lane memories of TBUF_ROWS records: LOAD buf=3 writes
#: record e to lane e % P, row e // P, P = lane_pitch(Tm), as PBUF, so the compiler stores each record P times in
#: DDR; the copies for lanes P > lane >= Tm go nowhere). A POST with the table bit maps the clamped q through it:
#:   u = q + 2^(bits-1) (0 .. 2^bits - 1); i = u >> (bits - 8); f = u mod 2^(bits - 8) (always 0 in int8)
#:   q' = clamp(base[i] + ((delta[i] * f + 2^(TABLE_FRAC_BITS-1)) >> TABLE_FRAC_BITS))
#: i.e. a direct lookup in int8 and 256 linear-interpolated segments in int16.
TABLE_ENTRIES = 256
#: POST id_above (SiLU, GELU, Mish, Softplus, ELU, HardSwish: f(x) - x -> 0): the table covers the curved part at
#: the input scale s_out / 2^id_shift; a value above its window maps by a shift onto the output grid (FORMATS POST).
ID_SHIFT_MAX = 15
TABLE_ENTRY = [("base", "int16", 0), ("delta", "int16", 2)]
TABLE_ENTRY_BYTES, TABLE_PER_RECORD, TABLE_FRAC_BITS = 4, 4, 8
TBUF_ROWS = TABLE_ENTRIES // TABLE_PER_RECORD

#: PBUF record layout in DDR (little-endian), 16 bytes per output channel: (field, numpy dtype name, byte offset)
PARAM_RECORD_BYTES = 16
PARAM_RECORD = [("bias", "int64", 0), ("mult_pos", "int16", 8), ("mult_neg", "int16", 10), ("shift_pos", "uint8", 12),
                ("shift_neg", "uint8", 13), ("pre_shift", "uint8", 14), ("reserved", "uint8", 15)]
#: requantization multiplier width (signed, always >= 0) and the range of the right shifts (shift_pos / shift_neg
#: in [1, MAX_SHIFT], pre_shift in [0, MAX_SHIFT])
MULT_BITS = 16
MAX_SHIFT = 63
#: width of the requantization multiply's other operand, ``(acc + bias) >> pre_shift`` (signed): the 27-bit A port of
#: one DSP48E2 (UG579), so each output lane's multiply is one slice; the compiler picks each channel's pre_shift
#: from its accumulator bound so that the operand fits (the golden simulator and the HLS kernel raise ARITH_OVERFLOW
#: when it does not)
REQUANT_OPERAND_BITS = 27



def record_multiplier(mult, shift, pre_shift) -> tuple:
    """The PBUF record's (multiplier, shift) for the real multiplier ``mult * 2^-shift`` applied after a pre-shift
    of the operand by ``pre_shift`` bits (:data:`FORMATS` POST): ``(mult, shift - pre_shift)``;
    a zero multiplier keeps shift 1. Arrays (or scalars) of int, broadcast together; returns int64 arrays.
    Raises ValueError when a non-zero multiplier's shift would drop below 1 (the quantizer refuses such a layer,
    :func:`generator.quant.quantize.set_pre_shift`)."""
    import numpy as np

    m, s, p = np.broadcast_arrays(*(np.asarray(x, np.int64) for x in (mult, shift, pre_shift)))
    s2 = np.where(m == 0, 1, s - p)
    if (s2 < 1).any():
        raise ValueError(f"a pre-shift of {int(p[s2 < 1].flat[0])} bits exceeds the shift {int(s[s2 < 1].flat[0])} - 1")
    return m.astype(np.int64), s2.astype(np.int64)


def lane_pitch(lanes: int) -> int:
    """The index pitch of a buffer row of ``lanes`` lanes: the power of two at or above it (1 for 1). PBUF and TBUF
    records, and WBUF elements, are addressed as row * lane_pitch + lane so that the hardware splits an index into
    row and lane by bit slicing (Tm need not be a power of two: the lanes lane_pitch(Tm) > lane >= Tm do not exist).
    Raises ValueError for lanes < 1."""
    if lanes < 1:
        raise ValueError(f"lane_pitch needs at least one lane, got {lanes}")
    return 1 << (lanes - 1).bit_length()


HEADER = [("opcode", 4), ("pop_prev", 1), ("pop_next", 1), ("push_prev", 1), ("push_next", 1)]

FORMATS: dict[str, list[tuple[str, int]]] = {
    "NOP": [],
    # isa_version and config_id checked by the hardware against its own
    "CONFIG": [("isa_version", 8), ("tn", 8), ("tm", 8), ("config_id", 32)],
    # Strided 2-D DMA. For pixel (r, c) < (rows, cols) and element e < elems (elem_bytes = 1 + prec; IBUF / WBUF
    # banks hold the words of their prec; PBUF and TBUF records ignore prec, the compiler writes 0):
    #   src byte  = base[base_reg] + ddr_offset + r*row_stride + c*pix_stride + e*elem_bytes
    #   dst elem  = (dst_word + (r*cols + c)*dst_pitch) * lanes + dst_elem + e
    # lanes = Tn (IBUF), lane_pitch(Tn*Tm) (WBUF: element q = m*Tn + n of a word; q >= Tn*Tm is no element and
    # is not written), 1 (PBUF, TBUF: elements are 16-byte records, record r = dst_word + element index goes to
    # lane r % P, row r // P, P = lane_pitch(Tm); lanes P > r % P >= Tm do not exist and are not written).
    "LOAD": [("buf", 2), ("bank", 1), ("base_reg", 2), ("ddr_offset", 32), ("rows", 12), ("cols", 12),
             ("elems", 20), ("row_stride", 32), ("pix_stride", 24), ("dst_word", 20), ("dst_elem", 16),
             ("dst_pitch", 16), ("prec", 1)],
    # Tile of a convolution on the PE array (in precision prec: the IBUF / WBUF words its LOADs wrote, the
    # accumulator range of that precision), for oy < oh, ox < ow, o < og, m < Tm:
    #   ACC[acc_bank][(oy*ow + ox)*og + o][m] (= if acc_init else +=)
    #     sum_{i<ig, ky<kh, kx<kw, n<Tn} WBUF[wbuf_bank][wbuf_word + ((o*ig + i)*kh + ky)*kw + kx][m][n]
    #                                   * IBUF[ibuf_bank][ibuf_word + ((oy*stride + ky)*in_cols + ox*stride + kx)*ig + i][n]
    # bypass=1 (copy/pool layers): ACC[..][(oy*ow+ox)*og + o][m] (+)= IBUF element (o*Tm + m) of pixel
    #   (oy*stride, ox*stride), i.e. channel c = o*Tm + m of the ifmap tile (ig = ceil(og*Tm/Tn) words per pixel).
    # bypass=1, emul=1 (element-wise product of two tensors): ACC[..][(oy*ow+ox)*og + o][m] (+)=
    #   (IBUF element (o*Tm + m) - za) * (IBUF element (b_word*Tn + o*Tm + m) - zb) of that pixel: operand A's
    #   channels from the pixel's first word, B's from its word b_word (b_word*Tn + og*Tm <= ig*Tn). Two cycles per
    #   output word (A's lanes, then B's, on the bypass read path), Tm multipliers (DSP48E2) after it.
    "COMPUTE": [("acc_bank", 1), ("ibuf_bank", 1), ("wbuf_bank", 1), ("acc_init", 1), ("bypass", 1),
                ("oh", 12), ("ow", 12), ("og", 8), ("ig", 8), ("kh", 4), ("kw", 4), ("stride", 4),
                ("in_cols", 12), ("ibuf_word", 20), ("wbuf_word", 20), ("emul", 1), ("b_word", 8), ("za", 16),
                ("zb", 16), ("prec", 1)],
    # Post-processing of an accumulator tile (oh x ow pixels, og words) into OBUF, per output lane m of group o the
    # PBUF record r = pbuf_oc + o*P + m (P = lane_pitch(Tm); pbuf_oc a multiple of P):
    #   v = (ACC + bias[r]) >> pre_shift[r] (arithmetic: floor), in REQUANT_OPERAND_BITS signed bits
    #   (M, s) = (mult_neg, shift_neg) if act bit 0 and v < 0 else (mult_pos, shift_pos)
    #   q = clamp(((v*M + 2^(s-1)) >> s) + zp_out)              (round half up, saturate to int8/int16 by prec)
    #   act bit 1: q = the activation table's value at q (TBUF, see TABLE_ENTRIES); but with id_above where
    #     p = ((v*M + 2^(s-1)) >> s) + zp_out (unclamped) > qmax: q = clamp(((p - zp_out + r) >> id_shift) + zp_id),
    #     r = 2^(id_shift-1) (0 for id_shift 0): the identity above the table's window (ID_SHIFT_MAX)
    #   max-pool pool_k x pool_k, stride pool_s, window clipped to the tile (pool_k=1: none)
    #   nearest upsample by `up`; OBUF[(y*out_cols + x)*og + o][m] for y < out_rows, x < out_cols
    "POST": [("acc_bank", 1), ("oh", 12), ("ow", 12), ("og", 8), ("pbuf_oc", 12), ("act", 2), ("pool_k", 3),
             ("pool_s", 3), ("up", 3), ("zp_out", 16), ("out_rows", 12), ("out_cols", 12), ("id_above", 1),
             ("id_shift", 4), ("zp_id", 16), ("prec", 1)],
    # Strided 2-D write (elem_bytes = 1 + prec; the OBUF words its POST wrote in that precision):
    #   DDR[base + ddr_offset + r*row_stride + c*pix_stride + e*elem_bytes]
    #   = OBUF element (r*cols + c)*src_pitch*Tm + e, for r < rows, c < cols, e < elems
    "STORE": [("base_reg", 2), ("ddr_offset", 32), ("rows", 12), ("cols", 12), ("elems", 16),
              ("row_stride", 32), ("pix_stride", 24), ("src_pitch", 8), ("prec", 1)],
    "SYNC": [],
    "END": [],
    # The camera frame to the network input (issue 45), exactly :mod:`host.pre` (its module docstring, steps 1-6;
    # ``host.pre.pre_run`` is the reference every executor matches bit for bit). The frame (uint8, 3 channels per
    # pixel) and its geometry are per-frame registers the driver writes (:data:`PRE_REGISTERS`, ``host.pre.PreFrame``
    # from ``host.pre.pre_geometry``); the instruction holds what the compiler knows: the net_w x net_h network input,
    # of which it writes the band of rows y0 <= y < y0 + rows (``pre_run(..., y0, rows)``: those rows of the whole
    # run; rows = 0: nothing) as net pixel (y, x) channel k (k < 3, elem_bytes = 1 + prec) at
    #   DDR[base + ddr_offset + (y - y0)*row_stride + x*pix_stride + k*elem_bytes]
    # (ddr_offset: the band's first row, the compiler's multiply)
    # and the quantization ``q = clamp(((v * mult + 2^(shift-1)) >> shift) + zp)`` (host.pre.pre_quant: mult
    # unsigned, shift 1..63); output channel k takes frame channel 2 - k when ``model_bgr`` differs from the
    # frame_bgr register, else k. PRE finishes (its last write acknowledged) before the LOAD module's next
    # instruction starts. Checks (OUT_OF_RANGE): frame_w, frame_h in [1, 4096]; frame_pitch in [3*frame_w, 65535];
    # 1 <= pre_out_w <= net_w - pre_left, 1 <= pre_out_h <= net_h - pre_top; every frame byte read within
    # [0, frame_size) of the frame register, every byte written within its base register's size; net_w, net_h >= 1;
    # y0 + rows <= net_h; pix_stride >= 3 elem_bytes. (The compiler emits the whole input as one PRE, or bands of the next frame's input in the
    # LOAD module's idle time: generator/codegen/pre.py.)
    "PRE": [("base_reg", 2), ("ddr_offset", 32), ("row_stride", 32), ("pix_stride", 8), ("net_w", 13),
            ("net_h", 13), ("mult", 16), ("shift", 6), ("zp", 16), ("model_bgr", 1), ("prec", 1), ("y0", 13),
            ("rows", 13)],
}
SIGNED_FIELDS = {("POST", "zp_out"), ("POST", "zp_id"), ("COMPUTE", "za"), ("COMPUTE", "zb"), ("PRE", "zp")}


class IsaError(ValueError):
    """An instruction field is out of range, an opcode is unknown, or an encoded word is malformed."""


def _layout(op: str) -> list[tuple[str, int, int]]:
    out, pos = [], 0
    for name, width in HEADER + FORMATS[op]:
        out.append((name, pos, width))
        pos += width
    if pos > INSN_BITS:
        raise AssertionError(f"{op} format is {pos} bits, more than {INSN_BITS}")
    return out


LAYOUTS = {op: _layout(op) for op in FORMATS}


@dataclass
class Insn:
    """One decoded instruction: ``op`` (opcode name) and ``f`` (field name -> int, header flags included)."""
    op: str
    f: dict

    def __getattr__(self, k):
        try:
            return self.__dict__["f"][k]
        except KeyError:
            raise AttributeError(k) from None

    @property
    def module(self) -> str:
        """The module that executes it: "load", "compute" or "store"."""
        return MODULE_OF[self.op]


def make(op: str, **fields) -> Insn:
    """Build an instruction; unspecified fields are 0. Raises IsaError on unknown op/field or out-of-range value."""
    if op not in FORMATS:
        raise IsaError(f"unknown opcode {op!r}")
    names = {n for n, _, _ in LAYOUTS[op]}
    bad = set(fields) - names
    if bad:
        raise IsaError(f"{op}: unknown field(s) {sorted(bad)}")
    f = {n: 0 for n, _, _ in LAYOUTS[op]}
    f.update(fields)
    f["opcode"] = OPCODES[op]
    _check(op, f)
    return Insn(op, f)


def _check(op, f):
    for name, _, width in LAYOUTS[op]:
        v = int(f[name])
        if (op, name) in SIGNED_FIELDS:
            lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        else:
            lo, hi = 0, (1 << width) - 1
        if not lo <= v <= hi:
            raise IsaError(f"{op}.{name}={v} does not fit its {width}-bit field [{lo}, {hi}]")


def encode(insn: Insn) -> bytes:
    """Encode to ``INSN_BYTES`` little-endian bytes. Raises IsaError if a field does not fit."""
    _check(insn.op, insn.f)
    word = 0
    for name, pos, width in LAYOUTS[insn.op]:
        word |= (int(insn.f[name]) & ((1 << width) - 1)) << pos
    return word.to_bytes(INSN_BYTES, "little")


def decode(raw: bytes) -> Insn:
    """Decode ``INSN_BYTES`` bytes. Raises IsaError on a wrong length, an illegal opcode or non-zero unused bits."""
    if len(raw) != INSN_BYTES:
        raise IsaError(f"an instruction is {INSN_BYTES} bytes, got {len(raw)}")
    word = int.from_bytes(raw, "little")
    opcode = word & 0xF
    if opcode not in OPCODE_NAMES:
        raise IsaError(f"illegal opcode {opcode}")
    op = OPCODE_NAMES[opcode]
    f = {}
    used = 0
    for name, pos, width in LAYOUTS[op]:
        v = (word >> pos) & ((1 << width) - 1)
        if (op, name) in SIGNED_FIELDS and v >> (width - 1):
            v -= 1 << width
        f[name] = v
        used = pos + width
    if word >> used:
        raise IsaError(f"{op}: unused bits above bit {used} are not zero")
    return Insn(op, f)


def encode_program(insns: list[Insn]) -> bytes:
    """Concatenate encoded instructions (the instruction ROM / DDR image)."""
    return b"".join(encode(i) for i in insns)


def decode_program(blob: bytes) -> list[Insn]:
    """Split a program blob into instructions. Raises IsaError if its size is not a multiple of INSN_BYTES."""
    if len(blob) % INSN_BYTES:
        raise IsaError(f"program size {len(blob)} is not a multiple of {INSN_BYTES} bytes")
    return [decode(blob[i:i + INSN_BYTES]) for i in range(0, len(blob), INSN_BYTES)]


def disasm(insn: Insn, index: int | None = None) -> str:
    """One line of assembly, e.g. ``  12: LOAD   [pop_next] buf=IBUF bank=1 base_reg=ACT ddr_offset=0x1a0 ...``."""
    flags = [n for n in ("pop_prev", "pop_next", "push_prev", "push_next") if insn.f.get(n)]
    parts = []
    for name, _ in FORMATS[insn.op]:
        v = insn.f[name]
        if name == "buf":
            v = BUFFER_NAMES.get(v, v)
        elif name == "base_reg":
            v = BASE_REG_NAMES.get(v, v)
        elif name == "ddr_offset":
            v = hex(v)
        elif name == "prec":
            v = {0: "int8", 1: "int16"}.get(v, v)
        parts.append(f"{name}={v}")
    head = f"{index:6d}: " if index is not None else ""
    fl = f"[{','.join(flags)}] " if flags else ""
    return f"{head}{insn.op:<8}{fl}{' '.join(parts)}".rstrip()


def disasm_program(blob: bytes) -> str:
    """Disassemble a whole program blob, one instruction per line. Raises IsaError as :func:`disasm_stream`."""
    import io

    return "\n".join(disasm_stream(io.BytesIO(blob)))


def disasm_stream(f, limit: int = 0):
    """Yield one line (:func:`disasm`, with its index) per instruction read from the binary file object ``f``
    (``open(path, "rb")``, ``io.BytesIO``), one :data:`INSN_BYTES` read each, at most ``limit`` of them (0: to the
    end): only what is yielded is read. A word of zeros is a ``NOP``; the program's structure is not checked.
    Raises IsaError ``instruction K (byte offset B): <why>`` at the first word that does not decode or is cut
    short (the file's size not a multiple of INSN_BYTES)."""
    k = 0
    while not limit or k < limit:
        raw = f.read(INSN_BYTES)              # a buffered read returns INSN_BYTES bytes unless at the end
        if not raw:
            return
        try:
            if len(raw) < INSN_BYTES:
                raise IsaError(f"only {len(raw)} bytes left, not a whole {INSN_BYTES}-byte instruction")
            yield disasm(decode(raw), k)
        except IsaError as e:
            raise IsaError(f"instruction {k} (byte offset {k * INSN_BYTES}): {e}") from None
        k += 1


# ------------------------------------------------------------------------------------------ register map
#: AXI-Lite register map of the accelerator, that of a Vitis HLS ``ap_ctrl_hs`` block (UG1399, "S_AXILITE
#: control register map"): 0x00 control (bit 0 ap_start, 1 ap_done (clear on read), 2 ap_idle, 3 ap_ready,
#: 7 auto_restart), 0x04 GIE, 0x08 IER, 0x0C ISR (toggle on write), then the arguments in declaration order, a
#: 64-bit pointer as two 32-bit words (low, high) plus a reserved word, a 32-bit scalar as one word plus a reserved
#: word. Entries: (name, byte offset, bits, access). The HLS top function's arguments and the RTL's AXI-Lite
#: slave follow this table; the compiler writes it into every manifest so the PYNQ driver needs nothing else.
CTRL_BITS = {"ap_start": 0, "ap_done": 1, "ap_idle": 2, "ap_ready": 3, "auto_restart": 7}
REGISTERS = [
    ("CTRL", 0x00, 32, "rw"), ("GIE", 0x04, 32, "rw"), ("IER", 0x08, 32, "rw"), ("ISR", 0x0C, 32, "rw"),
    ("weights", 0x10, 64, "w"),    # base register WEIGHTS (byte address in DDR)
    ("act", 0x1C, 64, "w"),        # base register ACT
    ("input", 0x28, 64, "w"),      # base register INPUT
    ("output", 0x34, 64, "w"),     # base register OUTPUT
    ("insns", 0x40, 64, "w"),      # program in DDR (used when fetch_ddr = 1)
    ("n_insns", 0x4C, 32, "w"),    # instructions to run from DDR
    ("fetch_ddr", 0x54, 32, "w"),  # 0: run the instruction ROM baked into the bitstream, 1: fetch from DDR
    ("status", 0x5C, 32, "r"),     # 0 ok; STATUS bits below on error (the run stops, ap_done is raised)
    ("hw_info", 0x64, 32, "r"),    # ISA_VERSION | Tn << 8 | Tm << 16 | modes << 24 (host.registers.pack_hw_info)
    ("config_id", 0x6C, 32, "r"),  # the hardware configuration id (CONFIG instruction must match)
    ("cycles", 0x74, 32, "r"),     # cycles of the last run
    # bytes of the buffer behind each base register (the host's allocation): every LOAD / STORE byte must lie in
    # [base, base + size) of its base register, else OUT_OF_RANGE (a size of 0 refuses every access)
    ("weights_size", 0x7C, 32, "w"),
    ("act_size", 0x84, 32, "w"),
    ("input_size", 0x8C, 32, "w"),
    ("output_size", 0x94, 32, "w"),
    # PRE's frame (:data:`PRE_REGISTERS`): written by the driver per frame (host.pre.pre_geometry), read by PRE
    ("frame", 0x9C, 64, "w"),      # byte address of the frame's first pixel in DDR (any alignment)
    ("frame_size", 0xA8, 32, "w"),  # bytes of the frame's buffer from that address (PRE reads within it)
    ("frame_w", 0xB0, 32, "w"),     # pixels per frame row, 1..4096
    ("frame_h", 0xB8, 32, "w"),     # frame rows, 1..4096
    ("frame_pitch", 0xC0, 32, "w"),  # bytes from one frame row to the next, 3*frame_w..65535
    ("frame_bgr", 0xC8, 32, "w"),   # bit 0: the frame's pixels are B, G, R (0: R, G, B)
    ("pre_out_w", 0xD0, 32, "w"),   # PreGeometry.out_w: the resized frame's width in the network input
    ("pre_out_h", 0xD8, 32, "w"),   # PreGeometry.out_h
    ("pre_left", 0xE0, 32, "w"),    # PreGeometry.left: its first column
    ("pre_top", 0xE8, 32, "w"),     # PreGeometry.top: its first row
    ("pre_step_x", 0xF0, 32, "w"),  # PreGeometry.step_x: source columns per output column, unsigned Q12.20
    ("pre_step_y", 0xF8, 32, "w"),  # PreGeometry.step_y: source rows per output row, unsigned Q12.20
]
#: the per-frame registers PRE reads (host.pre.PreFrame's fields, in that order)
PRE_REGISTERS = PreFrame.REGISTERS
if [r[0] for r in REGISTERS[-len(PRE_REGISTERS):]] != list(PRE_REGISTERS):
    raise AssertionError("REGISTERS must end with host.pre.PreFrame.REGISTERS, in its order")


# ------------------------------------------------------------------------------------------ error status
from generator.spec.isa_status import (MODULE_FLAGS, STATUS_BITS, TOKEN_COUNT_BITS, TOKEN_QUEUE_DEPTH,  # noqa: E402
                                       WATCHDOG_CYCLES, partial_insn_status, status_names, status_of)

"""The int8 DSP packing of the PE array: two int8 activations share one DSP48E2 A port, one weight multiplies both,
and the low product occupies the low :data:`PACK_SHIFT` bits of the P output (signed). Both back ends (the HLS
kernel's ``config.h``, the RTL's ``pe_array.sv``) and the resource estimate use these numbers."""
from __future__ import annotations

#: int8 packing: the low product occupies bits [PACK_SHIFT-1:0] of the DSP48E2 P output (signed)
PACK_SHIFT = 18


def pack_group() -> int:
    """Packed int8 products (|x*w| <= 128*128) that can be summed in the DSP before the low lane's signed
    PACK_SHIFT-bit field could overflow into the high lane: the largest G with G * 2^14 <= 2^(PACK_SHIFT-1) - 1."""
    return ((1 << (PACK_SHIFT - 1)) - 1) // (128 * 128)

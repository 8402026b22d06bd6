"""The accelerator's identity and register-level contract, shared by the driver and the generator (which imports
it from here: the board runs ``host/`` without the generator). Pure Python.

* :data:`KERNEL_VLNV`: the VLNV of the HLS kernel's control IP (the HLS export and the block design use it);
  :func:`ip_vlnv` names the other exported tops the same way; :data:`RTL_KERNEL_VLNV` the RTL packaged as an IP;
  the driver binds either (:data:`ACCEL_VLNVS`).
* ``hw_info`` (read-only register): ``isa_version | Tn << 8 | Tm << 16 | modes << 24``, bit ``HW_INFO_MODES[p]``
  of ``modes`` set for each precision ``p`` the bitstream implements (:func:`pack_hw_info`, :func:`unpack_hw_info`).
* the base-address and size registers of each base register (:data:`BASE_ADDR_REGS`, :data:`SIZE_REGS`); offsets
  come with the manifest's register map.
"""
from __future__ import annotations

from .manifest import BASE_REGS

#: VLNV of the accelerator's control IP (Vitis HLS top function ``accel``; the RTL top stands in for it in simulation)
KERNEL_VLNV = "xilinx.com:hls:accel:1.0"
#: VLNV of the RTL packaged as a Vivado IP (``invoke build --kernel rtl``: rtl/accel_rtl.sv), same register map
RTL_KERNEL_VLNV = "yolofpga:rtl:accel_rtl:1.0"
#: every VLNV the driver binds (one accelerator per overlay)
ACCEL_VLNVS = (KERNEL_VLNV, RTL_KERNEL_VLNV)
#: precision mode bits of ``hw_info[31:24]`` (same numbering as the ``prec`` field of LOAD / COMPUTE / POST /
#: STORE; a manifest's ``hardware.precisions`` names the ones its program uses)
HW_INFO_MODES = {"int8": 0, "int16": 1}
#: register holding each base register's DDR address / its buffer's size in bytes
BASE_ADDR_REGS = {name: name.lower() for name in BASE_REGS}
SIZE_REGS = {name: f"{name.lower()}_size" for name in BASE_REGS}


def ip_vlnv(top: str) -> str:
    """The VLNV top function ``top`` is exported as (vendor, library and version of :data:`KERNEL_VLNV`)."""
    vendor, library, _, version = KERNEL_VLNV.split(":")
    return f"{vendor}:{library}:{top}:{version}"


def pack_hw_info(isa_version: int, tn: int, tm: int, precisions=tuple(HW_INFO_MODES)) -> int:
    """The 32-bit ``hw_info`` word: isa_version, Tn, Tm (8 bits each) and the mode bits of ``precisions``
    (names of :data:`HW_INFO_MODES`; default both). Raises KeyError for an unknown precision name."""
    modes = sum(1 << HW_INFO_MODES[p] for p in set(precisions))
    return isa_version | tn << 8 | tm << 16 | modes << 24


def unpack_hw_info(word: int) -> dict:
    """``hw_info`` -> {"isa_version", "tn", "tm" (ints), "precisions" (names of the set mode bits)}."""
    modes = word >> 24 & 0xFF
    return {"isa_version": word & 0xFF, "tn": word >> 8 & 0xFF, "tm": word >> 16 & 0xFF,
            "precisions": [p for p, b in HW_INFO_MODES.items() if modes >> b & 1]}


def status_bit_names(status: int, status_bits: dict) -> list[str]:
    """Names of the bits set in ``status`` ({name: bit} map of the manifest; unknown bits as ``bitN``)."""
    names = {v: k for k, v in status_bits.items()}
    return [names.get(b, f"bit{b}") for b in range(32) if status >> b & 1]

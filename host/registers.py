"""The accelerator's identity and register-level contract, shared by the driver and the generator (which imports
it from here: the board runs ``host/`` without the generator). Pure Python.

* :data:`KERNEL_VLNV`: the VLNV of the HLS kernel's control IP (the HLS export and the block design use it);
  :func:`ip_vlnv` names the other exported tops the same way; :data:`RTL_KERNEL_VLNV` the RTL packaged as an IP;
  the driver binds either (:data:`ACCEL_VLNVS`).
* ``hw_info`` (read-only register): ``isa_version | Tn << 8 | Tm << 16 | modes << 24``, bit ``HW_INFO_MODES[p]``
  of ``modes`` set for each precision ``p`` the bitstream implements (:func:`pack_hw_info`, :func:`unpack_hw_info`).
* the base-address and size registers of each base register (:data:`BASE_ADDR_REGS`, :data:`SIZE_REGS`); offsets
  come with the manifest's register map.
* how a bitstream's ``.hwh`` names the same registers (:func:`hwh_register_mismatches`): PYNQ's parser gives each
  IP's ``registers`` as Vivado wrote them in the hardware handoff, and the driver checks the manifest's map against
  them before any access.
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


#: the ap_ctrl_hs registers as a Vitis HLS IP's .hwh names them (a real one: pynqmetadata's tests/hwhs/resizer.hwh,
#: Vivado HLS 2019.2: CTRL, GIER, IP_IER, IP_ISR at 0x0, 0x4, 0x8, 0xC) against the manifest's names; the RTL IP's
#: package_ip.tcl names them as the manifest does, so both are accepted
HWH_ALIASES = {"GIE": "GIER", "IER": "IP_IER", "ISR": "IP_ISR"}
#: bit of IER / ISR the driver enables and clears for ap_done, and the field that bit is in the .hwh (channel 0)
IER_AP_DONE_BIT = 0
HWH_IER_AP_DONE = {"IP_IER": "CHAN0_INT_EN", "IP_ISR": "CHAN0_INT_ST"}


def _hwh_layouts(name: str, offset: int, bits: int) -> list[list[tuple]]:
    """The ways a .hwh may describe manifest register ``name``: each a list of (hwh name, byte offset, bits). A 64-bit
    register is one 64-bit register (the RTL IP's ``ipx::add_register``) or two 32-bit words ``<name>_1`` (low) and
    ``<name>_2`` (high), as Vitis HLS splits a 64-bit s_axilite argument ("Data signal of <name>", UG1399)."""
    names = [name] + ([HWH_ALIASES[name]] if name in HWH_ALIASES else [])
    ways = [[(n, offset, bits)] for n in names]
    if bits == 64:
        ways.append([(f"{name}_1", offset, 32), (f"{name}_2", offset + 4, 32)])
    return ways


def hwh_register_mismatches(registers: dict, ctrl_bits: dict, hwh_registers: dict) -> list[str]:
    """Where the manifest's register map and the IP's registers as PYNQ parsed them from the .hwh disagree.

    Args:
        registers: {name: (byte offset, bits)} (the manifest's map: names of :data:`generator.spec.isa.REGISTERS`).
        ctrl_bits: {ap_start | ap_done | ap_idle | ap_ready | auto_restart: bit of CTRL}.
        hwh_registers: the IP's ``ip_dict[...]["registers"]``: {name: {"address_offset": int, "size": bits,
            "fields": {name: {"bit_offset": int, ...}}, ...}} (PYNQ 3.x / 4.0, pynqmetadata).
    Returns:
        one phrase per disagreement (empty: the maps agree): a manifest register the .hwh does not have under any
        of its names (:func:`_hwh_layouts`), one at another offset or width, a CTRL field (``AP_DONE``...) at
        another bit, the ap_done channel of IP_IER / IP_ISR not at :data:`IER_AP_DONE_BIT`. Registers only the
        .hwh has (reserved words, an output's ``<name>_ctrl``) are not compared.
    """
    out = []
    hw = {n: (int(r["address_offset"]), int(r["size"])) for n, r in hwh_registers.items()}
    for name, (offset, bits) in registers.items():
        ways = _hwh_layouts(name, int(offset), int(bits))
        present = [w for w in ways if all(n in hw for n, _, _ in w)]
        if not present:
            out.append(f"register {name} ({bits} bit at {offset:#x}) is not in the .hwh (looked for "
                       f"{' / '.join('+'.join(n for n, _, _ in w) for w in ways)})")
        elif not any(all(hw[n] == (o, b) for n, o, b in w) for w in present):
            got = ", ".join(f"{n} {hw[n][1]} bit at {hw[n][0]:#x}" for n, _, _ in present[0])
            out.append(f"register {name}: manifest {bits} bit at {offset:#x}, .hwh {got}")
    fields = {k.lower(): int(f["bit_offset"]) for k, f in hwh_registers.get("CTRL", {}).get("fields", {}).items()}
    for name, bit in ctrl_bits.items():
        if name in fields and fields[name] != bit:
            out.append(f"CTRL bit {name}: manifest bit {bit}, .hwh bit {fields[name]}")
    for reg, field in HWH_IER_AP_DONE.items():
        f = hwh_registers.get(reg, {}).get("fields", {}).get(field)
        if f is not None and int(f["bit_offset"]) != IER_AP_DONE_BIT:
            out.append(f"{reg}.{field} (ap_done): the driver uses bit {IER_AP_DONE_BIT}, .hwh bit {f['bit_offset']}")
    return out


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

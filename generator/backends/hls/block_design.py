"""The Vivado block design of the HLS kernel (what ``vivado_bd.tcl`` instantiates besides the PS and the five HLS
IPs of :data:`generator.backends.hls.kernel.TOPS`): one ``axis_data_fifo`` per stream of
:data:`generator.spec.memories.BD_STREAMS` and one ``accel_ram`` cell (``hls_templates/bd/accel_ram.v``) per buffer
memory, each memory's primitive the architecture's storage binding (:mod:`generator.spec.memories`), its two ports
shared by the HLS IPs' memory ports as the kernel's memory plan states (:data:`BD_MEMORY_PORTS`)."""
from __future__ import annotations

import math

from generator.spec import memories
from generator.spec.board import Board

#: Who uses each port of a buffer memory: (name, kernel array, producer IP, consumer IPs, port A's users, port B's
#: users). A user is (IP, its Vitis HLS memory port suffix, required); the first user found takes the memory's port
#: (``BRAM_A`` / ``BRAM_B`` of accel_ram.v) and wins it whenever it writes, a second one shares it (``BRAM_D`` on port
#: A, ``BRAM_C`` on port B) and has it when the first does not write and the second is enabled. Vitis HLS names an
#: IP's bram interfaces ``<array>_PORTA`` / ``<array>_PORTB``; whether a ``ram_t2p`` array gets its PORTB is the
#: tool's choice (storage type and schedule), so a PORTB user is optional: the Tcl connects it only when the IP has
#: the port and says so, else the memory's port is left to the other user (or unused).
#: IBUF (one memory per bank and lane): LOAD writes (ram_1p, at most once per lane memory and cycle) port A, which
#: COMPUTE's PORTA shares; COMPUTE's PORTB (ram_t2p: the int8 pixel pair, two reads a cycle) has port B; the l2c / c2l
#: tokens keep LOAD and COMPUTE on different banks. ACC: COMPUTE reads and writes both ports, the post IP reads
#: (ram_1p) through port B, the c2s / s2c tokens keep it off COMPUTE's bank. The rest: producer on A, consumer on B.
BD_MEMORY_PORTS = [
    ("IBUF", "ibuf", "accel_load", ["accel_compute"],
     [("accel_load", "PORTA", 1), ("accel_compute", "PORTA", 1)], [("accel_compute", "PORTB", 0)]),
    ("WBUF", "wbuf", "accel_load", ["accel_compute"], [("accel_load", "PORTA", 1)], [("accel_compute", "PORTA", 1)]),
    ("ACC", "acc", "accel_compute", ["accel_compute", "accel_post"], [("accel_compute", "PORTA", 1)],
     [("accel_compute", "PORTB", 0), ("accel_post", "PORTA", 1)]),
    ("OBUF", "obuf", "accel_post", ["accel_store"], [("accel_post", "PORTA", 1)], [("accel_store", "PORTA", 1)]),
    ("PBUF", "pbuf", "accel_load", ["accel_post"], [("accel_load", "PORTA", 1)], [("accel_post", "PORTA", 1)]),
    ("TBUF", "tbuf", "accel_load", ["accel_post"], [("accel_load", "PORTA", 1)], [("accel_post", "PORTA", 1)])]
#: address bits of the Zynq UltraScale+ PS's S_AXI_HPn_FPD slave ports (zynq_ultra_ps_e ``saxigpN_araddr[48:0]``): the
#: width accel_hp.v's master ports take (PS_AW), the splitter's own AW being arch.AXI_ADDR_BITS (all of DDR, UG1085)
PS_HP_ADDR_BITS = 49
#: storage binding -> xpm MEMORY_PRIMITIVE
XPM_PRIMITIVE = {"bram": "block", "uram": "ultra", "lutram": "distributed"}


def _streams() -> list[dict]:
    streams = []
    for name, src, sp, dst, dp, depth, bits in memories.BD_STREAMS:
        fd = memories.fifo_depth(depth)
        streams.append(dict(name=name, src=src, src_port=sp, dst=dst, dst_port=dp, depth=depth, fifo_depth=fd,
                            bits=bits, memory_type="distributed" if fd <= memories.LUTRAM_MAX_DEPTH else "block"))
    return streams


def _ports(name: str, var: str, tn: int, tm: int, ol: int) -> list[str]:
    """The memory port names (one accel_ram each) of buffer ``name`` (kernel array ``var``): Vitis HLS names a
    partitioned array's memory ports ``<array>_<index>...``: per bank (ACC), per bank and row (WBUF), per bank and
    lane (IBUF: ``ibuf_<bank>_<lane>``), per lane (OBUF's ``ol`` lanes, PBUF, TBUF: ``pbuf_<m>`` is lane m's
    memory)."""
    if name == "WBUF":
        return [f"{var}_{b}_{r}" for b in range(2) for r in range(tm)]
    if name == "IBUF":
        return [f"{var}_{b}_{j}" for b in range(2) for j in range(tn)]
    if name == "OBUF":
        return [f"{var}_{r}" for r in range(ol)]
    if name in ("PBUF", "TBUF"):
        return [f"{var}_{r}" for r in range(tm)]
    return [f"{var}_{b}" for b in range(2)]


def block_design(board: Board, rom_insns: int = 0) -> dict:
    """What ``vivado_bd.tcl`` instantiates besides the PS and the five HLS IPs, and what the resource estimate
    (:mod:`generator.estimate.hls_resources`) counts:
    ``streams``: [{name, src, src_port, dst, dst_port, depth (the kernel's), fifo_depth (axis_data_fifo
    FIFO_DEPTH), bits, memory_type (block / distributed)}]; ``memories``: [{name, var, ports (one per memory:
    bank of ACC, bank and lane of IBUF, bank and row of WBUF, lane of OBUF, PBUF and TBUF), depth (words), width (bits), impl, addr_lsb (log2 of the
    bytes between words on the HLS bram port's byte address), primitive (xpm MEMORY_PRIMITIVE), producer, consumers,
    tdp (1: true dual port, both ports read and write: IBUF, ACC), users_a / users_b (port A's / port B's users
    in priority order, each {ip, port (HLS suffix PORTA / PORTB), required (0 / 1)}, :data:`BD_MEMORY_PORTS`)}];
    ``ps_addr_bits``: :data:`PS_HP_ADDR_BITS`."""
    by = {m.name: m for m in memories.bound_kernel_memories(board, rom_insns)}
    mems = []
    for name, var, prod, cons, on_a, on_b in BD_MEMORY_PORTS:
        m = by[name]
        ports = _ports(name, var, board.accelerator.tn, board.accelerator.tm, by["OBUF"].count)
        assert len(ports) == m.count
        mems.append(dict(name=name, var=var, ports=ports, depth=m.depth, width=m.width, impl=m.impl,
                         addr_lsb=max(0, math.ceil(math.log2(m.width / 8))),
                         primitive=XPM_PRIMITIVE[m.impl], producer=prod, consumers=cons, tdp=int(m.tdp),
                         users_a=[dict(ip=ip, port=p, required=r) for ip, p, r in on_a],
                         users_b=[dict(ip=ip, port=p, required=r) for ip, p, r in on_b]))
    return {"streams": _streams(), "memories": mems, "ps_addr_bits": PS_HP_ADDR_BITS}

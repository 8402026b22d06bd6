"""The Vivado block design of the HLS kernel (what ``vivado_bd.tcl`` instantiates besides the PS and the five HLS
IPs of :data:`generator.backends.hls.kernel.TOPS`): one ``axis_data_fifo`` per stream of
:data:`generator.spec.memories.BD_STREAMS` and one ``accel_ram`` cell (``hls_templates/bd/accel_ram.v``) per buffer
memory, each memory's primitive the architecture's storage binding (:mod:`generator.spec.memories`)."""
from __future__ import annotations

import math

from generator.spec import memories
from generator.spec.board import Board

#: the block design's memories: (name, kernel array, producer IP, consumer IPs); ACC's port B is shared by the
#: compute IP (accumulation reads) and the post IP (POST reads), which never read one bank at the same time
#: (the c2s / s2c tokens hand a bank over), so one accel_ram port B serves both
BD_MEMORY_PORTS = [("IBUF", "ibuf", "accel_load", ["accel_compute"]),
                   ("WBUF", "wbuf", "accel_load", ["accel_compute"]),
                   ("ACC", "acc", "accel_compute", ["accel_compute", "accel_post"]),
                   ("OBUF", "obuf", "accel_post", ["accel_store"]),
                   ("PBUF", "pbuf", "accel_load", ["accel_post"]),
                   ("TBUF", "tbuf", "accel_load", ["accel_post"])]
#: storage binding -> xpm MEMORY_PRIMITIVE
XPM_PRIMITIVE = {"bram": "block", "uram": "ultra", "lutram": "distributed"}


def _streams() -> list[dict]:
    streams = []
    for name, src, sp, dst, dp, depth, bits in memories.BD_STREAMS:
        fd = memories.fifo_depth(depth)
        streams.append(dict(name=name, src=src, src_port=sp, dst=dst, dst_port=dp, depth=depth, fifo_depth=fd,
                            bits=bits, memory_type="distributed" if fd <= memories.LUTRAM_MAX_DEPTH else "block"))
    return streams


def block_design(board: Board, rom_insns: int = 0) -> dict:
    """What ``vivado_bd.tcl`` instantiates besides the PS and the five HLS IPs, and what the resource estimate
    (:mod:`generator.estimate.hls_resources`) counts:
    ``streams``: [{name, src, src_port, dst, dst_port, depth (the kernel's), fifo_depth (axis_data_fifo
    FIFO_DEPTH), bits, memory_type (block / distributed)}]; ``memories``: [{name, var, ports (one per memory:
    bank, and row of WBUF / lane of OBUF, PBUF and TBUF), depth, width, impl, addr_lsb (log2 of the bytes between words on the
    HLS bram port's byte address), primitive (xpm MEMORY_PRIMITIVE), producer, consumers, tdp (1: true dual port,
    the producer reads and writes on both ports: ACC)}]."""
    by = {m.name: m for m in memories.bound_kernel_memories(board, rom_insns)}
    a = board.accelerator
    mems = []
    for name, var, prod, cons in BD_MEMORY_PORTS:
        m = by[name]
        if name == "WBUF":
            ports = [f"{var}_{b}_{r}" for b in range(2) for r in range(a.tm)]
        elif name in ("OBUF", "PBUF", "TBUF"):
            ports = [f"{var}_{r}" for r in range(a.tm)]
        else:
            ports = [f"{var}_{b}" for b in range(2)]
        assert len(ports) == m.count
        mems.append(dict(name=name, var=var, ports=ports, depth=m.depth, width=m.width, impl=m.impl,
                         addr_lsb=max(0, math.ceil(math.log2(m.width / 8))),
                         primitive=XPM_PRIMITIVE[m.impl], producer=prod, consumers=cons, tdp=int(m.tdp)))
    return {"streams": _streams(), "memories": mems}

"""HLS back end, rendering: the Vitis HLS kernel's glue (C++ headers and tops, instruction ROM, C-simulation
testbench, Tcl scripts) from the Jinja templates of ``hls_templates/``, next to a copy of the static kernel
(``hls_templates/kernel/*.h``) and the block design's buffer memory (``hls_templates/bd/accel_ram.v``). Compiling
and running the C-simulation is an executor: :mod:`generator.exec.csim`.

Nothing is typed twice: ``isa.h`` is generated from :mod:`generator.spec.isa` (opcodes, every field's bit position and
width, PARAM_RECORD offsets, STATUS bits, TOKEN_QUEUE_DEPTH, the AXI-Lite register map), ``config.h`` from the board
file through the shared render context (:mod:`generator.backends.context`: Tn, Tm, buffer depths of both
precisions, AXI width, CONFIG id) plus the clock and the DSP packing (:mod:`generator.spec.arch`), and the top
function's argument list from :data:`generator.spec.isa.REGISTERS`.

Structure (``hls_templates/kernel/accel_kernel.h``, after TVM-VTA): five top functions, each exported as its own IP by
``run_hls.tcl`` (:data:`TOPS`): ``accel`` (fetch + control: the ``ap_ctrl_hs`` block the host starts, the
:data:`generator.spec.isa.REGISTERS` map, m_axi on ``insns`` only) dispatches every instruction to the command queue of
its module and sends each run's base registers and sizes to load and store; ``accel_load``, ``accel_compute``,
``accel_store`` and ``accel_post`` are free-running (``ap_ctrl_none``, one instruction per invocation), load and
store each with its own m_axi port (load reads, and writes the network input for PRE; store writes; absolute
addresses; PRE's frame registers reach the load module in the run descriptor), synchronised by the four
dependency-token streams of depth :data:`generator.spec.isa.TOKEN_QUEUE_DEPTH`. The store IP hands each POST to the
post IP (``post_q``) and runs the STOREs after it while the POST still writes OBUF, taking a STORE segment only once
the post IP has reported its OBUF words written (``p2s``, as the RTL's rtl/post.sv beside rtl/store.sv).
IBUF/WBUF (load -> compute), PBUF/TBUF (load -> post), ACC (compute -> post) and OBUF (post -> store) are memory
ports with one writer and one reader module. No DATAFLOW region is left.
Every hot loop is written so that each physical memory sees at most its ports' accesses per iteration, with the
bank or lane of a partitioned dimension a constant after unrolling (the rule checker's port analysis,
:mod:`generator.backends.hls.lint`, proves it): IBUF is one true-dual-port memory per bank and lane (as
``rtl/buffers.sv``; LOAD writes each at most once per cycle, COMPUTE reads two rows of it: the int8 pixel pair, the
bypass's two channel rows); LOAD rotates each beat into lane order (IBUF lanes, WBUF lane groups, PBUF / TBUF lanes
with the raw 16-byte records), STORE reads each OBUF lane once and rotates the lanes into the beat; the lane
dimension of WBUF and ACC is ``ARRAY_RESHAPE``d (one word of Tn or Tm lanes per bank and row). So the block design
(``vivado_bd.tcl``, :func:`generator.backends.hls.block_design.block_design`) holds one RAM per bank and lane of
IBUF, per bank and row of WBUF, per bank of ACC, per lane of OBUF, PBUF and TBUF, and one ``axis_data_fifo`` per
stream at the kernel's depth. Streams are accessed with blocking calls only; LOAD and STORE move DDR data in manual
bursts (``hls::burst_maxi``: one request per segment; ``hls_templates/kernel/accel_maxi.h`` models it in
C-simulation). C-simulation is otherwise unaffected (the pragmas do not change the C++ arrays).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from host.fileio import atomic_path, atomic_write
from generator import ROOT_DIR
from generator.backends.context import shared_context
from generator.backends.hls.block_design import block_design
from generator.spec import isa, memories
from generator.spec.board import Board
from generator.spec.arch import (AXI_ADDR_BITS, CMD_QUEUE_DEPTH, HP_SPLIT_FIFO_WORDS, HP_SPLIT_OUTSTANDING,
                                 PACK_GROUP, PACK_SHIFT, pe_chain, POST_MSG_DEPTH, POST_MSG_WORDS, POST_QUEUE_DEPTH,
                                 RUN_QUEUE_DEPTH)
from host.registers import HW_INFO_MODES, KERNEL_VLNV

TEMPLATES_DIR = ROOT_DIR / "hls_templates"
#: the rendered glue (each from ``<name>.j2`` of hls_templates/)
KERNEL_FILES = ["isa.h", "config.h", "accel.h", "accel.cpp", "insn_rom.h", "tb.cpp", "run_hls.tcl",
                "vivado_bd.tcl"]
#: the static kernel (hls_templates/kernel/): copied next to the rendered glue, compiled as is
KERNEL_DIR = TEMPLATES_DIR / "kernel"     # the static C++ of the kernel (compiles without rendering)
#: the kernel proper: accel_kernel.h (shared definitions, the modules' state and instruction handlers) and the
#: parts it includes, one per module's operations (each file's functions are what the rule checker checks in it)
KERNEL_HEADERS = ["accel_kernel.h", "accel_kernel_base.h", "accel_kernel_pre.h", "accel_kernel_pre_exec.h",
                  "accel_kernel_load.h", "accel_kernel_compute.h", "accel_kernel_post.h", "accel_kernel_store.h",
                  "accel_kernel_fetch.h"]
STATIC_FILES = ["accel_stream.h", "accel_maxi.h", *KERNEL_HEADERS, "accel_csim.h"]
#: the block design's modules (hls_templates/bd/), module references of vivado_bd.tcl: the buffer memory and, on a
#: board with two HP ports, the modules' DDR path over both (accel_hp.v around the RTL's burst splitter)
BD_DIR = TEMPLATES_DIR / "bd"
BD_FILES = ["accel_ram.v", "accel_hp.v"]
#: the RTL sources accel_hp.v instantiates (rtl/; none imports the rendered accel_pkg)
RTL_DIR = ROOT_DIR / "rtl"
BD_RTL_FILES = ["sync_fifo.sv", "hp_seq.sv", "axi_hp_split.sv", "axi_wr_arb.sv"]
#: m_axi depths (AXI beats) of a kernel rendered without a program's layout (co-simulation needs port_depths)
DEFAULT_PORT_DEPTHS = {"insns": 65536, "load": 1 << 20, "store": 1 << 20}
#: the top function's name (also the Vitis HLS top)
TOP = "accel"
#: the five top functions, each exported as its own IP (VLNV host.registers.ip_vlnv(name)); the first, the fetch /
#: control block with the isa.REGISTERS map, is host.registers.KERNEL_VLNV (the IP host/driver.py binds)
TOPS = [(TOP, "fetch + control (ap_ctrl_hs, s_axilite, m_axi insns)"),
        (TOP + "_load", "LOAD, PRE (ap_ctrl_none, m_axi read (PRE: read + write), IBUF/WBUF/PBUF write ports)"),
        (TOP + "_compute", "COMPUTE (ap_ctrl_none, IBUF/WBUF read, ACC read-write ports: true dual port)"),
        (TOP + "_store", "STORE, END; hands POSTs to the post IP (ap_ctrl_none, m_axi write, OBUF read ports)"),
        (TOP + "_post", "POST (ap_ctrl_none, ACC/PBUF/TBUF read ports, OBUF write ports)")]
#: where vivado_bd.tcl copies the overlay (.bit + .hwh) by default: overlay/<board>/
OVERLAY_ROOT = ROOT_DIR / "overlay"
#: Vitis HLS runs csim in <project>/<solution>/csim/build, four levels below the rendered folder
CSIM_BUILD_TO_SRC = "../../../../"


class HlsError(RuntimeError):
    """Rendering, compiling (including any g++ warning in our code) or running the C-simulation failed."""


def port_depths(prog, bases: dict, blob_beats: int | None = None, frame=None) -> dict:
    """The depth (AXI beats) of each m_axi port for a co-simulation of ``prog`` (a
    :class:`generator.codegen.program.Program`, or anything with its ``insns`` / ``layout.sizes`` / ``hw`` /
    ``blob``) at base addresses ``bases`` (byte offsets into one image, as
    :func:`generator.exec.runtime.build_ddr` lays them out): ``insns`` the program's beats, ``store`` up to the end
    of the last region (base + size of its base register) that a STORE writes, ``load`` up to the end of the last
    region a LOAD reads or a PRE writes (PRE runs on the load module's port, accel_kernel_pre_exec.h) and of the
    frame PRE reads (``frame``: PRE's registers, :class:`host.pre.PreFrame`, ``addr`` a byte offset into the image,
    ``size`` its bytes), since the modules' ports address from 0 (offset=off); a PRE of no rows touches nothing.

    Raises HlsError for a program with a PRE of rows > 0 and no ``frame`` (the frame's bytes would lie outside the
    load port's depth: the co-simulation would not read them)."""
    axi = prog.hw.axi_bytes
    sizes = prog.layout.sizes

    def end(ops, extra=()):
        regs = {isa.BASE_REG_NAMES[i.f["base_reg"]] for i in prog.insns
                if i.op in ops and (i.op != "PRE" or i.f["rows"] > 0)}
        return max([int(bases[r]) + int(sizes[r]) for r in regs] + list(extra) or [axi])
    pre = any(i.op == "PRE" and i.f["rows"] > 0 for i in prog.insns)
    if pre and frame is None:
        raise HlsError("a co-simulation of a program with PRE needs its frame registers (frame=host.pre.PreFrame): "
                       "the load port's depth must cover the frame")
    frame_end = [int(frame.addr) + int(frame.size)] if pre else []
    beats = blob_beats if blob_beats is not None else -(-len(prog.blob) // axi)
    return {"insns": max(1, beats), "load": -(-end(("LOAD", "PRE"), frame_end) // axi),
            "store": -(-end(("STORE",)) // axi)}


def vitis_csim_argv(bases: dict, sizes: dict | None = None, frame=None) -> str:
    """The testbench arguments run_hls.tcl passes to Vitis HLS's csim: ``ddr_in.bin`` / ``ddr_out.bin`` of the
    rendered folder, the base addresses ``bases`` (bytes), ROM mode (no instruction address, count or DDR fetch);
    then, with ``sizes`` or ``frame``, each base register's buffer bytes (``-``: to the image's end) and PRE's
    registers (``frame``: :class:`host.pre.PreFrame`, as :func:`generator.exec.csim.run_csim` passes them)."""
    rel = CSIM_BUILD_TO_SRC
    args = [rel + "ddr_in.bin", rel + "ddr_out.bin"] + [str(int(bases[k])) for k in isa.BASE_REGS] + ["0", "0", "0"]
    if sizes is not None or frame is not None:
        args += [str(int(sizes[k])) if sizes is not None else "-" for k in isa.BASE_REGS]
    if frame is not None:
        regs = frame.registers()
        args += [str(int(regs[k])) for k in isa.PRE_REGISTERS]
    return " ".join(args)


def _env() -> Environment:
    return Environment(loader=FileSystemLoader(str(TEMPLATES_DIR)), undefined=StrictUndefined,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def isa_context() -> dict:
    """The HLS entries of ``isa.h`` beyond the shared ISA tables, all taken from :mod:`generator.spec.isa`: the
    instruction formats with their fields, the parameter record, the register map (``pre_regs``: PRE's per-frame
    registers, :data:`generator.spec.isa.PRE_REGISTERS`, carried to the load module in the run descriptor), the
    module of each opcode."""
    formats = []
    for op in isa.FORMATS:
        lay = isa.LAYOUTS[op]
        used = lay[-1][1] + lay[-1][2]
        formats.append(dict(op=op, code=isa.OPCODES[op], used=used,
                            fields=[dict(name=n, lo=p, w=w, signed=(op, n) in isa.SIGNED_FIELDS) for n, p, w in lay]))
    params = [dict(name=n, offset=o, bytes=np.dtype(t).itemsize, signed=np.dtype(t).kind == "i")
              for n, t, o in isa.PARAM_RECORD]
    regs = [dict(name=n, offset=o, bits=b, access=a) for n, o, b, a in isa.REGISTERS]
    pre_regs = [r for r in regs if r["name"] in isa.PRE_REGISTERS]
    return dict(pre_regs=pre_regs, insn_bytes=isa.INSN_BYTES, insn_log2_bits=isa.INSN_BITS.bit_length() - 1,
                module_of=isa.MODULE_OF, formats=formats, base_regs=isa.BASE_REGS, params=params,
                mult_bits=isa.MULT_BITS, max_shift=isa.MAX_SHIFT,
                requant_operand_bits=isa.REQUANT_OPERAND_BITS, hw_info_modes=HW_INFO_MODES, registers=regs)


def config_context(board: Board) -> dict:
    """The HLS entries of ``config.h`` beyond the shared accelerator entries: part, clock, AXI bytes, DSP packing,
    OBUF's words per row (:func:`generator.spec.memories.hls_obuf_k`). Raises HlsError when that is not a power of
    two."""
    axi_bytes = board.accelerator.axi_data_width_bits // 8
    try:
        obuf_k = memories.hls_obuf_k(board.accelerator.tm, axi_bytes)
    except ValueError as e:
        raise HlsError(f"board {board.name}: {e}") from None
    return dict(obuf_k=obuf_k, log2_obuf_k=obuf_k.bit_length() - 1, part=board.part, clock_mhz=board.pl_clock_mhz, clock_ns=round(1000.0 / board.pl_clock_mhz, 4),
                axi_bytes=axi_bytes, axi_log2=int(math.log2(axi_bytes)), pack_group=PACK_GROUP,
                pack_shift=PACK_SHIFT, pe_chain=pe_chain(board.accelerator.tn))


def rom_words(blob: bytes | None) -> list[str]:
    """Instruction ROM contents: one 64-hex-digit string per 256-bit instruction (little-endian blob)."""
    if not blob:
        return []
    if len(blob) % isa.INSN_BYTES:
        raise HlsError(f"program size {len(blob)} is not a multiple of {isa.INSN_BYTES} bytes")
    return [f"{int.from_bytes(blob[i:i + isa.INSN_BYTES], 'little'):064x}" for i in range(0, len(blob), isa.INSN_BYTES)]


def kernel_context(board: Board, rom: list[str], csim_argv: str = "", export_dir: str = "ip",
                   overlay_dir: str | Path | None = None, jobs: int = 4, port_depths: dict | None = None) -> dict:
    """Every template variable of the kernel's glue: the shared context of ``board``
    (:func:`generator.backends.context.shared_context`), :func:`isa_context`, :func:`config_context` and the
    build's own entries (ROM words ``rom``, top names, IP identity, overlay, storage binding, block design, queue
    depths, m_axi depths; arguments as in :func:`render`). Raises HlsError for four HP ports (the block design's
    DDR path, hls_templates/bd/accel_hp.v, is one burst splitter: one or two ports)."""
    if board.accelerator.hp_ports > 2:
        raise HlsError(f"board {board.name}: accelerator.hp_ports {board.accelerator.hp_ports}: the HLS kernel's "
                       "block design takes one or two HP ports (hls_templates/bd/accel_hp.v); four are RTL only "
                       "(rtl/axi_hp_ports.sv)")
    isa_ctx = isa_context()
    vendor, library, _, version = KERNEL_VLNV.split(":")
    return dict(shared_context(board), **isa_ctx, **config_context(board), top=TOP, rom=rom,
                args=[r for r in isa_ctx["registers"] if r["offset"] >= 0x10],
                csim_argv=csim_argv, export_dir=export_dir, vlnv=KERNEL_VLNV, ip_vendor=vendor,
                ip_library=library, ip_version=version, board_part=board.vivado_board_part or "",
                overlay_dir=str(overlay_dir or OVERLAY_ROOT / board.name), overlay_name=f"yolofpga_{board.name}",
                jobs=int(jobs), storage=memories.storage_binding(board, len(rom)),
                bd=block_design(board, len(rom)), cmd_queue_depth=CMD_QUEUE_DEPTH,
                run_queue_depth=RUN_QUEUE_DEPTH, post_queue_depth=POST_QUEUE_DEPTH, post_msg_depth=POST_MSG_DEPTH,
                post_msg_words=POST_MSG_WORDS, tops=[dict(name=n, role=r) for n, r in TOPS],
                depths=dict(DEFAULT_PORT_DEPTHS, **(port_depths or {})), cosim=bool(port_depths),
                hp_ports=board.accelerator.hp_ports, hp_addr_bits=AXI_ADDR_BITS, hp_outst=HP_SPLIT_OUTSTANDING, hp_fdepth=HP_SPLIT_FIFO_WORDS,
                bd_rtl_files=BD_RTL_FILES)


def render(board: Board, out_dir: str | Path, program: bytes | None = None, csim_argv: str = "",
           export_dir: str = "ip", overlay_dir: str | Path | None = None, jobs: int = 4,
           port_depths: dict | None = None) -> dict:
    """Render the kernel for ``board`` into ``out_dir``: the static kernel (:data:`STATIC_FILES` of
    ``hls_templates/kernel/``) and the glue: isa.h, config.h, accel.h, accel.cpp (the five tops and their interface
    pragmas), insn_rom.h (``program``, an encoded instruction blob, or an empty ROM), tb.cpp, run_hls.tcl (Vitis
    HLS: part and clock of the board; csim with ``csim_argv``, the testbench's arguments, if given; csynth;
    optional cosim; each top of :data:`TOPS` exported as its own IP, ``xilinx.com:hls:<top>:1.0``, to
    ``export_dir``, relative to ``out_dir``; ``accel`` is :data:`host.registers.KERNEL_VLNV`), accel_ram.v (the
    block design's buffer memory), accel_hp.v with :data:`BD_RTL_FILES` (the DDR path over two HP ports) and
    vivado_bd.tcl (the Vivado block design: the five IPs, their stream FIFOs and buffer memories,
    :func:`generator.backends.hls.block_design.block_design`; bitstream and hardware handoff copied to
    ``overlay_dir`` as ``yolofpga_<board>.bit`` / ``.hwh``, default ``overlay/<board>/``; ``jobs`` parallel Vivado
    runs). ``port_depths``: {"insns", "load", "store"} m_axi depths in AXI beats for a co-simulation build
    (:func:`port_depths`; also selects the testbench's separate buffers in run_hls.tcl), default
    :data:`DEFAULT_PORT_DEPTHS`.
    Returns {file name: Path}.

    Raises HlsError for a malformed program blob; jinja2.UndefinedError for a template typo (StrictUndefined). Whether
    the configuration fits the part is the build flow's check before it renders
    (:func:`generator.estimate.hls_resources.check`)."""
    out = Path(out_dir)
    rom = rom_words(program)
    out.mkdir(parents=True, exist_ok=True)
    ctx = kernel_context(board, rom, csim_argv, export_dir, overlay_dir, jobs, port_depths)
    env = _env()
    paths = {}
    for d, files in ((KERNEL_DIR, STATIC_FILES), (BD_DIR, BD_FILES), (RTL_DIR, BD_RTL_FILES)):
        for name in files:
            p = out / name
            atomic_write(p, (d / name).read_text())
            paths[name] = p
    for name in KERNEL_FILES:
        text = env.get_template(name + ".j2").render(**ctx)
        p = out / name
        atomic_write(p, text)
        paths[name] = p
    return paths


def render_cosim(board: Board, prog, ddr: np.ndarray, bases: dict, out_dir: str | Path, sizes: dict | None = None,
                 frame=None) -> dict:
    """Render the co-simulation build of ``prog`` (meant for the TINY single-layer program, or a PRE program): the
    program in the ROM, every m_axi port's ``depth=`` from the program's region sizes and PRE's frame
    (:func:`port_depths`), a testbench with a separate buffer per m_axi port (ACCEL_TB_SEPARATE_PORTS),
    ``ddr_in.bin`` and the csim / cosim arguments in run_hls.tcl (``ACCEL_COSIM=1 vitis_hls -f run_hls.tcl``; with
    ``sizes`` the base registers' buffer bytes, with ``frame`` PRE's registers, :func:`vitis_csim_argv`). Returns
    :func:`render`'s paths plus "depths". Raises HlsError as :func:`port_depths`."""
    out = Path(out_dir)
    depths = port_depths(prog, bases, frame=frame)
    paths = render(board, out, prog.blob, csim_argv=vitis_csim_argv(bases, sizes, frame), port_depths=depths)
    with atomic_path(out / "ddr_in.bin") as tmp:
        ddr.tofile(tmp)
    return dict(paths, depths=depths)

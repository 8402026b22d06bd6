"""HLS back end: render the Vitis HLS kernel (C++), its ISA/config headers, the instruction ROM and a C-simulation
testbench from Jinja templates (``hls_templates/``), then build and run the C-simulation with g++ against the
open-source ``ap_types`` headers (shipped in the hls4ml wheel; see ``/work/shared/TOOLCHAIN.md``).

Nothing is typed twice: ``isa.h`` is generated from :mod:`generator.spec.isa` (opcodes, every field's bit position and
width, PARAM_RECORD offsets, STATUS bits, TOKEN_QUEUE_DEPTH, the AXI-Lite register map), ``config.h`` from the
board file through
:class:`generator.spec.timing.HwConfig` (Tn, Tm, buffer depths of both precisions, AXI width, CONFIG id, clock), and the
top function's argument list from :data:`generator.spec.isa.REGISTERS`.

Structure (``hls_templates/kernel/accel_kernel.h``, after TVM-VTA): four top functions, each exported as its own IP by
``run_hls.tcl`` (:data:`TOPS`): ``accel`` (fetch + control: the ``ap_ctrl_hs`` block the host starts, the
:data:`generator.spec.isa.REGISTERS` map, m_axi on ``insns`` only) dispatches every instruction to the command queue of
its module and sends each run's base registers and sizes to load and store; ``accel_load``, ``accel_compute`` and
``accel_store`` are free-running (``ap_ctrl_none``, one instruction per invocation), each with its own m_axi port
(load reads, store writes; absolute addresses), synchronised by the four dependency-token streams of depth
:data:`generator.spec.isa.TOKEN_QUEUE_DEPTH`; IBUF/WBUF (load -> compute), PBUF (load -> store) and ACC (compute ->
store) are memory ports with one writer and one reader module. No DATAFLOW region is left.
The lane dimension of each memory port is ``ARRAY_RESHAPE``d (one word of Tn or Tm lanes per bank, written with
byte enables), so the block design (``vivado_bd.tcl``, :func:`generator.estimate.hls_resources.block_design`) holds one RAM
per bank (WBUF: per bank and row, PBUF: per lane; ``hls_templates/bd/accel_ram.v``) and one ``axis_data_fifo``
per stream at the kernel's depth; ACC's read port is shared by compute and store (the tokens keep them on
different banks). C-simulation is unaffected (the pragmas do not change the C++ arrays).
The static kernel (``hls_templates/kernel/*.h``) is copied next to the rendered glue (``isa.h``, ``config.h``, ``accel.h``, ``accel.cpp``
with the top signatures and interface pragmas, ``insn_rom.h``, ``tb.cpp``).

C-simulation runs that structure itself (``hls_templates/kernel/accel_csim.h``): the four tops as std::threads over bounded
blocking FIFOs of the stated depths (``hls_templates/kernel/accel_stream.h``), load / compute / store called again and again as
free-running blocks are, stopped when fetch has returned; a deadlock (every thread blocked on a FIFO that cannot
move) is detected exactly and reported as WATCHDOG. It is clean under ``-fsanitize=thread``
(tests/test_hls.py).

Error status: the kernel sets the bits of :data:`generator.spec.isa.STATUS_BITS` under the conditions documented there,
as the golden simulator raises them (tests/test_status.py runs every case on both); C-simulation also reports a
deadlock (WATCHDOG) and tokens left at the end (TOKENS_LEFT). :func:`run_csim` refuses a program that is not whole
instructions (PARTIAL_INSN) without running it, as the other loaders do.
"""
from __future__ import annotations
from generator import ROOT_DIR

import importlib.util
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from generator.spec import isa
from generator.estimate import hls_resources
from generator.spec.board import Board
from generator.spec.timing import HwConfig

TEMPLATES_DIR = ROOT_DIR / "hls_templates"
#: g++ flags of TOOLCHAIN.md; our code must compile warning-free with them
GXX_FLAGS = ["-std=c++14", "-O2", "-Wall", "-Wextra", "-Wno-unknown-pragmas", "-Wno-unused-label",
             "-Wno-uninitialized", "-Wno-maybe-uninitialized"]
KERNEL_FILES = ["isa.h", "config.h", "accel.h", "accel.cpp", "insn_rom.h", "tb.cpp", "run_hls.tcl",
                "vivado_bd.tcl"]
#: the static kernel (hls_templates/kernel/): copied next to the rendered glue, compiled as is
KERNEL_DIR = TEMPLATES_DIR / "kernel"     # the static C++ of the kernel (compiles without rendering)
STATIC_FILES = ["accel_stream.h", "accel_kernel.h", "accel_csim.h"]
#: the block design's buffer memory (hls_templates/bd/): a module reference of vivado_bd.tcl
BD_DIR = TEMPLATES_DIR / "bd"
BD_FILES = ["accel_ram.v"]
#: depth of the fetch -> module command queues (instructions)
CMD_QUEUE_DEPTH = hls_resources.QUEUE_DEPTH
#: m_axi depths (AXI beats) of a kernel rendered without a program's layout (co-simulation needs port_depths)
DEFAULT_PORT_DEPTHS = {"insns": 65536, "load": 1 << 20, "store": 1 << 20}


def port_depths(prog, bases: dict, blob_beats: int | None = None) -> dict:
    """The depth (AXI beats) of each m_axi port for a co-simulation of ``prog`` (a
    :class:`generator.codegen.program.Program`) at base addresses ``bases`` (byte offsets into one image, as
    :func:`generator.exec.runtime.build_ddr` lays them out): ``insns`` the program's beats, ``load`` / ``store`` up to the
    end of the last region (base + size of its base register) that a LOAD reads / a STORE writes, since the modules'
    ports address from 0 (offset=off)."""
    axi = prog.hw.axi_bytes
    sizes = prog.layout.sizes

    def end(op):
        regs = {isa.BASE_REG_NAMES[i.f["base_reg"]] for i in prog.insns if i.op == op}
        return max([int(bases[r]) + int(sizes[r]) for r in regs] or [axi])
    beats = blob_beats if blob_beats is not None else -(-len(prog.blob) // axi)
    return {"insns": max(1, beats), "load": -(-end("LOAD") // axi), "store": -(-end("STORE") // axi)}
#: int8 packing: the low product occupies bits [PACK_SHIFT-1:0] of the DSP48E2 P output (signed)
PACK_SHIFT = 18
#: the top function's name (also the Vitis HLS top)
TOP = "accel"
#: VLNV of the exported IP (run_hls.tcl export_design, vivado_bd.tcl create_bd_cell); host/driver.py binds to it
KERNEL_VLNV = "xilinx.com:hls:accel:1.0"
#: the four top functions, each exported as its own IP (VLNV xilinx.com:hls:<name>:1.0); the first, the fetch /
#: control block with the isa.REGISTERS map, is KERNEL_VLNV
TOPS = [(TOP, "fetch + control (ap_ctrl_hs, s_axilite, m_axi insns)"),
        (TOP + "_load", "LOAD (ap_ctrl_none, m_axi read, IBUF/WBUF/PBUF write ports)"),
        (TOP + "_compute", "COMPUTE (ap_ctrl_none, IBUF/WBUF read, ACC write ports)"),
        (TOP + "_store", "POST + STORE (ap_ctrl_none, m_axi write, ACC/PBUF read ports)")]


def top_vlnv(top: str) -> str:
    """The VLNV run_hls.tcl exports top function ``top`` as."""
    vendor, library, _, version = KERNEL_VLNV.split(":")
    return f"{vendor}:{library}:{top}:{version}"
#: where vivado_bd.tcl copies the overlay (.bit + .hwh) by default: overlay/<board>/
OVERLAY_ROOT = TEMPLATES_DIR.parent / "overlay"


class HlsError(RuntimeError):
    """Rendering, compiling (including any g++ warning in our code) or running the C-simulation failed."""


def ap_types_dir() -> Path:
    """Folder of the open-source ``ap_int.h`` / ``hls_stream.h`` headers inside the installed hls4ml wheel.

    Raises HlsError if hls4ml is not installed (``pip install --no-deps hls4ml==1.3.0``)."""
    spec = importlib.util.find_spec("hls4ml")
    if spec is None or not spec.submodule_search_locations:
        raise HlsError("hls4ml is not installed: pip install --no-deps hls4ml==1.3.0 "
                       "(only its ap_types headers are used)")
    d = Path(spec.submodule_search_locations[0]) / "templates" / "vivado" / "ap_types"
    if not (d / "ap_int.h").is_file():
        raise HlsError(f"{d} has no ap_int.h")
    return d


def _env() -> Environment:
    return Environment(loader=FileSystemLoader(str(TEMPLATES_DIR)), undefined=StrictUndefined,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def pack_group() -> int:
    """Packed int8 products (|x*w| <= 128*128) that can be summed in the DSP before the low lane's signed
    PACK_SHIFT-bit field could overflow into the high lane: the largest G with G * 2^14 <= 2^(PACK_SHIFT-1) - 1."""
    return ((1 << (PACK_SHIFT - 1)) - 1) // (128 * 128)


def isa_context() -> dict:
    """Template variables for ``isa.h``, all taken from :mod:`generator.spec.isa`."""
    formats = []
    for op in isa.FORMATS:
        lay = isa.LAYOUTS[op]
        used = lay[-1][1] + lay[-1][2]
        formats.append(dict(op=op, code=isa.OPCODES[op], used=used,
                            fields=[dict(name=n, lo=p, w=w, signed=(op, n) in isa.SIGNED_FIELDS) for n, p, w in lay]))
    params = [dict(name=n, offset=o, bytes=np.dtype(t).itemsize, signed=np.dtype(t).kind == "i")
              for n, t, o in isa.PARAM_RECORD]
    regs = [dict(name=n, offset=o, bits=b, access=a) for n, o, b, a in isa.REGISTERS]
    return dict(isa_version=isa.ISA_VERSION, insn_bits=isa.INSN_BITS, insn_bytes=isa.INSN_BYTES,
                insn_log2_bits=isa.INSN_BITS.bit_length() - 1,
                opcodes=isa.OPCODES, module_of=isa.MODULE_OF, formats=formats, base_regs=isa.BASE_REGS,
                buffers=isa.BUFFERS, precisions=isa.PRECISIONS, activations=isa.ACTIVATIONS,
                param_bytes=isa.PARAM_RECORD_BYTES, params=params, mult_bits=isa.MULT_BITS,
                max_shift=isa.MAX_SHIFT, hw_info_modes=isa.HW_INFO_MODES, status_bits=isa.STATUS_BITS,
                ctrl_bits=isa.CTRL_BITS, registers=regs, token_queue_depth=isa.TOKEN_QUEUE_DEPTH,
                watchdog_cycles=isa.WATCHDOG_CYCLES)


def config_context(board: Board) -> dict:
    """Template variables for ``config.h``: the accelerator of ``board`` in both precisions (one bitstream runs
    int8 and int16 programs; CONFIG.precision selects the mode at run time)."""
    h8, h16 = HwConfig.from_board(board, 8), HwConfig.from_board(board, 16)
    a = board.accelerator
    axi_bytes = a.axi_data_width_bits // 8
    modes = sum(1 << b for b in isa.HW_INFO_MODES.values())    # both precisions on the same DSPs
    return dict(board=board.name, part=board.part, tn=a.tn, tm=a.tm, clock_mhz=board.pl_clock_mhz,
                clock_ns=round(1000.0 / board.pl_clock_mhz, 4), axi_bits=a.axi_data_width_bits,
                axi_bytes=axi_bytes, axi_log2=int(math.log2(axi_bytes)), config_id=h8.config_id,
                ibuf8=h8.ibuf_words, ibuf16=h16.ibuf_words, wbuf8=h8.wbuf_words, wbuf16=h16.wbuf_words,
                acc_words=h8.acc_words, obuf8=h8.obuf_words, obuf16=h16.obuf_words, pbuf=h8.pbuf_entries,
                acc8=h8.acc_bits, acc16=h16.acc_bits, pack_group=pack_group(), pack_shift=PACK_SHIFT,
                hw_info=isa.ISA_VERSION | a.tn << 8 | a.tm << 16 | modes << 24)


def rom_words(blob: bytes | None) -> list[str]:
    """Instruction ROM contents: one 64-hex-digit string per 256-bit instruction (little-endian blob)."""
    if not blob:
        return []
    if len(blob) % isa.INSN_BYTES:
        raise HlsError(f"program size {len(blob)} is not a multiple of {isa.INSN_BYTES} bytes")
    return [f"{int.from_bytes(blob[i:i + isa.INSN_BYTES], 'little'):064x}" for i in range(0, len(blob), isa.INSN_BYTES)]


def render(board: Board, out_dir: str | Path, program: bytes | None = None, csim_argv: str = "",
           export_dir: str = "ip", overlay_dir: str | Path | None = None, jobs: int = 4,
           port_depths: dict | None = None) -> dict:
    """Render the kernel for ``board`` into ``out_dir``: the static kernel (:data:`STATIC_FILES` of ``hls_templates/kernel/``) and
    the glue: isa.h, config.h, accel.h, accel.cpp (the four tops and their interface pragmas), insn_rom.h
    (``program``, an encoded instruction blob, or an empty ROM), tb.cpp, run_hls.tcl (Vitis HLS: part and clock of
    the board; csim with ``csim_argv``, the testbench's arguments, if given; csynth; optional cosim; each top of
    :data:`TOPS` exported as its own IP, ``xilinx.com:hls:<top>:1.0``, to ``export_dir``, relative to ``out_dir``;
    ``accel`` is :data:`KERNEL_VLNV`), accel_ram.v (the block design's buffer memory) and vivado_bd.tcl (the Vivado
    block design: the four IPs, their stream FIFOs and buffer memories, :func:`generator.estimate.hls_resources.block_design`; bitstream
    and hardware handoff copied to ``overlay_dir`` as ``yolofpga_<board>.bit`` / ``.hwh``, default
    ``overlay/<board>/``; ``jobs`` parallel Vivado runs). ``port_depths``: {"insns", "load", "store"} m_axi depths
    in AXI beats for a co-simulation build (:func:`port_depths`; also selects the testbench's separate buffers in
    run_hls.tcl), default :data:`DEFAULT_PORT_DEPTHS`.
    Returns {file name: Path}.

    Raises HlsError for a malformed program blob; hls_resources.ResourceError if the configuration (with this ROM)
    does not fit the board's part; jinja2.UndefinedError for a template typo (StrictUndefined)."""
    out = Path(out_dir)
    rom = rom_words(program)
    hls_resources.check(board, len(rom))
    out.mkdir(parents=True, exist_ok=True)
    vendor, library, _, version = KERNEL_VLNV.split(":")
    ctx = dict(isa_context(), **config_context(board), top=TOP, rom=rom,
               args=[r for r in isa_context()["registers"] if r["offset"] >= 0x10],
               csim_argv=csim_argv, export_dir=export_dir, vlnv=KERNEL_VLNV, ip_vendor=vendor,
               ip_library=library, ip_version=version, board_part=board.vivado_board_part or "",
               overlay_dir=str(overlay_dir or OVERLAY_ROOT / board.name), overlay_name=f"yolofpga_{board.name}",
               jobs=int(jobs), storage=hls_resources.storage_binding(board, len(rom)),
               bd=hls_resources.block_design(board, len(rom)),
               cmd_queue_depth=CMD_QUEUE_DEPTH, run_queue_depth=hls_resources.RUN_QUEUE_DEPTH, tops=[dict(name=n, role=r) for n, r in TOPS],
               depths=dict(DEFAULT_PORT_DEPTHS, **(port_depths or {})), cosim=bool(port_depths))
    env = _env()
    paths = {}
    for d, files in ((KERNEL_DIR, STATIC_FILES), (BD_DIR, BD_FILES)):
        for name in files:
            p = out / name
            p.write_text((d / name).read_text())
            paths[name] = p
    for name in KERNEL_FILES:
        text = env.get_template(name + ".j2").render(**ctx)
        p = out / name
        p.write_text(text)
        paths[name] = p
    return paths


def compile_csim(src_dir: str | Path, exe: str | Path | None = None, extra: list[str] | None = None) -> Path:
    """Compile ``accel.cpp`` + ``tb.cpp`` of a rendered folder into a C-simulation binary with g++ and
    :data:`GXX_FLAGS`. Returns the binary's path. Raises HlsError if g++ is missing, fails, or prints any
    warning (our code must be warning-free; the ap_types headers are included with -isystem)."""
    src = Path(src_dir)
    exe = Path(exe) if exe else src / "csim"
    gxx = shutil.which("g++")
    if gxx is None:
        raise HlsError("g++ not found on PATH")
    cmd = [gxx, *GXX_FLAGS, "-pthread", "-isystem", str(ap_types_dir()), "-I", str(src), *(extra or []),
           str(src / "accel.cpp"), str(src / "tb.cpp"), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        raise HlsError(f"g++ {'failed' if r.returncode else 'warned'}:\n{' '.join(cmd)}\n{r.stderr[-6000:]}")
    return exe


def place_program(ddr: np.ndarray, blob: bytes, align: int = 4096) -> tuple[np.ndarray, int]:
    """Append an instruction blob to a DDR image at an ``align``-byte boundary. Returns (new image, address)."""
    addr = -(-ddr.size // align) * align
    out = np.zeros(addr + -(-len(blob) // align) * align, np.uint8)
    out[:ddr.size] = ddr
    out[addr:addr + len(blob)] = np.frombuffer(blob, np.uint8)
    return out, addr


def run_csim(exe: str | Path, ddr: np.ndarray, bases: dict, blob: bytes | None = None, workdir: str | Path = ".",
             timeout: float = 600, sizes: dict | None = None) -> tuple[np.ndarray, dict]:
    """Run a C-simulation binary on a DDR image.

    Args:
        ddr: uint8 DDR image (not modified). bases: {"WEIGHTS", "ACT", "INPUT", "OUTPUT"} byte addresses
            (multiples of the AXI width). blob: encoded program, fetched from DDR (fetch_ddr=1); None runs the ROM.
        sizes: bytes of each base register's buffer (the ``*_size`` arguments; same keys as ``bases``); None: each
            extends to the end of the image (the golden simulator's default).
    Returns: (DDR image after the run, same size as ``ddr``; {"status", "cycles", "hw_info", "config_id"}). A
        ``blob`` that is not whole instructions is refused by this loader (the ``n_insns`` argument counts
        instructions): status PARTIAL_INSN, nothing run, the image unchanged.
    Raises HlsError if the binary fails or its output cannot be parsed.
    """
    wd = Path(workdir)
    wd.mkdir(parents=True, exist_ok=True)
    if blob is not None and isa.partial_insn_status(len(blob)):
        return ddr.copy(), {"status": isa.partial_insn_status(len(blob)), "cycles": 0}
    img, insn_addr, n = ddr, 0, 0
    if blob is not None:
        img, insn_addr = place_program(ddr, blob)
        n = len(blob) // isa.INSN_BYTES
    fin, fout = wd / "ddr_in.bin", wd / "ddr_out.bin"
    fin.write_bytes(img.tobytes())
    args = [str(exe), str(fin), str(fout)] + [str(int(bases[k])) for k in isa.BASE_REGS] + \
           [str(insn_addr), str(n), "1" if blob is not None else "0"]
    if sizes is not None:
        args += [str(int(sizes[k])) for k in isa.BASE_REGS]
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise HlsError(f"C-simulation failed ({r.returncode}): {' '.join(args)}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    info = {}
    for tok in r.stdout.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            try:
                info[k] = int(v, 0)
            except ValueError:
                pass
    if "status" not in info:
        raise HlsError(f"C-simulation printed no status:\n{r.stdout[-3000:]}")
    out = np.fromfile(fout, np.uint8)[:ddr.size].copy()
    return out, info


def status_names(status: int) -> list[str]:
    """Names of the :data:`generator.spec.isa.STATUS_BITS` set in a status word."""
    return isa.status_names(status)


def build_and_check(board: Board, prog, ddr: np.ndarray, bases: dict, out_dir: str | Path,
                    overlay_dir: str | Path | None = None) -> dict:
    """Render the deployment kernel of ``prog`` (its program baked into the instruction ROM) into ``out_dir``,
    compile the C-simulation, run it in ROM mode on ``ddr`` and compare the whole DDR image with the golden
    simulator's (:class:`generator.exec.golden.GoldenSim`). The DDR image is also written as ``ddr_in.bin`` so that
    ``vitis_hls -f run_hls.tcl`` runs the same C-simulation. ``overlay_dir``: see :func:`render`.

    Args: prog: :class:`generator.codegen.program.Program`; ddr / bases: from :func:`generator.exec.runtime.build_ddr`.
    Returns: {"status", "cycles", "golden_cycles", "bit_exact", "diff_bytes", "csim_seconds", "dir", "ddr"} with
        ``ddr`` the C-simulation's DDR image after the run (read the heads from it).
    Raises HlsError (render / compile / run failure), SimError (the golden simulator refuses the program).
    """
    import time

    from generator.exec.golden import GoldenSim

    out = Path(out_dir)
    # Vitis HLS runs csim in <project>/<solution>/csim/build, four levels below this folder
    rel = "../../../../"
    argv = " ".join([rel + "ddr_in.bin", rel + "ddr_out.bin"] + [str(int(bases[k])) for k in isa.BASE_REGS] +
                    ["0", "0", "0"])
    render(board, out, prog.blob, csim_argv=argv, overlay_dir=overlay_dir)
    ddr.tofile(out / "ddr_in.bin")
    gold = ddr.copy()
    gres = GoldenSim(prog.hw, gold, bases).run(prog.blob)
    exe = compile_csim(out)
    t0 = time.time()
    got, info = run_csim(exe, ddr, bases, None, out / "csim_run", timeout=7200)
    secs = time.time() - t0
    diff = int(np.count_nonzero(got != gold))
    return dict(status=info["status"], cycles=info.get("cycles", 0), golden_cycles=gres.cycles,
                bit_exact=diff == 0 and info["status"] == 0, diff_bytes=diff, csim_seconds=secs, dir=out,
                ddr=got)


def render_cosim(board: Board, prog, ddr: np.ndarray, bases: dict, out_dir: str | Path) -> dict:
    """Render the co-simulation build of ``prog`` (meant for the TINY single-layer program): the program in the
    ROM, every m_axi port's ``depth=`` from the program's region sizes (:func:`port_depths`), a testbench with a
    separate buffer per m_axi port (ACCEL_TB_SEPARATE_PORTS), ``ddr_in.bin`` and the csim / cosim arguments in
    run_hls.tcl (``ACCEL_COSIM=1 vitis_hls -f run_hls.tcl``). Returns :func:`render`'s paths plus "depths"."""
    out = Path(out_dir)
    rel = "../../../../"
    argv = " ".join([rel + "ddr_in.bin", rel + "ddr_out.bin"] + [str(int(bases[k])) for k in isa.BASE_REGS] +
                    ["0", "0", "0"])
    depths = port_depths(prog, bases)
    paths = render(board, out, prog.blob, csim_argv=argv, port_depths=depths)
    ddr.tofile(out / "ddr_in.bin")
    return dict(paths, depths=depths)


def tool_commands(hls_dir: str | Path) -> list[tuple[str, str]]:
    """[(tool, command)] that turn a rendered folder into a bitstream, in order: Vitis HLS (C-simulation,
    C-synthesis, IP export), then Vivado (block design, implementation, overlay .bit + .hwh)."""
    d = Path(hls_dir)
    return [("vitis_hls", f"cd {d} && vitis_hls -f run_hls.tcl"),
            ("vivado", f"cd {d} && vivado -mode batch -source vivado_bd.tcl")]


def missing_tools_message(hls_dir: str | Path, missing: list[str]) -> str:
    """The message of a build that stops before the bitstream: which tools were not found on PATH and the exact
    commands to run on a machine that has them."""
    cmds = "\n".join(f"    {c}" for _, c in tool_commands(hls_dir))
    return (f"{' and '.join(missing)} not found on PATH: C-synthesis, IP export and the bitstream were skipped. "
            f"On a machine with Vitis HLS and Vivado run:\n{cmds}\n"
            f"(the overlay .bit + .hwh land in overlay/<board>/, where `invoke package` picks them up)")


def report_md(board: Board, quant: str, program_insns: int, cycles: dict, compiled_bits: int, check: dict | None,
              image: str = "", detections: list | None = None, est: "hls_resources.Estimate | None" = None,
              kernel_est: dict | None = None) -> str:
    """The build report (Markdown): configuration, estimated resources against the part's capacity, predicted
    cycles and frames/s at the board clock, the int8 / int16 throughput ratio, the C-simulation result.

    Args: cycles: {8: predicted cycles of the int8 program, 16: of the int16 one} (latency model, per frame);
        compiled_bits: precision of the program baked into the ROM; check: :func:`build_and_check`'s result
        (None: not run); detections: from the C-simulation's heads; est: resource estimate (computed if None);
        kernel_est: :func:`generator.estimate.hls_cycles.compare` of the program (the ``hls-cycles:`` / ``model-cycles:``
        lines; omitted if None).
    """
    a = board.accelerator
    est = est or hls_resources.estimate(board, program_insns)
    h = HwConfig.from_board(board, compiled_bits)
    f = board.pl_clock_mhz * 1e6
    lines = [f"# Build report: {board.name}, {quant}", "",
             "## Configuration", "",
             f"- board `{board.name}` ({board.description}), part `{board.part}`",
             f"- PE array Tn x Tm = {a.tn} x {a.tm}: {a.tn * a.tm} MACs/cycle in int16, {2 * a.tn * a.tm} in int8 "
             f"(two int8 products per DSP48E2)",
             f"- buffers per bank: IBUF {a.ibuf_bank_bytes} B, WBUF {a.wbuf_bank_bytes} B, ACC {a.acc_bank_words} "
             f"words of {a.tm} x {max(a.acc_bits_int8, a.acc_bits_int16)} bit (2 banks each); OBUF "
             f"{a.obuf_bytes} B; PBUF {a.pbuf_entries} records",
             f"- m_axi {a.axi_data_width_bits} bit on S_AXI_HP0_FPD; PL clock {board.pl_clock_mhz:g} MHz",
             f"- instruction ROM: {program_insns} instructions (int{compiled_bits}); CONFIG id "
             f"0x{h.config_id:08x}", "",
             "## Estimated resources", "",
             "Estimates of `generator/estimate/hls_resources.py` (nothing synthesized): DSP and memories follow the kernel's "
             "structure, LUT/FF are a coarse bit-width estimate.", "",
             est.table(), "", est.memory_table(), "",
             "## Predicted performance (latency model, one frame)", "",
             "| precision | cycles | ms | frames/s |", "|---|---:|---:|---:|"]
    for bits in (8, 16):
        if bits in cycles:
            c = cycles[bits]
            mark = " (this build)" if bits == compiled_bits else ""
            lines.append(f"| int{bits}{mark} | {c} | {c / f * 1e3:.2f} | {f / c:.1f} |")
    if 8 in cycles and 16 in cycles:
        lines += ["", f"int8 / int16 throughput: {cycles[16] / cycles[8]:.2f}x (same DSPs; int8 packs two "
                      f"products per DSP48E2, DDR-bound layers gain less)"]
    if kernel_est is not None:
        from generator.estimate.hls_cycles import report_lines
        lines += [""] + report_lines(kernel_est)
    lines += ["", "## C-simulation (g++, the rendered kernel)", ""]
    if check is None:
        lines.append("not run")
    else:
        ok = "**bit-exact**" if check["bit_exact"] else f"**differs** ({check['diff_bytes']} DDR bytes)"
        lines += [f"- image `{image}`: {ok} against the golden simulator; status "
                  f"{status_names(check['status']) or 'OK'}",
                  f"- the C-simulation's `cycles` register (loop iterations of the busiest module, not a cycle "
                  f"count): {check['cycles']}; golden simulator {check['golden_cycles']} cycles; the C-simulation "
                  f"took {check['csim_seconds']:.1f} s"]
    if detections is not None:
        lines += ["", f"## Detections (from the C-simulation's heads), `detections.png`", ""]
        lines += [f"- {d['label']} {d['score']:.2f} box {[round(v) for v in d['box']]}" for d in detections]
        if not detections:
            lines.append("- none")
    return "\n".join(lines) + "\n"

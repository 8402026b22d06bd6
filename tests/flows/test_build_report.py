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

"""The activation records generate the README's activation table (issue 44: an activation is one record)."""
from __future__ import annotations

import pytest

from generator import ROOT_DIR
from generator.flows.activations import README_BEGIN, README_END, readme_table, update_readme
from generator.flows.inputs import FlowError
from generator.ir.activations import ACTIVATIONS


def test_readme_table_is_generated_from_the_records():
    """README.md holds exactly what the records generate now (run `invoke activations --readme` after changing one)."""
    text = (ROOT_DIR / "README.md").read_text()
    got = text[text.index(README_BEGIN):text.index(README_END) + len(README_END)]
    assert got == readme_table(), "README.md's activation table is stale: run `invoke activations --readme`"


def test_one_row_per_record_from_its_fields():
    rows = readme_table().splitlines()[3:-1]
    assert [r.split(" | ")[0].lstrip("| ") for r in rows] == [a.name for a in ACTIVATIONS]
    for a, r in zip(ACTIVATIONS, rows):
        cells = r.strip("|").split(" | ")
        assert cells[1].strip() == a.doc and cells[3].strip() == (a.darknet or "-")
        assert all(k in cells[2] for k, _ in a.params)


def test_update_rewrites_only_the_block(tmp_path, monkeypatch):
    import generator.flows.activations as fa

    p = tmp_path / "README.md"
    p.write_text(f"before\n{README_BEGIN}\nold\n{README_END}\nafter\n")
    assert update_readme(p, log=lambda *_: None) is True
    assert p.read_text() == f"before\n{readme_table()}\nafter\n"
    assert update_readme(p, log=lambda *_: None) is False
    monkeypatch.setattr(fa, "readme_table", lambda: f"{README_BEGIN}\nnew\n{README_END}")
    assert update_readme(p, log=lambda *_: None) is True and "new" in p.read_text()


@pytest.mark.parametrize("text", ["no markers\n", f"{README_END}\n{README_BEGIN}\n", f"{README_BEGIN}\n{README_BEGIN}\n{README_END}\n"])
def test_bad_markers_are_one_line_errors(tmp_path, text):
    p = tmp_path / "README.md"
    p.write_text(text)
    with pytest.raises(FlowError, match="markers"):
        update_readme(p, log=lambda *_: None)
    assert p.read_text() == text

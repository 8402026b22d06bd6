"""A board file that cannot be read is one ``BoardError`` line naming the file and where (issue 41, defect 8): not
UTF-8 (the byte offset), a YAML syntax error (``file:line:column``), a folder; through ``invoke`` one ``error:``
line and exit 2."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generator import ROOT_DIR
from generator.spec.board import BoardError, load_board

ZCU19EG = (ROOT_DIR / "boards" / "zcu19eg.yaml").read_text()


def _error(p) -> str:
    with pytest.raises(BoardError) as e:
        load_board(p)
    msg = str(e.value)
    assert "\n" not in msg and str(p) in msg, msg
    return msg


def test_board_file_not_utf8(tmp_path):
    p = tmp_path / "latin1.yaml"
    text = ZCU19EG.replace("name: zcu19eg", "name: zcu19eg  # carte d'évaluation", 1)
    assert text != ZCU19EG
    p.write_bytes(text.encode("latin-1"))
    offset = text.encode("latin-1").index("é".encode("latin-1"))
    msg = _error(p)
    assert "not UTF-8" in msg and f"byte offset {offset}" in msg and "0xe9" in msg, msg


@pytest.mark.parametrize("broken,where", [
    ("accelerator:\n  tn: [32, 32\n  tm: 32\n", ":3:5"),        # unclosed flow sequence
    ("name: zcu19eg\n  bad: indentation\n", ":2:6"),            # mapping value not allowed here
    ("name: 'unterminated\n", ":2:1"),                          # quoted scalar never closed
])
def test_board_file_yaml_syntax_error_is_one_line(tmp_path, broken, where):
    p = tmp_path / "broken.yaml"
    p.write_text(broken)
    msg = _error(p)
    assert f"{p}{where}: not valid YAML" in msg, msg


def test_board_file_unreadable(tmp_path):
    d = tmp_path / "folder.yaml"
    d.mkdir()
    assert "cannot read" in _error(d)


def test_board_file_errors_through_invoke(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("accelerator:\n  tn: [32, 32\n  tm: 32\n")
    q = tmp_path / "latin1.yaml"
    q.write_bytes(b"name: caf\xe9\n")
    for f, needle in ((p, ":3:5: not valid YAML"), (q, "byte offset 9")):
        r = subprocess.run([str(Path(sys.executable).parent / "invoke"), "compile", "--board", str(f)], cwd=ROOT_DIR,
                           capture_output=True, text=True, timeout=120)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-2000:]
        assert str(f) in lines[0] and needle in lines[0], lines[0]

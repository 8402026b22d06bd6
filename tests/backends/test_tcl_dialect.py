"""Every Tcl script the project emits is Tcl 8.5 (the Tcl that Vivado and Vitis HLS releases have long embedded): the
HLS build's run_hls.tcl and vivado_bd.tcl (with the PS configuration and timing sign-off of
hls_templates/ps_config.tcl.j2 inlined) and the RTL IP's package_ip.tcl and vivado_bd.tcl, rendered for the five
boards (and both HP-port layouts, the co-simulation build), scanned for commands that Tcl 8.5 does not have (8.6:
``lmap``, ``try``, ``throw``, ``tailcall``, ``zlib``, ``coroutine``, ``yield``, ``dict map``, ``string cat``,
``lsort`` / ``lsearch -stride``, ``info coroutine``, ``file tempfile``, ``chan pipe``, TclOO; 8.7 / 9.0: ``lpop``,
``lseq``, ...) where a command starts: at the start of the script or a line, after ``;``, inside ``[...]`` and
inside a braced word (a body that may be evaluated), comments skipped. Where tclsh exists, each script is also
syntactically complete (``info complete``)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from generator.backends import hls
from generator.backends.rtl import ip
from generator.spec import isa
from generator.spec.board import known_boards, load_board
from helpers import board

#: commands Tcl 8.5 does not have (Tcl 8.6 manual pages, "lmap", "try", ...; 8.7 / 9.0 list commands)
NEWER_COMMANDS = {"lmap", "try", "throw", "tailcall", "zlib", "coroutine", "yield", "yieldto", "nsource", "lpop",
                  "lseq", "lremove", "ledit", "readFile", "writeFile", "foreachLine", "self", "my", "next", "nextto"}
#: (command, subcommand) pairs Tcl 8.5 does not have
NEWER_SUBCOMMANDS = {("dict", "map"), ("string", "cat"), ("info", "coroutine"), ("file", "tempfile"),
                     ("chan", "pipe"), ("chan", "push"), ("chan", "pop"), ("binary", "encode"), ("binary", "decode"),
                     ("info", "object"), ("info", "class"), ("array", "default"), ("string", "insert")}
#: options Tcl 8.5 does not have, by command
NEWER_OPTIONS = {"lsort": {"-stride"}, "lsearch": {"-stride"}}


class _Parser:
    """A Tcl 8 command scanner (the Tcl(n) rules the scan needs: words separated by blanks, commands by newlines and
    semicolons, braces / double quotes / backslashes grouping, ``[...]`` command substitution, ``{*}``, ``#``
    comments at a command's start). Braced words are scanned as scripts too (a body may be evaluated)."""

    def __init__(self, text: str):
        self.s = text
        self.found: list[tuple[int, list[str]]] = []      # (line, words) of every command

    def line(self, i: int) -> int:
        return self.s.count("\n", 0, i) + 1

    def script(self, i: int, stop: int, close: str | None = None) -> int:
        """Scan commands from i to stop (or to the unmatched ``close``); returns the index after it."""
        s = self.s
        while i < stop:
            c = s[i]
            if c in " \t\r\n;":
                i += 1
            elif c == "\\" and s.startswith("\\\n", i):
                i += 2
            elif close and c == close:
                return i + 1
            elif c == "#":                                # a comment, to the end of the (continued) line
                while i < stop and s[i] != "\n":
                    i += 2 if s[i] == "\\" else 1
            else:
                i = self.command(i, stop, close)
        return i

    def command(self, i: int, stop: int, close: str | None) -> int:
        s, start, words = self.s, i, []
        while i < stop:
            while i < stop and (s[i] in " \t" or s.startswith("\\\n", i)):
                i += 2 if s[i] == "\\" else 1
            if i >= stop or s[i] in "\n;" or (close and s[i] == close):
                break
            j = self.word(i, stop, close)
            words.append(s[i:j])
            i = j
        if words:
            self.found.append((self.line(start), words))
        return i

    def word(self, i: int, stop: int, close: str | None) -> int:
        s = self.s
        if s[i] == "{":
            depth, j = 1, i + 1
            while j < stop and depth:
                if s[j] == "\\":
                    j += 1
                elif s[j] == "{":
                    depth += 1
                elif s[j] == "}":
                    depth -= 1
                j += 1
            self.script(i + 1, j - 1)
            if s[i:j] == "{*}" and j < stop and s[j] not in " \t\n;":     # {*}word: the expanded word follows
                return self.word(j, stop, close)
            return j
        quoted = s[i] == '"'
        j = i + 1 if quoted else i
        while j < stop:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "[":
                j = self.script(j + 1, stop, "]")
                continue
            if (quoted and c == '"') or (not quoted and (c in " \t\n;" or (close and c == close))):
                break
            j += 1
        return j + 1 if quoted else j


def newer_than_85(text: str) -> list[str]:
    """The commands of Tcl script ``text`` that Tcl 8.5 does not have, as "line N: words" strings."""
    p = _Parser(text)
    p.script(0, len(text))
    bad = []
    for line, words in p.found:
        name = words[0].lstrip(":")
        sub = words[1] if len(words) > 1 else ""
        if (name in NEWER_COMMANDS or (name, sub) in NEWER_SUBCOMMANDS or name.startswith("oo::")
                or NEWER_OPTIONS.get(name, set()) & set(words[1:])):
            bad.append(f"line {line}: {' '.join(words)[:80]}")
    return bad


def test_the_scanner_finds_planted_commands_and_skips_comments_and_strings():
    """The scan is not vacuous: each planted 8.6-only command is found where a command starts; the same names in a
    comment, inside a double-quoted string's text or as a longer name are not."""
    planted = ['puts "x [lmap a {1 2} {set a}]"', "set y [dict map {k v} $d {set v}]",
               "foreach x $l {\n    try { f } on error {} {}\n}", "set s [lsort -integer -stride 2 $l]",
               "if {1} {string cat a b}", "set a 1; tailcall b", "set t [::zlib deflate $d]",
               "oo::class create C", "set f [file tempfile p]", "proc p {} {\n  coroutine c g\n}",
               "lassign [chan pipe] r w", "lappend z {*}[lmap x $l {expr {$x}}]"]
    for src in planted:
        assert newer_than_85(src), src
    clean = ["# lmap and try are Tcl 8.6 only\nset x 1", 'puts "we do not use lmap or try here"',
             "set lmapx 1; set trying 2", "lsort -stride_not_an_option $l", "string map {a b} $s",
             "dict get $d map", "error \"use {lmap} elsewhere\"", "set p [list try_this]",
             "foreach {k v} $l { lappend o $k }\n# try { }"]
    for src in clean:
        assert newer_than_85(src) == [], src
    assert newer_than_85("set a 1\n\nputs [lmap x {} {}]") == ["line 3: lmap x {} {}"]


def _emitted_tcl(tmp_path_factory) -> dict:
    """{label: rendered Tcl text} of every Tcl script the project emits, for the five boards: the HLS build (the
    default one, a co-simulation build with csim arguments and port depths, and the other HP-port layout) and the
    RTL IP's."""
    scripts = {}
    variants = [(n, load_board(n)) for n in known_boards()]
    variants += [("zcu19eg-hp1", board("zcu19eg", hp_ports=1)), ("zcu104-hp2", board("zcu104", hp_ports=2, axi_data_width_bits=256))]
    for name, b in variants:
        d = tmp_path_factory.mktemp(f"tcl_{name}")
        hls.render(b, d / "hls", overlay_dir=d / "ov")
        hls.render(b, d / "cosim", csim_argv="../../../../ddr_in.bin 0 0", port_depths={"insns": 4, "load": 64,
                                                                                        "store": 64})
        ip.render_ip(b, d / "rtl", bytes(isa.INSN_BYTES), overlay=d / "ov_rtl")
        for f in ("hls/run_hls.tcl", "hls/vivado_bd.tcl", "cosim/run_hls.tcl", "rtl/package_ip.tcl",
                  "rtl/vivado_bd.tcl"):
            scripts[f"{name}/{f}"] = (d / f).read_text()
    return scripts


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    return _emitted_tcl(tmp_path_factory)


def test_every_emitted_tcl_script_is_tcl_8_5(emitted):
    assert len(emitted) == 7 * 5
    for label, text in emitted.items():
        assert newer_than_85(text) == [], f"{label}: Tcl 8.6+ only: {newer_than_85(text)}"
    # the scripts are scanned, not skipped: their commands are found
    p = _Parser(emitted["zcu19eg/hls/vivado_bd.tcl"])
    p.script(0, len(p.s))
    names = {w[0] for _, w in p.found}
    assert {"create_bd_cell", "connect_bd_intf_net", "lassign", "get_timing_paths", "error"} <= names


@pytest.mark.skipif(shutil.which("tclsh") is None, reason="tclsh not installed")
def test_every_emitted_tcl_script_is_complete(emitted, tmp_path):
    """tclsh ``info complete`` of each script (balanced braces, brackets and quotes)."""
    checker = ("foreach f $argv { set h [open $f]; set t [read $h]; close $h\n"
               "  if {![info complete $t]} { puts \"INCOMPLETE $f\" } }")
    files = []
    for i, (label, text) in enumerate(emitted.items()):
        f = tmp_path / f"s{i}.tcl"
        f.write_text(text)
        files.append(str(f))
    (tmp_path / "check.tcl").write_text(checker)
    (tmp_path / "broken.tcl").write_text("foreach x {1 2} {\n    puts $x\n")
    r = subprocess.run(["tclsh", "check.tcl", *files, "broken.tcl"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["INCOMPLETE", "broken.tcl"], r.stdout

"""The error contract as a property (Hypothesis): every command-line flow, driven with generated bad input (option
values, paths, truncated and mutated ONNX / darknet cfg / weights / names / image / program files), ends either

* with exit 0 and valid outputs (a manifest whose files match their digests, strict-JSON detections with finite
  boxes, a disassembly no longer than ``--limit``), or
* with exit 2 and exactly one ``error:`` line, the last line of stderr,

never with a traceback, never leaving a partial artifact (a temporary file, program files without their manifest,
detections without a finished run) and never touching a file outside ``--out`` (the inputs, the repository).
A second property does the same for a deployment package mutated file by file under the PYNQ driver: it loads
and detects, or refuses with one of the driver's errors (:mod:`host.errors`).

Every example runs the real ``invoke`` executable in a subprocess on a small darknet model (16x20 input, two YOLO
heads), so a valid input costs a compile of a few seconds. The default run is derandomized and short (about a
minute: the ``yolofpga`` profile of ``tests/conftest.py``); the long run draws fresh examples::

    .venv/bin/python -m pytest tests/flows/test_cli_property.py --hypothesis-profile=long
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from generator import ROOT_DIR
from mutations import MUTATIONS, TEXT_MUTATIONS, make_sandbox, mutate, mutate_text, run_invoke

QUANTS = ("int8-asym", "int8-sym", "int16-sym", "int16-asym")


# ----------------------------------------------------------------------------------------------------- the cases
def _not_int(s: str) -> bool:
    return re.fullmatch(r"\s*[+-]?\d+\s*", s) is None


JUNK = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF, blacklist_characters="\\"), min_size=1,
               max_size=10)


@st.composite
def bad_option(draw):
    """A task with one option value that is not valid (a non-integer or negative count, an unknown name). Every
    such case must end in exit 2 at once: the other options keep the run small if the check were missed."""
    small = ["--model", "{small.onnx}"]
    kind = draw(st.sampled_from(["int", "enum"]))
    if kind == "int":
        task, opt = draw(st.sampled_from([("disasm", "limit"), ("fuzz", "cases"), ("fuzz", "case"),
                                          ("accuracy", "images"), ("rtl-frame", "resolution"), ("fuzz", "seed")]))
        val = draw(st.one_of(JUNK.filter(_not_int), st.integers(-10**6, -1).map(str)) if opt != "seed"
                   else JUNK.filter(_not_int))
        extra = {"disasm": ["--program", "{program.bin}"], "fuzz": ["--cases", "1"],
                 "accuracy": ["--images", "1", "--board", "nosuchboard"],
                 "rtl-frame": ["--config", "tiny", "--quant", "int8-asym"]}[task]
        if opt in ("cases", "images"):
            extra = []
        return [task, *extra, f"--{opt}={val}"], "out"
    task, opt, valid = draw(st.sampled_from([
        ("compile", "quant", QUANTS), ("detect", "quant", QUANTS), ("compile", "board", ()),
        ("detect", "board", ()), ("package", "kernel", ("hls", "rtl")), ("build", "kernel", ("hls", "rtl")),
        ("rtl-frame", "config", ("board", "small", "tiny")), ("fuzz", "executors", ()),
        ("fuzz", "configs", ()), ("timing", "config", ("tiny", "board")), ("compare", "quant", QUANTS),
        ("explore", "board", ())]))
    val = draw(JUNK.filter(lambda s: s not in valid and not (ROOT_DIR / "boards" / f"{s}.yaml").exists()
                           and not Path(s).exists() and s.strip() not in ("golden", "ref", "csim", "rtl")))
    args = [task, f"--{opt}={val}"]
    if task in ("compile", "detect", "package", "build", "compare"):
        args += small
    if task == "fuzz":
        args += ["--cases", "1"]
    return args, "out"


@st.composite
def bad_path(draw):
    """A path option pointing at something that is not what it should be (missing, a folder, a file instead of a
    folder, an empty or text file)."""
    task, opt = draw(st.sampled_from([
        ("compile", "model"), ("detect", "model"), ("detect", "image"), ("compile", "names"),
        ("compile", "yolo-cfg"), ("compile", "calib"), ("disasm", "program"), ("package", "overlay"),
        ("compile", "cfg"), ("compile", "weights"), ("compile", "out"), ("detect", "out"), ("package", "out"),
        ("build", "overlay")]))
    what = draw(st.sampled_from(["missing", "folder", "empty", "text", "file-under-file"]))
    return (task, opt, what), "path"


@st.composite
def mutated_file(draw):
    """A valid run with one of its input files mutated (bytes or lines)."""
    target = draw(st.sampled_from(["onnx", "weights", "cfg", "names", "image", "png", "program", "calib"]))
    how = draw(TEXT_MUTATIONS if target in ("cfg", "names") else MUTATIONS)
    quant = draw(st.sampled_from(QUANTS))
    return (target, how, quant), "mutate"


CASES = st.one_of(bad_option(), bad_path(), mutated_file())


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """The valid inputs that the examples mutate (:func:`mutations.make_sandbox`)."""
    return make_sandbox(tmp_path_factory.mktemp("cli-sandbox"))


# -------------------------------------------------------------------------------------------------- the oracle
def _tree(root: Path) -> dict:
    """{relative path: (size, mtime_ns)} of every file under ``root`` (none when it does not exist)."""
    out = {}
    if root.is_dir():
        for p in root.rglob("*"):
            if p.is_file() or p.is_symlink():
                st_ = p.lstat()
                out[str(p.relative_to(root))] = (st_.st_size, st_.st_mtime_ns)
    return out


def _git_state() -> str:
    """``git status`` of the repository (unchanged by any example; set YOLOFPGA_NO_GIT_CHECK=1 when someone else
    edits the working tree while the test runs)."""
    if os.environ.get("YOLOFPGA_NO_GIT_CHECK"):
        return ""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT_DIR,
                          capture_output=True, text=True).stdout


def _strict_json(text: str):
    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")
    return json.loads(text, parse_constant=bad)


def _check_artifacts(d: Path) -> None:
    """A finished artifact folder: its manifest reads through the driver's reader and every file it lists has the
    recorded size and SHA-256."""
    from host.fileio import sha256_file
    from host.manifest import read_manifest

    m = read_manifest(d / "manifest.json")
    assert (d / "program.bin").stat().st_size == m.n_insns * m.insn_bytes
    for name, rec in (m.files or {}).items():
        assert (d / name).stat().st_size == rec.bytes, name
        assert sha256_file(d / name) == rec.sha256, name


def _check_outcome(r, task: str, out: Path, args: list, must_fail: bool = False) -> None:
    """The property on one finished run (``must_fail``: a bad option value, which only exit 2 answers)."""
    note(f"invoke {' '.join(args)}\nexit {r.returncode}\nstderr: {r.stderr[-3000:]}")
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr[-3000:]
    assert r.returncode in ((2,) if must_fail else (0, 2)), (r.returncode, r.stdout[-1000:], r.stderr[-3000:])
    files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else []
    assert not [p for p in files if p.name.endswith(".tmp")], files      # no temporary file left behind
    if r.returncode == 2:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        errs = [ln for ln in lines if ln.startswith("error:")]
        assert len(errs) == 1 and lines[-1] == errs[0], r.stderr[-3000:]
        left = [p for p in files if not p.name.startswith(".") and p.suffix != ".onnx"]
        assert not left, f"files left behind by a failed run: {left}"   # (a darknet conversion is an input)
        return
    if task == "compile":
        _check_artifacts(out)
    elif task == "detect":
        dets = _strict_json((out / "detections.json").read_text())
        assert isinstance(dets, list)
        for det in dets:
            assert all(math.isfinite(v) for v in det["box"]) and 0 <= det["score"] <= 1, det
        _check_artifacts(out / "artifacts")
    elif task == "disasm":
        lim = next((int(a.split("=", 1)[1]) for a in args if a.startswith("--limit=")), 0)
        if lim:
            assert len(r.stdout.splitlines()) <= lim
    elif task == "package":
        tars = list(out.glob("*.tar.gz"))
        assert len(tars) == 1 and tars[0].with_name(tars[0].name[:-len(".tar.gz")]).is_dir()


def _fill(args, sb: Path):
    return [a.replace("{small.onnx}", str(sb / "small.onnx")).replace("{program.bin}", str(sb / "program.bin"))
            for a in args]


def _path_case(case, sb: Path, work: Path):
    """The command line of a ``bad_path`` case, the path made as drawn."""
    task, opt, what = case
    p = work / f"the-{opt}"
    if what == "folder":
        p.mkdir()
        (p / "x.txt").write_text("x")
    elif what == "empty":
        p.write_bytes(b"")
    elif what == "text":
        p.write_text("this is not what --%s expects\n" % opt)
    elif what == "file-under-file":
        (work / "afile").write_text("x")
        p = work / "afile" / "below"
    base = {"compile": ["compile", "--model", str(sb / "small.onnx")],
            "detect": ["detect", "--model", str(sb / "small.onnx"), "--image", str(sb / "image.jpg")],
            "disasm": ["disasm", "--program", str(sb / "program.bin")],
            "package": ["package", "--model", str(sb / "small.onnx")],
            "build": ["build", "--model", str(sb / "small.onnx"), "--kernel", "nosuchkernel"]}[task]
    if opt == "out":
        if what == "folder":     # an existing folder with foreign content is a valid --out for compile / detect
            pass
        return [*base, "--out", str(p)], p
    if opt in ("cfg", "weights"):
        other = "weights" if opt == "cfg" else "cfg"
        base = ["compile", f"--{other}", str(sb / f"small.{other}")]
    elif opt == "model":
        base = [a for a in base if a not in ("--model", str(sb / "small.onnx"))]
    elif opt in ("image", "program"):
        base = [a for a in base if a not in (f"--{opt}", str(sb / "image.jpg"), str(sb / "program.bin"))]
    if opt == "calib" and what in ("empty", "text"):
        pass
    return [*base, f"--{opt}", str(p), "--out", str(work / "out")], work / "out"


def _mutate_case(case, sb: Path, work: Path):
    """The command line of a ``mutated_file`` case, the mutated file written into ``work``."""
    target, how, quant = case
    out = work / "out"
    q = ["--quant", quant]
    if target in ("cfg", "names"):
        src = sb / f"small.{target}"
        dst = work / src.name
        dst.write_text(mutate_text(src.read_text(), how))
    else:
        src = {"onnx": sb / "small.onnx", "weights": sb / "small.weights", "image": sb / "image.jpg",
               "png": sb / "image.png", "program": sb / "program.bin", "calib": sb / "image.jpg"}[target]
        dst = work / src.name
        dst.write_bytes(mutate(src.read_bytes(), how))
    if target == "onnx":
        return ["compile", "--model", str(dst), *q, "--out", str(out)], out
    if target in ("weights", "cfg"):
        cfg = dst if target == "cfg" else sb / "small.cfg"
        w = dst if target == "weights" else sb / "small.weights"
        return ["compile", "--cfg", str(cfg), "--weights", str(w), *q, "--out", str(out)], out
    if target == "names":
        return ["detect", "--model", str(sb / "small.onnx"), "--names", str(dst), "--image", str(sb / "image.jpg"),
                *q, "--out", str(out)], out
    if target in ("image", "png"):
        return ["detect", "--model", str(sb / "small.onnx"), "--image", str(dst), *q, "--out", str(out)], out
    if target == "program":
        return ["disasm", "--program", str(dst), "--limit=40"], out
    cal = work / "calib"
    cal.mkdir()
    shutil.move(str(dst), cal / "a.jpg")
    shutil.copy(sb / "image.png", cal / "b.png")
    return ["compile", "--model", str(sb / "small.onnx"), "--calib", str(cal), *q, "--out", str(out)], out


_COUNTER = [0]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(CASES)
def test_cli_flows_exit_0_or_one_error_line(sandbox, drawn):
    """Generated bad inputs through the command line: exit 0 with valid outputs or exit 2 with one `error:` line,
    no traceback, no partial artifact, nothing outside --out touched (the inputs, the repository)."""
    case, kind = drawn
    _COUNTER[0] += 1
    work = sandbox / "work" / str(_COUNTER[0])
    work.mkdir(parents=True)
    try:
        if kind == "out":
            args, out = _fill(case, sandbox), work / "out"
            if not any(a.startswith("--out") for a in args) and args[0] in ("compile", "detect", "package", "build",
                                                                             "compare", "rtl-frame", "timing",
                                                                             "explore"):
                args += ["--out", str(out)]
        elif kind == "path":
            args, out = _path_case(case, sandbox, work)
        else:
            args, out = _mutate_case(case, sandbox, work)
        before_inputs = _tree(sandbox)
        before_git = _git_state()
        r = run_invoke(args)
        after = _tree(sandbox)
        touched = {k for k in set(before_inputs) | set(after) if before_inputs.get(k) != after.get(k)
                   and not k.startswith(str(out.relative_to(sandbox)) + os.sep) and k != str(out.relative_to(sandbox))}
        _check_outcome(r, args[0], out, args, must_fail=kind == "out")
        assert not touched, f"files outside --out touched: {sorted(touched)}"
        assert _git_state() == before_git, "the repository's files changed"
    finally:
        shutil.rmtree(work, ignore_errors=True)

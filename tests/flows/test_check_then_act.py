"""Check, then act (issue 41, defects 2 and 7): every flow checks its options, its inputs and its output targets
before the compile and before deleting anything; a package is built aside and swapped in; a second run into the
same package is refused with one line; an OSError on the output side is one ``error:`` line naming the path.

The package runs use a two-layer darknet YOLO model with two classes (converted to ONNX with its names), so each
``invoke package`` takes a second or two, not the twelve of YOLOv4-tiny."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from generator import ROOT_DIR
from generator.flows.inputs import FlowError
from generator.flows.request import ModelSource
from helpers import invoke as _invoke, one_line_error as _one_line_error  # noqa: E402

from helpers import INVOKE  # noqa: E402

TINY_CFG = """[net]
width=32
height=32
channels=3

[convolutional]
batch_normalize=1
filters=8
size=3
stride=2
pad=1
activation=leaky

[convolutional]
filters=14
size=1
stride=1
pad=1
activation=linear

[yolo]
mask=0,1
anchors=4,6, 10,12
classes=2
num=2
"""





def _digests(folder: Path) -> dict:
    """{relative path: SHA-256} of every file under ``folder`` (the package folder and its tarball), lock files
    excepted."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            p = Path(root) / f
            if not f.endswith(".lock"):
                out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A two-layer YOLO detector (darknet cfg, random weights, 2 class names) converted to ONNX."""
    from generator.frontend.darknet import darknet_to_onnx

    d = tmp_path_factory.mktemp("tiny")
    (d / "t.cfg").write_text(TINY_CFG)
    rng = np.random.default_rng(0)
    parts = [struct.pack("<3iq", 0, 2, 5, 0), rng.normal(0, .5, 8), rng.uniform(.5, 1.5, 8), rng.normal(0, .5, 8),
             rng.uniform(.2, 2, 8), rng.normal(0, .3, 8 * 3 * 9), rng.normal(0, .5, 14), rng.normal(0, .3, 14 * 8)]
    (d / "t.weights").write_bytes(b"".join(p if isinstance(p, bytes) else p.astype("<f4").tobytes() for p in parts))
    (d / "t.names").write_text("cat\ndog\n")
    darknet_to_onnx(d / "t.cfg", d / "t.weights", d / "t.onnx", names=d / "t.names")
    return d / "t.onnx"


@pytest.fixture(scope="module")
def packaged(tiny, tmp_path_factory):
    """``invoke package --model tiny --out P`` once: (P, package folder, tarball)."""
    out = tmp_path_factory.mktemp("pkg")
    r = _invoke("package", "--model", str(tiny), "--out", str(out))
    assert r.returncode == 0, r.stderr
    (d,) = [p for p in out.iterdir() if p.is_dir()]
    return out, d, out / f"{d.name}.tar.gz"


@pytest.fixture
def no_compile(monkeypatch):
    """Make every flow's compile fail loudly: a check that comes after it is not a check before the work."""
    from generator.flows import build, compare, compile as compile_mod, detect, package, request

    def compile_request(*a, **kw):
        raise AssertionError("compiled before checking the options and the output targets")

    for m in (request, build, compare, compile_mod, detect, package):
        if hasattr(m, "compile_request"):
            monkeypatch.setattr(m, "compile_request", compile_request)


# ------------------------------------------------------------------ package: a bad option deletes nothing

@pytest.mark.parametrize("opt", ["kernel", "overlay"])
def test_bad_kernel_or_overlay_leaves_the_package_intact(packaged, tiny, tmp_path, opt):
    """Defect 2: `invoke package --out P` then the same with `--kernel bogus` (or `--overlay` a folder without a
    .bit) exits 2 with one line naming the option, and P's package and tarball are unchanged, byte for byte."""
    out, d, tar = packaged
    before = _digests(out)
    (tmp_path / "nobit").mkdir()
    arg = ["--kernel", "bogus"] if opt == "kernel" else ["--overlay", str(tmp_path / "nobit")]
    r = _invoke("package", "--model", str(tiny), "--out", str(out), *arg)
    assert _digests(out) == before and len(before) > 20
    _one_line_error(r, f"--{opt}", *(["nobit", "no .bit"] if opt == "overlay" else ["bogus"]))


@pytest.mark.parametrize("opt", [{"kernel": "bogus"}, {"overlay": "NOBIT"}])
def test_package_options_are_checked_before_the_compile(tiny, tmp_path, no_compile, opt):
    from generator.flows.package import package_flow

    (tmp_path / "NOBIT").mkdir()
    opt = {k: str(tmp_path / v) if k == "overlay" else v for k, v in opt.items()}
    with pytest.raises(FlowError, match=f"--{next(iter(opt))}"):
        package_flow(source=ModelSource(str(tiny)), out=str(tmp_path / "P"), **opt)


def _package_name(tiny) -> str:
    from generator.flows.pipeline import model_key

    return f"yolofpga-zcu19eg-{model_key(tiny)}-int8-asym-pc"


@pytest.mark.parametrize("case", ["file-at-folder", "folder-at-tarball", "foreign-folder", "symlink-at-folder"])
def test_package_target_in_the_way_is_refused_before_the_compile(tiny, tmp_path, no_compile, case):
    """A file where the package folder goes, a folder where its tarball goes, a folder of other files (no
    manifest.json) or a symbolic link where the package goes: FlowError naming the path, before the compile, and
    the thing in the way untouched (the old code compiled, then deleted or crashed on it)."""
    from generator.flows.package import package_flow

    name = _package_name(tiny)
    out = tmp_path / "P"
    out.mkdir()
    if case == "file-at-folder":
        (out / name).write_text("mine")
        culprit = out / name
    elif case == "folder-at-tarball":
        (out / f"{name}.tar.gz").mkdir()
        culprit = out / f"{name}.tar.gz"
    elif case == "foreign-folder":
        (out / name).mkdir()
        (out / name / "thesis.tex").write_text("years of work")
        culprit = out / name
    else:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "keep.txt").write_text("keep")
        (out / name).symlink_to(tmp_path / "elsewhere")
        culprit = out / name
    before = _digests(tmp_path)
    with pytest.raises(FlowError, match=re.escape(str(culprit))):
        package_flow(source=ModelSource(str(tiny)), out=str(out))
    assert _digests(tmp_path) == before


def test_package_file_in_the_way_one_line_on_the_command_line(tiny, tmp_path):
    """The same through `invoke package`: one `error:` line naming the path, exit 2, no traceback."""
    name = _package_name(tiny)
    (tmp_path / name).write_text("mine")
    r = _invoke("package", "--model", str(tiny), "--out", str(tmp_path))
    _one_line_error(r, str(tmp_path / name), "not a folder")
    assert (tmp_path / name).read_text() == "mine" and not (tmp_path / f"{name}.tar.gz").exists()


# ------------------------------------------------------------------ other flows: targets probed before the compile

def _flow_case(case, tiny, out: Path):
    """(flow function, kwargs, path in the way) with that path put in the way under ``out``."""
    from generator.flows.build import build_flow, build_rtl_flow
    from generator.flows.compare import compare_flow
    from generator.flows.compile import compile_flow
    from generator.flows.detect import detect_flow

    out.mkdir()
    flows = {"detect-json": (detect_flow, "detections.json", "dir"), "detect-png": (detect_flow, "detections.png", "dir"),
             "detect-artifacts": (detect_flow, "artifacts", "file"),
             "detect-manifest": (detect_flow, "artifacts/manifest.json", "dir"),
             "compile-program": (compile_flow, "program.bin", "dir"),
             "compare-md": (compare_flow, "compare.md", "dir"), "build-hls": (build_flow, "hls", "file"),
             "build-report": (build_flow, "report.md", "dir"), "build-rtl": (build_rtl_flow, "rtl", "file")}
    fn, rel, kind = flows[case]
    p = out / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if kind == "dir":
        p.mkdir()
        (p / "x").write_text("x")
    else:
        p.write_text("in the way")
    return fn, {"source": ModelSource(str(tiny)), "out": str(out)}, p


@pytest.mark.parametrize("case", ["detect-json", "detect-png", "detect-artifacts", "detect-manifest",
                                  "compile-program", "compare-md", "build-hls", "build-report", "build-rtl"])
def test_output_in_the_way_is_refused_before_the_compile(tiny, tmp_path, no_compile, case):
    """Defect 7: a folder where an output file goes or a file where an output folder goes is refused with
    FlowError naming it, before the compile (the old code failed after it with a traceback)."""
    fn, kw, culprit = _flow_case(case, tiny, tmp_path / "o")
    with pytest.raises(FlowError, match=re.escape(str(culprit))):
        fn(**kw)


def test_detect_folder_at_detections_json_one_line(tiny, tmp_path):
    """`invoke detect --out O` with a folder O/detections.json: one `error:` line naming it, exit 2, and no
    simulation run."""
    (tmp_path / "detections.json").mkdir()
    r = _invoke("detect", "--model", str(tiny), "--out", str(tmp_path))
    _one_line_error(r, str(tmp_path / "detections.json"), "is a folder")
    assert "golden simulator" not in r.stdout and not (tmp_path / "detections.png").exists()


# ------------------------------------------------------------------ errors in the middle: one line, nothing lost

def test_write_error_in_the_middle_leaves_the_old_package(packaged, tiny, tmp_path, monkeypatch):
    """A full disk while the package is written: FlowError naming the file, the previous package and tarball
    unchanged, no temporary left beside them (the old code deleted the package first and let the OSError out)."""
    import generator.flows.package as pk

    out = tmp_path / "P"
    shutil.copytree(packaged[0], out)
    before = _digests(out)

    def full_disk(c, d):
        Path(d).mkdir(parents=True, exist_ok=True)
        (Path(d) / "program.bin").write_bytes(b"half")
        raise OSError(28, "No space left on device", str(Path(d) / "weights.bin"))

    monkeypatch.setattr(pk, "write_artifacts", full_disk)
    with pytest.raises(FlowError, match=r"weights\.bin: No space left on device"):
        pk.package_flow(source=ModelSource(str(tiny)), out=str(out))
    assert _digests(out) == before
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_run_killed_in_the_middle_is_repaired_by_the_next(packaged, tiny, tmp_path, no_compile):
    """A run killed between the two renames of its swap left the old package renamed aside and its new one
    unfinished: the next run into the package puts the old one back (before its compile) and deletes the leftovers."""
    from generator.flows.package import package_flow

    out = tmp_path / "P"
    shutil.copytree(packaged[0], out)
    name = packaged[1].name
    before = _digests(out)
    (out / name).rename(out / f".{name}.old.k1ll3d_x.tmp")
    (out / f".{name}.x7y8z9ab.tmp").mkdir()
    (out / f".{name}.x7y8z9ab.tmp" / "program.bin").write_bytes(b"half")
    (out / f".{name}.tar.gz.q1w2e3r4.tmp").write_bytes(b"half a tarball")
    with pytest.raises(AssertionError, match="compiled before"):
        package_flow(source=ModelSource(str(tiny)), out=str(out))
    assert _digests(out) == before
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("exc", [IsADirectoryError, NotADirectoryError, FileExistsError, PermissionError])
def test_oserror_during_the_compile_is_one_flow_error(monkeypatch, exc):
    """compile_request turns any OSError of the output side (a cache path in the way, not writable) into one
    FlowError line naming the path."""
    from generator.flows import pipeline, request

    def compile_model(*a, **kw):
        raise exc(21, "something in the way", "build/m-1234/calib-x.json")

    monkeypatch.setattr(pipeline, "compile_model", compile_model)
    with pytest.raises(FlowError, match=r"^build/m-1234/calib-x\.json: something in the way$"):
        request.compile_request(request.Target(), request.ModelSource())


# ------------------------------------------------------------------ concurrent runs into one package

def test_concurrent_runs_into_one_package_are_refused_not_broken(packaged, tiny, tmp_path):
    """While another run holds the package's lock, `invoke package` into it exits 2 with one line and leaves the
    package as it was; two runs started together: each succeeds or is refused with that line, at least one
    succeeds, no traceback, and the package is whole afterwards (same files, same program and weights)."""
    from host.fileio import lock_file

    out, d, _ = packaged
    before = _digests(out)
    with lock_file(out / f".{d.name}.lock"):
        r = _invoke("package", "--model", str(tiny), "--out", str(out))
    _one_line_error(r, str(d), "in use by another run")
    assert _digests(out) == before

    q = tmp_path / "Q"
    procs = [subprocess.Popen([INVOKE, "package", "--model", str(tiny), "--out", str(q)], cwd=ROOT_DIR,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    assert any(rc == 0 for rc, _, _ in results), results
    for rc, _, err in results:
        assert "Traceback" not in err and rc in (0, 2), (rc, err)
        if rc == 2:
            assert len(err.strip().splitlines()) == 1 and "in use by another run" in err, err
    got = _digests(q)
    assert set(got) == set(before)
    for f in ("program.bin", "weights.bin"):
        assert got[f"{d.name}/{f}"] == before[f"{d.name}/{f}"]
    assert not [p for p in q.iterdir() if p.name.endswith(".tmp")]

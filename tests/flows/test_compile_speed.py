"""Compile time (issue 43), checked by behaviour, not by the clock: a first compile runs the float graph once per
calibration image and graph (ranges, histograms and bias correction share the run), and gives the same program as
when every pass runs the graph again; a second identical compile is served by the compile cache
(generator/flows/compile_cache.py) with byte-identical artifacts, while another option, another code version or a
damaged cache file is compiled again."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from generator.flows.artifacts import write_artifacts
from generator.ref import float_ref
from generator.flows import calibration, compile_cache, pipeline
from generator.flows.pipeline import compile_model
from helpers import small_yolo

ARTIFACTS = ("program.bin", "weights.bin", "manifest.json")


@pytest.fixture
def build(tmp_path, monkeypatch):
    """A fresh build folder (calibration and compile caches) for the test."""
    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build")
    return tmp_path / "build"


def _count_runs(monkeypatch) -> list:
    """The graphs the float executor actually runs (not a kept run served again), in order."""
    runs, real = [], float_ref._run
    monkeypatch.setattr(float_ref, "_run", lambda g, *a: runs.append(g) or real(g, *a))
    return runs


def _artifacts(c, d) -> dict:
    write_artifacts(c, d)
    return {f: (d / f).read_bytes() for f in ARTIFACTS}


def test_first_compile_runs_the_float_graph_once_per_image(tmp_path, build, monkeypatch):
    """Equalization's spans run the fused graph once per image; calibration's ranges and histograms and the bias
    correction then run the equalized graph once per image between them. The same compile with nothing kept
    (every pass runs the graph again: 4 runs per image) gives the same statistics and byte-identical artifacts."""
    m = small_yolo(tmp_path / "m.onnx", seed=4301)
    n = len(calibration.calib_files(None))
    runs = _count_runs(monkeypatch)
    c = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    assert len(runs) == 2 * n and sorted(Counter(map(id, runs)).values()) == [n, n], Counter(map(id, runs))
    assert runs[-1] is c.graph                          # the equalized graph's runs came last, n of them
    stats = calibration.calibration_ranges(c.graph, m, progress=False, stats=True)

    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build-2")
    monkeypatch.setattr(pipeline, "reuse_budget", lambda: 0)
    monkeypatch.setattr(calibration, "reuse_budget", lambda: 0)
    runs.clear()
    c2 = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    assert len(runs) == 4 * n                           # spans, ranges, histograms, bias: each its own run
    assert calibration.calibration_ranges(c2.graph, m, progress=False, stats=True) == stats
    assert _artifacts(c, tmp_path / "a") == _artifacts(c2, tmp_path / "b")


def test_kept_runs_stay_within_the_byte_budget(tmp_path, monkeypatch):
    """reused_runs keeps runs while their arrays fit its budget: with room for one image, the first image's run is
    served again, the second runs again; the values are those of a run of their own; outside the block nothing is
    kept."""
    from generator.frontend.onnx_loader import load_onnx
    from generator.ir import passes

    g = passes.run_all(load_onnx(small_yolo(tmp_path / "m.onnx", seed=4302)))
    xs = [np.random.default_rng(k).random(g.tensors[g.inputs[0]].shape).astype(np.float32) for k in range(2)]
    one = sum(v.nbytes for v in float_ref.run_float(g, {g.inputs[0]: xs[0]}, keep_all=True).values())
    real = float_ref._run
    runs = _count_runs(monkeypatch)
    with float_ref.reused_runs(one):
        for x in xs + xs:
            r = float_ref.run_float(g, {g.inputs[0]: x}, keep_all=True)
            ref = real(g, {g.inputs[0]: x}, True, False)[0]
            assert r.keys() == ref.keys() and all(np.array_equal(r[k], ref[k]) for k in r)
    assert len(runs) == 3                               # x0, x1, (x0 kept), x1 again
    float_ref.run_float(g, {g.inputs[0]: xs[0]}, keep_all=True)
    assert len(runs) == 4


def test_second_identical_compile_is_served_by_the_compile_cache(tmp_path, build, monkeypatch):
    """The second compile of the same model with the same options runs no float graph and no scheduler and writes
    byte-identical artifacts; another quantization mode is compiled (its own cache file); so is the first mode again
    after a code change (another code digest), which rewrites its cache file in place."""
    m = small_yolo(tmp_path / "m.onnx", seed=4303)
    c0 = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    files = sorted((build / "compiled").iterdir())
    assert len(files) == 1 and files[0].read_bytes().split(b"\n", 1)[0].startswith(b"{")
    runs, scheduled = _count_runs(monkeypatch), []
    real = pipeline.compile_program
    monkeypatch.setattr(pipeline, "compile_program", lambda *a, **k: scheduled.append(1) or real(*a, **k))
    c1 = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    assert not runs and not scheduled and set(c1.seconds) == {"compile_cache"}
    assert _artifacts(c0, tmp_path / "a") == _artifacts(c1, tmp_path / "b")

    compile_model("zcu19eg", "int16-sym", model=str(m), progress=False)
    assert len(scheduled) == 1 and len(list((build / "compiled").iterdir())) == 2
    before = files[0].read_bytes()
    monkeypatch.setattr(compile_cache, "code_digest", lambda: "another version")
    c2 = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    assert len(scheduled) == 2 and files[0].read_bytes() != before
    assert _artifacts(c2, tmp_path / "c") == _artifacts(c0, tmp_path / "a")
    assert not [p for p in (build / "compiled").iterdir() if p.name.startswith(".")]   # no temporary file left


@pytest.mark.parametrize("damage", ["truncated", "garbage", "payload changed", "empty"])
def test_damaged_compile_cache_is_recomputed_with_one_warning(tmp_path, build, monkeypatch, capsys, damage):
    """A compile cache file cut short, overwritten with garbage, with one payload byte changed (its SHA-256 no
    longer matches) or empty: one ``warning: <file>: ..., recomputing`` line, the compile runs again, gives the same
    artifacts and rewrites the file whole (the next compile is a silent hit)."""
    m = small_yolo(tmp_path / "m.onnx", seed=4304)
    c0 = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    capsys.readouterr()
    (path,) = (build / "compiled").iterdir()
    intact = path.read_bytes()
    bad = {"truncated": intact[:len(intact) // 2], "garbage": b"\xde\xad\xbe\xef" * 50, "empty": b"",
           "payload changed": intact[:-1] + bytes([intact[-1] ^ 1])}[damage]
    path.write_bytes(bad)
    scheduled, real = [], pipeline.compile_program
    monkeypatch.setattr(pipeline, "compile_program", lambda *a, **k: scheduled.append(1) or real(*a, **k))
    c = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    w = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning:")]
    assert len(w) == 1 and path.name in w[0] and w[0].endswith("recomputing"), w
    assert scheduled and path.read_bytes() == intact
    assert _artifacts(c, tmp_path / "a") == _artifacts(c0, tmp_path / "b")
    compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    assert len(scheduled) == 1 and not capsys.readouterr().err


def test_calibration_images_are_loaded_once_and_read_only(tmp_path):
    """calibration_images: a second call with the same set and options returns the same arrays (read-only), one
    with other options loads them again; a calibration file whose content changed is read again."""
    from PIL import Image

    d = tmp_path / "calib"
    d.mkdir()
    for k in range(2):
        Image.new("RGB", (20, 12), (40 * k, 90, 200)).save(d / f"{k}.png")
    a = calibration.calibration_images(16, 16, calib=d)
    b = calibration.calibration_images(16, 16, calib=d)
    assert a.keys() == b.keys() and all(a[k] is b[k] and not a[k].flags.writeable for k in a)
    c = calibration.calibration_images(16, 8, calib=d)
    assert c["0.png"].shape == (1, 3, 8, 16)
    Image.new("RGB", (20, 12), (7, 7, 7)).save(d / "0.png")
    e = calibration.calibration_images(16, 16, calib=d)
    assert np.allclose(e["0.png"], 7 / 255) and np.array_equal(e["1.png"], a["1.png"])

"""Nothing lost on a cut-short write (issue 41, defect 1): host/fileio's atomic writes and lock, the calibration
caches read with a guard (a damaged or stale cache is recomputed with one warning line, never trusted, never fatal),
the program artifacts written atomically, manifest last with the binaries' digests, byte-stable, and `invoke
compile` killed with SIGKILL at random moments leaving nothing that a normal run does not repair to the same bytes."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from generator import ROOT_DIR
from host.errors import PackageFileMismatchError, PackageMismatchError
from host.fileio import LockedError, atomic_dir, atomic_path, atomic_write, lock_file, sha256_file
from host.manifest import verify_file
from helpers import invoke as _invoke, small_yolo  # noqa: E402

ROOT = ROOT_DIR
from helpers import INVOKE  # noqa: E402
#: the files of a compile's artifact folder (no export model here: no tail_consts.npz)
ARTIFACTS = ("program.bin", "weights.bin", "manifest.json", "schedule.txt", "schedule.png", "program.asm")





def _warnings(stderr: str) -> list:
    return [ln for ln in stderr.splitlines() if ln.startswith("warning:")]


# ---- host/fileio ---------------------------------------------------------------------------------------------------
def test_atomic_path_failure_leaves_the_old_file(tmp_path):
    p = tmp_path / "f.bin"
    atomic_write(p, b"old content")
    with pytest.raises(RuntimeError, match="writer died"):
        with atomic_path(p) as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".f.bin.") and tmp.name.endswith(".tmp")
            tmp.write_bytes(b"new, but only half of it")
            raise RuntimeError("writer died")
    assert p.read_bytes() == b"old content" and os.listdir(tmp_path) == ["f.bin"]   # no temporary file left
    with pytest.raises(TypeError):
        atomic_write(p, 3)
    assert p.read_bytes() == b"old content"
    assert atomic_write(p, "new é") == p and p.read_text(encoding="utf-8") == "new é"
    assert os.listdir(tmp_path) == ["f.bin"] and oct(p.stat().st_mode & 0o777) == oct(0o644)
    with pytest.raises(OSError):
        atomic_write(tmp_path / "no" / "such" / "folder.txt", "x")
    assert sha256_file(p) == __import__("hashlib").sha256("new é".encode()).hexdigest()


def test_atomic_dir_swaps_a_whole_folder(tmp_path, monkeypatch):
    d = tmp_path / "pkg"
    d.mkdir()
    (d / "old.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_dir(d) as t:
            (t / "new.txt").write_text("new")
            raise RuntimeError("builder died")
    assert os.listdir(d) == ["old.txt"] and os.listdir(tmp_path) == ["pkg"]
    with atomic_dir(d) as t:
        (t / "new.txt").write_text("new")
        (t / "sub").mkdir()
        (t / "sub" / "x.bin").write_bytes(b"x")
        assert (d / "old.txt").is_file()            # the old folder stays in place until the new one is complete
    assert sorted(os.listdir(d)) == ["new.txt", "sub"] and os.listdir(tmp_path) == ["pkg"]
    with atomic_dir(tmp_path / "fresh") as t:
        (t / "a").write_text("a")
    assert (tmp_path / "fresh" / "a").read_text() == "a" and sorted(os.listdir(tmp_path)) == ["fresh", "pkg"]
    # the swap's second rename fails (a full or read-only file system): the old folder is put back, not lost
    real, calls = os.replace, []

    def failing(a, b):
        calls.append(Path(b).name)
        if len(calls) == 2:
            raise OSError(30, "Read-only file system")
        return real(a, b)
    with pytest.raises(OSError, match="Read-only"):
        with atomic_dir(d) as t:
            (t / "newer.txt").write_text("newer")
            monkeypatch.setattr(os, "replace", failing)
    monkeypatch.setattr(os, "replace", real)
    assert calls[1] == "pkg" and sorted(os.listdir(d)) == ["new.txt", "sub"]
    assert sorted(os.listdir(tmp_path)) == ["fresh", "pkg"]


_HOLD = "import sys, time\nfrom host.fileio import lock_file\nwith lock_file(sys.argv[1]):\n" \
        "    print('held', flush=True)\n    time.sleep(120)\n"
_TRY = "import sys\nfrom host.fileio import LockedError, lock_file\ntry:\n    with lock_file(sys.argv[1]):\n" \
       "        print('got')\nexcept LockedError as e:\n    print('locked:', e)\n"


def test_lock_file_refuses_a_second_holder_from_another_process(tmp_path):
    lock = tmp_path / "out.lock"
    py = [sys.executable, "-c"]
    with lock_file(lock):
        r = subprocess.run([*py, _TRY, str(lock)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert r.stdout.startswith("locked:") and str(lock) in r.stdout, r.stdout + r.stderr
    r = subprocess.run([*py, _TRY, str(lock)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "got", r.stderr
    # held by another process: refused here; that process killed: the kernel drops the lock (no stale lock file)
    p = subprocess.Popen([*py, _HOLD, str(lock)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        with pytest.raises(LockedError, match="in use by another run"):
            with lock_file(lock):
                pass
    finally:
        p.kill()
        p.wait(timeout=60)
        p.stdout.close()
    with lock_file(lock):
        pass


# ---- calibration caches --------------------------------------------------------------------------------------------
def _damages(text: str, key: dict) -> dict:
    """name -> damaged content of a cache file whose intact content is ``text`` (``key``: its recorded key)."""
    n = len(text)
    out = {f"truncated to {k} bytes": text[:k] for k in sorted({0, 1, n // 3, n - 1})}
    out["garbage bytes"] = b"\x00\xff\xfe garbage \x89PNG" * 5
    out["a JSON list"] = json.dumps([1, 2, 3])
    out["right key, wrong shape"] = json.dumps({"key": key, "ranges": {"x": "oops"}, "spans": {"x": [1]}})
    out["another model's key"] = json.dumps({**json.loads(text), "key": {**key, "model_sha256": "0" * 64}})
    return out


def test_damaged_calibration_cache_is_recomputed_with_one_warning(tmp_path, monkeypatch, capsys):
    """Every cache file of a compile (ranges + statistics, equalization spans), truncated to several lengths (0
    included), filled with garbage, valid JSON of the wrong shape, or recording another model's key: the next compile
    prints exactly one warning line naming that file, recomputes it (the same bytes as before) and compiles the same
    program."""
    from generator.flows import calibration
    from generator.flows.pipeline import calib_cache_path, compile_model

    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build")
    m = small_yolo(tmp_path / "cached.onnx", seed=4101)
    c0 = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
    assert not _warnings(capsys.readouterr().err)
    folder = calib_cache_path(m).parent
    caches = sorted(folder.glob("*.json"))
    assert [p.name for p in caches] == [f"calib-eq{calibration.EQUALIZE_ALPHA:g}.json",
                                        f"spans-{calibration._set_hash(calibration.calib_files(None))}.json"]
    for cache in caches:
        intact = cache.read_bytes()
        for what, bad in _damages(intact.decode(), json.loads(intact)["key"]).items():
            (cache.write_bytes if isinstance(bad, bytes) else cache.write_text)(bad)
            c = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)
            w = _warnings(capsys.readouterr().err)
            assert len(w) == 1 and cache.name in w[0] and w[0].endswith("recomputing"), (cache.name, what, w)
            assert cache.read_bytes() == intact, (cache.name, what)
            assert c.program.blob == c0.program.blob and c.program.weights == c0.program.weights, (cache.name, what)
        c = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False)    # intact again: trusted, silent
        assert not _warnings(capsys.readouterr().err)
    assert sorted(p.name for p in folder.iterdir()) == [p.name for p in caches]     # no temporary file left


def test_invoke_detect_works_after_damaged_caches(tmp_path):
    """`invoke detect` with both cache files of its model damaged (half a file, garbage): exit 0, the same
    detections as with intact caches, one warning line per damaged file and no traceback."""
    from generator.flows.pipeline import calib_cache_path

    m = small_yolo(tmp_path / "detcache.onnx", seed=4102)
    folder = calib_cache_path(m).parent
    shutil.rmtree(folder, ignore_errors=True)
    try:
        args = ("detect", "--model", str(m), "--image", "dog", "--out")
        r = _invoke(*args, str(tmp_path / "a"))
        assert r.returncode == 0, r.stderr
        caches = sorted(folder.glob("*.json"))
        assert len(caches) == 2
        caches[0].write_bytes(caches[0].read_bytes()[:len(caches[0].read_bytes()) // 2])
        caches[1].write_bytes(b"\xde\xad\xbe\xef" * 100)
        r = _invoke(*args, str(tmp_path / "b"))
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        w = _warnings(r.stderr)
        assert len(w) == 2 and all(any(p.name in x for x in w) for p in caches), w
        a, b = (json.loads((tmp_path / k / "detections.json").read_text()) for k in "ab")
        assert a == b and a, (a, b)
        assert all(json.loads(p.read_text())["key"] for p in caches)      # rewritten whole
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---- program artifacts ---------------------------------------------------------------------------------------------
def test_write_artifacts_manifest_last_with_digests_and_byte_stable(tmp_path, monkeypatch):
    """write_artifacts: every file through host.fileio.atomic_write / atomic_path, manifest.json last, its ``files``
    entry the size and SHA-256 of program.bin and weights.bin; two writes give the same bytes in every file (the
    PNG included); an interrupted rewrite with another program (the chart fails) leaves the old manifest, whose
    digests then refuse the new program.bin (a mixed folder is detected)."""
    from generator.flows import artifacts
    from generator.flows import calibration
    from generator.flows.pipeline import compile_model

    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build")
    c = compile_model("zcu19eg", "int8-asym", model=str(small_yolo(tmp_path / "a.onnx", 4103)), progress=False)
    order = []
    real = artifacts.atomic_write
    monkeypatch.setattr(artifacts, "atomic_write", lambda p, data: order.append(Path(p).name) or real(p, data))
    a = artifacts.write_artifacts(c, tmp_path / "a")
    assert order[-1] == "manifest.json" and set(order) == set(ARTIFACTS) - {"schedule.png"}, order
    man = json.loads((a / "manifest.json").read_text())
    assert man["files"] == {f: {"bytes": (a / f).stat().st_size, "sha256": sha256_file(a / f)}
                            for f in ("program.bin", "weights.bin")}
    time.sleep(1.1)                                 # (a time stamp in any file would differ)
    b = artifacts.write_artifacts(c, tmp_path / "b")
    for f in ARTIFACTS:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert sorted(os.listdir(a)) == sorted(ARTIFACTS)

    other = compile_model("zcu19eg", "int8-asym", model=str(small_yolo(tmp_path / "o.onnx", 4104)), progress=False)
    before = (a / "manifest.json").read_bytes()

    def broken(*_):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(artifacts, "plot_schedule", broken)
    with pytest.raises(OSError, match="No space"):
        artifacts.write_artifacts(other, a)
    assert (a / "manifest.json").read_bytes() == before and (a / "program.bin").read_bytes() == other.program.blob
    with pytest.raises(PackageMismatchError, match="program.bin") as e:
        verify_file(a / "program.bin", man["files"]["program.bin"])
    assert isinstance(e.value, PackageFileMismatchError) and e.value.field in ("bytes", "sha256")
    assert sorted(os.listdir(a)) == sorted(ARTIFACTS)


def test_npz_bytes_is_byte_stable_and_loads(monkeypatch):
    """The export's tail_consts.npz: no time stamp (np.savez writes the current time into its zip entries)."""
    from generator.flows.artifacts import npz_bytes

    arrs = {"anchors": np.arange(12, dtype=np.float32).reshape(6, 2), "strides": np.array([8, 16, 32])}
    real = time.localtime
    monkeypatch.setattr(time, "localtime", lambda *a: real(0))
    x = npz_bytes(arrs)
    monkeypatch.setattr(time, "localtime", lambda *a: real(1.7e9))
    assert npz_bytes(arrs) == x
    import io
    with np.load(io.BytesIO(x)) as z:
        assert sorted(z.files) == sorted(arrs) and all(np.array_equal(z[k], v) for k, v in arrs.items())


# ---- kill -9 -------------------------------------------------------------------------------------------------------
KILLS = 20


def test_kill_9_during_compile_then_a_normal_run_gives_identical_artifacts(tmp_path):
    """`invoke compile --model SMALL --out D` killed with SIGKILL at 20 seeded random moments over an uninterrupted
    run's duration (about half of the runs start without calibration cache, so kills land in the calibration and its
    cache writes too). After every kill each artifact in D and each cache file is whole (byte-identical to an
    uninterrupted run's, or a JSON object with its key), only hidden temporary files besides; then a normal run
    succeeds and its artifacts are byte-identical to an uninterrupted run's into a fresh folder."""
    from generator.flows.pipeline import calib_cache_path

    m = small_yolo(tmp_path / "killed.onnx", seed=4105)
    cache = calib_cache_path(m).parent                      # ROOT/build/killed-<hash>/: this test's own
    shutil.rmtree(cache, ignore_errors=True)
    try:
        t0 = time.monotonic()
        r = _invoke("compile", "--model", str(m), "--out", str(tmp_path / "ref"))
        duration = time.monotonic() - t0
        assert r.returncode == 0, r.stderr
        want = {f: (tmp_path / "ref" / f).read_bytes() for f in ARTIFACTS}
        rng = random.Random(20261128)
        d = tmp_path / "d"
        killed = 0
        for i in range(KILLS):
            if i == 0 or rng.random() < 0.5:
                shutil.rmtree(cache, ignore_errors=True)
            p = subprocess.Popen([INVOKE, "compile", "--model", str(m), "--out", str(d)], cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                p.wait(timeout=rng.uniform(0.05, duration))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait(timeout=60)
                killed += 1
            else:
                assert p.returncode == 0, f"run {i} ended with {p.returncode}"
            for f in (d.iterdir() if d.is_dir() else ()):
                if f.name in want:
                    assert f.read_bytes() == want[f.name], f"run {i}: {f.name} differs after a kill"
                else:
                    assert f.name.startswith("."), f"run {i}: {f.name} left in the artifact folder"
            for f in (cache.iterdir() if cache.is_dir() else ()):
                if not f.name.startswith("."):
                    c = json.loads(f.read_text())
                    assert isinstance(c, dict) and c.get("key"), f"run {i}: cache {f.name} not whole"
        assert killed >= KILLS // 2, f"only {killed} of {KILLS} runs were killed (delays up to {duration:.1f} s)"
        r = _invoke("compile", "--model", str(m), "--out", str(d))
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        for f in ARTIFACTS:
            assert (d / f).read_bytes() == want[f], f
    finally:
        shutil.rmtree(cache, ignore_errors=True)

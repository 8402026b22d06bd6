"""generator/exec/ccache.py: the C-simulation compile goes through ccache, so the same sources rendered into another
folder are not compiled again (a hit in ccache's own statistics) and give a binary that behaves the same; without
ccache (YOLOFPGA_NO_CCACHE=1) the compile is g++ alone; the Verilator builds get OBJCACHE."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from generator.exec import ccache as cc
from generator.exec import csim

ACCEL = "#include <ap_int.h>\nint scale(int x) { ap_int<12> v = x; return (int)(v * 3); }\n"
TB = "#include <cstdio>\nint scale(int x);\nint main() { std::printf(\"%d\\n\", scale(1000)); return 0; }\n"


def _stats(env) -> dict:
    """ccache's counters (``--print-stats``: name TAB value) for the cache of ``env``."""
    r = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, env={**os.environ, **env},
                       check=True)
    return {k: int(v) for k, v in (ln.split("\t") for ln in r.stdout.splitlines() if "\t" in ln)}


def _folder(path):
    path.mkdir()
    (path / "accel.cpp").write_text(ACCEL)
    (path / "tb.cpp").write_text(TB)
    return path


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    if shutil.which("ccache") is None:
        pytest.fail("ccache not installed (./setup.sh installs it)")
    monkeypatch.delenv("YOLOFPGA_NO_CCACHE", raising=False)
    monkeypatch.setattr(cc, "build_dir", lambda *parts, shared=False: tmp_path / "cache")
    return tmp_path / "cache"


def test_same_sources_in_another_folder_hit_the_cache(tmp_path, cache_dir):
    env = cc.ccache_env()
    assert env["CCACHE_DIR"] == str(cache_dir)
    a = csim.compile_csim(_folder(tmp_path / "a"))
    s1 = _stats(env)
    b = csim.compile_csim(_folder(tmp_path / "b"))
    s2 = _stats(env)
    assert s1.get("direct_cache_hit", 0) + s1.get("preprocessed_cache_hit", 0) == 0 and s1["cache_miss"] == 2
    assert s2["direct_cache_hit"] + s2.get("preprocessed_cache_hit", 0) == 2 and s2["cache_miss"] == 2
    outs = [subprocess.run([str(x)], capture_output=True, text=True, check=True).stdout for x in (a, b)]
    assert outs == ["3000\n", "3000\n"]
    (tmp_path / "b" / "accel.cpp").write_text(ACCEL.replace("* 3", "* 5"))     # changed source: compiled again
    c = csim.compile_csim(tmp_path / "b")
    assert _stats(env)["cache_miss"] == 3
    assert subprocess.run([str(c)], capture_output=True, text=True, check=True).stdout == "5000\n"


def test_without_ccache_the_compile_is_plain_gxx(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("YOLOFPGA_NO_CCACHE", "1")
    assert cc.ccache() is None and cc.ccache_env() == {}
    exe = csim.compile_csim(_folder(tmp_path / "a"))
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout == "3000\n"
    assert not cache_dir.exists()


def test_verilator_builds_get_objcache(monkeypatch, cache_dir):
    """verilator_build hands make OBJCACHE=<ccache> and ccache's settings for the build only."""
    from generator.exec import rtl

    seen = {}

    class Runner:
        def build(self, **kw):
            seen.update(MAKEFLAGS=os.environ.get("MAKEFLAGS", ""), CCACHE_DIR=os.environ.get("CCACHE_DIR"))

    monkeypatch.delenv("CCACHE_DIR", raising=False)
    rtl.verilator_build(Runner())
    assert f"OBJCACHE={shutil.which('ccache')}" in seen["MAKEFLAGS"] and "CFG_CXXFLAGS_PCH_I=-include" in seen["MAKEFLAGS"]
    assert seen["CCACHE_DIR"] == str(cache_dir) and "CCACHE_DIR" not in os.environ

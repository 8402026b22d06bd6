"""The test run's own machinery (tests/conftest.py): the work units pytest-xdist hands out, their order by measured
CPU seconds (longest processing time first), and the cost file that order comes from."""
from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys

import conftest
from conftest import by_cost, work_unit


def test_units_in_decreasing_cost_each_unit_contiguous_in_collection_order():
    ids = ["tests/a/test_x.py::test_1", "tests/exec/test_rtl.py::test_rtl_layer_bit_exact[a]", "tests/a/test_x.py::test_2",
           "tests/exec/test_status.py::test_s", "tests/exec/test_rtl.py::test_rtl_layer_bit_exact[b]",
           "tests/b/test_y.py::test_3"]
    costs = {"_default": 0.1, "tests/b/test_y.py::test_3": 50.0, "tests/exec/test_status.py::test_s": 20.0,
             "tests/exec/test_rtl.py::test_rtl_layer_bit_exact[b]": 15.0}
    got = by_cost(ids, costs)
    assert sorted(got) == sorted(ids)
    units = [work_unit(n) for n in got]
    assert units[0] == work_unit("tests/b/test_y.py::test_3")                  # 50 CPU-s
    tiny = [n for n in got if work_unit(n) == "tiny"]                         # rtl [a], [b] and status: 35.1
    assert tiny == ["tests/exec/test_rtl.py::test_rtl_layer_bit_exact[a]", "tests/exec/test_status.py::test_s",
                    "tests/exec/test_rtl.py::test_rtl_layer_bit_exact[b]"]
    assert got[1:4] == tiny                                                    # contiguous, second
    seen = [work_unit(n) for i, n in enumerate(got) if i == 0 or work_unit(got[i - 1]) != work_unit(n)]
    assert len(seen) == len(set(seen))                                         # each unit in one run


def test_order_follows_the_costs_against_a_brute_force_sort():
    rng = random.Random(7)
    ids = [f"tests/m{rng.randrange(9)}/test_f{rng.randrange(4)}.py::test_{i}" for i in range(200)]
    costs = {n: rng.random() * 10 for n in ids if rng.random() < 0.5}
    costs["_default"] = 0.3
    got = by_cost(ids, costs)
    total = {}
    for n in ids:
        total[work_unit(n)] = total.get(work_unit(n), 0.0) + costs.get(n, 0.3)
    firsts = []
    for n in got:
        if work_unit(n) not in firsts:
            firsts.append(work_unit(n))
    assert [total[u] for u in firsts] == sorted(total.values(), reverse=True)


def test_without_costs_the_collection_order_stays():
    ids = [f"tests/m/test_f.py::test_{i}" for i in range(5)]
    assert by_cost(ids, {}) == ids


def test_the_shipped_cost_file_loads_and_names_tests():
    costs = conftest._load_costs()
    assert costs.get("_default", 0) > 0 and len(costs) > 50
    assert all(v >= conftest.COST_NAMED for k, v in costs.items() if k != "_default")


def test_a_run_writes_its_costs(tmp_path):
    """A pytest run with YOLOFPGA_CPU_JSON writes the JSON the scheduler reads: "_default" and the named tests."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "conftest.py").write_text(                 # (the repository's hooks, loaded under a name of their own)
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('repo_conftest', {str(conftest.__file__)!r})\n"
        "m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\n"
        "globals().update({k: getattr(m, k) for k in dir(m) if k.startswith('pytest_')})\n")
    (d / "test_spin.py").write_text("import time\n\ndef test_spin():\n    t = time.process_time()\n"
                                    "    while time.process_time() - t < 0.7:\n        pass\n\n"
                                    "def test_quick():\n    pass\n")
    out = tmp_path / "cpu.json"
    env = {"YOLOFPGA_CPU_JSON": str(out), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", str(d)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(out.read_text())
    assert set(got) == {"_default", "t/test_spin.py::test_spin"} and got["t/test_spin.py::test_spin"] >= 0.7
    assert 0 <= got["_default"] < conftest.COST_NAMED


def test_xdist_runs_each_unit_in_one_worker(tmp_path):
    """Under ``-n 2 --dist loadgroup`` the tests of one work unit (here "tiny": a layer-suite module and a status
    module, as the repository's node ids) run in one worker, even though the costliest-first order differs from the
    collection order (loose tests collected first): each worker runs the tests at the indexes it is sent in its own
    collection, so the scheduler must not reorder the collections it indexes."""
    assert importlib.util.find_spec("xdist") is not None, "pytest-xdist is installed by setup.sh"
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(conftest.Path(conftest.__file__).parent)!r})\n"
        f"spec = importlib.util.spec_from_file_location('repo_conftest', {str(conftest.__file__)!r})\n"
        "m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\n"
        "globals().update({k: getattr(m, k) for k in dir(m) if k.startswith('pytest_')})\n")
    rec = ("import os, pathlib\n\ndef _rec(name):\n"
           f"    pathlib.Path({str(tmp_path / 'out')!r}, name).write_text(os.environ['PYTEST_XDIST_WORKER'])\n\n")
    for rel, body in [("tests/a_loose/test_loose.py", "".join(f"def test_l{i}():\n    _rec('l{i}')\n\n" for i in range(4))),
                      ("tests/exec/test_rtl.py", "import pytest\n\n@pytest.mark.parametrize('i', range(6))\n"
                                                 "def test_rtl_layer_bit_exact(i):\n    _rec(f'rtl{i}')\n"),
                      ("tests/exec/test_status.py", "".join(f"def test_s{i}():\n    _rec('s{i}')\n\n" for i in range(3)))]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rec + body)
    (tmp_path / "out").mkdir()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                        "tests"], capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
    ran = {p.name: p.read_text() for p in (tmp_path / "out").iterdir()}
    assert len(ran) == 13
    tiny = {w for n, w in ran.items() if n.startswith(("rtl", "s"))}
    assert len(tiny) == 1, f"the 'tiny' unit ran in workers {sorted(tiny)}"

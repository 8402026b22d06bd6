"""Test-session policy: a skipped test fails the run unless the skip is declared expected; how pytest-xdist splits
the run over the cores.

A skip hides a check; in CI (a clean clone where ``./setup.sh`` installed every tool) nothing should be skipped.
A test that may legitimately skip says so with ``@pytest.mark.expected_skip("why")``; any other skip (a missing
tool, an ``importorskip`` at module level, a ``pytest.skip`` inside a test) is listed at the end of the run and
turns the exit status into a failure. Deselected tests (``-m 'not slow'``) are not skips. Under pytest-xdist a
worker marks the report of an unexpected skip (attribute ``unexpected_skip``, which travels with the report) and
the controller, which writes the summary and sets the exit status, collects it; a plain run does both.

``invoke test`` runs ``-n auto --dist loadgroup``: :func:`pytest_xdist_make_scheduler` hands out work units
(:func:`work_unit`), each run whole by one worker: the tests sharing a build (:data:`SHARED_BUILD_GROUPS`), the
tests of a module that has module- or session-scoped fixtures, any other test alone. Every worker builds into its
own folders (:func:`generator.build_dir`), so no two workers write one build folder whatever the units; the units
only decide what is built once rather than once per worker.
"""
from __future__ import annotations

import functools
import json
import os
import re
import resource
from pathlib import Path

import pytest
from hypothesis import settings

_UNEXPECTED = []
_CPU = []            # (CPU-s, node id) of each test, collected where the run is reported
#: how many of the costliest tests (CPU seconds) the summary lists
CPU_TOP = 25
#: environment variable naming a JSON file that receives the tests' CPU seconds (:func:`_write_cpu_json`), to find
#: what to trim and to refresh :data:`COSTS_FILE`
CPU_JSON_ENV = "YOLOFPGA_CPU_JSON"
#: the tests' CPU seconds as last measured (a file written through CPU_JSON_ENV on a clean clone): the scheduler hands
#: out the costliest work units first (longest processing time first), so no long unit starts last; a test missing
#: from it counts as the file's "_default"; a stale file only changes the order, never what runs
COSTS_FILE = Path(__file__).resolve().parent / "cpu_costs.json"
#: tests of at least this many CPU seconds are written by name; the others as their mean, "_default"
COST_NAMED = 0.5

# Hypothesis profiles (tests/flows/test_cli_property.py): the default run is derandomized and short (the same
# examples on every run, about a minute); `--hypothesis-profile=long` draws fresh examples, many more of them.
settings.register_profile("yolofpga", max_examples=30, derandomize=True, database=None, deadline=None,
                          print_blob=True)
settings.register_profile("long", max_examples=400, derandomize=False, database=None, deadline=None,
                          print_blob=True)
settings.load_profile("yolofpga")


#: pytest-xdist work units across modules (``invoke test`` runs ``-n auto --dist loadgroup``: the tests of one unit
#: run in one worker, so the builds they share, tests/helpers.py shared_executor, are made once there), by node id
#: prefix: "tiny" shares TINY's RTL and C-simulation builds
SHARED_BUILD_GROUPS = {
    "tests/exec/test_rtl.py::test_rtl_layer_bit_exact": "tiny",
    "tests/exec/test_rtl.py::test_rtl_mixed_precision_bit_exact": "tiny",
    "tests/backends/test_hls_pre_insn.py::": "tiny",                # (PRE on TINY's C-simulation build)
    "tests/exec/test_status.py::": "tiny",
    "tests/frontend/test_yolo_family.py::test_family_on_tiny_": "tiny",
    "tests/rtl/test_pre_insn.py::": "tiny",                         # (PRE on TINY's RTL build)
    "tests/eval/test_fuzz.py::test_fuzz_rtl": "fuzz-rtl",          # (build/rtl_sim/fuzz-tiny for both tiers)
    "tests/eval/test_fuzz.py::test_fuzz_csim": "fuzz-csim",        # (apart from the module's golden cases)
    "tests/exec/test_rtl.py::test_rtl_span_loads_bit_exact": "rtl-16x8",
    "tests/exec/test_rtl.py::test_rtl_tm_ne_tn_bit_exact": "rtl-16x8",
    "tests/estimate/test_rtl_resources.py::test_tiny": "yosys-tiny",        # (slow: TINY synthesized once)
    "tests/estimate/test_rtl_resources.py::test_rtl_resource_model_matches_yosys_on_tiny": "yosys-tiny",
    "tests/estimate/test_rtl_timing.py::test_tiny": "yosys-tiny",
}
_SHARED_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*\bscope\s*=\s*[\"'](module|session)[\"']")


def pytest_configure(config):
    config.addinivalue_line("markers", "expected_skip(reason): this test may skip without failing the run")


@functools.lru_cache(maxsize=None)
def _has_shared_fixture(module: str) -> bool:
    """Whether the test module (path relative to the repository) defines a module- or session-scoped fixture."""
    p = Path(__file__).resolve().parent.parent / module
    return p.is_file() and bool(_SHARED_FIXTURE.search(p.read_text(encoding="utf-8")))


def work_unit(nodeid: str) -> str:
    """The pytest-xdist work unit of a test, from its node id: its shared build's (:data:`SHARED_BUILD_GROUPS`),
    else its module's when the module defines a module- or session-scoped fixture (made once, in the worker running
    the unit), else the test alone (the best balance between the workers)."""
    for prefix, group in SHARED_BUILD_GROUPS.items():
        if nodeid.startswith(prefix):
            return group
    module = nodeid.split("::")[0]
    return module if _has_shared_fixture(module) else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the work units of :func:`work_unit` (xdist's own channel for ``xdist_group`` marks,
    a suffix written into the node id, no longer takes effect under pytest 9.2: pytest-dev/pytest-xdist#1386);
    xdist's LoadScope scheduling otherwise, each unit to the next idle worker, the units ordered by their CPU
    seconds in :data:`COSTS_FILE`, costliest first (:func:`by_cost`). Other ``--dist`` modes keep xdist's
    schedulers."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def schedule(self) -> None:
            """xdist's LoadScopeScheduling.schedule with the units queued costliest first. The registered
            collections stay as the workers collected them: a worker runs the tests at the indexes it is sent in
            its own collection, so reordering them would hand it other tests than the unit's."""
            if self.collection is not None or not self.registered_collections:
                return super().schedule()
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            if not self.collection:
                return
            for nodeid in by_cost(self.collection, _load_costs()):
                self.workqueue.setdefault(work_unit(nodeid), {})[nodeid] = False
            for _ in range(len(self.nodes) - len(self.workqueue)):     # (no more workers than units)
                unused, _assigned = self.assigned_work.popitem()
                unused.shutdown()
            for node in self.nodes:
                self._assign_work_unit(node)
            for node in self.nodes:
                self._reschedule(node)
            if not self.workqueue:
                for node in self.nodes:
                    node.shutdown()

    return UnitScheduling(config, log)


def _load_costs() -> dict:
    """:data:`COSTS_FILE` as {node id: CPU-s} with "_default"; {} when it is missing or not such a JSON object (the
    order then is by unit size alone)."""
    try:
        d = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in d.items()} if isinstance(d, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def by_cost(nodeids: list, costs: dict) -> list:
    """``nodeids`` grouped by work unit (:func:`work_unit`), the units in decreasing order of their summed CPU
    seconds (``costs``: node id -> CPU-s, "_default" for a test not in it), each unit's tests in their collection
    order; ties keep the collection order."""
    default = costs.get("_default", 0.1)
    units, cost = {}, {}
    for n in nodeids:
        u = work_unit(n)
        units.setdefault(u, []).append(n)
        cost[u] = cost.get(u, 0.0) + costs.get(n, default)
    order = sorted(units, key=lambda u: -cost[u])                  # (stable: collection order among equals)
    return [n for u in order for n in units[u]]


def _reason(report) -> str:
    """The skip reason of a report (its longrepr is (path, line, reason) for a skip)."""
    return report.longrepr[2] if isinstance(report.longrepr, (tuple, list)) else str(report.longrepr)


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its finished children (compilers, simulators)."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Count the test's CPU seconds (setup, call, teardown; its subprocesses included): the cost of a test whatever
    the other worker does meanwhile, which wall-clock durations under pytest-xdist are not."""
    item.stash[_CPU_START] = _cpu_seconds()
    yield


_CPU_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.skipped and not hasattr(rep, "wasxfail") and item.get_closest_marker("expected_skip") is None:
        rep.unexpected_skip = _reason(rep)          # (serialized with the report to the xdist controller)
    if rep.when == "teardown" and _CPU_START in item.stash:
        rep.user_properties.append(("cpu_s", _cpu_seconds() - item.stash[_CPU_START]))


def pytest_runtest_logreport(report):
    """Where the run is reported (the controller under xdist, else the one process): note an unexpected skip and
    a test's CPU seconds."""
    if getattr(report, "unexpected_skip", None) is not None:
        _UNEXPECTED.append(f"{report.nodeid}: {report.unexpected_skip}")
    for k, v in getattr(report, "user_properties", ()):
        if k == "cpu_s":
            _CPU.append((v, report.nodeid))


def pytest_collectreport(report):
    """A module skipped whole (a worker's failed or skipped collection reports reach the controller too)."""
    if report.skipped:
        _UNEXPECTED.append(f"{report.nodeid} (whole module): {_reason(report)}")


def pytest_terminal_summary(terminalreporter):
    if _CPU:
        total = sum(c for c, _ in _CPU)
        terminalreporter.section(f"costliest {CPU_TOP} tests by CPU seconds (subprocesses included; all tests: "
                                 f"{total:.0f} CPU-s)")
        for c, nodeid in sorted(_CPU, reverse=True)[:CPU_TOP]:
            terminalreporter.write_line(f"{c:8.1f}  {nodeid}")
        if os.environ.get(CPU_JSON_ENV):
            _write_cpu_json(Path(os.environ[CPU_JSON_ENV]))
    if _UNEXPECTED:
        terminalreporter.section("unexpected skips (each fails the run)", red=True)
        for line in _UNEXPECTED:
            terminalreporter.write_line(line)


def _write_cpu_json(path):
    """The tests' CPU seconds (summed over their phases) written atomically to ``path`` as JSON: {"_default": the
    mean of the tests under :data:`COST_NAMED` CPU-s, node id: CPU-s of every other test, costliest first}."""
    per = {}
    for c, nodeid in _CPU:
        per[nodeid] = per.get(nodeid, 0.0) + c
    small = [v for v in per.values() if v < COST_NAMED]
    out = {"_default": round(sum(small) / max(len(small), 1), 3)}
    out.update((k, round(v, 1)) for k, v in sorted(per.items(), key=lambda kv: -kv[1]) if v >= COST_NAMED)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(out, f, indent=0)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def pytest_sessionfinish(session, exitstatus):
    if _UNEXPECTED and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

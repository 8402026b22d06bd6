"""Test-session policy: a skipped test fails the run unless the skip is declared expected.

A skip hides a check; in CI (a clean clone where ``./setup.sh`` installed every tool) nothing should be skipped.
A test that may legitimately skip says so with ``@pytest.mark.expected_skip("why")``; any other skip (a missing
tool, an ``importorskip`` at module level, a ``pytest.skip`` inside a test) is listed at the end of the run and
turns the exit status into a failure. Deselected tests (``-m 'not slow'``) are not skips.
"""
from __future__ import annotations

import pytest
from hypothesis import settings

_UNEXPECTED = []

# Hypothesis profiles (tests/flows/test_cli_property.py): the default run is derandomized and short (the same
# examples on every run, about a minute); `--hypothesis-profile=long` draws fresh examples, many more of them.
settings.register_profile("yolofpga", max_examples=30, derandomize=True, database=None, deadline=None,
                          print_blob=True)
settings.register_profile("long", max_examples=400, derandomize=False, database=None, deadline=None,
                          print_blob=True)
settings.load_profile("yolofpga")


def pytest_configure(config):
    config.addinivalue_line("markers", "expected_skip(reason): this test may skip without failing the run")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.skipped and not hasattr(rep, "wasxfail") and item.get_closest_marker("expected_skip") is None:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        _UNEXPECTED.append(f"{item.nodeid}: {reason}")


def pytest_collectreport(report):
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _UNEXPECTED.append(f"{report.nodeid} (whole module): {reason}")


def pytest_terminal_summary(terminalreporter):
    if _UNEXPECTED:
        terminalreporter.section("unexpected skips (each fails the run)", red=True)
        for line in _UNEXPECTED:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    if _UNEXPECTED and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

"""The suite's time budget, kept by every run: no test of `make test` takes over 20 s unless its docstring says why.

A test that needs more says so in its docstring with the words "over the 20 s budget" and the reason. Every run
lists, in its terminal summary, the tests over the budget without such a reason; under CI=true the run fails when one
of them took over twice the budget (a margin wide enough for a machine whose cores other work keeps busy, narrow
enough that a test grown several times slower does not land). `benchmarks/suite_time.py` prints the suite's time and
its slowest tests next to the figures it last recorded (docs/testing.md).
"""

from __future__ import annotations

import os
import re

import pytest

BUDGET_S = 20.0
HARD_LIMIT_S = 2 * BUDGET_S
REASON = re.compile(r"over the 20 s budget", re.IGNORECASE)
PROPERTY = "over_budget_reason"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Tell the report (which xdist carries to the controller) whether the test's docstring allows it more time."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        doc = getattr(getattr(item, "function", None), "__doc__", None) or ""
        report.user_properties.append((PROPERTY, bool(REASON.search(doc))))


class TimeBudget:
    def __init__(self) -> None:
        self.budget_s, self.hard_limit_s = BUDGET_S, HARD_LIMIT_S  # a run's own, fixed when it starts
        self.over: list[tuple[float, str]] = []

    def pytest_runtest_logreport(self, report) -> None:
        allowed = dict(report.user_properties).get(PROPERTY, False)
        if report.when == "call" and report.duration > self.budget_s and not allowed:
            self.over.append((report.duration, report.nodeid))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.over:
            return
        terminalreporter.section(f"tests over the {self.budget_s:g} s budget, with no reason in their docstring")
        for duration, nodeid in sorted(self.over, reverse=True):
            terminalreporter.line(f"{duration:7.2f}s {nodeid}")
        if self.failing():
            terminalreporter.line(f"CI=true: the run fails, a test took over {self.hard_limit_s:g} s", red=True)

    def failing(self) -> bool:
        return os.environ.get("CI") == "true" and any(duration > self.hard_limit_s for duration, _ in self.over)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session) -> None:
        if self.failing() and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) hears every report
        config.pluginmanager.register(TimeBudget(), "rstck-suite-time-budget")

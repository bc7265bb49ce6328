"""The suite's time guard (tests/time_budget.py): a test over the budget with no reason is listed, and fails a CI run
when it is grossly over; a reason in its docstring lets it be."""

from __future__ import annotations

import pytest

from . import time_budget

SLOW_TESTS = '''
import time

def test_slow_for_no_reason():
    time.sleep(0.3)

def test_slow_for_a_reason():
    """Over the 20 s budget: it waits out a deadline."""
    time.sleep(0.3)
'''


@pytest.fixture
def tight_budget(monkeypatch, pytester):
    monkeypatch.setattr(time_budget, "BUDGET_S", 0.1)
    monkeypatch.setattr(time_budget, "HARD_LIMIT_S", 0.2)
    pytester.makepyfile(test_slow=SLOW_TESTS)


def test_a_slow_test_without_a_reason_is_listed_and_fails_a_ci_run(tight_budget, pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_inprocess("-p", "tests.time_budget", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["*tests over the 0.1 s budget, with no reason in their docstring*",
                                 "*s test_slow.py::test_slow_for_no_reason",
                                 "CI=true: the run fails, a test took over 0.2 s"])
    result.stdout.no_fnmatch_line("*test_slow_for_a_reason*")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2)


def test_outside_ci_the_list_is_only_said(tight_budget, pytester, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest_inprocess("-p", "tests.time_budget", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["*s test_slow.py::test_slow_for_no_reason"])
    assert result.ret == pytest.ExitCode.OK

"""The hostile targets import and build without doing anything hostile, and each is described."""

from __future__ import annotations

import threading

import rstck


def test_every_case_builds_a_target_and_has_an_expectation():
    threads_before = set(threading.enumerate())
    from . import targets

    assert set(targets.CASES) == set(targets.EXPECTED)
    for name, build in targets.CASES.items():
        target = build()
        assert isinstance(target, rstck.Target), name
        assert target.name == name
        assert isinstance(getattr(targets, name), rstck.Target), name
        assert isinstance(targets.EXPECTED[name], str) and targets.EXPECTED[name], name
    assert set(threading.enumerate()) <= threads_before, "building a target must not start a thread"

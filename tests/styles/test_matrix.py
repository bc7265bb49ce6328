"""Every combination of the threading-style matrix that the specification allows is conformant: `rstck check`, run
as a user runs it (a process per target, the fuzz phase included), finds no fail, warn or error, and writes no
reproducer, since there is nothing to reproduce. `make test` checks a fixed, seeded sample in which every value of
every choice appears; `make soak` checks all of it, and the sample again while two busy processes load both cores
(docs/testing.md, "The threading-style matrix")."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from .choices import CHOICES, DELIVERIES, GUARDS, ON_SUBSCRIBES, REQUESTS, ROLES, Style, allowed_styles, \
    covering_sample, exclusion
from .running import CheckRun, rstck_check

SAMPLE_SEED = 32
SAMPLE = covering_sample(allowed_styles(), tuple(CHOICES), size=10, seed=SAMPLE_SEED)


def assert_conformant(run: CheckRun) -> None:
    assert run.rows, run.summary()
    assert run.offending() == [], run.summary() + "\n\n" + "\n\n".join(run.offending())
    assert run.returncode == 0, run.summary()
    assert f"fuzz {run.style.role}:" in run.output and "no findings" in run.output, run.summary()
    # nothing to reproduce: no script, and no finding counted for one
    assert run.reproducers == [] and "reproducers: 0 of 0 findings" in run.output, run.summary()


def test_the_sample_holds_every_value_of_every_choice():
    assert 8 <= len(SAMPLE) <= 12
    for choice, values in CHOICES.items():
        assert {getattr(style, choice) for style in SAMPLE} == set(values), choice


def test_only_a_lock_free_style_whose_state_spans_threads_is_left_out():
    every = [Style(*values) for values in itertools.product(ROLES, DELIVERIES, GUARDS, ON_SUBSCRIBES, REQUESTS)]
    excluded = {style: exclusion(style) for style in every if exclusion(style) is not None}
    assert all(style.guard == "no_lock" and reason for style, reason in excluded.items())
    # a lock-free style stays where one thread makes every call: a loop, or a subscriber on the caller's thread
    kept = {(s.role, s.delivery) for s in allowed_styles() if s.guard == "no_lock"}
    assert kept == {(role, loop) for role in ROLES for loop in ("asyncio_loop", "loop_thread")} | {
        ("subscriber", "caller")}
    assert len(allowed_styles()) + len(excluded) == len(every)


@pytest.mark.parametrize("style", SAMPLE, ids=lambda style: style.name)
def test_rstck_check_finds_the_style_conformant(style):
    assert_conformant(rstck_check(style))


@pytest.mark.soak
@pytest.mark.parametrize("style", allowed_styles(), ids=lambda style: style.name)
def test_every_allowed_style_is_conformant(style):
    assert_conformant(rstck_check(style))


@pytest.mark.soak
def test_the_sample_is_conformant_while_both_cores_are_busy():
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        runs = [rstck_check(style) for style in SAMPLE]
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    for run in runs:
        assert_conformant(run)

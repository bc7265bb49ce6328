"""The conformant zoo (tests/conformant/): implementations written the way Python libraries are
written, in a dozen styles, none of them taking anything from the kit. rstck must find every one
conformant, fuzzing must find nothing, the verdicts must not change from run to run, and the
kit's own probes must never break a rule against them (or against the shipped references).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

import rstck.reference.targets as reference_targets
from rstck.fuzz.budgets import ROLES
from rstck.fuzz.run import run_machine
from rstck.execution.plan import plan
from rstck.execution.runner import Result, run_check
from rstck.core.target import Target
from rstck.core.verdict import Verdict

from .conformant.targets import (EXPECTED_WARNINGS, PROCESSOR_TARGETS, PUBLISHER_TARGETS, SUBSCRIBER_TARGETS,
                                 fresh)
from .stability import stability_runs

CONFORMANT = PUBLISHER_TARGETS + SUBSCRIBER_TARGETS + PROCESSOR_TARGETS
REFERENCES = sorted(name for name, value in vars(reference_targets).items() if isinstance(value, Target))
# Per role and seed: the suite runs one seed, the soak seven more (rstck check's fuzz phase runs 100 by default).
FUZZ_EXAMPLES = 50
FUZZ_SOAK_SEEDS = 7
REPO = pathlib.Path(__file__).resolve().parent.parent


def check_all(target: Target) -> list[Result]:
    return [run_check(p.check, p.target, timeout_s=5.0) for p in plan(target)]


def kit_faults(results: list[Result]) -> list[str]:
    return [f"{r.rule} {r.check}: {r.reason}" for r in results if "the kit broke" in r.reason]


def unexpected(name: str, results: list[Result]) -> list[str]:
    allowed = EXPECTED_WARNINGS.get(name, set())
    return [f"{r.rule} {r.check}: {r.verdict.value}\n{r.message}" for r in results
            if r.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR) and (r.violated or r.rule) not in allowed]


@pytest.mark.parametrize("name", CONFORMANT)
def test_every_check_passes_and_the_kit_breaks_no_rule(name):
    results = check_all(fresh(name))
    assert kit_faults(results) == []
    assert unexpected(name, results) == []


@pytest.mark.parametrize("name", CONFORMANT)
def test_fuzzing_finds_nothing(name):
    assert_fuzzing_finds_nothing(fresh(name), seeds=[0])


@pytest.mark.soak
@pytest.mark.parametrize("name", CONFORMANT)
def test_fuzzing_finds_nothing_in_more_seeds(name):
    assert_fuzzing_finds_nothing(fresh(name), seeds=range(1, FUZZ_SOAK_SEEDS + 1))


def assert_fuzzing_finds_nothing(target: Target, seeds) -> None:
    findings = []
    for role in (r for r in ROLES if r in target.capabilities):
        for seed in seeds:
            report = run_machine(target, role, seed=seed, examples=FUZZ_EXAMPLES, steps=20, profile="rstck-ci",
                                 timeout_s=5.0, shrink=False)
            findings += report.findings
    assert not findings, "\n\n".join(f"{f.role} {f.rule or f.kind}: {f.observed}\n{f.trace}" for f in findings)


@pytest.mark.parametrize("name, role", [("worker_thread", "subscriber"), ("queue_worker", "publisher")])
def test_each_fuzz_example_winds_down_what_it_started(name, role):
    # Both start a thread per subscription that ends only with its stream: an example that left
    # streams open would leave one parked thread behind per subscription, thousands in a campaign.
    before = set(threading.enumerate())
    report = run_machine(fresh(name), role, seed=0, examples=50, steps=20, profile="rstck-ci", timeout_s=5.0,
                         shrink=False)
    assert not report.findings
    deadline = time.monotonic() + 10  # a bound for the threads to see their stream end, not a decision
    left = [t for t in threading.enumerate() if t not in before]
    for thread in left:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert [t.name for t in left if t.is_alive()] == []


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("name", CONFORMANT)
def test_the_verdicts_are_the_same_in_every_run(name):
    # In a process of its own, as a user's run is: the idle threads other tests' implementations
    # left in this worker are no part of it.
    script = "import json, sys; from tests.test_conformant import verdict_runs; print(json.dumps(verdict_runs(*sys.argv[1:])))"
    done = subprocess.run([sys.executable, "-c", script, name, str(stability_runs())], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout.splitlines()[-1])
    assert len(runs) == stability_runs()
    for number, run in enumerate(runs, start=1):
        assert run["kit_faults"] == [] and run["unexpected"] == [], f"run {number}"
        assert run["verdicts"] == runs[0]["verdicts"], f"run {number} differs from run 1"


def verdict_runs(name: str, runs: str) -> list[dict]:
    """Every check against a fresh `name`, `runs` times: the verdicts and whatever was wrong, per run."""
    found = []
    for _ in range(int(runs)):
        results = check_all(fresh(name))
        found.append({"verdicts": [(r.rule, r.check, r.verdict.value) for r in results],
                      "kit_faults": kit_faults(results), "unexpected": unexpected(name, results)})
    return found


@pytest.mark.parametrize("name", REFERENCES)
def test_the_kit_breaks_no_rule_against_a_reference(name):
    target = getattr(reference_targets, name)
    results = check_all(target)
    assert kit_faults(results) == []
    assert [r for r in results if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN)] == []

"""The fuzzer and the blind-spot mutants (tests/zoo/blind_spots.py).

- a publisher that signals its end again for a request made after it (1.6): the fuzzer's probes now request
  after a terminal signal, as a subscriber may, and find it within a small budget;
- a lazy publisher on an executor that answers request(0) at the end of its stream with on_complete (3.9): an
  on_complete from another thread is no longer excused where nothing was under way;
- a prefetching processor that completes downstream before passing on what it holds (4.1).

The last two need an ordering that random generation reaches rarely, so their steps are replayed as given:
the machines' invariants are what is under test there.
"""

from __future__ import annotations


import pytest

from rstck.fuzz.machine import FuzzViolation
from rstck.fuzz.processor import ProcessorMachine
from rstck.fuzz.publisher import PublisherMachine
from rstck.fuzz.run import run_machine

from .fuzz_replay import ReplayContext
from .zoo import blind_spots

RUN_EXAMPLES = 50
BUDGET_EXAMPLES = 1_500
STEPS = 30
TIMEOUT_S = 1.0
CASES = {case.name: case for case in blind_spots.MUTANTS + blind_spots.GUARDS}

FOUND = {  # mutant -> (role, the rules its defect may be charged to)
    "resignals_complete_on_request": ("publisher", {"1.6"}),
    "fails_again_on_request": ("publisher", {"1.6"}),
}
GUARDS = [("lazy_executor_delivery", "publisher"), ("prefetching_identity", "processor")]
GUARD_EXAMPLES = 100


def found_rules(target, role: str, wanted: set[str]) -> tuple[set[str], int]:
    found: set[str] = set()
    examples, seed = 0, 0
    while examples < BUDGET_EXAMPLES and not found & wanted:
        report = run_machine(target, role, seed=seed, examples=RUN_EXAMPLES, steps=STEPS, profile="rstck-default",
                             timeout_s=TIMEOUT_S, shrink=False)
        found |= {f.rule or f"error: {f.observed}" for f in report.findings}
        examples += report.examples
        seed += 1
    return found, examples


@pytest.mark.parametrize("name", FOUND)
def test_fuzzer_finds_blind_spot_mutant(name):
    role, rules = FOUND[name]
    found, examples = found_rules(CASES[name].target, role, rules)
    assert found & rules, f"{name}: none of {sorted(rules)} in {examples} examples (found {sorted(found)})"


@pytest.mark.parametrize("name,role", GUARDS, ids=[name for name, _ in GUARDS])
def test_fuzzer_reports_nothing_on_the_correct_ones(name, role):
    target = CASES[name].target
    findings = []
    for seed in range(GUARD_EXAMPLES // RUN_EXAMPLES):
        report = run_machine(target, role, seed=seed, examples=RUN_EXAMPLES, steps=STEPS, profile="rstck-default",
                             timeout_s=2.0, shrink=False)
        findings += report.findings
    assert not findings, "\n\n".join(f"{f.rule}: {f.observed}\n{f.trace}" for f in findings)


def replay(name: str, machine_class, steps) -> str | None:
    """Run `steps` (machine -> None) on a fresh machine against zoo case `name`; the rule of the violation
    they raise, or None."""
    machine = machine_class(ReplayContext(CASES[name].target, machine_class.role, timeout_s=2.0))
    try:
        for run_step in steps:
            run_step(machine)
        return None
    except FuzzViolation as violation:
        return violation.rule
    finally:
        machine.teardown()


def _subscribe(machine, size: int = 0) -> None:
    machine.subscribe(source="new", which=0, size=size, on_subscribe=None, on_next=None, dwell=False)


REQUEST_ZERO_ONCE_SETTLED_AT_THE_END = [_subscribe, PublisherMachine.settle,
                                        lambda m: m.request(which=0, n=0), PublisherMachine.settle]


@pytest.mark.parametrize("name,rule", [("lazy_executor_ends_on_any_request", "3.9"),
                                       ("lazy_executor_delivery", None)])
def test_request_zero_once_settled_is_owed_on_error(name, rule):
    """Nothing was under way when request(0) came: an on_complete from the executor's thread is no excuse."""
    assert replay(name, PublisherMachine, REQUEST_ZERO_ONCE_SETTLED_AT_THE_END) == rule


@pytest.mark.parametrize("name,rule", [("completes_before_draining", "4.1"), ("prefetching_identity", None)])
def test_completion_waits_for_what_the_processor_holds(name, rule):
    steps = [lambda m: m.wire(dwell=False), _subscribe, lambda m: m.request(which=0, n=1),
             lambda m: ProcessorMachine.upstream(m, action="next", count=4, method="on_next"),
             lambda m: ProcessorMachine.upstream(m, action="complete", count=1, method="on_next"),
             ProcessorMachine.settle]
    assert replay(name, ProcessorMachine, steps) == rule

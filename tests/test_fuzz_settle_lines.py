"""The `(settled)` lines of a fuzz finding's trace: a settle step with nothing to settle (none since the example
began, or since the target last settled exactly) says nothing and leaves no line; a settle that waited for
something, or after which a verdict was drawn, keeps its line.

Observed: the shrunk trace of `rstck check`'s fuzz phase against a publisher that ignores request(0) began with
twelve `(settled)` lines before the first step that did anything."""

from __future__ import annotations

import re

from rstck.fuzz.machine import FuzzViolation
from rstck.fuzz.publisher import PublisherMachine
from rstck.fuzz.run import run_machine

from .fuzz_replay import ReplayContext
from .zoo import publishers as p
from .zoo.publisher_mutants import publisher_target

SETTLED = re.compile(r"^ *\d+  \(settled(?::[^)]*)?\)$")


def rows(trace: str) -> list[str]:
    """The numbered rows of a rendered trace, without its legend."""
    return [line for line in trace.split("\nwhere:")[0].splitlines() if re.match(r"^ *\d+  ", line)]


def empty_settles(trace: str) -> list[str]:
    """Settle rows with nothing recorded before them since the example began or since the settle before."""
    found, previous = [], None
    for row in rows(trace):
        if SETTLED.match(row) and (previous is None or SETTLED.match(previous)):
            found.append(row)
        previous = row
    return found


def test_the_shrunk_trace_of_the_check_commands_fuzz_phase_has_no_empty_settle_lines():
    """The fuzz phase's own budget (rstck/fuzz/phase.py) on the publisher it was observed on: seeded, and cut by
    a count of examples, so the same example is found every run."""
    target = publisher_target("ignores request(0)", subscription=p.IgnoresNonPositiveRequest)
    report = run_machine(target, "publisher", seed=0, examples=50, steps=20, profile="rstck-ci", timeout_s=5.0,
                         budget=100)
    [finding] = [f for f in report.findings if f.rule == "3.9"]
    assert not empty_settles(finding.trace), finding.trace
    assert SETTLED.match(rows(finding.trace)[-2]) and rows(finding.trace)[-1].split()[1] == "!!", finding.trace


def replayed_trace(target, steps) -> tuple[str, str]:
    """Run `steps` (machine -> None) on a fresh publisher machine; the trace, and what the violation the steps
    raised observed ("" if none)."""
    machine = PublisherMachine(ReplayContext(target, "publisher", timeout_s=2.0))
    try:
        for run_step in steps:
            run_step(machine)
        return machine.session.trace.render(), ""
    except FuzzViolation as violation:
        return violation.session.trace.render(), violation.observed
    finally:
        machine.teardown()


def subscribe(size: int):
    return lambda machine: machine.subscribe(source="new", which=0, size=size, on_subscribe=None, on_next=None,
                                             dwell=False)


def request(n: int):
    return lambda machine: machine.request(which=0, n=n)


settle = PublisherMachine.settle


def test_settles_with_nothing_to_settle_leave_no_line_and_the_numbers_the_findings_cite_stay_right():
    target = publisher_target("excess on_next", subscription=p.ExcessOnNext)
    trace, observed = replayed_trace(target, [settle, settle, settle, subscribe(3)])
    assert not any(SETTLED.match(row) for row in rows(trace)), trace
    cited = re.match(r"#(\d+) (\S+) is on_next number 1", observed)
    assert cited, observed
    assert any(row.split(maxsplit=1) == [cited.group(1), cited.group(2)] for row in rows(trace)), (observed, trace)


def test_a_settle_that_waited_for_the_targets_thread_keeps_its_line_and_one_right_after_it_leaves_none():
    target = publisher_target("executor delivery", subscription=p.ExecutorSubscription, uses=("executor",))
    trace, observed = replayed_trace(target, [subscribe(3), request(2), settle, settle])
    lines = rows(trace)
    assert not observed and "on_next(1)" in lines[-2] and SETTLED.match(lines[-1]), trace
    assert not empty_settles(trace), trace


def test_a_settle_after_which_a_verdict_was_drawn_keeps_its_line():
    target = publisher_target("ignores request(0)", subscription=p.IgnoresNonPositiveRequest)
    trace, observed = replayed_trace(target, [subscribe(3), settle, settle, request(0), settle])
    lines = rows(trace)
    assert "still live once settled" in observed, observed
    assert SETTLED.match(lines[-2]) and lines[-1].split()[1] == "!!" and "3.9" in lines[-1], trace
    assert not empty_settles(trace), trace

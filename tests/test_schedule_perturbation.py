"""Schedule perturbation (rstck.core.perturb): races are caught by design, in every run, not by the machine's load."""

from __future__ import annotations

import threading
import time

import pytest

from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.core.thread_watch import ThreadWatch
from rstck.core.verdict import Verdict

from .stability import stability_runs
from .styles import targets as styles_targets
from .styles.choices import Style
from .zoo import race_publishers


def _checks_of(target, rule: str):
    return [p.check for p in plan(target) if p.check.rule == rule]


# The dedicated check of each rule a race breaks.
DEDICATED = {"1.3": "signals_are_serial_while_the_probe_lingers",
             "3.8": "demand_from_a_second_thread_during_a_delivery_is_added",
             "3.12": "cancel_from_a_second_thread_during_a_delivery_stops_the_stream"}


@pytest.mark.stability
@pytest.mark.parametrize("case", race_publishers.MUTANTS, ids=lambda c: c.name)
def test_each_race_is_caught_by_its_dedicated_check_in_every_run(case):
    """The publishers that signal on another thread while on_subscribe still runs (1.3), and those that lose a
    request another thread makes while on_next is in flight (3.8): caught each time, whatever the machine's
    load. Before perturbation the timer's race passed every run, and no check requested from a second thread."""
    (rule,) = case.fails
    for run in range(stability_runs()):
        target = case.target
        check = next(c for c in _checks_of(target, rule) if c.name == DEDICATED[rule])
        result = run_check(check, target, timeout_s=case.timeout_s)
        assert (result.verdict, result.violated) == (Verdict.FAIL, rule), f"run {run + 1}: {result.message}"


@pytest.mark.stability
@pytest.mark.parametrize("case", race_publishers.PROCESSOR_MUTANTS, ids=lambda c: c.name)
def test_a_processor_losing_demand_across_its_two_sides_is_caught_in_every_run(case):
    for run in range(stability_runs()):
        target = case.target
        check = next(c for c in _checks_of(target, "3.8")
                     if c.name == "downstream_request_from_a_second_thread_while_upstream_signals_is_added")
        result = run_check(check, target, timeout_s=case.timeout_s)
        assert (result.verdict, result.violated) == (Verdict.FAIL, "3.8"), f"run {run + 1}: {result.message}"


@pytest.mark.stability
def test_a_processor_whose_upstream_side_is_busy_while_the_probe_lingers_is_caught_in_every_run():
    """1.3 across a processor's two sides: on_subscribe signalled with the guard open, and the upstream's elements,
    from the kit's upstream subscribed on a second thread, delivered meanwhile on the processor's timer. Its call on
    the upstream (on that timer) once ended the downstream probe's linger inside on_subscribe before the delivery
    came, so the check passed it every run; a linger now ends only on a signal to the probe that lingers. The
    conformant style passes."""
    broken = Style.parse("processor__timer__queue_drain__on_worker__records_and_schedules__overlapping_on_subscribe")
    for run in range(stability_runs()):
        for style, expected in ((broken, (Verdict.FAIL, "1.3")), (broken.conformant(), (Verdict.PASS, ""))):
            target = styles_targets.fresh(style)
            check = next(c for c in _checks_of(target, "1.3")
                         if c.name == "elements_from_an_upstream_arriving_meanwhile_wait_for_on_subscribe")
            result = run_check(check, target, timeout_s=5)
            assert (result.verdict, result.violated or "") == expected, f"run {run + 1}: {result.message}"


@pytest.mark.stability
def test_a_subscriber_whose_calls_overlap_only_in_a_race_is_caught_in_every_run():
    """2.7: a subscriber whose timer requests while its own request from inside on_next is still under way; the
    check that existed before (a 0.5 ms dwell on foreign-thread calls) never saw it."""
    (case,) = race_publishers.SUBSCRIBER_MUTANTS
    (guard,) = race_publishers.SUBSCRIBER_GUARDS
    for run in range(stability_runs()):
        for subject, expected in ((case, (Verdict.FAIL, "2.7")), (guard, (Verdict.PASS, ""))):
            target = subject.target
            check = next(c for c in _checks_of(target, "2.7")
                         if c.name == "subscription_calls_are_serial_while_the_kit_lingers")
            result = run_check(check, target, timeout_s=subject.timeout_s)
            assert (result.verdict, result.violated or "") == expected, f"run {run + 1}: {result.message}"


@pytest.mark.stability
@pytest.mark.parametrize("case", race_publishers.GUARDS, ids=lambda c: c.name)
def test_each_fixed_publisher_passes_the_race_checks_in_every_run(case):
    for run in range(stability_runs()):
        target = case.target
        for check in [c for rule in DEDICATED for c in _checks_of(target, rule)]:
            result = run_check(check, target, timeout_s=case.timeout_s)
            assert result.verdict is Verdict.PASS, f"run {run + 1}, {check.name}: {result.message}"


def test_the_lingering_check_is_not_applicable_without_threads_the_kit_can_call_from():
    from rstck.core.checks import all_checks

    for name in [*DEDICATED.values(), "subscription_calls_are_serial_while_the_kit_lingers",
                 "downstream_request_from_a_second_thread_while_upstream_signals_is_added"]:
        check = next(c for c in all_checks() if c.name == name)
        assert "threads" in check.needs  # only in-process targets offer it; Node and network targets get n/a


def _spin_until(stop: threading.Event) -> None:
    while not stop.is_set():
        pass


def _parked(thread: threading.Thread) -> bool:
    states = ThreadWatch.states({thread.ident: thread})
    return states[thread.ident].kind == "parked"


def test_a_parked_thread_that_ended_leaves_its_reused_ident_to_a_new_thread():
    """A false pass seen with a private pool: a worker parked when the check began ended (its pool collected),
    and a new thread of the target's got the same ident. Settling watched the dead thread instead and declared
    every thread joined while the new one was still delivering."""
    for _ in range(50):
        release = threading.Event()
        old = threading.Thread(target=release.wait, daemon=True)
        old.start()
        bound = time.monotonic() + 10
        while not _parked(old) and time.monotonic() < bound:
            time.sleep(0.001)
        watch = ThreadWatch()
        old_ident = old.ident
        release.set()
        old.join()
        stop = threading.Event()
        new = threading.Thread(target=_spin_until, args=(stop,), daemon=True)  # running: still able to signal
        new.start()
        try:
            if new.ident != old_ident:
                continue  # the ident was not reused this time
            watched = watch.watched(set())
            assert watched.get(new.ident) is new
            assert ThreadWatch.states(watched)[new.ident].kind == "running"
            return
        finally:
            stop.set()
            new.join()
    pytest.skip("no ident was reused in 50 tries")


# -- the fuzzer draws the same perturbations as steps: a shrunk race finding replays its schedule ---------------

FUZZ_EXAMPLES = 25


def _first_finding(case, rule: str):
    from rstck.fuzz.run import run_machine

    for seed in range(8):
        report = run_machine(case.target, "publisher", seed=seed, examples=FUZZ_EXAMPLES, steps=12,
                             profile="rstck-default", timeout_s=2.0)
        found = [f for f in report.findings if f.rule == rule]
        if found:
            return found[0]
    raise AssertionError(f"{case.name}: no {rule} finding in 8 seeded runs")


@pytest.mark.stability
@pytest.mark.parametrize("case", race_publishers.MUTANTS, ids=lambda c: c.name)
def test_the_fuzzer_finds_each_race_and_its_replay_reproduces_it_every_time(case):
    from rstck.fuzz.run import run_machine

    (rule,) = case.fails
    finding = _first_finding(case, rule)
    assert not finding.note.startswith("flaky"), finding.note
    assert finding.blob
    for replay in range(stability_runs()):
        report = run_machine(case.target, "publisher", seed=finding.seed, examples=1, steps=12,
                             profile="rstck-default", timeout_s=2.0, blob=finding.blob)
        assert [f.rule for f in report.findings] == [rule], f"replay {replay + 1}: {report.findings}"


@pytest.mark.parametrize("case", race_publishers.GUARDS, ids=lambda c: c.name)
def test_the_fuzzer_finds_nothing_in_the_fixed_publishers(case):
    from rstck.fuzz.run import run_machine

    for seed in range(2):
        report = run_machine(case.target, "publisher", seed=seed, examples=FUZZ_EXAMPLES, steps=12,
                             profile="rstck-default", timeout_s=2.0, shrink=False)
        assert not report.findings, "\n\n".join(f"{f.rule}: {f.observed}\n{f.trace}" for f in report.findings)

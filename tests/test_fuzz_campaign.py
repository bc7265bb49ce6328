"""Campaigns: shards as plain data, result rows, shrinking and replay, and bad input (a target
that raises, hangs, or kills its worker process)."""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import pathlib
import pickle
import re
import shlex
import threading
import time

import pytest

import rstck

from rstck import InProcessTarget
from rstck.fuzz.campaign import Shard, plan_shards, replay_command, run_shard, run_shard_on, run_shard_outcome
from rstck.fuzz.local_engine import run_local
from rstck.fuzz.report import result_row
from rstck.fuzz.run import Finding, run_machine
from rstck.reference.publishers import FailedPublisher
from rstck.reference.targets import sync_publisher
from rstck.execution.findings import ROW_FIELDS

from .zoo import publishers as p
from .zoo.publisher_mutants import publisher_target

HERE = "tests.test_fuzz_campaign"  # worker processes import the targets below by this name


def _failed():
    return FailedPublisher(lambda: RuntimeError("the failed publisher fails on purpose"))


class CrashingSubscription(p.Subscription):
    """Kills its process, as a segfault in an extension module would."""

    def request(self, n: int) -> None:
        if n > 2:
            os._exit(3)
        super().request(n)


class ExcessThenStuck(p.Subscription):
    """1.1, then a hang: one element more than was asked for, and the call delivering it never returns."""

    def __init__(self, *args):
        super().__init__(*args)
        self.requested = 0
        self.demand = 1  # the element nobody asked for

    def request(self, n: int) -> None:
        self.requested += max(n, 0)
        super().request(n)

    def emit(self, item) -> None:
        super().emit(item)
        if self.delivered > self.requested:  # the probe has recorded 1.1: now the call never returns
            threading.Event().wait()


def _broken(n: int):
    raise RuntimeError("this factory is broken on purpose")


ignores_zero = publisher_target("ignores_zero", subscription=p.IgnoresNonPositiveRequest, failed=_failed)
deadlocks = publisher_target("deadlocks", subscription=p.ReentrantRequestDeadlocks, failed=_failed)
crashes = publisher_target("crashes", subscription=CrashingSubscription, failed=_failed)
excess_then_stuck = publisher_target("excess then stuck", subscription=ExcessThenStuck, failed=_failed)
factory_raises = InProcessTarget(create_publisher=_broken, name="factory raises")


def shard(target: str, **options) -> Shard:
    return Shard(**{**dict(target=f"{HERE}:{target}", role="publisher", first_seed=0, runs=3,
                           examples_per_run=50, steps=30, timeout_s=1.0), **options})


def test_examples_are_cut_into_consecutive_seeded_shards():
    shards = plan_shards("m:t", ["publisher", "subscriber"], examples=1000, time_s=None, jobs=2, base_seed=7,
                         profile="rstck-default")
    for role in ("publisher", "subscriber"):
        mine = [s for s in shards if s.role == role]
        assert len(mine) == 4  # two per job, to even out their speeds
        assert sum(s.examples for s in mine) == 1000  # exactly the budget, shrinking included
        assert [s.replay_saved for s in mine] == [True, False, False, False]
    seeds = [seed for s in shards for seed in s.seeds]
    assert seeds == list(range(7, 7 + len(seeds)))  # every run its own seed, in order
    assert [s.index for s in shards] == list(range(len(shards)))


def test_a_budget_that_is_not_a_multiple_of_the_runs_is_met_exactly():
    shards = plan_shards("m:t", ["publisher"], examples=250, time_s=None, jobs=2, base_seed=0,
                         profile="rstck-default")
    assert [(s.runs, s.examples) for s in shards] == [(1, 100), (1, 100), (1, 50)]


def test_a_time_budget_is_shared_by_the_roles_one_shard_per_job():
    shards = plan_shards("m:t", ["publisher", "processor"], examples=None, time_s=60, jobs=3, base_seed=0,
                         profile="rstck-ci")
    assert len(shards) == 6
    assert {s.time_s for s in shards} == {30.0}
    ranges = sorted((s.seeds for s in shards), key=lambda seeds: seeds.start)
    assert all(a.stop <= b.start for a, b in zip(ranges, ranges[1:]))  # no two runs share a seed (by the
    # ranges' ends: a time budget sets a million seeds aside per shard, too many to list)


def test_a_shard_is_plain_data_and_run_shard_returns_check_rows():
    job = shard("ignores_zero", runs=1, first_seed=1)
    assert pickle.loads(pickle.dumps(job)) == job
    rows = run_shard(job)
    assert rows and {r["rule"] for r in rows} == {"3.9"}
    row = rows[0]
    assert set(row) == set(ROW_FIELDS)  # the row format of `rstck check`
    assert row["verdict"] == "fail" and row["check"] == "fuzz-publisher" and row["role"] == "publisher"
    assert row["message"].startswith("3.9 MUST: While the Subscription is not cancelled")
    assert f"replay: rstck fuzz {HERE}:ignores_zero --role publisher --steps 30 --timeout 1 --replay " \
           f"{row['seed']}" in row["message"]
    seed, blob = row["seed"].split(":")
    assert int(seed) in job.seeds and blob


def test_a_failure_is_shrunk_to_a_short_trace_that_its_blob_replays_exactly():
    report = run_machine(ignores_zero, "publisher", seed=0, examples=100, steps=30, profile="rstck-default",
                         timeout_s=1.0)
    [finding] = [f for f in report.findings if f.rule == "3.9"]
    assert finding.shrunk and len(finding.steps) <= 3, finding.steps
    assert "request(0)" in finding.trace or "request(-1)" in finding.trace, finding.trace
    again = run_machine(ignores_zero, "publisher", seed=0, examples=1, steps=30, profile="rstck-default",
                        timeout_s=1.0, blob=finding.blob)
    assert [(f.rule, f.trace) for f in again.findings] == [("3.9", finding.trace)]
    assert again.examples == 1


@pytest.mark.parametrize("budget", [pytest.param(300, marks=pytest.mark.soak), 40, 8])  # 300: the soak's
def test_the_budget_bounds_every_example_shrinking_included(budget):
    # seed 3 finds the 3.9 violation within 8 examples
    report = run_machine(ignores_zero, "publisher", seed=3, examples=100, steps=30, profile="rstck-default",
                         timeout_s=1.0, budget=budget)
    [finding] = [f for f in report.findings if f.rule == "3.9"]
    assert report.examples <= budget and report.generated + report.shrinking == report.examples
    assert finding.blob  # whatever the bound, the finding replays
    again = run_machine(ignores_zero, "publisher", seed=3, examples=1, steps=30, profile="rstck-default",
                        timeout_s=1.0, blob=finding.blob)
    assert [f.rule for f in again.findings] == ["3.9"]
    if report.shrinking and report.examples == budget:
        assert finding.note.startswith("shrinking stopped at its bound after")


def test_shrinking_stops_at_its_time_bound_and_keeps_the_failure():
    report = run_machine(ignores_zero, "publisher", seed=1, examples=100, steps=30, profile="rstck-default",
                         timeout_s=1.0, shrink_time_s=1e-9)
    [finding] = [f for f in report.findings if f.rule == "3.9"]
    assert finding.note == "shrinking stopped at its bound after 0 examples: the smallest failing example found by then"
    assert report.shrinking == 1 and finding.blob  # the one replay that yields the failure and its blob


def test_no_example_starts_after_the_time_bound_even_within_a_run():
    # Hypothesis set up beforehand, and the bound room for several examples as long as one takes on this machine
    # now, so that what the bound leaves room for is examples, however busy the machine.
    started = time.monotonic()
    run_machine(sync_publisher, "publisher", seed=1, examples=1, steps=30, profile="rstck-default", timeout_s=1.0)
    one_example_s = time.monotonic() - started
    report = run_machine(sync_publisher, "publisher", seed=1, examples=100_000, steps=30, profile="rstck-default",
                         timeout_s=1.0, until=time.monotonic() + max(1.0, 5 * one_example_s))
    assert 0 < report.examples < 100_000 and not report.findings


def test_a_step_that_never_returns_is_charged_to_the_call_it_is_stuck_in():
    started = time.monotonic()
    report = run_machine(deadlocks, "publisher", seed=0, examples=100, steps=30, profile="rstck-default",
                         timeout_s=0.3)
    assert time.monotonic() - started < 30  # ended by the deadline, not by the step: a bound, however loaded the machine
    assert report.hung
    [finding] = report.findings
    assert (finding.kind, finding.rule, finding.timed_out, finding.shrunk) == ("violation", "3.2", True, False)
    assert "request(" in finding.expected and "had not returned after 0.3 s" in finding.observed
    assert finding.trace and finding.steps


def test_a_hang_never_hides_a_violation_recorded_before_it_as_in_rstck_check():
    report = run_machine(excess_then_stuck, "publisher", seed=0, examples=100, steps=30, profile="rstck-default",
                         timeout_s=0.3)
    assert report.hung
    [finding] = report.findings
    assert (finding.kind, finding.rule, finding.shrunk) == ("violation", "1.1", False)
    assert finding.note.startswith("not shrunk: then: ") and finding.note.endswith(
        " to return: it had not returned after 0.3 s (decided by a deadline)"), finding.note
    row = result_row(finding, target_name="excess then stuck", replay="the replay").row()
    assert (row["verdict"], row["violated"]) == ("fail", "1.1")
    assert row["message"].startswith("1.1 MUST: ") and "then: " in row["message"]


def test_a_factory_that_raises_ends_the_run_with_an_error_not_a_violation():
    report = run_machine(factory_raises, "publisher", seed=0, examples=100, steps=30, profile="rstck-default",
                         timeout_s=1.0)
    [finding] = report.findings
    assert finding.kind == "error" and not finding.rule
    assert "create_publisher(" in finding.observed and "broken on purpose" in finding.observed
    assert not finding.shrunk and report.examples < 20  # the first example to subscribe ends the run


def test_a_worker_that_dies_costs_an_error_row_with_its_trace_not_the_campaign():
    progress = []
    outcomes = run_local([shard("crashes", index=0), shard("ignores_zero", index=1, first_seed=10, runs=1)], jobs=2,
                         on_progress=lambda kind, value: progress.append(kind))
    crashed, survived = outcomes
    [error] = crashed.findings
    assert error.kind == "error" and "worker process died (exit code 3)" in error.observed
    assert "(step: " in error.trace and "(the process died here)" in error.trace
    assert error.seed in crashed.shard.seeds
    assert {f.rule for f in survived.findings} == {"3.9"}
    assert "run" in progress


def test_a_worker_that_holds_the_interpreter_is_stopped_by_the_watchdog_and_names_its_call(monkeypatch):
    # The supervision of the checks' workers: with the interpreter held, the step's own deadline cannot fire; the
    # supervisor stops the worker once it has been silent for 2 x 0.5 s + 10 s. Those 10 s are a margin for a
    # worker that is only slow, nothing this stop depends on: the run waits out 2 x 0.5 s + 3 s instead (the
    # supervisor reads the bound the kit's watchdog_s gives it; test_pytest_supervised.py waits out the kit's own).
    from rstck.execution.worker import watchdog_s
    from rstck.fuzz import local_engine

    assert watchdog_s(0.5) == 11
    monkeypatch.setattr(local_engine, "watchdog_s", lambda timeout_s: 2 * timeout_s + 3.0)
    job = Shard(target="tests.zoo.process_enders:holds_the_interpreter_on_request_zero", role="publisher",
                first_seed=0, runs=1, examples_per_run=50, steps=30, timeout_s=0.5)
    started = time.monotonic()
    [outcome] = run_local([job], jobs=1, recorded=True)
    assert time.monotonic() - started < 60
    [error] = outcome.findings
    assert error.kind == "error"
    assert re.fullmatch(r"the worker process stopped answering for 4 s and was stopped while fuzzing the "
                        r"publisher, during sub#\d+\.request\(0\)", error.observed), error.observed
    assert "(the process died here)" in error.trace


def test_the_example_database_is_where_it_is_told_and_replays_saved_failures_first(tmp_path):
    database = tmp_path / "db"
    first = run_shard_on(ignores_zero, shard("ignores_zero", runs=1, database=str(database), replay_saved=True))
    assert {f.rule for f in first.findings} == {"3.9"}
    saved = list((database / "ignores_zero" / "publisher").rglob("*"))
    assert saved, "the failure was saved under the database directory"
    again = run_shard_on(ignores_zero, shard("ignores_zero", runs=1, first_seed=99, database=str(database),
                                             replay_saved=True))
    assert {f.rule for f in again.findings} == {"3.9"}
    assert again.examples < first.examples  # the saved example comes first: no search needed


def test_a_seed_draws_the_same_whatever_modules_are_loaded(tmp_path, monkeypatch):
    """Hypothesis draws constants from every local module loaded; the kit's runs must not depend on them
    (under pytest, which modules are loaded depends on which tests ran before in the worker)."""
    from hypothesis.internal.constants_ast import is_local_module_file

    before = run_shard_outcome(shard("ignores_zero", runs=1, first_seed=1))
    module = tmp_path / "rstck_many_constants.py"
    # a module with constants of every kind (the codec's source, under a name no test imports): seen to
    # change this very run when the kit did not keep Hypothesis from drawing them
    module.write_text((pathlib.Path(rstck.__file__).parent / "protocols" / "network" / "wire.py").read_text())
    assert is_local_module_file(str(module))  # else this test would show nothing
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("rstck_many_constants")
    after = run_shard_outcome(shard("ignores_zero", runs=1, first_seed=1))
    assert (after.examples, after.steps, [f.key for f in after.findings]) == \
        (before.examples, before.steps, [f.key for f in before.findings])


def test_the_fuzz_phase_runs_its_whole_budget_on_a_slow_machine(monkeypatch):
    """Observed under load: `rstck check` missed a 3.8 defect that it found on a quiet machine. Seed 0 finds it
    only in a later run of the phase, and a time bound of 5 s per role cut those runs. The machine is made five
    times slower here: the clock the fuzzer reads runs five times fast. The ceiling that only makes every run
    end is lifted: a loaded machine may take it up as well, and no other bound on time may cut the budget."""
    from rstck.core.target import load_target
    from rstck.fuzz import campaign, machine, phase, publisher, run

    class SlowMachineClock:
        @staticmethod
        def monotonic() -> float:
            return 5 * time.monotonic()

    for module in (campaign, run, machine, publisher):
        monkeypatch.setattr(module, "time", SlowMachineClock)
    monkeypatch.setattr(phase, "CEILING_PER_ROLE_S", math.inf)
    spec = "tests.zoo.cli_targets:clamps_demand_asked_in_on_subscribe"
    rows, summaries = phase.run_phase(load_target(spec), spec, examples=200, timeout_s=5.0)
    assert [s.ceiling_s for s in summaries] == [None]
    assert {row.row()["rule"] for row in rows} == {"3.8"}


def test_a_role_cut_by_the_fuzz_phase_ceiling_says_so(monkeypatch, capsys):
    from rstck.cli import main
    from rstck.fuzz import phase

    monkeypatch.setattr(phase, "CEILING_PER_ROLE_S", 0.0)
    code = main(["check", "rstck.reference.targets:sync_publisher", "--fuzz-examples", "10"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "fuzz publisher: 0 examples (0 steps)" in out and "cut at its 0 s bound: 10 were planned" in out, out


def test_the_replay_command_quotes_a_target_a_shell_would_split():
    """A node: path with a space, a URL with a name template: the printed command runs as printed."""
    finding = Finding(role="publisher", kind="violation", rule="1.1", expected="", observed="", trace="", seed=3)
    for target in ("node:./my impl.js", "tcp://127.0.0.1:9000/ticks/{n}", "mypkg.tck:target"):
        shard = Shard(target=target, role="publisher", first_seed=3, runs=1, examples_per_run=10, steps=20)
        words = shlex.split(replay_command(shard, finding))
        assert words[:3] == ["rstck", "fuzz", target] and words[-2:] == ["--replay", finding.replay]

"""Campaigns: a fuzzing budget cut into shards, and running one shard.

A `Shard` is plain, picklable data: target spec, role, a range of seeds, a budget. Any engine
that can call a function on a worker can run one with `run_shard(shard) -> rows`; the local
engine (local_engine.py) runs shards in supervised worker processes, the Spark engine
(spark_engine.py) as Spark tasks. Each seed is one Hypothesis run of up to `examples_per_run`
examples; a campaign's seeds are consecutive from its base seed, so `--seed` replays a whole
campaign and a printed seed replays one run.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
import time
from collections.abc import Callable
from typing import Any

from rstck.core.plugins import adapter_for
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.core.target import Target, load_target
from rstck.core.verdict import BadInput
from rstck.fuzz.budgets import DEFAULT_SHRINK_TIME_S, PROFILES
from rstck.fuzz.profiles import example_database
from rstck.fuzz.recorder import FlightRecorder
from rstck.fuzz.report import merge, result_row
from rstck.fuzz.run import Finding, run_machine

@dataclasses.dataclass(frozen=True)
class Shard:
    """A slice of a campaign: `runs` seeded runs of one role's machine, from `first_seed` on."""

    target: str  # MODULE:ATTR, importable on the worker
    role: str
    first_seed: int
    runs: int  # seeds set aside; the budget may end the shard before all have run
    examples_per_run: int  # examples each seeded run generates (at most)
    steps: int
    profile: str = "rstck-default"
    timeout_s: float = DEFAULT_DEADLINE_S
    examples: int | None = None  # every example the shard runs, shrinking included; None: runs x per run
    time_s: float | None = None  # no example starts after this long; None: no bound on time
    shrink_time_s: float = DEFAULT_SHRINK_TIME_S  # per run
    database: str | None = None  # example database directory; None: off
    replay_saved: bool = False  # the first run replays failures saved by earlier campaigns
    shrink: bool = True
    index: int = 0  # position in the campaign (for progress reports)

    @property
    def seeds(self) -> range:
        return range(self.first_seed, self.first_seed + self.runs)


@dataclasses.dataclass
class ShardOutcome:
    shard: Shard
    findings: list[Finding]
    examples: int = 0
    shrinking: int = 0  # of `examples`, those spent shrinking failures
    steps: int = 0
    runs: int = 0
    duration_s: float = 0.0
    note: str = ""  # why the shard stopped before its seeds ran out
    out_of_time: bool = False  # it reached its time bound (what was left of its budget did not run)
    left_behind: list[str] = dataclasses.field(default_factory=list)  # threads the target left running

    def as_data(self) -> dict[str, Any]:
        """Everything but the shard, as JSON-able data (the Spark engine's tasks send it to the driver)."""
        data = dataclasses.asdict(self)
        data.pop("shard")
        return data

    @classmethod
    def from_data(cls, shard: Shard, data: dict[str, Any]) -> ShardOutcome:
        findings = [Finding(**f) for f in data["findings"]]
        return cls(shard, findings, **{key: value for key, value in data.items() if key != "findings"})


def replay_command(shard: Shard, finding: Finding) -> str:
    """The one command that replays `finding` (the shrunk example, or its whole seeded run)."""
    adapter = adapter_for(shard.target)  # the target's own words: a jvm: target's --classpath, say
    named = adapter.command_arguments(shard.target) if adapter is not None else [shard.target]
    command = f"rstck fuzz {shlex.join(named)} --role {shard.role} --steps {shard.steps}"
    if shard.timeout_s != DEFAULT_DEADLINE_S:
        command += f" --timeout {shard.timeout_s:g}"
    if not finding.blob:
        command += f" --examples {finding.examples or shard.examples_per_run}"
    return f"{command} --replay {shlex.quote(finding.replay)}"


def plan_shards(target_spec: str, roles: list[str], *, examples: int | None, time_s: float | None, jobs: int,
                base_seed: int, profile: str, steps: int | None = None, timeout_s: float = DEFAULT_DEADLINE_S,
                database: str | None = None, shrink_time_s: float | None = None,
                shards_per_role: int | None = None) -> list[Shard]:
    """Cut a campaign into shards: exactly `examples` per role (shrinking included), or `time_s` in all.
    Per role: two shards per job (at most one per run), or `shards_per_role` (the Spark engine's tasks)."""
    budget = PROFILES[profile]
    steps = steps or budget.steps
    shards: list[Shard] = []
    seed = base_seed
    common = dict(target=target_spec, steps=steps, profile=profile, timeout_s=timeout_s, database=database,
                  shrink_time_s=budget.shrink_time_s if shrink_time_s is None else shrink_time_s)
    for role in roles:
        if time_s is not None:
            # One shard per job and role; the roles take turns, each with its share of the time.
            per_run = max(1, budget.examples_per_run // 4)  # short runs: new seeds keep coming
            parts = [(1_000_000, None)] * (shards_per_role or jobs)
            shard_time: float | None = time_s / len(roles)
        else:
            total = examples if examples is not None else budget.examples
            per_run = min(budget.examples_per_run, total)
            runs = math.ceil(total / per_run)
            count = min(runs, shards_per_role or jobs * 2)  # a few shards per job even out their differing speeds
            runs_each = [runs // count + (k < runs % count) for k in range(count)]
            # Whole runs' worth each, the last shard the remainder: together exactly `total`.
            examples_each = [n * per_run for n in runs_each]
            examples_each[-1] -= sum(examples_each) - total
            parts = list(zip(runs_each, examples_each))
            shard_time = None
        for k, (runs_here, examples_here) in enumerate(parts):
            shards.append(Shard(role=role, first_seed=seed, runs=runs_here, examples_per_run=per_run,
                                examples=examples_here, time_s=shard_time, replay_saved=(k == 0),
                                index=len(shards), **common))
            seed += runs_here
    return shards


# -- running one shard ---------------------------------------------------------------------------

Progress = Callable[[str, Any], None]  # ("progress", (examples, steps)), ("run", 1) or ("found", [keys])


def run_shard(shard: Shard) -> list[dict[str, Any]]:
    """Run a shard and return its result rows (one per distinct violation or error): the engine API."""
    outcome = run_shard_outcome(shard)
    name = _target_name(shard)
    return [result_row(f, target_name=name, replay=replay_command(shard, f), duration_s=outcome.duration_s,
                       loaded_as=shard.target).row()
            for f, _runs in merge(outcome.findings)]


def run_shard_outcome(shard: Shard, progress: Progress | None = None,
                      recorder: FlightRecorder | None = None) -> ShardOutcome:
    try:
        target = load_target(shard.target)
    except BadInput as exc:
        return ShardOutcome(shard, [shard_error(shard, str(exc))])
    return run_shard_on(target, shard, progress=progress, recorder=recorder)


def run_shard_on(target: Target, shard: Shard, *, progress: Progress | None = None,
                 recorder: FlightRecorder | None = None, blob: str | None = None) -> ShardOutcome:
    """Run `shard`'s seeds against a target object (pytest items and replays use this directly)."""
    outcome = ShardOutcome(shard, [])
    started = time.monotonic()
    try:
        target.prepare()  # before the first step's watchdog runs
    except BadInput as exc:
        outcome.findings.append(shard_error(shard, str(exc)))
        return outcome
    until = None if shard.time_s is None else started + shard.time_s
    left = shard.examples  # shrinking draws on the same budget as generating
    for number, seed in enumerate(shard.seeds):
        if until is not None and time.monotonic() >= until or left is not None and left <= 0:
            break
        database = example_database(shard.database, target.name, shard.role,
                                    replay_saved=shard.replay_saved and number == 0)
        if recorder is not None:
            recorder.seed = seed
        report = run_machine(target, shard.role, seed=seed, steps=shard.steps, profile=shard.profile,
                             examples=shard.examples_per_run if left is None else min(shard.examples_per_run, left),
                             budget=left, until=until, shrink_time_s=shard.shrink_time_s,
                             timeout_s=shard.timeout_s, database=database, blob=blob, shrink=shard.shrink,
                             recorder=recorder,
                             progress=(lambda e, s: progress("progress", (e, s))) if progress else None)
        outcome.runs += 1
        outcome.examples += report.examples
        outcome.shrinking += report.shrinking
        outcome.steps += report.steps
        outcome.findings += report.findings
        if left is not None:
            left -= report.examples
        if not report.reproduced:
            outcome.note = "did not reproduce"
        if progress is not None:
            progress("run", 1)
            if report.findings:
                progress("found", [f.key for f in report.findings])
        if report.hung:
            # The hung thread stays blocked inside the target; later runs could trip over it.
            outcome.note = f"stopped after a hang in seed {seed}"
            break
    outcome.out_of_time = until is not None and time.monotonic() >= until
    outcome.duration_s = round(time.monotonic() - started, 6)
    return outcome


def _target_name(shard: Shard) -> str:
    try:
        return load_target(shard.target).name
    except BadInput:
        return shard.target


def shard_error(shard: Shard, text: str, trace: str = "", seed: int | None = None) -> Finding:
    """The shard could not run (on): an error finding, no item's."""
    return Finding(role=shard.role, kind="error", rule="", expected="the shard to run", observed=text,
                   trace=trace, seed=shard.first_seed if seed is None else seed, shrunk=False)

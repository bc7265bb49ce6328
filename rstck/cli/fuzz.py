"""`rstck fuzz`: Hypothesis state machines against every role a target offers.

    rstck fuzz mypkg.tck:target [--role R] [--examples N | --time 60s] [--jobs N] [--results DIR]
    rstck fuzz mypkg.tck:target --engine spark [--spark-master URL] [--shards N] [--results DIR [--jsonl]]

Progress goes to stderr; each violation is printed with its rule, its shrunk trace and the
one command that replays it. Exit status: 1 if a rule was violated, 2 for bad input (or when
the campaign could not run: errors only), 0 otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import sys
import time
from typing import TYPE_CHECKING, Any, Callable

from rstck.cli.exits import EXIT_BAD_INPUT
from rstck.execution.options import count, seconds
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.core.plugins import TargetOption, target_options
from rstck.core.target import Target, load_target
from rstck.core.verdict import BadInput
from rstck.fuzz.budgets import (DEFAULT_DATABASE, PROFILE_ENV, PROFILES, ROLES, choose_profile,
                      keep_hypothesis_files_in_rstck_directory)

if TYPE_CHECKING:
    from rstck.fuzz.campaign import Shard, ShardOutcome

EXIT_CLEAN, EXIT_VIOLATED = 0, 1
MAX_EXAMPLES, MAX_STEPS, MAX_JOBS, MAX_SHARDS = 10**9, 10_000, 256, 100_000
MAX_DURATION_S = 7 * 24 * 3600.0
# Compiled when used (re keeps them), not when the `rstck` parser is built.
_DURATION = r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$"
_TOKEN = r"^(\d+)(?::([A-Za-z0-9+/=]+))?$"
# A terminal gets a live line; a log (CI) gets a line this often.
LOG_PROGRESS_EVERY_S = 10.0


def add_fuzz_command(subparsers: Any) -> None:
    """Register `rstck fuzz` on the `rstck` command's subparsers."""
    fuzz = subparsers.add_parser(
        "fuzz", help="fuzz signal orderings with Hypothesis state machines",
        description="Run Hypothesis state machines against every role the target offers and report each "
                    "violated rule with its shrunk trace and a command that replays it.")
    fuzz.add_argument("target", metavar="TARGET", nargs="?",
                      help="the target, e.g. mypkg.tck:target, tcp://HOST:PORT or node:PATH")
    fuzz.add_argument("--role", choices=ROLES, help="fuzz only this role (default: every role the target offers)")
    budget = fuzz.add_mutually_exclusive_group()
    budget.add_argument("--examples", type=int, metavar="N",
                        help="examples per role, shrinking included (default: the profile's; with --replay SEED: "
                             "the examples that run generated, as printed)")
    budget.add_argument("--time", metavar="DURATION", help="wall-clock budget of the campaign: 90s, 5m, 1h")
    fuzz.add_argument("--shrink-time", metavar="DURATION",
                      help="the longest one run spends shrinking what it found (default: the profile's)")
    fuzz.add_argument("--steps", type=int, metavar="N", help="steps per example (default: the profile's)")
    fuzz.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)")
    fuzz.add_argument("--seed", type=int, metavar="S",
                      help="base seed: runs use S, S+1, ... (default: random; 0 when $CI is set)")
    fuzz.add_argument("--profile", metavar="NAME",
                      help=f"budget profile: {', '.join(PROFILES)} (default: ${PROFILE_ENV}, else rstck-ci "
                           "when $CI is set, else rstck-default)")
    fuzz.add_argument("--results", metavar="DIR", help="write one JSON Lines row per violation into DIR")
    fuzz.add_argument("--database", metavar="DIR",
                      help=f"Hypothesis example database directory, or 'none' (default {DEFAULT_DATABASE})")
    fuzz.add_argument("--timeout", type=float, default=DEFAULT_DEADLINE_S, metavar="S",
                      help=f"deadline per step in seconds (default {DEFAULT_DEADLINE_S:g})")
    fuzz.add_argument("--no-shrink", action="store_true",
                      help="report each failing example as found, without shrinking it (faster, longer traces)")
    fuzz.add_argument("--replay", metavar="SEED[:BLOB]",
                      help="replay one printed case: SEED:BLOB is the shrunk example, SEED its whole run")
    spark = fuzz.add_argument_group("the Spark engine (see the rstck documentation, page 'Spark' (docs/spark.md))")
    spark.add_argument("--engine", choices=("local", "spark"), default="local",
                       help="local: worker processes (--jobs); spark: each shard a Spark task (default local)")
    spark.add_argument("--spark-master", metavar="URL",
                       help="e.g. spark://host:7077 (default: $RSTCK_SPARK_MASTER, else an embedded local[*])")
    spark.add_argument("--shards", type=int, metavar="N",
                       help="shards per role, one Spark task each (default: twice the session's parallelism)")
    spark.add_argument("--jsonl", action="store_true",
                       help="with --results: also write the rows as JSON Lines (Parquet is always written)")
    for option in target_options():  # the installed adapters' options, as `rstck check` has them (--classpath)
        if option.flag not in fuzz._option_string_actions:  # --spark-master is the Spark engine's here
            fuzz.add_argument(option.flag, metavar=option.metavar, help=option.help, dest=_dest(option))
    fuzz.set_defaults(run=run_fuzz)


@dataclasses.dataclass
class _Options:
    target_spec: str
    target: Target
    roles: list[str]
    profile: str
    steps: int
    jobs: int
    timeout_s: float
    database: str | None
    results: str | None
    shrink: bool
    shrink_time_s: float


def run_fuzz(args: argparse.Namespace) -> int:
    keep_hypothesis_files_in_rstck_directory()  # before anything touches Hypothesis' storage
    from rstck.fuzz.campaign import plan_shards  # Hypothesis is imported from here on
    from rstck.fuzz.local_engine import run_local

    options = _options(args)
    if args.replay:
        return _replay(args, options)  # always here, in this process: a Spark finding replays locally
    time_s = _duration("--time", args.time) if args.time else None
    seed = args.seed if args.seed is not None else (0 if _on_ci() else int.from_bytes(os.urandom(4), "big") >> 1)
    spark = args.engine == "spark"
    shards = plan_shards(options.target_spec, options.roles, examples=args.examples, time_s=time_s,
                         jobs=options.jobs, base_seed=seed, profile=options.profile, steps=options.steps,
                         timeout_s=options.timeout_s, database=options.database,
                         shrink_time_s=options.shrink_time_s,
                         shards_per_role=_spark_shards(args) if spark else None)
    if not options.shrink:
        shards = [dataclasses.replace(s, shrink=False) for s in shards]
    total = None if time_s else sum(s.examples for s in shards)
    budget = f"{_duration_text(time_s)} in all" if time_s else \
        f"{total // len(options.roles):,} examples per role"
    runs = None if time_s else sum(s.runs for s in shards)
    workers = (f"Spark, {len(shards)} shard{'s' * (len(shards) != 1)}" if spark
               else f"{options.jobs} job{'s' * (options.jobs != 1)}")
    print(f"rstck fuzz: {options.target.name} — {', '.join(options.roles)}; {budget}, {options.steps} steps each; "
          f"{workers}; seed {seed}; profile {options.profile}", file=sys.stderr)
    if spark:
        from rstck.protocols.spark import SparkJobFailed
        from rstck.fuzz.spark_engine import run_campaign, save_and_summarise

        try:
            outcomes, elapsed = run_campaign(shards, master=args.spark_master, time_s=time_s)
        except SparkJobFailed as exc:  # a lost executor past Spark's retries, the campaign's bound: no rows
            raise BadInput(f"{exc}; no result was kept") from exc
        return _conclude(outcomes, options, shards[0], elapsed, save=lambda rows: save_and_summarise(
            outcomes, rows, target_name=options.target.name, results=options.results, jsonl=args.jsonl,
            elapsed=elapsed, master=args.spark_master))
    progress = _ProgressLine(runs)
    outcomes = run_local(shards, jobs=options.jobs, on_progress=progress.update)
    progress.finish()
    return _conclude(outcomes, options, shards[0], progress.elapsed())


def _spark_shards(args: argparse.Namespace) -> int:
    """--shards, else twice the parallelism of the session (which starts here, before the campaign)."""
    if args.shards is not None:
        return args.shards
    from rstck.protocols.spark import spark_session

    return 2 * spark_session(args.spark_master).sparkContext.defaultParallelism


def _dest(option: TargetOption) -> str:
    return "target_option_" + option.flag.lstrip("-").replace("-", "_")


def _name_target(args: argparse.Namespace) -> None:
    """The target from TARGET or an adapter's option that names one (--client CMD); an option that hands the target
    a value through the environment (--classpath) sets it for the workers that load the target."""
    for option in target_options():
        value = getattr(args, _dest(option), None)
        if value is None:
            continue
        if option.prefix:
            if args.target is not None:
                raise BadInput(f"rstck fuzz: name the target or {option.flag} {option.metavar}, not both")
            args.target = option.prefix + value
        elif option.env:
            os.environ[option.env] = value
    if args.target is None:
        raise BadInput("rstck fuzz: name the target (TARGET)")


def _options(args: argparse.Namespace) -> _Options:
    _name_target(args)
    if args.engine == "spark":
        if args.jobs != 1:
            raise BadInput("--jobs is for the local engine; with --engine spark, --shards cuts the campaign and "
                           "the master's cores run it")
        count("--shards", args.shards, minimum=1, maximum=MAX_SHARDS)
    else:
        for option, given in (("--shards", args.shards is not None), ("--spark-master", args.spark_master),
                              ("--jsonl", args.jsonl)):
            if given:
                raise BadInput(f"{option} goes with --engine spark")
    count("--examples", args.examples, minimum=1, maximum=MAX_EXAMPLES)
    count("--steps", args.steps, minimum=1, maximum=MAX_STEPS)
    count("--jobs", args.jobs, minimum=1, maximum=MAX_JOBS)
    seconds("--timeout", args.timeout)
    profile = choose_profile(args.profile)
    target = load_target(args.target)
    offered = [role for role in ROLES if role in target.capabilities]
    if args.role and args.role not in offered:
        raise BadInput(f"the target offers no {args.role} (it offers {', '.join(offered) or 'nothing to fuzz'})")
    if not offered:
        raise BadInput("the target offers no publisher, subscriber or processor to fuzz")
    database = None if (args.database or "").lower() == "none" else str(
        pathlib.Path(args.database or DEFAULT_DATABASE).absolute())
    shrink_time_s = _duration("--shrink-time", args.shrink_time) if args.shrink_time else \
        PROFILES[profile].shrink_time_s
    return _Options(args.target, target, [args.role] if args.role else offered, profile,
                    args.steps or PROFILES[profile].steps, args.jobs, args.timeout, database, args.results,
                    not args.no_shrink, shrink_time_s)


def _replay(args: argparse.Namespace, options: _Options) -> int:
    match = re.match(_TOKEN, args.replay)
    if not match:
        raise BadInput(f"--replay {args.replay!r}: write it as SEED or SEED:BLOB, as printed by a fuzz run")
    if len(options.roles) > 1:
        raise BadInput(f"--replay needs --role: the target offers {', '.join(options.roles)}")
    seed, blob = int(match.group(1)), match.group(2)
    from rstck.fuzz.campaign import Shard, run_shard_on

    examples = args.examples or PROFILES[options.profile].examples_per_run
    shard = Shard(target=options.target_spec, role=options.roles[0], first_seed=seed, runs=1,
                  examples_per_run=examples, steps=options.steps, profile=options.profile,
                  timeout_s=options.timeout_s, shrink=options.shrink, shrink_time_s=options.shrink_time_s)
    what = "the shrunk example" if blob else f"seeded run {seed} ({examples} examples)"
    print(f"rstck fuzz: replaying {what} against {options.target.name} ({shard.role})", file=sys.stderr)
    started = time.monotonic()
    outcome = run_shard_on(options.target, shard, blob=blob)  # BadInput if the blob does not decode
    if outcome.note == "did not reproduce":
        print("rstck fuzz: the case did not fail this time (fixed, or it depends on timing)")
        return EXIT_CLEAN
    return _conclude([outcome], options, shard, time.monotonic() - started)


def _conclude(outcomes: list[ShardOutcome], options: _Options, shard: Shard, elapsed: float, *,
              save: Callable[[list[dict[str, Any]]], None] | None = None) -> int:
    """Print each finding (merged across shards) with its replay command, save the rows (`save`, else JSON
    Lines into --results), then the campaign's numbers; the exit code."""
    from rstck.execution.results import write_results
    from rstck.fuzz.campaign import replay_command
    from rstck.fuzz.report import merge, result_row

    findings = [f for outcome in outcomes for f in outcome.findings]
    merged = merge(findings)
    rows = []
    for finding, runs in merged:
        replay = replay_command(dataclasses.replace(shard, role=finding.role), finding)
        row = result_row(finding, target_name=options.target.name, replay=replay).row()
        kind = f"violation: {finding.rule}" if finding.kind == "violation" else "error"
        found_by = f"found by {runs} run{'s' * (runs != 1)}"
        print(f"\n--- {kind} ({finding.role}; {found_by})\n{row['message']}")
        rows.append(row)
    if save is not None:
        save(rows)
    elif options.results:
        write_results(options.results, "fuzz", options.target.name, rows)
    for outcome in outcomes:
        if outcome.note and outcome.note != "did not reproduce":
            print(f"note: {outcome.shard.role} shard from seed {outcome.shard.first_seed}: {outcome.note}",
                  file=sys.stderr)
        if outcome.left_behind:
            names = ", ".join(outcome.left_behind[:8]) + (", …" if len(outcome.left_behind) > 8 else "")
            print(f"note: {outcome.shard.role} shard from seed {outcome.shard.first_seed}: the target left "
                  f"{len(outcome.left_behind)} thread{'s' * (len(outcome.left_behind) != 1)} running ({names}); "
                  "its worker process was ended", file=sys.stderr)
    examples = sum(o.examples for o in outcomes)
    shrinking = sum(o.shrinking for o in outcomes)
    steps = sum(o.steps for o in outcomes)
    rate = steps / elapsed if elapsed > 0 else 0.0
    violated = sorted({f.rule for f, _ in merged if f.kind == "violation"}, key=_rule_order)
    errors = sum(1 for f, _ in merged if f.kind == "error")
    if violated:
        status = f"{len(violated)} rule{'s' * (len(violated) != 1)} violated: {', '.join(violated)}"
    elif errors:
        status = f"no violation, but {errors} error{'s' * (errors != 1)}: the campaign is incomplete"
    else:
        status = "no violation"
    print(f"\nrstck fuzz: {examples:,} examples ({examples - shrinking:,} generating, {shrinking:,} shrinking; "
          f"{steps:,} steps) in {elapsed:.1f} s, {rate:,.0f} steps/s — {status}")
    return EXIT_VIOLATED if violated else EXIT_BAD_INPUT if errors else EXIT_CLEAN


class _ProgressLine:
    """Examples done, steps per second and violations so far, on stderr."""

    def __init__(self, runs: int | None):
        self.runs = runs
        self.runs_done = 0
        self.examples = 0
        self.steps = 0
        self.found: set = set()
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last_shown = self.started

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def update(self, kind: str, value: Any) -> None:
        if kind == "progress":
            self.examples += value[0]
            self.steps += value[1]
        elif kind == "run":
            self.runs_done += value
        elif kind == "found":
            self.found.update(tuple(key) for key in value)
        now = time.monotonic()
        if self.tty or now - self.last_shown >= LOG_PROGRESS_EVERY_S:
            self.last_shown = now
            self._show(end="" if self.tty else "\n")

    def _show(self, end: str) -> None:
        elapsed = self.elapsed()
        runs = f"run {self.runs_done}/{self.runs}" if self.runs else f"{self.runs_done} runs"
        rate = self.steps / elapsed if elapsed > 0 else 0.0
        violations = len({key for key in self.found if key[1] == "violation"})
        line = (f"[{elapsed:7.1f} s] {runs} · {self.examples:,} examples · {rate:,.0f} steps/s · "
                f"{violations} rule{'s' * (violations != 1)} violated so far")
        print(f"\r\x1b[K{line}" if self.tty else line, end=end, file=sys.stderr, flush=True)

    def finish(self) -> None:
        self._show(end="\n")


def _duration(option: str, text: str) -> float:
    match = re.match(_DURATION, text)
    if not match or float(match.group(1)) <= 0:
        raise BadInput(f"{option} {text!r}: write a positive duration such as 90s, 5m or 1h")
    return seconds(option, float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, None: 1}[match.group(2)],
                   maximum=MAX_DURATION_S)


def _duration_text(seconds: float) -> str:
    return f"{seconds:g} s"


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _rule_order(rule: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in rule.split(".")]

"""The Spark engine of `rstck fuzz`: a campaign's shards run as Spark tasks, its rows land as Parquet, and
its summary is computed with Spark SQL.

    rstck fuzz mypkg.tck:target --engine spark [--spark-master spark://host:7077] --shards 64 --results DIR

Shards are the campaign model's (campaign.py): plain data, one per Spark task (`mapPartitions` over
their descriptions). A task runs its shard in a supervised worker process forked from the Python worker,
as the local engine runs its shards (local_engine.py), so a target that crashes or leaves threads stuck
costs that shard only: the shard is then re-run with the flight recorder, and a second death is an error
row with the trace up to the step that killed it. The findings come back to the driver, which prints them
exactly as the local engine does (the same replay commands, which replay locally), writes the rows as
Parquet (and JSON Lines on request), and prints the Spark SQL summary: violations per rule and target,
examples, steps per second.

The target must be importable on every executor (installed there, or under the driver's working
directory on a local master). A Spark target itself cannot be fuzzed on this engine: a task cannot
start a Spark session of its own.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rstck.fuzz.campaign import Shard, ShardOutcome

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The whole campaign's job is bounded: by its time budget and a margin, else by this.
CAMPAIGN_TIMEOUT_S = 6 * 3600.0
CAMPAIGN_MARGIN_S = 600.0
PROGRESS_EVERY_S = 10.0


def run_campaign(shards: list[Shard], *, master: str | None, time_s: float | None) -> tuple[list[ShardOutcome], float]:
    """Run every shard as a Spark task; the outcomes in shard order and the campaign's wall time."""
    from rstck.protocols.spark import new_group, run_bounded, spark_session

    spark = spark_session(master)
    context = spark.sparkContext
    tasks = [json.dumps({"shard": dataclasses.asdict(s), "cwd": os.getcwd()}) for s in shards]
    group = new_group("fuzz")
    timeout_s = time_s + max(s.shrink_time_s for s in shards) + CAMPAIGN_MARGIN_S if time_s else CAMPAIGN_TIMEOUT_S
    progress = _Progress(context, group, len(shards))
    started = time.monotonic()
    progress.start()
    try:
        results = run_bounded(spark, group, timeout_s,
                              lambda: context.parallelize(tasks, len(tasks)).mapPartitions(run_tasks).collect(),
                              f"the fuzz campaign ({_count(len(shards), 'shard')})")
    finally:
        progress.stop()
    elapsed = time.monotonic() - started
    by_index = {s.index: s for s in shards}
    outcomes = {}
    for line in results:
        data = json.loads(line)
        shard = by_index[data.pop("index")]
        outcomes[shard.index] = ShardOutcome.from_data(shard, data)
    return [outcomes[s.index] for s in shards], elapsed


# -- on the executors ----------------------------------------------------------------------------

def run_tasks(lines: Iterator[str]) -> Iterator[str]:
    """A Spark task: run each shard described and yield its outcome (JSON)."""
    from rstck.fuzz.budgets import keep_hypothesis_files_in_rstck_directory
    from rstck.fuzz.local_engine import run_local

    keep_hypothesis_files_in_rstck_directory()
    for line in lines:
        data = json.loads(line)
        if os.path.isdir(data["cwd"]) and data["cwd"] not in sys.path:
            sys.path.insert(0, data["cwd"])  # as the local engine's workers see it: the user's project
        shard = Shard(**data["shard"])
        # Forked: a Python worker of Spark's has loaded nothing of the target.
        [outcome] = run_local([shard], jobs=1, method="fork")
        yield json.dumps({"index": shard.index, **outcome.as_data()})


class _Progress:
    """Shards done so far, from Spark's status tracker, on stderr."""

    def __init__(self, context: Any, group: str, total: int):
        self._context = context
        self._group = group
        self._total = total
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rstck-fuzz-progress", daemon=True)
        self._tty = sys.stderr.isatty()
        self._started = time.monotonic()
        self._shown = (-1, 0.0)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._show(self._done(), force=True)
        if self._tty:
            print(file=sys.stderr)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._show(self._done())

    def _done(self) -> int:
        try:
            tracker = self._context.statusTracker()
            done = 0
            for job in tracker.getJobIdsForGroup(self._group):
                info = tracker.getJobInfo(job)
                for stage in (info.stageIds if info else ()):
                    stage_info = tracker.getStageInfo(stage)
                    done += stage_info.numCompletedTasks if stage_info else 0
            return done
        except Exception:  # noqa: BLE001 - the session is stopping: nothing more to show
            return self._shown[0]

    def _show(self, done: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and (done == self._shown[0] if self._tty else now - self._shown[1] < PROGRESS_EVERY_S):
            return
        self._shown = (done, now)
        line = f"[{now - self._started:7.1f} s] {done}/{self._total} shards done (Spark tasks)"
        print(f"\r\x1b[K{line}" if self._tty else line, end="" if self._tty else "\n", file=sys.stderr, flush=True)


# -- on the driver: rows and the summary ---------------------------------------------------------

def save_and_summarise(outcomes: list[ShardOutcome], rows: list[dict[str, Any]], *, target_name: str,
                       results: str | None, jsonl: bool, elapsed: float, master: str | None) -> None:
    """Write the rows (Parquet; JSON Lines too when asked) and print the Spark SQL summary."""
    from rstck.execution.results import results_name, write_results
    from rstck.protocols.spark import spark_session
    from rstck.execution.spark_rows import write_parquet

    spark = spark_session(master)
    if results:
        path = os.path.join(results, results_name("fuzz", target_name, ".parquet"))  # an hdfs:// URL stays one
        try:
            write_parquet(spark, rows, path)
        except Exception as exc:
            from rstck.protocols.spark import one_line
            from rstck.core.verdict import BadInput

            raise BadInput(f"--results {results}: cannot write Parquet ({one_line(exc)})") from exc
        written = [path]
        if jsonl:
            written.append(str(write_results(results, "fuzz", target_name, rows)))
        print(f"\nresults: {', '.join(written)}")
    print(summary(spark, outcomes, target_name, elapsed))


def summary(spark: SparkSession, outcomes: list[ShardOutcome], target_name: str, elapsed: float) -> str:
    """The campaign in numbers, computed with Spark SQL over one row per shard and one per finding."""
    shards = spark.createDataFrame(
        [(o.shard.index, o.shard.role, o.runs, o.examples, o.shrinking, o.steps, float(o.duration_s))
         for o in outcomes],
        "shard int, role string, runs int, examples int, shrinking int, steps long, duration_s double")
    findings = spark.createDataFrame(
        [(target_name, o.shard.index, f.role, f.kind, f.rule if f.kind == "violation" else "error", f.seed,
          bool(f.shrunk), len(f.steps), f.trace) for o in outcomes for f in o.findings],
        "target string, shard int, role string, kind string, rule string, seed long, shrunk boolean, "
        "steps int, trace string")
    shards.createOrReplaceTempView("rstck_fuzz_shards")
    findings.createOrReplaceTempView("rstck_fuzz_findings")
    totals = spark.sql("""
        SELECT count(*) AS shards, sum(runs) AS runs, sum(examples) AS examples, sum(shrinking) AS shrinking,
               sum(steps) AS steps, sum(duration_s) AS task_s
        FROM rstck_fuzz_shards""").first()
    per_rule = spark.sql("""
        SELECT rule, target, role, count(*) AS runs, count(DISTINCT shard) AS shards,
               min(CASE WHEN shrunk THEN steps END) AS shrunk_steps,
               min_by(trace, length(trace)) AS shortest_trace
        FROM rstck_fuzz_findings
        GROUP BY rule, target, role
        ORDER BY rule, target, role""").collect()
    steps = totals.steps or 0
    lines = [f"\nSpark SQL summary: {_count(totals.shards, 'shard')}, {_count(totals.runs or 0, 'run')}, "
             f"{totals.examples or 0:,} examples "
             f"({(totals.examples or 0) - (totals.shrinking or 0):,} generating, {totals.shrinking or 0:,} shrinking), "
             f"{steps:,} steps; {steps / elapsed if elapsed > 0 else 0:,.0f} steps/s over the campaign, "
             f"{steps / totals.task_s if totals.task_s else 0:,.0f} steps/s per task"]
    if per_rule:
        lines.append("  violations per rule and target:")
        for row in per_rule:
            shrunk = f"shrunk to {_count(row.shrunk_steps, 'step')}" if row.shrunk_steps is not None else "not shrunk"
            trace_lines = (row.shortest_trace or "").count("\n") + 1 if row.shortest_trace else 0
            lines.append(f"    {row.rule:<8} {row.target} ({row.role}): found by {_count(row.runs, 'run')} in "
                         f"{_count(row.shards, 'shard')}; {shrunk}; shortest trace {_count(trace_lines, 'line')}")
    else:
        lines.append("  no violation")
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' * (n != 1)}"

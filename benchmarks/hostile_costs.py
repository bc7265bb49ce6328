"""What hostile targets and the process around the checks cost, each against a baseline of the same run.

    python benchmarks/hostile_costs.py

Each figure comes from whole `rstck check ... --no-fuzz` processes, as a user runs them:

- start-up: the process for the synchronous reference, minus the checks' own time (the sum of
  the rows' durations), against `python -c pass`; goal: within 3x.
- the supervisor: the same run in a supervised worker process (the default) and `--in-process`;
  goal: under 0.2 s more.
- a hang costs once: the publisher whose `request` never returns, with the default deadline;
  goal: the whole verification within 30 s.
- after a hang: the infinite synchronous publisher hangs some checks; the checks that did not
  hang, against the same checks run alone in a process of their own; goal: within 2x, and the
  peak memory of the whole run under 100 MiB.

Medians of a few runs where a figure is small. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
# As on a user's machine: compiled modules are cached (pip compiles an installed package).
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(REPO)}
SYNC_REFERENCE = "rstck.reference.targets:sync_publisher"
NEVER_RETURNS = "tests.hostile.targets:request_never_returns"
INFINITE = "tests.hostile.targets:infinite_synchronous"
REPEATS = 5
MiB = 2**20

GOAL_STARTUP_RATIO = 3.0
GOAL_SUPERVISOR_S = 0.2
GOAL_HANG_S = 30.0
GOAL_AFTER_HANG_RATIO = 2.0
GOAL_PEAK_MIB = 100


class Run:
    def __init__(self, wall_s: float, rows: list[dict], code: int):
        self.wall_s, self.rows, self.code = wall_s, rows, code

    @property
    def checks_s(self) -> float:
        return sum(row["duration_s"] for row in self.rows if row["check"] != "fuzz")


def rstck_check(target: str, *options: str) -> Run:
    with tempfile.TemporaryDirectory(prefix="rstck-bench-") as results:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "rstck.cli", "check", target, "--no-fuzz", "--results", results,
                               *options], cwd=REPO, env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        rows = [json.loads(line) for path in pathlib.Path(results).glob("*.jsonl")
                for line in path.read_text(encoding="utf-8").splitlines()]
    return Run(wall, rows, done.returncode)


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=ENV)
    return time.perf_counter() - started


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def startup_and_supervisor() -> bool:
    rstck_check(SYNC_REFERENCE)  # a first run compiles what was never compiled
    bare = statistics.median(python_pass() for _ in range(REPEATS))
    supervised = [rstck_check(SYNC_REFERENCE) for _ in range(REPEATS)]
    in_process = [rstck_check(SYNC_REFERENCE, "--in-process") for _ in range(REPEATS)]
    checks = statistics.median(run.checks_s for run in supervised)
    process = statistics.median(run.wall_s for run in supervised)
    ratio = (process - checks) / bare
    print(f"start-up: `python -c pass` {bare:.3f} s; `rstck check` of the sync reference {process:.3f} s, of which "
          f"the checks {checks:.3f} s: the rest is {ratio:.1f}x `python -c pass` "
          f"(goal <= {GOAL_STARTUP_RATIO:g}x: {verdict(ratio <= GOAL_STARTUP_RATIO)}; {load()})")
    extra = process - statistics.median(run.wall_s for run in in_process)
    print(f"supervisor: a supervised run takes {extra:+.3f} s against --in-process "
          f"(goal < {GOAL_SUPERVISOR_S:g} s: {verdict(extra < GOAL_SUPERVISOR_S)})")
    return ratio <= GOAL_STARTUP_RATIO and extra < GOAL_SUPERVISOR_S


def hang_costs_once(baseline: Run) -> bool:
    run = rstck_check(NEVER_RETURNS)
    hung = sum(1 for row in run.rows if row.get("timed_out"))
    met = run.wall_s <= GOAL_HANG_S and len(run.rows) > 0 and all(row["verdict"] for row in run.rows)
    print(f"a hang costs once: `request` never returns: {len(run.rows)} checks, {hung} of them hung, in "
          f"{run.wall_s:.1f} s = {run.wall_s / baseline.wall_s:.0f}x the sync reference's {baseline.wall_s:.2f} s "
          f"(goal <= {GOAL_HANG_S:g} s: {verdict(met)}; {load()})")
    return met


def after_a_hang() -> bool:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    run = rstck_check(INFINITE, "--timeout", "5")
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / MiB
    peak_known = peak_mib > before * 1024 / MiB  # ru_maxrss is a maximum over every child so far
    hung = [row for row in run.rows if row.get("timed_out")]
    others = [row for row in run.rows if not row.get("timed_out") and row["check"] != "fuzz"]
    alone = rstck_check(INFINITE, "--timeout", "5", "--rules", ",".join(sorted({row["rule"] for row in others})))
    alone_s = {(row["rule"], row["check"]): row["duration_s"] for row in alone.rows}
    after_s = sum(row["duration_s"] for row in others if (row["rule"], row["check"]) in alone_s)
    ratio = after_s / max(sum(alone_s.values()), 1e-9)
    print(f"after a hang: the infinite publisher hung {len(hung)} checks; the {len(others)} others took {after_s:.3f} s, "
          f"{ratio:.2f}x the same checks alone (goal <= {GOAL_AFTER_HANG_RATIO:g}x: "
          f"{verdict(ratio <= GOAL_AFTER_HANG_RATIO)}; {load()})")
    shown = f"{peak_mib:.0f} MiB" if peak_known else f"at most {peak_mib:.0f} MiB (an earlier run's peak)"
    print(f"after a hang: peak memory of the run {shown} (goal < {GOAL_PEAK_MIB} MiB: "
          f"{verdict(peak_mib < GOAL_PEAK_MIB)})")
    return ratio <= GOAL_AFTER_HANG_RATIO and peak_mib < GOAL_PEAK_MIB


def main() -> int:
    # The memory figure first: ru_maxrss of the children is the largest of any so far.
    after = after_a_hang()
    startup = startup_and_supervisor()
    hang = hang_costs_once(rstck_check(SYNC_REFERENCE))
    return 0 if after and startup and hang else 1


if __name__ == "__main__":
    sys.exit(main())

"""The kit's own suite: its wall time and its slowest tests, next to the figures this script last recorded.

    python benchmarks/suite_time.py [--junit FILE] [--record] [--top N]

Runs the suite as `make test` does (`pytest -n 4`, or $TEST_WORKERS, from the repository's root, with this Python),
or reads the JUnit XML of a run already made (`--junit`). Prints the wall time, the sum of the tests' times, how
many tests went over the 20 s budget (tests/time_budget.py), and the N slowest tests, each with the time recorded
last and the ratio; `--record` writes this run's figures to benchmarks/suite_time.json for the next comparison. The
goal: the suite within 8 minutes of wall time on a quiet two-core machine (docs/testing.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORD = ROOT / "benchmarks" / "suite_time.json"
GOAL_S = 8 * 60
BUDGET_S = 20.0
KEPT = 60  # how many of the slowest tests a record keeps


def run_suite(junit: pathlib.Path) -> float:
    """The suite's wall time, pytest's start-up included."""
    started = time.perf_counter()
    workers = os.environ.get("TEST_WORKERS", "4")
    subprocess.run([sys.executable, "-m", "pytest", "-n", workers, "-q", "-p", "no:cacheprovider",
                    f"--junitxml={junit}"], cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def test_times(junit: pathlib.Path) -> tuple[dict[str, float], float | None]:
    """nodeid-like name -> seconds, per test case; and the suite's time as pytest reported it."""
    root = ElementTree.parse(junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    times = {f"{case.get('classname')}::{case.get('name')}": float(case.get("time") or 0.0)
             for case in root.iter("testcase")}
    return times, float(suite.get("time")) if suite is not None and suite.get("time") else None


def ratio(now: float, before: float | None) -> str:
    return f"{before:8.2f} s {now / before:6.2f}x" if before else f"{'-':>10} {'':>7}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", type=pathlib.Path, help="the JUnit XML of a run already made, instead of a run")
    parser.add_argument("--record", action="store_true", help=f"write this run's figures to {RECORD.name}")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    if args.junit:
        times, wall = test_times(args.junit)
    else:
        with tempfile.TemporaryDirectory() as scratch:
            junit = pathlib.Path(scratch) / "junit.xml"
            wall = run_suite(junit)
            times, _ = test_times(junit)
    before = recorded.get("tests", {})
    total = sum(times.values())
    print(f"recorded: {recorded.get('date', 'nothing yet')}, on a machine of {recorded.get('cores', '?')} cores")
    print(f"{'':12}{'now':>10} {'recorded':>10} {'ratio':>7}")
    if wall is not None:
        print(f"{'wall time':12}{wall:8.1f} s {ratio(wall, recorded.get('wall_s'))}   goal {GOAL_S // 60} min: "
              f"{'met' if wall <= GOAL_S else 'NOT met'}")
    print(f"{'test time':12}{total:8.1f} s {ratio(total, recorded.get('test_s'))}   {len(times)} tests")
    over = [name for name, seconds in times.items() if seconds > BUDGET_S]
    print(f"over {BUDGET_S:g} s: {len(over)} (those without a reason in their docstring are listed by the run itself)")
    print(f"\nthe {args.top} slowest:")
    slowest = sorted(times.items(), key=lambda item: item[1], reverse=True)
    for name, seconds in slowest[:args.top]:
        print(f"{seconds:8.2f} s {ratio(seconds, before.get(name))}  {name}")
    if args.record:
        RECORD.write_text(json.dumps({
            "date": datetime.date.today().isoformat(), "cores": os.cpu_count(), "wall_s": wall, "test_s": total,
            "tests": dict(slowest[:KEPT])}, indent=1) + "\n")
        print(f"\nrecorded in {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

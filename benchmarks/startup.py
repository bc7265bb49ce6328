"""What `rstck check` costs besides its checks: a one-check run against `python -c pass`, measured in the same run.

    python benchmarks/startup.py [--runs N] [--target MODULE:ATTR] [--rules ID]

Times, alternating, `python -c pass` and `rstck check TARGET --rules ID --no-fuzz --results DIR` (one check,
in the supervised worker, as a user runs it), each as a whole process. The kit's own cost is a run's wall time
less the time its checks took (the rows' `duration_s`). Prints the medians, the ratio of the kit's cost to the
bare interpreter's, and whether the goal holds (within 4x).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_RATIO = 4.0


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def check_run(target: str, rules: str) -> tuple[float, float]:
    """Wall time of one `rstck check`, and the time its checks took."""
    with tempfile.TemporaryDirectory() as results:
        wall = timed([sys.executable, "-m", "rstck", "check", target, "--rules", rules, "--no-fuzz",
                      "--results", results])
        rows = [json.loads(line) for path in pathlib.Path(results).glob("*.jsonl") for line in path.open()]
    return wall, sum(row["duration_s"] for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--target", default="rstck.reference.targets:sync_publisher")
    parser.add_argument("--rules", default="1.2", help="a rule with one check (default 1.2)")
    args = parser.parse_args()
    check_run(args.target, args.rules)  # compiled modules and warm file caches for both, before timing
    timed([sys.executable, "-c", "pass"])
    bare, overhead, checks = [], [], []
    for _ in range(args.runs):
        bare.append(timed([sys.executable, "-c", "pass"]))
        wall, in_checks = check_run(args.target, args.rules)
        overhead.append(wall - in_checks)
        checks.append(in_checks)
    bare_s, overhead_s = statistics.median(bare), statistics.median(overhead)
    ratio = overhead_s / bare_s
    print(f"python -c pass:                    median {bare_s * 1000:7.1f} ms ({args.runs} runs)")
    print(f"rstck check, less its checks' time: median {overhead_s * 1000:7.1f} ms "
          f"(its checks took {statistics.median(checks) * 1000:.1f} ms)")
    print(f"ratio: {ratio:.1f}x (goal: within {GOAL_RATIO:g}x) -> {'met' if ratio <= GOAL_RATIO else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

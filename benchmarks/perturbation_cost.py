"""What schedule perturbation costs: a default `rstck check` of conformant targets, with it and without.

    python benchmarks/perturbation_cost.py [--runs N] [MODULE:ATTR ...]

Runs `rstck check TARGET` (every check, then the fuzz phase: the default) as a whole process,
alternately with perturbation on (as shipped) and off (`RSTCK_PERTURB=0`), N times each in the same
run, and prints the median wall time of each and their ratio. The goal: within 1.5x of the baseline.
Whole processes are compared with whole processes; alternating them spreads a busy machine's noise
over both sides. `--in-process` times only the checks, in this process, which shows the checks' own
cost with less noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

TARGETS = [
    "rstck.reference.targets:sync_publisher",
    "rstck.reference.targets:threaded_publisher",
    "rstck.reference.targets:asyncio_publisher",
    "rstck.reference.targets:buffered_subscriber",
    "rstck.reference.targets:map_processor",
]
GOAL_RATIO = 1.5


def timed_check(spec: str, perturb: bool) -> tuple[float, int]:
    env = {**os.environ, "RSTCK_PERTURB": "1" if perturb else "0"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rstck", "check", spec], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, done.returncode


def timed_checks(spec: str, perturb: bool) -> float:
    """Seconds to run every planned check once in this process (no interpreter start-up, no fuzz phase)."""
    from rstck.execution.plan import plan
    from rstck.execution.runner import run_check
    from rstck.core.target import load_target

    os.environ["RSTCK_PERTURB"] = "1" if perturb else "0"
    target = load_target(spec)
    planned = plan(target)
    started = time.perf_counter()
    for p in planned:
        run_check(p.check, p.target)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", metavar="MODULE:ATTR", default=TARGETS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--in-process", action="store_true",
                        help="time only the checks, in this process: less noise from start-up and the fuzz phase")
    args = parser.parse_args(argv)
    if args.in_process:
        return in_process(args.targets, args.runs)
    all_met = True
    for spec in args.targets:
        on: list[float] = []
        off: list[float] = []
        codes = set()
        for _ in range(args.runs):
            for perturb, times in ((False, off), (True, on)):
                seconds, code = timed_check(spec, perturb)
                times.append(seconds)
                codes.add((perturb, code))
        ratio = statistics.median(on) / statistics.median(off)
        met = ratio <= GOAL_RATIO
        all_met &= met
        print(f"{spec}:")
        print(f"  perturbation off: median {statistics.median(off):6.2f} s  ({', '.join(f'{t:.2f}' for t in off)})")
        print(f"  perturbation on:  median {statistics.median(on):6.2f} s  ({', '.join(f'{t:.2f}' for t in on)})")
        print(f"  ratio: {ratio:.2f}x (goal <= {GOAL_RATIO}x: {'met' if met else 'NOT met'}); exit codes "
              f"{sorted(codes)}")
    return 0 if all_met else 1


def in_process(targets: list[str], runs: int) -> int:
    all_met = True
    for spec in targets:
        timed_checks(spec, True)  # warm up: imports, first-use costs
        on: list[float] = []
        off: list[float] = []
        for _ in range(runs):
            off.append(timed_checks(spec, False))
            on.append(timed_checks(spec, True))
        ratio = statistics.median(on) / statistics.median(off)
        all_met &= ratio <= GOAL_RATIO
        print(f"{spec} (checks only, in process): off {statistics.median(off):.3f} s, on {statistics.median(on):.3f} s, "
              f"ratio {ratio:.2f}x")
    os.environ.pop("RSTCK_PERTURB", None)
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())

"""How fast the fuzzer steps: state-machine steps per second on one core, and what --jobs 2 buys.

    python benchmarks/fuzz_speed.py [--examples N] [MODULE:ATTR]

First, seeded runs of the publisher machine against the target (the synchronous reference
publisher by default) in this process, on one core: steps per second, against the goal of
2,000. Then the same campaign through the local engine with --jobs 1 and --jobs 2 (worker
processes, including their start-up), and the speedup of the second over the first.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from rstck.fuzz.campaign import plan_shards, run_local
from rstck.fuzz.run import run_machine
from rstck.target import load_target

TARGET = "rstck.reference.targets:sync_publisher"
GOAL_STEPS_PER_S = 2_000
PROFILE = "rstck-default"
STEPS = 30
PER_RUN = 100


def one_core(spec: str, examples: int) -> tuple[int, int, float]:
    target = load_target(spec)
    runs, steps, done = 0, 0, 0
    started = time.perf_counter()
    while done < examples:
        report = run_machine(target, "publisher", seed=runs, examples=PER_RUN, steps=STEPS, profile=PROFILE,
                             timeout_s=5.0)
        if report.findings:
            sys.exit(f"fuzz_speed: the target has findings ({report.findings[0].rule}); benchmark a clean one")
        done += report.examples
        steps += report.steps
        runs += 1
    return done, steps, time.perf_counter() - started


def campaign(spec: str, examples: int, jobs: int) -> tuple[int, float]:
    shards = plan_shards(spec, ["publisher"], examples=examples, time_s=None, jobs=jobs, base_seed=0,
                         profile=PROFILE, steps=STEPS)
    started = time.perf_counter()
    outcomes = run_local(shards, jobs=jobs)
    return sum(o.steps for o in outcomes), time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default=TARGET)
    parser.add_argument("--examples", type=int, default=4_000, help="examples per measurement (default 4000)")
    args = parser.parse_args()
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(".rstck", "hypothesis-storage"))

    examples, steps, seconds = one_core(args.target, args.examples)
    rate = steps / seconds
    print(f"one core:  {examples:,} examples, {steps:,} steps in {seconds:.1f} s = {rate:,.0f} steps/s "
          f"(goal {GOAL_STEPS_PER_S:,}: {'met' if rate >= GOAL_STEPS_PER_S else 'NOT met'})")
    timings = {}
    for jobs in (1, 2):
        steps, seconds = campaign(args.target, args.examples, jobs)
        timings[jobs] = seconds
        print(f"--jobs {jobs}: {steps:,} steps in {seconds:.1f} s = {steps / seconds:,.0f} steps/s "
              "(worker start-up included)")
    print(f"speedup of --jobs 2 over --jobs 1: {timings[1] / timings[2]:.2f}x on {os.cpu_count()} cores")
    return 0 if rate >= GOAL_STEPS_PER_S else 1


if __name__ == "__main__":
    sys.exit(main())

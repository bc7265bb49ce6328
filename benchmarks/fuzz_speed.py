"""How fast the fuzzer steps, against what Hypothesis' stateful testing allows on this machine.

    python benchmarks/fuzz_speed.py [--examples N] [MODULE:ATTR]

First, on one core in this process: seeded runs of the publisher machine against the target (the
synchronous reference publisher by default), and the same number of examples of a hollow copy of
that machine (the same rules drawing the same arguments, doing nothing): the ceiling any
fuzzer built on Hypothesis' state machines has here. Steps per second of both, their ratio, and
the goal of 3,000 steps/s. Then the same campaign through the local engine with --jobs 1 and
--jobs 2 (worker processes, their start-up included) and the speedup, against the goal of 1.7x.
The load average is printed next to the figures: on a busy machine they say little.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from rstck.fuzz.budgets import keep_hypothesis_files_in_rstck_directory
from rstck.fuzz.campaign import plan_shards
from rstck.fuzz.local_engine import run_local
from rstck.fuzz.publisher import PublisherMachine
from rstck.fuzz.run import run_machine
from rstck.core.target import load_target

TARGET = "rstck.reference.targets:sync_publisher"
GOAL_STEPS_PER_S = 3_000
GOAL_SPEEDUP = 1.7
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


def hollow_machine() -> tuple[type[RuleBasedStateMachine], list[int]]:
    """PublisherMachine's rules with their argument strategies, doing nothing but count their steps."""
    counted = [0]

    def nothing(self, **arguments) -> None:
        counted[0] += 1

    rules = {name: rule(**found.arguments)(nothing) for name in dir(PublisherMachine)
             if (found := getattr(getattr(PublisherMachine, name), "hypothesis_stateful_rule", None))}
    return type("HollowPublisherMachine", (RuleBasedStateMachine,), rules), counted


def hollow(examples: int) -> tuple[int, float]:
    machine, counted = hollow_machine()
    done = 0
    started = time.perf_counter()
    while done < examples:
        run = min(PER_RUN, examples - done)
        run_state_machine_as_test(machine, settings=settings(
            max_examples=run, stateful_step_count=STEPS, deadline=None, database=None,
            phases=[Phase.generate], suppress_health_check=list(HealthCheck)))
        done += run
    return counted[0], time.perf_counter() - started


def campaign(spec: str, examples: int, jobs: int) -> tuple[int, float]:
    shards = plan_shards(spec, ["publisher"], examples=examples, time_s=None, jobs=jobs, base_seed=0,
                         profile=PROFILE, steps=STEPS)
    started = time.perf_counter()
    outcomes = run_local(shards, jobs=jobs)
    return sum(o.steps for o in outcomes), time.perf_counter() - started


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default=TARGET)
    parser.add_argument("--examples", type=int, default=4_000, help="examples per measurement (default 4000)")
    args = parser.parse_args()
    keep_hypothesis_files_in_rstck_directory()

    ceiling_steps, ceiling_s = hollow(args.examples)
    ceiling = ceiling_steps / ceiling_s
    print(f"hollow machine (baseline): {ceiling_steps:,} steps in {ceiling_s:.1f} s = {ceiling:,.0f} steps/s ({load()})")
    examples, steps, seconds = one_core(args.target, args.examples)
    rate = steps / seconds
    rate_met = rate >= GOAL_STEPS_PER_S
    print(f"one core:  {examples:,} examples, {steps:,} steps in {seconds:.1f} s = {rate:,.0f} steps/s, "
          f"{rate / ceiling:.2f}x the hollow machine (goal {GOAL_STEPS_PER_S:,} steps/s: "
          f"{'met' if rate_met else 'NOT met'}; {load()})")
    timings = {}
    for jobs in (1, 2):
        steps, seconds = campaign(args.target, args.examples, jobs)
        timings[jobs] = seconds
        print(f"--jobs {jobs}: {steps:,} steps in {seconds:.1f} s = {steps / seconds:,.0f} steps/s "
              f"(worker start-up included; {load()})")
    speedup = timings[1] / timings[2]
    speedup_met = speedup >= GOAL_SPEEDUP
    print(f"speedup of --jobs 2 over --jobs 1: {speedup:.2f}x (goal {GOAL_SPEEDUP}x on an idle 2-core machine: "
          f"{'met' if speedup_met else 'NOT met'})")
    return 0 if rate_met and speedup_met else 1


if __name__ == "__main__":
    sys.exit(main())

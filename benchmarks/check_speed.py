"""How much settling saves: every check against a target, settled vs. a fixed quiet period.

    python benchmarks/check_speed.py [MODULE:ATTR ...]

Runs the full verification (every check `rstck.execution.plan.plan` yields) against each target
twice in one process: once as shipped, where `settle()` returns when no work is left,
and once with a fixed 100 ms wait in place of every settle, which is how the JVM TCK
decides that nothing more arrives. Prints both times, their ratio, and whether the
goals hold (settled at least 10x faster, and under 0.2 s per verification).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import sys
import time

from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.core.settle import DEFAULT_DEADLINE_S, FixedDelaySettler
from rstck.core.target import Target, load_target

# One verification per target; adding one is one line.
VERIFICATIONS = [
    "rstck.reference.targets:sync_publisher",
    "rstck.reference.targets:buffered_subscriber",
    "rstck.reference.targets:map_processor",
]

FIXED_DELAY_S = 0.1  # the JVM TCK's default no-signals timeout
GOAL_RATIO = 10.0
GOAL_SETTLED_S = 0.2
# A check that settles 60 times needs 6 s of fixed waits: more than the default deadline
# per check, which is meant for settled runs.
FIXED_DELAY_DEADLINE_S = 120.0


@contextlib.contextmanager
def fixed_delay(target: Target, delay_s: float):
    """`target` as a subclass whose every settle waits `delay_s` and looks once.

    The same object, not a copy: shipped factories reach the running check's executor or
    loop through their own module-level target (`threaded_publisher.executor`).
    """
    shipped = type(target)

    def make_settler(self, trace):
        return FixedDelaySettler(trace, delay_s)

    target.__class__ = type(f"FixedDelay{shipped.__name__}", (shipped,), {"make_settler": make_settler})
    try:
        yield target
    finally:
        target.__class__ = shipped


def run_verification(target: Target, timeout_s: float = DEFAULT_DEADLINE_S) -> tuple[float, collections.Counter]:
    """Seconds to run every planned check once, and the verdicts reached."""
    planned = plan(target)
    started = time.perf_counter()
    verdicts = collections.Counter(run_check(p.check, p.target, timeout_s=timeout_s).verdict.value
                                   for p in planned)
    return time.perf_counter() - started, verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", metavar="MODULE:ATTR", default=VERIFICATIONS)
    args = parser.parse_args(argv)
    all_met = True
    for spec in args.targets:
        target = load_target(spec)
        checks = len(plan(target))
        settled_s, settled_verdicts = run_verification(target)
        with fixed_delay(target, FIXED_DELAY_S):
            fixed_s, fixed_verdicts = run_verification(target, FIXED_DELAY_DEADLINE_S)
        ratio = fixed_s / settled_s
        met = ratio >= GOAL_RATIO and settled_s < GOAL_SETTLED_S
        all_met &= met
        print(f"{spec}: {checks} checks")
        print(f"  settled:            {settled_s:8.3f} s  {_shown(settled_verdicts)}")
        print(f"  fixed {FIXED_DELAY_S * 1000:.0f} ms quiet:  {fixed_s:8.3f} s  {_shown(fixed_verdicts)}")
        if fixed_verdicts != settled_verdicts:
            print("  note: the verdicts differ, so the two runs did not do the same work")
        print(f"  ratio:              {ratio:8.1f}x")
        print(f"  goals (>= {GOAL_RATIO:g}x, settled < {GOAL_SETTLED_S:g} s): {'met' if met else 'NOT met'}")
    return 0 if all_met else 1


def _shown(verdicts: collections.Counter) -> str:
    return ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items()))


if __name__ == "__main__":
    sys.exit(main())

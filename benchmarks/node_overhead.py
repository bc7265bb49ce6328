"""What a Node process per check costs, with the pool and without it.

    python benchmarks/node_overhead.py [--repeats R] [MODULE]

Runs the publisher checks of a JavaScript module (by default the shipped reference,
rstck/reference/js/reactive_streams.js) three ways in one process:

- fresh: every check starts `node` itself and waits for it to load the module (no process started ahead);
- pooled: the default: every check gets a process of its own, started ahead by the pool while the
  checks before it ran;
- reused: isolation "reuse": one process serves check after check (reset between them). This is the
  baseline: the checks' own work, with no process to start.

A mode's per-case overhead is its time per check less the reused run's. Also printed: how long a
check waited, on its own thread, to get its process and to give it back. Every figure is the best of
R runs (noise on a shared machine only ever slows a run down). Goal: pooled overhead <= 20 ms per
check. Exits 1 when it is missed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from rstck.protocols.node import lifecycle
from rstck.adapters.node.target import NodeSettler, NodeTarget
from rstck.execution.plan import plan
from rstck.execution.runner import run_check

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rstck", "reference", "js",
                         "reactive_streams.js")
MODES = {
    "fresh": {"isolation": "check", "spares": 0},
    "pooled": {"isolation": "check"},
    "reused": {"isolation": "reuse"},
}
GOAL_POOLED_MS = 20.0
REPEATS = 2


class Clock:
    """Time a check's thread spends getting its process (NodeSettler.bind's first call) and giving it back."""

    def __init__(self) -> None:
        self.spent_s = 0.0
        bind, give_back = NodeSettler.bind, NodeSettler.give_back

        def timed_bind(settler, session):
            if settler.process is not None:
                return bind(settler, session)
            started = time.perf_counter()
            try:
                return bind(settler, session)
            finally:
                self.spent_s += time.perf_counter() - started

        def timed_give_back(settler):
            started = time.perf_counter()
            try:
                give_back(settler)
            finally:
                self.spent_s += time.perf_counter() - started

        NodeSettler.bind, NodeSettler.give_back = timed_bind, timed_give_back


def run_mode(module: str, options: dict, clock: Clock) -> tuple[float, float, int]:
    """Seconds per check, seconds per check spent on processes, and the checks that did not pass or skip."""
    target = NodeTarget(module, **options)
    try:
        planned = plan(target, subjects=frozenset({"publisher"}))
        clock.spent_s = 0.0
        started = time.perf_counter()
        bad = sum(run_check(p.check, p.target).verdict.value in ("fail", "error") for p in planned)
        elapsed = time.perf_counter() - started
        return elapsed / len(planned), clock.spent_s / len(planned), bad
    finally:
        target.close()
        lifecycle.reap(1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", nargs="?", default=REFERENCE)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args(argv)
    clock = Clock()
    counted = NodeTarget(args.module, spares=0)
    checks = len(plan(counted, subjects=frozenset({"publisher"})))
    counted.close()
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(args.repeats):
        for mode, options in MODES.items():
            figures = run_mode(args.module, options, clock)
            if mode not in best or figures[0] < best[mode][0]:
                best[mode] = figures
    baseline = best["reused"][0]
    overhead = {mode: (best[mode][0] - baseline) * 1000 for mode in ("fresh", "pooled")}
    print(f"{args.module}: {checks} publisher checks, best of {args.repeats} "
          f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    for mode in MODES:
        per_check, waited, bad = best[mode]
        extra = f"  overhead {overhead[mode]:6.1f} ms" if mode in overhead else "  (baseline)"
        print(f"  {mode:7} {per_check * 1000:6.1f} ms per check{extra}; getting and giving back the process "
              f"{waited * 1000:5.1f} ms" + (f"; {bad} checks failed" if bad else ""))
    ratio = overhead["fresh"] / overhead["pooled"] if overhead["pooled"] > 0 else float("inf")
    met = overhead["pooled"] <= GOAL_POOLED_MS
    print(f"  fresh / pooled overhead: {ratio:.1f}x")
    print(f"  goal (pooled overhead <= {GOAL_POOLED_MS:g} ms per check): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

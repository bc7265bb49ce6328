"""What a long stream costs through the kit's probe, against a bare subscriber in the same run.

    python benchmarks/long_streams.py [--elements N] [--memory-elements M]

Per element: the synchronous reference publisher sends N elements for one request, once into a
bare subscriber that only counts, once into a check's probe (trace, counters, rules' state);
the ratio of the two times, against the goal of 3x. Memory: each of the two receives M elements
in a fresh process of its own; the difference of their peak resident sets, against the goal of
50 MiB. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import threading
import time

from rstck.adapters.inprocess.target import InProcessTarget
from rstck.reference.publishers import IterablePublisher

GOAL_RATIO = 3.0
GOAL_EXTRA_MIB = 50
MiB = 2**20


class BareSubscriber:
    """Counts what it receives: the least any subscriber does."""

    def __init__(self) -> None:
        self.received = 0
        self.subscription = None

    def on_subscribe(self, subscription) -> None:
        self.subscription = subscription

    def on_next(self, element) -> None:
        self.received += 1

    def on_error(self, error) -> None:
        pass

    def on_complete(self) -> None:
        pass


def through_bare(n: int) -> float:
    subscriber = BareSubscriber()
    IterablePublisher(range(n)).subscribe(subscriber)
    started = time.perf_counter()
    subscriber.subscription.request(n)
    elapsed = time.perf_counter() - started
    assert subscriber.received == n, subscriber.received
    return elapsed


def through_probe(n: int) -> float:
    target = InProcessTarget(create_publisher=lambda size: IterablePublisher(range(size)))
    session = target.open_session(600)
    session.check_thread = threading.current_thread()
    probe = session.subscribe(session.create_publisher(n))
    started = time.perf_counter()
    probe.request(n)
    elapsed = time.perf_counter() - started
    assert probe.received == n, probe.received
    return elapsed


def peak_rss_bytes(way: str, n: int) -> int:
    """The peak resident set of a fresh process that streams n elements the given way."""
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import long_streams, resource; "
            f"long_streams.through_{way}({n}); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1]) * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=1_000_000, help="per-element timing (default 1,000,000)")
    parser.add_argument("--memory-elements", type=int, default=10_000_000, help="memory (default 10,000,000)")
    args = parser.parse_args(argv)
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")

    bare = min(through_bare(args.elements) for _ in range(3))
    probe = min(through_probe(args.elements) for _ in range(3))
    ratio = probe / bare
    time_met = ratio <= GOAL_RATIO
    print(f"per element ({args.elements:,} elements, best of 3): bare subscriber {bare / args.elements * 1e6:.2f} us, "
          f"probe {probe / args.elements * 1e6:.2f} us = {ratio:.2f}x (goal <= {GOAL_RATIO:g}x: "
          f"{'met' if time_met else 'NOT met'})")

    bare_peak, probe_peak = peak_rss_bytes("bare", args.memory_elements), peak_rss_bytes("probe", args.memory_elements)
    extra = (probe_peak - bare_peak) / MiB
    memory_met = extra <= GOAL_EXTRA_MIB
    print(f"peak memory ({args.memory_elements:,} elements, one process each): bare subscriber "
          f"{bare_peak / MiB:.1f} MiB, probe {probe_peak / MiB:.1f} MiB = {extra:+.1f} MiB "
          f"(goal <= {GOAL_EXTRA_MIB} MiB more: {'met' if memory_met else 'NOT met'})")
    return 0 if time_met and memory_met else 1


if __name__ == "__main__":
    sys.exit(main())

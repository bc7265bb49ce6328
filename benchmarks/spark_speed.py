"""What Spark costs and buys: the DataFrame publisher against collect(), and fuzz campaigns on Spark.

    python benchmarks/spark_speed.py [--rows N] [--examples N]

1. `DataFramePublisher` rows/s against `df.collect()` of the same DataFrame (200,000 rows in 20
   partitions), with unbounded demand and with demand of 1,000 at a time, and the Spark jobs it
   started per request (the status tracker counts them). Goals (set here): unbounded demand at least
   half as fast as collect(); at most one job per request, plus one.
2. One fuzz campaign (the sync reference publisher, 16 shards of 100 examples) on Spark `local[2]`
   against `local[1]` (goal: at least 1.7x), and on Spark `local[2]` against the local engine with
   `--jobs 2` (reported: on one 2-core machine processes are expected to win). Each campaign runs in a
   process of its own (one JVM per process); steps/s is the campaign's own figure, which leaves out
   starting the session (Spark) but not starting the worker processes (local engine) or Spark's
   Python workers.

Ratios are against baselines measured in the same run; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

FUZZ_TARGET = "rstck.reference.targets:sync_publisher"
RSTCK = "import sys; from rstck.cli import main; sys.exit(main())"  # `rstck` in a process of its own
GOAL_UNBOUNDED = 0.5  # publisher rows/s over collect() rows/s
GOAL_LOCAL2 = 1.7  # local[2] steps/s over local[1] steps/s
_RATE = re.compile(r"in ([\d.]+) s, ([\d,]+) steps/s")


def publisher_figures(rows: int) -> bool:
    from rstck.api import MAX_DEMAND
    from rstck.protocols.spark import spark_session
    from rstck.reference.spark import DataFramePublisher
    from rstck.reference.subscribers import BufferedSubscriber

    spark = spark_session("local[2]")
    frame = spark.range(0, rows, numPartitions=20)
    frame.collect()  # warm: the first job of a kind loads code
    started = time.perf_counter()
    collected = len(frame.collect())
    collect_rate = collected / (time.perf_counter() - started)

    def publish(batch: int) -> tuple[float, int, int, int]:
        publisher = DataFramePublisher(frame)
        subscriber = _Counting(BufferedSubscriber(buffer_size=batch) if batch < MAX_DEMAND else _Unbounded())
        started = time.perf_counter()
        publisher.subscribe(subscriber)
        if not subscriber.done.wait(600):
            raise SystemExit("the publisher did not finish within 600 s")
        rate = len(subscriber.received) / (time.perf_counter() - started)
        tracker = spark.sparkContext.statusTracker()
        jobs = sum(len(tracker.getJobIdsForGroup(group)) for group in publisher.job_groups)
        return rate, jobs, len(subscriber.received), subscriber.requests

    unbounded_rate, unbounded_jobs, got, _ = publish(MAX_DEMAND)
    assert got == rows, got
    batch = 1_000
    batched_rate, batched_jobs, got, requests = publish(batch)
    assert got == rows, got
    ratio = unbounded_rate / collect_rate
    print(f"DataFramePublisher, {rows:,} rows in 20 partitions (local[2]):")
    print(f"  df.collect():                  {collect_rate:12,.0f} rows/s")
    print(f"  publisher, unbounded demand:   {unbounded_rate:12,.0f} rows/s  ({ratio:.2f}x collect); "
          f"{unbounded_jobs} Spark job{'s' * (unbounded_jobs != 1)} for 1 request")
    print(f"  publisher, demand {batch:,} at a time: {batched_rate:9,.0f} rows/s  ({batched_rate / collect_rate:.2f}x "
          f"collect); {batched_jobs} Spark jobs for {requests} requests "
          f"({batched_jobs / requests:.2f} jobs per request)")
    met_rate = ratio >= GOAL_UNBOUNDED
    met_jobs = batched_jobs <= requests + 1 and unbounded_jobs <= 2
    print(f"  goal (unbounded >= {GOAL_UNBOUNDED:g}x collect): {'met' if met_rate else 'NOT met'}")
    print(f"  goal (at most one job per request, plus one): {'met' if met_jobs else 'NOT met'}")
    return met_rate and met_jobs


class _Counting:
    """A subscriber as it is, whose requests are counted."""

    def __init__(self, inner):
        self.inner = inner
        self.requests = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def on_subscribe(self, subscription):
        outer = self

        class Counted:
            def request(self, n):
                outer.requests += 1
                subscription.request(n)

            def cancel(self):
                subscription.cancel()

        self.inner.on_subscribe(Counted())


class _Unbounded:
    def __init__(self):
        import threading

        self.received = []
        self.done = threading.Event()

    def on_subscribe(self, subscription):
        from rstck.api import MAX_DEMAND

        subscription.request(MAX_DEMAND)

    def on_next(self, item):
        self.received.append(item)

    def on_error(self, error):
        self.done.set()

    def on_complete(self):
        self.done.set()


def campaign(examples: int, *options: str) -> float:
    command = [sys.executable, "-c", RSTCK, "fuzz", FUZZ_TARGET, "--examples", str(examples), "--seed", "0",
               "--database", "none", "--profile", "rstck-default", *options]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, env={**os.environ, "CI": ""})
    found = _RATE.findall(done.stdout)
    if done.returncode != 0 or not found:
        raise SystemExit(f"{' '.join(command[3:])} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return float(found[-1][1].replace(",", ""))


def campaign_figures(examples: int) -> bool:
    shards = max(2, examples // 100)
    spark = ("--engine", "spark", "--shards", str(shards))
    one = campaign(examples, *spark, "--spark-master", "local[1]")
    two = campaign(examples, *spark, "--spark-master", "local[2]")
    processes = campaign(examples, "--jobs", "2")
    print(f"fuzz campaign, {FUZZ_TARGET}, {examples:,} examples in {shards} shards:")
    print(f"  Spark local[1]:            {one:8,.0f} steps/s")
    print(f"  Spark local[2]:            {two:8,.0f} steps/s  ({two / one:.2f}x local[1])")
    print(f"  local engine, --jobs 2:    {processes:8,.0f} steps/s  (Spark local[2] is {two / processes:.2f}x of it)")
    met = two / one >= GOAL_LOCAL2
    print(f"  goal (local[2] >= {GOAL_LOCAL2:g}x local[1]): {'met' if met else 'NOT met'}")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--examples", type=int, default=1_600)
    args = parser.parse_args(argv)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    met = publisher_figures(args.rows)
    met &= campaign_figures(args.examples)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

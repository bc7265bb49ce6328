"""What the Spark tests share: subscribers that wait, and what the status tracker says of a job group."""

from __future__ import annotations

import threading
import time
from typing import Any

from rstck.api import MAX_DEMAND

WAIT_S = 60.0  # a bound on every wait: a test that hangs fails instead
SESSION_MASTER = "local[2]"


def shared_session():
    """The process's one Spark session (one JVM), which every Spark test shares, whichever starts it first: the
    `spark` fixture (conftest.py), and the checks and reproducers of tests/repro/test_spark.py."""
    from rstck.protocols.spark import spark_session

    return spark_session(SESSION_MASTER)


class Recorder:
    """A subscriber that requests `first` on subscribe (then nothing by itself) and records what comes."""

    def __init__(self, first: int = 0):
        self.first = first
        self.subscription: Any = None
        self.items: list[Any] = []
        self.error: BaseException | None = None
        self.completed = False
        self.ended = threading.Event()
        self.arrived = threading.Condition()

    def on_subscribe(self, subscription: Any) -> None:
        self.subscription = subscription
        if self.first:
            subscription.request(self.first)

    def on_next(self, item: Any) -> None:
        with self.arrived:
            self.items.append(item)
            self.arrived.notify_all()

    def on_error(self, error: BaseException) -> None:
        self.error = error
        self.ended.set()

    def on_complete(self) -> None:
        self.completed = True
        self.ended.set()

    def wait_for(self, count: int) -> None:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.items) >= count or self.ended.is_set(), WAIT_S), \
                f"only {len(self.items)} of {count} rows within {WAIT_S} s"

    def wait_ended(self) -> None:
        assert self.ended.wait(WAIT_S), f"no terminal signal within {WAIT_S} s ({len(self.items)} rows)"


def unbounded() -> Recorder:
    return Recorder(MAX_DEMAND)


def idle(executor) -> None:
    """Wait until a one-thread executor has run everything submitted before now."""
    executor.submit(lambda: None).result(WAIT_S)


def jobs_of(spark, group: str) -> list[Any]:
    tracker = spark.sparkContext.statusTracker()
    return [tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(group)]


def partitions_fetched(spark, publisher) -> tuple[int, int]:
    """(jobs, partitions) every subscription of `publisher` ran, as Spark's status tracker counts them."""
    tracker = spark.sparkContext.statusTracker()
    jobs = partitions = 0
    for group in publisher.job_groups:
        for info in jobs_of(spark, group):
            jobs += 1
            partitions += sum(tracker.getStageInfo(stage).numTasks for stage in info.stageIds)
    return jobs, partitions


def wait_until(condition, what: str, timeout_s: float = WAIT_S) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, f"{what}: not within {timeout_s} s"
        time.sleep(0.05)

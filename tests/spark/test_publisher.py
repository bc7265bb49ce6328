"""DataFramePublisher: rows in order, pulled as demand arrives (the status tracker counts the partitions
fetched), cancel stops the running job, a failing or overlong job is on_error; and the Spark reference
target is conformant."""

from __future__ import annotations

import concurrent.futures
import time

import pytest

from rstck.protocols.spark import SparkJobFailed
from rstck.reference.spark import DataFramePublisher, _PartitionReader

from .helpers import Recorder, idle, jobs_of, partitions_fetched, unbounded, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

ROWS_PER_PARTITION = 10


@pytest.fixture
def executor():
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    yield pool
    pool.shutdown(wait=False, cancel_futures=True)


def ranged(spark, partitions: int = 10):
    return spark.range(0, partitions * ROWS_PER_PARTITION, numPartitions=partitions)


def test_every_row_arrives_in_order_then_on_complete(spark, executor):
    publisher = DataFramePublisher(ranged(spark, 5), executor=executor)
    subscriber = Recorder(7)
    publisher.subscribe(subscriber)
    while not subscriber.ended.is_set():
        subscriber.wait_for(len(subscriber.items) + 7)
        subscriber.subscription.request(7)
    assert subscriber.completed and subscriber.error is None
    assert [row.id for row in subscriber.items] == list(range(50))


class _Greedy(_PartitionReader):
    """A mutant that ignores demand: it fetches every partition at once (what collect() would)."""

    def _fetch(self) -> None:
        self._demand = lambda: 10**9
        self._largest = self._largest or 1.0
        super()._fetch()


class GreedyPublisher(DataFramePublisher):
    def _new_subscription(self, subscriber):
        subscription = super()._new_subscription(subscriber)
        subscription.reader.__class__ = _Greedy
        return subscription


def fetched_for_demand(spark, executor, publisher_type, demand: int) -> tuple[int, int]:
    publisher = publisher_type(ranged(spark, 10), executor=executor)
    subscriber = Recorder(demand)
    publisher.subscribe(subscriber)
    subscriber.wait_for(demand)
    idle(executor)  # the look-ahead is fetched by then too
    assert len(subscriber.items) == demand
    return partitions_fetched(spark, publisher)


def test_demand_bounds_the_partitions_fetched(spark, executor):
    # 15 rows need 2 partitions of 10; one element of look-ahead may take one more.
    jobs, partitions = fetched_for_demand(spark, executor, DataFramePublisher, 15)
    assert 2 <= partitions <= 3 and jobs <= partitions
    jobs, partitions = fetched_for_demand(spark, executor, DataFramePublisher, 1)
    assert partitions == 1 and jobs == 1


def test_the_partition_count_catches_a_publisher_that_ignores_demand(spark, executor):
    _, partitions = fetched_for_demand(spark, executor, GreedyPublisher, 15)
    assert partitions == 10  # the bound above fails for it


def test_spark_jobs_per_unit_of_demand(spark, executor):
    # Demand of 25 at a time over 10 partitions of 10 rows: whole partitions per job, never a job per row.
    publisher = DataFramePublisher(ranged(spark, 10), executor=executor)
    subscriber = Recorder(25)
    publisher.subscribe(subscriber)
    while not subscriber.ended.is_set():
        subscriber.wait_for(len(subscriber.items) + 25)
        subscriber.subscription.request(25)
    jobs, partitions = partitions_fetched(spark, publisher)
    assert subscriber.completed and len(subscriber.items) == 100
    assert partitions == 10 and jobs <= 6  # 4 requests of 25: a job per request or so, not per partition


def test_unbounded_demand_takes_the_rest_in_one_job(spark, executor):
    publisher = DataFramePublisher(ranged(spark, 10), executor=executor)
    subscriber = unbounded()
    publisher.subscribe(subscriber)
    subscriber.wait_ended()
    assert subscriber.completed and len(subscriber.items) == 100
    assert partitions_fetched(spark, publisher) == (1, 10)  # as collect() would


def _slow_frame(spark, seconds: float):
    from pyspark.sql import functions
    from pyspark.sql.types import LongType

    def slow(value):
        time.sleep(seconds)
        return value

    return spark.range(0, 2, numPartitions=1).select(functions.udf(slow, LongType(), useArrow=False)("id").alias("id"))


def _running(spark, group: str) -> bool:
    return any(info.status == "RUNNING" for info in jobs_of(spark, group))


def test_cancel_stops_the_running_job(spark, executor):
    publisher = DataFramePublisher(_slow_frame(spark, 30), executor=executor)
    subscriber = Recorder(1)
    publisher.subscribe(subscriber)
    group = publisher.job_groups[0]
    wait_until(lambda: _running(spark, group), "the job to start")
    cancelled = time.monotonic()
    subscriber.subscription.cancel()
    wait_until(lambda: not _running(spark, group), "the job to stop after cancel", timeout_s=15)
    assert time.monotonic() - cancelled < 15  # the job alone would run 60 s
    assert [info.status for info in jobs_of(spark, group)] == ["FAILED"]  # cancelled jobs end as failed
    idle(executor)
    assert subscriber.items == [] and not subscriber.ended.is_set()  # 1.8: nothing after cancel


def test_a_job_that_fails_mid_stream_is_on_error(spark, executor):
    from pyspark.sql import functions
    from pyspark.sql.types import LongType

    def fails_at_25(value):
        if value == 25:
            raise ValueError(f"boom at row {value}")
        return value

    frame = ranged(spark, 5).select(functions.udf(fails_at_25, LongType(), useArrow=False)("id").alias("id"))
    subscriber = unbounded()
    DataFramePublisher(frame, executor=executor).subscribe(subscriber)
    subscriber.wait_ended()
    assert isinstance(subscriber.error, SparkJobFailed)
    assert "ValueError: boom at row 25" in str(subscriber.error)
    assert [row.id for row in subscriber.items] == list(range(len(subscriber.items)))  # rows before it, in order
    assert len(subscriber.items) < 25


def test_a_job_past_its_timeout_is_cancelled_and_on_error(spark, executor):
    publisher = DataFramePublisher(_slow_frame(spark, 30), executor=executor, job_timeout_s=2)
    subscriber = Recorder(1)
    started = time.monotonic()
    publisher.subscribe(subscriber)
    subscriber.wait_ended()
    assert time.monotonic() - started < 20
    assert "did not finish within 2 s" in str(subscriber.error)
    wait_until(lambda: not _running(spark, publisher.job_groups[0]), "the job to be cancelled", timeout_s=15)


def test_a_dataframe_of_no_rows_completes(spark, executor):
    subscriber = Recorder(0)
    DataFramePublisher(spark.range(0), executor=executor).subscribe(subscriber)
    subscriber.wait_ended()
    assert subscriber.completed and subscriber.items == []


def test_the_reference_target_is_conformant(spark, capsys):
    from rstck.cli import main

    code = main(["check", "rstck.reference.spark_targets:spark_publisher", "--in-process", "--no-fuzz"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("conformant")

"""Spark-backed reference implementations: a Publisher of a DataFrame's rows and a Subscriber that
writes Parquet (their sessions and bounded jobs: rstck/protocols/spark.py).

`DataFramePublisher(df)` is an asynchronous iterable publisher (the same subscription state machine
as `ExecutorPublisher`, so every Reactive Streams rule holds the same way) whose iteration fetches
whole partitions as Spark jobs, sized to the demand it sees: it never fetches more partitions than the
outstanding demand needs plus one element of look-ahead (which may take one more partition), and
serves demand from the partitions it holds. Each subscription runs its jobs in a job group of its
own, so `cancel()` cancels the job under way; a job that fails, or outlives `job_timeout_s`, is
`on_error`.

`DataFrameSink(spark, path, batch_size)` requests `batch_size`, writes each full batch as Parquet and
requests the next batch only once that write has committed: at most `batch_size` rows are in flight
(requested and not yet committed). `on_complete` writes the last batch and `_SUCCESS`; `on_error`, a
cancel, or a write that fails leaves the committed batches readable and writes `_INCOMPLETE` (with
the reason) instead: a sink that did not finish is never marked complete.

Every Spark call here is bounded: the session starts within `start_timeout_s` or not at all, and
every job runs under a watchdog that cancels its job group when its time is up. This module imports
pyspark only when a session or a DataFrame is used.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rstck.api import MAX_DEMAND, Subscriber, Subscription
from rstck.protocols.spark import (JOB_TIMEOUT_S, new_group, run_bounded)
from rstck.reference.publishers import _IterablePublisherBase, _IterableSubscription
from rstck.reference.subscribers import _Serial

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["DataFramePublisher", "DataFrameSink", "sink_status"]

_log = logging.getLogger(__name__)

MAX_ROWS_PER_FETCH = 1_000_000  # unbounded demand still fetches the rest in bites of about this many rows
# Rows one delivery task hands over before it yields its thread (the iterable publishers' BATCH is 32):
# a task here has just paid for a Spark job, and a small batch would cost a resubmission every few rows.
DELIVERY_BATCH = 1024

SUCCESS_MARKER = "_SUCCESS"
INCOMPLETE_MARKER = "_INCOMPLETE"


# -- the publisher -------------------------------------------------------------------------------

_shared_executor: concurrent.futures.ThreadPoolExecutor | None = None
_shared_lock = threading.Lock()


def _default_executor() -> concurrent.futures.ThreadPoolExecutor:
    global _shared_executor
    with _shared_lock:
        if _shared_executor is None:
            _shared_executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="rstck-spark")
        return _shared_executor


class _PartitionReader:
    """The rows of a DataFrame, fetched whole partitions at a time as the subscription's demand asks.

    A fetch reads as many partitions as the outstanding demand plus one element of look-ahead needs,
    judged by the largest partition seen so far (one partition while none has been seen), in one
    Spark job. Rows come through the JVM's own pickler (`javaToPython`, as `collect()` does), so no
    Python worker process is needed to read them.
    """

    def __init__(self, df: DataFrame, demand: Callable[[], int], group: str, timeout_s: float,
                 max_rows_per_fetch: int):
        self._df = df
        self._demand = demand
        self.group = group
        self._timeout_s = timeout_s
        self._max_rows = max_rows_per_fetch
        self._jrdd: Any = None
        self._partitions = -1  # not known yet
        self._next_partition = 0
        self._rows: list[Any] = []
        self._position = 0
        self._largest = 0.0  # rows in the largest partition seen (per partition of a fetch)
        self.fetches: list[tuple[int, int]] = []  # (partitions, rows) of each fetch
        self.cancelled = False

    def __iter__(self) -> _PartitionReader:
        return self

    def __next__(self) -> Any:
        while self._position == len(self._rows):
            if self.cancelled:
                raise StopIteration
            if self._partitions < 0:
                self._partitions = run_bounded(self._df.sparkSession, self.group, self._timeout_s, self._plan,
                                               "planning the DataFrame's partitions")
            if self._next_partition >= self._partitions:
                raise StopIteration
            self._fetch()
        row = self._rows[self._position]
        self._rows[self._position] = None  # delivered rows are not kept
        self._position += 1
        return row

    def _plan(self) -> int:
        self._jrdd = self._df._jdf.javaToPython()
        return int(self._jrdd.partitions().size())

    def _fetch(self) -> None:
        wanted = self._demand()
        remaining = self._partitions - self._next_partition
        if wanted >= MAX_DEMAND:  # unbounded: the rest, in bites
            count = remaining if self._largest == 0 else max(1, int(self._max_rows // max(self._largest, 1)))
        elif self._largest == 0:
            count = 1
        else:
            count = math.ceil((wanted + 1) / self._largest)  # the demand and one element of look-ahead
            count = min(count, max(1, int(self._max_rows // self._largest)))
        count = max(1, min(count, remaining))
        first = self._next_partition
        partitions = list(range(first, first + count))
        rows = run_bounded(self._df.sparkSession, self.group, self._timeout_s, lambda: self._run(partitions),
                           f"fetching partition{'s' * (count > 1)} {first}" + (f"-{first + count - 1}" if count > 1
                                                                              else ""))
        self._next_partition += count
        self._largest = max(self._largest, len(rows) / count)
        self.fetches.append((count, len(rows)))
        self._rows, self._position = rows, 0

    def _run(self, partitions: list[int]) -> list[Any]:
        from pyspark.serializers import BatchedSerializer, CPickleSerializer
        from pyspark.util import _load_from_socket

        context = self._df.sparkSession.sparkContext
        socket_info = context._jvm.PythonRDD.runJob(context._jsc.sc(), self._jrdd, partitions)
        with _load_from_socket(socket_info, BatchedSerializer(CPickleSerializer())) as stream:
            return list(stream)

    def cancel(self) -> None:
        """Stop: the job under way, if any, is cancelled."""
        self.cancelled = True
        try:
            self._df.sparkSession.sparkContext.cancelJobGroup(self.group)
        except Exception:  # noqa: BLE001 - the session is gone: no job is running either
            pass


class _DataFrameSubscription(_IterableSubscription):
    """The iterable publishers' subscription, whose cancel also cancels the Spark job under way."""

    def __init__(self, subscriber: Subscriber[Any], publisher: DataFramePublisher):
        self.reader = _PartitionReader(publisher.df, self._outstanding, new_group("fetch"), publisher.job_timeout_s,
                                       publisher.max_rows_per_fetch)
        super().__init__(subscriber, lambda: self.reader, publisher._schedule(), DELIVERY_BATCH)

    def _outstanding(self) -> int:
        with self._lock:
            return self._demand

    def cancel(self) -> None:
        super().cancel()
        with self._lock:
            cancelled = self._subscriber is None and self._error is None
        if cancelled:
            self.reader.cancel()


class DataFramePublisher(_IterablePublisherBase):
    """A Publisher of a DataFrame's rows (`pyspark.sql.Row`), fetched as demand arrives.

    Each subscriber gets its own pass over the DataFrame (1.10, 1.11: unicast), delivered by tasks on
    `executor` (a small shared pool by default; the kit hands its own), so `request` and `cancel`
    return at once (3.4, 3.5) and never wait for a job. `job_timeout_s` bounds each Spark job; a job
    that fails or outlives it is on_error (1.4). `job_groups` names each subscription's job group, in
    which every job it started can be found (`sparkContext.statusTracker().getJobIdsForGroup`).
    Needs a classic (not Spark Connect) session.
    """

    _batch = DELIVERY_BATCH

    def __init__(self, df: DataFrame, *, executor: concurrent.futures.Executor | None = None,
                 job_timeout_s: float = JOB_TIMEOUT_S, max_rows_per_fetch: int = MAX_ROWS_PER_FETCH):
        if not hasattr(df, "_jdf"):
            raise TypeError(f"DataFramePublisher needs a DataFrame of a classic Spark session, got {df!r}")
        super().__init__(lambda: iter(()))  # each subscription reads through a reader of its own
        self.df = df
        self.job_timeout_s = job_timeout_s
        self.max_rows_per_fetch = max_rows_per_fetch
        self._executor = executor
        self.job_groups: list[str] = []

    def _schedule(self):
        return (self._executor or _default_executor()).submit

    def _new_subscription(self, subscriber: Subscriber[Any]) -> _IterableSubscription:
        subscription = _DataFrameSubscription(subscriber, self)
        self.job_groups.append(subscription.reader.group)
        return subscription

    def __repr__(self) -> str:
        return f"DataFramePublisher({self.df!r})"


# -- the sink ------------------------------------------------------------------------------------

def sink_status(spark: SparkSession, path: str) -> str:
    """"complete" (_SUCCESS), "incomplete" (_INCOMPLETE: the reason is in it), or "open" (neither yet)."""
    if _exists(spark, f"{path}/{SUCCESS_MARKER}"):
        return "complete"
    if _exists(spark, f"{path}/{INCOMPLETE_MARKER}"):
        return "incomplete"
    return "open"


def _hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path


def _exists(spark: SparkSession, path: str) -> bool:
    fs, hadoop_path = _hadoop_path(spark, path)
    return bool(fs.exists(hadoop_path))


def _write_marker(spark: SparkSession, path: str, text: str) -> None:
    fs, hadoop_path = _hadoop_path(spark, path)
    out = fs.create(hadoop_path, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def _require(value: object, method: str, what: str) -> None:
    if value is None:
        raise TypeError(f"2.13: {method}({what}=None) is illegal")


class DataFrameSink:
    """A Subscriber that writes what it receives into a Parquet dataset at `path`, `batch_size` rows
    per write.

    Demand: `request(batch_size)` on subscribe, and again only after the previous batch's write has
    committed (2.1: the demand it can take; never more than `batch_size` rows in flight). Writes run
    as tasks on `executor`, one at a time, in order, so on_next never waits for Spark (2.2). Each
    batch is one append to the dataset (one file per batch), committed atomically by Spark's
    committer; no per-batch `_SUCCESS` is written. The dataset is marked `_SUCCESS` after on_complete
    and the last batch; `_INCOMPLETE` (with the reason, the batches committed and the rows dropped)
    after on_error, a cancel or a write that failed, which then also cancels the subscription (2.6).

    Elements: a `Row` or a dict is one row; anything else is a row with one column, `value`.
    `schema` fixes the columns (else the first batch's are used). `path` must not hold data yet.
    `observer` is the kit's white-box hook (see rstck.reference.subscribers). `received`, `committed`
    (rows), `batches`, `completed`, `error` and `done` (an Event, set once the output is marked) tell
    how it went.
    """

    def __init__(self, spark: SparkSession, path: str, batch_size: int = 1024, *, schema: Any = None,
                 executor: concurrent.futures.Executor | None = None, observer: Any = None,
                 write_timeout_s: float = JOB_TIMEOUT_S):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self.spark = spark
        self.path = str(path)
        self.batch_size = batch_size
        self.schema = schema
        self.write_timeout_s = write_timeout_s
        self._executor = executor
        self._observer = observer
        self._lock = threading.Lock()
        self._calls = _Serial()  # calls on the subscription: serial (2.7), never nested
        self._state = "new"  # -> "active" -> "ended" (terminal signal, own cancel, or a failed write)
        self._subscription: Subscription | None = None
        self._buffer: list[Any] = []
        self._writes: list[Callable[[], None]] = []  # run one at a time, in order, on the executor
        self._writing = False
        self._failed = False
        self.received = 0
        self.committed = 0
        self.batches = 0
        self.completed = False
        self.error: BaseException | None = None  # what on_error brought, or why a write failed
        self.done = threading.Event()

    # Subscriber

    def on_subscribe(self, subscription: Subscription) -> None:
        _require(subscription, "on_subscribe", "subscription")
        with self._lock:
            accepted = self._state == "new"
            if accepted:
                self._state, self._subscription = "active", subscription
                self._calls.post(self._request, self.batch_size)
        if accepted:
            self._calls.drain()
        else:
            _cancel_quietly(subscription)  # 2.5
        self._notify("on_subscribe_processed")

    def on_next(self, item: Any) -> None:
        _require(item, "on_next", "item")
        with self._lock:
            if self._state == "active":
                self.received += 1
                self._buffer.append(item)
                if len(self._buffer) >= self.batch_size:  # the whole demand arrived: write it
                    batch, self._buffer = self._buffer, []
                    self._queue(lambda: self._write_batch(batch))
        self._kick()
        self._notify("on_next_processed", item)

    def on_error(self, error: BaseException) -> None:
        _require(error, "on_error", "error")
        with self._lock:
            if self._end():
                self.error = error
                dropped = len(self._buffer)
                self._buffer = []
                self._queue(lambda: self._mark_incomplete(f"the publisher signalled on_error: {error!r}", dropped))
        self._kick()
        self._notify("on_error_processed", error)

    def on_complete(self) -> None:
        with self._lock:
            if self._end():
                batch, self._buffer = self._buffer, []
                self._queue(lambda: self._finish(batch))
        self._kick()
        self._notify("on_complete_processed")

    # Own controls

    def cancel(self) -> None:
        """Cancel the subscription (2.6) and mark the output incomplete; idempotent, from any thread."""
        with self._lock:
            if self._state == "active":
                self._calls.post(_cancel_quietly, self._subscription)
            if self._end():
                dropped = len(self._buffer)
                self._buffer = []
                self._queue(lambda: self._mark_incomplete("cancelled by its owner", dropped))
        self._calls.drain()
        self._kick()

    # Internals

    def _end(self) -> bool:
        """Enter the terminal state; False if already there. The lock is held."""
        if self._state == "ended":
            return False
        self._state, self._subscription = "ended", None
        return True

    def _queue(self, write: Callable[[], None]) -> None:
        """The lock is held."""
        self._writes.append(write)

    def _kick(self) -> None:
        """Start the writer task if writes wait and none runs."""
        with self._lock:
            if self._writing or not self._writes:
                return
            self._writing = True
        try:
            (self._executor or _default_executor()).submit(self._run_writes)
        except Exception:  # a shut-down executor: write here rather than lose the batch
            self._run_writes()

    def _run_writes(self) -> None:
        while True:
            with self._lock:
                if not self._writes:
                    self._writing = False
                    return
                write = self._writes.pop(0)
            try:
                write()
            except Exception as exc:  # noqa: BLE001 - a write that failed ends the stream, never the writer
                self._write_failed(exc)

    def _write_batch(self, rows: list[Any]) -> None:
        if self._failed:
            return
        self._append(rows)
        with self._lock:
            self.committed += len(rows)
            self.batches += 1
            more = self._state == "active"
            if more:
                self._calls.post(self._request, self.batch_size)
        if more:
            self._calls.drain()

    def _append(self, rows: list[Any]) -> None:
        spark = self.spark

        def write() -> None:
            frame = spark.createDataFrame([_as_row(item) for item in rows], self.schema).coalesce(1)
            if self.schema is None:
                self.schema = frame.schema  # every later batch gets the first one's columns
            (frame.write.mode("append" if self.batches else "errorifexists")
             .option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").parquet(self.path))

        run_bounded(spark, new_group("write"), self.write_timeout_s, write,
                    f"writing batch {self.batches + 1} ({len(rows)} rows) to {self.path}")

    def _finish(self, rows: list[Any]) -> None:
        if self._failed:
            return
        if rows:
            self._append(rows)
            with self._lock:
                self.committed += len(rows)
                self.batches += 1
        elif self.batches == 0 and self.schema is not None:  # no rows at all: an empty dataset with its columns
            run_bounded(self.spark, new_group("write"), self.write_timeout_s,
                        lambda: self.spark.createDataFrame([], self.schema).write.parquet(self.path),
                        f"writing an empty dataset to {self.path}")
        _write_marker(self.spark, f"{self.path}/{SUCCESS_MARKER}", "")
        self.completed = True
        self.done.set()

    def _mark_incomplete(self, why: str, dropped: int) -> None:
        if self._failed:
            return
        text = (f"incomplete: {why}\ncommitted: {self.batches} batches, {self.committed} rows\n"
                f"dropped: {dropped} rows received after the last committed batch\n")
        _write_marker(self.spark, f"{self.path}/{INCOMPLETE_MARKER}", text)
        self.done.set()

    def _write_failed(self, exc: BaseException) -> None:
        """A write failed: the stream ends here, marked incomplete, and the subscription is cancelled."""
        _log.warning("DataFrameSink %s: %s; cancelling the subscription", self.path, exc)
        with self._lock:
            self._failed = True
            self.error = self.error or exc
            if self._state == "active":
                self._calls.post(_cancel_quietly, self._subscription)
            self._end()
            self._writes.clear()
            dropped = self.received - self.committed
        self._calls.drain()
        try:
            text = (f"incomplete: {exc}\ncommitted: {self.batches} batches, {self.committed} rows\n"
                    f"dropped: {dropped} rows\n")
            _write_marker(self.spark, f"{self.path}/{INCOMPLETE_MARKER}", text)
        except Exception:  # noqa: BLE001 - no marker can be written either; still never _SUCCESS
            _log.warning("DataFrameSink %s: could not write %s", self.path, INCOMPLETE_MARKER, exc_info=True)
        self.done.set()

    def _request(self, n: int) -> None:
        """Runs on the `_Serial`; a sink that ended meanwhile asks for nothing more (2.3, 2.4)."""
        with self._lock:
            subscription = self._subscription
        if subscription is not None:
            subscription.request(n)

    def _notify(self, hook: str, *args: Any) -> None:
        if self._observer is not None:
            getattr(self._observer, hook)(*args)

    def __repr__(self) -> str:
        return f"DataFrameSink({self.path!r}, {self._state}, committed={self.committed})"


def _cancel_quietly(subscription: Subscription) -> None:
    try:
        subscription.cancel()
    except Exception:  # noqa: BLE001 - 3.15 is the publisher's to keep
        _log.warning("3.15: cancel() raised", exc_info=True)


def _as_row(item: Any) -> Any:
    from pyspark.sql import Row

    if isinstance(item, Row):
        return item
    if isinstance(item, dict):
        return Row(**item)
    return Row(value=item)

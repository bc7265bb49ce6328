"""Spark-backed implementations as a user writes them, with pyspark alone (no rstck): a publisher of a DataFrame's
rows and a sink that writes what it receives into Spark, each conformant, and mutants of them that break one
sentence each. Their targets are in mutant_targets.py; a reproducer of a mutant's finding imports these classes
by name and hands them a Spark session of its own."""

from __future__ import annotations

import itertools
import logging
import threading

MAX_DEMAND = 2**63 - 1


class RowsSubscription:
    """Serves the rows collected for one subscriber as demand arrives, on the thread that requests (a request
    from inside on_next only adds demand: the loop already under way delivers it)."""

    def __init__(self, subscriber, rows: list):
        self.subscriber = subscriber
        self.rows = rows
        self.position = 0
        self.demand = 0
        self.done = False
        self.lock = threading.Lock()
        self.wanted = 0  # drains asked for while one is under way (a request from inside on_next, or a thread)

    def request(self, n: int) -> None:
        if self.done:
            return
        if n <= 0:
            self.end(lambda subscriber: subscriber.on_error(ValueError(f"request({n}): requests must be positive")))
            return
        with self.lock:
            self.demand = min(self.demand + n, MAX_DEMAND)
        self.drain()

    def cancel(self) -> None:
        self.done = True
        self.subscriber = None  # 3.13: nothing of the subscriber is kept after cancel

    def drain(self) -> None:
        with self.lock:
            self.wanted += 1
            if self.wanted > 1:
                return
        while True:
            while not self.done and self.has_demand() and self.position < len(self.rows):
                self.take_demand()
                row, self.position = self.rows[self.position], self.position + 1
                self.emit(row)
            if not self.done and self.position == len(self.rows):
                self.end(lambda subscriber: subscriber.on_complete())
            with self.lock:
                if self.wanted == 1:
                    self.wanted = 0
                    return
                self.wanted = 1

    def has_demand(self) -> bool:
        with self.lock:
            return self.demand > 0

    def take_demand(self) -> None:
        with self.lock:
            self.demand -= 1

    def emit(self, row) -> None:
        try:
            self.subscriber.on_next(row)
        except Exception:  # a subscriber that raises is taken as cancelled (2.13)
            logging.getLogger(__name__).warning("on_next raised: the subscription is cancelled", exc_info=True)
            self.cancel()

    def end(self, signal) -> None:
        subscriber, self.subscriber, self.done = self.subscriber, None, True
        if subscriber is not None:
            signal(subscriber)


class RowsPublisher:
    """The ids of `spark.range(n)`, read by one Spark job when a subscriber subscribes, then delivered as it
    requests them (a job that fails is on_error)."""

    subscription = RowsSubscription

    def __init__(self, spark, n: int):
        self.frame = spark.range(n)

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None): the subscriber must not be None")
        try:
            rows = [row.id for row in self.frame.collect()]
        except Exception as exc:  # noqa: BLE001 - the job's failure is the subscriber's on_error
            subscription = self.subscription(subscriber, [])
            subscriber.on_subscribe(subscription)
            subscription.end(lambda s: s.on_error(exc))
            return
        subscription = self.subscription(subscriber, rows)
        subscriber.on_subscribe(subscription)
        subscription.drain()  # no rows at all: on_complete without a request


class _IgnoringRequestZero(RowsSubscription):
    def request(self, n: int) -> None:
        if n > 0:
            super().request(n)  # a request of 0 or less is dropped: 3.9 wants on_error


class IgnoresRequestZero(RowsPublisher):
    """3.9: takes request(0) as "nothing for now" instead of signalling on_error."""

    subscription = _IgnoringRequestZero


class _OneMore(RowsSubscription):
    def has_demand(self) -> bool:
        with self.lock:
            return self.demand >= 0  # off by one: one row more than requested


class DeliversOneMore(RowsPublisher):
    """1.1: an off-by-one in its demand check delivers a row more than was requested."""

    subscription = _OneMore


class TableSink:
    """A subscriber that requests `batch_size` rows at a time and, once the stream ends, hands what it received to
    Spark as a temporary view (a DataFrame of the rows, queryable by its name: `spark.table(sink.view)`)."""

    _views = itertools.count(1)

    def __init__(self, spark, batch_size: int = 8):
        self.spark = spark
        self.batch_size = batch_size
        self.view = f"sink_{next(self._views)}"
        self.subscription = None
        self.rows: list = []
        self.outstanding = 0

    def on_subscribe(self, subscription) -> None:
        if subscription is None:
            raise TypeError("on_subscribe(None): the subscription must not be None")
        if self.subscription is not None:
            subscription.cancel()  # 2.5: one subscription at a time
            return
        self.subscription = subscription
        self.request_batch()

    def request_batch(self) -> None:
        self.outstanding = self.batch_size
        self.subscription.request(self.batch_size)

    def on_next(self, row) -> None:
        if row is None:
            raise TypeError("on_next(None): an element must not be None")
        self.rows.append(row)
        self.outstanding -= 1
        if self.outstanding == 0:
            self.request_batch()

    def on_error(self, error) -> None:
        if error is None:
            raise TypeError("on_error(None): the error must not be None")
        self.publish()

    def on_complete(self) -> None:
        self.publish()

    def publish(self) -> None:
        # A local relation: no job runs until the view is read, so the signal returns at once.
        frame = self.spark.createDataFrame([(repr(row),) for row in self.rows], "value string")
        frame.createOrReplaceTempView(self.view)


class NeverRequests(TableSink):
    """2.1: waits for rows without ever requesting any."""

    def request_batch(self) -> None:
        pass

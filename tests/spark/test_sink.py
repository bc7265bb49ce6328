"""DataFrameSink: batches written as Parquet, the next batch requested only once the last has committed
(never more rows in flight than requested), and an output that did not finish is never marked
complete; the Spark sink reference target passes the subscriber checks."""

from __future__ import annotations

import os
import threading

import pytest

from rstck.reference.spark import (INCOMPLETE_MARKER, SUCCESS_MARKER, DataFramePublisher, DataFrameSink,
                                   sink_status)

from .helpers import WAIT_S

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


class Source:
    """A publisher that delivers on the thread that requests, and notes, at each request, how many rows
    the sink had committed: the rows in flight are those requested and not yet committed."""

    def __init__(self, sink: DataFrameSink, count: int, *, fail_after: int | None = None):
        self.sink = sink
        self.count = count
        self.fail_after = fail_after
        self.sent = 0
        self.requested = 0
        self.in_flight: list[int] = []  # after each request
        self.lock = threading.Lock()

    def start(self) -> None:
        self.sink.on_subscribe(self)

    def request(self, n: int) -> None:
        with self.lock:
            self.requested += n
            self.in_flight.append(self.requested - self.sink.committed)
            wanted = min(self.requested, self.count) - self.sent
        for _ in range(max(0, wanted)):
            if self.fail_after is not None and self.sent == self.fail_after:
                self.sink.on_error(RuntimeError("the source fails on purpose"))
                return
            self.sink.on_next({"n": self.sent, "name": f"row {self.sent}"})
            self.sent += 1
        if self.sent == self.count:
            self.sink.on_complete()

    def cancel(self) -> None:
        self.cancelled = True


def read(spark, path: str) -> list[int]:
    return sorted(row.n for row in spark.read.parquet(path).collect())


def test_every_batch_lands_and_the_output_is_marked_complete(spark, tmp_path):
    path = str(tmp_path / "out")
    sink = DataFrameSink(spark, path, batch_size=40)
    DataFramePublisher(spark.range(0, 100, numPartitions=3)).subscribe(sink)
    assert sink.done.wait(WAIT_S)
    assert sink.completed and sink.error is None
    assert (sink.batches, sink.committed) == (3, 100)
    assert sorted(row.id for row in spark.read.parquet(path).collect()) == list(range(100))
    assert sink_status(spark, path) == "complete"
    assert len([f for f in os.listdir(path) if f.endswith(".parquet")]) == 3  # one file per batch


class EagerSink(DataFrameSink):
    """A mutant that asks for the next batch as soon as one is full, before it is written."""

    def on_next(self, item):
        full = len(self._buffer) + 1 == self.batch_size
        super().on_next(item)
        if full:
            self._calls.post(self._request, self.batch_size)
            self._calls.drain()


@pytest.mark.parametrize("sink_type, bounded", [(DataFrameSink, True), (EagerSink, False)],
                         ids=["reference", "eager-mutant"])
def test_never_more_rows_in_flight_than_requested(spark, tmp_path, sink_type, bounded):
    sink = sink_type(spark, str(tmp_path / "out"), batch_size=5)
    source = Source(sink, 13)
    source.start()
    assert sink.done.wait(WAIT_S)
    assert sink.completed and read(spark, sink.path) == list(range(13))
    assert (max(source.in_flight) <= 5) is bounded, source.in_flight


def test_on_error_keeps_the_committed_batches_and_marks_the_output_incomplete(spark, tmp_path):
    path = str(tmp_path / "out")
    sink = DataFrameSink(spark, path, batch_size=4)
    Source(sink, 20, fail_after=10).start()
    assert sink.done.wait(WAIT_S)
    assert not sink.completed and "fails on purpose" in str(sink.error)
    assert read(spark, path) == list(range(8))  # two whole batches; the two rows after them were not written
    assert sink_status(spark, path) == "incomplete"
    assert not os.path.exists(os.path.join(path, SUCCESS_MARKER))
    marker = open(os.path.join(path, INCOMPLETE_MARKER), encoding="utf-8").read()
    assert "committed: 2 batches, 8 rows" in marker and "dropped: 2 rows" in marker


def test_a_failing_write_cancels_and_marks_the_output_incomplete(spark, tmp_path):
    path = tmp_path / "out"
    path.mkdir()
    (path / "someone-elses.parquet").write_text("not ours")  # the first write must not append to data there
    sink = DataFrameSink(spark, str(path), batch_size=3)
    source = Source(sink, 9)
    source.start()
    assert sink.done.wait(WAIT_S)
    assert getattr(source, "cancelled", False)  # 2.6: the sink cancels when it cannot go on
    assert not sink.completed and "already exists" in str(sink.error)
    assert sink_status(spark, str(path)) == "incomplete"


def test_the_reference_sink_target_passes_the_subscriber_checks(spark, capsys):
    from rstck.cli import main

    code = main(["check", "rstck.reference.spark_targets:spark_sink", "--in-process", "--no-fuzz",
                 "--rules", "2.1,2.3,2.4,2.5,2.7,2.9,2.10,2.13,async.non-blocking"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("conformant")

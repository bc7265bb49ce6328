"""Plain unit tests of the conformant zoo (tests/conformant/), without the kit.

Small hand-written subscribers and subscriptions drive each implementation and check
its basic behaviour. Asynchronous deliveries are awaited on conditions with generous
timeouts. "Nothing more will arrive" is never decided by sleeping: a test waits until
the subscriber has been garbage-collected, after which nothing can reach it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
import weakref

import pytest

from .conformant.processors import AsyncioIdentity, PrefetchingIdentity, UnicastIdentity
from .conformant.publishers import (AsyncioNative, AsyncioOwnLoop, AsyncioOwnLoopFailed, Bounded, Empty,
                                    LoggingDrainLoop, PooledExecutor, PooledFailed, QueueWorker, ReplayMulticast,
                                    ReRaising, SyncFailed, SyncTrampolined, ThreadPerRequest, TimerDelayed)
from .conformant.subscribers import AsyncioBatching, Batching, OneByOne, WorkerThread

MAX_DEMAND = 2**63 - 1
TIMEOUT_S = 5.0


# -- helpers ------------------------------------------------------------------------------------


class Log:
    """What a Recorder saw, kept apart from it so a test can let the Recorder be collected."""

    def __init__(self):
        self.events: list[tuple[str, object]] = []
        self.changed = threading.Condition()
        self.inside = 0  # signals running right now: more than one means they overlapped (1.3)
        self.overlapped = False
        self.depth = 0  # on_next nested inside on_next on one thread
        self.max_depth = 0

    def add(self, kind: str, value=None) -> None:
        with self.changed:
            self.events.append((kind, value))
            self.changed.notify_all()

    def wait_for(self, predicate, what: str) -> None:
        with self.changed:
            done = self.changed.wait_for(lambda: predicate(self), TIMEOUT_S)
            assert done, f"timed out waiting for {what}: {self.events}"

    @property
    def items(self) -> list:
        return [value for kind, value in self.events if kind == "on_next"]

    @property
    def completed(self) -> bool:
        return ("on_complete", None) in self.events

    @property
    def errors(self) -> list:
        return [value for kind, value in self.events if kind == "on_error"]

    @property
    def terminated(self) -> bool:
        return self.completed or bool(self.errors)


class Recorder:
    """A subscriber that records every signal; it may request on subscribe and per item, and cancel."""

    def __init__(self, log: Log, *, initial: int = 0, per_item: int = 0, cancel_at: int | None = None,
                 raise_at: int | None = None):
        self.log = log
        self.initial = initial
        self.per_item = per_item
        self.cancel_at = cancel_at
        self.raise_at = raise_at
        self.subscription = None
        self._count = 0

    def _enter(self):
        log = self.log
        with log.changed:
            log.inside += 1
            log.overlapped |= log.inside > 1

    def _leave(self):
        with self.log.changed:
            self.log.inside -= 1

    def on_subscribe(self, subscription):
        self._enter()
        try:
            self.subscription = subscription
            self.log.add("on_subscribe")
            if self.initial:
                subscription.request(self.initial)
        finally:
            self._leave()

    def on_next(self, item):
        self._enter()
        self.log.depth += 1
        self.log.max_depth = max(self.log.max_depth, self.log.depth)
        try:
            self._count += 1
            self.log.add("on_next", item)
            if self._count == self.raise_at:
                raise RuntimeError("the subscriber fails on purpose")
            if self._count == self.cancel_at:
                self.subscription.cancel()
            elif self.per_item:
                self.subscription.request(self.per_item)
        finally:
            self.log.depth -= 1
            self._leave()

    def on_error(self, error):
        self._enter()
        try:
            self.log.add("on_error", error)
        finally:
            self._leave()

    def on_complete(self):
        self._enter()
        try:
            self.log.add("on_complete")
        finally:
            self._leave()


def wait_until_collected(ref: weakref.ref, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while ref() is not None:
        assert time.monotonic() < deadline, f"{what} is still referenced"
        gc.collect()
        time.sleep(0.001)


def subscribe_and_cancel(publisher, log: Log, n: int) -> weakref.ref:
    """Subscribe a Recorder that asks for everything and cancels at its first element; return a
    weak reference to it (the caller keeps no strong one)."""
    recorder = Recorder(log, initial=n, cancel_at=1)
    publisher.subscribe(recorder)
    return weakref.ref(recorder)


class ManualSubscription:
    """A subscription handed to a subscriber under test: records its calls and when they came."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.changed = threading.Condition()
        self.ended = False  # set by the test when it sends on_complete/on_error
        self.calls_after_end: list[tuple] = []
        self.threads: set[str] = set()

    def _record(self, call: tuple) -> None:
        with self.changed:
            self.calls.append(call)
            self.threads.add(threading.current_thread().name)
            if self.ended:
                self.calls_after_end.append(call)
            self.changed.notify_all()

    def request(self, n):
        self._record(("request", n))

    def cancel(self):
        self._record(("cancel",))

    @property
    def requests(self) -> list[int]:
        return [c[1] for c in self.calls if c[0] == "request"]

    @property
    def requested(self) -> int:
        return sum(self.requests)

    @property
    def cancelled(self) -> bool:
        return ("cancel",) in self.calls

    def wait_for(self, predicate, what: str) -> None:
        with self.changed:
            done = self.changed.wait_for(lambda: predicate(self), TIMEOUT_S)
            assert done, f"timed out waiting for {what}: {self.calls}"


class Observer:
    def __init__(self):
        self.processed: list[tuple[str, object]] = []

    def on_subscribe_processed(self):
        self.processed.append(("on_subscribe", None))

    def on_next_processed(self, item):
        self.processed.append(("on_next", item))

    def on_error_processed(self, error):
        self.processed.append(("on_error", error))

    def on_complete_processed(self):
        self.processed.append(("on_complete", None))


# -- publishers driven from threads (all but the asyncio-native one) ------------------------------

PUBLISHERS = {
    "sync_trampolined": SyncTrampolined,
    "thread_per_request": ThreadPerRequest,
    "queue_worker": QueueWorker,
    "timer_delayed": TimerDelayed,
    "pooled_executor": PooledExecutor,
    "asyncio_own_loop": AsyncioOwnLoop,
    "replay_multicast": ReplayMulticast,
    "bounded": Bounded,
    "re_raising": ReRaising,
    "logging_drain_loop": LoggingDrainLoop,
}
SYNCHRONOUS = {"sync_trampolined", "replay_multicast", "bounded", "re_raising", "logging_drain_loop"}
publisher_names = pytest.mark.parametrize("name", list(PUBLISHERS))


def longest(name: str, wanted: int) -> int:
    return min(wanted, Bounded.CAPACITY) if name == "bounded" else wanted


@publisher_names
def test_one_at_a_time_delivers_all_in_order_then_completes(name):
    n = longest(name, 6)
    log = Log()
    PUBLISHERS[name](n).subscribe(Recorder(log, initial=1, per_item=1))
    log.wait_for(lambda lg: lg.terminated, "on_complete")
    assert log.events == [("on_subscribe", None)] + [("on_next", i) for i in range(n)] + [("on_complete", None)]
    assert not log.overlapped


@publisher_names
def test_one_big_request_beyond_max_demand_delivers_all(name):
    n = longest(name, 8)
    log = Log()
    recorder = Recorder(log)
    PUBLISHERS[name](n).subscribe(recorder)
    log.wait_for(lambda lg: lg.events, "on_subscribe")
    recorder.subscription.request(MAX_DEMAND)
    recorder.subscription.request(MAX_DEMAND)  # pending demand beyond 2**63-1 is capped, not refused (3.17)
    log.wait_for(lambda lg: lg.terminated, "on_complete")
    assert log.items == list(range(n)) and log.completed and not log.errors
    assert not log.overlapped


@publisher_names
def test_demand_is_respected(name):
    n = longest(name, 8)
    log = Log()
    recorder = Recorder(log)
    PUBLISHERS[name](n).subscribe(recorder)
    log.wait_for(lambda lg: lg.events, "on_subscribe")
    recorder.subscription.request(3)
    log.wait_for(lambda lg: len(lg.items) == 3, "three elements")
    recorder.subscription.request(n)
    log.wait_for(lambda lg: lg.terminated, "on_complete")
    assert log.items == list(range(n)) and log.completed


@publisher_names
def test_empty_stream_completes_without_demand(name):
    log = Log()
    PUBLISHERS[name](0).subscribe(Recorder(log))
    log.wait_for(lambda lg: lg.terminated, "on_complete")
    assert log.events == [("on_subscribe", None), ("on_complete", None)]


@publisher_names
@pytest.mark.parametrize("bad", [0, -1])
def test_non_positive_request_signals_value_error(name, bad):
    log = Log()
    recorder = Recorder(log, initial=1)
    PUBLISHERS[name](longest(name, 5)).subscribe(recorder)
    log.wait_for(lambda lg: lg.items, "the first element")
    recorder.subscription.request(bad)
    log.wait_for(lambda lg: lg.terminated, "on_error")
    [error] = log.errors
    assert isinstance(error, ValueError) and "positive" in str(error)
    assert log.items == [0]
    recorder.subscription.request(1)  # after the end: a no-op
    recorder.subscription.cancel()


@publisher_names
def test_cancel_stops_delivery_and_releases_the_subscriber(name):
    n = longest(name, 200)
    log = Log()
    publisher = PUBLISHERS[name](n)
    collected = subscribe_and_cancel(publisher, log, n)
    wait_until_collected(collected, "the cancelled subscriber")  # the publisher is still alive
    assert not log.terminated and 1 <= len(log.items) < n
    assert publisher is not None


@publisher_names
def test_request_and_cancel_after_cancel_are_no_ops(name):
    log = Log()
    recorder = Recorder(log, initial=1)
    PUBLISHERS[name](longest(name, 5)).subscribe(recorder)
    log.wait_for(lambda lg: lg.items, "the first element")
    subscription = recorder.subscription
    subscription.cancel()
    subscription.cancel()
    subscription.request(0)
    subscription.request(3)
    del subscription
    collected = weakref.ref(recorder)
    del recorder
    wait_until_collected(collected, "the cancelled subscriber")
    assert log.items == [0] and not log.terminated


@publisher_names
def test_subscribe_none_raises_type_error(name):
    with pytest.raises(TypeError):
        PUBLISHERS[name](3).subscribe(None)


@publisher_names
def test_every_subscribe_is_served_anew(name):
    n = longest(name, 4)
    publisher = PUBLISHERS[name](n)
    for _ in range(3):
        log = Log()
        publisher.subscribe(Recorder(log, initial=n))
        log.wait_for(lambda lg: lg.terminated, "on_complete")
        assert log.items == list(range(n)) and log.completed


@pytest.mark.parametrize("name", sorted(SYNCHRONOUS))
def test_synchronous_delivery_nests_at_most_one_deep(name):
    n = longest(name, 40)
    log = Log()
    recorder = Recorder(log, per_item=1)
    PUBLISHERS[name](n).subscribe(recorder)
    recorder.subscription.request(1)  # delivers everything before it returns
    assert log.items == list(range(n)) and log.completed
    assert log.max_depth == 1


def test_cancel_is_idempotent_from_many_threads_at_once():
    log = Log()
    recorder = Recorder(log, initial=1)
    ThreadPerRequest(100).subscribe(recorder)
    log.wait_for(lambda lg: lg.items, "the first element")
    subscription = recorder.subscription  # after the cancel it no longer refers to the recorder
    start = threading.Barrier(8)

    def cancel():
        start.wait(TIMEOUT_S)
        subscription.cancel()

    threads = [threading.Thread(target=cancel) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT_S)
    collected = weakref.ref(recorder)
    del recorder
    wait_until_collected(collected, "the cancelled subscriber")
    assert log.items == [0] and not log.terminated


@pytest.mark.parametrize("failed", [SyncFailed, PooledFailed, AsyncioOwnLoopFailed])
@pytest.mark.parametrize("demand", [0, 3])
def test_failed_publishers_signal_on_error_with_or_without_demand(failed, demand):
    log = Log()
    failed().subscribe(Recorder(log, initial=demand))
    log.wait_for(lambda lg: lg.terminated, "on_error")
    assert log.events[0] == ("on_subscribe", None) and len(log.events) == 2
    assert isinstance(log.errors[0], RuntimeError)


def test_bounded_refuses_more_than_its_capacity():
    with pytest.raises(ValueError):
        Bounded(Bounded.CAPACITY + 1)


def test_re_raising_publisher_raises_the_subscribers_error_from_request_and_counts_it_cancelled():
    log = Log()
    recorder = Recorder(log, raise_at=2)
    ReRaising(5).subscribe(recorder)
    with pytest.raises(RuntimeError, match="on purpose"):
        recorder.subscription.request(5)
    assert log.items == [0, 1]
    recorder.subscription.request(5)  # cancelled: nothing more
    assert log.items == [0, 1] and not log.terminated


@pytest.mark.parametrize("name", ["logging_drain_loop", "sync_trampolined", "thread_per_request"])
def test_a_raising_subscriber_is_logged_and_cancelled(name, caplog):
    log = Log()
    recorder = Recorder(log, raise_at=2)
    with caplog.at_level(logging.WARNING, logger="tests.conformant.publishers"):
        PUBLISHERS[name](5).subscribe(recorder)
        recorder.subscription.request(5)
        log.wait_for(lambda lg: len(lg.items) == 2, "two elements")
        deadline = time.monotonic() + TIMEOUT_S
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.001)
    [record] = caplog.records
    assert record.exc_info and "on purpose" in str(record.exc_info[1])
    if name == "logging_drain_loop":
        assert record.levelno == logging.WARNING
    record.exc_info = None  # kept for the report, the logged traceback's frames would keep the subscriber alive
    del record
    recorder.subscription.request(5)
    collected = weakref.ref(recorder)
    del recorder
    wait_until_collected(collected, "the raising subscriber")
    assert log.items == [0, 1] and not log.terminated


def test_replay_multicast_gives_each_subscriber_its_own_pace_and_replays_to_late_ones():
    publisher = ReplayMulticast(6)
    slow_log, fast_log = Log(), Log()
    slow, fast = Recorder(slow_log, initial=2), Recorder(fast_log, initial=5)
    publisher.subscribe(slow)
    publisher.subscribe(fast)
    assert slow_log.items == [0, 1] and fast_log.items == [0, 1, 2, 3, 4]
    fast.subscription.request(1)
    assert fast_log.items == list(range(6)) and fast_log.completed
    assert slow_log.items == [0, 1] and not slow_log.terminated
    late_log = Log()
    publisher.subscribe(Recorder(late_log, initial=10))
    assert late_log.items == list(range(6)) and late_log.completed
    slow.subscription.request(10)
    assert slow_log.items == list(range(6)) and slow_log.completed


def test_empty_completes_with_or_without_demand_and_answers_request_zero():
    for demand in (0, 1):
        log = Log()
        Empty().subscribe(Recorder(log, initial=demand))
        assert log.events == [("on_subscribe", None), ("on_complete", None)]
    log = Log()

    class RequestsZero(Recorder):
        def on_subscribe(self, subscription):
            super().on_subscribe(subscription)
            subscription.request(0)

    Empty().subscribe(RequestsZero(log))
    assert len(log.events) == 2 and isinstance(log.errors[0], ValueError)
    with pytest.raises(TypeError):
        Empty().subscribe(None)


def test_empty_says_nothing_more_after_a_cancel_in_on_subscribe():
    log = Log()

    class CancelsAtOnce(Recorder):
        def on_subscribe(self, subscription):
            super().on_subscribe(subscription)
            subscription.cancel()

    Empty().subscribe(CancelsAtOnce(log))
    assert log.events == [("on_subscribe", None)]


# -- the asyncio-native publisher, driven on its loop ---------------------------------------------


async def until(predicate, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.001)


def test_asyncio_native_delivers_one_at_a_time_and_in_one_big_request():
    async def main():
        one_at_a_time = Log()
        AsyncioNative(5).subscribe(Recorder(one_at_a_time, initial=1, per_item=1))
        await until(lambda: one_at_a_time.terminated, "on_complete")
        assert one_at_a_time.items == list(range(5)) and one_at_a_time.completed

        at_once = Log()
        recorder = Recorder(at_once)
        AsyncioNative(5).subscribe(recorder)
        await until(lambda: at_once.events, "on_subscribe")
        recorder.subscription.request(MAX_DEMAND)
        recorder.subscription.request(MAX_DEMAND)
        await until(lambda: at_once.terminated, "on_complete")
        assert at_once.items == list(range(5)) and at_once.completed

        empty = Log()
        AsyncioNative(0).subscribe(Recorder(empty))
        await until(lambda: empty.terminated, "on_complete")
        assert empty.events == [("on_subscribe", None), ("on_complete", None)]

    asyncio.run(main())


def test_asyncio_native_answers_request_zero_with_value_error():
    async def main():
        log = Log()
        recorder = Recorder(log, initial=1)
        AsyncioNative(5).subscribe(recorder)
        await until(lambda: log.items, "the first element")
        recorder.subscription.request(0)
        await until(lambda: log.terminated, "on_error")
        assert isinstance(log.errors[0], ValueError) and log.items == [0]

    asyncio.run(main())


def test_asyncio_native_cancel_stops_delivery_and_releases_the_subscriber():
    async def main():
        log = Log()
        publisher = AsyncioNative(200)
        collected = subscribe_and_cancel(publisher, log, 200)
        deadline = time.monotonic() + TIMEOUT_S
        while collected() is not None:
            assert time.monotonic() < deadline, "the cancelled subscriber is still referenced"
            gc.collect()
            await asyncio.sleep(0.001)
        assert log.items == [0] and not log.terminated

    asyncio.run(main())


def test_asyncio_native_subscribe_none_raises_type_error():
    async def main():
        with pytest.raises(TypeError):
            AsyncioNative(3).subscribe(None)

    asyncio.run(main())


# -- subscribers -------------------------------------------------------------------------------


def test_batching_requests_capacity_then_refills_by_half():
    observer = Observer()
    subscriber = Batching(capacity=4, observer=observer)
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    assert subscription.requests == [4]
    for item in range(4):
        subscriber.on_next(item)
    assert subscription.requests == [4, 2, 2]
    subscriber.on_complete()
    assert subscriber.items == [0, 1, 2, 3] and subscriber.completed
    assert observer.processed == [("on_subscribe", None)] + [("on_next", i) for i in range(4)] + [("on_complete", None)]


def test_batching_with_take_cancels_and_ignores_what_still_arrives():
    subscriber = Batching(capacity=16, take=2)
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    subscriber.on_next(0)
    subscriber.on_next(1)
    assert subscription.cancelled
    subscriber.on_next(2)  # still requested when it cancelled (2.8)
    assert subscriber.items == [0, 1] and subscription.calls == [("request", 16), ("cancel",)]


def test_one_by_one_requests_one_per_element():
    observer = Observer()
    subscriber = OneByOne(observer=observer)
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    for item in range(3):
        subscriber.on_next(item)
    subscriber.on_error(RuntimeError("upstream failed"))
    assert subscription.requests == [1, 1, 1, 1]
    assert subscriber.items == [0, 1, 2] and isinstance(subscriber.error, RuntimeError)
    assert observer.processed[-1][0] == "on_error"


def new_subscribers():
    return [Batching(capacity=4), OneByOne(), WorkerThread(window=2)]


@pytest.mark.parametrize("subscriber", new_subscribers(), ids=lambda s: type(s).__name__)
def test_subscribers_raise_type_error_for_none(subscriber):
    for method in ("on_subscribe", "on_next", "on_error"):
        with pytest.raises(TypeError):
            getattr(subscriber, method)(None)


@pytest.mark.parametrize("subscriber", new_subscribers(), ids=lambda s: type(s).__name__)
def test_subscribers_cancel_a_second_subscription(subscriber):
    first, second = ManualSubscription(), ManualSubscription()
    subscriber.on_subscribe(first)
    subscriber.on_subscribe(second)
    assert second.calls == [("cancel",)]
    assert not first.cancelled


@pytest.mark.parametrize("end", ["on_complete", "on_error"])
@pytest.mark.parametrize("make", [lambda: Batching(capacity=4), OneByOne, lambda: WorkerThread(window=2)],
                         ids=["Batching", "OneByOne", "WorkerThread"])
def test_subscribers_accept_an_end_straight_after_on_subscribe(make, end):
    subscriber = make()
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    subscription.ended = True
    getattr(subscriber, end)(*((RuntimeError("upstream failed"),) if end == "on_error" else ()))
    if isinstance(subscriber, WorkerThread):
        assert subscriber.finished.wait(TIMEOUT_S)
    assert subscription.calls_after_end == []


def test_worker_thread_processes_on_its_worker_and_requests_from_there():
    observer = Observer()
    processed_on: list[str] = []
    subscriber = WorkerThread(window=2, process=lambda item: processed_on.append(threading.current_thread().name),
                              observer=observer)
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    assert subscription.requests == [2]
    for item in range(2):
        subscriber.on_next(item)
    subscription.wait_for(lambda s: s.requested == 4, "a request per processed element")
    for item in range(2, 4):
        subscriber.on_next(item)
    subscription.wait_for(lambda s: s.requested == 6, "a request per processed element")
    with subscription.changed:
        subscription.ended = True
    subscriber.on_complete()
    assert subscriber.finished.wait(TIMEOUT_S)
    assert subscriber.items == [0, 1, 2, 3] and subscriber.completed
    assert set(processed_on) == {"worker-thread-subscriber"}
    assert "worker-thread-subscriber" in subscription.threads
    assert subscription.calls_after_end == []
    assert observer.processed == [("on_subscribe", None)] + [("on_next", i) for i in range(4)] + [("on_complete", None)]


def test_worker_thread_never_requests_after_on_complete_even_mid_stream():
    for _ in range(20):  # the end races the worker's requests: whichever way it goes, none after it
        subscriber = WorkerThread(window=8)
        subscription = ManualSubscription()
        subscriber.on_subscribe(subscription)
        for item in range(8):
            subscriber.on_next(item)
        with subscription.changed:
            subscription.ended = True
        subscriber.on_complete()
        assert subscriber.finished.wait(TIMEOUT_S)
        assert subscription.calls_after_end == []


@pytest.mark.parametrize("publisher", [SyncTrampolined, ThreadPerRequest, QueueWorker, AsyncioOwnLoop],
                         ids=lambda p: p.__name__)
@pytest.mark.parametrize("make", [lambda: Batching(capacity=4), OneByOne, lambda: WorkerThread(window=3)],
                         ids=["Batching", "OneByOne", "WorkerThread"])
def test_subscribers_consume_whole_streams_from_zoo_publishers(publisher, make):
    subscriber = make()
    publisher(20).subscribe(subscriber)
    deadline = time.monotonic() + TIMEOUT_S
    while not subscriber.completed:
        assert time.monotonic() < deadline, f"{type(subscriber).__name__} did not complete: {subscriber.items}"
        time.sleep(0.001)
    assert subscriber.items == list(range(20))


# -- processors ---------------------------------------------------------------------------------

processor_classes = pytest.mark.parametrize("make", [UnicastIdentity, PrefetchingIdentity], ids=lambda c: c.__name__)


@processor_classes
def test_processor_passes_elements_through_from_a_zoo_publisher(make):
    processor = make()
    SyncTrampolined(10).subscribe(processor)
    log = Log()
    processor.subscribe(Recorder(log, initial=1, per_item=1))
    assert log.items == list(range(10)) and log.completed
    assert not log.overlapped


@processor_classes
def test_processor_passes_elements_through_across_threads(make):
    processor = make()
    ThreadPerRequest(30).subscribe(processor)
    log = Log()
    processor.subscribe(Recorder(log, initial=3, per_item=1))
    log.wait_for(lambda lg: lg.terminated, "on_complete")
    assert log.items == list(range(30)) and log.completed
    assert not log.overlapped


@processor_classes
def test_processor_rejects_a_second_subscriber(make):
    processor = make()
    processor.on_subscribe(ManualSubscription())
    first, second = Log(), Log()
    processor.subscribe(Recorder(first))
    processor.subscribe(Recorder(second))
    assert first.events == [("on_subscribe", None)]
    assert second.events[0] == ("on_subscribe", None) and len(second.events) == 2
    assert isinstance(second.errors[0], RuntimeError)


@processor_classes
def test_processor_cancels_upstream_when_downstream_cancels(make):
    processor = make()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    log = Log()
    recorder = Recorder(log, initial=2)
    processor.subscribe(recorder)
    processor.on_next(0)
    recorder.subscription.cancel()
    assert upstream.cancelled
    processor.on_next(1)  # was requested: arrives after the cancel and is dropped
    assert log.items == [0]


@processor_classes
def test_processor_propagates_upstream_error(make):
    processor = make()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    log = Log()
    recorder = Recorder(log, initial=2)
    processor.subscribe(recorder)
    processor.on_next(0)
    processor.on_error(RuntimeError("upstream failed"))
    assert log.items == [0] and isinstance(log.errors[0], RuntimeError)
    calls = list(upstream.calls)
    recorder.subscription.request(5)  # after the end: neither downstream nor upstream hears of it
    recorder.subscription.cancel()
    assert upstream.calls == calls and len(log.events) == 3


@processor_classes
def test_processor_answers_request_zero_downstream(make):
    processor = make()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    log = Log()
    recorder = Recorder(log)
    processor.subscribe(recorder)
    recorder.subscription.request(0)
    assert isinstance(log.errors[0], ValueError)
    assert upstream.cancelled


@processor_classes
def test_processor_raises_type_error_for_none(make):
    processor = make()
    for method in ("on_subscribe", "on_next", "on_error", "subscribe"):
        with pytest.raises(TypeError):
            getattr(processor, method)(None)


@processor_classes
def test_processor_cancels_a_second_upstream(make):
    processor = make()
    first, second = ManualSubscription(), ManualSubscription()
    processor.on_subscribe(first)
    processor.on_subscribe(second)
    assert second.calls == [("cancel",)]


def test_unicast_identity_requests_upstream_exactly_what_downstream_requests():
    processor = UnicastIdentity()
    log = Log()
    recorder = Recorder(log, initial=3)
    processor.subscribe(recorder)  # before upstream is there: the demand waits for it
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    assert upstream.requests == [3]
    recorder.subscription.request(5)
    assert upstream.requests == [3, 5]
    for item in range(3):
        processor.on_next(item)
    processor.on_complete()
    assert log.items == [0, 1, 2] and log.completed


def test_unicast_identity_passes_an_early_end_to_its_later_subscriber():
    processor = UnicastIdentity()
    processor.on_subscribe(ManualSubscription())
    processor.on_complete()
    log = Log()
    processor.subscribe(Recorder(log))
    assert log.events == [("on_subscribe", None), ("on_complete", None)]


def test_prefetching_identity_prefetches_four_then_refills_and_completes_after_the_buffer():
    processor = PrefetchingIdentity()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    assert upstream.requests == [4]  # from inside on_subscribe, before any subscriber
    for item in range(4):
        processor.on_next(item)
    processor.on_complete()
    log = Log()
    recorder = Recorder(log)
    processor.subscribe(recorder)
    assert log.events == [("on_subscribe", None)]
    recorder.subscription.request(3)
    assert log.items == [0, 1, 2] and not log.terminated
    assert upstream.requests == [4]  # upstream has ended: never asked again
    recorder.subscription.request(1)
    assert log.items == [0, 1, 2, 3] and log.completed


def test_prefetching_identity_refills_as_elements_leave_the_buffer():
    processor = PrefetchingIdentity()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    log = Log()
    recorder = Recorder(log, initial=10)
    processor.subscribe(recorder)
    for item in range(4):
        processor.on_next(item)
    assert log.items == [0, 1, 2, 3]
    assert upstream.requests == [4, 2, 2]


def test_prefetching_identity_lets_an_upstream_error_overtake_buffered_elements():
    processor = PrefetchingIdentity()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    for item in range(3):
        processor.on_next(item)
    log = Log()
    recorder = Recorder(log, initial=1)
    processor.subscribe(recorder)
    processor.on_error(RuntimeError("upstream failed"))
    assert log.items == [0] and isinstance(log.errors[0], RuntimeError)


# -- the asyncio subscriber and processor, driven on their loop -------------------------------------


async def until_collected(ref: weakref.ref, what: str) -> None:
    """Wait, letting the loop run, until `ref`'s object is gone: then nothing can reach it or call it any more."""
    deadline = time.monotonic() + TIMEOUT_S
    while ref() is not None:
        assert time.monotonic() < deadline, f"{what} is still referenced"
        gc.collect()
        await asyncio.sleep(0.001)


class UpstreamSubscription:
    """A processor's upstream subscription that records its calls in a list kept apart from it, so that a
    test can wait until the processor has let it go, after which it can be called no more."""

    def __init__(self, calls: list):
        self.calls = calls

    def request(self, n):
        self.calls.append(("request", n))

    def cancel(self):
        self.calls.append(("cancel",))


def test_asyncio_batching_requests_capacity_then_half_after_each_half_processed():
    async def main():
        observer = Observer()
        subscriber = AsyncioBatching(capacity=4, observer=observer)
        subscription = ManualSubscription()
        subscriber.on_subscribe(subscription)
        assert subscription.requests == [4]  # from inside on_subscribe (2.1)
        for item in range(2):
            subscriber.on_next(item)
        await until(lambda: subscription.requests == [4, 2], "a request once half was processed")
        for item in range(2, 4):
            subscriber.on_next(item)
        await until(lambda: subscription.requests == [4, 2, 2], "a request once half was processed")
        subscription.ended = True
        subscriber.on_complete()
        await asyncio.wait_for(subscriber.task, TIMEOUT_S)  # done: nothing more can be called
        assert subscriber.items == [0, 1, 2, 3] and subscriber.completed and subscriber.error is None
        assert subscription.requests == [4, 2, 2] and subscription.calls_after_end == []
        assert subscription.threads == {threading.current_thread().name}  # all on the loop's thread (2.7)
        assert observer.processed == ([("on_subscribe", None)] + [("on_next", i) for i in range(4)]
                                      + [("on_complete", None)])

    asyncio.run(main())


@pytest.mark.parametrize("end", ["on_complete", "on_error"])
def test_asyncio_batching_never_requests_once_the_end_has_arrived(end):
    async def main():
        observer = Observer()
        subscriber = AsyncioBatching(capacity=4, observer=observer)
        subscription = ManualSubscription()
        subscriber.on_subscribe(subscription)
        for item in range(4):
            subscriber.on_next(item)  # processed later, on the task: the refills they make room for come too late
        subscription.ended = True
        error = RuntimeError("upstream failed")
        getattr(subscriber, end)(*((error,) if end == "on_error" else ()))
        await asyncio.wait_for(subscriber.task, TIMEOUT_S)
        assert subscriber.items == [0, 1, 2, 3]
        assert subscription.calls == [("request", 4)] and subscription.calls_after_end == []  # 2.3, 2.4
        assert observer.processed[-1] == (end, error if end == "on_error" else None)
        assert (subscriber.error, subscriber.completed) == ((error, False) if end == "on_error" else (None, True))

    asyncio.run(main())


@pytest.mark.parametrize("end", ["on_complete", "on_error"])
def test_asyncio_batching_accepts_an_end_straight_after_on_subscribe(end):
    async def main():
        observer = Observer()
        subscriber = AsyncioBatching(observer=observer)
        subscription = ManualSubscription()
        subscriber.on_subscribe(subscription)
        subscription.ended = True
        getattr(subscriber, end)(*((RuntimeError("upstream failed"),) if end == "on_error" else ()))
        await asyncio.wait_for(subscriber.task, TIMEOUT_S)
        assert subscription.calls == [("request", 8)] and subscription.calls_after_end == []
        assert [kind for kind, _ in observer.processed] == ["on_subscribe", end]

    asyncio.run(main())


def test_asyncio_batching_raises_type_error_for_none():
    async def main():
        subscriber = AsyncioBatching()
        for method in ("on_subscribe", "on_next", "on_error"):
            with pytest.raises(TypeError):
                getattr(subscriber, method)(None)
        subscription = ManualSubscription()
        subscriber.on_subscribe(subscription)
        for method in ("on_subscribe", "on_next", "on_error"):
            with pytest.raises(TypeError):
                getattr(subscriber, method)(None)
        subscriber.on_complete()
        await asyncio.wait_for(subscriber.task, TIMEOUT_S)
        assert subscriber.completed and subscriber.items == []

    asyncio.run(main())


def test_asyncio_batching_cancels_a_second_subscription():
    async def main():
        subscriber = AsyncioBatching()
        first, second = ManualSubscription(), ManualSubscription()
        subscriber.on_subscribe(first)
        subscriber.on_subscribe(second)
        assert second.calls == [("cancel",)]
        subscriber.on_next(0)
        subscriber.on_complete()
        await asyncio.wait_for(subscriber.task, TIMEOUT_S)
        assert first.calls == [("request", 8)] and subscriber.items == [0] and subscriber.completed

    asyncio.run(main())


def test_asyncio_batching_cancels_when_its_task_is_cancelled_and_takes_what_still_arrives_in_stride():
    async def main():
        observer = Observer()
        subscriber = AsyncioBatching(capacity=4, observer=observer)
        subscription = ManualSubscription()
        subscriber.on_subscribe(subscription)
        subscriber.on_next(0)
        await until(lambda: subscriber.items == [0], "the first element processed")
        subscriber.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await subscriber.task
        assert subscription.calls == [("request", 4), ("cancel",)]  # no longer needed (2.6)
        subscriber.on_next(1)  # still requested when it cancelled (2.8): returns normally, not processed
        subscriber.on_complete()
        assert subscriber.items == [0] and not subscriber.completed
        assert subscription.calls == [("request", 4), ("cancel",)]
        assert observer.processed == [("on_subscribe", None), ("on_next", 0)]

    asyncio.run(main())


def test_asyncio_batching_consumes_whole_streams_from_the_asyncio_native_publisher():
    async def main():
        for n in (0, 1, 20):
            subscriber = AsyncioBatching(capacity=4)
            AsyncioNative(n).subscribe(subscriber)
            await until(lambda: subscriber.completed, f"the end of a stream of {n}")
            assert subscriber.items == list(range(n))

    asyncio.run(main())


def test_asyncio_identity_passes_elements_through_from_an_asyncio_publisher():
    async def main():
        processor = AsyncioIdentity()
        AsyncioNative(30).subscribe(processor)
        log = Log()
        processor.subscribe(Recorder(log, initial=3, per_item=1))
        await until(lambda: log.terminated, "on_complete")
        assert log.items == list(range(30)) and log.completed and not log.errors
        assert not log.overlapped

    asyncio.run(main())


def test_asyncio_identity_never_nests_deliveries_on_a_synchronous_upstream():
    async def main():
        processor = AsyncioIdentity()
        SyncTrampolined(40).subscribe(processor)
        log = Log()
        processor.subscribe(Recorder(log, initial=1, per_item=1))  # each request goes upstream from inside on_next
        await until(lambda: log.terminated, "on_complete")
        assert log.items == list(range(40)) and log.completed
        assert log.max_depth == 1 and not log.overlapped

    asyncio.run(main())


def test_asyncio_identity_chains_into_the_asyncio_batching_subscriber():
    async def main():
        processor = AsyncioIdentity()
        AsyncioNative(25).subscribe(processor)
        subscriber = AsyncioBatching(capacity=4)
        processor.subscribe(subscriber)
        await until(lambda: subscriber.completed, "the end of the stream")
        assert subscriber.items == list(range(25))

    asyncio.run(main())


def test_asyncio_identity_requests_upstream_what_downstream_requests_capped_at_max_demand():
    async def main():
        processor = AsyncioIdentity()
        log = Log()
        recorder = Recorder(log)
        processor.subscribe(recorder)  # before upstream is there
        await until(lambda: log.events, "on_subscribe")
        recorder.subscription.request(3)  # waits for upstream
        upstream = ManualSubscription()
        processor.on_subscribe(upstream)
        await until(lambda: upstream.requests == [3], "the demand that waited for upstream")
        recorder.subscription.request(5)
        await until(lambda: upstream.requests == [3, 5], "the next request passed upstream")
        for item in range(3):
            processor.on_next(item)
        await until(lambda: log.items == [0, 1, 2], "three elements")
        recorder.subscription.request(MAX_DEMAND)
        recorder.subscription.request(MAX_DEMAND)
        processor.on_complete()
        await until(lambda: log.terminated, "on_complete")
        # 5 were still outstanding: the first MAX_DEMAND tops that up to 2**63-1, the second adds nothing (3.17)
        assert upstream.requests == [3, 5, MAX_DEMAND - 5]
        assert log.items == [0, 1, 2] and log.completed

    asyncio.run(main())


async def identity_wired_up(initial: int):
    """An AsyncioIdentity between an upstream subscription (only a weak reference to it is kept, to see it
    released) and a recorder that asked for `initial`, once that request has reached upstream."""
    processor = AsyncioIdentity()
    calls: list = []
    upstream = UpstreamSubscription(calls)
    processor.on_subscribe(upstream)
    released = weakref.ref(upstream)
    del upstream
    log = Log()
    recorder = Recorder(log, initial=initial)
    processor.subscribe(recorder)
    await until(lambda: calls == [("request", initial)], "the request passed upstream")
    return processor, calls, released, log, recorder


@pytest.mark.parametrize("end", ["on_complete", "on_error"])
def test_asyncio_identity_propagates_the_end_and_never_calls_upstream_again(end):
    async def main():
        processor, calls, released, log, recorder = await identity_wired_up(4)
        processor.on_next(0)
        error = RuntimeError("upstream failed")
        getattr(processor, end)(*((error,) if end == "on_error" else ()))
        await until(lambda: log.terminated, end)
        assert log.items == [0] and (log.errors == [error] if end == "on_error" else log.completed)
        recorder.subscription.request(5)  # after the end: a no-op, up and down
        recorder.subscription.cancel()
        await until_collected(released, "the ended upstream subscription")  # it can be called no more
        assert calls == [("request", 4)]  # 2.3, 2.4
        collected = weakref.ref(recorder)
        del recorder
        await until_collected(collected, "the ended subscriber")
        assert len(log.events) == 3

    asyncio.run(main())


def test_asyncio_identity_passes_an_early_end_to_its_later_subscriber():
    async def main():
        for end in ("on_complete", "on_error"):
            processor = AsyncioIdentity()
            processor.on_subscribe(ManualSubscription())
            error = RuntimeError("upstream failed")
            getattr(processor, end)(*((error,) if end == "on_error" else ()))
            log = Log()
            processor.subscribe(Recorder(log))
            await until(lambda: log.terminated, end)
            assert log.events == [("on_subscribe", None), (end, error if end == "on_error" else None)]

    asyncio.run(main())


def test_asyncio_identity_cancels_upstream_when_downstream_cancels_and_drops_the_rest():
    async def main():
        processor = AsyncioIdentity()
        upstream = ManualSubscription()
        processor.on_subscribe(upstream)
        log = Log()
        recorder = Recorder(log, initial=5, cancel_at=1)
        processor.subscribe(recorder)
        collected = weakref.ref(recorder)
        del recorder
        await until(lambda: upstream.requests == [5], "the request passed upstream")
        processor.on_next(0)
        processor.on_next(1)  # queued behind 0: dropped once downstream has cancelled
        await until(lambda: upstream.cancelled, "the upstream cancel")
        processor.on_next(2)  # was requested: arrives after the cancel (2.8) and is dropped
        processor.on_complete()
        await until_collected(collected, "the cancelled subscriber")  # 3.13, and nothing more can reach it
        assert log.items == [0] and not log.terminated
        assert upstream.calls == [("request", 5), ("cancel",)]

    asyncio.run(main())


def test_asyncio_identity_cancel_from_another_thread_cancels_upstream_from_the_loop():
    async def main():
        processor = AsyncioIdentity()
        upstream = ManualSubscription()
        processor.on_subscribe(upstream)
        log = Log()
        recorder = Recorder(log, initial=1)
        processor.subscribe(recorder)
        await until(lambda: upstream.requests == [1], "the request passed upstream")
        await asyncio.to_thread(recorder.subscription.cancel)  # 3.5: thread-safe
        await asyncio.to_thread(recorder.subscription.cancel)  # 3.7: a no-op
        await until(lambda: upstream.cancelled, "the upstream cancel")
        assert upstream.calls == [("request", 1), ("cancel",)]
        assert upstream.threads == {threading.current_thread().name}  # every upstream call from the loop

    asyncio.run(main())


@pytest.mark.parametrize("bad", [0, -1])
def test_asyncio_identity_answers_a_non_positive_request_with_value_error_and_cancels_upstream(bad):
    async def main():
        processor, calls, released, log, recorder = await identity_wired_up(2)
        processor.on_next(0)
        await until(lambda: log.items == [0], "the first element")
        recorder.subscription.request(bad)
        await until(lambda: log.terminated, "on_error")
        [error] = log.errors
        assert isinstance(error, ValueError) and "positive" in str(error)
        recorder.subscription.request(1)  # after the end: a no-op
        await until_collected(released, "the cancelled upstream subscription")
        assert calls == [("request", 2), ("cancel",)]
        assert log.items == [0]

    asyncio.run(main())


def test_asyncio_identity_logs_a_raising_subscriber_and_counts_it_cancelled(caplog):
    async def main():
        processor = AsyncioIdentity()
        upstream = ManualSubscription()
        processor.on_subscribe(upstream)
        log = Log()
        recorder = Recorder(log, initial=5, raise_at=2)
        processor.subscribe(recorder)
        collected = weakref.ref(recorder)
        del recorder
        await until(lambda: upstream.requests == [5], "the request passed upstream")
        for item in range(3):
            processor.on_next(item)
        await until(lambda: upstream.cancelled, "the upstream cancel")
        [record] = caplog.records
        assert record.levelno == logging.WARNING and record.exc_info and "on purpose" in str(record.exc_info[1])
        record.exc_info = None  # its traceback's frames would keep the subscriber alive
        del record
        caplog.clear()
        processor.on_complete()
        await until_collected(collected, "the raising subscriber")
        assert log.items == [0, 1] and not log.terminated
        assert upstream.calls == [("request", 5), ("cancel",)]

    with caplog.at_level(logging.WARNING, logger="tests.conformant.processors"):
        asyncio.run(main())


def test_asyncio_identity_rejects_a_second_subscriber():
    async def main():
        processor = AsyncioIdentity()
        upstream = ManualSubscription()
        processor.on_subscribe(upstream)
        first, second = Log(), Log()
        processor.subscribe(Recorder(first, initial=1))
        processor.subscribe(Recorder(second, initial=1))
        await until(lambda: second.terminated and first.events, "the rejection")
        assert second.events[0] == ("on_subscribe", None) and len(second.events) == 2
        assert isinstance(second.errors[0], RuntimeError)
        processor.on_next(0)
        processor.on_complete()
        await until(lambda: first.terminated, "the first subscriber's on_complete")
        assert first.events == [("on_subscribe", None), ("on_next", 0), ("on_complete", None)]
        assert upstream.calls == [("request", 1)]  # only the first subscriber's demand

    asyncio.run(main())


def test_asyncio_identity_fails_downstream_and_cancels_an_upstream_that_sends_beyond_demand():
    async def main():
        processor = AsyncioIdentity()
        upstream = ManualSubscription()
        processor.on_subscribe(upstream)
        log = Log()
        processor.subscribe(Recorder(log, initial=1))
        await until(lambda: upstream.requests == [1], "the request passed upstream")
        processor.on_next(0)
        processor.on_next(1)  # not requested (1.1)
        await until(lambda: log.terminated, "on_error")
        assert log.items == [0] and isinstance(log.errors[0], RuntimeError)
        assert upstream.calls == [("request", 1), ("cancel",)]

    asyncio.run(main())


def test_asyncio_identity_raises_type_error_for_none_and_cancels_a_second_upstream():
    async def main():
        processor = AsyncioIdentity()
        for method in ("on_subscribe", "on_next", "on_error", "subscribe"):
            with pytest.raises(TypeError):
                getattr(processor, method)(None)
        first, second = ManualSubscription(), ManualSubscription()
        processor.on_subscribe(first)
        processor.on_subscribe(second)
        assert second.calls == [("cancel",)] and first.calls == []

    asyncio.run(main())

"""Plain unit tests of rstck.reference, without the kit's machinery."""

from __future__ import annotations

import asyncio
import gc
import itertools
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest

from rstck.reference import (
    AsyncioPublisher,
    BufferedSubscriber,
    ExecutorPublisher,
    FailedPublisher,
    IterablePublisher,
    MapProcessor,
    SyncSubscriber,
)

MAX = 2**63 - 1
WAIT_S = 5.0  # an upper bound for waits, never a delay


class Recorder:
    """Records signals; requests `initial` in on_subscribe; `hook(self, item)` runs in on_next."""

    def __init__(self, initial=0, hook=None):
        self.initial, self.hook = initial, hook
        self.subscription = None
        self.signals = []
        self.items = []
        self.error = None
        self.completed = False
        self.subscribed = threading.Event()
        self.done = threading.Event()

    def on_subscribe(self, subscription):
        self.signals.append("on_subscribe")
        self.subscription = subscription
        self.subscribed.set()
        if self.initial:
            subscription.request(self.initial)

    def on_next(self, item):
        self.signals.append("on_next")
        self.items.append(item)
        if self.hook:
            self.hook(self, item)

    def on_error(self, error):
        self.signals.append("on_error")
        self.error = error
        self.done.set()

    def on_complete(self):
        self.signals.append("on_complete")
        self.completed = True
        self.done.set()


class ManualSubscription:
    """A subscription the test drives by hand: it only records what it is asked."""

    def __init__(self):
        self.requests = []
        self.cancelled = 0

    @property
    def requested(self):
        return sum(self.requests)

    def request(self, n):
        self.requests.append(n)

    def cancel(self):
        self.cancelled += 1


# IterablePublisher


def test_elements_in_order_then_complete():
    rec = Recorder(initial=10)
    IterablePublisher(range(5)).subscribe(rec)
    assert rec.items == [0, 1, 2, 3, 4]
    assert rec.signals[0] == "on_subscribe" and rec.signals[-1] == "on_complete"


def test_each_subscriber_gets_its_own_iteration():
    publisher = IterablePublisher(lambda: iter("abc"))
    first, second = Recorder(initial=10), Recorder(initial=10)
    publisher.subscribe(first)
    publisher.subscribe(second)
    assert first.items == second.items == ["a", "b", "c"]


def test_one_shot_iterators_are_rejected():
    with pytest.raises(TypeError):
        IterablePublisher(iter([1, 2]))


def test_demand_is_respected():
    rec = Recorder()
    IterablePublisher(range(10)).subscribe(rec)
    assert rec.items == []
    rec.subscription.request(3)
    assert rec.items == [0, 1, 2]
    rec.subscription.request(2)
    assert rec.items == [0, 1, 2, 3, 4] and not rec.completed


def test_completes_right_after_the_last_element_without_further_demand():
    rec = Recorder(initial=3)
    IterablePublisher(range(3)).subscribe(rec)
    assert rec.items == [0, 1, 2] and rec.completed


def test_empty_publisher_completes_without_demand():
    rec = Recorder()
    IterablePublisher([]).subscribe(rec)
    assert rec.signals == ["on_subscribe", "on_complete"]


def test_request_from_on_next_recurses_at_most_once():
    depth = max_depth = 0

    def hook(rec, item):
        nonlocal depth, max_depth
        depth += 1
        max_depth = max(max_depth, depth)
        rec.subscription.request(1)
        depth -= 1

    rec = Recorder(initial=1, hook=hook)
    IterablePublisher(range(10_000)).subscribe(rec)
    assert len(rec.items) == 10_000 and rec.completed
    assert max_depth == 1


@pytest.mark.parametrize("n", [0, -1])
def test_non_positive_request_signals_value_error(n):
    rec = Recorder()
    IterablePublisher(range(10)).subscribe(rec)
    rec.subscription.request(n)  # returns normally: 3.16
    assert isinstance(rec.error, ValueError) and "3.9" in str(rec.error)
    rec.subscription.request(5)  # now a NOP
    rec.subscription.cancel()
    assert rec.items == [] and rec.signals == ["on_subscribe", "on_error"]


def test_cancel_stops_delivery_and_drops_the_subscriber():
    def hook(rec, item):
        if len(rec.items) == 3:
            rec.subscription.cancel()
            rec.subscription.cancel()  # idempotent

    publisher = IterablePublisher(itertools.count)
    rec = Recorder(initial=MAX, hook=hook)
    publisher.subscribe(rec)
    assert rec.items == [0, 1, 2] and not rec.done.is_set()
    subscription = rec.subscription
    subscription.request(5)  # NOP after cancel
    alive = weakref.ref(rec)
    del rec
    gc.collect()
    assert alive() is None, "the subscription still holds its subscriber"
    assert subscription is not None and publisher is not None


def test_cumulative_demand_beyond_max_keeps_delivering():
    def hook(rec, item):
        if item == 4:
            rec.subscription.request(MAX)
        if item == 999:
            rec.subscription.cancel()

    rec = Recorder(initial=MAX, hook=hook)
    IterablePublisher(itertools.count).subscribe(rec)
    assert rec.items == list(range(1000))

    rec = Recorder(initial=MAX, hook=lambda r, item: r.subscription.request(MAX))
    IterablePublisher(range(100)).subscribe(rec)
    assert rec.items == list(range(100)) and rec.completed


def test_iterator_failure_is_signalled():
    def failing():
        yield 1
        raise KeyError("boom")

    rec = Recorder(initial=10)
    IterablePublisher(failing).subscribe(rec)
    assert rec.items == [1] and isinstance(rec.error, KeyError)


def test_subscribe_none_raises_type_error():
    with pytest.raises(TypeError):
        IterablePublisher(range(3)).subscribe(None)


def test_raising_subscriber_is_cancelled_not_propagated():
    def hook(rec, item):
        raise RuntimeError("broken subscriber")

    rec = Recorder(initial=10, hook=hook)
    IterablePublisher(range(5)).subscribe(rec)  # returns normally
    assert rec.items == [0] and not rec.done.is_set()


def test_failed_publisher_errors_without_demand():
    rec = Recorder()
    FailedPublisher(lambda: OSError("down")).subscribe(rec)
    assert rec.signals == ["on_subscribe", "on_error"] and isinstance(rec.error, OSError)
    rec.subscription.request(1)
    rec.subscription.cancel()
    assert rec.signals == ["on_subscribe", "on_error"]


# ExecutorPublisher and AsyncioPublisher


def test_executor_publisher_never_overlaps_signals():
    n = 2000
    guard = threading.Lock()
    overlaps, threads = [], set()

    class Guarded(Recorder):
        def on_subscribe(self, subscription):
            self._enter()
            super().on_subscribe(subscription)
            guard.release()

        def on_next(self, item):
            self._enter()
            threads.add(threading.current_thread().name)
            super().on_next(item)
            guard.release()

        def _enter(self):
            if not guard.acquire(blocking=False):
                overlaps.append(threading.current_thread().name)
                guard.acquire()

    executor = ThreadPoolExecutor(8)
    try:
        rec = Guarded(initial=1)
        ExecutorPublisher(range(n), executor).subscribe(rec)
        assert rec.subscribed.wait(WAIT_S)
        for _ in range(n):
            rec.subscription.request(1)
        assert rec.done.wait(WAIT_S)
    finally:
        executor.shutdown(wait=True)
    assert not overlaps
    assert rec.items == list(range(n)) and rec.completed
    assert "MainThread" not in threads


def test_executor_publisher_request_zero():
    with ThreadPoolExecutor(4) as executor:
        rec = Recorder(hook=None)
        ExecutorPublisher(range(5), executor).subscribe(rec)
        assert rec.subscribed.wait(WAIT_S)
        rec.subscription.request(0)
        assert rec.done.wait(WAIT_S)
    assert isinstance(rec.error, ValueError) and rec.items == []


def test_executor_publisher_fails_when_the_executor_is_gone():
    executor = ThreadPoolExecutor(1)
    executor.shutdown()
    rec = Recorder()
    ExecutorPublisher(range(5), executor).subscribe(rec)
    assert rec.signals == ["on_subscribe", "on_error"] and isinstance(rec.error, RuntimeError)


def test_asyncio_publisher_delivers_when_the_loop_runs():
    loop = asyncio.new_event_loop()
    try:
        rec = Recorder(initial=MAX)
        AsyncioPublisher(range(100), loop).subscribe(rec)
        assert rec.signals == []  # nothing happens until the loop runs
        for _ in range(1000):
            if rec.done.is_set():
                break
            loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert rec.items == list(range(100)) and rec.completed


# Subscribers


def test_buffered_subscriber_never_exceeds_its_buffer():
    size = 16
    subscriber = BufferedSubscriber(size)
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    assert subscription.requested == size
    delivered = 0
    while delivered < 100:
        outstanding = subscription.requested - delivered
        assert 0 < outstanding <= size
        subscriber.on_next(delivered)
        delivered += 1
    subscriber.on_complete()
    assert subscriber.received == list(range(100)) and subscriber.completed
    assert min(subscription.requests) >= size // 2  # batches, not stop-and-wait
    assert subscription.cancelled == 0


def test_buffered_subscriber_with_a_publisher_and_max_items():
    seen = []
    subscriber = BufferedSubscriber(4, seen.append, max_items=10)
    IterablePublisher(itertools.count).subscribe(subscriber)
    assert subscriber.received == seen == list(range(10))
    assert subscriber.done.is_set() and not subscriber.completed


def test_subscriber_rules():
    subscriber = SyncSubscriber()
    for call in (lambda: subscriber.on_subscribe(None), lambda: subscriber.on_next(None),
                 lambda: subscriber.on_error(None)):
        with pytest.raises(TypeError):
            call()
    first, second = ManualSubscription(), ManualSubscription()
    subscriber.on_subscribe(first)
    subscriber.on_subscribe(second)
    assert first.requests == [1] and first.cancelled == 0
    assert second.requests == [] and second.cancelled == 1  # 2.5
    subscriber.on_next("x")
    assert first.requests == [1, 1]
    subscriber.on_complete()
    subscriber.cancel()  # after a terminal signal: never touches the subscription (2.3)
    assert first.requests == [1, 1] and first.cancelled == 0 and subscriber.completed


def test_subscriber_cancel_from_another_thread_and_observer():
    events = []

    class Observer:
        def on_subscribe_processed(self):
            events.append("subscribe")

        def on_next_processed(self, item):
            events.append(item)

        def on_error_processed(self, error):
            events.append("error")

        def on_complete_processed(self):
            events.append("complete")

    subscriber = SyncSubscriber(request_batch=2, observer=Observer())
    subscription = ManualSubscription()
    subscriber.on_subscribe(subscription)
    subscriber.on_next(1)
    worker = threading.Thread(target=subscriber.cancel)
    worker.start()
    worker.join(WAIT_S)
    subscriber.on_next(2)  # late, after cancel (2.8): ignored
    subscriber.on_error(RuntimeError("late"))
    assert subscription.cancelled == 1 and subscription.requests == [2]
    assert subscriber.received == [1]
    assert events == ["subscribe", 1, 2, "error"]


# MapProcessor


def test_map_processor_maps_and_forwards_demand_exactly():
    processor = MapProcessor(lambda x: x * 2)
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    rec = Recorder()
    processor.subscribe(rec)
    assert upstream.requests == []
    rec.subscription.request(3)
    assert upstream.requests == [3]
    for item in (1, 2, 3):
        processor.on_next(item)
    assert rec.items == [2, 4, 6]
    rec.subscription.cancel()
    assert upstream.cancelled == 1


def test_map_processor_end_to_end():
    processor = MapProcessor(str)
    IterablePublisher(range(1000)).subscribe(processor)
    subscriber = BufferedSubscriber(8)
    processor.subscribe(subscriber)
    assert subscriber.received == [str(i) for i in range(1000)] and subscriber.completed


def test_map_processor_propagates_errors_and_rejects_bad_requests():
    processor = MapProcessor()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    rec = Recorder(initial=5)
    processor.subscribe(rec)
    processor.on_next("a")
    error = OSError("upstream failed")
    processor.on_error(error)
    assert rec.items == ["a"] and rec.error is error

    processor = MapProcessor()
    upstream = ManualSubscription()
    processor.on_subscribe(upstream)
    rec = Recorder()
    processor.subscribe(rec)
    rec.subscription.request(0)
    assert isinstance(rec.error, ValueError) and upstream.cancelled == 1


def test_map_processor_buffers_terminal_signals_and_is_unicast():
    processor = MapProcessor()
    processor.on_subscribe(ManualSubscription())
    processor.on_complete()
    first, second = Recorder(), Recorder()
    processor.subscribe(first)
    processor.subscribe(second)
    assert first.signals == ["on_subscribe", "on_complete"]
    assert second.signals == ["on_subscribe", "on_error"] and "single subscriber" in str(second.error)
    with pytest.raises(TypeError):
        processor.on_next(None)

"""Conformant publishers that hold their subscription's lock while they signal, delivering on threads of their own.

A style common in Python libraries: `request` records the demand under the subscription's re-entrant lock; the
delivery holds that lock across `on_next` (so signals are serial, 1.3, and a request from another thread waits until
the `on_next` in flight returns, then counts). What differs is where delivery runs:

- `timer_publisher`: `request` schedules a drain on a private `threading.Timer` (2 ms) if none is scheduled;
  `subscribe` signals `on_subscribe` under the same lock;
- `shared_pool_publisher`: the same on a module-level pool of three workers shared by every subscription, with
  `on_subscribe` signalled from the pool, under the lock;
- `condition_worker_publisher`: a worker thread per subscription waits on a `threading.Condition` for demand and
  delivers with the lock held (let go only while it waits); `cancel` sets a flag the worker reads at its next element.

A kit that, inside `on_next`, requests on a second thread and waits for that request deadlocks them for as long as
it waits; one that settles meanwhile judges a silence it caused (tests/test_kit_caused_silence.py).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading

import rstck

MAX_DEMAND = 2**63 - 1
TIMER_DELAY_S = 0.002
SHARED_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="shared-pool")
_log = logging.getLogger(__name__)


class DrainingSubscription:
    """Demand recorded under the lock; a drain, run where `run_elsewhere` puts it, delivers holding the lock."""

    def __init__(self, subscriber, n: int, run_elsewhere):
        self.subscriber, self.n, self.run_elsewhere = subscriber, n, run_elsewhere
        self.lock = threading.RLock()
        self.demand = self.sent = 0
        self.rejected: int | None = None  # a non-positive request, answered with on_error (3.9)
        self.done = self.scheduled = False

    def request(self, n: int) -> None:
        with self.lock:
            if self.done:
                return
            if n <= 0:
                self.rejected = n
            else:
                self.demand = min(self.demand + n, MAX_DEMAND)
            if not self.scheduled:
                self.scheduled = True
                self.run_elsewhere(self.drain)

    def cancel(self) -> None:
        self.done = True
        self.subscriber = None  # 3.13

    def drain(self) -> None:
        with self.lock:
            self.scheduled = False
            while not self.done:
                subscriber = self.subscriber
                if self.rejected is not None:
                    return self.end(lambda: subscriber.on_error(ValueError(f"3.9: request({self.rejected})")))
                if self.sent == self.n:
                    return self.end(subscriber.on_complete)
                if self.demand == 0:
                    return
                self.demand -= 1
                self.sent += 1
                try:
                    subscriber.on_next(self.sent - 1)
                except Exception:  # 2.13: the subscription counts as cancelled; the error is not swallowed
                    self.cancel()
                    _log.exception("on_next raised")
                    return

    def end(self, signal) -> None:
        self.done, self.subscriber = True, None
        signal()

    def announce(self, subscriber) -> None:
        with self.lock:
            subscriber.on_subscribe(self)
            if self.n == 0 and not self.done:
                self.end(subscriber.on_complete)


def _on_a_timer(drain) -> None:
    timer = threading.Timer(TIMER_DELAY_S, drain)
    timer.daemon = True
    timer.start()


class TimerPublisher:
    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None) (rule 1.9)")
        DrainingSubscription(subscriber, self.n, _on_a_timer).announce(subscriber)


class SharedPoolPublisher:
    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None) (rule 1.9)")
        subscription = DrainingSubscription(subscriber, self.n, SHARED_POOL.submit)
        SHARED_POOL.submit(subscription.announce, subscriber)


class ConditionWorkerSubscription:
    """A worker per subscription: waits on a condition for demand, delivers holding the lock."""

    def __init__(self, subscriber, n: int):
        self.subscriber, self.n = subscriber, n
        self.lock = threading.RLock()
        self.wakeup = threading.Condition(self.lock)
        self.demand = 0
        self.rejected: int | None = None
        self.cancelled = False
        threading.Thread(target=self.work, name="condition-worker", daemon=True).start()

    def request(self, n: int) -> None:
        with self.lock:
            if n <= 0:
                self.rejected = n
            else:
                self.demand = min(self.demand + n, MAX_DEMAND)
            self.wakeup.notify()

    def cancel(self) -> None:
        self.cancelled = True  # read by the worker at its next element
        with self.lock:
            self.wakeup.notify()

    def work(self) -> None:
        subscriber = self.subscriber
        with self.lock:
            subscriber.on_subscribe(self)
            sent = 0
            while not self.cancelled:
                if self.rejected is not None:
                    self.cancelled = True
                    subscriber.on_error(ValueError(f"3.9: request({self.rejected})"))
                    break
                if sent == self.n:
                    subscriber.on_complete()
                    break
                if self.demand == 0:
                    self.wakeup.wait()
                    continue
                self.demand -= 1
                try:
                    subscriber.on_next(sent)
                except Exception:  # 2.13
                    _log.exception("on_next raised")
                    break
                sent += 1
            self.subscriber = None  # 3.13


class ConditionWorkerPublisher:
    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None) (rule 1.9)")
        ConditionWorkerSubscription(subscriber, self.n)


timer_publisher = rstck.InProcessTarget(create_publisher=TimerPublisher)
shared_pool_publisher = rstck.InProcessTarget(create_publisher=SharedPoolPublisher)
condition_worker_publisher = rstck.InProcessTarget(create_publisher=ConditionWorkerPublisher)
TARGETS = ("timer_publisher", "shared_pool_publisher", "condition_worker_publisher")

"""Reference publishers over iterables: synchronous, executor-driven and asyncio-driven.

All of them share one subscription state machine, `_IterableSubscription`; they differ
only in where its drain loop runs: inline in the caller of `request` (3.10), as a task
on a `concurrent.futures.Executor`, or as a callback on an asyncio loop.

The non-obvious part is the drain loop. Exactly one drain runs per subscription at a
time (the `_draining` flag, taken under the lock); a `request` or `subscribe` that finds
a drain running only adds demand and returns, and the running drain picks it up. That
one rule gives serial signals across threads (1.3), a request→on_next recursion depth of
at most 1 (3.3), and means no on_* method is ever called with the lock held.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from rstck.api import MAX_DEMAND, Subscriber
from rstck.reference.logs import warn

__all__ = ["AsyncioPublisher", "ExecutorPublisher", "FailedPublisher", "IterablePublisher"]

# Elements one executor task or loop callback delivers before yielding its thread.
BATCH = 32

_EMPTY: Any = object()  # no look-ahead element held

Schedule = Callable[[Callable[[], None]], object]


def illegal_request(n: object) -> ValueError | None:
    """The 3.9 error for a request argument that is not a positive int, else None."""
    if isinstance(n, int) and n > 0:
        return None
    return ValueError(f"3.9: non-positive request signals are illegal, got n={n!r}")


def _iterator_factory(source: object) -> Callable[[], Iterator[Any]]:
    # A one-shot iterator would be shared, and raced, by every subscriber (1.10).
    if isinstance(source, Iterator):
        raise TypeError("pass a re-iterable (e.g. range(n)) or a zero-argument callable "
                        "returning a fresh iterator, not a one-shot iterator")
    if isinstance(source, Iterable):
        return lambda: iter(source)
    if callable(source):
        return lambda: iter(source())
    raise TypeError(f"expected an iterable or a zero-argument callable, got {source!r}")


class _IterableSubscription:
    """One subscriber's own iteration, and its demand/cancel/terminal state machine.

    Rules: 1.1 (deliver only against demand), 1.3 (one drain at a time), 1.4/1.5 (on_error
    or on_complete when the iterator fails or ends, demand or not, using one element of
    look-ahead), 1.6/1.7 and 3.6/3.7 (NOPs once cancelled or terminated), 1.9 (on_subscribe
    first: it is the first thing the first drain does), 2.13 (a raising subscriber is
    cancelled and logged), 3.3, 3.5, 3.9, 3.13 (drop the subscriber), 3.15-3.17.
    """

    def __init__(self, subscriber: Subscriber[Any], make_iterator: Callable[[], Iterator[Any]],
                 schedule: Schedule | None, batch: int | None):
        self._lock = threading.Lock()
        self._subscriber: Subscriber[Any] | None = subscriber  # None once cancelled or terminated
        self._error: BaseException | None = None  # for the drain to signal: 3.9, or scheduling failed
        self._demand = 0  # capped at MAX_DEMAND, which then means unbounded (3.17)
        self._draining = True  # the first drain, which signals on_subscribe, is ours to start
        # Touched only by the thread that owns the drain:
        self._started = False
        self._make_iterator: Callable[[], Iterator[Any]] | None = make_iterator
        self._iterator: Iterator[Any] | None = None
        self._next: Any = _EMPTY
        self._schedule = schedule  # None: drain inline, in the caller's thread
        self._batch = batch

    # Subscription

    def request(self, n: int) -> None:
        with self._lock:
            if self._subscriber is None or self._error is not None:
                return  # 3.6
            self._error = illegal_request(n)
            if self._error is None:
                self._demand = min(self._demand + n, MAX_DEMAND)
            if self._draining:
                return  # the running drain sees the new demand: 3.3
            self._draining = True
        self._start_drain()

    def cancel(self) -> None:
        with self._lock:
            if self._subscriber is None or self._error is not None:
                return  # 3.7; a pending 3.9 on_error already ends the subscription
            self._subscriber = None  # 3.13
            if not self._draining:
                self._release()  # otherwise the running drain releases when it sees the cancel

    # The drain

    def _start_drain(self) -> None:
        """Run a drain here or as a task; the caller has taken `_draining`."""
        if self._schedule is None or not self._submit():
            self._drain()

    def _submit(self) -> bool:
        try:
            self._schedule(self._drain)  # type: ignore[misc]
            return True
        except Exception as err:  # a shut-down executor, a closed loop
            with self._lock:
                if self._subscriber is None:
                    return False  # cancelled meanwhile: the drain just stops
                self._error = self._error or err
            warn(__name__, "could not schedule a delivery task; failing the subscription", exc_info=True)
            return False

    def _drain(self) -> None:
        delivered = 0
        while True:
            item = _EMPTY
            with self._lock:
                subscriber, error = self._subscriber, self._error
                if subscriber is None:
                    self._release()
                    return  # keeps `_draining` set for good, so nothing schedules another drain
                if self._started and error is None and self._next is not _EMPTY:
                    if self._demand == 0:
                        self._draining = False  # the next request starts the next drain
                        return
                    item, self._next = self._next, _EMPTY
                    if self._demand != MAX_DEMAND:
                        self._demand -= 1
            if not self._started:
                self._started = True
                self._signal(subscriber, "on_subscribe", self)
            elif error is not None:
                self._terminate("on_error", error)
            elif item is _EMPTY:
                self._fetch()
            else:
                self._signal(subscriber, "on_next", item)
                delivered += 1
                if delivered == self._batch:  # stay fair to other tasks on the same threads
                    if self._submit():
                        return
                    delivered = 0

    def _fetch(self) -> None:
        """Read one element ahead, so that the end is signalled without waiting for demand."""
        try:
            if self._iterator is None:
                self._iterator = iter(self._make_iterator())  # type: ignore[misc]
            item = next(self._iterator, _EMPTY)
        except Exception as err:
            self._terminate("on_error", err)  # 1.4
            return
        if item is _EMPTY:
            self._terminate("on_complete")  # 1.5
        elif item is None:
            self._terminate("on_error", TypeError("the iterable yielded None, which on_next rejects (2.13)"))
        else:
            self._next = item

    def _terminate(self, method: str, *args: object) -> None:
        with self._lock:
            subscriber, self._subscriber = self._subscriber, None  # 1.6
            self._release()
        if subscriber is not None:  # else cancelled meanwhile: no signal at all
            self._signal(subscriber, method, *args)

    def _signal(self, subscriber: Subscriber[Any], method: str, *args: object) -> None:
        try:
            getattr(subscriber, method)(*args)
        except Exception:
            # 2.13: the subscriber broke the contract; consider the subscription cancelled.
            warn(__name__, "2.13: %s.%s raised; its subscription is cancelled",
                 type(subscriber).__name__, method, exc_info=True)
            with self._lock:
                self._subscriber = None

    def _release(self) -> None:
        self._make_iterator = self._iterator = None
        self._next = _EMPTY


class _IterablePublisherBase:
    """subscribe(): 1.9 (None raises TypeError; on_subscribe always comes first), 1.10/1.11
    (any number of subscribers, each with its own iteration: unicast) and 2.12 (a subscriber
    subscribed again while its subscription is live is ignored, with a warning: it must not get
    a second on_subscribe, and without one nothing else may be signalled to it)."""

    _batch: int | None = None

    def __init__(self, source: Iterable[Any] | Callable[[], Iterable[Any]]):
        self._make_iterator = _iterator_factory(source)
        # Subscriptions by subscriber id, pruned of ended ones on each subscribe; an ended
        # subscription has dropped its subscriber (3.13), so this keeps no subscriber alive.
        self._live: dict[int, _IterableSubscription] = {}
        self._live_lock = threading.Lock()

    def _schedule(self) -> Schedule | None:
        return None

    def _new_subscription(self, subscriber: Subscriber[Any]) -> _IterableSubscription:
        return _IterableSubscription(subscriber, self._make_iterator, self._schedule(), self._batch)

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        if subscriber is None:
            raise TypeError("1.9: subscribe(None) is illegal")
        with self._live_lock:
            live = {key: s for key, s in self._live.items() if s._subscriber is not None}
            existing = live.get(id(subscriber))
            if existing is not None and existing._subscriber is subscriber:
                warn(__name__, "2.12: %s is already subscribed; ignoring the second subscribe",
                     type(subscriber).__name__)
                return
            subscription = self._new_subscription(subscriber)
            live[id(subscriber)] = subscription
            self._live = live
        subscription._start_drain()


class IterablePublisher(_IterablePublisherBase):
    """A synchronous publisher: delivers on the thread that calls `request` (3.10, 3.11).

    `source` is a re-iterable (each subscriber iterates it afresh) or a zero-argument
    callable returning an iterable. Recursion request→on_next is trampolined to depth 1.
    """


class FailedPublisher(_IterablePublisherBase):
    """Signals on_subscribe, then at once on_error, with or without demand (1.4, 1.9, 2.10).

    `error_factory` is a zero-argument callable returning the exception, or an exception.
    It is an iterable publisher whose iteration fails at the first step, so 3.9 and the
    NOP rules hold exactly as for the others.
    """

    def __init__(self, error_factory: Callable[[], BaseException] | BaseException):
        def fail() -> Iterator[Any]:
            raise error_factory if isinstance(error_factory, BaseException) else error_factory()

        super().__init__(fail)


class ExecutorPublisher(_IterablePublisherBase):
    """An asynchronous publisher: deliveries run as tasks on `executor`, at most one task per
    subscription at a time (1.3) even on a many-threaded pool, `BATCH` elements per task.
    on_subscribe is delivered by the first task too."""

    _batch = BATCH

    def __init__(self, source: Iterable[Any] | Callable[[], Iterable[Any]], executor):
        super().__init__(source)
        self._executor = executor

    def _schedule(self) -> Schedule:
        return self._executor.submit


class AsyncioPublisher(_IterablePublisherBase):
    """An asynchronous publisher: deliveries run as callbacks on `loop`, which its owner runs.

    Uses `call_soon_threadsafe`, not `call_soon`, because `request` and `cancel` may come
    from threads other than the loop's.
    """

    _batch = BATCH

    def __init__(self, source: Iterable[Any] | Callable[[], Iterable[Any]], loop):
        super().__init__(source)
        self._loop = loop

    def _schedule(self) -> Schedule:
        return self._loop.call_soon_threadsafe

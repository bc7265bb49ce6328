"""Reference subscribers: BufferedSubscriber (subscriber-controlled queue bounds) and
SyncSubscriber (a fixed request batch, 1 by default: stop-and-wait).

Both process synchronously and differ only in their refill policy, so both are a
`_RefillingSubscriber`. The non-obvious part is how they call their subscription: every
request/cancel is posted to a `_Serial`, which runs calls one at a time on whichever
thread is already running them. So calls are serial even when `cancel()` comes from
another thread (2.7), no lock is held while calling out, a synchronous publisher that
calls on_next from inside `request` cannot make the calls nest, and a call still queued
when on_complete/on_error arrives is dropped (2.3, 2.4).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

from rstck.api import Subscription
from rstck.reference.logs import warn

__all__ = ["BufferedSubscriber", "SyncSubscriber"]


class _Serial:
    """Runs posted calls in order, one at a time, on the thread already running them.

    A call posted while another is running (from inside it, or from another thread) is
    queued, and the running thread runs it once the current call returns: calls never
    overlap and never nest. Callers may `post` while holding their own lock and `drain`
    after releasing it, which fixes the order of calls without calling out under a lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: collections.deque[tuple[Callable[..., object], tuple[Any, ...]]] = collections.deque()
        self._running = False

    def post(self, fn: Callable[..., object], *args: Any) -> None:
        with self._lock:
            self._queue.append((fn, args))

    def drain(self) -> None:
        with self._lock:
            if self._running:
                return
            self._running = True
        while True:
            with self._lock:
                if not self._queue:
                    self._running = False
                    return
                fn, args = self._queue.popleft()
            try:
                fn(*args)
            except Exception:  # the callee broke its "return normally" rule; keep serving the queue
                warn(__name__, "%s raised; ignored", getattr(fn, "__qualname__", fn), exc_info=True)


def _require(value: object, method: str, what: str) -> None:
    if value is None:
        raise TypeError(f"2.13: {method}({what}=None) is illegal")


class _RefillingSubscriber:
    """Requests `request_size` on subscribe, then requests again each time `refill_at`
    elements have been processed since the last request, so at most `request_size` are ever
    outstanding (requested, not yet received).

    Rules: 2.1 (demand first; subscription calls come last in each signal's processing),
    2.3/2.4 (after a terminal signal the subscription is dropped and never called), 2.5 (a
    second on_subscribe is cancelled: a subscriber is single-use, 2.12), 2.6 (cancel after
    `max_items`, or when `consume` fails), 2.7, 2.8 (elements after cancel are ignored),
    2.9/2.10, 2.13 (None arguments raise TypeError; otherwise return normally).

    After each signal is processed, the optional `observer` hears of it through
    on_subscribe_processed(), on_next_processed(item), on_error_processed(error) or
    on_complete_processed() (the kit's white-box hook); signals ignored as late or
    duplicate are reported too, rejected None arguments are not.
    """

    def __init__(self, consume: Callable[[Any], object] | None, *, request_size: int, refill_at: int,
                 max_items: int | None, observer: Any = None):
        if request_size < 1 or not 1 <= refill_at <= request_size:
            raise ValueError(f"need 1 <= refill_at ({refill_at}) <= request_size ({request_size})")
        if max_items is not None and max_items < 1:
            raise ValueError(f"max_items must be at least 1, got {max_items}")
        self._consume = consume
        self._request_size = request_size
        self._refill_at = refill_at
        self._max_items = max_items
        self._observer = observer
        self._lock = threading.Lock()
        self._calls = _Serial()
        self._state = "new"  # -> "active" -> "cancelled" -> "done"; cancel() or a terminal may skip ahead
        self._subscription: Subscription | None = None
        self._unrequested = 0  # processed since the last request
        self.received: list[Any] = []
        self.completed = False
        self.error: BaseException | None = None  # what on_error brought
        self.consume_error: Exception | None = None  # what `consume` raised; the subscription was cancelled
        self.done = threading.Event()  # set on on_complete, on_error or cancel

    # Subscriber

    def on_subscribe(self, subscription: Subscription) -> None:
        _require(subscription, "on_subscribe", "subscription")
        with self._lock:
            accepted = self._state == "new"
            if accepted:
                self._state, self._subscription = "active", subscription
                self._calls.post(self._call_subscription, "request", self._request_size)
        if accepted:
            self._calls.drain()
        else:
            self._cancel_foreign(subscription)  # 2.5
        self._notify("on_subscribe_processed")

    def on_next(self, item: Any) -> None:
        _require(item, "on_next", "item")
        with self._lock:
            wanted = self._state == "active"
            if wanted:
                self.received.append(item)
        if wanted:
            failure = self._process(item)
            with self._lock:
                if self._state == "active":
                    self._unrequested += 1
                    if failure is not None or len(self.received) == self._max_items:
                        self._cancel_locked()  # 2.6
                    elif self._unrequested >= self._refill_at:
                        self._calls.post(self._call_subscription, "request", self._unrequested)
                        self._unrequested = 0
            self._calls.drain()
        self._notify("on_next_processed", item)

    def on_error(self, error: BaseException) -> None:
        _require(error, "on_error", "error")
        if self._terminate():
            self.error = error
            self.done.set()
        self._notify("on_error_processed", error)

    def on_complete(self) -> None:
        if self._terminate():
            self.completed = True
            self.done.set()
        self._notify("on_complete_processed")

    # Own controls

    def cancel(self) -> None:
        """Cancel the subscription (2.6); safe from any thread, and idempotent."""
        with self._lock:
            self._cancel_locked()
        self._calls.drain()

    # Internals

    def _process(self, item: Any) -> Exception | None:
        if self._consume is None:
            return None
        try:
            self._consume(item)
        except Exception as err:  # 2.13: the only legal way to fail is to cancel
            warn(__name__, "consume(%r) raised; cancelling the subscription", item, exc_info=True)
            self.consume_error = err
            return err
        return None

    def _cancel_locked(self) -> None:
        if self._state == "active":
            self._calls.post(self._call_subscription, "cancel")
        if self._state in ("new", "active"):
            self._state = "cancelled"
            self.done.set()

    def _terminate(self) -> bool:
        """Enter the terminal state (2.4); False if already there (a publisher's 1.7 violation)."""
        with self._lock:
            if self._state == "done":
                return False
            self._state, self._subscription = "done", None
            return True

    def _call_subscription(self, method: str, *args: Any) -> None:
        """Runs on the `_Serial`; rechecks the state, which may have moved on since the post."""
        with self._lock:
            subscription = self._subscription
            if subscription is None:
                return  # terminated (2.3) or already cancelled
            if method == "cancel":
                self._subscription = None  # nothing more to say to it
            elif self._state != "active":
                return
        getattr(subscription, method)(*args)

    @staticmethod
    def _cancel_foreign(subscription: Subscription) -> None:
        try:
            subscription.cancel()
        except Exception:
            warn(__name__, "3.15: cancel() raised", exc_info=True)

    def _notify(self, hook: str, *args: Any) -> None:
        if self._observer is not None:
            getattr(self._observer, hook)(*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._state}, received={len(self.received)})"


class BufferedSubscriber(_RefillingSubscriber):
    """The spec's "subscriber controlled queue bounds": never more than `buffer_size`
    outstanding; requests `buffer_size` up front, then refills in batches of at least half
    the buffer (2.1: request the upper limit of what it can process, not one at a time)."""

    def __init__(self, buffer_size: int = 16, consume: Callable[[Any], object] | None = None, *,
                 max_items: int | None = None, observer: Any = None):
        super().__init__(consume, request_size=buffer_size, refill_at=max(1, buffer_size // 2),
                         max_items=max_items, observer=observer)


class SyncSubscriber(_RefillingSubscriber):
    """Requests `request_batch` (1: stop-and-wait) and again after each batch is processed."""

    def __init__(self, consume: Callable[[Any], object] | None = None, request_batch: int = 1, *,
                 max_items: int | None = None, observer: Any = None):
        super().__init__(consume, request_size=request_batch, refill_at=request_batch,
                         max_items=max_items, observer=observer)

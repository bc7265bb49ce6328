"""The SPI draft's publisher: one stream for all its subscribers.

Every element stays available, so a new subscriber starts with the first one (spi.publisher.3,
spi.publisher.6), each at its own rate (spi.publisher.3.rates). Once it has completed a subscriber it is in
`completed` state and answers `subscribe` with onComplete alone (spi.subscribe.1, .2); a failed one is in
`error` state from the start (spi.subscribe.3, .4).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

MAX_TOTAL_DEMAND = 2**63 - 1


class IllegalStateError(RuntimeError):
    """java.lang.IllegalStateException, as the spi-draft profile maps it."""


def check_request_more(cancelled: bool, n: Any) -> None:
    """The draft's throws on a requestMore, shared by the publisher's and the processor's subscriptions."""
    if cancelled:
        raise IllegalStateError("requestMore on a cancelled subscription (spi.request-more.1)")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ValueError(f"requestMore needs a positive number of elements, got {n!r} (spi.request-more.4)")


class DraftSubscription:
    """One subscriber's position in the publisher's stream, its demand, and whether it is cancelled.

    A terminal signal cancels it too (spi.on-terminal.3 asks the subscriber to see it so): a later
    requestMore or cancel throws (spi.request-more.1, spi.cancel.1). One drain delivers at a time, never
    holding the lock while it calls the subscriber; a requestMore that finds a drain running only adds
    demand.
    """

    def __init__(self, publisher: DraftPublisher, subscriber: Any):
        self._publisher = publisher
        self._subscriber: Any = subscriber  # None once cancelled: dropped (spi.cancel.3)
        self._lock = threading.Lock()
        self._demand = 0
        self._position = 0  # the next element's index: the oldest, for a new subscriber (spi.publisher.6)
        self._draining = False
        self.cancelled = False

    def request_more(self, n: int) -> None:
        check_request_more(self.cancelled, n)
        with self._lock:
            overflow = self._demand + n > MAX_TOTAL_DEMAND
            if not overflow:
                self._demand += n
        if overflow:
            self._end("on_error", IllegalStateError("total demand beyond 2^63-1 (spi.request-more.3)"))
            return
        self._drain()

    def cancel(self) -> None:
        with self._lock:
            if self.cancelled:
                raise IllegalStateError("cancel on a cancelled subscription (spi.cancel.1)")
            self.cancelled = True
            self._subscriber = None
        self._publisher._forget(self)  # before cancel returns: a subscribe after it is not overtaken (spi.cancel.4)

    def _drain(self) -> None:
        with self._lock:
            if self._draining:
                return
            self._draining = True
        while True:
            with self._lock:
                subscriber, position = self._subscriber, self._position
                elements = self._publisher._elements
                if subscriber is None or self.cancelled:
                    self._draining = False
                    return
                if position >= len(elements):  # the end, known at once: no waiting for a request (spi.publisher.5)
                    self._draining = False
                    ending = True
                elif self._demand == 0:
                    self._draining = False
                    return
                else:
                    ending = False
                    self._demand -= 1
                    self._position += 1
            if ending:
                self._end("on_complete")
                return
            subscriber.on_next(elements[position])

    def _end(self, kind: str, *args: Any) -> None:
        with self._lock:
            subscriber, self._subscriber = self._subscriber, None
            self.cancelled = True
        if subscriber is None:
            return
        self._publisher._forget(self)
        if kind == "on_complete":
            self._publisher._completed = True  # spi.subscribe.1, .2
        getattr(subscriber, kind)(*args)


class DraftPublisher:
    """A publisher of the SPI draft over a finite sequence (see the module docstring)."""

    subscription = DraftSubscription  # the class of its subscriptions

    def __init__(self, elements: Iterable[Any], error: BaseException | None = None):
        self._elements = list(elements)
        self._error = error  # in `error` state from the start
        self._completed = not self._elements and error is None  # an empty stream has ended already
        self._lock = threading.Lock()
        self._active: dict[int, DraftSubscription] = {}  # by the subscriber's identity (footnote [1])

    def subscribe(self, subscriber: Any) -> None:
        with self._lock:
            ended, active = self._completed, id(subscriber) in self._active
            subscription = None
            if self._error is None and not ended and not active:
                subscription = self.subscription(self, subscriber)
                self._active[id(subscriber)] = subscription
        if self._error is not None:
            subscriber.on_error(self._error)  # spi.subscribe.3, .4
        elif ended:
            subscriber.on_complete()  # spi.subscribe.1, .2
        elif active:
            subscriber.on_error(IllegalStateError("this subscriber already has an active subscription "
                                                  "(spi.subscribe.7)"))
        else:
            subscriber.on_subscribe(subscription)  # spi.subscribe.5

    def _forget(self, subscription: DraftSubscription) -> None:
        with self._lock:
            for key, held in list(self._active.items()):
                if held is subscription:
                    del self._active[key]

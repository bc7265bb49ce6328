"""MapProcessor: a mapping (by default identity) processor with one downstream subscriber.

It never buffers elements: it requests upstream exactly what downstream requests, so
upstream can never give it more than downstream may receive (1.1, 4.1). Terminal signals
that arrive before a downstream subscriber exists are kept for it.

The non-obvious part is concurrency: downstream signals come from the upstream's thread,
from whoever subscribes, and from whoever calls request(0); upstream calls come from
whoever requests or cancels downstream. Each direction therefore goes through its own
`_Serial` (see subscribers.py): calls are posted under the processor's lock, which fixes
their order, and run after it is released, one at a time (1.3 downstream, 2.7 upstream).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rstck.api import MAX_DEMAND, Subscriber, Subscription
from rstck.reference.logs import warn
from rstck.reference.publishers import FailedPublisher, illegal_request
from rstck.reference.subscribers import _require, _Serial

__all__ = ["MapProcessor"]


def _identity(item: Any) -> Any:
    return item


class MapProcessor:
    """Subscriber upstream, publisher downstream, applying `fn` to each element.

    Rules: 4.1 (both contracts), 4.2 (upstream on_error is propagated at once), 1.9/1.11
    (a second downstream subscriber gets on_subscribe then on_error: it is unicast and
    single-use), 2.5 (a second upstream subscription is cancelled), 3.9 (downstream
    request(n <= 0) errors downstream and cancels upstream), 3.13, and the RECOMMENDED
    cancel propagation: downstream cancel cancels upstream. If `fn` raises, or upstream
    over-delivers (breaking 1.1), upstream is cancelled and downstream gets on_error.
    """

    def __init__(self, fn: Callable[[Any], Any] | None = None):
        self._fn = fn if fn is not None else _identity
        self._lock = threading.Lock()
        # Upstream: "new" -> "active" -> "done" (terminal received, or cancelled by us).
        self._upstream_state = "new"
        self._upstream: Subscription | None = None
        self._upstream_terminated = False  # after on_complete/on_error it is never called (2.3)
        self._unforwarded = 0  # downstream demand that arrived before the upstream did
        # Downstream: "new" -> "active" -> "done" (terminal sent, or cancelled).
        self._downstream_state = "new"
        self._downstream: Subscriber[Any] | None = None
        self._downstream_cancelled = False
        self._demand = 0  # downstream demand not yet fulfilled; MAX_DEMAND means unbounded
        self._terminal: tuple[str, tuple[Any, ...]] | None = None  # kept for a late subscriber
        self._up_calls = _Serial()
        self._down_signals = _Serial()

    # Publisher (downstream side)

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        if subscriber is None:
            raise TypeError("1.9: subscribe(None) is illegal")
        with self._lock:
            accepted = self._downstream_state == "new"
            if not accepted and self._downstream is subscriber and self._downstream_state == "active":
                warn(__name__, "2.12: %s is already subscribed; ignoring the second subscribe",
                     type(subscriber).__name__)
                return
            if accepted:
                self._downstream_state, self._downstream = "active", subscriber
                self._down_signals.post(self._signal, subscriber, "on_subscribe", _Downstream(self))
                if self._terminal is not None:
                    method, args = self._terminal
                    self._terminal = None
                    self._finish_downstream_locked(method, *args)
        if not accepted:
            rejection = RuntimeError("MapProcessor takes a single subscriber and already has had one (1.11)")
            FailedPublisher(rejection).subscribe(subscriber)
            return
        self._drain()

    # Subscriber (upstream side)

    def on_subscribe(self, subscription: Subscription) -> None:
        _require(subscription, "on_subscribe", "subscription")
        with self._lock:
            if self._upstream_state == "new":
                self._upstream_state, self._upstream = "active", subscription
                if self._unforwarded:
                    self._up_calls.post(self._call_upstream, subscription, "request", self._unforwarded)
                    self._unforwarded = 0
            else:  # 2.5, or downstream already gone (2.6)
                self._up_calls.post(self._call_upstream, subscription, "cancel")
        self._drain()

    def on_next(self, item: Any) -> None:
        _require(item, "on_next", "item")
        try:
            mapped = self._fn(item)
            if mapped is None:
                raise TypeError(f"fn({item!r}) returned None, which on_next rejects (2.13)")
        except Exception as err:
            mapped, failure = None, err
        else:
            failure = None
        with self._lock:
            subscriber = self._downstream
            if subscriber is None:
                pass  # not subscribed yet, or gone: late elements are dropped (2.8)
            elif failure is not None:
                self._fail_locked(failure)
            elif self._demand == 0:
                self._fail_locked(RuntimeError("1.1: upstream signalled on_next beyond the demand given"))
            else:
                if self._demand != MAX_DEMAND:
                    self._demand -= 1
                self._down_signals.post(self._signal, subscriber, "on_next", mapped)
        self._drain()

    def on_error(self, error: BaseException) -> None:
        _require(error, "on_error", "error")
        self._upstream_terminal("on_error", error)

    def on_complete(self) -> None:
        self._upstream_terminal("on_complete")

    # Downstream subscription

    def _request(self, n: int) -> None:
        with self._lock:
            if self._downstream_state != "active":
                return  # 3.6
            error = illegal_request(n)
            if error is not None:
                self._fail_locked(error)  # 3.9
            else:
                self._demand = min(self._demand + n, MAX_DEMAND)
                if self._upstream_state == "active":
                    self._up_calls.post(self._call_upstream, self._upstream, "request", n)
                elif self._upstream_state == "new":
                    self._unforwarded = min(self._unforwarded + n, MAX_DEMAND)
        self._drain()

    def _cancel(self) -> None:
        with self._lock:
            if self._downstream_state != "active":
                return  # 3.7
            self._downstream_state, self._downstream = "done", None  # 3.13
            self._downstream_cancelled = True
            self._cancel_upstream_locked()
        self._drain()

    # Internals; the *_locked methods run under self._lock and only post calls.

    def _upstream_terminal(self, method: str, *args: Any) -> None:
        with self._lock:
            if self._upstream_terminated:
                return  # a duplicate terminal: upstream broke 1.7
            self._upstream_terminated = True
            if self._upstream_state != "done":
                self._upstream_state, self._upstream = "done", None
                self._finish_downstream_locked(method, *args)
        self._drain()

    def _fail_locked(self, error: BaseException) -> None:
        self._cancel_upstream_locked()
        self._finish_downstream_locked("on_error", error)

    def _cancel_upstream_locked(self) -> None:
        if self._upstream_state == "active":
            self._up_calls.post(self._call_upstream, self._upstream, "cancel")
        self._upstream_state, self._upstream = "done", None  # from "new": cancel it on arrival

    def _finish_downstream_locked(self, method: str, *args: Any) -> None:
        if self._downstream_state == "active":
            self._down_signals.post(self._signal, self._downstream, method, *args)
            self._downstream_state, self._downstream = "done", None
        elif self._downstream_state == "new":
            self._terminal = (method, args)

    def _call_upstream(self, subscription: Subscription, method: str, *args: Any) -> None:
        with self._lock:
            if self._upstream_terminated:
                return  # a call queued before on_complete/on_error arrived: 2.3, 2.4
        getattr(subscription, method)(*args)

    def _signal(self, subscriber: Subscriber[Any], method: str, *args: Any) -> None:
        if method == "on_next" and self._downstream_cancelled:
            return  # queued before the cancel; not needed any more
        try:
            getattr(subscriber, method)(*args)
        except Exception:
            warn(__name__, "2.13: %s.%s raised; its subscription is cancelled", type(subscriber).__name__, method,
                 exc_info=True)
            self._cancel()

    def _drain(self) -> None:
        self._up_calls.drain()
        self._down_signals.drain()


class _Downstream:
    """The subscription MapProcessor hands its downstream subscriber."""

    __slots__ = ("_processor",)

    def __init__(self, processor: MapProcessor):
        self._processor = processor

    def request(self, n: int) -> None:
        self._processor._request(n)

    def cancel(self) -> None:
        self._processor._cancel()

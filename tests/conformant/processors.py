"""Conformant identity processors: elements pass through unchanged.

All are unicast: the first subscriber is served, any later one is rejected with
on_subscribe then on_error (1.9's only legal way). All keep the calls in each
direction serial. The first two are driven from both sides: upstream signals arrive on
the upstream's threads, downstream requests on the downstream's; the asyncio one lives
on its event loop, whose thread makes every call.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading

_log = logging.getLogger(__name__)

MAX_DEMAND = 2**63 - 1  # 3.17: pending demand is capped here (effectively unbounded)


def _require(value, what: str) -> None:
    if value is None:
        raise TypeError(f"{what} must not be None (rules 1.9, 2.13)")


def _non_positive_request(n) -> ValueError:
    return ValueError(f"request({n!r}) is illegal: the number of elements requested must be positive (rule 3.9)")


class _Rejected:
    """The subscription a rejected subscriber gets before its on_error: there is nothing to ask for."""

    def request(self, n) -> None:
        pass

    def cancel(self) -> None:
        pass


def _reject(subscriber, processor_name: str) -> None:
    for method, args in (("on_subscribe", (_Rejected(),)),
                         ("on_error", (RuntimeError(f"{processor_name} serves a single subscriber"),))):
        try:
            getattr(subscriber, method)(*args)
        except Exception:
            _log.error("a rejected subscriber's %s raised (rule 2.13)", method, exc_info=True)
            return


class _DownstreamSubscription:
    """What the downstream subscriber holds: it forwards to the processor's publisher side."""

    def __init__(self, processor):
        self._processor = processor

    def request(self, n) -> None:
        self._processor._downstream_request(n)

    def cancel(self) -> None:
        self._processor._downstream_cancel()


class _SerialQueue:
    """Runs submitted calls one at a time, in submission order, on whichever thread finds it idle.

    A call submitted while another is running (from inside it, or on another thread) is run
    by the thread already draining, right after: calls never overlap and never nest.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._calls: collections.deque = collections.deque()
        self._draining = False

    def submit(self, call, *args) -> None:
        with self._lock:
            self._calls.append((call, args))

    def drain(self) -> None:
        with self._lock:
            if self._draining:
                return
            self._draining = True
        while True:
            with self._lock:
                if not self._calls:
                    self._draining = False
                    return
                call, args = self._calls.popleft()
            try:
                call(*args)
            except Exception:  # our calls catch their callee's errors; this is a last resort
                _log.exception("a serialized call raised")
            del call, args

    def run(self, call, *args) -> None:
        self.submit(call, *args)
        self.drain()


class UnicastIdentity:
    """Pass-through: requests upstream exactly what downstream requests, buffers nothing.

    Two `_SerialQueue`s keep each direction serial: one for calls to the upstream
    subscription, one for signals to the downstream subscriber. Downstream demand made
    before the upstream's on_subscribe is remembered and forwarded when it comes; an
    upstream end that comes before any subscriber is kept for it.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._to_upstream = _SerialQueue()
        self._to_downstream = _SerialQueue()
        # upstream side
        self._upstream = None  # live upstream subscription; None before, after its end, after our cancel
        self._upstream_seen = False
        self._pending_demand = 0  # asked downstream before upstream's on_subscribe
        self._pending_end: tuple | None = None  # upstream's end, arrived before any subscriber
        # downstream side
        self._downstream = None
        self._has_subscriber = False
        self._downstream_done = False  # cancelled, failed or ended: its calls are no-ops

    # -- subscriber side (upstream signals) -----------------------------------------------------

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        with self._lock:
            duplicate = self._upstream_seen
            self._upstream_seen = True
            if not duplicate:
                self._upstream = subscription
                demand, self._pending_demand = self._pending_demand, 0
                cancel_at_once = self._downstream_done
        if duplicate:
            subscription.cancel()  # 2.5
        elif cancel_at_once:
            self._to_upstream.run(self._call_upstream, "cancel")
        elif demand:
            self._to_upstream.run(self._call_upstream, "request", demand)

    def on_next(self, item) -> None:
        _require(item, "item")
        self._to_downstream.run(self._signal_downstream, "on_next", item)

    def on_error(self, error) -> None:
        _require(error, "error")
        self._upstream_ended(("on_error", error))

    def on_complete(self) -> None:
        self._upstream_ended(("on_complete",))

    def _upstream_ended(self, end: tuple) -> None:
        with self._lock:
            self._upstream = None  # 2.4: never called again
            if not self._has_subscriber:
                self._pending_end = end
                return
            self._to_downstream.submit(self._end_downstream, end)  # queued under the lock: after on_subscribe
        self._to_downstream.drain()

    # -- publisher side -------------------------------------------------------------------------

    def subscribe(self, subscriber) -> None:
        _require(subscriber, "subscriber")
        with self._lock:
            rejected = self._has_subscriber
            if not rejected:
                self._has_subscriber = True
                self._downstream = subscriber
                self._to_downstream.submit(self._signal_downstream, "on_subscribe", _DownstreamSubscription(self))
                if self._pending_end is not None:
                    self._to_downstream.submit(self._end_downstream, self._pending_end)
                    self._pending_end = None
        if rejected:
            _reject(subscriber, type(self).__name__)
        else:
            self._to_downstream.drain()

    def _downstream_request(self, n) -> None:
        if not (isinstance(n, int) and n > 0):
            return self._downstream_fails(_non_positive_request(n))
        with self._lock:
            if self._downstream_done:
                return
            if not self._upstream_seen:
                self._pending_demand = min(self._pending_demand + n, MAX_DEMAND)
                return
        self._to_upstream.run(self._call_upstream, "request", n)

    def _downstream_cancel(self) -> None:
        with self._lock:
            if self._downstream_done:
                return
            self._downstream_done = True
            self._downstream = None  # 3.13: the subscriber may go now
        self._to_upstream.run(self._call_upstream, "cancel")

    def _downstream_fails(self, error: BaseException) -> None:
        with self._lock:
            if self._downstream_done:
                return
            self._downstream_done = True
        self._to_upstream.run(self._call_upstream, "cancel")
        self._to_downstream.run(self._end_downstream, ("on_error", error))

    # -- the calls the queues run ---------------------------------------------------------------

    def _call_upstream(self, method: str, *args) -> None:
        with self._lock:
            upstream = self._upstream
            if method == "cancel":
                self._upstream = None
        if upstream is None:
            return  # not there yet (on_subscribe will see the cancel), ended, or already cancelled
        try:
            getattr(upstream, method)(*args)
        except Exception:
            _log.error("the upstream subscription's %s raised (rule 3.15/3.16)", method, exc_info=True)

    def _signal_downstream(self, method: str, *args) -> None:
        downstream = self._downstream
        if downstream is None:
            return  # cancelled: what is still in flight from upstream is dropped
        try:
            getattr(downstream, method)(*args)
        except Exception:
            _log.error("the subscriber's %s raised; its subscription is cancelled (rule 2.13)", method, exc_info=True)
            self._downstream_cancel()

    def _end_downstream(self, end: tuple) -> None:
        with self._lock:
            downstream, self._downstream = self._downstream, None
            self._downstream_done = True
        if downstream is None:
            return
        try:
            getattr(downstream, end[0])(*end[1:])
        except Exception:
            _log.error("the subscriber's %s raised (rule 2.13)", end[0], exc_info=True)


class PrefetchingIdentity:
    """Prefetches up to PREFETCH elements from upstream into a bounded buffer and serves
    downstream demand from it.

    It asks upstream for PREFETCH already inside on_subscribe (3.2 allows it) and asks for
    more as elements leave the buffer, REFILL at a time, so the buffer never holds more
    than PREFETCH. Every call in both directions is made by one drain loop guarded by a
    work-in-progress counter: a signal or a request just updates the state and runs the
    loop unless another thread is already in it, which then takes the update into account.
    An upstream error overtakes buffered elements (4.2: "immediately"); on_complete waits
    for them.
    """

    PREFETCH = 4
    REFILL = 2

    def __init__(self):
        self._lock = threading.Lock()
        self._wip = 0
        self._buffer: collections.deque = collections.deque()
        # upstream side
        self._upstream = None  # live upstream subscription
        self._upstream_seen = False
        self._prefetched = False
        self._consumed = 0  # elements passed downstream since the last refill
        self._upstream_end: tuple | None = None
        self._overflowed = False  # upstream sent beyond its demand: cancel it and fail downstream
        # downstream side
        self._downstream = None
        self._has_subscriber = False
        self._greeted = False  # on_subscribe sent downstream
        self._demand = 0
        self._rejection: ValueError | None = None
        self._downstream_gone = False  # cancelled, failed or ended

    # -- subscriber side ----------------------------------------------------------------------------

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        with self._lock:
            duplicate = self._upstream_seen
            if not duplicate:
                self._upstream_seen = True
                self._upstream = subscription
        if duplicate:
            subscription.cancel()  # 2.5
        else:
            self._drain()  # prefetches, from inside on_subscribe unless another thread is draining

    def on_next(self, item) -> None:
        _require(item, "item")
        with self._lock:
            if self._upstream_end is not None or self._downstream_gone:
                return  # after our cancel, what was still requested may arrive: dropped
            if len(self._buffer) >= self.PREFETCH:
                self._overflowed = True
                self._upstream_end = ("on_error", RuntimeError("upstream signalled more than requested (rule 1.1)"))
            else:
                self._buffer.append(item)
        self._drain()

    def on_error(self, error) -> None:
        _require(error, "error")
        self._upstream_ended(("on_error", error))

    def on_complete(self) -> None:
        self._upstream_ended(("on_complete",))

    def _upstream_ended(self, end: tuple) -> None:
        with self._lock:
            self._upstream = None  # 2.4: never called again
            if self._upstream_end is None:
                self._upstream_end = end
        self._drain()

    # -- publisher side ---------------------------------------------------------------------------

    def subscribe(self, subscriber) -> None:
        _require(subscriber, "subscriber")
        with self._lock:
            rejected = self._has_subscriber
            if not rejected:
                self._has_subscriber = True
                self._downstream = subscriber
        if rejected:
            _reject(subscriber, type(self).__name__)
        else:
            self._drain()

    def _downstream_request(self, n) -> None:
        with self._lock:
            if self._downstream_gone:
                return
            if isinstance(n, int) and n > 0:
                self._demand = min(self._demand + n, MAX_DEMAND)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
        self._drain()

    def _downstream_cancel(self) -> None:
        with self._lock:
            if self._downstream_gone:
                return
            self._downstream_gone = True
            self._downstream = None  # 3.13
            self._buffer.clear()
        self._drain()

    # -- the drain loop -------------------------------------------------------------------------------

    def _drain(self) -> None:
        with self._lock:
            self._wip += 1
            if self._wip > 1:
                return  # the thread in the loop will see what changed
        missed = 1
        while True:
            while (action := self._next_action()) is not None:
                self._perform(*action)
            del action
            with self._lock:
                self._wip -= missed
                missed = self._wip
                if missed == 0:
                    return

    def _next_action(self):
        """The next call to make, as (callee, method, args), or None; decided under the lock."""
        with self._lock:
            upstream = self._upstream
            if upstream is not None and (self._downstream_gone or self._overflowed):
                self._upstream = None
                return upstream, "cancel", ()
            if upstream is not None and not self._prefetched:
                self._prefetched = True
                return upstream, "request", (self.PREFETCH,)
            downstream = self._downstream
            if downstream is None:
                return None  # nobody yet, or gone: elements wait in the buffer, or were dropped
            if not self._greeted:
                self._greeted = True
                return downstream, "on_subscribe", (_DownstreamSubscription(self),)
            end = self._upstream_end
            if self._rejection is not None or (end is not None and end[0] == "on_error"):
                self._downstream, self._downstream_gone = None, True
                self._buffer.clear()
                if self._rejection is not None:
                    return downstream, "on_error", (self._rejection,)
                return downstream, end[0], end[1:]
            if upstream is not None and self._consumed >= self.REFILL:
                refill, self._consumed = self._consumed, 0
                return upstream, "request", (refill,)
            if self._buffer and self._demand > 0:
                self._demand -= 1
                self._consumed += 1
                return downstream, "on_next", (self._buffer.popleft(),)
            if end is not None and not self._buffer:
                self._downstream, self._downstream_gone = None, True
                return downstream, "on_complete", ()
            return None

    def _perform(self, callee, method: str, args: tuple) -> None:
        try:
            getattr(callee, method)(*args)
        except Exception:
            if callee is self._downstream:
                _log.error("the subscriber's %s raised; its subscription is cancelled (rule 2.13)", method,
                           exc_info=True)
                with self._lock:
                    self._downstream, self._downstream_gone = None, True
                    self._buffer.clear()
            else:
                _log.error("%s's %s raised", type(callee).__name__, method, exc_info=True)


class AsyncioIdentity:
    """Idiomatic asyncio: every call comes on the loop's thread, and signals for downstream wait
    in a deque that a `loop.call_soon` callback drains.

    It requests upstream exactly what downstream requests (demand made before upstream's
    on_subscribe waits for it), so whatever waits in the deque was requested. The non-obvious
    part is that nothing is signalled downstream from inside a call: upstream's signals and
    subscribe only queue, and the drain runs on a later turn of the loop. So a request that
    downstream makes inside on_next, passed at once to a synchronous upstream, only queues the
    next element (3.3), and downstream's signals never nest or overlap (1.3). cancel, which 3.5
    wants thread-safe, only marks the end and hands the upstream cancel to the loop with
    `call_soon_threadsafe`.
    """

    BATCH = 32  # signals per turn of the loop; the rest wait for the next turn

    def __init__(self):
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: collections.deque = collections.deque()  # (method, *args) for downstream, in order
        self._draining = False  # a drain is scheduled
        # upstream side
        self._upstream = None  # live upstream subscription; None before, after its end, after our cancel
        self._upstream_seen = False
        self._unasked = 0  # downstream demand made before upstream's on_subscribe
        self._outstanding = 0  # requested upstream and not yet received
        # downstream side
        self._has_subscriber = False
        self._downstream = None  # None before subscribe, and once cancelled, failed or ended (3.13)
        self._ended = False  # the end is queued for downstream, or it cancelled: nothing more goes to it

    # -- subscriber side (upstream signals) -----------------------------------------------------

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        if self._upstream_seen:
            subscription.cancel()  # 2.5
            return
        self._upstream_seen = True
        if self._ended:
            subscription.cancel()  # downstream is gone already: nothing will be asked for
            return
        self._upstream = subscription
        if self._unasked:
            self._outstanding, self._unasked = self._unasked, 0
            subscription.request(self._outstanding)

    def on_next(self, item) -> None:
        _require(item, "item")
        if self._ended:
            return  # requested before downstream cancelled (2.8): dropped
        if self._outstanding == 0:
            return self._fail(RuntimeError("upstream signalled more than requested (rule 1.1)"))
        self._outstanding -= 1
        self._send("on_next", item)

    def on_error(self, error) -> None:
        _require(error, "error")
        self._upstream_ended("on_error", error)

    def on_complete(self) -> None:
        self._upstream_ended("on_complete")

    def _upstream_ended(self, *end) -> None:
        self._upstream = None  # 2.4: never called again
        if not self._ended:
            self._ended = True
            self._send(*end)

    # -- publisher side ---------------------------------------------------------------------------

    def subscribe(self, subscriber) -> None:
        _require(subscriber, "subscriber")
        self._loop = loop = asyncio.get_running_loop()
        if self._has_subscriber:
            loop.call_soon(_reject, subscriber, type(self).__name__)
            return
        self._has_subscriber = True
        self._downstream = subscriber
        self._outbox.appendleft(("on_subscribe", _DownstreamSubscription(self)))  # before an early end
        self._schedule_drain()

    def _downstream_request(self, n) -> None:
        if self._ended:
            return  # 3.6
        if not (isinstance(n, int) and n > 0):
            return self._fail(_non_positive_request(n))
        n = min(n, MAX_DEMAND - self._unasked - self._outstanding)  # 3.17: capped
        if n <= 0:
            return
        if self._upstream is not None:
            self._outstanding += n
            self._upstream.request(n)
        elif not self._upstream_seen:
            self._unasked += n

    def _downstream_cancel(self) -> None:
        self._downstream = None  # nothing more reaches it, and it may go now (3.13)
        if not self._ended:  # later cancels, or one after the end was queued, are no-ops (3.7)
            self._ended = True
            self._loop.call_soon_threadsafe(self._cancel_upstream)

    def _fail(self, error: BaseException) -> None:
        """End downstream with `error`, after what is already queued for it, and cancel upstream."""
        self._ended = True
        self._send("on_error", error)
        self._cancel_upstream()

    def _cancel_upstream(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            upstream.cancel()

    # -- downstream signals -------------------------------------------------------------------------

    def _send(self, *signal) -> None:
        self._outbox.append(signal)
        if self._downstream is not None:
            self._schedule_drain()

    def _schedule_drain(self) -> None:
        if not self._draining:
            self._draining = True
            self._loop.call_soon(self._drain)

    def _drain(self) -> None:
        self._draining = False
        for _ in range(self.BATCH):
            downstream = self._downstream
            if downstream is None:
                return self._outbox.clear()  # it cancelled: what was still queued for it is dropped
            if not self._outbox:
                return
            method, *args = self._outbox.popleft()
            if method in ("on_complete", "on_error"):
                self._downstream = None  # its last signal
            try:
                getattr(downstream, method)(*args)
            except Exception:
                _log.warning("the subscriber's %s raised; its subscription counts as cancelled (rule 2.13)", method,
                             exc_info=True)
                self._downstream_cancel()
                return self._outbox.clear()
        if self._outbox:
            self._schedule_drain()

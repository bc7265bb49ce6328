"""Conformant publishers of range(n), each written the way a different kind of library is.

Every publisher here is cold and unicast (each subscriber gets its own 0..n-1) except
`ReplayMulticast`, which shares one source. They share nothing but the few helpers
below: each class owns its state and its way of running deliveries, because the
point of the zoo is the variety of those ways.

Rules every class keeps, and where it is easy to go wrong:

- signals are serial (1.3), including on_subscribe against a delivery started by a
  request made inside on_subscribe;
- a request made inside on_next never delivers from inside that on_next (3.3, depth 1);
- cancel only sets state (3.5), and drops the subscriber at once, so no thread, task or
  callback left behind keeps it alive (3.13);
- a subscriber that raises counts as cancelled (2.13), and the error is reported, not lost.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import queue
import threading

_log = logging.getLogger(__name__)

# 3.17: demand that reaches 2**63-1 counts as unbounded; capping it there keeps the arithmetic
# the same however often a subscriber asks for "everything".
MAX_DEMAND = 2**63 - 1

_END = object()  # a source has no further element


def _require_subscriber(subscriber) -> None:
    if subscriber is None:
        raise TypeError("subscribe(None): a subscriber is required (rule 1.9)")


def _is_positive_count(n) -> bool:
    return isinstance(n, int) and n > 0


def _non_positive_request(n) -> ValueError:
    return ValueError(f"request({n!r}) is illegal: the number of elements requested must be positive (rule 3.9)")


def _added_demand(demand: int, n: int) -> int:
    return min(demand + n, MAX_DEMAND)


def _call_subscriber(subscriber, method: str, *args) -> BaseException | None:
    """Call `subscriber.method(*args)`; the exception it raised, if any (2.13 makes that a cancel)."""
    try:
        getattr(subscriber, method)(*args)
    except Exception as exc:
        return exc
    return None


def _log_raising_subscriber(method: str, exc: BaseException) -> None:
    _log.error("the subscriber's %s raised; its subscription is cancelled (rule 2.13)", method, exc_info=exc)


# -- 1. synchronous, trampolined -----------------------------------------------------------------


class SyncTrampolined:
    """Synchronous: every signal is delivered inside request, on the caller's thread.

    The non-obvious part is the trampoline: a request made from inside on_subscribe or
    on_next only adds demand, and the loop already running further up the stack delivers
    it, so request -> on_next -> request never nests (3.3, depth 1).
    """

    def __init__(self, n: int, *, fail_with: BaseException | None = None):
        self.n = n
        self.fail_with = fail_with  # signalled after the n elements instead of on_complete

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        _TrampolinedSubscription(subscriber, self.n, self.fail_with).start()


class SyncFailed(SyncTrampolined):
    """A synchronous publisher whose source is broken: on_subscribe, then on_error, demand or not."""

    def __init__(self):
        super().__init__(0, fail_with=RuntimeError("the source is unavailable"))


class _TrampolinedSubscription:
    def __init__(self, subscriber, n: int, fail_with: BaseException | None):
        self._subscriber = subscriber
        self._n = n
        self._fail_with = fail_with
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None  # a 3.9 error waiting for the loop to signal it
        self._looping = False
        self._done = False  # cancelled or terminated: request and cancel are no-ops (1.6, 3.6, 3.7)

    def start(self) -> None:
        self._looping = True  # on_subscribe comes first and alone: what it requests waits for the loop
        try:
            self._call("on_subscribe", self)
        finally:
            self._looping = False
        self._loop()

    def request(self, n) -> None:
        if self._done:
            return
        if _is_positive_count(n):
            self._demand = _added_demand(self._demand, n)
        elif self._rejection is None:
            self._rejection = _non_positive_request(n)
        self._loop()

    def cancel(self) -> None:
        # Plain assignments: safe from any thread, and the loop reads them before every signal.
        self._done = True
        self._subscriber = None

    def _loop(self) -> None:
        if self._looping:
            return
        self._looping = True
        try:
            while not self._done:
                if self._rejection is not None:
                    self._finish("on_error", self._rejection)
                elif self._sent == self._n:
                    self._finish(*(("on_error", self._fail_with) if self._fail_with else ("on_complete",)))
                elif self._demand > 0:
                    self._demand -= 1
                    self._sent += 1
                    self._call("on_next", self._sent - 1)
                else:
                    return
        finally:
            self._looping = False

    def _call(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            _log_raising_subscriber(method, exc)

    def _finish(self, method: str, *args) -> None:
        subscriber, self._subscriber, self._done = self._subscriber, None, True
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            _log_raising_subscriber(method, exc)


# -- 2. a new thread per request -----------------------------------------------------------------


class ThreadPerRequest:
    """Each request starts a `threading.Thread` that delivers what has been demanded.

    The non-obvious part: the threads take turns on one lock held for every signal, and
    subscribe() holds it for on_subscribe too, so a thread started by a request made inside
    on_subscribe or on_next waits until that signal has returned (1.3). Whichever thread
    gets the lock delivers everything demanded so far; later ones may find nothing to do.
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _ThreadPerRequestSubscription(subscriber, self.n)
        with subscription.signalling:
            subscription.deliver("on_subscribe", subscription)
        if self.n == 0:
            subscription.start_delivery()  # an empty stream completes without any request (1.5)


class _ThreadPerRequestSubscription:
    def __init__(self, subscriber, n: int):
        self.signalling = threading.Lock()  # held for every signal: they are serial
        self._state = threading.Lock()  # guards the fields below; never held during a signal
        self._subscriber = subscriber
        self._n = n
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False

    def request(self, n) -> None:
        with self._state:
            if self._done:
                return
            if _is_positive_count(n):
                self._demand = _added_demand(self._demand, n)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
        self.start_delivery()

    def cancel(self) -> None:
        with self._state:
            self._done = True
            self._subscriber = None

    def start_delivery(self) -> None:
        threading.Thread(target=self._deliver_demanded, name="thread-per-request", daemon=True).start()

    def deliver(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            _log_raising_subscriber(method, exc)

    def _deliver_demanded(self) -> None:
        with self.signalling:
            while (step := self._next_step()) is not None:
                subscriber, method, args = step
                if (exc := _call_subscriber(subscriber, method, *args)) is not None:
                    self.cancel()
                    _log_raising_subscriber(method, exc)

    def _next_step(self):
        """(subscriber, method, args) of the next signal, or None when there is nothing to do."""
        with self._state:
            subscriber = self._subscriber
            if self._done or subscriber is None:
                return None
            if self._rejection is not None or self._sent == self._n:
                self._done, self._subscriber = True, None
                if self._rejection is not None:
                    return subscriber, "on_error", (self._rejection,)
                return subscriber, "on_complete", ()
            if self._demand == 0:
                return None
            self._demand -= 1
            self._sent += 1
            return subscriber, "on_next", (self._sent - 1,)


# -- 3. a private worker thread fed by a queue ---------------------------------------------------


class QueueWorker:
    """One private worker thread per subscription, fed by a `queue.Queue` of requests.

    Only the worker touches demand and position, so there is no lock: request and cancel
    just post to the queue, and the worker idles in get() between requests. The
    non-obvious part: cancel also drops the subscriber itself, at once, so an idle worker
    holds nothing that keeps it alive (3.13); on_subscribe comes from the worker too.
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        _QueueWorkerSubscription(subscriber, self.n).start()


_CANCELLED = object()  # posted by cancel: wakes an idle worker so that it ends


class _QueueWorkerSubscription:
    def __init__(self, subscriber, n: int):
        self._subscriber = subscriber
        self._n = n
        self._inbox: queue.Queue = queue.Queue()

    def start(self) -> None:
        threading.Thread(target=self._work, name="queue-worker", daemon=True).start()

    def request(self, n) -> None:
        if self._subscriber is not None:  # after cancel or the end nobody reads the queue (3.6)
            self._inbox.put(n)

    def cancel(self) -> None:
        self._subscriber = None
        self._inbox.put(_CANCELLED)

    def _work(self) -> None:
        if not self._signal("on_subscribe", self):
            return
        demand = sent = 0
        while True:
            # Take in everything queued before the next signal, so that a cancel or a bad request
            # is seen at once; block only when there is nothing to deliver.
            try:
                command = self._inbox.get(block=demand == 0 and sent < self._n)
            except queue.Empty:
                command = None
            if command is _CANCELLED:
                return
            if command is not None:
                if not _is_positive_count(command):
                    return self._finish("on_error", _non_positive_request(command))
                demand = _added_demand(demand, command)
                continue
            if sent == self._n:
                return self._finish("on_complete")
            demand -= 1
            if not self._signal("on_next", sent):
                return
            sent += 1

    def _signal(self, method: str, *args) -> bool:
        """Whether the subscriber is still there and took the signal."""
        subscriber = self._subscriber
        if subscriber is None:
            return False
        if (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self._subscriber = None
            _log_raising_subscriber(method, exc)
            return False
        return True

    def _finish(self, method: str, *args) -> None:
        subscriber, self._subscriber = self._subscriber, None
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            _log_raising_subscriber(method, exc)


# -- 4. a threading.Timer after each request -----------------------------------------------------


class TimerDelayed:
    """A `threading.Timer` fires a few milliseconds after a request and delivers the demand.

    At most one timer is armed or running per subscription (`_scheduled`, under the lock);
    a request that finds one only adds demand. on_subscribe runs in subscribe() with that
    flag already set, so nothing it requests can be delivered before it returns (1.3).
    """

    def __init__(self, n: int, *, delay_s: float = 0.002):
        self.n = n
        self.delay_s = delay_s

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _TimerSubscription(subscriber, self.n, self.delay_s)
        subscription.signal("on_subscribe", subscription)
        subscription.arm()  # serves what on_subscribe asked for, or completes an empty stream


class _TimerSubscription:
    def __init__(self, subscriber, n: int, delay_s: float):
        self._lock = threading.Lock()  # never held during a signal, so cancel is always prompt
        self._subscriber = subscriber
        self._n = n
        self._delay_s = delay_s
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False
        self._scheduled = True  # until subscribe() arms the first timer
        self._timer: threading.Timer | None = None

    def request(self, n) -> None:
        with self._lock:
            if self._done:
                return
            if _is_positive_count(n):
                self._demand = _added_demand(self._demand, n)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
            if self._scheduled:
                return
            self._scheduled = True
        self.arm()

    def cancel(self) -> None:
        with self._lock:
            self._done = True
            self._subscriber = None
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()  # only sets an event: the timer's thread then ends without firing

    def arm(self) -> None:
        timer = threading.Timer(self._delay_s, self._fire)
        timer.daemon = True
        with self._lock:
            if self._done:
                return
            self._timer = timer
        timer.start()

    def signal(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            _log_raising_subscriber(method, exc)

    def _fire(self) -> None:
        while True:
            with self._lock:
                subscriber = self._subscriber
                if self._done or subscriber is None:
                    return
                if self._rejection is not None or self._sent == self._n:
                    self._done, self._subscriber, self._timer = True, None, None
                    method, args = ("on_error", (self._rejection,)) if self._rejection else ("on_complete", ())
                elif self._demand > 0:
                    self._demand -= 1
                    self._sent += 1
                    method, args = "on_next", (self._sent - 1,)
                else:
                    self._scheduled, self._timer = False, None
                    return
            if (exc := _call_subscriber(subscriber, method, *args)) is not None:
                self.cancel()
                _log_raising_subscriber(method, exc)
            del subscriber  # not kept while the lock is awaited: cancel may be dropping it


# -- 5. its own ThreadPoolExecutor ---------------------------------------------------------------

# Shared by every PooledExecutor, as a library's module-level pool would be.
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="conformant-pool")


class PooledExecutor:
    """Deliveries run as tasks on a module-level `ThreadPoolExecutor`.

    At most one delivery task per subscription is queued or running (`_in_flight`), which
    keeps its signals serial although the pool has several threads; a task delivers at
    most `batch` signals and then resubmits itself, so one stream cannot hog a worker.
    on_subscribe is the first task's first signal.
    """

    def __init__(self, n: int, *, batch: int = 16, fail_with: BaseException | None = None):
        self.n = n
        self.batch = batch
        self.fail_with = fail_with

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        _PooledSubscription(subscriber, self.n, self.batch, self.fail_with).start()


class PooledFailed(PooledExecutor):
    """The pooled publisher with a broken source: on_subscribe, then on_error, from the pool."""

    def __init__(self):
        super().__init__(0, fail_with=RuntimeError("the source is unavailable"))


class _PooledSubscription:
    def __init__(self, subscriber, n: int, batch: int, fail_with: BaseException | None):
        self._lock = threading.Lock()
        self._subscriber = subscriber
        self._n = n
        self._batch = batch
        self._fail_with = fail_with
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False
        self._subscribed = False  # touched only by the task in flight
        self._in_flight = True  # the first task, submitted by start()

    def start(self) -> None:
        _POOL.submit(self._run)

    def request(self, n) -> None:
        with self._lock:
            if self._done:
                return
            if _is_positive_count(n):
                self._demand = _added_demand(self._demand, n)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
            if self._in_flight:
                return
            self._in_flight = True
        _POOL.submit(self._run)

    def cancel(self) -> None:
        with self._lock:
            self._done = True
            self._subscriber = None

    def _run(self) -> None:
        if not self._subscribed:
            self._subscribed = True
            if (subscriber := self._subscriber) is not None:
                self._report(_call_subscriber(subscriber, "on_subscribe", self), "on_subscribe")
            del subscriber
        for _ in range(self._batch):
            step = self._next_step()
            if step is None:
                return
            subscriber, method, args = step
            self._report(_call_subscriber(subscriber, method, *args), method)
            del subscriber, step
        _POOL.submit(self._run)  # still in flight: the next task continues where this one stopped

    def _next_step(self):
        with self._lock:
            subscriber = self._subscriber
            if self._done or subscriber is None:
                return None
            if self._rejection is not None or self._sent == self._n:
                self._done, self._subscriber = True, None
                if self._rejection is not None:
                    return subscriber, "on_error", (self._rejection,)
                if self._fail_with is not None:
                    return subscriber, "on_error", (self._fail_with,)
                return subscriber, "on_complete", ()
            if self._demand == 0:
                self._in_flight = False
                return None
            self._demand -= 1
            self._sent += 1
            return subscriber, "on_next", (self._sent - 1,)

    def _report(self, exc: BaseException | None, method: str) -> None:
        if exc is not None:
            self.cancel()
            _log_raising_subscriber(method, exc)


# -- 6. idiomatic asyncio on the caller's running loop ----------------------------------------


class AsyncioNative:
    """Idiomatic asyncio: subscribe and request schedule work on the running loop.

    Like most asyncio code it assumes that every call comes on the loop's thread while the
    loop runs: it calls `asyncio.get_running_loop()`, `loop.call_soon()` and
    `asyncio.create_task()` directly. cancel is the exception, because 3.5 wants it callable
    from any thread: it only sets attributes, which the delivery task reads before each signal.
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        loop = asyncio.get_running_loop()
        loop.call_soon(_AsyncioSubscription(subscriber, self.n).start)


class _AsyncioSubscription:
    def __init__(self, subscriber, n: int):
        self._subscriber = subscriber
        self._n = n
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False
        self._delivery: asyncio.Task | None = None  # at most one; kept so it is not collected while pending

    def start(self) -> None:
        self._signal("on_subscribe", self)
        self._ensure_delivery()  # an empty stream completes without demand

    def request(self, n) -> None:
        if self._done:
            return
        if _is_positive_count(n):
            self._demand = _added_demand(self._demand, n)
        elif self._rejection is None:
            self._rejection = _non_positive_request(n)
        self._ensure_delivery()

    def cancel(self) -> None:
        self._done = True
        self._subscriber = None

    def _ensure_delivery(self) -> None:
        if self._delivery is None and not self._done:
            self._delivery = asyncio.create_task(self._deliver())

    async def _deliver(self) -> None:
        try:
            while not self._done:
                if self._rejection is not None:
                    self._finish("on_error", self._rejection)
                elif self._sent == self._n:
                    self._finish("on_complete")
                elif self._demand > 0:
                    self._demand -= 1
                    self._sent += 1
                    self._signal("on_next", self._sent - 1)
                else:
                    return
                await asyncio.sleep(0)  # one signal per turn of the loop: other tasks run in between
        finally:
            self._delivery = None

    def _signal(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            self._report(method, exc)

    def _finish(self, method: str, *args) -> None:
        subscriber, self._subscriber, self._done = self._subscriber, None, True
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self._report(method, exc)

    @staticmethod
    def _report(method: str, exc: BaseException) -> None:
        asyncio.get_running_loop().call_exception_handler({
            "message": f"the subscriber's {method} raised; its subscription is cancelled (rule 2.13)",
            "exception": exc,
        })


# -- 7. asyncio on a loop of its own, in its own thread -----------------------------------------


class _BackgroundLoop:
    """One event loop running forever in a daemon thread, started on first use."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="conformant-asyncio-loop", daemon=True).start()
                cls._loop = loop
            return cls._loop


class AsyncioOwnLoop:
    """asyncio on its own event loop in its own daemon thread, reached from any thread.

    subscribe submits a coroutine with `asyncio.run_coroutine_threadsafe`; request posts
    with `loop.call_soon_threadsafe`, so demand and position are only ever touched on the
    loop's thread and need no lock. Because requests made inside on_next arrive as later
    callbacks, deliveries never nest (3.3).
    """

    def __init__(self, n: int, *, fail_with: BaseException | None = None):
        self.n = n
        self.fail_with = fail_with

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _OwnLoopSubscription(subscriber, self.n, self.fail_with, _BackgroundLoop.get())
        asyncio.run_coroutine_threadsafe(subscription.start(), subscription.loop)


class AsyncioOwnLoopFailed(AsyncioOwnLoop):
    """The own-loop publisher with a broken source: on_subscribe, then on_error, on the loop."""

    def __init__(self):
        super().__init__(0, fail_with=RuntimeError("the source is unavailable"))


class _OwnLoopSubscription:
    BATCH = 32  # signals per loop callback before yielding to other callbacks

    def __init__(self, subscriber, n: int, fail_with: BaseException | None, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self._subscriber = subscriber
        self._n = n
        self._fail_with = fail_with
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False

    async def start(self) -> None:
        self._signal("on_subscribe", self)
        self._drain()

    def request(self, n) -> None:
        if not self._done:
            self.loop.call_soon_threadsafe(self._add_demand, n)

    def cancel(self) -> None:
        # Immediate and thread-safe: the loop sees the flag before its next signal, and the
        # subscriber is unreachable from here on, whatever callbacks are still queued.
        self._done = True
        self._subscriber = None

    def _add_demand(self, n) -> None:
        if self._done:
            return
        if _is_positive_count(n):
            self._demand = _added_demand(self._demand, n)
        elif self._rejection is None:
            self._rejection = _non_positive_request(n)
        self._drain()

    def _drain(self) -> None:
        for _ in range(self.BATCH):
            if self._done:
                return
            if self._rejection is not None:
                return self._finish("on_error", self._rejection)
            if self._sent == self._n:
                return self._finish(*(("on_error", self._fail_with) if self._fail_with else ("on_complete",)))
            if self._demand == 0:
                return
            self._demand -= 1
            self._sent += 1
            self._signal("on_next", self._sent - 1)
        self.loop.call_soon(self._drain)

    def _signal(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            self._report(method, exc)

    def _finish(self, method: str, *args) -> None:
        subscriber, self._subscriber, self._done = self._subscriber, None, True
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self._report(method, exc)

    def _report(self, method: str, exc: BaseException) -> None:
        self.loop.call_exception_handler({
            "message": f"the subscriber's {method} raised; its subscription is cancelled (rule 2.13)",
            "exception": exc,
        })


# -- 8. multicast with replay ----------------------------------------------------------------------


class ReplayMulticast:
    """Multicast with replay: one shared source, computed once, read by every subscriber.

    The source is advanced by whichever subscriber first needs the next element (under
    the publisher's lock) and the element is kept, so each subscriber reads the shared
    history at its own pace and within its own demand, and a late subscriber still gets
    all n. Deliveries run on the requesting thread; a per-subscription drain flag with a
    "missed" mark lets requests come from any thread without two drains at once.
    """

    def __init__(self, n: int):
        self._source = iter(range(n))  # stands for an expensive computation, done once for everybody
        self._history: list = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        _ReplaySubscription(self, subscriber).start()

    def element(self, index: int):
        """The element at `index`, advancing the shared source if needed; _END past its end."""
        with self._lock:
            while len(self._history) <= index:
                item = next(self._source, _END)
                if item is _END:
                    return _END
                self._history.append(item)
            return self._history[index]


class _ReplaySubscription:
    def __init__(self, publisher: ReplayMulticast, subscriber):
        self._publisher = publisher
        self._subscriber = subscriber
        self._lock = threading.Lock()
        self._position = 0  # touched only by the drainer
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False
        self._draining = True  # start() drains first, after on_subscribe
        self._missed = False

    def start(self) -> None:
        self._signal("on_subscribe", self)
        self._drain_loop()

    def request(self, n) -> None:
        with self._lock:
            if self._done:
                return
            if _is_positive_count(n):
                self._demand = _added_demand(self._demand, n)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
            if self._draining:
                self._missed = True
                return
            self._draining = True
        self._drain_loop()

    def cancel(self) -> None:
        with self._lock:
            self._done = True
            self._subscriber = None

    def _drain_loop(self) -> None:
        while True:
            self._deliver_available()
            with self._lock:
                if not self._missed:
                    self._draining = False
                    return
                self._missed = False

    def _deliver_available(self) -> None:
        while True:
            with self._lock:
                if self._done:
                    return
                rejection, has_demand = self._rejection, self._demand > 0
            if rejection is not None:
                return self._finish("on_error", rejection)
            item = self._publisher.element(self._position)
            if item is _END:  # known as soon as the last element is out: complete without more demand
                return self._finish("on_complete")
            if not has_demand:
                return
            with self._lock:
                self._demand -= 1  # only the drainer takes demand away, so it is still there
            self._position += 1
            self._signal("on_next", item)

    def _signal(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            _log_raising_subscriber(method, exc)

    def _finish(self, method: str, *args) -> None:
        with self._lock:
            subscriber, self._subscriber, self._done = self._subscriber, None, True
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            _log_raising_subscriber(method, exc)


# -- 9. bounded ------------------------------------------------------------------------------


class Bounded:
    """A publisher over a fixed-capacity buffer: it can hold at most CAPACITY elements.

    Each subscriber drains its own snapshot of the buffer synchronously, inside request,
    with a reentrancy flag as the trampoline. Asked for more than it can hold, it refuses
    at construction, which is what `max_elements` tells the kit.
    """

    CAPACITY = 8

    def __init__(self, n: int):
        if n > self.CAPACITY:
            raise ValueError(f"Bounded holds at most {self.CAPACITY} elements, not {n}")
        self._buffer = tuple(range(n))

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        _BufferSubscription(subscriber, self._buffer).start()


class _BufferSubscription:
    def __init__(self, subscriber, buffer: tuple):
        self._subscriber = subscriber
        self._remaining = collections.deque(buffer)
        self._credit = 0
        self._rejection: ValueError | None = None
        self._busy = True  # start() signals on_subscribe before anything can be delivered
        self._done = False

    def start(self) -> None:
        try:
            self._signal("on_subscribe", self)
        finally:
            self._busy = False
        self._emit()

    def request(self, n) -> None:
        if self._done:
            return
        if _is_positive_count(n):
            self._credit = _added_demand(self._credit, n)
        elif self._rejection is None:
            self._rejection = _non_positive_request(n)
        self._emit()

    def cancel(self) -> None:
        self._done = True
        self._subscriber = None

    def _emit(self) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            while not self._done:
                if self._rejection is not None:
                    self._finish("on_error", self._rejection)
                elif not self._remaining:
                    self._finish("on_complete")
                elif self._credit > 0:
                    self._credit -= 1
                    self._signal("on_next", self._remaining.popleft())
                else:
                    break
        finally:
            self._busy = False

    def _signal(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            self.cancel()
            _log_raising_subscriber(method, exc)

    def _finish(self, method: str, *args) -> None:
        subscriber, self._subscriber, self._done = self._subscriber, None, True
        if subscriber is not None and (exc := _call_subscriber(subscriber, method, *args)) is not None:
            _log_raising_subscriber(method, exc)


# -- 10. synchronous, re-raising the subscriber's exception ---------------------------------------


class ReRaising:
    """Synchronous, and a subscriber's exception propagates to whoever called into the publisher.

    This is what a plain synchronous library does: on_next runs inside request, so its
    exception surfaces from request. Before letting it through, the subscription is marked
    cancelled (2.13: it "MUST be considered as cancelled, and the caller MUST raise this
    error condition in a fashion that is adequate for the runtime environment"); the
    trampoline's flag is reset on the way out, so nothing is left half-done.
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _ReRaisingSubscription(subscriber, self.n)
        subscription.begin()


class _ReRaisingSubscription:
    def __init__(self, subscriber, n: int):
        self._subscriber = subscriber
        self._n = n
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._in_loop = False
        self._done = False

    def begin(self) -> None:
        self._in_loop = True
        try:
            self._call("on_subscribe", self)
        finally:
            self._in_loop = False
        self._run()

    def request(self, n) -> None:
        if self._done:
            return
        if _is_positive_count(n):
            self._demand = _added_demand(self._demand, n)
        elif self._rejection is None:
            self._rejection = _non_positive_request(n)
        self._run()

    def cancel(self) -> None:
        self._done = True
        self._subscriber = None

    def _run(self) -> None:
        if self._in_loop:
            return
        self._in_loop = True
        try:
            while not self._done:
                if self._rejection is not None:
                    self._end("on_error", self._rejection)
                elif self._sent == self._n:
                    self._end("on_complete")
                elif self._demand > 0:
                    self._demand -= 1
                    self._sent += 1
                    self._call("on_next", self._sent - 1)
                else:
                    return
        finally:
            self._in_loop = False

    def _call(self, method: str, *args) -> None:
        subscriber = self._subscriber
        if subscriber is None:
            return
        try:
            getattr(subscriber, method)(*args)
        except Exception:
            self.cancel()  # first: the subscription is over, whatever the caller does with the error
            raise

    def _end(self, method: str, *args) -> None:
        subscriber, self._subscriber, self._done = self._subscriber, None, True
        if subscriber is not None:
            getattr(subscriber, method)(*args)


# -- 11. a drain loop with a work-in-progress counter; logs a raising subscriber ------------------


class LoggingDrainLoop:
    """A drain loop guarded by a work-in-progress counter, as RxJava-style libraries write it.

    Whoever raises the counter from zero drains, on its own thread; everyone else just
    adds to it and leaves, and the drainer loops until the counter comes back to zero, so
    requests may come from any thread. A subscriber that raises is logged with
    `logging.getLogger(__name__).warning(..., exc_info=True)` and treated as cancelled.
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        _WipSubscription(subscriber, self.n).start()


class _WipSubscription:
    def __init__(self, subscriber, n: int):
        self._lock = threading.Lock()
        self._subscriber = subscriber
        self._n = n
        self._sent = 0
        self._demand = 0
        self._rejection: ValueError | None = None
        self._done = False
        self._wip = 1  # start() holds the loop while it signals on_subscribe

    def start(self) -> None:
        self._signal("on_subscribe", self)
        self._drain(missed=1)

    def request(self, n) -> None:
        with self._lock:
            if self._done:
                return
            if _is_positive_count(n):
                self._demand = _added_demand(self._demand, n)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
            self._wip += 1
            if self._wip > 1:
                return
        self._drain(missed=1)

    def cancel(self) -> None:
        with self._lock:
            self._done = True
            self._subscriber = None

    def _drain(self, missed: int) -> None:
        while True:
            self._emit_what_is_due()
            with self._lock:
                self._wip -= missed
                missed = self._wip
                if missed == 0:
                    return

    def _emit_what_is_due(self) -> None:
        while True:
            with self._lock:
                if self._done:
                    return
                if self._rejection is not None or self._sent == self._n:
                    subscriber, self._subscriber, self._done = self._subscriber, None, True
                    method, args = ("on_error", (self._rejection,)) if self._rejection else ("on_complete", ())
                elif self._demand > 0:
                    self._demand -= 1
                    self._sent += 1
                    subscriber, method, args = self._subscriber, "on_next", (self._sent - 1,)
                else:
                    return
            self._call(subscriber, method, *args)

    def _signal(self, method: str, *args) -> None:
        self._call(self._subscriber, method, *args)

    def _call(self, subscriber, method: str, *args) -> None:
        if subscriber is None:
            return
        try:
            getattr(subscriber, method)(*args)
        except Exception:
            self.cancel()
            # The subscriber is named, not passed: a kept log record must not keep it alive (3.13).
            logging.getLogger(__name__).warning("%s raised from %s; its subscription is cancelled (rule 2.13)",
                                                type(subscriber).__name__, method, exc_info=True)


# -- 12. the empty stream --------------------------------------------------------------------------


class Empty:
    """The empty stream: on_subscribe, then on_complete at once, with or without demand.

    The subscription is live only while on_subscribe runs: a request(n <= 0) made there
    still earns its on_error (3.9), in place of on_complete, and a cancel made there means
    no on_complete follows.
    """

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _EmptySubscription()
        failure = _call_subscriber(subscriber, "on_subscribe", subscription)
        if failure is not None:
            subscription.cancel()
            _log_raising_subscriber("on_subscribe", failure)
        if subscription.live:
            subscription.live = False
            method, args = ("on_error", (subscription.rejection,)) if subscription.rejection else ("on_complete", ())
            if (exc := _call_subscriber(subscriber, method, *args)) is not None:
                _log_raising_subscriber(method, exc)


class _EmptySubscription:
    def __init__(self):
        self.live = True
        self.rejection: ValueError | None = None

    def request(self, n) -> None:
        if self.live and not _is_positive_count(n) and self.rejection is None:
            self.rejection = _non_positive_request(n)

    def cancel(self) -> None:
        self.live = False

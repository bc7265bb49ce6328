"""Conformant subscribers, each in a different real-world style.

All of them are single-use: the first subscription they are given is theirs, and any
later on_subscribe is cancelled at once (2.5). Each takes an optional `observer`, told
when a signal has been processed (`on_subscribe_processed()`, `on_next_processed(item)`,
`on_error_processed(error)`, `on_complete_processed()`); elements ignored after the
subscriber's own cancel are not processed, so they are not reported.
"""

from __future__ import annotations

import asyncio
import queue
import threading


def _require(value, what: str) -> None:
    if value is None:
        raise TypeError(f"{what} must not be None (rule 2.13)")


class Batching:
    """Batched demand, the way 2.1 recommends: `capacity` up front, refilled by half.

    It asks for `capacity` elements in on_subscribe and, each time half of that has been
    consumed, asks for that half again, so at most `capacity` elements are ever
    outstanding. Calls to the subscription come last in each signal (2.1). With `take`,
    it cancels after that many elements, with demand still pending, and ignores whatever
    still arrives (2.8).
    """

    def __init__(self, capacity: int = 16, *, take: int | None = None, observer=None):
        if capacity < 2:
            raise ValueError(f"capacity must be at least 2, got {capacity}")
        self.capacity = capacity
        self.take = take
        self.observer = observer
        self.items: list = []
        self.error: BaseException | None = None
        self.completed = False
        self._subscription = None
        self._consumed_since_refill = 0
        self._done = False  # cancelled by itself or terminated: no more processing, no more calls

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        if self._subscription is not None:
            subscription.cancel()  # single-use: it already has (or had) a subscription (2.5)
            return
        self._subscription = subscription
        if self.observer is not None:
            self.observer.on_subscribe_processed()
        subscription.request(self.capacity)

    def on_next(self, item) -> None:
        _require(item, "item")
        if self._done:
            return  # arrived after its own cancel (2.8): not processed
        self.items.append(item)
        self._consumed_since_refill += 1
        if self.observer is not None:
            self.observer.on_next_processed(item)
        if self.take is not None and len(self.items) >= self.take:
            self._done = True
            self._subscription.cancel()
        elif self._consumed_since_refill >= self.capacity // 2:
            refill, self._consumed_since_refill = self._consumed_since_refill, 0
            self._subscription.request(refill)

    def on_error(self, error) -> None:
        _require(error, "error")
        self._done = True
        self.error = error
        if self.observer is not None:
            self.observer.on_error_processed(error)

    def on_complete(self) -> None:
        self._done = True
        self.completed = True
        if self.observer is not None:
            self.observer.on_complete_processed()


class OneByOne:
    """Stop-and-wait: one element requested at a time, the next asked for after each arrives.

    Correct, if slow: 2.1 only RECOMMENDS larger batches.
    """

    def __init__(self, *, observer=None):
        self.observer = observer
        self.items: list = []
        self.error: BaseException | None = None
        self.completed = False
        self._subscription = None
        self._terminated = False

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        if self._subscription is not None:
            subscription.cancel()
            return
        self._subscription = subscription
        if self.observer is not None:
            self.observer.on_subscribe_processed()
        subscription.request(1)

    def on_next(self, item) -> None:
        _require(item, "item")
        if self._terminated:
            return
        self.items.append(item)
        if self.observer is not None:
            self.observer.on_next_processed(item)
        self._subscription.request(1)

    def on_error(self, error) -> None:
        _require(error, "error")
        self._terminated = True
        self.error = error
        if self.observer is not None:
            self.observer.on_error_processed(error)

    def on_complete(self) -> None:
        self._terminated = True
        self.completed = True
        if self.observer is not None:
            self.observer.on_complete_processed()


class WorkerThread:
    """Processing on a worker thread of its own: the signal methods only hand signals over.

    on_next puts the element on a `queue.SimpleQueue`; the worker processes elements in
    order and, after each, requests one more, so `window` elements stay requested. The
    non-obvious part is `_calls`, a lock held around every call to the subscription and
    taken by on_complete/on_error to mark the end: a request from the worker either
    happens entirely before the end arrives or not at all (2.4), and calls from
    on_subscribe and from the worker never overlap (2.7). It is reentrant because a
    synchronous publisher may signal on_complete from inside the worker's own request.
    """

    def __init__(self, window: int = 4, *, process=None, observer=None):
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.window = window
        self.process = process or (lambda item: None)
        self.observer = observer
        self.items: list = []
        self.error: BaseException | None = None
        self.completed = False
        self.finished = threading.Event()  # set once the worker has processed the end of the stream
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._calls = threading.RLock()
        self._subscription = None
        self._ended = False

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        with self._calls:
            if self._subscription is not None:
                subscription.cancel()
                return
            self._subscription = subscription
        self._inbox.put(("on_subscribe", None))
        threading.Thread(target=self._work, name="worker-thread-subscriber", daemon=True).start()
        self._request(self.window)

    def on_next(self, item) -> None:
        _require(item, "item")
        self._inbox.put(("on_next", item))

    def on_error(self, error) -> None:
        _require(error, "error")
        self._end()
        self._inbox.put(("on_error", error))

    def on_complete(self) -> None:
        self._end()
        self._inbox.put(("on_complete", None))

    def _end(self) -> None:
        with self._calls:  # waits for a request the worker is making right now
            self._ended = True
            self._subscription = None  # 2.4: never to be called again

    def _request(self, n: int) -> None:
        with self._calls:
            if not self._ended and self._subscription is not None:
                self._subscription.request(n)

    def _work(self) -> None:
        while True:
            kind, value = self._inbox.get()
            if kind == "on_subscribe":
                self._report("on_subscribe_processed")
            elif kind == "on_next":
                self.process(value)
                self.items.append(value)
                self._report("on_next_processed", value)
                self._request(1)
            else:
                if kind == "on_error":
                    self.error = value
                    self._report("on_error_processed", value)
                else:
                    self.completed = True
                    self._report("on_complete_processed")
                self.finished.set()
                return

    def _report(self, method: str, *args) -> None:
        if self.observer is not None:
            getattr(self.observer, method)(*args)


class AsyncioBatching:
    """Idiomatic asyncio: the signal methods put each signal on an `asyncio.Queue`, and a task
    created in on_subscribe processes them, in order, on the same loop.

    It asks for `capacity` in on_subscribe; the task asks for half of that again each time it has
    processed that half. The non-obvious part is that the task's request comes one or more turns of
    the loop after the on_next that made room, so on_complete or on_error may have arrived in
    between: they set `_ended` at once, and the task looks at it right before each request, with
    no `await` in between, so it never requests after the end (2.4). Everything runs on the loop's
    thread, which is what keeps its calls serial (2.7). If its task is cancelled, the subscription
    is no longer needed: it cancels it (2.6) and ignores whatever still arrives (2.8).
    """

    def __init__(self, capacity: int = 8, *, observer=None):
        if capacity < 2:
            raise ValueError(f"capacity must be at least 2, got {capacity}")
        self.capacity = capacity
        self.observer = observer
        self.items: list = []
        self.error: BaseException | None = None
        self.completed = False
        self.task: asyncio.Task | None = None  # the processing task; done once the end is processed
        self._inbox: asyncio.Queue = asyncio.Queue()  # unbounded, but never holds more than was requested
        self._subscription = None
        self._ended = False  # on_complete/on_error received: the subscription is over (2.4)
        self._cancelled = False  # cancelled by itself: no more processing, no more calls

    def on_subscribe(self, subscription) -> None:
        _require(subscription, "subscription")
        if self._subscription is not None:
            subscription.cancel()  # single-use (2.5)
            return
        self._subscription = subscription
        self._inbox.put_nowait(("on_subscribe", None))
        self.task = asyncio.get_running_loop().create_task(self._process())
        subscription.request(self.capacity)

    def on_next(self, item) -> None:
        _require(item, "item")
        if not self._cancelled:  # after its own cancel (2.8): not processed
            self._inbox.put_nowait(("on_next", item))

    def on_error(self, error) -> None:
        _require(error, "error")
        self._end("on_error", error)

    def on_complete(self) -> None:
        self._end("on_complete", None)

    def _end(self, kind: str, value) -> None:
        self._ended = True  # no call on the subscription from here on, not even from the task (2.3, 2.4)
        if not self._cancelled:
            self._inbox.put_nowait((kind, value))

    async def _process(self) -> None:
        half = self.capacity // 2
        processed = 0  # elements processed since the last request
        try:
            while True:
                kind, value = await self._inbox.get()
                if kind == "on_subscribe":
                    self._report("on_subscribe_processed")
                elif kind == "on_next":
                    self.items.append(value)
                    self._report("on_next_processed", value)
                    processed += 1
                    if processed == half:
                        processed = 0
                        if not self._ended:
                            self._subscription.request(half)
                else:
                    if kind == "on_error":
                        self.error = value
                        self._report("on_error_processed", value)
                    else:
                        self.completed = True
                        self._report("on_complete_processed")
                    return
        except asyncio.CancelledError:
            if not self._ended:
                self._cancelled = True
                self._subscription.cancel()
            raise

    def _report(self, method: str, *args) -> None:
        if self.observer is not None:
            getattr(self.observer, method)(*args)

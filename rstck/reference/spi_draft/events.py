"""Serial events on an executor, shared by the draft's processor and subscriber."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any


class SerialEvents:
    """A mixin that turns each signal into an event run on `executor`, one at a time, in order.

    `_schedule(kind, value)` only queues: it calls nothing of the caller's (spi.on-next.2,
    spi.on-terminal.2). The event runs as `self._on_<kind>(value)`. The subscriber signals other than
    onSubscribe are scheduled here as `_on_element(element)` and `_on_end(("on_complete",))` or
    `_on_end(("on_error", error))` (spi.on-next.1, spi.on-terminal.1).
    """

    def on_next(self, element: Any) -> None:
        self._schedule("element", element)

    def on_error(self, error: BaseException) -> None:
        self._schedule("end", ("on_error", error))

    def on_complete(self) -> None:
        self._schedule("end", ("on_complete",))

    def _init_events(self, executor: Any) -> None:
        self._executor = executor
        self._lock = threading.Lock()
        self._events: deque[tuple] = deque()
        self._running = False

    def _schedule(self, kind: str, value: Any) -> None:
        with self._lock:
            self._events.append((kind, value))
            if self._running:
                return
            self._running = True
        self._executor.submit(self._run)

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._events:
                    self._running = False
                    return
                kind, value = self._events.popleft()
            getattr(self, f"_on_{kind}")(value)

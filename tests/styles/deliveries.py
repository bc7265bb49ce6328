"""Where a style's work runs: the delivery choice.

Each delivery runs a piece of work (a publisher's drain, a subscriber's processing run) somewhere: `schedule(work)`
runs it there, `may_run_here()` says whether the calling thread may run it at once instead (what a request that
drains inline asks), and `hop(work)` brings work onto the delivery's one thread for a style whose state lives there
without a lock (the loops only).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import threading

_log = logging.getLogger(__name__)

# How long the timer delivery waits before it runs what was scheduled.
TIMER_DELAY_S = 0.002
# Shared by every subscription of every style, as a library's module-level pool is; bounded on purpose.
SHARED_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="styles-shared-pool")


def _run_logged(work) -> None:
    try:
        work()
    except Exception:  # the styles catch their subscribers' errors; this is a last resort, never silent
        _log.exception("a style's scheduled work raised")


class CallerThread:
    """The caller's thread, through a trampoline of its own per thread: work scheduled while the thread already
    runs scheduled work waits until that returns, so nothing nests (3.3); otherwise it runs at once."""

    _local = threading.local()

    def schedule(self, work) -> None:
        pending = getattr(self._local, "pending", None)
        if pending is not None:
            pending.append(work)
            return
        pending = self._local.pending = collections.deque([work])
        try:
            while pending:
                _run_logged(pending.popleft())
        finally:
            self._local.pending = None

    def may_run_here(self) -> bool:
        return True


class ThreadPerRequest:
    """A new thread for each piece of work."""

    def schedule(self, work) -> None:
        threading.Thread(target=_run_logged, args=(work,), name="styles-thread-per-request", daemon=True).start()

    def may_run_here(self) -> bool:
        return True


class PrivateTimer:
    """A `threading.Timer` of the style's own, TIMER_DELAY_S after the work was scheduled."""

    def schedule(self, work) -> None:
        timer = threading.Timer(TIMER_DELAY_S, _run_logged, args=(work,))
        timer.name = "styles-timer"
        timer.daemon = True
        timer.start()

    def may_run_here(self) -> bool:
        return True


class SharedPool:
    """SHARED_POOL: three workers for every subscription there is."""

    def schedule(self, work) -> None:
        SHARED_POOL.submit(_run_logged, work)

    def may_run_here(self) -> bool:
        return True


class EventLoop:
    """An asyncio event loop: work runs as its callbacks, on its thread; from another thread it hops there with
    `call_soon_threadsafe`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, thread_id: int | None):
        self.loop = loop
        self.thread_id = thread_id

    def schedule(self, work) -> None:
        if self.may_run_here():
            self.loop.call_soon(_run_logged, work)
        else:
            self.loop.call_soon_threadsafe(_run_logged, work)

    def hop(self, work) -> None:
        self.loop.call_soon_threadsafe(_run_logged, work)

    def may_run_here(self) -> bool:
        return threading.get_ident() == self.thread_id


def kits_loop(loop: asyncio.AbstractEventLoop) -> EventLoop:
    """The event loop the kit's calls run in (`target.loop`). Its thread is the calling one when the loop runs
    there (the kit's calls do); called from elsewhere, no thread counts as the loop's and everything hops."""
    try:
        running_here = asyncio.get_running_loop() is loop
    except RuntimeError:
        running_here = False
    return EventLoop(loop, threading.get_ident() if running_here else None)


class _LoopThread:
    """One event loop running forever on a daemon thread of the styles' own, started on first use."""

    _lock = threading.Lock()
    _delivery: EventLoop | None = None

    @classmethod
    def get(cls) -> EventLoop:
        with cls._lock:
            if cls._delivery is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()
                ident: list[int] = []

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    ident.append(threading.get_ident())
                    started.set()
                    loop.run_forever()

                threading.Thread(target=run, name="styles-loop-thread", daemon=True).start()
                started.wait()
                cls._delivery = EventLoop(loop, ident[0])
            return cls._delivery


def delivery_for(name: str, target) -> object:
    """The delivery `name`; `target` is the rstck target whose loop `asyncio_loop` uses (read at the call, so in
    a check it is that check's loop)."""
    if name == "caller":
        return CallerThread()
    if name == "thread_per_request":
        return ThreadPerRequest()
    if name == "timer":
        return PrivateTimer()
    if name == "shared_pool":
        return SharedPool()
    if name == "asyncio_loop":
        return kits_loop(target.loop)
    if name == "loop_thread":
        return _LoopThread.get()
    raise ValueError(f"no delivery named {name!r}")

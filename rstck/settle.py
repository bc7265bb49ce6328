"""Quiescence: deciding "nothing more will happen" without sleeping.

A target's pending work lives in places the kit can see: an asyncio loop it owns, an
executor it hands out. `settle()` runs or waits for that work until a full pass over
every place finds nothing left: then no further signal can come without outside
input. Only work the kit cannot see (threads the implementation starts itself) needs
a quiet period, and a verdict reached that way says so in its result row.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
import time

from .signals import Trace

# The one place the kit's time bounds are set; `--timeout` overrides DEFAULT_DEADLINE_S.
DEFAULT_DEADLINE_S = 5.0
# How long request (3.4, SHOULD) and cancel (3.5, MUST) may take to return: "in a timely
# manner" for a call that should only record demand, generous enough for a loaded CI machine.
RESPONSIVENESS_BOUND_S = 0.25
# Timers further away than this are not "pending work" (a heartbeat, an idle timeout).
DEFAULT_TIMER_HORIZON_S = 1.0


def hang_grace(timeout_s: float) -> float:
    """How much longer than its deadline a call may take before it counts as hung: a fraction of the
    deadline, at most a second (settle itself gives up at the deadline; only a call that never
    returns needs the grace)."""
    return min(1.0, timeout_s / 4)


class SettleTimeout(Exception):
    """The target was still busy when the deadline came."""


@dataclasses.dataclass
class SettleOutcome:
    method: str  # "idle": all pending work seen to finish; "quiet-period"; "fixed-delay"
    waited_s: float


class InstrumentedExecutor(concurrent.futures.ThreadPoolExecutor):
    """A thread pool that knows how many tasks are queued or running.

    Targets hand it to threaded implementations (`target.executor`) so that settling
    can wait for exactly their work instead of for a guessed time.
    """

    def __init__(self, max_workers: int = 8, thread_name_prefix: str = "rstck-executor"):
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._busy = threading.Condition()
        self._pending = 0
        self._finished = 0

    def submit(self, fn, /, *args, **kwargs):
        with self._busy:
            self._pending += 1
        try:
            return super().submit(self._run, fn, args, kwargs)
        except BaseException:
            self._done()
            raise

    def _run(self, fn, args, kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            self._done()

    def _done(self) -> None:
        with self._busy:
            self._pending -= 1
            self._finished += 1
            self._busy.notify_all()

    @property
    def finished(self) -> int:
        return self._finished

    def wait_idle(self, deadline: float) -> bool:
        """Block until no task is queued or running; False if the deadline came first."""
        with self._busy:
            while self._pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._busy.wait(remaining)
            return True


def _next_timer(loop: asyncio.AbstractEventLoop) -> float | None:
    # CPython's BaseEventLoop keeps ready callbacks in `_ready` and timers in
    # `_scheduled`; no public API tells whether a loop has work pending.
    whens = [h.when() for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
    return min(whens) if whens else None


def run_loop_until_idle(loop: asyncio.AbstractEventLoop, deadline: float, horizon_s: float) -> bool:
    """Run `loop` until it has no ready callback and no timer due within the horizon.

    Returns whether any work ran. Raises SettleTimeout at the deadline.
    """
    due = _next_timer(loop)
    worked = bool(loop._ready) or (due is not None and due <= loop.time() + horizon_s)  # type: ignore[attr-defined]

    async def until_idle() -> None:
        while True:
            await asyncio.sleep(0)
            if loop._ready:  # type: ignore[attr-defined]
                continue
            due = _next_timer(loop)
            now = loop.time()
            if due is None or due > now + horizon_s:
                return
            if time.monotonic() + (due - now) > deadline:
                raise SettleTimeout(f"a timer is due in {due - now:.3f} s, past the deadline")
            await asyncio.sleep(max(0.0, due - now))

    if not worked:
        return False
    loop.run_until_complete(until_idle())
    return True


class Settler:
    """Settles one check's session: its loop, its executor, and optionally a quiet period."""

    def __init__(self, trace: Trace, *, quiet_period_s: float | None = None,
                 timer_horizon_s: float = DEFAULT_TIMER_HORIZON_S):
        self.trace = trace
        self.quiet_period_s = quiet_period_s
        self.timer_horizon_s = timer_horizon_s
        self.loop: asyncio.AbstractEventLoop | None = None
        self.executor: InstrumentedExecutor | None = None

    def settle(self, deadline: float) -> SettleOutcome:
        started = time.monotonic()
        while True:
            while self._run_pending_work(deadline):
                pass
            if not self.quiet_period_s:
                return SettleOutcome("idle", time.monotonic() - started)
            seen = len(self.trace)
            if not self.trace.wait_quiet(self.quiet_period_s, deadline):
                raise SettleTimeout("signals kept arriving for longer than the deadline")
            if len(self.trace) == seen and not self._has_pending_work():
                return SettleOutcome("quiet-period", time.monotonic() - started)

    def _run_pending_work(self, deadline: float) -> bool:
        """One pass over every place work can wait; True if any ran."""
        worked = False
        if self.loop is not None and not self.loop.is_closed():
            worked |= run_loop_until_idle(self.loop, deadline, self.timer_horizon_s)
        if self.executor is not None:
            before = self.executor.finished
            if not self.executor.wait_idle(deadline):
                raise SettleTimeout("executor tasks were still running at the deadline")
            worked |= self.executor.finished != before
        return worked

    def _has_pending_work(self) -> bool:
        loop_busy = self.loop is not None and not self.loop.is_closed() and bool(self.loop._ready)  # type: ignore[attr-defined]
        return loop_busy or (self.executor is not None and self.executor._pending > 0)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        if self.loop is not None and not self.loop.is_closed() and not self.loop.is_running():
            self.loop.close()


class FixedDelaySettler(Settler):
    """The JVM TCK's way: wait a fixed time and look once. Kept only as a benchmark baseline."""

    def __init__(self, trace: Trace, delay_s: float):
        super().__init__(trace)
        self.delay_s = delay_s

    def settle(self, deadline: float) -> SettleOutcome:
        started = time.monotonic()
        end = started + self.delay_s
        while time.monotonic() < end:  # the asyncio loop only runs when someone runs it
            if self.loop is not None and not self.loop.is_closed():
                self.loop.run_until_complete(asyncio.sleep(min(0.005, end - time.monotonic())))
            else:
                time.sleep(end - time.monotonic())
        return SettleOutcome("fixed-delay", time.monotonic() - started)

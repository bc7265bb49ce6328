"""Quiescence: deciding "nothing more will happen" without sleeping.

A target's pending work lives in places the kit can see: an asyncio loop it owns, an
executor it hands out, and threads the implementation starts itself (rstck.core.thread_watch).
`settle()` runs or waits for that work until a full pass over every place finds nothing
left: then no further signal can come without outside input. Only threads whose state
cannot be read (running, sleeping, blocked in I/O) need a quiet window, and a settle
decided that way says so.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Callable

from rstck.core.kit_threads import is_kit_thread
from rstck.core.signals import Trace
from rstck.core.thread_states import TIMER_HORIZON_S, describe, read_states
from rstck.core.thread_watch import ThreadWatch

if TYPE_CHECKING:
    import asyncio

    from rstck.core.executor import InstrumentedExecutor

# The one place the kit's time bounds are set; `--timeout` overrides DEFAULT_DEADLINE_S.
DEFAULT_DEADLINE_S = 5.0
# How long request (3.4, SHOULD) and cancel (3.5, MUST) may take to return: "in a timely
# manner" for a call that should only record demand, generous enough for a loaded CI machine.
RESPONSIVENESS_BOUND_S = 0.25

# The quiet window for threads the kit cannot read: twice the longest gap the implementation's own
# threads took to produce a signal in this check, within these bounds.
QUIET_WINDOW_MIN_S = 0.01
QUIET_WINDOW_MAX_S = 0.5
# A thread that keeps running without producing any signal for this long counts as quiet.
SPINNING_QUIET_S = 0.5
# How often a long wait looks whether a MUST item is already broken.
BROKEN_LOOK_S = 0.05


def hang_grace(timeout_s: float) -> float:
    """How much longer than its deadline a call may take before it counts as hung: a fraction of the
    deadline, at most a second (settle itself gives up at the deadline; only a call that never
    returns needs the grace)."""
    return min(1.0, timeout_s / 4)


class SettleTimeout(Exception):
    """The target was still busy when the deadline came."""


@dataclasses.dataclass
class SettleOutcome:
    # How the settle was decided, from the most exact to the least: "idle", "threads-joined", "threads-parked",
    # "quiet-period"; "violation": it ended early, a MUST item being broken already; "fixed-delay": the
    # benchmark's baseline.
    method: str
    waited_s: float
    window_s: float = 0.0  # the quiet window, when one decided


class Settler:
    """Settles one check's session: its loop, its executor, the threads it does not own, and
    optionally a fixed quiet period (the explicit override). It only settles: what the check opened is
    closed by the session (rstck.core.lifecycle)."""

    # What a verdict that rests on a quiet window says about why one was needed.
    quiet_reason = "the implementation's own threads could not be watched going idle"

    def __init__(self, trace: Trace, *, quiet_period_s: float | None = None):
        self.trace = trace
        self.quiet_period_s = quiet_period_s
        self.loop: asyncio.AbstractEventLoop | None = None
        self.executor: InstrumentedExecutor | None = None
        self.threads = ThreadWatch()
        self.loop_used = False  # the implementation put work on the kit's loop: it lives there
        # Whether a MUST item is already broken in this check: settling may then end early (the verdict is
        # decided; an implementation that floods the kit must not cost the whole deadline).
        self.broken: Callable[[], bool] = lambda: False
        self._signalling: set[int] = set()
        self._longest_gap_s = 0.0
        self.relied_on_quiet = False  # a settle of this check was decided by a quiet window
        self.waited_to_deadline = False  # an expected signal was then waited for until the deadline, in vain

    def settle(self, deadline: float) -> SettleOutcome:
        started = time.monotonic()
        while True:
            while self._run_pending_work(deadline):
                if self.broken():
                    return SettleOutcome("violation", time.monotonic() - started)
            foreign = self._settle_foreign_threads(deadline)
            if foreign is not None and foreign[0] == "violation":
                return SettleOutcome("violation", time.monotonic() - started)
            if foreign is not None and foreign[0] == "work":
                continue  # a foreign thread handed work to the loop or executor
            if self._has_pending_work():
                continue
            method, window = foreign or ("idle", 0.0)
            if self.quiet_period_s:
                seen = len(self.trace)
                if not self.trace.wait_quiet(self.quiet_period_s, deadline):
                    raise SettleTimeout("signals kept arriving for longer than the deadline")
                if len(self.trace) != seen or self._has_pending_work():
                    continue
                method, window = "quiet-period", self.quiet_period_s
            self.relied_on_quiet |= method == "quiet-period"
            return SettleOutcome(method, time.monotonic() - started, window)

    # -- the loop and the executor: work the kit can count --------------------------------------

    def _run_pending_work(self, deadline: float) -> bool:
        """One pass over every place work can wait; True if any ran."""
        worked = False
        if self.loop is not None and not self.loop.is_closed():
            from rstck.core.loops import TimerPastDeadline, run_loop_until_idle  # loaded already: the loop exists

            try:
                ran = run_loop_until_idle(self.loop, deadline, TIMER_HORIZON_S, stop=self.broken)
            except TimerPastDeadline as exc:
                raise SettleTimeout(str(exc)) from None
            self.loop_used |= ran
            worked |= ran
        if self.executor is not None:
            before = self.executor.finished
            while not self.executor.wait_idle(min(deadline, time.monotonic() + BROKEN_LOOK_S)):
                if self.broken():
                    return False
                if time.monotonic() >= deadline:
                    raise SettleTimeout("executor tasks were still running at the deadline")
            worked |= self.executor.finished != before
        return worked

    def _has_pending_work(self) -> bool:
        loop_busy = self.loop is not None and not self.loop.is_closed() and bool(self.loop._ready)  # type: ignore[attr-defined]
        return loop_busy or (self.executor is not None and self.executor.pending > 0)

    # -- threads the implementation started itself --------------------------------------------

    def _scan_trace(self) -> None:
        """Note the threads that signalled from outside the kit, and the longest they took to."""
        for thread_id, gap_ns in list(self.trace.longest_gap_ns.items()):
            thread = threading._active.get(thread_id)  # type: ignore[attr-defined]
            if thread is None or not is_kit_thread(thread):
                self._signalling.add(thread_id)
                self._longest_gap_s = max(self._longest_gap_s, gap_ns / 1e9)

    def signalling(self) -> set[int]:
        """The threads outside the kit that signalled in this check."""
        self._scan_trace()
        return set(self._signalling)

    def quiet_window(self, deadline: float) -> float:
        remaining = max(0.0, deadline - time.monotonic())
        return min(max(2 * self._longest_gap_s, QUIET_WINDOW_MIN_S), QUIET_WINDOW_MAX_S, remaining / 4)

    def _settle_foreign_threads(self, deadline: float) -> tuple[str, float] | None:
        """Wait until every watched thread has ended, is parked, or stayed quiet for the window.

        None when no foreign thread is involved; ("work", 0) when one handed work to the loop or
        executor, which is then run first.
        """
        self._scan_trace()
        threads = self.threads.watched(self._signalling)
        if not threads and not self.threads.busy_from_before():
            return None
        window = self.quiet_window(deadline)
        stable_since = silent_since = time.monotonic()
        snapshot = None
        while True:
            if self._has_pending_work():
                return "work", 0.0
            if self.broken():
                return "violation", 0.0
            states = read_states(threads)
            kinds = {state.kind for state in states.values()}
            earlier_work = self.threads.busy_from_before()
            if earlier_work:  # it may take this check's work next: as busy as a watched thread that runs
                kinds.add("running")
            now = time.monotonic()
            if kinds <= {"ended"}:
                self._scan_trace()
                more = self.threads.watched(self._signalling)
                if not more.keys() - threads.keys():  # none watched: the threads from before computed no more
                    return ("threads-joined", 0.0) if threads else None
                threads = more
                continue
            changed = (len(self.trace), {i: s.where for i, s in states.items() if s.kind in ("blocked", "running")})
            if changed[0] != (snapshot or (None,))[0]:
                silent_since = now
            if changed != snapshot:
                snapshot, stable_since = changed, now
            needed = window if kinds & {"blocked", "running"} else 0.0  # a parked thread is read exactly
            if "running" in kinds and "timer" not in kinds and now - silent_since >= max(SPINNING_QUIET_S, window):
                return "quiet-period", window  # it keeps running, but has produced nothing for long
            busy = bool(kinds & {"timer", "running"})
            if not busy and now - stable_since >= needed:
                return ("quiet-period", window) if "blocked" in kinds else ("threads-parked", 0.0)
            if now >= deadline:
                raise SettleTimeout(f"the implementation's own threads were still busy at the deadline: "
                                    f"{describe(threads, states)}"
                                    + "".join(f", {thread.name} (running since before the check)"
                                              for thread in earlier_work))
            timers = [s.due_s for s in states.values() if s.kind == "timer"]
            pause = min(timers + [needed - (now - stable_since) if not busy else 0.001, deadline - now])
            self.trace.wait_for_more(changed[0], max(0.0005, min(pause, 0.05)))
            self._scan_trace()
            threads = {**threads, **self.threads.watched(self._signalling)}
            window = max(window, self.quiet_window(deadline))

    def await_signal(self, arrived: Callable[[], bool], deadline: float) -> bool:
        """Wait for a signal a check expects to have arrived by now. Where settling was exact, what has not
        arrived will not arrive without outside input. Where a quiet window decided (threads the kit cannot
        watch going idle), the window may have been too short: the signal is waited for up to the deadline, so
        that a verdict of absence never rests on a window alone (only a target that fails pays for the wait)."""
        if arrived() or not self.relied_on_quiet:
            return arrived()
        while not arrived():
            if time.monotonic() >= deadline:
                self.waited_to_deadline = True
                return False
            self.trace.wait_for_more(len(self.trace), min(0.05, max(0.0, deadline - time.monotonic())))
        return True


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
                import asyncio

                self.loop.run_until_complete(asyncio.sleep(min(0.005, end - time.monotonic())))
            else:
                time.sleep(end - time.monotonic())
        return SettleOutcome("fixed-delay", time.monotonic() - started)

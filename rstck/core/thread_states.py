"""What a thread the kit does not own is doing: ended, parked, waiting for a timer, blocked, or running.

A thread that has ended can do nothing more; a thread blocked in an untimed wait that nobody has woken (an
idle pool worker, a worker waiting on its queue, an idle event loop) can do nothing more without outside
input; a thread waiting for a timer that is due soon will do something. Anything else (a thread running,
sleeping or blocked in I/O) can only be judged by how long it stays so.

The frames of other threads are read with `sys._current_frames()`; on Linux the kernel's
scheduling state of each thread (`/proc/self/task/<tid>/stat`) tells a thread that is
waiting for a CPU (still busy, however long a loaded machine keeps it waiting) from one
that is blocked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import linecache
import math
import queue as queue_module
import selectors
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

# Timers further away than this are not pending work (a heartbeat, an idle timeout).
TIMER_HORIZON_S = 1.0


def _lines_calling(function: Any, call: str) -> frozenset[int]:
    """The lines of `function`'s source that contain `call`."""
    code = function.__code__
    numbers = {line for _, _, line in code.co_lines() if line is not None}
    return frozenset(n for n in numbers if call in linecache.getline(code.co_filename, n))


_CONDITION_WAIT = threading.Condition.wait.__code__
_CONDITION_WAIT_LINES = _lines_calling(threading.Condition.wait, "waiter.acquire(")


@dataclasses.dataclass(frozen=True)
class ThreadState:
    """What a thread is doing, as far as settling is concerned.

    kind: "ended"; "parked" (can do nothing more without outside input); "timer" (waiting for a
    timer due in `due_s`); "blocked" (sleeping or blocked somewhere the kit cannot read: judged by a
    quiet window); "running" (on a CPU or waiting for one).
    """

    kind: str
    due_s: float = 0.0
    where: tuple = ()  # the innermost frame's code and position, to tell that a blocked thread stayed put
    held_s: float = 0.0  # how long a blocked thread must stay put before a linger takes it as held up (0: its own)


ENDED = ThreadState("ended")
PARKED = ThreadState("parked")
RUNNING = ThreadState("running")


def live_idents() -> set[int]:
    """The idents of every thread the interpreter runs, those not made by `threading` included (idents only: no
    frame is read)."""
    with _collector_off():
        return set(sys._current_frames())


def read_states(threads: dict[int, threading.Thread | None]) -> dict[int, ThreadState]:
    """What each thread is doing.

    Other threads' frames are read in one go, without letting go of the GIL (no I/O, no garbage
    collection, which may run finalizers that do I/O) until they are dropped: a frame object kept
    while its thread runs on may be popped under the reader (CPython 3.11 crashed walking `f_back`
    of such a frame). The kernel's scheduling state, which takes a file read, is asked afterwards.
    The collector is also off while `sys._current_frames()` runs: it holds CPython's thread-list
    lock while it makes frame objects, and a collection then that frees a `threading.local` needs
    the same lock (3.11 deadlocks on itself).
    """
    with _collector_off():
        frames = sys._current_frames()
        read = {ident: _thread_state(thread, frames.get(ident)) for ident, thread in threads.items()}
        del frames
    while True:  # for the next look (_simple_queue_waited_on); other checks' threads may pop as well
        try:
            linecache.getlines(_files_to_read.pop())
        except KeyError:
            break
    return {ident: _scheduled(threads[ident], state) if state.kind == "undecided" else state
            for ident, state in read.items()}


# Several threads read states at once (a check's settle, a probe's linger on the target's thread, a second-thread
# call's wait): the collector stays off until the last of them is done, and is turned on again only if it was on.
_collector_guard = threading.Lock()
_collector_readers = [0, False]  # how many read now; whether the collector was on before the first


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    with _collector_guard:
        if _collector_readers[0] == 0:
            _collector_readers[1] = gc.isenabled()
            gc.disable()
        _collector_readers[0] += 1
    try:
        yield
    finally:
        with _collector_guard:
            _collector_readers[0] -= 1
            if _collector_readers[0] == 0 and _collector_readers[1]:
                gc.enable()


_files_to_read: set[str] = set()


def _scheduled(thread: threading.Thread | None, undecided: ThreadState) -> ThreadState:
    """A thread its frame did not explain: running (on a CPU or waiting for one) or blocked."""
    kind = "running" if _scheduler_state(thread) == "R" else "blocked"
    return ThreadState(kind, where=undecided.where)


def describe(threads: dict[int, threading.Thread | None], states: dict[int, ThreadState]) -> str:
    names = [f"{thread.name if thread is not None else ident} ({states[ident].kind})"
             for ident, thread in threads.items() if states[ident].kind != "ended"]
    return ", ".join(names) or "none"


def _thread_state(thread: threading.Thread | None, frame: Any) -> ThreadState:
    if frame is not None and thread is not None:  # first the common case, cheaply: still parked where it was
        known = getattr(thread, _PARKED_AT, None)
        if known is not None and known[:3] == (id(frame), frame.f_code, frame.f_lasti) and known[3]():
            return PARKED
    if thread is not None and not thread._started.is_set() and not thread._is_stopped:  # type: ignore[attr-defined]
        return RUNNING  # started a moment ago: not yet running its code
    if thread is not None and not thread.is_alive():
        return ENDED
    return _state(thread, frame)


# Where a thread was seen parked (frame, code and position), and how to tell that it still is, kept
# on the Thread object itself (idents are reused): a thread parked across many checks (an idle pool,
# a leftover worker) is then looked at in O(1).
_PARKED_AT = "_rstck_parked_at"


def _state(thread: threading.Thread | None, frame: Any) -> ThreadState:
    if frame is None:
        return ENDED
    found = _parked_or_timer(frame)
    if found is not None:
        state, still = found
        if still is not None and thread is not None:
            try:
                setattr(thread, _PARKED_AT, (id(frame), frame.f_code, frame.f_lasti, still))
            except AttributeError:  # a Thread subclass with __slots__: looked at in full each time
                pass
        return state
    return ThreadState("undecided", where=(frame.f_code, frame.f_lasti))  # by the scheduler: _scheduled


def _parked_or_timer(frame: Any) -> tuple[ThreadState, Any] | None:
    """A wait the kit can read: on a threading condition, on a SimpleQueue, an event loop's select.

    Returns the state and, for a parked thread, a predicate that tells it is still parked there.
    """
    code = frame.f_code
    try:
        if code is _CONDITION_WAIT and frame.f_lineno in _CONDITION_WAIT_LINES:
            if _starting_a_thread(frame):
                return RUNNING, None
            local = frame.f_locals
            waiters = getattr(local.get("self"), "_waiters", None)
            waiter = local.get("waiter")
            if waiters is None or waiter not in waiters:
                return RUNNING, None  # notify() takes a waiter off the list as it wakes it: about to run
            state = _timeout_state(local.get("timeout"))
            return state, ((lambda: waiter in waiters) if state is PARKED else None)
        queue = _simple_queue_waited_on(frame)
        if queue is not None:  # a pool's idle worker, a private worker reading its inbox
            return (PARKED, queue.empty) if queue.empty() else (RUNNING, None)
        if code.co_name == "select" and code.co_filename == selectors.__file__:
            loop = frame.f_back.f_locals.get("self") if frame.f_back is not None else None
            state = _event_loop_state(loop)
            return None if state is None else (state, (lambda: _event_loop_state(loop) is PARKED)
                                               if state is PARKED else None)
    except Exception:  # a frame changing under us: judge the thread by its scheduling state instead
        return None
    return None


def _simple_queue_waited_on(frame: Any) -> queue_module.SimpleQueue | None:
    """The `queue.SimpleQueue` a frame is blocked reading (`q.get()`, `self.inbox.get()`), if any.

    SimpleQueue.get blocks in C, so the frame shows only the line; the queue is the one that line
    names among the frame's locals, or among the attributes of its `self`.
    """
    filename = frame.f_code.co_filename
    if filename not in linecache.cache:  # reading the file now would let go of the GIL (_read_states)
        _files_to_read.add(filename)
        return None
    line = linecache.getline(filename, frame.f_lineno)
    if ".get(" not in line:
        return None
    local = frame.f_locals
    for name, value in local.items():
        if isinstance(value, queue_module.SimpleQueue) and f"{name}.get(" in line:
            return value
    owner = local.get("self")
    for name, value in getattr(owner, "__dict__", {}).items():
        if isinstance(value, queue_module.SimpleQueue) and f"self.{name}.get(" in line:
            return value
    return None


_THREAD_START = threading.Thread.start.__code__


def _starting_a_thread(frame: Any) -> bool:
    """Whether this wait is Thread.start() waiting for the new thread to begin (it will, at once)."""
    for _ in range(3):
        frame = frame.f_back
        if frame is None:
            return False
        if frame.f_code is _THREAD_START:
            return True
    return False


def _timeout_state(timeout: Any) -> ThreadState:
    if timeout is None or timeout < 0 or timeout > TIMER_HORIZON_S:
        return PARKED
    return ThreadState("timer", due_s=float(timeout))


def _event_loop_state(loop: Any) -> ThreadState | None:
    ready = getattr(loop, "_ready", None)
    scheduled = getattr(loop, "_scheduled", None)
    if ready is None or scheduled is None:
        return None
    if ready:
        return RUNNING
    whens = [handle.when() for handle in list(scheduled) if not handle.cancelled()]
    if not whens:
        return PARKED
    return _timeout_state(max(0.0, min(whens) - loop.time()))


# How much CPU time a thread had when the kit last saw it change, and when that was, kept on the
# Thread object (idents are reused): a thread asleep across many checks is known to be so at once.
_CPU_SEEN = "_rstck_cpu_seen"


def off_cpu_s(thread: threading.Thread) -> float:
    """For how long, as far as the kit has seen, a thread has had no CPU time: 0.0 when it had some since the
    last look or is seen for the first time; infinite where the kernel does not tell (judged by its state alone).

    A thread the kernel shows asleep may still be computing: waiting for the interpreter lock between
    its steps, as every busy thread does on a loaded machine. Its CPU time, read at two moments, tells."""
    now = time.monotonic()
    cpu_ns = _cpu_time_ns(thread)
    if cpu_ns is None:
        return math.inf
    seen = getattr(thread, _CPU_SEEN, None)
    if seen is not None and seen[0] == cpu_ns:
        return now - seen[1]
    setattr(thread, _CPU_SEEN, (cpu_ns, now))
    return 0.0


def _cpu_time_ns(thread: threading.Thread) -> int | None:
    """How long a thread has been on a CPU, in nanoseconds (the kernel's count); None if unknown."""
    native_id = getattr(thread, "native_id", None)
    if native_id is None or not sys.platform.startswith("linux"):
        return None
    try:
        with open(f"/proc/self/task/{native_id}/schedstat", "rb") as schedstat:
            return int(schedstat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _scheduler_state(thread: threading.Thread | None) -> str:
    """The kernel's state letter of a thread (R: running or runnable; S, D: blocked); "" if unknown."""
    native_id = getattr(thread, "native_id", None)
    if native_id is None or not sys.platform.startswith("linux"):
        return ""
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return ""
    closing = text.rfind(b")")
    return text[closing + 2:closing + 3].decode("ascii", "replace") if closing >= 0 else ""


def wait_unless_stuck(thread: threading.Thread, done: Any, end: float, *, stable_s: float, look_s: float) -> str:
    """Wait until `done()`, or until `thread` has waited at one place for `stable_s` (parked, or blocked where the
    kit cannot read it: it waits for something, maybe for the very thread that waits here), or until `end`
    (time.monotonic()). Says which: "done", "stuck" or "bound". A thread that runs, or has yet to start, is
    waited for."""
    where: Any = None
    since = time.monotonic()
    while not done():
        now = time.monotonic()
        if now >= end:
            return "bound"
        state = read_states({thread.ident: thread})[thread.ident] if thread.ident is not None else RUNNING
        if state.kind in ("parked", "blocked"):
            here = (state.kind, state.where)
            if here != where:
                where, since = here, now
            elif now - since >= stable_s:
                return "stuck"
        else:
            where, since = None, now
        time.sleep(min(look_s, max(0.0, end - now)))
    return "done"

"""Threads the kit does not own: which may still produce a signal, and which are parked.

An implementation that delivers from threads it starts itself (a timer, a thread per
request, a private worker, its own pool, an asyncio loop in a thread of its own) does work
the kit cannot count. The kit looks at those threads instead: a thread that has ended
can do nothing more; a thread blocked in an untimed wait that nobody has woken (an idle
pool worker, a worker waiting on its queue, an idle event loop) can do nothing more without
outside input; a thread waiting for a timer that is due soon will do something, so settling
waits for it. Anything else (a thread running, sleeping or blocked in I/O) is judged by a
quiet window, and the settle says so.

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
import os
import queue as queue_module
import selectors
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Any

# Timers further away than this are not pending work (a heartbeat, an idle timeout).
TIMER_HORIZON_S = 1.0

_KIT = "_rstck_kit"


def mark_kit_thread(thread: threading.Thread | None = None) -> None:
    """Mark a thread as the kit's own: settling never waits for it, and its calls are the kit's."""
    setattr(thread or threading.current_thread(), _KIT, True)


def is_kit_thread(thread: threading.Thread) -> bool:
    return thread is threading.main_thread() or getattr(thread, _KIT, False)


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


# Every thread of an implementation some check watched, for the end of the process (left_behind).
_seen: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_kit_pools: weakref.WeakSet[Any] = weakref.WeakSet()


def watch_pool(pool: Any) -> None:
    """A pool the kit handed to an implementation (target.executor): its workers may be stuck in its tasks."""
    _kit_pools.add(pool)


def left_behind() -> list[threading.Thread]:
    """Threads the implementations under test left running that would keep the interpreter from ending:
    non-daemon threads they started (or that ran their tasks) and that are still alive."""
    pool_threads = {t for pool in list(_kit_pools) for t in list(getattr(pool, "_threads", ()))}
    return [t for t in {*list(_seen), *pool_threads} if t.is_alive() and not t.daemon and t is not threading.current_thread()]


def end_process(code: int, say: Any) -> None:
    """End the process now if the implementations left threads behind that would keep it from ending
    (as test runners do when they must): name them through `say`, flush, and exit with `code`."""
    stuck = left_behind()
    if not stuck:
        return
    names = ", ".join(sorted(t.name for t in stuck)[:8]) + (", …" if len(stuck) > 8 else "")
    say(f"rstck: {len(stuck)} thread{'s' * (len(stuck) != 1)} left behind by the implementations under test "
        f"{'are' if len(stuck) != 1 else 'is'} still running ({names}); ending the process")
    flush_std_streams()
    os._exit(code)


def flush_std_streams() -> None:
    """Flush stdout and stderr before an `os._exit`, whatever a target did to them."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a target may have closed or replaced it
            pass


ENDED = ThreadState("ended")
PARKED = ThreadState("parked")
RUNNING = ThreadState("running")


class ThreadWatch:
    """One check's view of the threads it does not own.

    Watched: threads started since the check began, threads that signalled or called into the
    kit during the check, and threads that were parked when it began and no longer are (a
    shared pool's worker woken by this check's work). A thread once watched stays watched for
    the check (parked or ended, it holds nothing up), so each look examines only the others:
    a process full of idle threads left by earlier checks costs little per look.
    """

    def __init__(self) -> None:
        self._started_before = frozenset(threading.enumerate())  # held only as long as the check's session
        others = {t.ident: t for t in self._started_before if not is_kit_thread(t)}
        self._asleep = {ident: others[ident] for ident, state in _read_states(others).items() if state.kind == "parked"}
        self._chosen: dict[int, threading.Thread | None] = {}

    def watched(self, signalling: set[int]) -> dict[int, threading.Thread | None]:
        """The threads settling must account for, by ident; `signalling`: idents seen in the trace."""
        chosen = self._chosen
        current = threading.enumerate()
        for thread in current:
            if thread not in self._started_before and not is_kit_thread(thread):
                key = thread.ident if thread.ident is not None else -id(thread)
                if chosen.get(key) is not thread:  # idents are reused: a thread that ended gives way
                    chosen[key] = thread
        if self._asleep:
            woken = [ident for ident, state in _read_states(self._asleep).items() if state.kind != "parked"]
            for ident in woken:
                thread = self._asleep.pop(ident)
                if thread.is_alive() or ident not in chosen:  # one that ended leaves its reused ident to the new
                    chosen[ident] = thread
        unknown = signalling - chosen.keys()
        if unknown:
            by_ident = {t.ident: t for t in current}
            with _collector_off():
                running = set(sys._current_frames())  # idents only: no frame is read
            for ident in unknown:
                thread = by_ident.get(ident)
                if thread is not None and not is_kit_thread(thread):
                    chosen[ident] = thread
                elif thread is None and ident in running:  # not made by `threading` (a C extension): its ident
                    chosen[ident] = None
        _seen.update(thread for thread in chosen.values() if thread is not None)
        return dict(chosen)

    @staticmethod
    def states(threads: dict[int, threading.Thread | None]) -> dict[int, ThreadState]:
        return _read_states(threads)


def _read_states(threads: dict[int, threading.Thread | None]) -> dict[int, ThreadState]:
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


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
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

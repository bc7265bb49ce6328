"""Ending the process: the threads the implementations under test left behind that would keep the interpreter
from ending, and the standard streams flushed before an `os._exit`. A run inside a process that hosts others (a
pytest run inside a test process) ends it only for threads it left behind itself (`besides`)."""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Iterable
from typing import Any

# Every thread of an implementation some check watched, and every pool the kit handed to an implementation.
_seen: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_kit_pools: weakref.WeakSet[Any] = weakref.WeakSet()


def note_implementation_threads(threads: Iterable[threading.Thread]) -> None:
    """Threads of an implementation's that a check watched (rstck.core.thread_watch): they may outlive it."""
    _seen.update(threads)


def watch_pool(pool: Any) -> None:
    """A pool the kit handed to an implementation (target.executor): its workers may be stuck in its tasks."""
    _kit_pools.add(pool)


def left_behind(besides: Iterable[threading.Thread] = ()) -> list[threading.Thread]:
    """Threads the implementations under test left running that would keep the interpreter from ending:
    non-daemon threads they started (or that ran their tasks) and that are still alive; not those of `besides`."""
    pool_threads = {t for pool in list(_kit_pools) for t in list(getattr(pool, "_threads", ()))}
    me = threading.current_thread()
    return [t for t in {*list(_seen), *pool_threads} - set(besides) if t.is_alive() and not t.daemon and t is not me]


def end_process(code: int, say: Any, *, finalize: bool = True, besides: Iterable[threading.Thread] = ()) -> None:
    """End the process now if the implementations left threads behind that would keep it from ending
    (as test runners do when they must): name them through `say`, flush, and exit with `code`. Without
    `finalize` (a process that never held an implementation: its files are closed, nothing of it is left to
    tear down), end it now in any case: the interpreter's finalization of the kit's modules costs a run more
    than its check does (benchmarks/startup.py)."""
    stuck = left_behind(besides)
    if not stuck:
        if not finalize:
            flush_std_streams()
            os._exit(code)
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


"""Which threads one check accounts for when it settles: the threads it does not own that may still produce a
signal (their states: rstck.core.thread_states).

An implementation that delivers from threads it starts itself (a timer, a thread per request, a private
worker, its own pool, an asyncio loop in a thread of its own) does work the kit cannot count: the kit watches
those threads instead, and settling waits until each has ended, is parked, or stayed quiet for a window.
"""

from __future__ import annotations

import sys
import threading

from rstck.core.kit_threads import is_kit_thread
from rstck.core.process_end import note_implementation_threads
from rstck.core.thread_states import ThreadState, live_idents, off_cpu_s, read_states

# Longer than a busy thread waits for the interpreter lock (the switch interval, a few times over, as a
# loaded machine stretches it): a thread from before off the CPU this long computes no more.
OFF_CPU_S = 4 * sys.getswitchinterval()


class ThreadWatch:
    """One check's view of the threads it does not own.

    Watched: threads started since the check began, threads that signalled or called into the
    kit during the check, and threads that were parked when it began and no longer are (a
    shared pool's worker woken by this check's work). A thread once watched stays watched for
    the check (parked or ended, it holds nothing up), so each look examines only the others:
    a process full of idle threads left by earlier checks costs little per look.

    A thread still busy with earlier work when the check began (a pool's worker finishing an earlier
    check's task, on a loaded machine) may take this check's work next without ever being seen parked:
    settling waits while it computes (`busy_from_before`); once it parks it is one of the parked above,
    and once it waits for a timer, or stays off the CPU longer than the interpreter lock takes to change
    hands, it is none of the check's (a heartbeat, a reader). The kernel shows a busy thread asleep
    whenever it waits for the interpreter lock, so "computes" is read from its CPU time, not its state.
    """

    def __init__(self) -> None:
        self._started_before = frozenset(threading.enumerate())  # held only as long as the check's session
        others = {t.ident: t for t in self._started_before if not is_kit_thread(t)}
        states = read_states(others)
        self._asleep = {ident: others[ident] for ident, state in states.items() if state.kind == "parked"}
        self._busy = {ident: others[ident] for ident, state in states.items()
                      if state.kind == "running" or (state.kind == "blocked" and off_cpu_s(others[ident]) < OFF_CPU_S)}
        self._chosen: dict[int, threading.Thread | None] = {}
        self._looking = threading.RLock()  # settling on the check's thread and a linger on another may look at once

    def busy_from_before(self) -> list[threading.Thread]:
        """The threads busy when the check began that compute still (those the check has not come to watch)."""
        with self._looking:
            return self._busy_from_before()

    def _busy_from_before(self) -> list[threading.Thread]:
        if not self._busy:
            return []
        for ident, state in read_states(self._busy).items():
            if state.kind == "parked":
                self._asleep[ident] = self._busy.pop(ident)
            elif state.kind not in ("running", "blocked") or ident in self._chosen:
                del self._busy[ident]
            elif state.kind == "blocked" and off_cpu_s(self._busy[ident]) >= OFF_CPU_S:
                del self._busy[ident]  # asleep or in I/O: not waiting for the interpreter lock
        return list(self._busy.values())

    @property
    def started_before(self) -> frozenset[threading.Thread]:
        """The threads alive when the check began: an immutable snapshot, safe to read from any thread."""
        return self._started_before

    def watched(self, signalling: set[int]) -> dict[int, threading.Thread | None]:
        """The threads settling must account for, by ident; `signalling`: idents seen in the trace."""
        with self._looking:
            return self._watched(signalling)

    def _watched(self, signalling: set[int]) -> dict[int, threading.Thread | None]:
        chosen = self._chosen
        current = threading.enumerate()
        for thread in current:
            if thread not in self._started_before and not is_kit_thread(thread):
                key = thread.ident if thread.ident is not None else -id(thread)
                if chosen.get(key) is not thread:  # idents are reused: a thread that ended gives way
                    chosen[key] = thread
        if self._asleep:
            woken = [ident for ident, state in read_states(self._asleep).items() if state.kind != "parked"]
            for ident in woken:
                thread = self._asleep.pop(ident)
                if thread.is_alive() or ident not in chosen:  # one that ended leaves its reused ident to the new
                    chosen[ident] = thread
        unknown = signalling - chosen.keys()
        if unknown:
            by_ident = {t.ident: t for t in current}
            running = live_idents()
            for ident in unknown:
                thread = by_ident.get(ident)
                if thread is not None and not is_kit_thread(thread):
                    chosen[ident] = thread
                elif thread is None and ident in running:  # not made by `threading` (a C extension): its ident
                    chosen[ident] = None
        note_implementation_threads(thread for thread in chosen.values() if thread is not None)
        return dict(chosen)

    @staticmethod
    def states(threads: dict[int, threading.Thread | None]) -> dict[int, ThreadState]:
        return read_states(threads)

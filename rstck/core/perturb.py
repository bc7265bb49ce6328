"""Schedule perturbation: the kit widens the windows in which races happen, by design.

A race shows only if the target's other threads run while the kit's probe is still inside a
signal (1.3), while a call is under way (2.7, 3.5), or between a publisher's check of its demand
and its use (1.1, 3.8). A loaded machine widens those windows by chance; the kit widens them on
purpose, in three ways, each bounded:

- linger: the probe, inside a signal, after calling `request` or `cancel`, waits until the threads
  the target started have done what they can (each ended, parked, or blocked where it was), or a
  signal arrived, or the bound came. It never decides that "nothing happens": a verdict still rests
  on settling; lingering only lets the target's threads run first.
- second thread: the kit makes a call from a thread of its own while a delivery is in flight.
- yield: the check's thread gives the target's threads their turn (the same wait as lingering) at a
  chosen point, e.g. between `subscribe` returning and the next call.

A schedule is a list of such steps, drawn by the fuzzer and printed with a finding, so that its
replay makes the same choices.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from rstck.core.evidence import recorded
from rstck.core.kit_threads import is_kit_thread, start_kit_thread
from rstck.core.thread_states import read_states, wait_unless_stuck

# The longest a linger or a yield waits for the target's threads: generous for a loaded machine, and a
# bound only (a conformant target's threads are normally parked, blocked or done within a millisecond).
LINGER_BOUND_S = 0.25
# A thread blocked somewhere the kit cannot read (a lock, a sleep) counts as held up once it has stayed
# at the same place this long: a lock held by the lingering probe's thread will not be let go meanwhile.
BLOCKED_STABLE_S = 0.01
# How often a linger looks at the threads when no signal wakes it.
LOOK_S = 0.001

# `RSTCK_PERTURB=0` turns perturbation off, for the benchmark's baseline: lingers return at once and second-thread
# calls are made in place. The checks built on it still run; they then see only what the machine's timing shows.
ENV_SWITCH = "RSTCK_PERTURB"


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


def _target_threads(session: Any) -> dict[int, threading.Thread]:
    """The Python threads of the target's that may act now: those settling watches (started during the check, seen
    signalling in it, or woken from parked by it: a module-level pool's worker, a loop thread made before the
    check); never the kit's, never the caller's own. Threads outside Python are the target's to read
    (Target.outside_thread_states)."""
    me = threading.get_ident()
    settler = session.settler
    watched = settler.threads.watched(settler.signalling())
    return {ident: thread for ident, thread in watched.items()
            if ident != me and thread is not None and thread.is_alive() and not is_kit_thread(thread)}


def _target_acted(session: Any, since: int, actor: str | None) -> bool:
    """Whether a thread of the target's recorded a signal to `actor` (to anyone, for None) after record `since`:
    the kit's own records (its upstream element to a processor, the check's thread) do not end a linger, nor does
    the target's signal to another actor (a processor's call on its upstream while its downstream probe lingers):
    the race the linger holds open is with the lingering actor."""
    me = threading.get_ident()
    for who, ident in session.trace.actors_since(since):
        if actor is not None and who != actor:
            continue
        thread = threading._active.get(ident)  # type: ignore[attr-defined]
        if ident != me and (thread is None or not is_kit_thread(thread)):
            return True
    return False


def linger(session: Any, *, why: str = "", actor: str | None = None) -> None:
    """Hold the calling thread until the target's other threads have made the progress they can.

    Ends when a thread of the target's signals `actor`, the probe or kit subscription that lingers (any actor, for
    None; the kit's own records do not count), when every such thread has ended, is parked (nothing more without
    outside input), or has stayed blocked at one place for BLOCKED_STABLE_S, or the longer `held_s` its state asks
    for (waiting for something the caller holds), or at the bound. The trace notes how long it lingered, and what ended it, when `why` says what for."""
    started = time.monotonic()
    if not enabled():
        return
    trace = session.trace
    seen = len(trace)
    end = min(started + LINGER_BOUND_S, session.deadline)
    stable_where: dict[int, Any] = {}
    stable_since = started
    while True:
        if len(trace) != seen:
            if _target_acted(session, seen, actor):
                return _done(session, "signal", started, why)
            seen = len(trace)
        threads = _target_threads(session)
        outside = session.target.outside_thread_states()  # a JVM's threads, say: the target reads them
        if not threads and not outside:
            return _done(session, "no threads", started, why)
        states = {**read_states(threads), **outside}
        kinds = {state.kind for state in states.values()}
        now = time.monotonic()
        where = {ident: s.where for ident, s in states.items() if s.kind == "blocked"}
        if where != stable_where:
            stable_where, stable_since = where, now
        idle = kinds <= {"ended", "parked"}
        held_s = max([BLOCKED_STABLE_S] + [s.held_s for s in states.values() if s.kind == "blocked"])
        if idle or (kinds <= {"ended", "parked", "blocked"} and now - stable_since >= held_s):
            # A signal that came while the states were read (slow across a process: a JVM's) ended the linger
            # first: the thread that sent it may read as blocked, waiting for the signal to return.
            if len(trace) != seen and _target_acted(session, seen, actor):
                return _done(session, "signal", started, why)
            return _done(session, "idle" if idle else "blocked", started, why)
        if now >= end:
            return _done(session, "bound", started, why)
        timers = [s.due_s for s in states.values() if s.kind == "timer"]
        trace.wait_for_more(seen, max(0.0002, min([LOOK_S, end - now] + timers)))


def _done(session: Any, ended_by: str, started: float, why: str) -> None:
    """`ended_by`: "signal", "idle", "blocked", "bound" or "no threads" (a linger with nothing to wait for,
    not noted)."""
    if why and ended_by != "no threads":
        session.trace.note(f"lingered {(time.monotonic() - started) * 1000:.1f} ms {why}: ended by {ended_by}")


def _evidence(session: Any) -> Any:
    return getattr(session, "evidence", None)


@recorded("linger", lambda session, evidence, why="": {}, _evidence)
def yield_to_target(session: Any, why: str = "") -> None:
    """Give the target's threads their turn at a chosen point of the check's own thread."""
    linger(session, why=why)


@recorded("join", lambda session, evidence, thread, rule: {"rule": rule}, _evidence)
def join_kit_thread(session: Any, thread: threading.Thread, rule: str) -> None:
    """Wait for a kit thread started by `on_second_thread` until the check's deadline; a call still under way
    then is the target's hang, charged to `rule`."""
    from rstck.core.verdict import RuleViolation

    thread.join(max(0.0, session.deadline - time.monotonic()))
    if thread.is_alive():
        raise RuleViolation(rule, "the call made on the kit's second thread to return",
                            "it had not returned by the deadline", timed_out=True)


def second_thread_allowed(session: Any, probe: Any) -> bool:
    """Whether a call of `probe`'s may now be made on a second thread of the kit's, concurrently with what this
    thread is doing, without the kit breaking a rule or a target's threading model itself.

    Not while one of the probe's calls runs (2.7: they stay serial; one returning on another thread is waited for
    while it makes progress, never while it waits, perhaps for this very thread). On a thread of the target's (a
    delivery in flight there): yes. On the check's own thread only inside the kit's `subscribe` call (a publisher
    delivering before subscribe returns) or inside a signal of the kit's to a subscriber under test (a processor's
    upstream side signalling), and for a target that does not live on the kit's event loop, whose calls belong on
    the loop's thread."""
    if not enabled():
        return False
    calling = probe.calling_thread
    if calling is not None and calling != threading.get_ident():  # another thread's call is returning: let it
        other = threading._active.get(calling)  # type: ignore[attr-defined]
        if other is not None:
            wait_unless_stuck(other, lambda: probe.calling_thread is None,
                              min(time.monotonic() + LINGER_BOUND_S, session.deadline),
                              stable_s=BLOCKED_STABLE_S, look_s=LOOK_S)
        calling = probe.calling_thread
    if calling is not None:
        return False
    if threading.current_thread() is not session.check_thread:
        return True
    outstanding = session.calls.outstanding
    return bool(outstanding) and outstanding[-1].method in _AROUND and not session.settler.loop_used


# The kit's calls inside which a delivery on the check's thread leaves room for a second thread's call.
_AROUND = frozenset({"subscribe", "on_subscribe", "on_next", "on_complete", "on_error"})


def on_second_thread(session: Any, probe: Any, call: Any, what: str) -> threading.Thread | None:
    """From inside a signal: `call` (one of `probe`'s calls, described by `what`) made on a second thread of the
    kit's while this signal is still in flight. The signal waits for the call to return, within LINGER_BOUND_S, so
    that it lands while the delivery is under way; but only while the call makes progress: once it waits at one
    place (a publisher that holds a lock across on_next lets it through only once on_next returns), the signal
    returns and the call completes whenever the implementation lets it. The kit never holds the thread that
    signals waiting for a call that waits for that thread. Where a second thread is not allowed, the call is made
    here. Returns the thread if it is still under way: the caller joins it (`join_kit_thread`) before judging, and
    settling waits for it meanwhile (rstck.core.session)."""
    if not second_thread_allowed(session, probe):
        call()
        return None
    session.trace.note(f"{probe.name} {what} on a second thread while this signal is in flight")
    evidence = _evidence(session)
    frame = evidence.begin({"op": "second_thread", "bound_s": LINGER_BOUND_S}) if evidence is not None else None
    try:
        thread = start_kit_thread(evidence.on_thread(call) if evidence is not None else call, "rstck-second-thread")
        ended_by = wait_unless_stuck(thread, lambda: not thread.is_alive(),
                                     min(time.monotonic() + LINGER_BOUND_S, session.deadline),
                                     stable_s=BLOCKED_STABLE_S, look_s=LOOK_S)
        if ended_by == "stuck":
            session.trace.note(f"{probe.name}'s call on the second thread waits inside the implementation: the "
                               "signal returns, and the call goes on when the implementation lets it")
    finally:
        if frame is not None:
            evidence.end(frame)
    return thread if thread.is_alive() else None


def request_from_second_thread(session: Any, probe: Any, n: int) -> threading.Thread | None:
    return on_second_thread(session, probe, lambda: probe.request(n), f"requests {n}")

"""The implementation's Java threads as settling and lingering read them: one call into the bridge, which reads them
through java.lang.management.ThreadMXBean (RstckJvmBridge.threadStates). The calling Java thread is left out: made
from inside a callback, the call runs on the Java thread that made the callback (pinned threads), the caller's own.
So are the JVM's, py4j's and, on Spark's JVM, Spark's (rstck.protocols.jvm.process.SparkJvm)."""

from __future__ import annotations

import dataclasses
from typing import Any

from rstck.core.thread_states import PARKED, RUNNING, ThreadState


@dataclasses.dataclass(frozen=True)
class JavaThread:
    """kind: "parked" (can do nothing more without outside input), "timer" (a timed wait other than an idle pool
    worker's), "blocked" (on a monitor), "callback" (inside a call to the kit), "running"."""

    id: int
    kind: str
    name: str
    where: str
    waits: int  # how often it waited or blocked so far: a thread woken in between has moved on


def java_threads(bridge: Any) -> list[JavaThread]:
    threads = []
    for line in bridge.threadStates().splitlines():
        thread_id, kind, name, where, waits = line.split("\t")
        threads.append(JavaThread(int(thread_id), kind, name, where, int(waits)))
    return threads


def describe(threads: list[JavaThread]) -> str:
    return ", ".join(f"{t.name} ({t.kind} at {t.where})" for t in threads if t.kind != "parked") or "none"


# A Java thread on a timer is waited for by a linger as a Python one is; its due time is not read, so it is looked
# at again this soon.
TIMER_LOOK_S = 0.001
# A Java thread inside a call to the kit may be a signal still on its way to the lingering probe (a socket exchange,
# slow on a loaded machine): a linger takes it as held up only once it has stayed there this long.
CALLBACK_HELD_S = 0.1


def linger_state(thread: JavaThread) -> ThreadState:
    """A Java thread in the kinds lingering reads (rstck.core.thread_states): a thread inside a call to the kit
    (another probe's signal) waits where the kit cannot read it from here, as a blocked one does; its wait count
    in `where` tells that it moved on."""
    if thread.kind == "parked":
        return PARKED
    if thread.kind == "running":
        return RUNNING
    if thread.kind == "timer":
        return ThreadState("timer", due_s=TIMER_LOOK_S)
    return ThreadState("blocked", where=(thread.kind, thread.where, thread.waits),
                       held_s=CALLBACK_HELD_S if thread.kind == "callback" else 0.0)

"""The implementation's Java threads as settling reads them: one call into the bridge, which reads them through
java.lang.management.ThreadMXBean (RstckJvmBridge.threadStates)."""

from __future__ import annotations

import dataclasses
from typing import Any


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

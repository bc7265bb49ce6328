"""The Node adapter's tests: skipped, with the reason, where there is no `node`; and each test must leave no
driver process of its own running."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from rstck.protocols.node import lifecycle

NODE_MISSING = ("node is not on PATH: the Node adapter's tests need Node.js 16.14 or later (set RSTCK_NODE to use "
                "another)")


def node_available() -> bool:
    return bool(os.environ.get("RSTCK_NODE") or shutil.which("node"))


@pytest.fixture(autouse=True)
def _node_and_no_leftover_process():
    if not node_available():
        pytest.skip(NODE_MISSING)
    before = set(lifecycle.spawned_pids())
    yield
    mine = set(lifecycle.spawned_pids()) - before
    assert not still_running(mine), "the test left driver processes running"


def still_running(pids: set[int], *, grace_s: float = 10.0) -> set[int]:
    """The pids among `pids` that are still running (or unreaped) after `grace_s`: a process stopped when its
    check was abandoned at its deadline is reaped a moment later, by whichever thread next looks. A bound only:
    under soak's load (six workers beside the style matrix's processes) three seconds were once not enough."""
    end = time.monotonic() + grace_s
    while True:
        lifecycle.reap(0.05)
        running = {pid for pid in pids if pid in lifecycle.live_pids() or _exists(pid)}
        if not running or time.monotonic() >= end:
            return running
        time.sleep(0.02)


def _exists(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][:1] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False

"""The Node adapter's tests: skipped, with the reason, where there is no `node`; and each test must leave no
driver process of its own running."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable

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
    """The pids among `pids`, drivers this process started, that are still running (or unreaped) after
    `grace_s`: a process stopped when its check was abandoned at its deadline is reaped a moment later, by
    whichever thread next looks. Only the kit's own record tells: a pid leaves it once its process is reaped, and
    the system may give the same number to another process at once (the soak wraps the pid range), so /proc
    would name a stranger."""
    return still_found(lambda: pids & lifecycle.live_pids(), grace_s=grace_s)


def still_found(find: Callable[[], set[int]], *, grace_s: float = 10.0) -> set[int]:
    """What `find` still finds after `grace_s` (it is asked again until it finds nothing). A bound only: under
    soak's load (six workers beside the style matrix's processes) three seconds were once not enough."""
    end = time.monotonic() + grace_s
    while True:
        lifecycle.reap(0.05)
        found = find()
        if not found or time.monotonic() >= end:
            return found
        time.sleep(0.02)

"""The pool: driver processes started ahead of the checks that will use them, so that a check seldom waits for
Node to boot; each check gets a process of its own (docs/node.md, "Processes")."""

from __future__ import annotations

import atexit
import collections
import os
import threading
import weakref

from rstck.protocols.node.errors import ProcessEnded
from rstck.protocols.node.lifecycle import reap
from rstck.protocols.node.process import NodeProcess


class NodePool:
    """Driver processes for one module: one per check, the next `spares` started ahead on a thread of the
    pool's own, so that neither starting one nor waiting for Node to boot is on a check's path."""

    def __init__(self, module: str, *, node: str, env: dict[str, str], spares: int = 2):
        self.module = module
        self.node = node
        self.env = env
        self.spares = spares
        self._ready: collections.deque[NodeProcess] = collections.deque()
        self._changed = threading.Condition()
        self.closed = False
        self._thread: threading.Thread | None = None
        _POOLS.add(self)

    def spawn(self) -> NodeProcess:
        reap()
        return NodeProcess(self.module, node=self.node, env=self.env)

    def take(self) -> NodeProcess:
        """A process that has loaded the module (or is loading it) and serves nobody yet; the next one
        starts meanwhile."""
        with self._changed:
            if self.closed:
                raise ProcessEnded("the target was closed")
            process = self._ready.popleft() if self._ready else None
            self._start_thread()
            self._changed.notify_all()
        return process if process is not None else self.spawn()

    def keep(self, process: NodeProcess) -> None:
        """Put a process first in line: the one that was asked what the module exports, or one that served a
        check and was reset (isolation "reuse")."""
        with self._changed:
            if self.closed:
                process.kill(wait=False)
                return
            self._ready.appendleft(process)

    def _start_thread(self) -> None:
        if self._thread is None:
            from rstck.core.kit_threads import mark_kit_thread

            self._thread = threading.Thread(target=self._keep_spares, name="rstck-node-pool", daemon=True)
            mark_kit_thread(self._thread)  # never a thread of the implementation's, for settling
            self._thread.start()

    def _keep_spares(self) -> None:
        while True:
            with self._changed:
                while not self.closed and len(self._ready) >= self.spares:
                    self._changed.wait()
                if self.closed:
                    return
            try:
                process = self.spawn()
            except BaseException:  # noqa: BLE001 - `node` cannot start: the next check's own spawn says why
                return
            with self._changed:
                if self.closed:
                    process.kill(wait=False)
                    return
                self._ready.append(process)

    def close(self) -> None:
        with self._changed:
            self.closed = True
            spares, self._ready = list(self._ready), collections.deque()
            self._changed.notify_all()
        for process in spares:
            process.kill(wait=False)


_POOLS: weakref.WeakSet[NodePool] = weakref.WeakSet()


def pools() -> list[NodePool]:
    """Every pool alive (a target's; the kit's tests close those a test made)."""
    return list(_POOLS)


# Runs before the processes' own (rstck/protocols/node/lifecycle.py), which was registered first.
@atexit.register
def _close_every_pool() -> None:
    for pool in list(_POOLS):
        pool.close()


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's processes started ahead, nor the thread that starts them."""
    for pool in list(_POOLS):
        pool._ready.clear()
        pool._thread = None
        pool._changed = threading.Condition()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

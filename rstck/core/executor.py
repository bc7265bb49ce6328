"""The executor a target may hand to a threaded implementation: a pool that counts its work.

Imported only when a target asks for `target.executor`: `concurrent.futures` is not loaded otherwise.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time

from rstck.core.kit_threads import mark_kit_thread


class InstrumentedExecutor(concurrent.futures.ThreadPoolExecutor):
    """A thread pool that knows how many tasks are queued or running.

    Targets hand it to threaded implementations (`target.executor`) so that settling
    can wait for exactly their work instead of for a guessed time.
    """

    def __init__(self, max_workers: int = 8, thread_name_prefix: str = "rstck-executor"):
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._busy = threading.Condition()
        self._pending = 0
        self._finished = 0

    def submit(self, fn, /, *args, **kwargs):
        with self._busy:
            self._pending += 1
        try:
            return super().submit(self._run, fn, args, kwargs)
        except BaseException:
            self._done()
            raise

    def _run(self, fn, args, kwargs):
        mark_kit_thread()  # its work is counted here, not watched as a foreign thread's
        try:
            return fn(*args, **kwargs)
        finally:
            self._done()

    def _done(self) -> None:
        with self._busy:
            self._pending -= 1
            self._finished += 1
            self._busy.notify_all()

    @property
    def finished(self) -> int:
        return self._finished

    @property
    def pending(self) -> int:
        return self._pending

    def wait_idle(self, deadline: float) -> bool:
        """Block until no task is queued or running; False if the deadline came first."""
        with self._busy:
            while self._pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._busy.wait(remaining)
            return True

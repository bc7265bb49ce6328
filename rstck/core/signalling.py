"""The kit's signals in progress on each thread: the context of 2.3 and 3.1 (a call made from within a signal to
a subscriber), and what reaches the kit inside one of its calls but happened before it (`apart`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from rstck.core.signals import Trace


class Signalling:
    """One check's signals in progress, per thread."""

    def __init__(self, trace: Trace):
        self._trace = trace
        self._local = threading.local()

    @contextlib.contextmanager
    def inside(self, subscriber: Any, kind: str) -> Iterator[None]:
        """Marks that this thread is inside signal `kind` to `subscriber`."""
        stack = self._local.__dict__.setdefault("stack", [])
        stack.append((subscriber, kind))
        try:
            yield
        finally:
            stack.pop()

    def in_progress(self) -> list[tuple[Any, str]]:
        """(subscriber, signal kind) of the kit's signals this thread is inside, outermost first."""
        return list(self._local.__dict__.get("stack", ()))

    def happened_before_the_call(self) -> bool:
        """Whether what reaches the kit now is run `apart()`: it happened before the call the kit waits for."""
        return bool(self._local.__dict__.get("apart"))

    @contextlib.contextmanager
    def apart(self) -> Iterator[None]:
        """Run, outside the kit's calls and signals, what the implementation did on its own schedule but reaches
        the kit on a thread that is inside one of them: a Node callback that ran before the driver read the
        kit's next call is delivered while that call waits (rstck.adapters.node), and happened before it."""
        local = self._local.__dict__
        stack = local.pop("stack", None)
        depth = self._trace.nest_under_nothing()
        local["apart"] = local.get("apart", 0) + 1
        try:
            yield
        finally:
            local["apart"] -= 1
            self._trace.nest_again(depth)
            if stack is not None:
                local["stack"] = stack
            else:
                local.pop("stack", None)

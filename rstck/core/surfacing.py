"""The error the kit's subscribers raise on purpose, and the ways it comes back (the publisher's half of 2.13:
"raise this error condition in a fashion adequate for the runtime environment").

What the implementation reports while a check runs (log records, threads that die, errors its event loops
report: rstck.core.capture, and the Node adapter's console) becomes a note in the check's trace; a report or a
raise that carries the on-purpose error counts as surfacing it.
"""

from __future__ import annotations

import os

from rstck.core.capture import expect_a_report
from rstck.core.signals import Trace, show

# How deep an exception's causes, contexts and group members are searched for the on-purpose error.
_CARRIED_DEPTH = 8


class OnPurpose(RuntimeError):
    """What a kit subscriber raises from on_next on purpose, to see the publisher's half of 2.13."""


class Surfacing:
    """One check's on-purpose error, and how it came back: "raised", "log", "thread", "loop"."""

    def __init__(self, trace: Trace):
        self._trace = trace
        self.error = OnPurpose(f"the kit's subscriber fails on purpose (2.13) [{os.urandom(4).hex()}]")
        self.surfaced: list[str] = []

    def armed(self) -> OnPurpose:
        """The on-purpose error, about to be raised into the implementation: whatever reports it is heard from now
        on (rstck.core.capture.expect_a_report)."""
        expect_a_report()
        return self.error

    def report(self, source: str, exception: BaseException | None, text: str) -> None:
        """Something the implementation reported (`source`: "log", "thread", "loop"): a note in the trace."""
        self._trace.note(text if exception is None else f"{text}: {show(exception)}")
        if self.carried_by(exception) or (source == "log" and str(self.error) in text):
            self.surfaced.append(source)

    def carried_by(self, exception: BaseException | None, depth: int = 0) -> bool:
        """Whether `exception` is the on-purpose error, or carries it (as cause, context or in a group)."""
        if exception is None or depth > _CARRIED_DEPTH:
            return False
        if exception is self.error:
            return True
        inner = list(getattr(exception, "exceptions", ()) or ()) + [exception.__cause__, exception.__context__]
        return any(self.carried_by(e, depth + 1) for e in inner if isinstance(e, BaseException))

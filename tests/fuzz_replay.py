"""Fuzz steps replayed by hand, outside Hypothesis: a machine of the fuzzer's driven step by step by a test."""

from __future__ import annotations

import threading

from rstck.fuzz.machine import RunContext


class ReplayContext(RunContext):
    """A run context for steps replayed by hand: the test's own thread is the check's."""

    def open_session(self):
        session = self.target.open_session(self.timeout_s)
        session.check_thread = threading.current_thread()
        self.session = session
        return session

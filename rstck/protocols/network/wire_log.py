"""The wire log: a line per frame and per event of a connection in a check's trace, with the time since the
connection opened (`  12.3 ms  <- onNext(sub=2, 8 bytes: 0000000000000007)`).

A long stream brings thousands of frames a second: each arriving frame is recorded as a tuple and its line made
only if the trace is shown (frames are plain data: the trace keeps nothing of the implementation's alive), so that
the kit reads a stream as fast as a loaded machine lets it, and what crossed a cancel is read within the deadline.
"""

from __future__ import annotations

import time
from typing import Any

from rstck.core.signals import Deferred, Label, Trace
from rstck.protocols.network.wire import describe


def log_text(trace: Trace, started: float, text: str) -> None:
    trace.record("wire", "", (Label(_line(time.monotonic() - started, text)),))


def log_frame(trace: Trace, started: float, arrow: str, frame: Any) -> None:
    trace.record_fast("wire", "", Deferred(_frame_line, time.monotonic() - started, arrow, frame))


def _frame_line(elapsed_s: float, arrow: str, frame: Any) -> str:
    return _line(elapsed_s, f"{arrow} {describe(frame)}")


def _line(elapsed_s: float, text: str) -> str:
    return f"{elapsed_s * 1000:8.1f} ms  {text}"

"""The flight recorder: the trace of the example in progress, written out as it grows.

Only used when a shard is re-run after its worker process died (a crash in the target:
a segfault, os._exit). A dead process leaves no exception and no trace behind; the
recorder leaves the last example's signals and steps in a file, flushed before every
step, so the step that killed the process is the last line. Too slow to keep on always.
"""

from __future__ import annotations

import os
import pathlib
import re

from rstck.core.signals import Trace


class FlightRecorder:
    def __init__(self, path: str | os.PathLike):
        self.path = pathlib.Path(path)
        self._out = self.path.open("w", encoding="utf-8")
        self._written = 0
        self.seed: int | None = None

    def start_example(self, number: int) -> None:
        self._out.seek(0)
        self._out.truncate()
        self._written = 0
        self._out.write(f"(seed {self.seed}, example {number})\n")
        self._out.flush()

    def step(self, trace: Trace, text: str) -> None:
        signals = list(trace)
        for signal in signals[self._written:]:
            line = "  " * signal.depth + signal.call_text()
            if signal.outcome:
                line = f"{line:<34} -> {signal.outcome}"
            self._out.write(f"{signal.seq:>5}  {line}\n")
        self._written = len(signals)
        self._out.write(f"       (step: {text})\n")
        self._out.flush()

    def close(self) -> None:
        self._out.close()


def read_recording(path: str | os.PathLike) -> tuple[str, int | None]:
    """The recorded trace, and the seed of the run it belongs to (None if nothing was recorded)."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8").rstrip()
    except OSError:
        return "", None
    match = re.match(r"\(seed (\d+),", text)
    return text, int(match.group(1)) if match else None

"""The results file: where every face writes its result rows (`rstck check`, `rstck fuzz`, the pytest plugin and
the Spark fuzz engine's JSON Lines), one JSON Lines file per run (per xdist worker under pytest).

A row is written once, as it is final (a `rstck check` row after the allowlist has judged it), and flushed at
once: a run cut short (Ctrl-C, a killed CI job) keeps every row written so far, and a reader may watch the file
grow. The file is started by its first row, so a process that writes none (the xdist controller) leaves no
file, unless the run says it ran at all (a fuzz campaign that found nothing: `write_results`).
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import IO, Any

from rstck.core.verdict import BadInput

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def results_name(kind: str, name: str, suffix: str = ".jsonl") -> str:
    """KIND-NAME.jsonl, NAME made safe as a file name: check-<target>, fuzz-<target>, pytest-<xdist worker>."""
    return f"{kind}-{_UNSAFE.sub('_', name)}{suffix}"


class ResultsFile:
    """One run's rows, one JSON object a line. `option` names the command-line option that chose the
    directory, for the message when it cannot be written."""

    def __init__(self, directory: str | pathlib.Path, kind: str, name: str, *, option: str = "--results"):
        self.path = pathlib.Path(directory) / results_name(kind, name)
        self._option = option
        self._out: IO[str] | None = None

    def start(self) -> IO[str]:
        """Begin the file afresh, once (the rows of an earlier run under the same name are replaced)."""
        if self._out is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._out = self.path.open("w", encoding="utf-8")
            except OSError as exc:
                raise BadInput(f"{self._option} {self.path.parent}: cannot write ({exc.strerror})") from exc
        return self._out

    def write(self, row: dict[str, Any]) -> None:
        out = self.start()
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()  # a row is kept even if the run is cut short

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def write_results(directory: str | pathlib.Path, kind: str, name: str, rows: list[dict[str, Any]]) -> pathlib.Path:
    """The rows of a run known only at its end (a fuzz campaign's, merged across its shards), at once; the file is
    written even with no row, since the run ran. Its path."""
    with ResultsFile(directory, kind, name) as results:
        results.start()
        for row in rows:
            results.write(row)
    return results.path

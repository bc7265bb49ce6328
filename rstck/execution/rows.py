"""Result rows as files hold them: the schema, reading rows of any earlier version, and the merge.

Schema 2 (this version) is `findings.Result.row()`: every field of schema 1 plus evidence (what a reproducer
of a fail or warn needs, rstck/core/evidence.py; None otherwise), reproducer (the script written for it,
rstck/reports/repro; None until one is asked for) and legend (what the names in the trace stand for). Schema 1 added to schema 0 (rows written before
rows carried a version: target, spec, rule, level, check, role, verdict, violated, duration_s,
message, trace, settled_by, timed_out, node_id, seed, reason) schema, implementation,
section, text, description, replay, loaded_as, deviation and recorded_at. A reader fills what an older row
lacks, keeps what a newer one adds, and shows a verdict it does not know as it is: rows of a
later profile (another spec, other sections) need no change here or in the report.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import pathlib
import re
from typing import Any, Iterable

from rstck.core.verdict import BadInput

SCHEMA_VERSION = 2

# What a row must have to be one; every other field has a default (what `upgrade` fills in).
_REQUIRED = ("target", "rule", "verdict")
FIELD_DEFAULTS: dict[str, Any] = {
    "spec": "", "level": "", "check": "", "role": "", "violated": "", "duration_s": 0.0, "message": "",
    "trace": "", "legend": "", "settled_by": "", "timed_out": False, "node_id": "", "seed": "", "reason": "",
    "implementation": "", "section": "", "text": "", "description": "", "replay": "", "loaded_as": "", "deviation": None,
    "recorded_at": "", "also_charged": (), "evidence": None, "reproducer": None,
}
_VIEW_SUFFIX = re.compile(r" \(processor as \w+\)$")  # how a processor's views were named in schema 0


def recorded_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


@dataclasses.dataclass
class Loaded:
    """The rows read, and what could not be read or was superseded, said once each."""

    rows: list[dict[str, Any]]
    notes: list[str]
    sources: list[str]


def upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """A row of any schema as a row of this one (unknown fields kept)."""
    row = {**FIELD_DEFAULTS, **raw}
    row["schema"] = raw.get("schema", 0)
    if not row["implementation"]:
        row["implementation"] = _VIEW_SUFFIX.sub("", str(row["target"]))
    return row


def read_rows(paths: Iterable[str | pathlib.Path]) -> Loaded:
    """Every row of the JSON Lines files named (a directory stands for the *.jsonl files in it), merged.

    A line that is not a result row is left out and named in a note; a path that does not exist or
    holds no file to read is bad input."""
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    sources: list[str] = []
    for path in _files(paths):
        sources.append(str(path))
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise BadInput(f"{path}: cannot read ({exc.strerror})") from exc
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            problem = _problem(line)
            if isinstance(problem, str):
                notes.append(f"{path}:{number}: left out, {problem}")
            else:
                rows.append(upgrade(problem))
    merged, superseded = merge(rows)
    if superseded:
        notes.append(f"{superseded} row{'s' * (superseded != 1)} of older runs superseded by newer rows of the "
                     f"same check")
    return Loaded(merged, notes, sources)


def _files(paths: Iterable[str | pathlib.Path]) -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    for name in paths:
        path = pathlib.Path(name)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise BadInput(f"{path}: no *.jsonl result files in this directory")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise BadInput(f"{path}: no such file or directory")
    unique = list(dict.fromkeys(f.resolve() for f in files))  # a file named twice is read once
    return unique


def _problem(line: str) -> dict[str, Any] | str:
    """The row on `line`, or why it is not one."""
    try:
        raw = json.loads(line)
    except ValueError as exc:
        return f"not JSON ({exc})"
    if not isinstance(raw, dict):
        return "not a JSON object"
    missing = [field for field in _REQUIRED if not isinstance(raw.get(field), str)]
    if missing:
        return f"not a result row (no {', '.join(missing)})"
    return raw


def is_fuzz_row(row: dict[str, Any]) -> bool:
    """Whether the row is a fuzz finding (its check is `fuzz-<role>`), not a rule check's."""
    return str(row["check"]).startswith("fuzz-")


def check_key(row: dict[str, Any]) -> tuple[str, ...]:
    """What makes two rows results of the same check: a fuzz finding is its own, by item and replay."""
    finding = (row["violated"], row["seed"]) if is_fuzz_row(row) else ()
    return (row["implementation"], row["target"], row["spec"], row["rule"], row["check"], row["role"], *finding)


def merge(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """One row per check: the newest where runs overlap (rows without a time are the oldest). Rows of
    xdist workers and of different targets never overlap, so nothing of theirs is lost. The merged rows,
    and how many older rows gave way (an exact repeat of a row is not counted)."""
    newest: dict[tuple[str, ...], dict[str, Any]] = {}
    superseded = 0
    for row in rows:
        key = check_key(row)
        kept = newest.get(key)
        if kept is None:
            newest[key] = row
        elif kept != row:
            superseded += 1
            if str(row["recorded_at"]) >= str(kept["recorded_at"]):
                newest[key] = row
    return list(newest.values()), superseded

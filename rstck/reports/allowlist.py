"""The allowlist of known deviations (`rstck check --allow FILE`).

    [[deviation]]
    rule = "2.12"                 # an item id or a glob ("3.*")
    target = "mypkg.tck:target"   # the target as named on the command line, or a glob
    reason = "why this is accepted, and where it is tracked"
    expires = 2027-03-31          # the last day the entry holds

A failure (or warning) of a matching item becomes `allowed` and no longer fails the gate, until the
entry expires: from then on the failure counts again and the expired entry fails the gate by itself.
An entry that matches no failure any more is stale, and said so.
"""

from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import pathlib
import re
from typing import Any

from rstck.core.catalog import load_catalog
from rstck.core.verdict import BadInput, Verdict

_FIELDS = {"rule", "target", "reason", "expires"}
_ALLOWABLE = {Verdict.FAIL.value, Verdict.WARN.value}


@dataclasses.dataclass(frozen=True)
class Deviation:
    rule: str
    target: str
    reason: str
    expires: datetime.date
    where: str  # file:line of the entry, for every message about it

    def covers(self, row: dict[str, Any], names: set[str]) -> bool:
        item = row["violated"] or row["rule"]
        return fnmatch.fnmatchcase(item, self.rule) and self.applies_to({row["implementation"], row["target"], *names})

    def applies_to(self, names: set[str]) -> bool:
        return any(fnmatch.fnmatchcase(name, self.target) for name in names)

    def expired(self, today: datetime.date) -> bool:
        return today > self.expires

    def describe(self) -> str:
        return f"{self.where} ({self.rule} for {self.target})"


@dataclasses.dataclass
class Allowance:
    """What the allowlist did to a run: the rows (failures it accepts now `allowed`), and what the gate
    must hear: entries expired (they fail the gate) and entries stale (a note)."""

    rows: list[dict[str, Any]]
    expired: list[Deviation]
    stale: list[Deviation]

    def messages(self) -> list[str]:
        lines = [f"deviation {d.describe()} expired on {d.expires}: its failures count again, and the entry "
                 f"fails the gate until it is renewed or removed" for d in self.expired]
        lines += [f"deviation {d.describe()} is stale: nothing it allows failed; remove the entry"
                  for d in self.stale]
        return lines


def load_allowlist(path: str | pathlib.Path) -> list[Deviation]:
    """The entries of `path`; anything wrong is bad input naming the file and line."""
    import tomllib  # only for a run given an allowlist

    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"--allow {path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError:
        raise BadInput(f"--allow {path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"deviation"})
    if unknown:
        raise BadInput(f"{path}: unknown table {unknown[0]!r}; entries are [[deviation]] tables")
    entries = data.get("deviation", [])
    if not isinstance(entries, list):
        raise BadInput(f"{path}: `deviation` must be an array of tables ([[deviation]])")
    starts = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[\s*deviation\s*\]\]", line)]
    lines = text.splitlines()
    return [_deviation(entry, path, number, starts, lines) for number, entry in enumerate(entries)]


def _deviation(entry: Any, path: pathlib.Path, number: int, starts: list[int], lines: list[str]) -> Deviation:
    start = starts[number] if number < len(starts) else 0
    end = starts[number + 1] if number + 1 < len(starts) else len(lines) + 1

    def at(key: str | None = None) -> str:
        """file:line of the entry, or of its `key` line when it has one."""
        if key and start:
            for n in range(start, end):
                if re.match(rf"\s*{re.escape(key)}\s*=", lines[n - 1]):
                    return f"{path}:{n}"
        return f"{path}:{start}" if start else f"{path} (deviation {number + 1})"

    if not isinstance(entry, dict):
        raise BadInput(f"{at()}: a deviation must be a table")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise BadInput(f"{at(unknown[0])}: unknown key {unknown[0]!r}; a deviation has rule, target, reason, expires")
    for key in ("rule", "target", "reason", "expires"):
        if key not in entry:
            raise BadInput(f"{at()}: the deviation has no {key!r}")
    for key in ("rule", "target", "reason"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise BadInput(f"{at(key)}: {key!r} must be a non-empty string")
    catalog = load_catalog()
    if not any(fnmatch.fnmatchcase(item.id, entry["rule"]) for item in catalog.items):
        raise BadInput(f"{at('rule')}: rule {entry['rule']!r} matches no catalogue item; `rstck rules` lists them")
    expires = entry["expires"]
    if isinstance(expires, str):
        try:
            expires = datetime.date.fromisoformat(expires)
        except ValueError:
            pass
    if isinstance(expires, datetime.datetime) or not isinstance(expires, datetime.date):
        raise BadInput(f"{at('expires')}: 'expires' must be a date such as 2027-03-31, got {entry['expires']!r}")
    return Deviation(entry["rule"], entry["target"], entry["reason"].strip(), expires, at())


class Allowlist:
    """The allowlist at work on one run: each row judged as it comes (so that it is written once, as judged), and
    at the end what the gate must hear. `names`: what the user typed for the one target of a run, by which an
    entry may name it as well as by a row's target."""

    def __init__(self, deviations: list[Deviation], *, names: set[str] = frozenset(),
                 today: datetime.date | None = None):
        self.deviations = deviations
        self.names = set(names)
        self.today = today or datetime.date.today()
        self._live = [d for d in deviations if not d.expired(self.today)]
        self._used: set[Deviation] = set()

    def judge(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row, or its failure turned `allowed` when a live entry covers it (the entry and the verdict it
        replaced recorded in `deviation`)."""
        if row["verdict"] not in _ALLOWABLE:
            return row
        entry = next((d for d in self._live if d.covers(row, self.names)), None)
        if entry is None:
            return row
        self._used.add(entry)
        return {**row, "verdict": Verdict.ALLOWED.value,
                "deviation": {"verdict": row["verdict"], "reason": entry.reason, "expires": entry.expires.isoformat(),
                              "entry": entry.where}}

    def allowance(self, rows: list[dict[str, Any]], *, selected: set[str] | None = None) -> Allowance:
        """What the allowlist did to these (judged) rows. Only entries for a target of these rows (or of `names`)
        count, and only for items in `selected` (None: every item) when it comes to staleness."""
        targets = {row["implementation"] for row in rows} | {row["target"] for row in rows} | self.names
        relevant = [d for d in self.deviations if d.applies_to(targets)]
        # Rows judged elsewhere (by a pytest-xdist worker) name the entry that allowed them.
        entries = {(row.get("deviation") or {}).get("entry") for row in rows}
        used = self._used | {d for d in self._live if d.where in entries}
        stale = [d for d in relevant if d in self._live and d not in used and (selected is None or any(
            fnmatch.fnmatchcase(item, d.rule) for item in selected))]
        return Allowance(rows, [d for d in relevant if d.expired(self.today)], stale)


def apply_allowlist(rows: list[dict[str, Any]], deviations: list[Deviation], *, names: set[str] = frozenset(),
                    selected: set[str] | None = None, today: datetime.date | None = None) -> Allowance:
    """Rows of any runs judged by the allowlist at once (`rstck report --allow`); see Allowlist."""
    allowlist = Allowlist(deviations, names=names, today=today)
    return allowlist.allowance([allowlist.judge(row) for row in rows], selected=selected)

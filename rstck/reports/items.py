"""From result rows to one verdict per catalogue item: what the table, the HTML report, JUnit and the gate show,
and which of those verdicts count as failed items (the one number every face reports); and which fuzz findings
repeat a check's finding, folded into it everywhere (`confirmed_findings`)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from typing import Any

from rstck.execution.plan import untested_items
from rstck.execution.rows import is_fuzz_row
from rstck.core.catalog import load_catalog
from rstck.core.checks import all_checks
from rstck.core.plugins import profiles
from rstck.core.verdict import Verdict

# Which verdict speaks for an item with several checks; a verdict this version does not know weighs as
# much as an error (it needs a look).
SEVERITY = ["fail", "error", "allowed", "warn", "unsupported", "pass", "n/a", "untested"]
_UNKNOWN = SEVERITY.index("error")
# Item verdicts in the order a summary lists them.
SUMMARY_ORDER = ["pass", "fail", "error", "allowed", "blocked", "warn", "unsupported", "n/a", "untested"]


@dataclasses.dataclass
class ItemVerdict:
    verdict: str
    reason: str
    rows: list[dict[str, Any]]  # the rows charged to the item, then those another item's finding stopped


def item_verdicts(rows: list[dict[str, Any]], rules: str | None = None, *,
                  untested_by_spec: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, ItemVerdict]:
    """Each item's verdict and one-line reason: catalogue items in catalogue order, then items of rows
    this catalogue does not know (a later profile's), in the order first seen.

    A finding counts for the item it is charged to (a 1.1 violation seen by a 3.9 check is 1.1's). An item
    whose checks passed but one of which was stopped by another item's finding is `blocked`: that check
    could not decide it. An item with no check of its own run, but charged by another, shows that charge.
    Items declared untested show in every section a row was seen in; `untested_by_spec` is what the run's
    planning already found of them (rstck.execution.plan.untested_by_spec), read afresh for the specs it lacks.
    """
    charged: dict[str, list[dict[str, Any]]] = {}
    blocked: dict[str, list[dict[str, Any]]] = {}
    confirmed = confirmed_findings(rows)
    for row in rows:
        if not row["rule"]:  # an error of the fuzz phase: not an item's
            continue
        item_id = row["violated"] or row["rule"]
        check = confirmed.get(id(row))
        charged.setdefault(item_id, []).append(row if check is None else _confirming(row, check))
        also = row.get("also_charged") or ()
        for other in also:  # another sentence the same check found broken (or its own item, decided all the same)
            charged.setdefault(other["rule"], []).append(
                {**row, "violated": "" if other["rule"] == row["rule"] else other["rule"],
                 "verdict": other["verdict"], "reason": other["reason"]})
        if item_id != row["rule"] and all(other["rule"] != row["rule"] for other in also):
            blocked.setdefault(row["rule"], []).append(row)
    catalog = load_catalog()
    sections = {(row["spec"], catalog[row["rule"]].section if row["rule"] in catalog else row["section"])
                for row in rows if row["rule"]}
    untested = {item_id: reason for item_id, reason in _declared_untested(rules, {spec for spec, _ in sections},
                                                                          untested_by_spec or {}).items()
                if (catalog[item_id].spec, catalog[item_id].section) in sections}
    order = [item.id for item in catalog.items] + [i for i in {**charged, **blocked} if i not in catalog]
    verdicts: dict[str, ItemVerdict] = {}
    first_error: dict[str, str] = {}
    for item_id in order:
        # A fuzz finding that confirms a check's comes after the checks: the check's finding speaks for the item.
        found = sorted(charged.get(item_id, []), key=lambda row: bool(row.get("confirms")))
        stopped = blocked.get(item_id, [])
        if found or stopped or item_id in untested:
            verdict, reason = _item_verdict(found, stopped, untested.get(item_id))
            if verdict == Verdict.ERROR.value:  # the same error in many items: told once
                seen = first_error.setdefault(re.sub(r"\d+", "N", reason.split(": ", 1)[-1]), item_id)
                reason = reason if seen == item_id else f"the same error as {seen}"
            verdicts[item_id] = ItemVerdict(verdict, reason, found + stopped)
    return verdicts


def confirmed_findings(rows: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The fuzz findings among `rows` that repeat a check's finding, and the check row each repeats, by the id() of
    the fuzz row: the same implementation, the same item charged, the same verdict (a check's row charges its
    `violated` item, or its own, and those of its `also_charged`; the first check so charged is the one repeated).

    Such a fuzz finding confirms the check's finding: one finding, counted once. Every face folds it into the
    check's through this one function: `item_verdicts` (the table, JUnit, the HTML report) lists its row after
    the check's, saying whose finding it confirms, and `rstck check` prints it under the check's finding, not as a
    failure of its own. A fuzz finding of an item no check found so stays a finding of its own."""
    first_check: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        if row["rule"] and not is_fuzz_row(row):
            for item_id, verdict in _charges(row):
                first_check.setdefault((row["implementation"], item_id, verdict), row)
    confirmed: dict[int, dict[str, Any]] = {}
    for row in rows:
        if row["rule"] and is_fuzz_row(row) and row["verdict"] in _FINDINGS:
            check = first_check.get((row["implementation"], row["violated"] or row["rule"], row["verdict"]))
            if check is not None:
                confirmed[id(row)] = check
    return confirmed


# The verdicts that are findings (of a check's, or the fuzzer's): what a fuzz finding can confirm.
_FINDINGS = frozenset({Verdict.FAIL.value, Verdict.WARN.value, Verdict.ALLOWED.value})


def _charges(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(item, verdict) of every item the row charges: its own finding's, and each of its also_charged."""
    return [(row["violated"] or row["rule"], row["verdict"])] + [
        (other["rule"], other["verdict"]) for other in row.get("also_charged") or ()]


def _confirming(row: dict[str, Any], check: dict[str, Any]) -> dict[str, Any]:
    """A fuzz row as the faces show it when it repeats `check`'s finding: its reason and message say so."""
    said = f"confirms the finding of {check['check']}"
    return {**row, "confirms": check["check"], "reason": f"{said}: {row['reason']}",
            "message": f"{said}\n{row['message']}"}


def by_implementation(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of each implementation, in the order first seen: items are judged per implementation."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["implementation"], []).append(row)
    return found


def is_failure(verdict: str, *, strict: bool = False) -> bool:
    """Whether an item's verdict is a failed item, in the table's summary, the gate, JUnit, the HTML report and
    pytest alike: a MUST item failed; under the strict option (`rstck check --strict`, `--rstck-strict`) a SHOULD
    or RECOMMENDED item not met (`warn`) too. A MAY item not offered (`unsupported`) never is: the sentence allows
    it; nor is `blocked`, whose finding fails the item it is charged to."""
    return verdict == Verdict.FAIL.value or (strict and verdict == Verdict.WARN.value)


def failed_items(verdicts: Mapping[str, ItemVerdict], *, strict: bool = False) -> list[str]:
    return [item_id for item_id, found in verdicts.items() if is_failure(found.verdict, strict=strict)]


def _declared_untested(rules: str | None, specs: set[str],
                       known: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    declared = {item_id: reason for spec in specs & known.keys() for item_id, reason in known[spec].items()}
    missing = specs - known.keys()
    if missing:  # importing check modules is costly: only for what the caller could not say
        declared.update((item.id, reason) for item, reason in untested_items(rules, specs=missing))
    return declared


def severity(verdict: str) -> int:
    return SEVERITY.index(verdict) if verdict in SEVERITY else _UNKNOWN


def _stopped_by(row: dict[str, Any]) -> str:
    """What stopped a check from deciding its item."""
    return f"{row['check']} was stopped by {stopping_finding(row)}"


def stopping_finding(row: dict[str, Any]) -> str:
    """The finding in a row that stopped its check, and on which of the target's factories (a processor's views
    have names of their own) it was found: `a 1.1 fail found on the publisher`."""
    view = _VIEW.search(str(row["target"]))
    subject = _subject(row)
    on = view.group(1) if view else (f"the {subject}" if subject else str(row["target"]))
    return f"a {row['violated']} {row['verdict']} found on {on}"


def _subject(row: dict[str, Any]) -> str:
    """What a check ran on, as its profile registers it (a check of a Subscriber sentence may test the publisher,
    as 2.12's does); for a check this kit does not know, what its role says."""
    subject = _subjects_of(str(row["spec"])).get((row["rule"], row["check"]))
    if subject:
        return subject
    role = row.get("role") or ""
    return "publisher" if role == "subscription" else role  # a subscription is what a publisher hands out


@functools.lru_cache(maxsize=None)
def _subjects_of(spec: str) -> dict[tuple[str, str], str]:
    wanted = [profile for profile in profiles() if profile.name == spec]
    return {(check.rule, check.name): check.subject for check in all_checks(wanted)} if wanted else {}


_VIEW = re.compile(r"\((processor as \w+)\)$")


def _item_verdict(rows: list[dict[str, Any]], stopped: list[dict[str, Any]], untested: str | None) -> tuple[str, str]:
    if not rows and stopped:
        return "blocked", _stopped_by(stopped[0])
    if not rows:
        return Verdict.UNTESTED.value, untested or ""
    worst = min(rows, key=lambda r: severity(r["verdict"]))
    if worst["verdict"] != Verdict.PASS.value:
        return worst["verdict"], f"{worst['check']}: {worst['reason']}" if len(rows) > 1 else worst["reason"]
    passed = sum(r["verdict"] == Verdict.PASS.value for r in rows)
    reason = f"{passed} of {len(rows) + len(stopped)} checks passed" if len(rows) + len(stopped) > 1 else ""
    others = [r for r in rows if r["verdict"] != Verdict.PASS.value]
    if others:
        reason += f"; {others[0]['check']}: {others[0]['reason']}"
    if stopped:
        return "blocked", f"{reason}; {_stopped_by(stopped[0])}"
    return Verdict.PASS.value, reason


def gate_status(rows: list[dict[str, Any]], *, strict: bool = False) -> tuple[str, int]:
    """The gate's word and exit code for these rows: a MUST failure not allowed (under `strict`, a SHOULD item not
    met as well), then errors, decide."""
    verdicts = {row["verdict"] for row in rows}
    if Verdict.FAIL.value in verdicts:
        return "NOT CONFORMANT (a MUST item failed)", 1
    if strict and _warned(rows):
        return "NOT CONFORMANT (strict: a SHOULD item was not met)", 1
    if Verdict.ERROR.value in verdicts:
        return "INCOMPLETE (checks could not run)", 2
    return "conformant", 0


def _warned(rows: list[dict[str, Any]]) -> bool:
    """Whether a SHOULD item was not met: a warn may also ride on a row another finding decided (its
    also_charged), and its item is `warn` all the same."""
    return any(row["verdict"] == Verdict.WARN.value or (row["verdict"] != Verdict.ALLOWED.value and any(
        other["verdict"] == Verdict.WARN.value for other in row.get("also_charged") or ())) for row in rows)

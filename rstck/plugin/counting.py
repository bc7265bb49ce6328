"""Each broken sentence counted once under pytest (unless --rstck-strict).

Several checks of one item may find its sentence broken; a check's row may carry findings of items other than
its own (the item another item's finding stopped is `blocked`, as `rstck check` says); a fuzz item finds what
checks found already. An item fails for a finding only if no item of the same target failed for it before it in
this process; otherwise it is skipped (the same finding, or blocked) or passes, naming the item that reported the
finding. Items of one target that run in another xdist worker are not known here: there a finding may be counted
twice, never lost. So every item of a target carries the xdist group of its target (`same_worker`): under
`--dist loadgroup` they run in one worker, and each finding is counted once there too.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from rstck.core.verdict import Verdict

FAILING = (Verdict.FAIL.value,)


@dataclasses.dataclass(frozen=True)
class Decision:
    """What an item does with its row: its own item's verdict, and the findings it alone reports."""

    own: str  # the item's own verdict: a verdict value, or "blocked"
    reports: tuple[str, ...]  # failing items this item is the first to report (its own included)
    reported_by: dict[str, str]  # failing items reported before, by the node id that reported them


def same_worker(scope: str) -> pytest.MarkDecorator:
    """The xdist group of the items of the target `scope` (the collector's node id). xdist reads a node id's group
    after its last "@" only when no "]" follows it, so the name has none."""
    return pytest.mark.xdist_group(name="rstck " + scope.replace("[", "(").replace("]", ")"))


class FindingsReported:
    """The failing items reported so far in this process, by target (the collector's node id)."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], str] = {}

    def decide(self, scope: str, row: dict[str, Any]) -> Decision:
        own_rule = row["rule"]
        findings = {row["violated"] or own_rule: row["verdict"]}
        for other in row.get("also_charged") or ():
            findings.setdefault(other["rule"], other["verdict"])
        own = findings.get(own_rule, "blocked")
        failing = [rule for rule, verdict in findings.items() if verdict in FAILING]
        reported_by = {rule: self._by[(scope, rule)] for rule in failing if (scope, rule) in self._by}
        return Decision(own, tuple(rule for rule in failing if rule not in reported_by), reported_by)

    def record(self, scope: str, rules: Any, node_id: str) -> None:
        for rule in rules:
            self._by.setdefault((scope, rule), node_id)

    def reported(self, scope: str, rule: str) -> str | None:
        return self._by.get((scope, rule))

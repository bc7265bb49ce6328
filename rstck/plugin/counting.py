"""Each broken sentence counted once under pytest, so that pytest fails as many items as `rstck check` counts
failed items (rstck/reports/items.py); under --rstck-strict a SHOULD item not met (`warn`) is a broken sentence too,
counted once as `rstck check --strict` counts it.

Several checks of one item may find its sentence broken; a check's row may carry findings of items other than
its own (the item another item's finding stopped is `blocked`, as `rstck check` says); a fuzz item finds what
checks found already. An item fails for a finding only if no item of the same target failed for it before it in
this process; otherwise it is skipped (the same finding, or blocked) or passes, naming the item that reported the
finding. A pytest item fails once, so a check item counts one new finding: its own item's if that is among them,
else the first; another it found too is left for the next item that finds it, which then fails for it (if none
does, the one failure stands for both; a fuzz item, too, fails once for every finding it is the first to see).

Items of one target that run in another xdist worker are not known here: there a finding may be counted twice,
never lost. So every item of a target carries the xdist group of its target (`same_worker`): under
`--dist loadgroup` they run in one worker, and each finding is counted once there too.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from rstck.reports.items import is_failure


@dataclasses.dataclass(frozen=True)
class Decision:
    """What an item does with its row: its own item's verdict, and the findings it alone reports."""

    own: str  # the item's own verdict: a verdict value, or "blocked"
    reports: tuple[str, ...]  # the failed item this item is the first to report and fails for (its own first)
    reported_by: dict[str, str]  # failed items reported before, by the node id that reported them
    left: tuple[str, ...] = ()  # failed items it found too, not reported before, left for another item to count


def same_worker(scope: str) -> pytest.MarkDecorator:
    """The xdist group of the items of the target `scope` (the collector's node id). xdist reads a node id's group
    after its last "@" only when no "]" follows it, so the name has none."""
    return pytest.mark.xdist_group(name="rstck " + scope.replace("[", "(").replace("]", ")"))


class FindingsReported:
    """The failed items reported so far in this process, by target (the collector's node id). `strict`: a `warn`
    is a failed item (--rstck-strict), as `rstck check --strict` counts it."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._by: dict[tuple[str, str], str] = {}

    def fails(self, verdict: str) -> bool:
        """Whether a finding with this verdict is a failed item."""
        return is_failure(verdict, strict=self.strict)

    def decide(self, scope: str, row: dict[str, Any]) -> Decision:
        own_rule = row["rule"]
        findings = {row["violated"] or own_rule: row["verdict"]}
        for other in row.get("also_charged") or ():
            findings.setdefault(other["rule"], other["verdict"])
        own = findings.get(own_rule, "blocked")
        failing = [rule for rule, verdict in findings.items() if self.fails(verdict)]
        reported_by = {rule: self._by[(scope, rule)] for rule in failing if (scope, rule) in self._by}
        new = sorted((rule for rule in failing if rule not in reported_by), key=lambda rule: rule != own_rule)
        return Decision(own, tuple(new[:1]), reported_by, tuple(new[1:]))

    def record(self, scope: str, rules: Any, node_id: str) -> None:
        for rule in rules:
            self._by.setdefault((scope, rule), node_id)

    def reported(self, scope: str, rule: str) -> str | None:
        return self._by.get((scope, rule))

"""From what was found to one result row: the one place where a violation, a hang or an error becomes a
verdict, a reason and a message, whether a check or a fuzz run found it.

A row's message starts with the item charged and its sentence (or the error), then what was expected and what
was observed; a check's row goes on with every other item the same behaviour broke, a fuzz finding's with how it
was found; then the trace, and for a fuzz finding the command that replays it. Its reason is the line a table
shows. A call that never returned is judged here too, for both: the call it is stuck in is charged, unless a
violation recorded before it weighs more (a hang never hides a violation).
"""

from __future__ import annotations

import copy
import dataclasses
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rstck.core.catalog import load_catalog
from rstck.core.evidence import HANG
from rstck.core.verdict import LEVEL_VERDICTS, RuleViolation, Verdict
from rstck.execution.rows import SCHEMA_VERSION, recorded_now

if TYPE_CHECKING:
    from rstck.core.calls import Outstanding
    from rstck.core.session import Session


@dataclasses.dataclass
class Result:
    """One result row: the JSON Lines record every check and every fuzz finding produces (its schema:
    rstck/execution/rows.py)."""

    target: str
    spec: str
    rule: str
    level: str
    check: str
    role: str
    verdict: Verdict
    violated: str = ""  # the item actually violated, when it differs from `rule`
    duration_s: float = 0.0
    message: str = ""
    trace: str = ""
    legend: str = ""  # what the names in the trace stand for (rstck/core/labels.py), one line each
    settled_by: str = "idle"
    timed_out: bool = False
    node_id: str = ""
    seed: str = ""
    replay: str = ""  # the command that replays a fuzz finding
    implementation: str = ""  # the target the user named (a processor's views share it); `target` when empty
    loaded_as: str = ""  # MODULE:ATTR of the target, when it was loaded by that name
    description: str = ""  # what the check does: the first paragraph of its docstring
    deviation: dict[str, str] | None = None  # the allowlist entry that made a failure `allowed`
    # Items other than `violated` this check decided too, each {rule, verdict, reason}: another sentence the
    # same behaviour broke, or the check's own item when another's finding did not keep it from deciding.
    also_charged: list[dict[str, str]] = dataclasses.field(default_factory=list)
    recorded_at: str = dataclasses.field(default_factory=recorded_now)
    # What a reproducer of a fail or warn needs (rstck/core/evidence.py, rstck/reports/repro), or why none can be
    # made: {"unsupported": reason}. None for every other verdict.
    evidence: dict[str, Any] | None = None
    # The finding's standalone script, once one is written (rstck/reports/repro): {"path", "command"}, or {"none": why}.
    reproducer: dict[str, str] | None = None

    reason: str = ""  # one line, for tables
    # Threads an abandoned check left busy (not part of the row): the worker process is then replaced.
    leftovers: list[str] = dataclasses.field(default_factory=list, repr=False, compare=False)
    # The violation the verdict rests on (not part of the row): its claim says how a reproducer observes it.
    finding: RuleViolation | None = dataclasses.field(default=None, repr=False, compare=False)

    def row(self) -> dict[str, Any]:
        row = {"schema": SCHEMA_VERSION, **copy.deepcopy({name: getattr(self, name) for name in _RESULT_FIELDS})}
        row["verdict"] = self.verdict.value
        row["implementation"] = self.implementation or self.target
        # The sentence travels with the row: a report of a later version reads it without this catalogue.
        item = load_catalog()[self.rule] if self.rule in load_catalog() else None
        row["section"], row["text"] = (item.section, item.text) if item else ("", "")
        return row

    @classmethod
    def of_row(cls, row: dict[str, Any]) -> Result:
        """The Result a row stands for (a row that crossed from a worker process)."""
        values = {name: row[name] for name in _RESULT_FIELDS if name in row}
        return cls(**{**values, "verdict": Verdict(row["verdict"])})


_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(Result) if f.name not in ("leftovers", "finding"))
# The fields of a result row (JSON Lines).
ROW_FIELDS = ("schema", *_RESULT_FIELDS, "section", "text")


def charge(result: Result, violation: RuleViolation) -> None:
    """The row charges `violation`: its item's verdict, the reason, and the message's head (the item and its
    sentence, expected, observed, and every other item `result.also_charged` names as broken)."""
    result.finding = violation
    item = load_catalog()[violation.rule]
    result.verdict = LEVEL_VERDICTS[item.level]
    result.timed_out = result.timed_out or violation.timed_out
    result.violated = violation.rule
    header = f"{item.id} {item.level}: {item.text}"
    if violation.rule != result.rule:
        header = f"(while checking {result.rule} {result.check}) {header}"
    bound = " (decided by a deadline)" if result.timed_out else ""
    result.reason = f"{violation.rule}: expected {violation.expected}; observed {violation.observed}{bound}"
    result.message = (f"{header}\n  expected: {violation.expected}\n"
                      f"  observed: {violation.observed}{bound}")
    for other in result.also_charged:
        if other["verdict"] != Verdict.PASS.value:
            result.message += f"\n  also {other['verdict']}: {other['reason']}"


def reproduction_evidence(session: Session, finding: RuleViolation | None, rule: str,
                          timeout_s: float) -> dict[str, Any]:
    """What a reproducer of `finding` (a violation of `rule`) needs, or why none can be made
    (rstck/core/evidence.py); `timeout_s`: the deadline the calls had."""
    evidence = session.evidence.export()
    claim = getattr(finding, "claim", None)
    if "unsupported" in evidence:
        return evidence
    if claim is None:
        return {"unsupported": f"how the kit judged {rule} here is not one a reproducer can express yet"}
    return {**evidence, "claim": {**claim, "rule": rule}, "deadline_s": timeout_s,
            "responsiveness_bound_s": session.target.responsiveness_bound_s, "event_loop": session.settler.loop_used}


def charge_error(result: Result, reason: str, message: str = "") -> None:
    """The row is an error: the target or the kit broke, no item's sentence (`message`: when it says more than
    its reason)."""
    result.verdict, result.reason = Verdict.ERROR, reason
    result.message = message or f"error: {reason}"


def attach_trace(result: Result, trace: str, legend: str = "") -> None:
    """The evidence: the trace in the row, and at the end of the message of any verdict but a pass, with the
    legend of its names (what the kit's stand for, the class of each object of the implementation's)."""
    result.trace = trace
    result.legend = legend
    if result.verdict is not Verdict.PASS and trace:
        result.message = f"{result.message}\n  trace:\n{textwrap.indent(trace, '  ')}"
        if legend:
            result.message += f"\n  where:\n{textwrap.indent(legend, '      ')}"


def lost_row(info: dict[str, Any], reason: str) -> dict[str, Any]:
    """The row of a check that its worker process's death (or silence) cut short: `info` is its plan entry
    (rstck.execution.plan.planned_info)."""
    result = Result(target=info["target"], spec=info["spec"], rule=info["rule"], level=info["level"],
                    check=info["check"], role=info["role"], verdict=Verdict.PASS,
                    implementation=info["implementation"])
    charge_error(result, reason)
    return result.row()


# -- hangs ----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Hang:
    """Why the watcher stopped waiting: the call the check or fuzz step was stuck in (None: the kit's own code)."""

    stuck: Outstanding | None
    waited_s: float
    known_from: str = ""  # the check in which the same call hung first, when it was recognised by that

    @property
    def how_long(self) -> str:
        said = f"it had not returned after {self.waited_s:.1f} s"
        return said + (f", and it never returned in {self.known_from}" if self.known_from else "")


@dataclasses.dataclass(frozen=True)
class HangFinding:
    """What a hang is charged as: the hang itself, or a violation recorded before it that weighs more (the hang
    is then told as `then`). A charged violation without a rule is the target's error, no item's: a factory
    that never returned, or a fuzz step that never ended outside any call."""

    charged: RuleViolation
    then: str = ""


def judge_hang(hang: Hang, violations: Sequence[RuleViolation], *, rule: str = "",
               running: str = "the check") -> HangFinding:
    """Judge a call that never returned: it charges its own rule; with no call under way, `running` (the check
    of `rule`, or a fuzz step) is charged to `rule`. A factory that hangs is an error of the target whatever came
    before it, as a factory that raises is; any other hang gives way to a violation recorded before it that
    weighs more."""
    stuck = hang.stuck
    if stuck is not None:
        hung = RuleViolation(stuck.rule, f"{stuck.text} to return", hang.how_long, timed_out=True, claim=HANG)
    else:
        hung = RuleViolation(rule, f"{running} to finish",
                             hang.how_long.replace("it had not returned", "it was still running"), timed_out=True)
    factory = stuck is not None and not stuck.rule
    if violations and not factory:
        weighs_most = load_catalog().most_severe([*violations, *([hung] if hung.rule else [])])
        if weighs_most is not hung:
            return HangFinding(weighs_most, then=f"then: {hung.expected}: {hung.observed} (decided by a deadline)")
    return HangFinding(hung)

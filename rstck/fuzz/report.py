"""Findings as the user reads them (rule first, then the trace, then how to replay) and as result rows."""

from __future__ import annotations

import textwrap

from rstck.core.catalog import load_catalog
from rstck.execution.runner import Result
from rstck.core.verdict import LEVEL_VERDICTS, Verdict
from rstck.fuzz.run import Finding

SPEC = "reactive-streams"


def headline(finding: Finding) -> str:
    """`3.9 MUST: <the rule's sentence>` for a violation; what broke for an error."""
    if finding.kind == "violation":
        item = load_catalog()[finding.rule]
        return f"{item.id} {item.level}: {item.text}"
    return f"error while fuzzing the {finding.role}: {finding.observed.splitlines()[0]}"


def describe(finding: Finding, replay: str) -> str:
    """The failure message: the violated rule, expected/observed, the numbered trace, one replay command."""
    bound = " (decided by a deadline)" if finding.timed_out else ""
    lines = [headline(finding),
             f"  expected: {finding.expected}",
             f"  observed: {finding.observed}{bound}"]
    how = f"found fuzzing the {finding.role} (seed {finding.seed}"
    steps = len(finding.steps)
    if finding.note:
        how += f"; {finding.note})"
    elif finding.shrunk:
        how += f"; shrunk to {steps} step{'s' * (steps != 1)})"
    else:
        how += "; not shrunk)"
    lines.append(f"  {how}")
    if finding.trace:
        lines += ["  trace:", textwrap.indent(finding.trace, "  ")]
    lines.append(f"  replay: {replay}")
    return "\n".join(lines)


def result_row(finding: Finding, *, target_name: str, replay: str, duration_s: float = 0.0,
               node_id: str = "", loaded_as: str = "") -> Result:
    """The same row `rstck check` writes; `seed` holds the --replay argument (SEED:BLOB)."""
    if finding.kind == "violation":
        item = load_catalog()[finding.rule]
        verdict, level = LEVEL_VERDICTS[item.level], item.level
        reason = f"{finding.rule}: expected {finding.expected}; observed {finding.observed}"
    else:
        verdict, level = Verdict.ERROR, ""
        reason = f"fuzzing the {finding.role}: {finding.observed.splitlines()[0]}"
    return Result(target=target_name, spec=SPEC, rule=finding.rule, level=level, check=f"fuzz-{finding.role}",
                  role=finding.role, verdict=verdict, violated=finding.rule, duration_s=round(duration_s, 6),
                  message=describe(finding, replay), trace=finding.trace, timed_out=finding.timed_out,
                  node_id=node_id, seed=finding.replay, reason=reason, replay=replay, loaded_as=loaded_as)


def merge(findings: list[Finding]) -> list[tuple[Finding, int]]:
    """One finding per role and rule (the one with the shortest trace), with how many runs found it."""
    best: dict[tuple[str, str, str], Finding] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for finding in findings:
        key = finding.key
        counts[key] = counts.get(key, 0) + 1
        kept = best.get(key)
        if kept is None or _size(finding) < _size(kept):
            best[key] = finding
    return [(best[key], counts[key]) for key in best]


def _size(finding: Finding) -> tuple[int, int, int]:
    # Shrunk beats unshrunk; then fewer trace lines, then fewer steps.
    return (not finding.shrunk, finding.trace.count("\n"), len(finding.steps))

"""Findings as result rows: the rows `rstck check` writes, made the same way (rstck/execution/findings.py), whose
message is what the user reads: the rule first, then expected and observed, how the finding was found, the
trace, and the one command that replays it."""

from __future__ import annotations

from rstck.core.catalog import load_catalog
from rstck.core.plugins import profile_fuzzed_as
from rstck.core.verdict import RuleViolation, Verdict
from rstck.execution.findings import Result, attach_trace, charge, charge_error
from rstck.fuzz.run import Finding


def spec_fuzzed_as(role: str) -> str:
    """The spec whose items the findings of fuzzing `role` are: the profile's that claims the role."""
    return profile_fuzzed_as(role).name


def result_row(finding: Finding, *, target_name: str, replay: str, duration_s: float = 0.0,
               node_id: str = "", loaded_as: str = "") -> Result:
    """The finding's row; `seed` holds the --replay argument (SEED:BLOB), `message` is what is printed."""
    result = Result(target=target_name, spec=spec_fuzzed_as(finding.role), rule=finding.rule, level="",
                    check=f"fuzz-{finding.role}", role=finding.role, verdict=Verdict.PASS,
                    duration_s=round(duration_s, 6), timed_out=finding.timed_out, node_id=node_id,
                    seed=finding.replay, replay=replay, loaded_as=loaded_as, evidence=finding.evidence)
    if finding.kind == "violation":
        result.level = load_catalog()[finding.rule].level
        charge(result, RuleViolation(finding.rule, finding.expected, finding.observed, timed_out=finding.timed_out))
    else:
        what = f"fuzzing the {finding.role}: {finding.observed.splitlines()[0]}"
        bound = " (decided by a deadline)" if finding.timed_out else ""
        charge_error(result, what, f"error while {what}\n  expected: {finding.expected}\n"
                                   f"  observed: {finding.observed}{bound}")
    result.message += f"\n  {_how_found(finding)}"
    attach_trace(result, finding.trace)
    result.message += f"\n  replay: {replay}"
    return result


def _how_found(finding: Finding) -> str:
    steps = len(finding.steps)
    if finding.note:
        said = finding.note
    elif finding.shrunk:
        said = f"shrunk to {steps} step{'s' * (steps != 1)}"
    else:
        said = "not shrunk"
    return f"found fuzzing the {finding.role} (seed {finding.seed}; {said})"


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

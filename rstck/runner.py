"""Runs one check against one target and turns what happened into a Result.

Each check runs on its own thread, so that a publisher that deadlocks the caller
fails its check by deadline instead of hanging the run.
"""

from __future__ import annotations

import dataclasses
import textwrap
import threading
import time
import traceback
from typing import Any

from .rules import Check
from .rules.catalog import load_catalog
from .capture import reports_into
from .session import RetryOutsideLoop, Session
from .settle import DEFAULT_DEADLINE_S, SettleTimeout, hang_grace
from .target import Target
from .threads import mark_kit_thread
from .verdict import LEVEL_VERDICTS, BadInput, NotApplicable, RuleViolation, TargetError, Unsupported, Verdict

@dataclasses.dataclass
class Result:
    """One result row: the JSON Lines record every check produces."""

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
    settled_by: str = "idle"
    timed_out: bool = False
    node_id: str = ""
    seed: str = ""

    reason: str = ""  # one line, for tables

    def row(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        row["verdict"] = self.verdict.value
        return row


def missing_capability(check: Check, target: Target) -> str | None:
    lacking = sorted(check.needs - target.capabilities)
    return f"the target offers no {', '.join(lacking)}" if lacking else None


def run_check(check: Check, target: Target, *, timeout_s: float = DEFAULT_DEADLINE_S) -> Result:
    item = load_catalog()[check.rule]
    result = Result(target=target.name, spec=item.spec, rule=check.rule, level=item.level,
                    check=check.name, role=check.role, verdict=Verdict.PASS)
    lacking = missing_capability(check, target)
    if lacking:
        result.verdict, result.reason = Verdict.NOT_APPLICABLE, lacking
        result.message = f"n/a: {lacking}"
        return result

    started = time.monotonic()
    for attempt in (1, 2):  # a second time only if the implementation runs an event loop of its own
        session, worker, raised = _run_on_worker(check, target, timeout_s)
        if not (raised and isinstance(raised[0], RetryOutsideLoop) and attempt == 1):
            break
        session.close()
    result.duration_s = round(time.monotonic() - started, 6)
    if worker.is_alive():
        _judge_hang(result, session, timeout_s)
    else:
        _judge(result, session, raised[0] if raised else None)
        session.close()
    result.settled_by = ",".join(session.settled_by) or "idle"
    result.trace = session.trace.render()
    if result.verdict not in (Verdict.PASS,) and result.trace:
        result.message = f"{result.message}\n  trace:\n{textwrap.indent(result.trace, '  ')}"
    return result


def _run_on_worker(check: Check, target: Target, timeout_s: float):
    """Run the check on a thread of its own; the session, the thread, and what the check raised."""
    session = target.open_session(timeout_s)
    raised: list[BaseException] = []

    def body() -> None:
        session.check_thread = threading.current_thread()
        try:
            check.func(session)
            session.finish()
        except BaseException as exc:  # judged below, on the runner's thread
            raised.append(exc)

    worker = threading.Thread(target=body, name=f"rstck-check-{check.rule}", daemon=True)
    mark_kit_thread(worker)
    with reports_into(lambda: session):
        worker.start()
        worker.join(timeout_s + hang_grace(timeout_s))
    return session, worker, raised


def _judge(result: Result, session: Session, exc: BaseException | None) -> None:
    if session.kit_faults:
        fault = session.kit_faults[0]
        result.verdict, result.reason = Verdict.ERROR, f"the kit broke rule {fault.rule} itself: {fault.observed}"
        result.message = f"error: {result.reason} (a defect of rstck, not of the target)"
        return
    if exc is None and session.kit_errors:
        exc = session.kit_errors[0]
    if session.violations and not isinstance(exc, (TargetError, BadInput)):
        # What the probes saw happened before whatever ended the check: the most severe of
        # those and the check's own finding is the verdict.
        exc = load_catalog().most_severe(session.violations + ([exc] if isinstance(exc, RuleViolation) else []))
    if exc is None:
        return
    if isinstance(exc, RuleViolation):
        _violation(result, exc)
    elif isinstance(exc, SettleTimeout):
        result.timed_out = True
        _violation(result, RuleViolation(result.rule, "the target to settle (no pending work) within the deadline",
                                         str(exc), timed_out=True))
    elif isinstance(exc, Unsupported):
        result.verdict, result.reason = Verdict.UNSUPPORTED, str(exc)
        result.message = f"unsupported: {exc}"
    elif isinstance(exc, NotApplicable):
        result.verdict, result.reason = Verdict.NOT_APPLICABLE, str(exc)
        result.message = f"n/a: {exc}"
    elif isinstance(exc, (TargetError, BadInput)):
        result.verdict, result.reason = Verdict.ERROR, str(exc).splitlines()[0]
        result.message = f"error: {exc}"
    else:
        tb = "".join(traceback.format_exception(exc)).rstrip()
        result.verdict, result.reason = Verdict.ERROR, f"the kit broke: {type(exc).__name__}: {exc}"
        result.message = f"error: {result.reason}\n{textwrap.indent(tb, '    ')}"


def _judge_hang(result: Result, session: Session, timeout_s: float) -> None:
    """The check thread never came back: charge the call it is stuck in."""
    result.timed_out = True
    stuck = session.outstanding[-1] if session.outstanding else None
    if stuck:
        call, rule = stuck
        violation = RuleViolation(rule, f"{call} to return", f"it had not returned after {timeout_s:g} s",
                                  timed_out=True)
    else:
        violation = RuleViolation(result.rule, "the check to finish",
                                  f"it was still running after {timeout_s:g} s", timed_out=True)
    _violation(result, violation)


def _violation(result: Result, violation: RuleViolation) -> None:
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

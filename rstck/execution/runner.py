"""Runs one check against one target and judges what happened (the row: rstck/execution/findings.py).

Each check runs on its own thread, so that a publisher that deadlocks the caller
fails its check by deadline instead of hanging the run.
"""

from __future__ import annotations

import gc
import os
import textwrap
import threading
import time
import traceback

from rstck.core.capture import reports_into
from rstck.core.catalog import load_catalog
from rstck.core.checks import Check
from rstck.core.calls import RetryCallMode
from rstck.core.session import Session
from rstck.core.settle import DEFAULT_DEADLINE_S, SettleTimeout, hang_grace
from rstck.core.signals import show
from rstck.core.target import Target
from rstck.core.kit_threads import mark_kit_thread
from rstck.core.verdict import LEVEL_VERDICTS, BadInput, NotApplicable, RuleViolation, TargetError, Unsupported, Verdict
from rstck.execution.findings import (Hang, Result, attach_trace, charge, charge_error, judge_hang,
                                      reproduction_evidence)

_KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the rstck package

# How often the runner looks at a running check, and how long a call that hung in an earlier check of
# the same target may be under way before it counts as the same hang.
WAIT_TICK_S = 0.05
# What each element of the stress mode's streams adds to a check's deadline.
STREAM_ELEMENT_ALLOWANCE_S = 10e-6
KNOWN_HANG_S = 0.25  # as long as request and cancel may take anyway (3.4, 3.5), unless the target allows more


def missing_capability(check: Check, target: Target) -> str | None:
    lacking = sorted(check.needs - target.capabilities)
    return f"the target offers no {', '.join(lacking)}" if lacking else None


def run_check(check: Check, target: Target, *, timeout_s: float = DEFAULT_DEADLINE_S) -> Result:
    """Run one check against one target; its result row. In the stress mode each check's deadline grows
    with the stream length (a bound from the subject's own size, not a guess)."""
    timeout_s += target.stream_length * STREAM_ELEMENT_ALLOWANCE_S
    item = load_catalog()[check.rule]
    result = Result(target=target.name, spec=item.spec, rule=check.rule, level=item.level,
                    check=check.name, role=check.role, verdict=Verdict.PASS,
                    implementation=getattr(target, "base", target).name, description=check.doc,
                    loaded_as=getattr(target, "base", target).loaded_as)
    lacking = missing_capability(check, target)
    unobservable = target.not_observable(check.rule)
    if unobservable:
        result.verdict, result.reason = Verdict.NOT_APPLICABLE, f"not observable through this target: {unobservable}"
        result.message = f"n/a: {result.reason}"
        return result
    if lacking:
        result.verdict, result.reason = Verdict.NOT_APPLICABLE, lacking
        result.message = f"n/a: {lacking}"
        return result

    started = time.monotonic()
    for attempt in (1, 2):  # a second time only if the implementation runs an event loop of its own
        session, raised, hang = _run_on_worker(check, target, timeout_s)
        if hang is not None or not (raised and isinstance(raised[0], RetryCallMode) and attempt == 1):
            break
    result.duration_s = round(time.monotonic() - started, 6)
    if hang is not None:
        session.lifecycle.abandon()
        target.session_abandoned(session)
        _judge_hang(result, session, hang)
    else:
        _judge(result, session, raised[0] if raised else None)
        session.lifecycle.seal()
    result.leftovers = session.lifecycle.leftovers()
    result.settled_by = ",".join(session.settled_by) or "idle"
    if result.verdict in (Verdict.FAIL, Verdict.WARN):
        result.evidence = reproduction_evidence(session, result.finding, result.violated, timeout_s)
    trace = session.trace.render()
    attach_trace(result, trace, session.labels.legend(trace))
    return result


def _run_on_worker(check: Check, target: Target, timeout_s: float) -> tuple[Session, list[BaseException],
                                                                          Hang | None]:
    """Run the check on a thread of its own; the session, what the check raised, and a hang if it did."""
    session = target.open_session(timeout_s)
    raised: list[BaseException] = []

    def body() -> None:
        session.check_thread = threading.current_thread()
        try:
            check.func(target.context(check.context, session, check.rule))
            session.lifecycle.finish()
        except BaseException as exc:  # judged below, on the runner's thread
            raised.append(exc)
        finally:
            if not session.lifecycle.sealed:
                session.lifecycle.close()  # on the check's own thread: winding its loop down is bounded by the deadline

    worker = threading.Thread(target=body, name=f"rstck-check-{check.rule}", daemon=True)
    mark_kit_thread(worker)
    # A collection during the check (3.13 looks for an unreachable subscriber) then walks only what the check made:
    # the whole heap of a process that hosts a large test suite takes seconds, which the deadline would charge.
    gc.freeze()
    try:
        with reports_into(lambda: session):
            worker.start()
            hang = _wait(worker, session, target, check, timeout_s)
    finally:
        gc.unfreeze()
    return session, raised, hang


def _wait(worker: threading.Thread, session: Session, target: Target, check: Check, timeout_s: float) -> Hang | None:
    """Wait for the check to end. It hangs once it outlives its deadline (and a grace), or once a call that
    hung in an earlier check has been under way for KNOWN_HANG_S: a hang costs its full deadline once."""
    started = time.monotonic()
    end = started + timeout_s + hang_grace(timeout_s)
    while True:
        worker.join(WAIT_TICK_S)
        if not worker.is_alive():
            return None
        now = time.monotonic()
        stuck = session.calls.stuck()
        first = target.known_hangs.get(stuck.method) if stuck is not None else None
        if first is not None and now - stuck.since >= max(KNOWN_HANG_S, target.responsiveness_bound_s):
            return Hang(stuck, now - stuck.since, known_from=first)
        if now >= end:
            if stuck is not None:
                target.known_hangs.setdefault(stuck.method, f"{check.rule} {check.name}")
            return Hang(stuck, now - started)


def _judge(result: Result, session: Session, exc: BaseException | None) -> None:
    if session.findings.kit_faults:
        fault = session.findings.kit_faults[0]
        reason = f"the kit broke rule {fault.rule} itself: {fault.observed}"
        charge_error(result, reason, f"error: {reason} (a defect of rstck, not of the target)")
        return
    if exc is None and session.findings.kit_errors:
        exc = session.findings.kit_errors[0]
    if session.findings.violations and not isinstance(exc, (TargetError, BadInput)):
        # What the probes saw happened before whatever ended the check: the most severe of those and the
        # check's own finding is the verdict, and every other item found broken is charged as well.
        exc = _charge_every_finding(result, session, exc)
    if exc is None:
        return
    if isinstance(exc, RuleViolation):
        charge(result, exc)
    elif isinstance(exc, SettleTimeout):
        result.timed_out = True
        charge(result, RuleViolation(result.rule, "the target to settle (no pending work) within the deadline",
                                         str(exc), timed_out=True))
    elif isinstance(exc, Unsupported):
        result.verdict, result.reason = Verdict.UNSUPPORTED, str(exc)
        result.message = f"unsupported: {exc}"
    elif isinstance(exc, NotApplicable):
        result.verdict, result.reason = Verdict.NOT_APPLICABLE, str(exc)
        result.message = f"n/a: {exc}"
    elif isinstance(exc, (TargetError, BadInput)):
        charge_error(result, str(exc).splitlines()[0], f"error: {exc}")
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames and not frames[-1].filename.startswith(_KIT):
            where = f"{frames[-1].filename}:{frames[-1].lineno} ({frames[-1].name})"
            charge_error(result, f"the target's own code raised {show(exc)} at {where} while the check examined it")
            return
        tb = "".join(traceback.format_exception(exc)).rstrip()
        reason = f"the kit broke: {show(exc)}"
        charge_error(result, reason, f"error: {reason}\n{textwrap.indent(tb, '    ')}")


def _charge_every_finding(result: Result, session: Session, exc: BaseException | None) -> RuleViolation:
    """The finding the row's verdict is (the most severe; the first recorded among equals), with every other
    item found broken, and the check's own item when it was decided all the same, in `also_charged`: one
    behaviour that breaks two sentences fails both items."""
    catalog = load_catalog()
    findings = list(session.findings.violations)
    if isinstance(exc, RuleViolation) and all(exc is not v for v in findings):
        findings.append(exc)
    first_of: dict[str, RuleViolation] = {}
    for finding in findings:
        first_of.setdefault(finding.rule, finding)
    primary = catalog.most_severe(findings)
    for rule, finding in first_of.items():
        if rule != primary.rule:
            verdict = LEVEL_VERDICTS[catalog[rule].level].value
            result.also_charged.append({"rule": rule, "verdict": verdict, "reason": _reason(finding)})
    if primary.rule != result.rule and result.rule not in first_of:
        if isinstance(exc, (Unsupported, NotApplicable)):  # the check decided its own item all the same
            verdict = Verdict.UNSUPPORTED if isinstance(exc, Unsupported) else Verdict.NOT_APPLICABLE
            result.also_charged.append({"rule": result.rule, "verdict": verdict.value, "reason": str(exc)})
        elif session.lifecycle.check_returned:  # it ran to its end: nothing it expected was missing
            result.also_charged.append({"rule": result.rule, "verdict": Verdict.PASS.value, "reason": ""})
    return primary


def _reason(violation: RuleViolation) -> str:
    return f"{violation.rule}: expected {violation.expected}; observed {violation.observed}" + (
        " (decided by a deadline)" if violation.timed_out else "")


def _judge_hang(result: Result, session: Session, hang: Hang) -> None:
    """The check thread never came back: charge the call it is stuck in, unless something it saw before
    weighs more (a hang never hides a violation recorded before it)."""
    found = judge_hang(hang, session.findings.violations, rule=result.rule)
    if found.then:
        charge(result, found.charged)
        result.message += f"\n  {found.then}"
        return
    result.timed_out = True
    if found.charged.rule:
        charge(result, found.charged)
        return
    reason = f"{hang.stuck.text} never returned: the target's factory hangs"
    charge_error(result, reason, f"error: {reason} ({hang.how_long}; decided by a deadline)")

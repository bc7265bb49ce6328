"""One seeded Hypothesis run of one role's machine against a target, with a watchdog.

The run executes on its own thread; the calling thread watches the step clock. A step
that has not returned `timeout_s` (plus a grace) after it began is a hang: the run is
abandoned (its thread stays blocked, a daemon) and the call it is stuck in is charged,
as `rstck check` does. Hypothesis' verdict is turned into findings: each distinct rule
violated, shrunk, with its trace and the blob that replays it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import hypothesis
from hypothesis.database import ExampleDatabase
from hypothesis.errors import DidNotReproduce
from hypothesis.stateful import run_state_machine_as_test

from ..session import RetryCallMode
from ..settle import hang_grace
from ..capture import reports_into
from ..target import Target
from ..threads import mark_kit_thread
from ..verdict import BadInput
from .machine import AbortRun, FuzzMachine, FuzzViolation, RunContext
from .profiles import run_settings
from .processor import ProcessorMachine
from .publisher import PublisherMachine
from .recorder import FlightRecorder
from .subscriber import SubscriberMachine

WATCH_TICK_S = 0.2
_BLOB = re.compile(r"@reproduce_failure\('[^']*', b'([^']*)'\)")


MACHINES: dict[str, type[FuzzMachine]] = {
    "publisher": PublisherMachine, "subscriber": SubscriberMachine, "processor": ProcessorMachine}


@dataclasses.dataclass
class Finding:
    """One thing a run found: a rule violated (kind "violation") or a run that could not go on ("error")."""

    role: str
    kind: str
    rule: str  # the violated catalogue item; "" for errors
    expected: str
    observed: str
    trace: str
    seed: int
    blob: str = ""  # replays the shrunk example exactly (Hypothesis' reproduce_failure)
    steps: list[str] = dataclasses.field(default_factory=list)
    timed_out: bool = False
    shrunk: bool = True
    note: str = ""

    @property
    def replay(self) -> str:
        """The --replay argument: SEED:BLOB for a shrunk example, SEED to re-run the whole seeded run."""
        return f"{self.seed}:{self.blob}" if self.blob else str(self.seed)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.role, self.kind, self.rule or self.observed.splitlines()[0])


@dataclasses.dataclass
class RunReport:
    seed: int
    examples: int
    steps: int
    duration_s: float
    findings: list[Finding]
    hung: bool = False  # the run's thread was abandoned in a call that never returned
    reproduced: bool = True  # False: a replayed blob ran without failing


Progress = Callable[[int, int], None]  # (examples, steps) done since the last call


def run_machine(target: Target, role: str, *, seed: int, examples: int, steps: int, profile: str,
                timeout_s: float, database: ExampleDatabase | None = None, blob: str | None = None,
                shrink: bool = True, recorder: FlightRecorder | None = None,
                progress: Progress | None = None) -> RunReport:
    """Run `role`'s machine for up to `examples` examples from `seed` (or exactly the example `blob`)."""
    machine = MACHINES[role]
    context = RunContext(target, role, timeout_s=timeout_s, recorder=recorder)

    def factory() -> FuzzMachine:
        return machine(context)

    hypothesis.seed(seed)(factory)
    if blob:
        hypothesis.reproduce_failure(hypothesis.__version__, blob.encode("ascii"))(factory)
    settings = run_settings(profile, examples=examples, steps=steps, database=None if blob else database,
                            shrink=shrink)
    raised: list[BaseException] = []

    def body() -> None:
        try:
            run_state_machine_as_test(factory, settings=settings)
        except BaseException as exc:  # judged on the watching thread
            raised.append(exc)

    started = time.monotonic()
    worker = threading.Thread(target=body, name=f"rstck-fuzz-{role}-{seed}", daemon=True)
    mark_kit_thread(worker)
    with reports_into(lambda: context.session):
        worker.start()
        hang = _watch(worker, context, role, seed, timeout_s, progress)
    if not hang and raised and isinstance(raised[0], RetryCallMode):  # the target now calls outside loops
        return run_machine(target, role, seed=seed, examples=examples, steps=steps, profile=profile,
                           timeout_s=timeout_s, database=database, blob=blob, shrink=shrink, recorder=recorder,
                           progress=progress)
    report = RunReport(seed=seed, examples=context.examples, steps=context.steps,
                       duration_s=round(time.monotonic() - started, 6), findings=[], hung=hang is not None)
    if hang is not None:
        report.findings.append(hang)
    elif raised and blob and isinstance(raised[0], hypothesis.errors.InvalidArgument):
        raise BadInput(f"the blob {blob!r} does not replay with Hypothesis {hypothesis.__version__}: {raised[0]}")
    elif raised:
        _judge(raised[0], report, role, seed)
    for finding in report.findings:
        if blob and finding.kind == "violation" and not finding.blob:
            finding.blob = blob  # a replayed example is its own minimal case
        if not shrink:
            finding.shrunk = False
    return report


def _watch(worker: threading.Thread, context: RunContext, role: str, seed: int, timeout_s: float,
           progress: Progress | None) -> Finding | None:
    """Wait for the run, reporting progress; a hang if a step outlives its deadline."""
    reported = [0, 0]
    grace = hang_grace(timeout_s)
    while True:
        worker.join(WATCH_TICK_S)
        if progress is not None:
            progress(context.examples - reported[0], context.steps - reported[1])
            reported = [context.examples, context.steps]
        if not worker.is_alive():
            return None
        began = context.step_started
        if began is not None and time.monotonic() - began > timeout_s + grace:
            return _hang(context, role, seed, timeout_s)
    return None


def _judge(exc: BaseException, report: RunReport, role: str, seed: int) -> None:
    if isinstance(exc, DidNotReproduce):
        report.reproduced = False
        return
    if isinstance(exc, AbortRun):
        report.findings.append(Finding(
            role=role, kind="violation" if exc.rule else "error", rule=exc.rule, expected=exc.expected,
            observed=exc.observed, trace=_render(exc.session), seed=seed, steps=exc.steps,
            timed_out=exc.kind == "timeout", shrunk=False,
            note="not shrunk: decided by a deadline" if exc.kind == "timeout" else "not shrunk"))
        return
    violations = list(_leaves(exc))
    flaky = isinstance(exc, hypothesis.errors.Flaky) or any(isinstance(e, hypothesis.errors.Flaky) for e in violations)
    for error in violations:
        if isinstance(error, FuzzViolation):
            report.findings.append(Finding(
                role=role, kind="violation", rule=error.rule, expected=error.expected, observed=error.observed,
                trace=_render(error.session), seed=seed, blob=_blob(error), steps=list(error.steps),
                timed_out=error.timed_out,
                note="flaky: the failure did not recur on every replay" if flaky else ""))
        elif isinstance(error, AbortRun):
            _judge(error, report, role, seed)
        elif not isinstance(error, hypothesis.errors.Flaky):
            report.findings.append(Finding(
                role=role, kind="error", rule="", expected="the fuzzer to run",
                observed=f"the fuzzer broke: {type(error).__name__}: {error}", trace="", seed=seed, shrunk=False))


def _leaves(exc: BaseException):
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _blob(error: BaseException) -> str:
    for note in getattr(error, "__notes__", ()):
        match = _BLOB.search(note)
        if match:
            return match.group(1)
    return ""


def _render(session: Any) -> str:
    return session.trace.render() if session is not None else ""


def _hang(context: RunContext, role: str, seed: int, timeout_s: float) -> Finding:
    """The step never returned: charge the call it is stuck in, as the rule runner does."""
    session = context.session
    stuck = session.outstanding[-1] if session is not None and session.outstanding else None
    if session is not None:
        session.abandon()  # what the stuck step left behind is counted from now on, not recorded
    if stuck:
        rule = stuck.rule  # "" for a factory: an error, not a violation
        expected, observed = f"{stuck.text} to return", f"it had not returned after {timeout_s:g} s"
    else:
        rule, expected, observed = "", "the step to finish", f"a step was still running after {timeout_s:g} s"
    return Finding(role=role, kind="violation" if rule else "error", rule=rule, expected=expected,
                   observed=observed, trace=_render(session), seed=seed, steps=context.step_texts(),
                   timed_out=True, shrunk=False, note="not shrunk: decided by a deadline")

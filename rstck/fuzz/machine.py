"""What every fuzz state machine shares: one session per example, and steps that check after themselves.

A step runs one rule against the target through the session, then looks at what the
session's monitors recorded. The first violation of a MUST item ends the example with an
exception whose class is named after the rule: Hypothesis tells failures apart by
exception type and raising line, so one class per rule keeps it from shrinking a 3.9
failure into a 1.1 failure, and lets one run report several distinct rules.

What shrinking could not make shorter ends the whole run instead: a settle cut off by
its deadline, a factory that raised, the kit's own error. `AbortRun` is a BaseException,
which Hypothesis does not catch; shrinking would only re-run the same hang dozens of times.
A step that never returns at all is the watchdog's business (run.py).
"""

from __future__ import annotations

import functools
import threading
import time
import traceback
from typing import Any, Callable

from hypothesis.control import current_build_context
from hypothesis.stateful import RuleBasedStateMachine

from rstck.core.catalog import load_catalog
from rstck.core.settle import SettleTimeout
from rstck.core.signals import show
from rstck.core.session import Session
from rstck.core.target import Target
from rstck.core.verdict import LEVEL_VERDICTS, BadInput, NotApplicable, RuleViolation, TargetError, Verdict
from rstck.execution.findings import reproduction_evidence
from rstck.fuzz.recorder import FlightRecorder


# How a settle was decided when it knew the target had nothing left to do (rstck.core.settle.SettleOutcome), rather
# than guessed so from a quiet window.
EXACT_SETTLES = frozenset({"idle", "threads-joined", "threads-parked"})


class FuzzViolation(RuleViolation):
    """A MUST item violated in one example; carries the example's session (its trace) and steps."""

    session: Session | None = None
    steps: list[str] = []
    evidence: dict | None = None  # what a reproducer of it needs (rstck/execution/findings.py reproduction_evidence)


@functools.cache
def violation_type(rule: str) -> type[FuzzViolation]:
    """One exception class per rule id, so that Hypothesis shrinks each rule's failures apart."""
    return type(f"Violation[{rule}]", (FuzzViolation,), {"__module__": __name__})


class AbortRun(BaseException):
    """Ends a seeded run at once, unshrunk: a deadline decided it, or something other than the
    implementation's protocol behaviour broke (kind "timeout" or "error")."""

    def __init__(self, kind: str, rule: str, expected: str, observed: str, *, context: "RunContext"):
        super().__init__(f"{kind}: {observed}")
        self.kind = kind
        self.rule = rule
        self.expected = expected
        self.observed = observed
        self.session = context.session
        self.steps = context.step_texts()


class BudgetSpent(BaseException):
    """The run's examples or time are spent. A BaseException, like AbortRun: Hypothesis lets it
    through, which ends the run where it stands, whatever phase it is in."""


class RunContext:
    """One seeded run's view of the target: the current example's session, counters, the step clock.

    The watchdog reads `step_started` from another thread; everything else belongs to the
    thread the run executes on.
    """

    def __init__(self, target: Target, role: str, *, timeout_s: float, recorder: FlightRecorder | None = None):
        self.target = target
        self.role = role
        self.timeout_s = timeout_s
        self.recorder = recorder
        self.examples = 0
        self.steps = 0
        self.session: Session | None = None
        self.step_started: float | None = None
        self.spent: Callable[[], bool] = lambda: False  # asked before every example
        self._step_log: list[tuple[str, dict[str, Any]]] = []

    def open_session(self) -> Session:
        # Hypothesis runs each failure it reports once more, to report it: part of that example,
        # neither a new one nor one a bound may cut off (unless it is the only one: a replay).
        if not current_build_context().is_final or not self.examples:
            if self.spent():
                raise BudgetSpent()
            self.examples += 1
        self.step_started = time.monotonic()  # the watchdog also bounds the target's open_session
        session = self.target.open_session(self.timeout_s)
        self.step_started = None
        session.check_thread = threading.current_thread()
        self.session = session
        self._step_log = []
        if self.recorder is not None:
            self.recorder.start_example(self.examples)
        return session

    def begin_step(self, name: str, arguments: dict[str, Any]) -> None:
        self.steps += 1
        self._step_log.append((name, arguments))
        session = self.session
        assert session is not None
        session.deadline = time.monotonic() + self.timeout_s  # a deadline per step, not per example
        if self.recorder is not None:
            self.recorder.step(session.trace, self.step_texts()[-1])
        self.step_started = time.monotonic()

    def end_step(self) -> None:
        self.step_started = None

    def step_texts(self) -> list[str]:
        return [f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
                for name, arguments in self._step_log]


def step(func: Callable[..., None]) -> Callable[..., None]:
    """Make a rule body a checked step: clocked for the watchdog, followed by the invariant checks."""

    @functools.wraps(func)
    def run(self: FuzzMachine, **arguments: Any) -> None:
        self._run_step(func.__name__, arguments, lambda: func(self, **arguments))

    return run


class FuzzMachine(RuleBasedStateMachine):
    """Base of the role machines: a fresh session per example, closed at teardown."""

    role = ""

    def __init__(self, context: RunContext):
        super().__init__()
        self.context = context
        self.session = context.open_session()
        self.stopped = False  # a step failed: teardown only cleans up
        self._catalog = load_catalog()
        # How many records the trace held when the target was last known to have nothing left to do: at the start
        # (nothing made yet), or after a settle decided exactly. None: not known since.
        self._idle_at: int | None = 0

    def settle_target(self) -> None:
        """Settle the target, unless nothing can have happened since it was last known to have nothing left to
        do: no record (no call of the kit's, no signal, no note) since the example began or since a settle that
        saw the target idle, not a quiet window's guess. Such a settle would wait for nothing and decide nothing
        (what the checks after it judge is as the last settle left it); like any step that does not apply, it
        does nothing, and leaves no `(settled)` line that says nothing in a finding's trace."""
        trace = self.session.trace
        if trace.count == self._idle_at:
            return
        outcome = self.session.settle()
        self._idle_at = trace.count if outcome.method in EXACT_SETTLES else None

    def still_absent(self, arrived: Callable[[], bool]) -> bool:
        """Whether what `arrived` looks for is still absent once the target settled. Where a quiet window decided
        the settle (threads or a JVM the kit cannot read exactly), the window may have been too short: it is waited
        for until the example's deadline first, so that a verdict of absence never rests on a window alone
        (docs/verdicts.md); only a target that fails pays for the wait."""
        session = self.session
        return not (arrived() or session.settler.await_signal(arrived, session.deadline))

    # -- what role machines implement ------------------------------------------------------

    def after_step(self) -> None:
        """Checks that are cheap enough to run after every step."""

    def finish(self) -> None:
        """The end of an example: settle, then check what must hold once nothing more can happen."""
        self.settle_target()

    # -- the step protocol -------------------------------------------------------------------

    def _run_step(self, name: str, arguments: dict[str, Any], body: Callable[[], None]) -> None:
        context = self.context
        context.begin_step(name, arguments)
        try:
            body()
            self.after_step()
        except RuleViolation:
            pass  # the session recorded it; reported below with the others
        except SettleTimeout as exc:
            self._abort("timeout", "", "the target to settle (no pending work) within the deadline",
                        f"{exc} (after {context.timeout_s:g} s)")
        except (TargetError, BadInput) as exc:
            self._abort("error", "", "the target's factories to work", str(exc))
        except NotApplicable as exc:
            self._abort("error", "", "a target that serves this role", str(exc))
        except Exception as exc:  # the kit broke: not the implementation's fault, never shrunk
            self._abort("error", "", "the fuzzer to run", _kit_error(exc))
        finally:
            context.end_step()
        self._report()

    def _report(self) -> None:
        session = self.session
        if session.findings.kit_errors:
            self._abort("error", "", "the fuzzer's reactions to run", _kit_error(session.findings.kit_errors[0]))
        for violation in session.findings.violations:
            item = self._catalog[violation.rule]
            if LEVEL_VERDICTS[item.level] is Verdict.FAIL:
                self.stopped = True
                error = violation_type(violation.rule)(violation.rule, violation.expected, violation.observed,
                                                       timed_out=violation.timed_out)
                error.session = session
                error.steps = self.context.step_texts()
                error.evidence = reproduction_evidence(session, violation, violation.rule, self.context.timeout_s)
                raise error

    def _abort(self, kind: str, rule: str, expected: str, observed: str) -> None:
        self.stopped = True
        raise AbortRun(kind, rule, expected, observed, context=self.context)

    def teardown(self) -> None:
        try:
            if not self.stopped:
                self._run_step("finish", {}, self.finish)
            if not self.stopped:
                # As a check ends: cancel what the probes still hold, complete the streams the kit still
                # feeds, so that nothing an example started waits for ever (a campaign runs thousands).
                self._run_step("wind_down", {}, self.session.lifecycle.finish)
        finally:
            # What a step that failed left under way (a second-thread call waiting on the implementation's lock)
            # is let finish before the session closes, so that the next example does not pay for it.
            self.session.wait_for_calls_elsewhere(judge=False)
            self.session.lifecycle.close()
            self.context.end_step()


def _kit_error(exc: BaseException) -> str:
    frames = traceback.format_exception(exc)
    return f"the kit broke: {show(exc)}\n" + "".join(frames[-6:]).rstrip()

"""One seeded Hypothesis run of one role's machine against a target, with a watchdog.

The run executes on its own thread; the calling thread watches the step clock. A step
that has not returned `timeout_s` (plus a grace) after it began is a hang: the run is
abandoned (its thread stays blocked, a daemon) and judged as `rstck check` judges a hang
(rstck/execution/findings.py): the call it is stuck in is charged, unless a violation
recorded before it weighs more. Hypothesis' verdict is turned into findings: each distinct rule
violated, shrunk, with its trace and the blob that replays it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import textwrap
import time
from collections.abc import Callable, Iterable
from typing import Any

import hypothesis
from hypothesis import Phase
from hypothesis.database import ExampleDatabase, InMemoryExampleDatabase
from hypothesis.errors import DidNotReproduce
from hypothesis.stateful import run_state_machine_as_test

from rstck.core.calls import RetryCallMode
from rstck.core.settle import hang_grace
from rstck.core.capture import reports_into
from rstck.core.target import Target
from rstck.core.kit_threads import mark_kit_thread
from rstck.core.verdict import BadInput
from rstck.execution.findings import Hang, judge_hang
from rstck.fuzz.budgets import DEFAULT_SHRINK_TIME_S
from rstck.fuzz.constants import without_local_constants
from rstck.fuzz.machine import AbortRun, BudgetSpent, FuzzMachine, FuzzViolation, RunContext
from rstck.fuzz.profiles import GENERATING, ONE_RUN, REPLAYING, SHRINKING, run_settings
from rstck.fuzz.processor import ProcessorMachine
from rstck.fuzz.publisher import PublisherMachine
from rstck.fuzz.recorder import FlightRecorder
from rstck.fuzz.subscriber import SubscriberMachine

WATCH_TICK_S = 0.2
# A finding whose replay did not fail again: what was tried, so that "flaky" means the machine decided it.
FLAKY_NOTE = ("flaky: the failure did not recur on every replay, though each replay made the same steps, "
              "schedule perturbation included (lingering, second-thread calls, yields: rstck.core.perturb); "
              "its timing depends on the machine")
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
    examples: int = 0  # the generating bound of the run that found it: part of the run's replay
    evidence: dict | None = None  # what a reproducer of a violation needs (rstck/core/evidence.py)

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
    examples: int  # all examples run: generating, shrinking and the final replay
    steps: int
    duration_s: float
    findings: list[Finding]
    generated: int = 0  # of `examples`, those that searched for a failure; the rest shrank one
    hung: bool = False  # the run's thread was abandoned in a call that never returned
    reproduced: bool = True  # False: a replayed blob ran without failing

    @property
    def shrinking(self) -> int:
        return self.examples - self.generated


Progress = Callable[[int, int], None]  # (examples, steps) done since the last call


class _RunDatabase(ExampleDatabase):
    """One run's failures in memory, written through to the campaign's database (if any).

    Shrinking is a run of its own that resumes from what generating saved here, and what the
    shrinker saves (each smaller failing example, as it finds it) is what a run cut off by its
    budget replays. The campaign's saved failures are offered to the generating phase only.
    """

    def __init__(self, campaign: ExampleDatabase | None):
        super().__init__()
        self.memory = InMemoryExampleDatabase()
        self.campaign = campaign
        self.offer_campaign = True
        self.frozen = False  # saves are ignored

    def save(self, key: bytes, value: bytes) -> None:
        if self.frozen:
            return
        self.memory.save(key, value)
        if self.campaign is not None:
            self.campaign.save(key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        yield from self.memory.fetch(key)
        if self.offer_campaign and self.campaign is not None:
            yield from self.campaign.fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        self.memory.delete(key, value)
        if self.campaign is not None:
            self.campaign.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.memory.move(src, dest, value)
        if self.campaign is not None:
            self.campaign.move(src, dest, value)

    def failures_kept(self) -> int:
        """How many failing examples a final replay would run: one per failure being shrunk."""
        return len(self.memory.data.get(self._primary_key(), ()))

    def mark_unshrunk(self) -> int:
        """Move this run's failures where Hypothesis looks for examples still to shrink (what it
        finds under the primary key it takes as shrunk already, and would not shrink again);
        how many there were."""
        key = self._primary_key()
        failures = list(self.memory.data.get(key, ()))
        for value in failures:
            self.memory.move(key, key + b".secondary", value)
        return len(failures)

    def _primary_key(self) -> bytes:
        # One test per run: its key is the shortest; the others are that key, a dot and a suffix.
        keys = [key for key, values in self.memory.data.items() if values]
        return min(keys, key=len) if keys else b""


def run_machine(target: Target, role: str, *, seed: int, examples: int, steps: int, profile: str,
                timeout_s: float, database: ExampleDatabase | None = None, blob: str | None = None,
                shrink: bool = True, budget: int | None = None, until: float | None = None,
                shrink_time_s: float = DEFAULT_SHRINK_TIME_S, recorder: FlightRecorder | None = None,
                progress: Progress | None = None) -> RunReport:
    """Run `role`'s machine from `seed`: generate up to `examples` examples, then shrink what failed.

    `budget` bounds every example the run starts, shrinking included (None: only `examples`
    bounds generating, and shrinking is bounded by its time); no example starts after the
    monotonic time `until`; shrinking stops after `shrink_time_s`. Shrinking cut off by a bound
    reports the smallest failing example it had found. With `blob`: exactly that example, once.
    """
    context = RunContext(target, role, timeout_s=timeout_s, recorder=recorder)
    started = time.monotonic()

    def again() -> RunReport:  # the target now calls outside loops
        return run_machine(target, role, seed=seed, examples=examples, steps=steps, profile=profile,
                           timeout_s=timeout_s, database=database, blob=blob, shrink=shrink, budget=budget,
                           until=until, shrink_time_s=shrink_time_s, recorder=recorder, progress=progress)

    def phase(phases: tuple[Phase, ...], store: _RunDatabase | None, spent: Callable[[], bool]):
        def stop() -> bool:
            if spent():
                if store is not None:
                    store.frozen = True  # Hypothesis saves the example a bound cut short as a failure
                return True
            return False

        if store is not None:
            store.frozen = False
        context.spent = stop
        settings = run_settings(profile, examples=examples, steps=steps, database=store, phases=phases)
        return _run_hypothesis(context, role, seed, settings, blob, timeout_s, progress)

    def over(count: int) -> bool:
        return budget is not None and count >= budget

    store = None if blob else _RunDatabase(database)
    hang, raised = phase(ONE_RUN if blob else GENERATING, store, lambda: (
        context.examples >= examples or over(context.examples) or until is not None and time.monotonic() >= until))
    generated = context.examples
    cut = ""  # why shrinking stopped short
    found = 0 if blob or hang is not None or not _failed(raised) else store.mark_unshrunk()
    # Shrinking keeps room for a final replay: one example per failure it is shrinking.
    if shrink and found and over(context.examples + found):
        cut = "not shrunk: the run's examples were spent"
    elif shrink and found:
        store.offer_campaign = False
        stop = time.monotonic() + shrink_time_s if until is None else min(until, time.monotonic() + shrink_time_s)
        hang, shrunk = phase(SHRINKING, store, lambda: (
            over(context.examples + max(found, store.failures_kept())) or time.monotonic() >= stop))
        if hang is None and _budget_spent(shrunk):
            cut = (f"shrinking stopped at its bound after {context.examples - generated} examples: "
                   f"the smallest failing example found by then")
            hang, shrunk = phase(REPLAYING, store, lambda: False)
        if hang is None and _failed(shrunk):
            raised = shrunk
    if hang is None and isinstance(raised, RetryCallMode):
        return again()
    report = RunReport(seed=seed, examples=context.examples, generated=generated, steps=context.steps,
                       duration_s=round(time.monotonic() - started, 6), findings=[], hung=hang is not None)
    if hang is not None:
        report.findings.append(hang)
    elif raised is not None and blob and isinstance(raised, hypothesis.errors.InvalidArgument):
        raise BadInput(f"the blob {blob!r} does not replay with Hypothesis {hypothesis.__version__}: {raised}")
    elif raised is not None and not _budget_spent(raised):
        _judge(raised, report, role, seed)
    for finding in report.findings:
        finding.examples = examples
        if blob and finding.kind == "violation" and not finding.blob:
            finding.blob = blob  # a replayed example is its own minimal case
        if not shrink or cut.startswith("not shrunk"):
            finding.shrunk = False
        if cut and finding.kind == "violation" and not finding.note:
            finding.note = cut
    return report


def _failed(raised: BaseException | None) -> bool:
    """Did the run end with failures for Hypothesis to shrink (not a bound, an abort or a retry)?"""
    return raised is not None and not _budget_spent(raised) and not isinstance(
        raised, (AbortRun, RetryCallMode, DidNotReproduce))


def _budget_spent(raised: BaseException | None) -> bool:
    """Did a bound end the run? Hypothesis may answer BudgetSpent with an error of its own (a
    FlakyStrategyDefinition, when the example it cut short had a prefix it had seen run longer)."""
    while raised is not None:
        if isinstance(raised, BudgetSpent):
            return True
        raised = raised.__context__
    return False


def _run_hypothesis(context: RunContext, role: str, seed: int, settings: hypothesis.settings, blob: str | None,
                    timeout_s: float, progress: Progress | None) -> tuple[Finding | None, BaseException | None]:
    """One Hypothesis run on its own thread, watched: (the hang, if a step never returned; what it raised)."""
    machine = MACHINES[context.role]

    def factory() -> FuzzMachine:
        return machine(context)

    hypothesis.seed(seed)(factory)
    if blob:
        hypothesis.reproduce_failure(hypothesis.__version__, blob.encode("ascii"))(factory)
    raised: list[BaseException] = []

    def body() -> None:
        try:
            run_state_machine_as_test(factory, settings=settings)
        except BaseException as exc:  # judged on the watching thread
            raised.append(exc)

    worker = threading.Thread(target=body, name=f"rstck-fuzz-{role}-{seed}", daemon=True)
    mark_kit_thread(worker)
    with reports_into(lambda: context.session), without_local_constants():
        worker.start()
        hang = _watch(worker, context, role, seed, timeout_s, progress)
    return hang, (raised[0] if raised else None)


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
                timed_out=error.timed_out, evidence=error.evidence,
                note=FLAKY_NOTE if flaky else ""))
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
    """The example's trace, and under it what its names stand for (rstck/core/labels.py)."""
    if session is None:
        return ""
    trace = session.trace.render()
    legend = session.labels.legend(trace)
    return f"{trace}\nwhere:\n{textwrap.indent(legend, '    ')}" if legend else trace


def _hang(context: RunContext, role: str, seed: int, timeout_s: float) -> Finding:
    """The step never returned: judged as the rule runner judges a check that never returned (the call it is
    stuck in is charged, unless a violation the example recorded before it weighs more)."""
    session = context.session
    stuck = session.calls.stuck() if session is not None else None
    if session is not None:
        session.lifecycle.abandon()  # what the stuck step left behind is counted from now on, not recorded
        session.target.session_abandoned(session)
    earlier = session.findings.violations if session is not None else []
    found = judge_hang(Hang(stuck, timeout_s), earlier, running="the step")
    charged = found.charged  # without a rule: a factory that never returned, the target's error
    return Finding(role=role, kind="violation" if charged.rule else "error", rule=charged.rule,
                   expected=charged.expected, observed=charged.observed, trace=_render(session), seed=seed,
                   steps=context.step_texts(), timed_out=charged.timed_out, shrunk=False,
                   note=f"not shrunk: {found.then}" if found.then else "not shrunk: decided by a deadline")

"""Checks in a supervised worker process (rstck/execution/worker.py): the kit survives its target.

`rstck check`: the command's own process (the supervisor) never imports the target, nor the checks. It asks a worker
to load the target and plan its checks (the plan also says which selected items the planned profiles declare
untested, for the table), then for each check in turn, and last for the fuzz phase; each row is handed on as it
arrives. If the worker dies in a check (the target calls `os._exit`, a C extension crashes, the OOM killer), that
check gets an error row naming the call it was in, and the remaining checks run in a fresh worker, which loads
and plans the target again. On Linux the worker is forked from the supervisor (which has imported little and
runs no thread), so a normal run pays a few tens of milliseconds for it; elsewhere it is spawned.

The pytest plugin's checks run in a CheckWorker: the same worker, asked for one check at a time as pytest runs
its items, forked so that it finds each check in the memory it shares with the process that collected it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rstck.execution.findings import lost_row
from rstck.execution.worker import Ended, InThisProcess, KitBroke, Worker, remember_ctrl_c, watchdog_s


@dataclasses.dataclass(frozen=True)
class CheckRun:
    """What a `rstck check` worker is asked to do. Plain data: it crosses into the worker process."""

    target_spec: str
    rules: str | None
    timeout_s: float
    fuzz_examples: int  # 0: no fuzz phase
    stream_length: int = 0  # the stress mode (--stream-length)
    list_only: bool = False
    profile: str = "default"  # which catalogues' checks run (--profile; rstck/rules/catalog)


def run_planned(check: Any, target: Any, timeout_s: float, tell: Callable[[tuple], None]) -> tuple[Any, list[str]]:
    """A check job's work in the worker, once its check is found: (its row and the target's known hangs then, the
    threads it left busy)."""
    from rstck.execution.runner import run_check

    tell(("begin",))
    result = run_check(check, target, timeout_s=timeout_s)
    return (result.row(), tuple(target.known_hangs.items())), result.leftovers


# The short fuzz phase after the checks (rstck/fuzz/phase.py run_phase), handed in by the face that asks for it:
# (target, target spec, examples=, timeout_s=, progress=) -> (result rows, per-role summaries).
FuzzPhase = Callable[..., tuple[list[Any], list[Any]]]


class PlannedRun:
    """A `rstck check` run as its worker sees it: the target loaded and its checks planned once per worker
    process, and the jobs: ("plan",), ("check", index, known hangs) and ("fuzz",)."""

    def __init__(self, run: CheckRun, fuzz_phase: FuzzPhase | None = None):
        self.run = run
        self.fuzz_phase = fuzz_phase
        self._target: Any = None
        self._planned: list[Any] = []

    def perform(self, job: tuple, tell: Callable[[tuple], None]) -> tuple[Any, list[str]]:
        from rstck.core.verdict import BadInput
        from rstck.execution.plan import planned_info, unserved, untested_by_spec

        if job[0] == "plan":
            tell(("begin",))  # loading is this job's work: a death in it is the target's, not a worker's between jobs
            try:
                self._load(prepare=not self.run.list_only)
            except BadInput as exc:
                return ("bad_input", str(exc)), []
            run = self.run
            return ("plan", {"target": self._target.name, "fuzz_phase": self._target.fuzz_phase,
                             "skipped": unserved(self._target, rules=run.rules, profile=run.profile),
                             "untested": untested_by_spec(self._target, rules=run.rules, profile=run.profile),
                             "checks": [planned_info(p) for p in self._planned]}), []
        self._load(prepare=True)  # a fresh worker, after another died or retired: as the first one did
        if job[0] == "check":
            _, index, known_hangs = job
            self._target.known_hangs.update(known_hangs)
            planned = self._planned[index]
            return run_planned(planned.check, planned.target, self.run.timeout_s, tell)
        return self._fuzz_phase(tell), []

    def _load(self, *, prepare: bool) -> None:
        """Load the target and plan its checks, once per worker process."""
        from rstck.core.target import load_target
        from rstck.core.verdict import BadInput
        from rstck.execution.plan import plan

        if self._target is not None:
            return
        run = self.run
        target = load_target(run.target_spec)
        target.stream_length = run.stream_length
        planned = plan(target, rules=run.rules, profile=run.profile)
        if not planned:
            offered = ", ".join(sorted(target.capabilities & {"publisher", "subscriber", "processor"})) or "nothing"
            raise BadInput(f"no check to run: the selection {run.rules or 'all'} has none for what the target "
                           f"offers ({offered})")
        if prepare:
            target.prepare()  # before the first check: no check's deadline, nor the supervisor's watchdog, runs yet
        self._target, self._planned = target, planned

    def _fuzz_phase(self, tell: Callable[[tuple], None]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        tell(("begin",))
        rows, summaries = self.fuzz_phase(self._target, self.run.target_spec, examples=self.run.fuzz_examples,
                                          timeout_s=self.run.timeout_s,
                                          progress=lambda kind, value: tell(("progress", kind, value)))
        return [row.row() for row in rows], [dataclasses.asdict(s) for s in summaries]


@dataclasses.dataclass
class Supervised:
    """What a supervised run found: the plan, one row per check that ran (and the fuzz phase's), notes."""

    target: str = ""
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    untested: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)  # plan.untested_by_spec
    checks: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    fuzz: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    interrupted: bool = False


class Observer:
    """What the supervisor tells as it goes (progress on a terminal, rows to a file)."""

    def begin(self, number: int, total: int, info: dict[str, Any]) -> None: ...
    def tick(self) -> None: ...
    def row(self, row: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


def supervise(run: CheckRun, observer: Observer, *, in_process: bool = False,
              fuzz_phase: FuzzPhase | None = None) -> Supervised:
    """Run `run` in worker processes (or, `in_process`, here), a fresh one after a death or a busy leftover; then,
    given `fuzz_phase` and fuzz examples to run, the fuzz phase (a picklable function where workers are spawned)."""
    outcome = Supervised()
    planned_run = PlannedRun(run, fuzz_phase)
    worker = InThisProcess(planned_run.perform) if in_process else Worker(planned_run.perform)
    restore = remember_ctrl_c()
    try:
        offers_fuzzing = _plan(worker, run, outcome, observer)
        if not run.list_only:
            _run_checks(worker, run, outcome, observer)
            if run.fuzz_examples and fuzz_phase is not None and offers_fuzzing:
                _run_fuzz_phase(worker, run, outcome, observer)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        worker.close()
        restore()
        observer.close()
    return outcome


def _plan(worker: Worker | InThisProcess, run: CheckRun, outcome: Supervised, observer: Observer) -> bool:
    from rstck.core.verdict import BadInput

    ended = worker.run(("plan",), label="loading the target", watchdog_s=None, tick=observer.tick)
    if ended.lost:
        raise BadInput(f"target {run.target_spec!r}: {ended.what} while it was being loaded")
    kind, info = ended.answer
    if kind == "bad_input":
        raise BadInput(info)
    outcome.target, outcome.skipped, outcome.checks = info["target"], info["skipped"], info["checks"]
    outcome.untested = info["untested"]
    return info["fuzz_phase"]


def _run_checks(worker: Worker | InThisProcess, run: CheckRun, outcome: Supervised, observer: Observer) -> None:
    known_hangs: tuple[tuple[str, str], ...] = ()
    for index, info in enumerate(outcome.checks):
        observer.begin(index + 1, len(outcome.checks), info)
        label = f"{info['rule']} {info['check']}"
        ended = worker.run(("check", index, known_hangs), label=label, watchdog_s=watchdog_s(run.timeout_s),
                           tick=observer.tick)
        if ended.lost:
            row, replaced = _lost_check_row(info, ended), f"{ended.what} in {label}"
        else:
            (row, known_hangs), replaced = ended.answer, ""
            if ended.leftovers:
                replaced = f"{label} left threads busy ({', '.join(ended.leftovers)})"
        outcome.rows.append(row)
        observer.row(row)
        if replaced and index + 1 < len(outcome.checks):
            outcome.notes.append(f"{replaced}: the remaining checks ran in a fresh worker process")


def _run_fuzz_phase(worker: Worker | InThisProcess, run: CheckRun, outcome: Supervised, observer: Observer) -> None:
    ended = worker.run(("fuzz",), label="the fuzz phase", watchdog_s=watchdog_s(run.timeout_s), tick=observer.tick)
    if ended.lost:
        outcome.notes.append(f"{ended.what} during {ended.call or 'the fuzz phase'}; no more was run")
        return
    rows, outcome.fuzz = ended.answer
    for row in rows:
        outcome.rows.append(row)
        observer.row(row)


def _lost_check_row(info: dict[str, Any], ended: Ended) -> dict[str, Any]:
    """The error row of a check whose worker died (or was stopped) in it, naming the call it was in."""
    return lost_row(info, f"{ended.what} during {ended.call or 'the check'}")


class CheckWorker:
    """The pytest plugin's worker: it runs checks one at a time, as asked, and outlives them, supervised as
    `supervise` supervises `rstck check`'s (the same error row after a death, the same replacement). It is
    forked (Linux), so `resolve` finds a check by its key in the memory the worker shares with the process
    that collected it."""

    def __init__(self, resolve: Callable[[Any], tuple[Any, Any]]):
        self._resolve = resolve
        self._worker = Worker(self._perform, method="fork")

    @property
    def notes(self) -> list[str]:
        """What no check's row says: a worker that ended while no check was running."""
        return self._worker.notes

    @property
    def left_behind(self) -> list[str]:
        """Threads the target left running in worker processes that have ended."""
        return self._worker.left_behind

    def run(self, key: Any, info: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], tuple]:
        """Run the check `key` names (`info`: its plan entry); its row and the target's known hangs then."""
        label = f"{info['rule']} {info['check']}"
        ended = self._worker.run((key, timeout_s), label=label, watchdog_s=watchdog_s(timeout_s))
        if not ended.lost:
            return ended.answer
        if not ended.began:
            raise KitBroke(f"the worker process ended twice before it began {label}: {'; '.join(self.notes)}")
        return _lost_check_row(info, ended), ()

    def close(self) -> None:
        self._worker.close()

    def _perform(self, job: tuple[Any, float], tell: Callable[[tuple], None]) -> tuple[Any, list[str]]:
        key, timeout_s = job
        check, target = self._resolve(key)
        return run_planned(check, target, timeout_s, tell)

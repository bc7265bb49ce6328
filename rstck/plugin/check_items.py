"""Check items, and where they run: one supervised worker process per pytest process (rstck/execution/supervise.py
CheckWorker), as `rstck check`'s checks do, started by the first check and stopped with the session.

A check's row decides its item: an error fails its setup (the message alone, no pytest frames), a fail fails the
item with the evidence, a warn passes with an RstckWarning (under --rstck-strict it is a failed item, as a fail is),
and unsupported, n/a and untested skip it with the reason. A failure the allowlist (--rstck-allow) allows is an
expected failure (xfail). Each failed item is counted once, strict or not (rstck/plugin/counting.py): another check
that finds the same broken sentence is skipped as the same finding, and the item another item's finding stopped is
skipped as blocked, naming the finding and the factory it was found on, unless no item reported it before.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from rstck.core.catalog import load_catalog
from rstck.core.evidence import importable_name
from rstck.core.plugins import profile_named
from rstck.core.target import Target
from rstck.core.process_end import end_process, left_behind
from rstck.core.verdict import Verdict
from rstck.execution.findings import Result
from rstck.execution.plan import Planned, planned_info
from rstck.execution.runner import run_check
from rstck.execution.supervise import CheckWorker
from rstck.execution.verification import Verification
from rstck.plugin.counting import FindingsReported, same_worker
from rstck.plugin.options import in_process, judged, timeout_of
from rstck.plugin.reporting import SeenAgain, record_rows
from rstck.plugin.rerun import next_steps
from rstck.reports.allure import allure_markers, attach_to_allure
from rstck.reports.items import stopping_finding


class RstckWarning(UserWarning):
    """A SHOULD or RECOMMENDED item is not met (verdict `warn`)."""


class RstckNote(UserWarning):
    """Something about the run that is no check's verdict (a worker process that ended between checks)."""


def _reproduce(item: pytest.Item, result: Result) -> None:
    """--rstck-repro DIR: a failing or warning check's standalone reproducer (rstck/reports/repro), named in its
    message and its row: one per finding, as `rstck check --repro` writes them (the session's Reproducers)."""
    config = item.config
    directory = config.getoption("rstck_repro", None)
    if not directory or result.verdict not in (Verdict.FAIL, Verdict.WARN):
        return
    from rstck.reports.repro import Reproducers

    if REPRODUCERS not in config.stash:
        config.stash[REPRODUCERS] = Reproducers(directory)
    row = result.row()
    row["loaded_as"] = row["loaded_as"] or _name_of_target(item.parent)
    config.stash[REPRODUCERS].attach([row])
    result.reproducer = said = row["reproducer"] or {}
    unconfirmed = f" (not confirmed: {said['unconfirmed']})" if said.get("unconfirmed") else ""
    result.message += (f"\n  reproducer: {said['command']}{unconfirmed}" if "command" in said
                       else f"\n  no reproducer: {said.get('none', 'none was written')}")
    if said.get("not_standalone"):
        result.message += f"\n  not standalone: {said['not_standalone']}"


def _name_of_target(collector: Any) -> str:
    """MODULE:CLASS.target of a Verification subclass's target, when the class is importable by its name (a test
    module's top level): a script loads the target by it ("" otherwise)."""
    verification = getattr(collector, "verification", None)
    name = importable_name(verification)
    return f"{name}.target" if name and getattr(verification, "target", None) is collector.target else ""


REPRODUCERS = pytest.StashKey[Any]()  # the session's reproducers (rstck.reports.repro.Reproducers), one per finding


class CheckFailed(AssertionError):
    """A check found a failed item no item reported before (a fail; under --rstck-strict a warn too); the message
    is the evidence. An AssertionError, so that reporters (Allure) count it as failed, not broken."""


class CheckItem(pytest.Item):
    def __init__(self, *, planned: Planned, key: tuple[str, int], **kwargs: Any):
        super().__init__(**kwargs)
        self.planned = planned
        self.key = key  # how the worker process finds this check (PLANS)
        self.result: Result | None = None
        self.row: dict[str, Any] = {}  # the result row, as the allowlist judged it
        self.seen_again: SeenAgain | None = None  # findings other items reported too, for the summary
        check = planned.check
        item = load_catalog()[check.rule]
        self.add_marker(pytest.mark.rstck(rule=check.rule, spec=item.spec, level=item.level))
        self.add_marker(getattr(pytest.mark, check.role))
        self.add_marker(same_worker(self.parent.nodeid))
        for subject in {check.subject, "processor" if planned.view else check.subject} - {check.role}:
            self.add_marker(getattr(pytest.mark, subject))
        self.add_marker(getattr(pytest.mark, item.level_marker))
        marker = profile_named(item.spec).marker
        if marker and marker not in {mark.name for mark in self.iter_markers()}:
            self.add_marker(getattr(pytest.mark, marker))
        for marker in allure_markers(item, target=planned.target.name, role=check.role, doc=check.doc):
            self.add_marker(marker)
        self.user_properties += [("rule", check.rule), ("spec", item.spec), ("level", item.level)]

    def setup(self) -> None:
        runner = self.config.stash[RUNNER]
        runner.ran_checks = True
        timeout_s = timeout_of(self.config, getattr(self.parent, "verification", Verification))
        worker = runner.worker()
        if worker is None:
            result = run_check(self.planned.check, self.planned.target, timeout_s=timeout_s)
        else:
            row, known_hangs = worker.run(self.key, planned_info(self.planned), timeout_s)
            self.planned.target.known_hangs.update(known_hangs)  # a fresh worker knows them too
            result = Result.of_row(row)
            while worker.notes:
                warnings.warn(RstckNote(worker.notes.pop(0)))
        result.node_id = self.nodeid
        self.result = result
        _reproduce(self, result)
        self.row = judged(self.config, result.row())
        record_rows(self, [self.row])
        self.user_properties.append(("verdict", result.verdict.value))
        if result.verdict is not Verdict.PASS:  # a warn passes, and says why where dashboards look
            self.user_properties.append(("reason", result.reason))
        if result.verdict is not Verdict.PASS or result.trace:
            attach_to_allure(self.config, result)
        if result.verdict is Verdict.ERROR:  # an error in setup, shown as the message alone: no pytest frames
            pytest.fail(result.message, pytrace=False)

    def runtest(self) -> None:
        result, row = self.result, self.row
        assert result is not None
        if row["verdict"] == Verdict.ALLOWED.value:
            allowed = row["deviation"]
            pytest.xfail(f"allowed until {allowed['expires']} by {allowed['entry']}: {allowed['reason']} "
                         f"({allowed['verdict']}: {result.reason})")
        runner, scope = self.config.stash[RUNNER], self.parent.nodeid
        decision = runner.findings.decide(scope, row)
        if decision.reports:
            runner.findings.record(scope, decision.reports, self.nodeid)
            counted = decision.reports[0]
            if counted != result.rule:  # where dashboards look: the item this failure counts for
                self.user_properties.append(("violated", counted))
            self.seen_again = SeenAgain(reported=list(decision.reports), left=list(decision.left))
            raise CheckFailed(result.message)
        others = {rule: node for rule, node in decision.reported_by.items() if rule != result.rule}
        # Told once at the end of the run, in the summary (rstck/plugin/reporting.py), not by a warning per item.
        self.seen_again = SeenAgain(found_too=[[rule, node] for rule, node in decision.reported_by.items()])
        if runner.findings.fails(decision.own):
            pytest.skip(f"the same finding: {result.rule} failed already in {decision.reported_by[result.rule]}; "
                        f"this check found it too: {result.reason}")
        if decision.own == "blocked":
            reporter = ", ".join(sorted(set(others.values()))) or "no other item"
            pytest.skip(f"blocked: {result.check} was stopped by another item's finding, reported by {reporter}: "
                        f"{stopping_finding(row)} ({result.reason})")
        self._judge(decision.own)

    def _judge(self, verdict: str) -> None:
        """The item's own verdict, where it is no failed item: a warn warns, the verdicts that decide nothing skip
        it."""
        result = self.result
        if verdict == Verdict.WARN.value:
            warnings.warn(RstckWarning(result.message))
        elif verdict in (Verdict.UNSUPPORTED.value, Verdict.NOT_APPLICABLE.value, Verdict.UNTESTED.value):
            pytest.skip(f"{verdict}: {result.reason}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):  # the evidence, then how to run this item again
            row = {**self.row, "loaded_as": self.row.get("loaded_as") or _name_of_target(self.parent)}
            return "\n".join([str(excinfo.value), *(f"  {line}" for line in next_steps(self, row))])
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.planned.check.rule} {self.planned.check.name}"


class CheckRunner:
    """Where one pytest process runs its check items, and what the plugin stops when the session ends: the
    supervised worker (started by the first check) and the targets --rstck-target loaded."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.ran_checks = False
        self.loaded_targets: list[Target] = []  # the --rstck-target targets: the plugin made them, it closes them
        # collector node id -> the plan the worker finds an item's check in (an item's key: node id, index)
        self.plans: dict[str, Any] = {}
        self._worker: CheckWorker | None = None
        self._exit_status = 0
        # each failed item counted once (rstck/plugin/counting.py)
        self.findings = FindingsReported(strict=config.getoption("rstck_strict"))
        # Threads an earlier run in this process left behind (pytest run inside a test process): not this run's to
        # end the process for.
        self._left_before = left_behind()
        config.stash[RUNNER] = self

    def worker(self) -> CheckWorker | None:
        """The supervised worker, or None to run checks here: --rstck-in-process, or where a worker cannot be
        forked (it finds the collected checks in the memory it shares with pytest)."""
        if in_process(self.config):
            return None
        if self._worker is None:
            self._worker = CheckWorker(self._find_in_worker)
        return self._worker

    def _find_in_worker(self, key: tuple[str, int]) -> tuple[Any, Target]:
        collector, index = key
        return self.plans[collector].check_in_worker(index)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._exit_status = int(exitstatus)
        if self._worker is not None:
            self._worker.close()
        for target in self.loaded_targets:
            close: Callable[[], None] | None = getattr(target, "close", None)  # a Node target's processes stop now
            if close is not None:
                close()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """After the summary: if the implementations under test left threads running that would keep the
        interpreter from ending, end the process (with pytest's exit status) instead of hanging."""
        left = self._worker.left_behind if self._worker is not None else []
        if left:  # ended with their worker: said, as the in-process route says it
            names = ", ".join(sorted(set(left))[:8]) + (", …" if len(set(left)) > 8 else "")
            print(f"rstck: {len(left)} thread{'s' * (len(left) != 1)} left behind by the implementations under "
                  f"test {'were' if len(left) != 1 else 'was'} still running in the check worker process "
                  f"({names}); it was ended", file=sys.stderr)
        if self.ran_checks:
            end_process(self._exit_status, lambda text: print(text, file=sys.stderr), besides=self._left_before)


RUNNER = pytest.StashKey[CheckRunner]()

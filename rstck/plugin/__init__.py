"""The pytest plugin: every check becomes a tagged pytest item.

Two ways in: `pytest --rstck-target mypkg.tck:target`, or a test class that subclasses
rstck.PublisherVerification (or Subscriber/Processor) and sets `target`. Items carry
`rstck(rule=..., spec=..., level=...)`, a role marker and a level marker. The checks run in one
supervised worker process per pytest process (rstck/execution/supervise.py), as `rstck check`'s do.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import pathlib
import sys
import warnings
from typing import Any

import pytest

from rstck.execution.options import seconds
from rstck.execution.plan import Planned, plan
from rstck.reports.allure import ALLURE_MARKERS, allure_markers, attach_to_allure
from rstck.execution.rows import upgrade
from rstck.core.catalog import ALL_PROFILE, DEFAULT_PROFILE, load_catalog
from rstck.core.plugins import profile_named, profiles
from rstck.execution.runner import Result, run_check
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.execution.supervise import CheckWorker, _planned_info, runs_in_process
from rstck.core.target import Target, load_target
from rstck.core.process_end import end_process
from rstck.core.verdict import BadInput, Verdict
from rstck.execution.verification import Verification

# The kit's own markers; each installed profile adds its own between them (rstck/core/plugins.py).
ITEM_MARKER = {"rstck(rule, spec, level)": "a check of a catalogue item, e.g. -m \"rstck(rule='3.9')\""}
KIT_MARKERS = {
    "must": "checks of MUST / MUST NOT / REQUIRED items",
    "should": "checks of SHOULD / RECOMMENDED items",
    "may": "checks of MAY items",
    "fuzz": "Hypothesis state machines fuzzing signal orderings",
}


def markers() -> dict[str, str]:
    """Every marker an rstck item may carry, with its help: the item's, each profile's, then the levels'."""
    found = dict(ITEM_MARKER)
    for profile in profiles():
        for name, text in profile.item_markers().items():
            found.setdefault(name, text)
    return {**found, **KIT_MARKERS}


class RstckWarning(UserWarning):
    """A SHOULD or RECOMMENDED item is not met (verdict `warn`)."""


class RstckNote(UserWarning):
    """Something about the run that is no check's verdict (a worker process that ended between checks)."""


class CheckFailed(AssertionError):
    """A check's verdict is fail (or warn under --rstck-strict); the message is the evidence. An
    AssertionError, so that reporters (Allure) count it as failed, not broken."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rstck", "Reactive Streams conformance (rstck)")
    group.addoption("--rstck-target", action="append", default=[], metavar="MODULE:ATTR",
                    help="run every check against this target (repeatable)")
    group.addoption("--rstck-rules", metavar="GLOBS", help='only these rule ids or globs: "1.*,3.9"')
    group.addoption("--rstck-profile", metavar="NAME", default=None,
                    help="which checks run: default, an opt-in profile (spi-draft: docs/spi-draft.md), or all")
    group.addoption("--rstck-results", metavar="DIR", help="write JSON Lines result rows into DIR")
    group.addoption("--rstck-html", metavar="FILE", help="write the HTML conformance report of the run to FILE")
    group.addoption("--rstck-timeout", type=float, default=None, metavar="S",
                    help=f"deadline per check in seconds (default {DEFAULT_DEADLINE_S:g})")
    group.addoption("--rstck-strict", action="store_true", help="a warn verdict fails its item")
    group.addoption("--rstck-stream-length", type=int, default=0, metavar="N",
                    help="the stress mode: the checks that stream (1.1, 3.8, 3.17) deliver N elements")
    group.addoption("--rstck-in-process", action="store_true",
                    help="run the checks in the pytest process, not a supervised worker (for a debugger); a "
                         "target that ends the process then ends the run")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_ReportedRows(config), "rstck-reported-rows")
    for marker, text in {**markers(), **ALLURE_MARKERS}.items():
        config.addinivalue_line("markers", f"{marker}: {text}")
    timeout = config.getoption("rstck_timeout", None)
    if timeout is not None:
        try:
            seconds("--rstck-timeout", timeout)
        except BadInput as exc:
            raise pytest.UsageError(str(exc)) from None
    results_dir = config.getoption("rstck_results", None)
    config.stash[_RESULTS] = _ResultsFile(pathlib.Path(results_dir), _worker_id(config)) if results_dir else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """The item's result rows ride on its setup report: xdist carries them to the controller, which
    writes the HTML report and names the JUnit classname."""
    outcome = yield
    rows = getattr(item, "rstck_rows", None)
    if rows and call.when == "setup":
        outcome.get_result().rstck_rows = rows


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)
    worker = session.config.stash.get(_WORKER, None)
    if worker is not None:
        worker.close()
    for target in session.config.stash.get(_LOADED_TARGETS, []):
        close = getattr(target, "close", None)  # a Node target's processes started ahead stop now
        if close is not None:
            close()


class _ReportedRows:
    """The rows the items report, as the process that writes JUnit and the HTML report sees them (the
    xdist controller, or the only process)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.rows: list[dict[str, Any]] = []
        self.written = ""  # what became of the HTML report, for the summary

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rows = getattr(report, "rstck_rows", None)
        if not rows or report.when != "setup":
            return
        if self.config.getoption("rstck_html", None):  # kept only for the report
            self.rows.extend(rows)
        from _pytest.junitxml import xml_key  # pytest's own JUnit writer: its classname is empty for our node ids

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            from rstck.reports.junit import classname

            xml.node_reporter(report).add_attribute("classname", classname(upgrade(rows[0])))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        html = self.config.getoption("rstck_html", None)
        if not html or hasattr(self.config, "workerinput"):
            return
        from rstck.reports.html import write_report
        from rstck.execution.rows import merge

        rows, _ = merge([upgrade(row) for row in self.rows])
        try:
            self.written = f"rstck report: {write_report(rows, html)}"
        except BadInput as exc:
            self.written = f"rstck: {exc}"
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.written:
            terminalreporter.write_line(self.written)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After the summary: if the implementations under test left threads running that would keep the
    interpreter from ending, end the process (with pytest's exit status) instead of hanging."""
    worker = config.stash.get(_WORKER, None)
    if worker is not None and worker.left_behind:  # ended with their worker: said, as the in-process route says it
        names = ", ".join(sorted(set(worker.left_behind))[:8]) + (", …" if len(set(worker.left_behind)) > 8 else "")
        count = len(worker.left_behind)
        print(f"rstck: {count} thread{'s' * (count != 1)} left behind by the implementations under test "
              f"{'were' if count != 1 else 'was'} still running in the check worker process ({names}); "
              "it was ended", file=sys.stderr)
    if config.stash.get(_RAN_CHECKS, False):
        end_process(config.stash.get(_EXIT_STATUS, 0), lambda text: print(text, file=sys.stderr))


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any):
    if inspect.isclass(obj) and issubclass(obj, Verification) and getattr(obj, "target", None) is not None:
        return VerificationCollector.from_parent(collector, name=name, verification=obj, target=obj.target)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """Each --rstck-target becomes a collector beside the session's own, so collection counts,
    --collect-only and deselection treat its items like any others."""
    specs = collector.config.getoption("rstck_target") if isinstance(collector, pytest.Session) else []
    targets = [(spec, _command_line_target(collector.config, spec)) for spec in specs]
    collector.config.stash.setdefault(_LOADED_TARGETS, []).extend(target for _, target in targets)
    report = yield
    if report.passed:
        report.result.extend(
            VerificationCollector.from_parent(collector, name=f"rstck[{spec}]", nodeid=f"rstck[{spec}]",
                                              verification=Verification, target=target, spec=spec)
            for spec, target in targets)
    return report


def _command_line_target(config: pytest.Config, spec: str) -> Target:
    try:
        target = load_target(spec)
    except BadInput as exc:
        raise pytest.UsageError(f"--rstck-target: {exc}") from None
    try:
        plan(target, rules=config.getoption("rstck_rules"), profile=_profile(config, Verification))
    except BadInput as exc:  # an unknown rule id or profile
        raise pytest.UsageError(str(exc).replace("--rules:", "--rstck-rules:", 1)) from None
    return target


class VerificationCollector(pytest.Collector):
    """The checks of one Verification (or of one --rstck-target) as pytest items."""

    def __init__(self, *, verification: type[Verification], target: Target, spec: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.verification = verification
        self.target = target
        self.spec = spec  # the --rstck-target that named the target, if one did

    def collect(self) -> list[pytest.Item]:
        rules = self.verification.rules or self.config.getoption("rstck_rules")
        stream_length = self.config.getoption("rstck_stream_length", 0) or 0
        if stream_length < 0:
            raise pytest.UsageError(f"--rstck-stream-length must be positive, got {stream_length}")
        if stream_length:
            self.target.stream_length = stream_length
        try:
            planned = plan(self.target, rules=rules, subjects=self.verification.subjects,
                           profile=_profile(self.config, self.verification))
        except BadInput as exc:
            raise pytest.UsageError(str(exc)) from None
        self.config.stash.setdefault(_COLLECTED, {})[self.nodeid] = _CollectedPlan(
            spec=self.spec, rules=rules,
            subjects=self.verification.subjects, profile=_profile(self.config, self.verification),
            stream_length=stream_length, planned=planned)
        checks = [CheckItem.from_parent(self, name=_item_name(p), planned=p, key=(self.nodeid, index))
                  for index, p in enumerate(planned)]
        if _profile(self.config, self.verification) not in (DEFAULT_PROFILE, ALL_PROFILE):
            return checks  # the fuzzers exercise the core rules: an opt-in profile alone has none
        from rstck.plugin.fuzz_items import fuzz_items  # the target's fuzz items, marked `fuzz` (rstck/fuzz/)
        return checks + fuzz_items(self, self.target, self.verification.subjects, rules=rules)


def _profile(config: pytest.Config, verification: type[Verification]) -> str:
    """--rstck-profile, else the Verification's own, else the default profile."""
    return config.getoption("rstck_profile", None) or verification.profile


def _item_name(planned: Planned) -> str:
    """The rule id, then a name that reads like the rule (prefixed by the role a processor is checked in)."""
    name = f"{planned.check.rule}-{planned.check.name}"
    return f"{planned.view.replace(' ', '_')}-{name}" if planned.view else name


@dataclasses.dataclass
class _CollectedPlan:
    """What one collector planned, and how a worker process plans the same checks afresh: a target named by
    --rstck-target is loaded again there (as `rstck check`'s worker loads it), so that the processes or
    connections an adapter opened while pytest collected stay pytest's; a Verification's target is the one
    the worker shares with pytest."""

    spec: str | None
    rules: str | None
    subjects: Any
    profile: str
    stream_length: int
    planned: list[Planned]
    in_worker: list[Planned] | None = None

    def check_in_worker(self, index: int) -> tuple[Any, Target]:
        if self.spec is None:
            return self.planned[index].check, self.planned[index].target
        if self.in_worker is None:
            target = load_target(self.spec)
            target.known_hangs.update(self.planned[0].target.known_hangs)
            if self.stream_length:
                target.stream_length = self.stream_length
            try:
                target.prepare()  # outside every deadline, as `rstck check` does it
            except BadInput:
                pass  # the check meets it again, and its row says so
            self.in_worker = plan(target, rules=self.rules, subjects=self.subjects, profile=self.profile)
            if [_item_name(p) for p in self.in_worker] != [_item_name(p) for p in self.planned]:
                raise RuntimeError(f"{self.spec}: the worker process planned other checks than pytest collected")
        return self.in_worker[index].check, self.in_worker[index].target


class CheckItem(pytest.Item):
    def __init__(self, *, planned: Planned, key: tuple[str, int], **kwargs: Any):
        super().__init__(**kwargs)
        self.planned = planned
        self.key = key  # how the worker process finds this check
        self.result: Result | None = None
        check = planned.check
        item = load_catalog()[check.rule]
        self.add_marker(pytest.mark.rstck(rule=check.rule, spec=item.spec, level=item.level))
        self.add_marker(getattr(pytest.mark, check.role))
        for subject in {check.subject, "processor" if planned.view else check.subject} - {check.role}:
            self.add_marker(getattr(pytest.mark, subject))
        self.add_marker(getattr(pytest.mark, item.level_marker))
        marker = profile_named(item.spec).marker
        if marker and marker not in {mark.name for mark in self.iter_markers()}:
            self.add_marker(getattr(pytest.mark, marker))
        for marker in allure_markers(item, target=planned.target.name, role=check.role, doc=check.doc):
            self.add_marker(marker)
        self.user_properties += [("rule", check.rule), ("spec", item.spec), ("level", item.level)]

    def _timeout(self) -> float:
        verification = getattr(self.parent, "verification", Verification)
        return self.config.getoption("rstck_timeout") or verification.timeout_s or DEFAULT_DEADLINE_S

    def setup(self) -> None:
        self.config.stash[_RAN_CHECKS] = True
        worker = _worker(self.config)
        if worker is None:
            result = run_check(self.planned.check, self.planned.target, timeout_s=self._timeout())
        else:
            row, known_hangs = worker.run(self.key, _planned_info(self.planned), self._timeout())
            self.planned.target.known_hangs.update(known_hangs)  # a fresh worker knows them too
            result = _result_of(row)
            while worker.notes:
                warnings.warn(RstckNote(worker.notes.pop(0)))
        result.node_id = self.nodeid
        self.result = result
        self.rstck_rows = [result.row()]
        results_file = self.config.stash[_RESULTS]
        if results_file is not None:
            results_file.write(result)
        self.user_properties.append(("verdict", result.verdict.value))
        if result.verdict is not Verdict.PASS:  # a warn passes, and says why where dashboards look
            self.user_properties.append(("reason", result.reason))
        if result.verdict is not Verdict.PASS or result.trace:
            attach_to_allure(self.config, result)
        if result.verdict is Verdict.ERROR:  # an error in setup, shown as the message alone: no pytest frames
            pytest.fail(result.message, pytrace=False)

    def runtest(self) -> None:
        result = self.result
        assert result is not None
        if result.verdict is Verdict.FAIL:
            raise CheckFailed(result.message)
        if result.verdict is Verdict.WARN:
            if self.config.getoption("rstck_strict"):
                raise CheckFailed(result.message)
            warnings.warn(RstckWarning(result.message))
        elif result.verdict in (Verdict.UNSUPPORTED, Verdict.NOT_APPLICABLE, Verdict.UNTESTED):
            pytest.skip(f"{result.verdict.value}: {result.reason}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.planned.check.rule} {self.planned.check.name}"


def _worker(config: pytest.Config) -> CheckWorker | None:
    """The pytest process's supervised worker (started by the first check), or None to run checks here:
    --rstck-in-process, or where a worker cannot be forked (it finds the collected checks in the memory it
    shares with pytest)."""
    if runs_in_process(config.getoption("rstck_in_process", False)):
        return None
    worker = config.stash.get(_WORKER, None)
    if worker is None:
        collected = config.stash[_COLLECTED]
        worker = config.stash[_WORKER] = CheckWorker(lambda key: collected[key[0]].check_in_worker(key[1]))
    return worker


_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(Result) if f.name != "leftovers")


def _result_of(row: dict[str, Any]) -> Result:
    """The Result a worker's row stands for."""
    values = {name: row[name] for name in _RESULT_FIELDS if name in row}
    return Result(**{**values, "verdict": Verdict(row["verdict"])})


_RESULTS = pytest.StashKey["_ResultsFile | None"]()
_WORKER = pytest.StashKey[CheckWorker]()
_COLLECTED = pytest.StashKey[dict]()  # collector node id -> _CollectedPlan
_RAN_CHECKS = pytest.StashKey[bool]()
_LOADED_TARGETS = pytest.StashKey[list]()  # the --rstck-target targets: the plugin made them, it closes them
_EXIT_STATUS = pytest.StashKey[int]()


def _worker_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return workerinput["workerid"] if workerinput else os.environ.get("PYTEST_XDIST_WORKER", "main")


class _ResultsFile:
    """One JSON Lines file per pytest process that runs checks (per xdist worker), started afresh
    by the run's first row, so a process that runs none (the xdist controller) leaves no file."""

    def __init__(self, directory: pathlib.Path, worker: str):
        self.path = directory / f"pytest-{worker}.jsonl"
        self._started = False

    def write(self, result: Result) -> None:
        if not self._started:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")
            self._started = True
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(result.row(), ensure_ascii=False) + "\n")

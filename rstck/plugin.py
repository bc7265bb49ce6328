"""The pytest plugin: every check becomes a tagged pytest item.

Two ways in: `pytest --rstck-target mypkg.tck:target`, or a test class that subclasses
rstck.PublisherVerification (or Subscriber/Processor) and sets `target`. Items carry
`rstck(rule=..., spec=..., level=...)`, a role marker and a level marker.
"""

from __future__ import annotations

import inspect
import json
import os
import pathlib
import sys
import warnings
from typing import Any

import pytest

from .options import seconds
from .plan import Planned, plan
from .rules.catalog import load_catalog
from .runner import Result, run_check
from .settle import DEFAULT_DEADLINE_S
from .target import Target, load_target
from .threads import end_process
from .verdict import BadInput, Verdict
from .verification import Verification

MARKERS = {
    "rstck(rule, spec, level)": "a check of a catalogue item, e.g. -m \"rstck(rule='3.9')\"",
    "publisher": "checks of Publisher rules (1.x)",
    "subscription": "checks of Subscription rules (3.x)",
    "subscriber": "checks of Subscriber rules (2.x)",
    "processor": "checks of Processor rules (4.x) and checks run against a processor",
    "must": "checks of MUST / MUST NOT / REQUIRED items",
    "should": "checks of SHOULD / RECOMMENDED items",
    "may": "checks of MAY items",
    "fuzz": "Hypothesis state machines fuzzing signal orderings",
}


class RstckWarning(UserWarning):
    """A SHOULD or RECOMMENDED item is not met (verdict `warn`)."""


class CheckFailed(Exception):
    """A check's verdict is fail (or warn under --rstck-strict); the message is the evidence."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rstck", "Reactive Streams conformance (rstck)")
    group.addoption("--rstck-target", action="append", default=[], metavar="MODULE:ATTR",
                    help="run every check against this target (repeatable)")
    group.addoption("--rstck-rules", metavar="GLOBS", help='only these rule ids or globs: "1.*,3.9"')
    group.addoption("--rstck-results", metavar="DIR", help="write JSON Lines result rows into DIR")
    group.addoption("--rstck-timeout", type=float, default=None, metavar="S",
                    help=f"deadline per check in seconds (default {DEFAULT_DEADLINE_S:g})")
    group.addoption("--rstck-strict", action="store_true", help="a warn verdict fails its item")
    group.addoption("--rstck-stream-length", type=int, default=0, metavar="N",
                    help="the stress mode: the checks that stream (1.1, 3.8, 3.17) deliver N elements")


def pytest_configure(config: pytest.Config) -> None:
    for marker, text in MARKERS.items():
        config.addinivalue_line("markers", f"{marker}: {text}")
    timeout = config.getoption("rstck_timeout", None)
    if timeout is not None:
        try:
            seconds("--rstck-timeout", timeout)
        except BadInput as exc:
            raise pytest.UsageError(str(exc)) from None
    results_dir = config.getoption("rstck_results", None)
    config.stash[_RESULTS] = _ResultsFile(pathlib.Path(results_dir), _worker_id(config)) if results_dir else None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After the summary: if the implementations under test left threads running that would keep the
    interpreter from ending, end the process (with pytest's exit status) instead of hanging."""
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
    report = yield
    if report.passed:
        report.result.extend(
            VerificationCollector.from_parent(collector, name=f"rstck[{spec}]", nodeid=f"rstck[{spec}]",
                                              verification=Verification, target=target)
            for spec, target in targets)
    return report


def _command_line_target(config: pytest.Config, spec: str) -> Target:
    try:
        target = load_target(spec)
    except BadInput as exc:
        raise pytest.UsageError(f"--rstck-target: {exc}") from None
    try:
        plan(target, rules=config.getoption("rstck_rules"))
    except BadInput as exc:  # an unknown rule id
        raise pytest.UsageError(str(exc).replace("--rules:", "--rstck-rules:", 1)) from None
    return target


class VerificationCollector(pytest.Collector):
    """The checks of one Verification (or of one --rstck-target) as pytest items."""

    def __init__(self, *, verification: type[Verification], target: Target, **kwargs: Any):
        super().__init__(**kwargs)
        self.verification = verification
        self.target = target

    def collect(self) -> list[pytest.Item]:
        rules = self.verification.rules or self.config.getoption("rstck_rules")
        stream_length = self.config.getoption("rstck_stream_length", 0) or 0
        if stream_length < 0:
            raise pytest.UsageError(f"--rstck-stream-length must be positive, got {stream_length}")
        if stream_length:
            self.target.stream_length = stream_length
        try:
            planned = plan(self.target, rules=rules, subjects=self.verification.subjects)
        except BadInput as exc:
            raise pytest.UsageError(str(exc)) from None
        checks = [CheckItem.from_parent(self, name=_item_name(p), planned=p) for p in planned]
        from .fuzz.pytest_items import fuzz_items  # the target's fuzz items, marked `fuzz` (rstck/fuzz/)
        return checks + fuzz_items(self, self.target, self.verification.subjects, rules=rules)


def _item_name(planned: Planned) -> str:
    """The rule id, then a name that reads like the rule (prefixed by the role a processor is checked in)."""
    name = f"{planned.check.rule}-{planned.check.name}"
    return f"{planned.view.replace(' ', '_')}-{name}" if planned.view else name


class CheckItem(pytest.Item):
    def __init__(self, *, planned: Planned, **kwargs: Any):
        super().__init__(**kwargs)
        self.planned = planned
        self.result: Result | None = None
        check = planned.check
        item = load_catalog()[check.rule]
        self.add_marker(pytest.mark.rstck(rule=check.rule, spec=item.spec, level=item.level))
        self.add_marker(getattr(pytest.mark, check.role))
        for subject in {check.subject, "processor" if planned.view else check.subject} - {check.role}:
            self.add_marker(getattr(pytest.mark, subject))
        self.add_marker(getattr(pytest.mark, item.level_marker))
        self.user_properties.append(("rstck_rule", check.rule))

    def _timeout(self) -> float:
        verification = getattr(self.parent, "verification", Verification)
        return self.config.getoption("rstck_timeout") or verification.timeout_s or DEFAULT_DEADLINE_S

    def setup(self) -> None:
        self.config.stash[_RAN_CHECKS] = True
        result = run_check(self.planned.check, self.planned.target, timeout_s=self._timeout())
        result.node_id = self.nodeid
        self.result = result
        results_file = self.config.stash[_RESULTS]
        if results_file is not None:
            results_file.write(result)
        self.user_properties.append(("rstck_verdict", result.verdict.value))
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


_RESULTS = pytest.StashKey["_ResultsFile | None"]()
_RAN_CHECKS = pytest.StashKey[bool]()
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

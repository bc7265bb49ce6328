"""Collection: each target becomes a collector whose items are its planned checks (and its fuzz items).

Two ways in: `pytest --rstck-target mypkg.tck:target`, which adds a collector beside the session's own, or a test
class that subclasses rstck.PublisherVerification (or Subscriber/Processor) and sets `target`.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from rstck.core.catalog import ALL_PROFILE, DEFAULT_PROFILE
from rstck.core.target import Target, load_target
from rstck.core.verdict import BadInput
from rstck.execution.plan import Planned, plan
from rstck.execution.verification import Verification
from rstck.plugin.check_items import RUNNER, CheckItem
from rstck.plugin.imports import import_hint
from rstck.plugin.options import profile_of


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
    collector.config.stash[RUNNER].loaded_targets.extend(target for _, target in targets)
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
        missing = getattr(exc.__cause__, "name", None)  # a module the loader could not find, not one it raised in
        hint = import_hint(config, missing, from_test_module=False) if "cannot import" in str(exc) and missing else ""
        raise pytest.UsageError(f"--rstck-target: {exc}" + (f"\n{hint}" if hint else "")) from None
    try:
        plan(target, rules=config.getoption("rstck_rules"), profile=profile_of(config, Verification))
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
        profile = profile_of(self.config, self.verification)
        try:
            planned = plan(self.target, rules=rules, subjects=self.verification.subjects, profile=profile)
        except BadInput as exc:
            raise pytest.UsageError(str(exc)) from None
        self.config.stash[RUNNER].plans[self.nodeid] = CollectedPlan(
            spec=self.spec, rules=rules, subjects=self.verification.subjects, profile=profile,
            stream_length=stream_length, planned=planned)
        checks = [CheckItem.from_parent(self, name=item_name(p), planned=p, key=(self.nodeid, index))
                  for index, p in enumerate(planned)]
        if profile not in (DEFAULT_PROFILE, ALL_PROFILE):
            return checks  # the fuzzers exercise the core rules: an opt-in profile alone has none
        from rstck.plugin.fuzz_items import fuzz_items  # the target's fuzz items, marked `fuzz` (rstck/fuzz/)
        return checks + fuzz_items(self, self.target, self.verification.subjects, rules=rules)


def item_name(planned: Planned) -> str:
    """The rule id, then a name that reads like the rule (prefixed by the role a processor is checked in)."""
    name = f"{planned.check.rule}-{planned.check.name}"
    return f"{planned.view.replace(' ', '_')}-{name}" if planned.view else name


@dataclasses.dataclass
class CollectedPlan:
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
            if [item_name(p) for p in self.in_worker] != [item_name(p) for p in self.planned]:
                raise RuntimeError(f"{self.spec}: the worker process planned other checks than pytest collected")
        return self.in_worker[index].check, self.in_worker[index].target

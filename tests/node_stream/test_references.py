"""The stream references pass every check of the Node stream contract and the JSGI extension: the reference
shipped with the kit, and a second implementation written another way (classes, queueMicrotask, writes on
timers, a duplex without half-open support)."""

from __future__ import annotations

import pytest

from rstck.execution.plan import plan
from rstck.core.checks import all_checks

from .helpers import REFERENCE, here, node_stream_target, run

pytestmark = pytest.mark.node

CONFORMANT = here("conformant", "class_streams.js")
STREAM_SPECS = ("node.", "jsgi.")
# The one check the shipped reference cannot run: its duplex supports the half-open state.
HALF_OPEN_ONLY = {("node.duplex.3", "n/a", "the duplex has allowHalfOpen true: the item concerns one without it")}


def _stream_checks() -> set[str]:
    return {c.id for c in all_checks() if c.rule.startswith(STREAM_SPECS)}


@pytest.mark.parametrize("module, expected_other", [(REFERENCE, HALF_OPEN_ONLY), (CONFORMANT, set())],
                         ids=["reference", "class-streams"])
def test_every_check_passes(module, expected_other):
    with node_stream_target(module) as target:
        planned = plan(target)
        assert {p.check.id for p in planned} == _stream_checks()  # every stream check runs, nothing else
        results = run(target)
    other = {(r.rule, r.verdict.value, r.reason) for r in results if r.verdict.value != "pass"}
    assert other == expected_other, "\n\n".join(r.message for r in results if r.verdict.value != "pass")


def test_a_module_with_one_factory_runs_only_its_checks():
    with node_stream_target(here("bad", "factory_throws.js")) as target:
        subjects = {p.check.subject for p in plan(target)}
    assert subjects == {"readable", "writable"}


def test_each_kind_of_target_is_told_only_what_its_kind_lacks():
    from rstck.execution.plan import unserved
    from rstck.core.target import load_target

    with node_stream_target(here("bad", "factory_throws.js")) as target:
        assert set(unserved(target)) == {"stream", "filter", "duplex", "jsgi"}  # never "publisher"
    python_target = load_target("rstck.reference.targets:sync_publisher")
    assert not set(unserved(python_target)) & {"stream", "readable", "writable", "filter", "duplex", "jsgi"}

"""Running JavaScript targets the way tests/test_zoo.py runs Python ones."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
from typing import Any, Iterator

from rstck.adapters.node.target import NodeTarget
from rstck.execution.plan import plan
from rstck.execution.runner import Result, run_check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(ROOT, "rstck", "reference", "js", "reactive_streams.js")
# Short deadlines: a hostile module costs this much per check; the references never come near it.
TIMEOUT_S = 2.0


def here(*parts: str) -> str:
    return os.path.join(HERE, *parts)


@contextlib.contextmanager
def node_target(module: str, **options: Any) -> Iterator[NodeTarget]:
    target = NodeTarget(module, **options)
    try:
        yield target
    finally:
        target.close()


def run(target: Any, rules: str | None = None, timeout_s: float = TIMEOUT_S) -> list[Result]:
    return [run_check(p.check, p.target, timeout_s=timeout_s) for p in plan(target, rules=rules)]


def verdicts(results: list[Result]) -> dict[str, set[str]]:
    """verdict -> the items it was given to (the item violated, when it is not the check's own, and every other
    item the same check charged)."""
    found: dict[str, set[str]] = collections.defaultdict(set)
    for result in results:
        found[result.verdict.value].add(result.violated or result.rule)
        for other in result.also_charged:
            found[other["verdict"]].add(other["rule"])
    return found


@dataclasses.dataclass(frozen=True)
class Mutant:
    module: str
    fails: frozenset[str]
    warns: frozenset[str] = frozenset()


def mutant(name: str, fails: str = "", warns: str = "") -> Mutant:
    return Mutant(name, frozenset(fails.split()), frozenset(warns.split()))


def assert_caught_on_exactly(case: Mutant, results: list[Result]) -> None:
    """No check errored, and the mutant failed exactly its `fails` and warned exactly its `warns`."""
    errors = [r.message for r in results if r.verdict.value == "error"]
    assert not errors, "\n\n".join(errors)
    found = verdicts(results)
    unexpected = [f"{r.rule} {r.check}: {r.verdict.value}\n{r.message}" for r in results
                  if r.verdict.value in ("fail", "warn") and r.rule not in case.fails | case.warns]
    assert found["fail"] == case.fails, "\n\n".join(unexpected) or found
    assert found["warn"] == case.warns, "\n\n".join(unexpected) or found


def assert_pytest_passes(pytester: Any, *args: str, at_least: int) -> None:
    """pytest with `args` exits 0, with at least `at_least` tests passed and none failed."""
    result = pytester.runpytest(*args)
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()
    assert outcomes["passed"] >= at_least and not outcomes.get("failed")

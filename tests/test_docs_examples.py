"""The examples the documentation shows are real code, and rstck finds them conformant."""

from __future__ import annotations

import importlib.util
import pathlib

from rstck import InProcessTarget
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.core.verdict import Verdict

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_asyncio_countdown_is_conformant_with_no_setting():
    target = InProcessTarget(create_publisher=load("asyncio_countdown").Countdown)
    results = [run_check(p.check, p.target) for p in plan(target)]
    bad = [f"{r.rule} {r.check}: {r.message}" for r in results
           if r.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR)]
    assert bad == []
    assert any(r.verdict is Verdict.PASS and r.rule == "3.16" for r in results)

"""Running reproducers the way a user does: as a program of their own, from the project's root.

A Python script of an in-process target runs in a child forked from a warm interpreter (tests/repro/forked.py) rather
than in a fresh one: the same program, its start paid once per test process. Scripts of other kinds (JavaScript, the
network protocol's) and of Spark targets (whose cost is the JVM each one starts) run as a fresh process."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import types
from typing import Any

import pytest

import rstck.reports.repro
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reports.repro import LANGUAGES, Reproducer, language_of, write_reproducers

from .forked import WARM_INTERPRETER

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXIT_KEPT, EXIT_BROKEN = 0, 1
# Generous: a reproducer's own waits are bounded by its check's deadline; a loaded machine must not decide.
RUN_TIMEOUT_S = 120


def rows_of(target: Any, timeout_s: float, rules: str | None = None) -> list[dict[str, Any]]:
    return [run_check(p.check, p.target, timeout_s=timeout_s).row() for p in plan(target, rules=rules)]


def run_script(found: Reproducer, *target: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a reproducer (against its own target, or the one named; `env`: what to change of the environment)."""
    return run_script_file(found.path, *target, language=language_of(found.row["loaded_as"]), env=env)


def run_script_file(path: Any, *target: str, language: str = "python",
                    env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": ROOT, **(env or {})}
    if language == "python" and runs_forked(path):
        return WARM_INTERPRETER.run(str(path), list(target), env=environment, cwd=ROOT, timeout=RUN_TIMEOUT_S)
    return subprocess.run([*LANGUAGES[language].command(path), *target], capture_output=True, text=True, cwd=ROOT,
                          timeout=RUN_TIMEOUT_S, env=environment)


def runs_forked(path: Any) -> bool:
    """Whether a Python script runs in a forked warm interpreter: any but a Spark target's (it starts a JVM)."""
    return "session=spark_session" not in pathlib.Path(path).read_text(encoding="utf-8")


def _confirming_run(command: list[str], **how: Any) -> subprocess.CompletedProcess:
    """subprocess.run, as the kit's confirmation calls it; a Python script that runs forked runs so."""
    if command[:1] == [sys.executable] and len(command) == 2 and runs_forked(command[1]):
        return WARM_INTERPRETER.run(command[1], [], env=how["env"], cwd=how["cwd"], timeout=how["timeout"])
    return subprocess.run(command, **how)


@pytest.fixture
def confirmed_in_warm_interpreter(monkeypatch):
    """The kit's confirming runs (rstck.reports.repro.confirmed) of Python scripts made in a forked warm interpreter,
    as the tests' own runs are: what the kit judges of a run is unchanged."""
    monkeypatch.setattr(rstck.reports.repro, "subprocess",
                        types.SimpleNamespace(run=_confirming_run, TimeoutExpired=subprocess.TimeoutExpired))


def assert_reproduces(found: Reproducer, fixed: str) -> None:
    """Exit 1 naming the broken item against the implementation that produced it, exit 0 against `fixed`."""
    item = found.row["violated"] or found.row["rule"]
    broken = run_script(found)
    assert broken.returncode == EXIT_BROKEN and f"BROKEN {item}:" in broken.stdout, \
        f"{found.path} against its mutant:\n{broken.stdout[-3000:]}{broken.stderr[-2000:]}"
    assert_kept_by(found, fixed)


def assert_kept_by(found: Reproducer, fixed: str) -> None:
    kept = run_script(found, fixed)
    assert kept.returncode == EXIT_KEPT, f"{found.path} against {fixed}:\n{kept.stdout[-3000:]}{kept.stderr[-2000:]}"


def assert_confirmed_reproduces(found: Reproducer, fixed: str) -> None:
    """assert_reproduces of a script the kit confirmed (write_reproducers with confirm): its confirming run was the
    run against the mutant (exit 1, naming the item: rstck.reports.repro.confirmed), so only the fixed one remains.
    That the kit's confirmation judges a run so is seen where a test runs a confirmed script itself
    (tests/repro/test_faces.py)."""
    item = found.row["violated"] or found.row["rule"]
    assert found.path is not None and not found.unconfirmed, f"{item} ({found.row['check']}): {found.reason}"
    assert_kept_by(found, fixed)


def assert_every_finding_reproduces(rows: list[dict[str, Any]], directory: Any, fixed: str) -> None:
    """`rows` have findings, and each gets a script that reproduces it (assert_confirmed_reproduces)."""
    made = write_reproducers(rows, directory)
    assert made, "a mutant has findings"
    for found in made:
        assert_confirmed_reproduces(found, fixed)

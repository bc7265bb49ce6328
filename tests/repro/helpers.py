"""Running reproducers the way a user does: as a program of their own, from the project's root."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reports.repro import LANGUAGES, Reproducer, language_of, write_reproducers

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
    return subprocess.run([*LANGUAGES[language].command(path), *target], capture_output=True, text=True, cwd=ROOT,
                          timeout=RUN_TIMEOUT_S, env={**os.environ, "PYTHONPATH": ROOT, **(env or {})})


def assert_reproduces(found: Reproducer, fixed: str) -> None:
    """Exit 1 naming the broken item against the implementation that produced it, exit 0 against `fixed`."""
    item = found.row["violated"] or found.row["rule"]
    broken = run_script(found)
    assert broken.returncode == EXIT_BROKEN and f"BROKEN {item}:" in broken.stdout, \
        f"{found.path} against its mutant:\n{broken.stdout[-3000:]}{broken.stderr[-2000:]}"
    kept = run_script(found, fixed)
    assert kept.returncode == EXIT_KEPT, f"{found.path} against {fixed}:\n{kept.stdout[-3000:]}{kept.stderr[-2000:]}"


def assert_every_finding_reproduces(rows: list[dict[str, Any]], directory: Any, fixed: str) -> None:
    """`rows` have findings, and each gets a script that reproduces it (assert_reproduces)."""
    made = write_reproducers(rows, directory)
    assert made, "a mutant has findings"
    for found in made:
        assert found.path is not None, f"{found.row['violated']} ({found.row['check']}): {found.reason}"
        assert_reproduces(found, fixed)

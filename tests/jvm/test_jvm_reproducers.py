"""Reproducers of jvm: findings: `rstck check jvm:CLASS --repro DIR` writes a Python script that needs only the
classes, a JDK and py4j; it shows the finding against the mutant (exit 1, one BROKEN line) and passes the fixed
reference (exit 0)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from rstck.reports.repro.scenario import CannotWrite

from .checking import PUBLISHER_MUTANTS, RSTCK

MUTANTS = PUBLISHER_MUTANTS


def run_script(script, *target: str, cwd) -> subprocess.CompletedProcess:
    environment = {name: value for name, value in os.environ.items() if name != "RSTCK_CLASSPATH"}
    return subprocess.run([sys.executable, str(script), *target], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=environment)


@pytest.mark.parametrize("factory, rule", MUTANTS.items())
def test_a_written_script_shows_the_mutants_fault_and_passes_the_reference(java_classes, tmp_path, factory, rule):
    written = tmp_path / "repro"
    subprocess.run([RSTCK, "check", f"jvm:Publishers${factory}", "--classpath", java_classes, "--rules", rule,
                    "--repro", str(written)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    scripts = sorted(written.glob(f"repro-{rule}-*.py"))
    assert scripts, f"no script written for {rule}"
    script = scripts[0]
    text = script.read_text()
    assert not re.search(r"^\s*(import|from)\s+rstck\b", text, re.M)
    elsewhere = tmp_path / "elsewhere"  # the classpath is written into the script: it runs from any folder
    elsewhere.mkdir()
    against_mutant = run_script(script, cwd=elsewhere)
    verdicts = [line for line in against_mutant.stdout.splitlines() if line.startswith("BROKEN ")]
    assert against_mutant.returncode == 1, against_mutant.stdout[-2000:] + against_mutant.stderr[-2000:]
    assert len(verdicts) == 1 and verdicts[0].startswith(f"BROKEN {rule}:"), against_mutant.stdout[-2000:]
    assert "not standalone" not in against_mutant.stdout
    against_reference = run_script(script, "jvm:Publishers$Range", cwd=elsewhere)
    assert against_reference.returncode == 0, against_reference.stdout[-2000:] + against_reference.stderr[-2000:]


def test_the_script_settles_on_the_java_threads_of_an_asynchronous_reference(java_classes, tmp_path):
    """The reference that signals from an executor's thread: the script waits for Java's threads, not Python's."""
    written = tmp_path / "repro"
    subprocess.run([RSTCK, "check", "jvm:Publishers$RequestThrows", "--classpath", java_classes, "--rules", "3.16",
                    "--repro", str(written)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    script = next(written.glob("repro-3.16-*.py"))
    done = run_script(script, "jvm:Publishers$Async", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "on_next" in done.stdout  # it was served on the executor's thread before the script judged


def test_a_finding_of_a_java_subscriber_gets_no_script_and_says_why():
    from rstck.reports.repro.jvm import render

    evidence = {"objects": {"subscriber1": {"made_by": "createFlowSubscriber"}},
                "ops": [{"op": "make", "name": "subscriber1", "factory": "createFlowSubscriber", "args": [], "at": 1}],
                "settings": {}, "claim": {"by": "monitor", "rule": "2.1"}, "deadline_s": 5.0,
                "responsiveness_bound_s": 0.25, "event_loop": False}
    with pytest.raises(CannotWrite, match="drive Java publishers only"):
        render(evidence, header="", target="jvm:Subscribers$Demand", rule="2.1")

"""Reproducers of jvm: findings: `rstck check jvm:CLASS --repro DIR` writes a Python script that needs only the
classes, a JDK and py4j; it shows the finding against the mutant (exit 1, one BROKEN line) and passes the fixed
reference (exit 0), for a Java publisher, subscriber (black and white box) and processor alike."""

from __future__ import annotations

import functools
import os
import pathlib
import re
import subprocess
import sys

import pytest

from rstck.core.target import load_target
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reports.repro import Reproducer, write_reproducers
from rstck.reports.repro.scenario import CannotWrite

from .checking import PUBLISHER_MUTANTS, RSTCK

MUTANTS = PUBLISHER_MUTANTS
# The subscriber and processor mutants of tests/jvm/java/Subscribers.java and Processors.java, and the item each
# one's fault breaks.
SUBSCRIBER_AND_PROCESSOR_MUTANTS = {
    "Subscribers$OverlappingRequests": "2.7",
    "Subscribers$SecondSubscriptionKept": "2.5",
    "Subscribers$OnNextThrows": "2.13",
    "Subscribers$OnCompleteThrows": "2.9",
    "Subscribers$ProcessedTwice": "2.11",
    "Processors$DropsAnElement": "4.1",
    "Processors$ErrorSwallowed": "4.2",
}
# The fixed version of each kind of mutant: its family's reference (tests/jvm/java/Subscribers.java, Processors.java).
REFERENCES = {"Subscribers": "Subscribers$Batched", "Processors": "Processors$Drain"}


def run_script(script, *target: str, cwd) -> subprocess.CompletedProcess:
    environment = {name: value for name, value in os.environ.items() if name != "RSTCK_CLASSPATH"}
    return subprocess.run([sys.executable, str(script), *target], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=environment)


def findings_with_scripts(classes: str, class_name: str, directory: pathlib.Path, monkeypatch,
                          rules: str | None = None) -> list[Reproducer]:
    """The findings of the checks of `rules` (else of all of them) on jvm:CLASS, run in this process on its shared
    JVM, each with the script the kit wrote and kept for it: kept only once its run against the mutant showed the
    finding (exit 1, BROKEN naming the item)."""
    monkeypatch.setenv("RSTCK_CLASSPATH", classes)  # what --classpath sets: the scripts are written with it
    target = load_target(f"jvm:{class_name}")
    rows = [run_check(planned.check, planned.target).row() for planned in plan(target, rules=rules)]
    made = write_reproducers(rows, directory)
    for found in made:
        item = found.row.get("violated") or found.row["rule"]
        assert found.path is not None and not found.unconfirmed, f"{item} ({found.row['check']}): {found.reason}"
    return made


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


@pytest.mark.parametrize("class_name, rule", SUBSCRIBER_AND_PROCESSOR_MUTANTS.items())
def test_every_finding_of_a_java_subscriber_or_processor_has_a_script_that_passes_the_reference(
        java_classes, tmp_path, monkeypatch, class_name, rule):
    """Each script was kept by the kit's run against the mutant; what is left to see is its run against the
    reference, from another folder (the classpath is written into the script), without rstck."""
    made = findings_with_scripts(java_classes, class_name, tmp_path / "repro", monkeypatch, rules=rule)
    assert rule in {found.row.get("violated") or found.row["rule"] for found in made}
    reference = "jvm:" + REFERENCES[class_name.split("$")[0]]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for found in made:
        assert not re.search(r"^\s*(import|from)\s+rstck\b", found.path.read_text(), re.M)
        kept = run_script(found.path, reference, cwd=elsewhere)
        assert kept.returncode == 0, f"{found.path.name} against {reference}:\n{kept.stdout[-3000:]}{kept.stderr[-2000:]}"


@functools.cache
def items_broken_by(class_name: str) -> frozenset[str]:
    """The items the kit finds jvm:CLASS breaking, on $RSTCK_CLASSPATH."""
    rows = [run_check(planned.check, planned.target).row() for planned in plan(load_target(f"jvm:{class_name}"))]
    return frozenset(row.get("violated") or row["rule"] for row in rows if row["verdict"] in ("fail", "warn"))


@pytest.mark.soak
@pytest.mark.parametrize("class_name", list(SUBSCRIBER_AND_PROCESSOR_MUTANTS))
def test_every_finding_of_a_whole_check_has_a_script_that_judges_the_reference_as_the_kit_does(
        java_classes, tmp_path, monkeypatch, class_name):
    """Every item the whole check finds broken, beyond the mutant's own: its script passes the reference, unless the
    kit finds the reference breaking that item too (then it fails it as well). A processor's takes
    over the 20 s budget (40-60 s here): the whole check of the mutant and of the reference, and a dozen scripts,
    each in a JVM of its own."""
    made = findings_with_scripts(java_classes, class_name, tmp_path / "mutant", monkeypatch)
    reference = REFERENCES[class_name.split("$")[0]]
    for found in made:
        item = found.row.get("violated") or found.row["rule"]
        judged = run_script(found.path, f"jvm:{reference}", cwd=tmp_path)
        expected = 1 if item in items_broken_by(reference) else 0
        assert judged.returncode == expected, f"{found.path.name}:\n{judged.stdout[-3000:]}{judged.stderr[-2000:]}"


def test_a_factory_the_scripts_do_not_make_gets_no_script_and_says_why():
    from rstck.reports.repro.jvm import JVM_RUNTIME, SCRIPTED_FACTORIES, render

    table = JVM_RUNTIME.read_text().split("JVM_FACTORIES = {", 1)[1].split("\n}", 1)[0]
    assert set(re.findall(r'"(create\w+)"', table)) == SCRIPTED_FACTORIES  # what render lets through, the script makes

    evidence = {"objects": {"subscriber1": {"made_by": "createSubscriberOfSomeOtherKind"}},
                "ops": [{"op": "make", "name": "subscriber1", "factory": "createSubscriberOfSomeOtherKind", "args": [],
                         "at": 1}],
                "settings": {}, "claim": {"by": "monitor", "rule": "2.1"}, "deadline_s": 5.0,
                "responsiveness_bound_s": 0.25, "event_loop": False}
    with pytest.raises(CannotWrite, match="createSubscriberOfSomeOtherKind, which the scripts of jvm: targets do not"):
        render(evidence, header="", target="jvm:Subscribers$Batched", rule="2.1")


def test_a_script_of_3_13_asks_the_jvm_whether_the_publisher_dropped_the_subscriber(java_classes, tmp_path,
                                                                                     monkeypatch):
    """py4j keeps a subscriber's Python side alive while Java holds its proxy, so the script asks the JVM (a Java
    WeakReference to the proxy the publisher was handed, after System.gc()): it fails the publisher that keeps its
    subscribers and passes the one that drops them once cancelled."""
    if not os.path.exists(os.path.join(java_classes, "KeepsSubscribers$Always.class")):
        pytest.skip("tests/jvm/java/KeepsSubscribers.java is not there")
    made = findings_with_scripts(java_classes, "KeepsSubscribers$Always", tmp_path, monkeypatch, rules="3.13")
    assert [found.row.get("violated") or found.row["rule"] for found in made] == ["3.13"]
    kept = run_script(made[0].path, "jvm:KeepsSubscribers$WhileActive", cwd=tmp_path)
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-2000:]

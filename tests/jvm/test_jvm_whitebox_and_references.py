"""3.13 on the JVM (a Java publisher dropping its subscriber, witnessed by a Java WeakReference after System.gc()),
and the JVM TCK's own white-box form (createSubscriber(WhiteboxSubscriberProbe)), on the project's Java references
and mutants (tests/jvm/java/KeepsSubscribers.java, tests/jvm/java/tck/)."""

from __future__ import annotations

import glob
import os
import pathlib
import subprocess

import pytest

from rstck.core.verdict import Verdict
from rstck.execution.plan import plan
from rstck.execution.runner import run_check

from ..debian_packages import why_missing
from .checking import item_verdicts, offending

HERE = pathlib.Path(__file__).resolve().parent
REACTIVE_STREAMS_JAR = "/usr/share/java/reactive-streams.jar"
UNAVAILABLE_NOTE = HERE.parents[1] / ".rstck" / "java-packages-unavailable"


def verdicts_in_process(classpath: list[str], class_name: str, rules: str) -> dict[str, tuple[Verdict, str]]:
    """Each check's verdict and message, run in this process on its shared JVM (one per classpath)."""
    from rstck.adapters.jvm.target import JvmTarget

    target = JvmTarget(class_name, classpath=classpath)
    target.prepare()
    found = {}
    for planned in plan(target, rules=rules):
        result = run_check(planned.check, planned.target, timeout_s=30.0)
        found[result.check] = (result.verdict, result.message)
    assert found, f"no check of {rules} ran on {class_name}"
    return found


# -- 3.13 -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("class_name", ["Publishers$Range", "Publishers$Async", "Publishers$Submission",
                                        "KeepsSubscribers$WhileActive"])
def test_a_publisher_that_drops_its_subscriber_after_cancel_passes_3_13(java_classes, class_name):
    # Range's subscription keeps its subscriber for good: only the kit's handle on it (py4j's binding of the Java
    # subscription, released by py4j's worker a second later) could keep the subscriber reachable. The real
    # SubmissionPublisher (tests/jvm/real, JdkPublishers$Submission) is checked there, 3.13 included.
    found = verdicts_in_process([java_classes], class_name, "3.13")
    assert {verdict for verdict, _ in found.values()} == {Verdict.PASS}, found


@pytest.mark.parametrize("class_name", ["KeepsSubscribers$Always", "KeepsSubscribers$AfterTermination"])
def test_a_publisher_that_keeps_its_subscriber_fails_3_13(java_classes, class_name):
    ((verdict, message),) = verdicts_in_process([java_classes], class_name, "3.13").values()
    assert verdict == Verdict.FAIL, message
    assert "still referenced (by HeldByJava)" in message  # held for Java, which still references it


def test_3_13_is_not_applicable_when_the_jvm_does_not_collect_on_request(java_classes, tmp_path, monkeypatch):
    """The verdict rests on the JVM's collection, not on py4j's finalizers: without it, n/a, not a pass or a fail.
    A process of its own: its JVM starts with the option (in-process, a running Spark session's JVM would serve)."""
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+DisableExplicitGC")
    assert item_verdicts(java_classes, "Publishers$Range", tmp_path, "3.13").get("3.13") == "n/a"


# -- the JVM TCK's white box ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tck_classpath(java_classes, tmp_path_factory) -> str:
    """tests/jvm/java/tck compiled: stand-ins of reactive-streams-tck 1.0.4's classes, and test classes written
    against them, on the org.reactivestreams API (Debian's jar). Kept apart from java_classes: a JVM of its own."""
    reason = why_missing([REACTIVE_STREAMS_JAR], needs="the JVM TCK white-box tests", what="Debian's jar",
                         installer=".ci/install-java-packages", note=UNAVAILABLE_NOTE)
    if reason:
        pytest.skip(reason)
    out = str(tmp_path_factory.mktemp("tck-classes"))
    sources = glob.glob(str(HERE / "java" / "tck" / "**" / "*.java"), recursive=True)
    subprocess.run(["javac", "-nowarn", "-d", out, "-cp", REACTIVE_STREAMS_JAR, *sources], check=True,
                   capture_output=True)
    return os.pathsep.join([out, REACTIVE_STREAMS_JAR])


# The TCK's classes are on a classpath of their own, so each run is a process of its own: in-process, a worker that
# runs a Spark session would load them into Spark's JVM beside the default fixture's.


def test_a_tck_white_box_test_class_is_checked_as_it_is(tck_classpath, tmp_path):
    found = item_verdicts(tck_classpath, "SummingSubscriberWhiteboxTest", tmp_path, fuzz=False)
    assert found.get("2.11") == "pass"  # the white box: what the subscriber registered reached the kit's observer
    assert not {rule: v for rule, v in found.items() if v in ("fail", "warn", "error")}, offending(tmp_path)


def test_the_tck_white_box_in_the_org_reactivestreams_form_feeds_the_observer_too(tck_classpath, tmp_path):
    assert item_verdicts(tck_classpath, "SummingReactiveSubscriberWhiteboxTest", tmp_path, "2.11").get("2.11") == "pass"


def test_a_tck_white_box_mutant_is_caught_on_its_item(tck_classpath, tmp_path):
    # Its createFlowSubscriber is protected, as the TCK declares it: reached through the TCK's createSubscriber.
    assert item_verdicts(tck_classpath, "ProcessedTwiceWhiteboxTest", tmp_path, "2.11").get("2.11") == "fail"
    assert "processed [0, 1, 1]" in offending(tmp_path)

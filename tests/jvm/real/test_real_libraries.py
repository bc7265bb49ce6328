"""`rstck check jvm:...` on real JVM libraries: every verdict other than pass is the one confirmed by hand in
docs/jvm.md ("Real libraries"), so a verdict that changes fails here."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from ..checking import item_verdicts
from .conftest import DEBIAN_JARS, why_no_debian_jars

CONFIRM = pathlib.Path(__file__).resolve().parent / "confirm"

# Items the JVM adapter does not observe yet (docs/jvm.md): n/a or untested for every target, not the library's.
KIT_LIMITS = {"2.1.request-last", "2.4", "2.13.surfaced", "3.13"}

# Per factory, each verdict other than pass, as confirmed by hand; every other item must pass.
CONFIRMED = {
    "JdkPublishers$Submission": {"2.13": "fail", "3.10": "unsupported", "3.11": "unsupported",
                                 "3.14": "unsupported"},
    # FlowAdapters around the reference Range, which gives the same 3.14 verdict on its own.
    "AdaptedPublishers$RoundTrip": {"3.14": "unsupported"},
    "AdaptedPublishers$ToReactive": {"3.14": "unsupported"},
    "NettyPublishers$Handler": {"1.11": "unsupported", "2.13": "fail", "3.10": "unsupported", "3.11": "unsupported"},
    # 2.8: HandlerSubscriber never cancels on an open channel; 2.11: the factory offers no white-box observer.
    "NettySubscribers$Handler": {"2.8": "n/a", "2.11": "n/a"},
}


def confirmed_checks(classpath: str, factory: str, results: pathlib.Path) -> dict[str, str]:
    """The checks only: the fuzz phase's verdicts on these libraries are not confirmed by hand (docs/jvm.md)."""
    return item_verdicts(classpath, factory, results, fuzz=False)


@pytest.mark.parametrize("factory", CONFIRMED)
def test_each_verdict_is_the_one_confirmed_by_hand(real_classpath, tmp_path, factory):
    found = confirmed_checks(real_classpath, factory, tmp_path)
    expected = CONFIRMED[factory]
    assert {rule: found.get(rule) for rule in expected} == expected
    unexpected = {rule: verdict for rule, verdict in found.items() if rule not in expected and not (
        verdict == "pass" or (verdict in ("n/a", "untested") and rule in KIT_LIMITS))}
    assert not unexpected, f"verdicts not confirmed by hand (docs/jvm.md, Real libraries): {unexpected}"


def test_the_confirmation_of_submission_publisher_still_shows_its_behaviour(java_classes):
    # java_classes: skips where there is no JDK. The script needs no jar and no kit.
    run = subprocess.run(["java", str(CONFIRM / "ConfirmSubmission.java")], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2.13 fail: after onNext threw, SubmissionPublisher signalled [onSubscribe, onNext(0)" in run.stdout


def test_the_confirmation_of_netty_still_shows_its_behaviour(java_classes):
    # java_classes: skips where there is no JDK. The script needs Debian's jars and no kit.
    reason = why_no_debian_jars()
    if reason:
        pytest.skip(reason)
    run = subprocess.run(["java", "-cp", os.pathsep.join(DEBIAN_JARS), str(CONFIRM / "ConfirmNetty.java")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2.13 fail: after onNext threw, HandlerPublisher signalled [onSubscribe, onNext(0)" in run.stdout
    assert "2.8 n/a: HandlerSubscriber took 64 elements on an open channel; cancelled=false" in run.stdout

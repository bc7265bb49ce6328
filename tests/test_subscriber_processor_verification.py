"""Subscriber and processor targets under pytest: the verification classes, role markers, views."""

from __future__ import annotations

from rstck.execution.plan import plan
from rstck.reference.targets import buffered_subscriber, map_processor

MODULE = """
import rstck
from rstck.reference.targets import buffered_subscriber, map_processor


class TestBufferedSubscriber(rstck.SubscriberVerification):
    target = buffered_subscriber


class TestIdentityProcessor(rstck.ProcessorVerification):
    target = map_processor
"""


def test_subscriber_and_processor_verifications_pass_on_the_references(pytester):
    pytester.makepyfile(test_references=MODULE)
    result = pytester.runpytest("--strict-markers")
    outcomes = result.parseoutcomes()
    assert result.ret == 0
    assert outcomes.get("failed", 0) == outcomes.get("errors", 0) == 0
    fuzz_items = 2  # fuzz-subscriber and fuzz-processor
    assert outcomes["passed"] + outcomes.get("skipped", 0) == (len(plan(buffered_subscriber)) + len(plan(map_processor))
                                                               + fuzz_items)


def test_a_processor_is_checked_as_publisher_and_as_subscriber_under_the_processor_marker(pytester):
    pytester.makepyfile(test_references=MODULE)
    reprec = pytester.inline_run("--collect-only", "-m", "processor")
    ids = [item.nodeid for item in reprec.getcall("pytest_collection_finish").session.items]
    assert ids and all("TestIdentityProcessor" in i for i in ids)
    assert any("::as_publisher-1.1-" in i for i in ids)
    assert any("::as_subscriber-2.1-" in i for i in ids)
    assert any("::4.2-upstream_error_is_propagated_or_recovered" in i for i in ids)


def test_subscriber_marker_selects_the_subscriber_checks(pytester):
    pytester.makepyfile(test_references=MODULE)
    reprec = pytester.inline_run("--collect-only", "-m", "subscriber and not processor")
    ids = [item.nodeid for item in reprec.getcall("pytest_collection_finish").session.items]
    assert ids and all("TestBufferedSubscriber" in i for i in ids)
    assert any("::2.5-second_subscription_is_cancelled" in i for i in ids)


def test_a_subscriber_only_target_runs_no_publisher_checks():
    subjects = {p.check.subject for p in plan(buffered_subscriber)}
    assert subjects == {"subscriber"}

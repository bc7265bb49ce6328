"""What the names of a `node:` trace stand for: the `where` block under a failure names the implementation's own
objects (its publisher, the subscription it hands a probe, a subscriber under test) as the implementation's, by
their JavaScript class, exactly as a Python run of the same scenario names them by their Python class; and the
kit's own objects as the kit's."""

from __future__ import annotations

import re

import pytest

from rstck.adapters.inprocess import InProcessTarget

from ..trace_names import where_block
from .helpers import here, node_target, run

pytestmark = pytest.mark.node


class OverDeliveringSubscription:
    """1.1 broken as tests/node/names/over_delivering.js breaks it: each request delivers one element more."""

    def __init__(self, subscriber, count: int):
        self.subscriber, self.count, self.next, self.done = subscriber, count, 0, False

    def request(self, n: int) -> None:
        left = n + 1
        while left > 0 and self.next < self.count and not self.done:
            self.subscriber.on_next(self.next)
            self.next, left = self.next + 1, left - 1
        if self.next >= self.count and not self.done:
            self.done = True
            self.subscriber.on_complete()

    def cancel(self) -> None:
        self.done = True


class CountingPublisher:
    def __init__(self, count: int):
        self.count = count

    def subscribe(self, subscriber) -> None:
        subscriber.on_subscribe(OverDeliveringSubscription(subscriber, self.count))


python_over_delivering = InProcessTarget(create_publisher=CountingPublisher)


def what_and_class(text: str) -> tuple[str, str]:
    """(what a name stands for, the class in parentheses after it, if any)."""
    match = re.fullmatch(r"(.*?)(?: \((.*)\))?", text)
    assert match is not None
    return match.group(1), match.group(2) or ""


def test_a_javascript_publishers_objects_are_named_as_a_python_run_names_them(capsys):
    """The user's subscription was called "a subscription of the kit's, which a source handed the implementation"
    and the publisher's line was missing, where the in-process run of the same broken publisher labels both."""
    javascript = where_block(capsys, f"node:{here('names', 'over_delivering.js')}")
    python = where_block(capsys, f"{__name__}:python_over_delivering")
    assert set(javascript) == set(python) == {"publisher", "probe#1", "sub#1"}, (javascript, python)
    for name in python:
        assert what_and_class(javascript[name])[0] == what_and_class(python[name])[0], name
    assert what_and_class(javascript["sub#1"])[1] == "JavaScript class OverDeliveringSubscription"
    assert what_and_class(javascript["publisher"])[1] == "JavaScript class CountingPublisher"
    assert what_and_class(python["sub#1"])[1] == f"class {__name__}.OverDeliveringSubscription"
    assert what_and_class(javascript["probe#1"]) == what_and_class(python["probe#1"])
    assert "of the kit's" in javascript["probe#1"] and "of the kit's" not in javascript["sub#1"]


def test_a_javascript_subscriber_under_test_is_named_by_its_class_and_the_kits_subscription_stays_the_kits():
    with node_target(here("names", "idle_subscriber.js")) as target:
        [failed] = [result for result in run(target, rules="2.1") if result.verdict.value == "fail"]
    legend = dict(line.split(maxsplit=1) for line in failed.legend.splitlines())
    assert "IdleSubscriber#1.on_subscribe(sub#1)" in failed.trace, failed.trace
    assert legend["IdleSubscriber#1"] == "an object of the implementation (JavaScript class IdleSubscriber)", legend
    assert legend["sub#1"] == "a subscription of the kit's, which a source handed the implementation", legend

"""How findings are charged on a JavaScript target: every sentence a call breaks is a failure of its own
item, a request refused for its value is no 3.2 finding, a processor that is its own subscription can be
checked, the kit's own references never fail 3.13, and a `blocked` item names the factory whose finding
blocked it."""

from __future__ import annotations

import pytest

from rstck.reports.items import item_verdicts

from .helpers import here, node_target, run

pytestmark = pytest.mark.node


def items(module: str, rules: str, **options) -> dict:
    with node_target(here(*module.split("/")), **options) as target:
        results = run(target, rules=rules)
    return item_verdicts([result.row() for result in results])


def test_request_zero_that_throws_fails_3_9_and_3_16_each_on_its_own():
    found = items("mutants/request_zero_throws.js", "3.9,3.16")
    assert found["3.16"].verdict == "fail", found["3.16"].reason
    assert found["3.9"].verdict == "fail", found["3.9"].reason
    assert "on_error(RangeError)" in found["3.9"].reason


def test_a_demand_of_2_63_that_throws_fails_3_16_and_3_17_each_on_its_own():
    found = items("mutants/request_beyond_safe_throws.js", "3.16,3.17")
    assert found["3.17"].verdict == "fail", found["3.17"].reason
    assert found["3.16"].verdict == "fail", found["3.16"].reason


def test_a_request_refused_for_its_value_inside_on_next_is_not_charged_to_3_2():
    # 3.17's check asks for 2**63-1 from inside onNext: the publisher refuses the value, wherever it is asked.
    found = items("mutants/request_beyond_safe_throws.js", "3.2,3.17")
    assert found["3.2"].verdict == "pass", found["3.2"].reason
    charged_to_3_2 = [row for row in found["3.17"].rows if row["violated"] == "3.2"
                      or any(other["rule"] == "3.2" for other in row.get("also_charged") or ())]
    assert charged_to_3_2 == []


def test_a_processor_that_is_its_own_subscription_is_checked():
    found = items("conformant/self_subscribed_processor.js", "1.*,3.*,4.*", isolation="reuse")
    bad = {item: v.reason for item, v in found.items() if v.verdict in ("fail", "error", "warn", "blocked")}
    assert bad == {}


def test_the_kits_own_hold_on_the_subscription_does_not_fail_3_13():
    # The subscription is a closure over its subscriber: it stays reachable from the kit's handle on it.
    found = items("conformant/closure_microtask.js", "3.13")
    assert found["3.13"].verdict == "pass", found["3.13"].reason


def test_a_blocked_item_names_the_factory_whose_finding_blocked_it():
    found = items("mutants/processor_signals_on_subscribe_twice.js", "1.1,2.12", isolation="reuse")
    assert found["2.12"].verdict == "fail"
    assert found["1.1"].verdict == "blocked"
    assert "processor as publisher" in found["1.1"].reason, found["1.1"].reason


def test_one_stand_in_offers_every_role_its_object_plays():
    from rstck.protocols.node.proxies import JSProcessor, JSSubscription, fitted, proxy_class

    all_methods = ["subscribe", "onSubscribe", "onNext", "onError", "onComplete", "request", "cancel"]
    made = proxy_class("processor", all_methods)
    assert issubclass(made, JSProcessor) and issubclass(made, JSSubscription)
    first_met_as_processor = JSProcessor(None, "h1")
    assert fitted(first_met_as_processor, "subscription", all_methods) is first_met_as_processor
    assert callable(first_met_as_processor.request) and callable(first_met_as_processor.cancel)
    assert callable(first_met_as_processor.subscribe) and callable(first_met_as_processor.on_next)


# -- what was delivered before a cancel reached the publisher ------------------------------------------------
# The publisher delivers on setImmediate: once request() has returned, its immediate runs before the driver
# reads the kit's next command, so the elements reach the kit while it waits for its cancel to return, and
# were sent before that cancel. The fuzz machine judged them as elements after the cancel (3.12), and a
# request made from inside them as no demand at all (1.1).

def _run_body(body, rule: str):
    from rstck.core.checks import Check
    from rstck.execution.runner import run_check

    with node_target(here("conformant", "class_immediate.js")) as target:
        return run_check(Check(rule, body.__name__, body, frozenset({"publisher"}), "subscription"), target,
                         timeout_s=5.0)


def test_elements_sent_before_the_cancel_was_read_are_not_after_it():
    seen = {}

    def cancel_right_after_request(session):
        probe = session.subscribe(session.create_publisher(5))
        probe.request(5)
        probe.cancel()
        session.settle()
        seen.update(received=probe.received, at_cancel=probe.cancelled_at)

    result = _run_body(cancel_right_after_request, "3.12")
    assert result.verdict.value == "pass", result.message
    assert seen == {"received": 5, "at_cancel": 5}


def test_demand_asked_from_inside_those_elements_counts():
    seen = {}

    def request_more_inside_each_element(session):
        probe = session.subscribe(session.create_publisher(5), on_next=lambda p, _: p.request(1))
        probe.request(1)
        probe.cancel()
        session.settle()
        seen.update(received=probe.received, requested=probe.requested)

    result = _run_body(request_more_inside_each_element, "1.1")
    assert result.verdict.value == "pass", result.message
    assert seen["received"] == 5 and seen["requested"] >= 5

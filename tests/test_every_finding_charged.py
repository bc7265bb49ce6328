"""Every sentence one call breaks is charged to its own item (the Python profile; tests/node/test_charging.py
has the JavaScript one): a request(0) that raises and never signals on_error fails 3.16 and 3.9, a demand of
2**63-1 that raises fails 3.16 and 3.17, and a request refused for its value from inside on_next is no 3.2
finding. Each failed on the kit before it charged every finding of a check."""

from __future__ import annotations

from rstck import InProcessTarget
from rstck.execution.plan import plan
from rstck.reports.items import item_verdicts
from rstck.execution.runner import run_check

from .test_observed_false_verdicts import _Publisher, _Subscription


def items(subscription_class, rules: str) -> dict:
    publisher = type("Publisher", (_Publisher,), {"subscription": subscription_class})
    target = InProcessTarget(create_publisher=lambda n: publisher(n))
    rows = [run_check(p.check, p.target, timeout_s=2.0).row() for p in plan(target, rules=rules)]
    return item_verdicts(rows)


class _RaisesForZero(_Subscription):
    def request(self, count):
        if count <= 0:
            raise ValueError(f"request({count}): must be positive")
        super().request(count)


class _RaisesForHugeDemand(_Subscription):
    def request(self, count):
        if count >= 2**62:
            raise OverflowError(f"request({count}): too large")
        super().request(count)


def test_request_zero_that_raises_fails_3_9_and_3_16_each_on_its_own():
    found = items(_RaisesForZero, "3.9,3.16")
    assert found["3.16"].verdict == "fail", found["3.16"].reason
    assert found["3.9"].verdict == "fail", found["3.9"].reason


def test_a_demand_of_2_63_that_raises_fails_3_16_and_3_17_each_on_its_own():
    found = items(_RaisesForHugeDemand, "3.16,3.17")
    assert found["3.17"].verdict == "fail", found["3.17"].reason
    assert found["3.16"].verdict == "fail", found["3.16"].reason


def test_a_request_refused_for_its_value_inside_on_next_is_not_charged_to_3_2():
    found = items(_RaisesForHugeDemand, "3.2,3.17")
    assert found["3.2"].verdict == "pass", found["3.2"].reason

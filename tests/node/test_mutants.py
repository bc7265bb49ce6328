"""Every JavaScript mutant (tests/node/mutants/*.js) is caught on exactly its items, through the same checks
as Python implementations.

The mutants run with isolation "reuse" (a process serves consecutive checks) to keep this suite short; the
references and the hostile modules run with the default, a process per check."""

from __future__ import annotations


import pytest

from .helpers import Mutant, assert_caught_on_exactly, here, mutant, node_target, run, verdicts

pytestmark = pytest.mark.node


MUTANTS = [
    mutant("over_delivery", "1.1"),
    mutant("complete_twice", "1.7"),
    mutant("no_on_subscribe", "1.9"),
    mutant("subscribe_null_accepted", "1.9"),
    mutant("recursive", "3.3", warns="3.3.depth-one"),
    mutant("request_zero_accepted", "3.9"),
    mutant("plain_error_for_zero", "3.9"),  # an onError, but an Error where the profile wants a RangeError
    mutant("cancel_ignored", "3.6 3.12 3.13"),
    mutant("keeps_subscriber", "3.13"),  # observed through the driver's collector
    mutant("self_subscribed_keeps_subscriber", "3.13"),  # a processor that is its own subscription
    mutant("cancel_throws", "3.15"),
    # 3.2 where the request is made from inside onNext; 3.17 for refusing 2**63-1 (more than is left)
    mutant("request_throws_beyond_end", "3.16 3.2 3.17"),
    mutant("request_zero_throws", "3.9 3.16 3.6 1.6"),  # one throw breaks 3.9 and 3.16 (3.6 and 1.6 once ended)
    mutant("request_beyond_safe_throws", "3.16 3.17"),  # and no 3.2 for the same refusal from inside onNext
    mutant("int32_demand", "3.17"),  # 2**63-1 reaches JavaScript as 2**63, and (demand + n) | 0 is 0
    mutant("never_requests", "2.1"),
    mutant("request_in_on_complete", "2.3"),
    mutant("keeps_second_subscription", "2.5"),
    mutant("accepts_null_element", "2.13"),
    mutant("swallows_error", "1.4 4.2"),  # 1.4: as a publisher, it does not pass its failed upstream on
]


@pytest.mark.parametrize("case", MUTANTS, ids=lambda case: case.module)
def test_caught_on_exactly_its_items(case: Mutant):
    with node_target(here("mutants", f"{case.module}.js"), isolation="reuse") as target:
        results = run(target)
    assert_caught_on_exactly(case, results)


def test_the_same_mutant_is_caught_with_a_process_per_check():
    with node_target(here("mutants", "keeps_subscriber.js")) as target:
        assert target.isolation == "check"
        found = verdicts(run(target, rules="3.13,3.12,1.1"))
    assert found["fail"] == {"3.13"}

"""A Publisher: spi.publisher.1-7.

The probes charge spi.publisher.1, .2 and .7 on every signal of every check; the checks here are
the situations built to provoke each item's own violation.
"""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.core.checks import rule, untested
from rstck.rules.spi_draft.probe import subscribe

untested("spi.publisher.3.rates", "a permission: every rate passes, and spi.publisher.3's check requests at "
                                  "different rates")
untested("spi.publisher.4.final", "implied by spi.publisher.3 (the same elements in the same sequence), whose check "
                                  "compares whole sequences, final element included")
untested("spi.publisher.5", "\"the earliest possible point in time\" is the publisher's to know; its footnote's "
                            "particular case is checked as spi.publisher.5.no-wait")


@rule("spi.publisher.1")
def on_next_count_never_exceeds_requested(session):
    """spi.publisher.1: the probe counts its demand and charges every onNext beyond it at once."""
    probe = subscribe(session, session.create_publisher(session.elements(10, at_least=4)))
    session.settle()  # no demand yet: any onNext now exceeds it
    for n in (1, 2):
        probe.request(n)
        session.settle()


@rule("spi.publisher.2")
def no_on_next_after_on_complete(session):
    """spi.publisher.2: the whole stream and more requested; nothing may follow onComplete."""
    n = session.elements(5, at_least=1)
    probe = subscribe(session, session.create_publisher(n))
    probe.request(n + 5)
    session.settle()
    probe.expect_complete(rule="spi.publisher.4")


@rule("spi.publisher.3")
def same_elements_in_the_same_sequence_for_all_subscribers(session):
    """spi.publisher.3: two subscribers, both subscribed before the first element, one asking for the
    whole stream at once and one an element at a time ([4]: rates may differ), get the same elements in
    the same sequence."""
    n = session.elements(6, at_least=2)
    publisher = session.create_publisher(n)
    eager, stepwise = subscribe(session, publisher), subscribe(session, publisher)
    eager.request(n + 1)
    session.settle()
    for _ in range(n + 1):
        if stepwise.terminated:
            break
        stepwise.request(1)
        session.settle()
    if eager.elements != stepwise.elements:
        raise RuleViolation("spi.publisher.3", "the same elements in the same sequence for both subscribers",
                            f"{eager.name} got {eager.elements!r}, {stepwise.name} got {stepwise.elements!r}")


@rule("spi.publisher.4")
def on_complete_follows_the_final_element(session):
    """spi.publisher.4: after the final element, with the demand met or one more requestMore, onComplete
    follows (spi.publisher.5.no-wait is the one about not needing that request)."""
    n = session.elements(3)
    probe = subscribe(session, session.create_publisher(n))
    probe.request(n)
    session.settle()
    probe.request(1)
    session.settle()
    probe.expect_complete(rule="spi.publisher.4")


@rule("spi.publisher.5.no-wait")
def on_complete_does_not_wait_for_another_request(session):
    """spi.publisher.5.no-wait (SHOULD): a publisher of n elements, asked for exactly n, calls onComplete
    without another requestMore: it knows no more elements will follow."""
    n = session.elements(3)
    probe = subscribe(session, session.create_publisher(n))
    probe.request(n)
    session.settle()
    probe.expect_elements(n, rule="spi.request-more.2")
    if not probe.awaited(lambda: probe.terminated):
        raise RuleViolation("spi.publisher.5.no-wait", "onComplete after the n-th element, without another "
                            "requestMore", probe.observed() + session.quiet_note())
    probe.expect_complete(rule="spi.publisher.4")


@rule("spi.publisher.6")
def new_subscriber_starts_with_the_oldest_available_element(session):
    """spi.publisher.6: with one subscriber at element 2 and another at element 4, a new subscriber must
    start no later than element 2: that element is still available (the first subscriber is yet to get it)."""
    n = session.elements(8, at_least=6)
    publisher = session.create_publisher(n)
    behind, ahead = subscribe(session, publisher), subscribe(session, publisher)
    behind.request(2)
    ahead.request(4)
    session.settle()
    if behind.received != 2 or ahead.received != 4:
        raise RuleViolation("spi.request-more.2", "2 and 4 onNext as requested",
                            f"{behind.name}: {behind.observed()}, {ahead.name}: {ahead.observed()}")
    late = subscribe(session, publisher)
    late.request(n)
    behind.request(n)
    session.settle()
    stream = behind.elements  # the whole stream: every subscriber gets the same sequence (spi.publisher.3)
    if not late.elements or late.elements[0] not in stream[:3]:
        first = repr(late.elements[0]) if late.elements else "nothing"
        raise RuleViolation("spi.publisher.6", f"the new subscriber to start no later than {stream[2:3]!r}, the "
                            f"element {behind.name} was still to get", f"it started with {first} "
                            f"({late.observed()}); the stream is {stream!r}")


@rule("spi.publisher.7")
def on_complete_at_most_once(session):
    """spi.publisher.7: a stream asked for more than it has ends once; the probe charges a second
    onComplete or onError on every check."""
    n = session.elements(3, at_least=1)
    probe = subscribe(session, session.create_publisher(n))
    probe.request(n + 3)
    session.settle()
    probe.expect_complete(rule="spi.publisher.4")

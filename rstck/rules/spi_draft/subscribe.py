"""Publisher::subscribe(Subscriber): spi.subscribe.1-7.

A publisher's state is read from what it signalled: `completed` once it has completed a subscriber,
`error` once it has failed one (docs/decisions.md, "SPI draft").
"""

from __future__ import annotations

from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import rule
from rstck.rules.spi_draft.probe import ended, failed, subscribe


@rule("spi.subscribe.1")
def completed_publisher_calls_no_on_subscribe(session):
    """spi.subscribe.1: a subscriber arriving after the publisher completed gets no onSubscribe."""
    publisher, _ = ended(session, session.elements(3))
    late = subscribe(session, publisher, rule_if_raises="spi.subscribe.2")
    session.settle()
    late.expect_no_subscription("spi.subscribe.1")


@rule("spi.subscribe.2")
def completed_publisher_signals_on_complete(session):
    """spi.subscribe.2: a subscriber arriving after the publisher completed gets onComplete, without
    asking (an onSubscribe before it is spi.subscribe.1's business)."""
    publisher, _ = ended(session, session.elements(3))
    late = subscribe(session, publisher, rule_if_raises="spi.subscribe.2")
    session.settle()
    if not late.awaited(lambda: late.terminated) or not late.completed:
        raise RuleViolation("spi.subscribe.2", "onComplete", late.observed() + session.quiet_note())


@rule("spi.subscribe.3", needs={"failed_publisher"})
def failed_publisher_calls_no_on_subscribe(session):
    """spi.subscribe.3: a subscriber arriving after the publisher failed gets no onSubscribe."""
    publisher, _ = failed(session)
    late = subscribe(session, publisher, rule_if_raises="spi.subscribe.4")
    session.settle()
    late.expect_no_subscription("spi.subscribe.3")


@rule("spi.subscribe.4", needs={"failed_publisher"})
def failed_publisher_signals_on_error(session):
    """spi.subscribe.4: a subscriber arriving after the publisher failed gets onError, without asking."""
    publisher, _ = failed(session)
    late = subscribe(session, publisher, rule_if_raises="spi.subscribe.4")
    session.settle()
    if not late.awaited(lambda: late.terminated) or not late.errors:
        raise RuleViolation("spi.subscribe.4", "onError", late.observed() + session.quiet_note())


@rule("spi.subscribe.5")
def fresh_publisher_accepts_with_on_subscribe(session):
    """spi.subscribe.5: a publisher that has not ended answers subscribe with onSubscribe, or rejects
    the subscriber with onError."""
    probe = subscribe(session, session.create_publisher(session.elements(3)))
    session.settle()
    if not probe.errors:
        probe.expect_subscribed("spi.subscribe.5")


def _subscribed_twice(session, *, charge_refused: bool = True):
    """The same subscriber subscribed a second time while its first subscription is active."""
    publisher = session.create_publisher(session.elements(3))
    probe = subscribe(session, publisher)
    probe.charge_refused = charge_refused
    probe.expect_subscribed("spi.subscribe.5")
    if probe.terminated:
        raise NotApplicable(f"the first subscription ended at once ({probe.observed()})")
    subscribe(session, publisher, probe, rule_if_raises="spi.subscribe.6")
    session.settle()
    return probe


@rule("spi.subscribe.6")
def rejection_is_signalled_with_on_error(session):
    """spi.subscribe.6: where spi.subscribe.7 demands a rejection, it comes as onError (a raise from
    subscribe, or silence, is not one)."""
    probe = _subscribed_twice(session, charge_refused=False)
    if probe.refused:
        raise NotApplicable("the publisher accepted the second subscription (spi.subscribe.7's business)")
    if not probe.errors:
        raise RuleViolation("spi.subscribe.6", "onError rejecting the second subscribe",
                            probe.observed() + session.quiet_note())


@rule("spi.subscribe.7")
def same_subscriber_with_an_active_subscription_is_rejected(session):
    """spi.subscribe.7: subscribing the same subscriber (by reference) again while its subscription is
    active is rejected: no second onSubscribe. The probe monitors it on every subscribe."""
    _subscribed_twice(session)

"""Subscription::cancel: spi.cancel.1-4."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.core.checks import rule, untested
from rstck.rules.reactive_streams.subscription import cancelled_and_collected
from rstck.rules.spi_draft.probe import subscribe

untested("spi.cancel.1", "a cancel on a cancelled Subscription is a call spi.subscriber.4 forbids every subscriber, "
                         "and the kit breaks no MUST of the profile under test to provoke a verdict")


@rule("spi.cancel.2")
def cancelled_subscriber_is_no_longer_called(session):
    """spi.cancel.2: once its cancel has settled, a subscriber hears nothing more, even while another
    subscriber of the same publisher goes on to the end of the stream."""
    n = session.elements(5, at_least=2)
    publisher = session.create_publisher(n)
    first, second = subscribe(session, publisher), subscribe(session, publisher)
    first.request(1)
    session.settle()
    first.cancel()
    session.settle()
    second.request(n + 1)
    session.settle()


@rule("spi.cancel.3", needs={"publisher", "identity"})
def cancelled_subscriber_is_dropped(session):
    """spi.cancel.3: after cancel has settled and a garbage collection, the subscriber is unreachable
    while the publisher itself is still alive (as 3.13 is observed)."""
    publisher = session.create_publisher(session.elements(5, at_least=2))
    name, alive = cancelled_and_collected(session, subscribe(session, publisher))
    if alive() is not None:
        raise RuleViolation("spi.cancel.3", f"{name} to be collectable once cancelled",
                            "it is still referenced while the publisher is alive")
    del publisher


@rule("spi.cancel.4")
def subscribe_after_cancel_is_not_overtaken(session):
    """spi.cancel.4: the same subscriber subscribed again right after its cancel returned, on the same
    thread, is accepted as a new subscriber (onSubscribe), not rejected as one still active."""
    publisher = session.create_publisher(session.elements(5, at_least=2))
    probe = subscribe(session, publisher)
    probe.request(1)
    session.settle()
    probe.cancel()
    subscribe(session, publisher, probe, rule_if_raises="spi.cancel.4")
    session.settle()
    if probe.subscriptions < 2:
        raise RuleViolation("spi.cancel.4", "onSubscribe for the subscribe made after cancel returned",
                            f"{probe.observed()} (the subscribe overtook the cancel)" + session.quiet_note())

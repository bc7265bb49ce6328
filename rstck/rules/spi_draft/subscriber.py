"""A Subscriber: spi.subscriber.1-7.

The kit's draft publisher drives the subscriber under test; its subscription charges a requestMore
or cancel made on a subscription the subscriber cancelled (spi.subscriber.3, .4) as it is made, and
throws, as the draft asks of every publisher.
"""

from __future__ import annotations

from rstck.core.verdict import NotApplicable
from rstck.core.checks import rule, untested
from rstck.rules.reactive_streams.subscriber import feed
from rstck.rules.spi_draft.on_next import STREAM
from rstck.rules.spi_draft.upstream import attach, draft_source, judging

untested("spi.subscriber.2", "a subscriber's \"shutdown\" is not an event the kit can cause or see")
untested("spi.subscriber.5", "a draft subscriber cancels from an event it scheduled (spi.on-next.1, .2), after the onNext "
                             "call returned, and the kit sends nothing once a cancel has settled (spi.cancel.2): an onNext "
                             "after the cancel would meet it only by a race, and no verdict may rest on one")


@rule("spi.subscriber.1")
def second_on_subscribe_triggers_an_error(session):
    """spi.subscriber.1: an onSubscribe from a second publisher while the first subscription is active
    makes the subscriber raise ("trigger an error": the draft's errors are exceptions)."""
    source, subscriber, _ = attach(session, "spi.subscriber.1")
    if source.subscription.terminal or source.subscription.cancelled:
        raise NotApplicable("the first subscription is no longer active")
    second = draft_source(session, second_subscription=True)
    subscription = second.subscription_class(second, subscriber, session.labels.fresh("sub"))
    subscription.announced = True  # the kit hands it over itself, to see what on_subscribe does
    second.subscriptions.append(subscription)
    session.calls.expecting_error(subscriber, "on_subscribe", (subscription,), error_type="BaseException",
                                  rule="spi.subscriber.1", actor=session.labels.of(subscriber))
    session.settle()


def _cancelled_by_itself(session, item: str):
    """A subscriber fed until it cancels of its own accord; settled."""
    source, _, _ = attach(session, item)
    feed(session, source, STREAM, after_cancel=1)
    if not source.subscription.cancelled:
        raise NotApplicable(f"the subscriber did not cancel within {STREAM} elements")
    return source


@rule("spi.subscriber.3")
def no_request_more_after_its_cancel(session):
    """spi.subscriber.3: after cancelling, the subscriber makes no more requestMore (charged as made)."""
    _cancelled_by_itself(session, "spi.subscriber.3")
    session.settle()


@rule("spi.subscriber.4")
def no_second_cancel(session):
    """spi.subscriber.4: after cancelling, the subscriber makes no more cancel (charged as made)."""
    _cancelled_by_itself(session, "spi.subscriber.4")
    session.settle()


def _ended_before_any_request(session, item: str, end) -> None:
    """Subscribe the subscriber under test to the kit's draft publisher and `end(source)` at once; settled."""
    subscriber = session.create_subscriber()
    judging(session, item)
    source = draft_source(session)
    source.subscribe(subscriber)
    end(source)
    session.settle()


@rule("spi.subscriber.6")
def on_complete_without_request_is_taken(session):
    """spi.subscriber.6: onComplete right after onSubscribe, before any requestMore, returns normally."""
    _ended_before_any_request(session, "spi.subscriber.6", lambda source: source.send_complete())


@rule("spi.subscriber.7")
def on_error_without_request_is_taken(session):
    """spi.subscriber.7: onError right after onSubscribe, before any requestMore, returns normally."""
    _ended_before_any_request(session, "spi.subscriber.7",
                              lambda source: source.send_error(RuntimeError("the kit's publisher fails on purpose")))

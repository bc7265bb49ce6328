"""Subscription::requestMore(Int): spi.request-more.1-6.

requestMore is called by the target's name for it (`target.spi_draft.request_more`); the draft's
IllegalStateException and IllegalArgumentException are matched by the class names the target maps them to.
"""

from __future__ import annotations

from rstck.api import MAX_DEMAND
from rstck.core.verdict import Unsupported
from rstck.core.checks import rule, untested
from rstck.rules.spi_draft.probe import mapping, subscribe

untested("spi.request-more.1", "a requestMore on a cancelled Subscription is a call spi.subscriber.3 forbids every "
                               "subscriber, and the kit breaks no MUST of the profile under test to provoke a verdict")


@rule("spi.request-more.2")
def request_more_registers_additional_demand(session):
    """spi.request-more.2: requestMore(1) then requestMore(2) draw exactly three onNext of ten."""
    probe = subscribe(session, session.create_publisher(session.elements(10, at_least=4)))
    for n in (1, 2):
        probe.request(n)
        session.settle()
    probe.expect_elements(3, rule="spi.request-more.2")


@rule("spi.request-more.3")
def overflowing_demand_signals_on_error(session):
    """spi.request-more.3: requestMore(2**63) makes the total requested exceed 2^63-1: onError with the
    target's IllegalStateException."""
    probe = subscribe(session, session.create_publisher(session.elements(3)))
    probe.request(MAX_DEMAND + 1)
    session.settle()
    probe.expect_error(mapping(session).illegal_state, rule="spi.request-more.3")


@rule("spi.request-more.4")
def non_positive_request_more_throws(session):
    """spi.request-more.4: requestMore(0) and requestMore(-1) raise the target's IllegalArgumentException
    to the caller (the second only while the subscription is live: a subscriber asks nothing of a
    cancelled one, spi.subscriber.3)."""
    probe = subscribe(session, session.create_publisher(session.elements(3)))
    probe.expect_subscribed()
    for n in (0, -1):
        if probe.terminated or probe.cancelled:
            break
        session.calls.expecting_error(probe.subscription, mapping(session).request_more, (n,),
                                      error_type=mapping(session).illegal_argument, rule="spi.request-more.4",
                                      actor=probe.subscription_name)
        session.settle()


def _synchronously(session, elements: int, kind: str, request: int) -> bool:
    """Whether `kind` reached a probe of a publisher of `elements` on the check's own thread, inside
    requestMore(`request`)."""
    probe = subscribe(session, session.create_publisher(session.elements(elements)))
    session.settle()
    before = len(session.trace)
    probe.request(request)
    synchronous = any(s.seq > before and s.thread == session.check_thread.name and s.depth > 0
                      for s in session.trace.signals_of(probe.name, kind))
    session.settle()
    return synchronous


@rule("spi.request-more.5")
def request_more_may_signal_on_next_synchronously(session):
    """spi.request-more.5 (MAY): requestMore(1) delivers onNext before it returns, on the caller's thread."""
    if not _synchronously(session, 3, "on_next", 1):
        raise Unsupported("requestMore(1) returned before onNext; delivery is asynchronous")


@rule("spi.request-more.6")
def request_more_may_signal_on_complete_synchronously(session):
    """spi.request-more.6 (MAY): requestMore delivers the last element and onComplete before it returns."""
    if not _synchronously(session, 1, "on_complete", 2):
        raise Unsupported("requestMore(2) on a one-element stream returned before onComplete")

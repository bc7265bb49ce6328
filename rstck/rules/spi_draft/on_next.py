"""Subscriber::onSubscribe(Subscription), Subscriber::onNext(T): spi.on-next.1-2.

The kit's draft publisher (`upstream.DraftSource`) drives the subscriber under test; its subscription
charges spi.on-next.2 the moment it is called from inside onSubscribe or onNext.
"""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.core.checks import rule
from rstck.rules.reactive_streams.subscriber import feed
from rstck.rules.spi_draft.upstream import attach

# How many elements a check offers a subscriber at most.
STREAM = 16


def processed_inside(session, observer, kinds: tuple[str, ...]) -> list[str]:
    """The signals of `kinds` the observer heard processed while the kit's call of that signal was still
    under way on the check's thread: processed synchronously, not scheduled."""
    thread = session.check_thread.name
    return [f"#{s.seq} {s.kind}" for kind in kinds for s in session.trace.signals_of(observer.name, f"{kind}_processed")
            if s.thread == thread and s.depth > 0]


@rule("spi.on-next.1", needs={"subscriber", "observer"})
def on_subscribe_and_on_next_only_schedule(session):
    """spi.on-next.1: the white-box subscriber reports onSubscribe and onNext processed only after the
    kit's call returned (or on another thread): it scheduled them."""
    source, _, observer = attach(session, "spi.on-next.1", observed=True)
    feed(session, source, 4)
    inside = processed_inside(session, observer, ("on_subscribe", "on_next"))
    if inside:
        raise RuleViolation("spi.on-next.1", "onSubscribe and onNext to schedule their processing",
                            f"processed before the call returned: {', '.join(inside[:3])}")


@rule("spi.on-next.2")
def on_subscribe_and_on_next_call_nothing(session):
    """spi.on-next.2: the subscription charges any requestMore or cancel made from inside onSubscribe or
    onNext, over a stream of elements."""
    source, _, _ = attach(session, "spi.on-next.2")
    feed(session, source, STREAM)

"""Subscriber::onComplete, Subscriber::onError(Throwable): spi.on-terminal.1-3.

The kit's draft subscription charges a call made from inside onComplete or onError (spi.on-terminal.2),
and any call after them (spi.on-terminal.3), as it is made.
"""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.core.checks import rule
from rstck.rules.reactive_streams.subscriber import feed
from rstck.rules.spi_draft.on_next import processed_inside
from rstck.rules.spi_draft.upstream import attach


def _ended(session, item: str, *, observed: bool = False, error: bool = False):
    """A subscriber given two elements, then onComplete (or onError); settled."""
    source, subscriber, observer = attach(session, item, observed=observed)
    feed(session, source, 2)
    if source.can_signal():
        if error:
            source.send_error(RuntimeError("the kit's publisher fails on purpose"))
        else:
            source.send_complete()
    session.settle()
    return source, observer


@rule("spi.on-terminal.1", needs={"subscriber", "observer"})
def terminal_signals_only_schedule(session):
    """spi.on-terminal.1: the white-box subscriber reports onComplete and onError processed only after the
    kit's call returned (or on another thread)."""
    inside = []
    for error in (False, True):
        _, observer = _ended(session, "spi.on-terminal.1", observed=True, error=error)
        inside += processed_inside(session, observer, ("on_complete", "on_error"))
    if inside:
        raise RuleViolation("spi.on-terminal.1", "onComplete and onError to schedule their processing",
                            f"processed before the call returned: {', '.join(inside)}")


@rule("spi.on-terminal.2")
def terminal_signals_call_nothing(session):
    """spi.on-terminal.2: no requestMore or cancel from inside onComplete or onError."""
    _ended(session, "spi.on-terminal.2")
    _ended(session, "spi.on-terminal.2", error=True)


@rule("spi.on-terminal.3")
def subscription_counts_as_cancelled_after_the_end(session):
    """spi.on-terminal.3: after onComplete (or onError) the subscriber calls its subscription no more, once
    everything it scheduled has run."""
    _ended(session, "spi.on-terminal.3")
    _ended(session, "spi.on-terminal.3", error=True)

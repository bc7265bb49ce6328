"""The kit as a publisher of the SPI draft, feeding a processor under test: the core probe publisher,
handing out subscriptions that speak the draft.

Its subscription answers the target's name for requestMore and does what the draft demands of every
publisher: it throws IllegalStateException on a cancelled subscription (spi.request-more.1,
spi.cancel.1) and IllegalArgumentException for n <= 0 (spi.request-more.4), and signals onError when
the total demand would exceed 2^63-1 (spi.request-more.3). A call the draft forbids the subscriber is
charged to the draft's item as it is made (spi.subscriber.3, .4, spi.on-terminal.3); the core monitors
of the probe publisher are charged to the draft's items by `UPSTREAM_ALIASES`.
"""

from __future__ import annotations

from typing import Any

from rstck.api import MAX_DEMAND
from rstck.core.probes import ProbePublisher, ProbeSubscription
from rstck.rules.spi_draft.probe import mapping

# The draft's items for the core subscriber rules the kit's publisher watches (None: the draft has no such rule).
UPSTREAM_ALIASES: dict[str, str | None] = {
    "2.3": "spi.on-terminal.2",  # a call on the subscription from inside onComplete / onError
    "2.4": "spi.on-terminal.3",  # a requestMore after onComplete / onError
    "2.7": None,  # calls made serially: the draft says nothing of it
    "3.1": None,  # calls from its own subscriber's context: idem
    "async.non-blocking": "spi.generally.1",  # a signal method that does not return in time
    "2.9": "spi.subscriber.6",  # a raise from the onComplete that ends what a check left open
}


class IllegalStateError(RuntimeError):
    """java.lang.IllegalStateException, as the kit's draft publisher throws it."""


class DraftUpstreamSubscription(ProbeSubscription):
    """A `ProbeSubscription` with the draft's requestMore and throwing cancel."""

    def __init__(self, publisher: ProbePublisher, subscriber: Any, name: str):
        super().__init__(publisher, subscriber, name)
        setattr(self, mapping(publisher.session).request_more, self._request_more)  # "request" for a final-spec one

    def _request_more(self, n: Any) -> None:
        if self._refused("requestMore", "spi.subscriber.3", (n,)):
            raise IllegalStateError("requestMore on a cancelled subscription (spi.request-more.1)")
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            self.publisher.session.trace.record("request_more", self.name, (n,))
            raise ValueError(f"requestMore needs a positive number, got {n!r} (spi.request-more.4)")
        if self.outstanding + n > MAX_DEMAND:  # spi.request-more.3, which binds the kit's publisher too
            self.publisher.session.trace.record("request_more", self.name, (n,))
            self.publisher.send_error(IllegalStateError("total demand beyond 2^63-1 (spi.request-more.3)"),
                                      subscription=self)
            return
        ProbeSubscription.request(self, n)

    def cancel(self) -> None:
        if self._refused("cancel", "spi.subscriber.4", ()):
            raise IllegalStateError("cancel on a cancelled subscription (spi.cancel.1)")
        super().cancel()

    def _refused(self, call: str, rule: str, args: tuple) -> bool:
        """Whether the subscription is cancelled, or ended (which the subscriber must take as cancelled):
        the call is then charged and refused."""
        if not (self.cancelled or self.terminal):
            return False
        session = self.publisher.session
        inside = self._inside_own_signal(("on_complete", "on_error"))
        signal = session.trace.record(call, self.name, args)
        where = f"#{signal.seq} {signal.call_text()}"
        if inside:
            session.findings.violate("spi.on-terminal.2", f"no call on the subscription from within {inside}", where)
        elif self.terminal:
            session.findings.violate("spi.on-terminal.3",
                                     f"the subscription considered cancelled after {self.terminal}: no {call}", where)
        else:
            session.findings.violate(rule, f"no {call} on a subscription it cancelled", where)
        signal.outcome = "raised IllegalStateError (the draft's answer)"
        return True

    def _called(self, kind: str, args: tuple) -> None:
        inside = self._inside_own_signal(("on_subscribe", "on_next"))
        super()._called(kind, args)
        if inside:
            self.publisher.session.findings.violate("spi.on-next.2",
                                                    f"no call on the subscription from within {inside}",
                                                    f"{self.name}.{kind} was called from within {inside}")

    def _inside_own_signal(self, kinds: tuple[str, ...]) -> str:
        """The innermost of `kinds` the kit is signalling to this subscription's subscriber on this thread."""
        inside = [k for s, k in self.publisher.session.signalling.in_progress() if s is self.subscriber and k in kinds]
        return inside[-1] if inside else ""


class DraftSource(ProbePublisher):
    """The kit's publisher, handing out draft subscriptions."""

    subscription_class = DraftUpstreamSubscription


def draft_source(session: Any, **options: Any) -> DraftSource:
    session.findings.rule_aliases.update(UPSTREAM_ALIASES)
    return DraftSource(session, session.labels.fresh("source"), **options)


def judging(session: Any, item: str) -> None:
    """The check of `item` is under way: a raise from the subscriber's signal methods is charged to it (the
    draft has no "return normally"), and a call from inside onSubscribe or onNext only by spi.on-next.2's own
    check. A subscriber built on the final spec makes such calls (3.2); charged by every check they would
    leave each of its other items undecided (docs/decisions.md, "SPI draft")."""
    session.findings.rule_aliases.update({"2.13": item, "2.8": item})
    if item != "spi.on-next.2":
        session.findings.rule_aliases["spi.on-next.2"] = None


def attach(session: Any, item: str, *, observed: bool = False) -> tuple[DraftSource, Any, Any]:
    """A subscriber under test (white box when `observed`), subscribed to the kit's draft publisher; settled.
    The check judges `item` (`judging`)."""
    judging(session, item)
    observer = session.observer() if observed else None
    subscriber = session.create_whitebox_subscriber(observer) if observed else session.create_subscriber()
    source = draft_source(session)
    source.subscribe(subscriber)
    session.settle()
    return source, subscriber, observer

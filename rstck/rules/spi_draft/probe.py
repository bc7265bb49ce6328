"""The kit's subscriber under the SPI draft: the core probe, judging by the draft's rules.

It differs from `ProbeSubscriber` where the draft does:
- a publisher in `completed` or `error` state answers `subscribe` with onComplete or onError and no
  onSubscribe (spi.subscribe.1-4), so a terminal signal without a subscription is taken in, not charged;
- demand is asked for with the target's `requestMore` (`target.spi_draft.request_more`);
- the probe never calls its subscription from inside a signal (spi.on-next.2, spi.on-terminal.2), and
  never after a terminal signal or a cancel (spi.on-terminal.3, spi.subscriber.3, spi.subscriber.4):
  the kit breaks no MUST of the draft, so the exceptions the draft demands on a cancelled subscription
  (spi.request-more.1, spi.cancel.1) are never provoked;
- the same probe may be subscribed again once its subscription is cancelled (spi.cancel.4), and while it
  is active (spi.subscribe.7), where the draft expects it; an onSubscribe received while a subscription
  is active is answered with the kit's on-purpose error raised from onSubscribe (spi.subscriber.1);
- a violation is charged to the draft's item, never to a core rule.
"""

from __future__ import annotations

from typing import Any

from rstck.core.probes import ProbeSubscriber
from rstck.core.signals import Signal, show
from rstck.rules.spi_draft.names import DraftNames, draft_names
from rstck.core.verdict import RuleViolation

# How long requestMore and cancel may take is the draft's "Generally" (a SHOULD).
HANG_ITEM = "spi.generally.1"


class DraftProbe(ProbeSubscriber):
    """A `ProbeSubscriber` that speaks the SPI draft (see the module docstring)."""

    def __init__(self, session: Any, name: str, **options: Any):
        super().__init__(session, name, **options)
        self.subscriptions = 0  # onSubscribe calls taken in (a resubscribed probe has several)
        self.refused: list[Any] = []  # subscriptions offered while one was active (spi.subscribe.7)
        self.charge_refused = True  # charge spi.subscribe.7 for them (not where another item is checked)

    @property
    def active(self) -> bool:
        return self.subscription is not None and not (self.cancelled or self.terminated)

    # -- signals ------------------------------------------------------------------------------

    def _admit(self, kind: str, signal: Signal, args: tuple) -> None:
        where = f"#{signal.seq} {signal.call_text()}"
        if kind == "on_subscribe":
            self._admit_subscription(args[0], where)
            return
        if self.silence_rule:
            self._violate(self.silence_rule, "no further signal", where)
        elif self.terminated and kind == "on_next":
            self._violate("spi.publisher.2", "no onNext after a terminal signal", f"{where} after "
                                                                                   f"{self._terminal_text()}")
        elif self.terminated:
            self._violate("spi.publisher.7", "onComplete or onError at most once", f"{where} after "
                                                                                   f"{self._terminal_text()}")
        elif self.cancel_settled:
            self._violate("spi.cancel.2", "no call once cancel has taken effect", f"{where} after cancel had settled")
        elif kind == "on_next" and self.received + 1 > self.requested:
            self._violate("spi.publisher.1", f"at most {show(self.requested)} onNext (the total requested)",
                          f"{where} is onNext number {self.received + 1}")
        self._take_in(kind, args)

    def _admit_subscription(self, subscription: Any, where: str) -> None:
        if self.active:
            self.refused.append(subscription)
            if self.charge_refused:
                self._violate("spi.subscribe.7", "subscribe rejected (onError): the subscriber already has an "
                                                 "active subscription", f"{where} accepted it")
            # spi.subscriber.1's "trigger an error": the kit's own error, which the session knows when it comes back.
            raise self._session.surfacing.armed()
        if self.subscription is not None:  # resubscribed after a cancel: a fresh start
            self.received, self.requested, self.elements, self.completed, self.errors = 0, 0, [], 0, []
            self.cancelled, self.cancelled_at, self.silence_rule = False, None, None
            self._cancel_settled = False
        self.subscriptions += 1
        self.subscribed = 1
        self.subscription = subscription
        self.subscription_name = self._session.labels.of(subscription, "sub")

    def _violate(self, rule: str, expected: str, observed: str) -> None:
        if rule == "1.3":  # the draft has no rule on serial signals: the trace keeps what happened
            self.trace.note(f"overlapping signals (no rule of the draft): {observed}")
            return
        self._session.findings.violate(rule, expected, observed)

    # -- calls on the subscription ---------------------------------------------------------

    def _request_now(self, n: int, rule_if_raises: str | None) -> None:
        if self.cancelled or self.terminated:  # the draft forbids it to every subscriber (spi.subscriber.3)
            self.trace.note(f"{self.name} does not requestMore({show(n)}): its subscription is cancelled")
            return
        if isinstance(n, int) and n > 0:
            self.requested += n
        self._session.calls.make(self.subscription, mapping(self._session).request_more, (n,),
                                 actor=self.subscription_name, rule_if_raises=rule_if_raises or "spi.request-more.2",
                                 rule_if_hangs=HANG_ITEM)

    def _cancel_now(self, rule_if_raises: str) -> None:
        if self.cancelled or self.terminated:  # the draft forbids it to every subscriber (spi.subscriber.4)
            self.trace.note(f"{self.name} does not cancel: its subscription is cancelled already")
            return
        self.cancelled_at = self.received
        self.cancelled = True
        self._session.calls.make(self.subscription, "cancel", (), actor=self.subscription_name,
                                 rule_if_raises=rule_if_raises, rule_if_hangs=HANG_ITEM)

    def cancel(self, *, rule_if_raises: str = "spi.cancel.2") -> None:
        super().cancel(rule_if_raises=rule_if_raises)

    def _no_subscription(self, call: str) -> None:
        self._violate("spi.subscribe.5", f"onSubscribe (a subscription to {call} on)", "no onSubscribe arrived")

    # -- expectations ----------------------------------------------------------------------------

    def expect_subscribed(self, rule: str = "spi.subscribe.5") -> None:
        super().expect_subscribed(rule)

    def awaited(self, arrived) -> bool:
        """Whether a signal `arrived()` tells of has come (a black box is given until the deadline)."""
        return self._awaited(arrived)

    def expect_no_subscription(self, rule: str) -> None:
        if self.subscriptions:
            self._fail(rule, "no onSubscribe", f"onSubscribe({self.subscription_name}), then {self.observed()}")


def mapping(session: Any) -> DraftNames:
    """The target's mapping of the draft: its requestMore's name and its exception classes."""
    return draft_names(session.target)


def subscribe(session: Any, publisher: Any, probe: DraftProbe | None = None, *,
              rule_if_raises: str = "spi.subscribe.5") -> DraftProbe:
    """Subscribe a draft probe (a new one unless given: the draft lets the kit subscribe one again) and
    settle when nothing arrived yet, as `Session.subscribe` does."""
    probe = probe or new_probe(session)
    before = probe.signal_count + probe.subscriptions
    session.calls.make(publisher, "subscribe", (probe,), actor="publisher", rule_if_raises=rule_if_raises)
    if probe.signal_count + probe.subscriptions == before:
        session.settle()
    return probe


def new_probe(session: Any) -> DraftProbe:
    probe = DraftProbe(session, session.labels.fresh("probe"))
    session.ends.probes.add(probe)
    return probe


def ended(session: Any, n: int) -> tuple[Any, DraftProbe]:
    """A publisher of `n` elements that has completed a first subscriber: in `completed` state (the kit's
    reading, docs/decisions.md), with that subscriber."""
    publisher = session.create_publisher(n)
    first = subscribe(session, publisher)
    if not first.terminated:
        first.expect_subscribed()
        first.request(n + 1)  # one more than there is: a publisher may need it to find the end (1.5's reading)
        session.settle()
    if not first.completed:
        raise RuleViolation("spi.publisher.4", f"onComplete after the final element ({n + 1} requested of {n})",
                            first.observed() + session.quiet_note())
    return publisher, first


def failed(session: Any) -> tuple[Any, DraftProbe]:
    """A failed publisher that has signalled onError to a first subscriber: in `error` state."""
    publisher = session.create_failed_publisher()
    first = subscribe(session, publisher)
    if first.subscription is not None and not first.terminated:
        first.request(1)
        session.settle()
    if not first.errors:
        raise RuleViolation("spi.subscribe.4", "onError from a failed publisher", first.observed()
                            + session.quiet_note())
    return publisher, first

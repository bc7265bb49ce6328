"""The kit as publisher: drives one subscriber under test (or a processor's upstream side).

Everything it sends is legal for a publisher, including what the spec says a subscriber must
be prepared for: on_complete and on_error with or without demand (2.9, 2.10), on_next after
the subscriber cancelled while demand is pending (2.8), a second on_subscribe (2.5) and None
arguments (2.13). The kit's recording subscription (rstck.core.probes.ProbeSubscription) charges
2.3, 2.4, 2.7 and 3.1 as calls arrive; a raise from a signal method is charged to the rule
that says the subscriber must take that signal. Once settled, `check_settled` adds 2.1,
2.5 and, for a subscriber that reports to an observer, 2.11.
"""

from __future__ import annotations

from typing import Any

from rstck.core.probes import ProbeObserver, ProbePublisher, ProbeSubscription
from rstck.core.signals import show

# Like the 2.7 check: a call arriving on a foreign thread dwells, so an overlap can show.
DWELL_S = 0.0005


class Upstream:
    def __init__(self, session: Any, subscriber: Any, *, observer: ProbeObserver | None = None,
                 dwell: bool = False):
        self.session = session
        self.subscriber = subscriber
        self.observer = observer
        self.source: ProbePublisher = session.source(dwell_s=DWELL_S if dwell else 0.0)
        self.sent: list[tuple[str, Any]] = []  # signals sent on the first subscription, for 2.11
        self.second: list[tuple[ProbePublisher, bool]] = []  # further sources, and whether the first was active
        self._values = iter(range(10**9))

    @property
    def label(self) -> str:
        return self.session.labels.of(self.subscriber)

    @property
    def subscription(self) -> ProbeSubscription:
        return self.source.subscriptions[0]

    def attach(self) -> None:
        self.source.subscribe(self.subscriber)
        self.sent.append(("on_subscribe", None))

    def send(self, count: int) -> int:
        """Up to `count` on_next, as far as the subscriber's demand goes; after its cancel one more, until the
        cancel has settled (2.8: a publisher may still deliver what was requested, then stops: 1.8)."""
        subscription = self.subscription
        sent = 0
        while sent < count and self.source.can_signal(subscription) and subscription.requested > subscription.delivered:
            if subscription.cancelled and subscription.delivered_after_cancel >= 1:
                break
            value = next(self._values)
            self.sent.append(("on_next", value))
            self.source.send_next(value, subscription=subscription,
                                  rule_if_raises="2.8" if subscription.cancelled else "2.13")
            sent += 1
        return sent

    def complete(self) -> None:
        if self.source.can_signal(self.subscription):
            self.sent.append(("on_complete", None))
            self.source.send_complete(subscription=self.subscription, rule_if_raises="2.9")

    def fail(self) -> None:
        if self.source.can_signal(self.subscription):
            error = RuntimeError("the kit's source fails on purpose")
            self.sent.append(("on_error", error))
            self.source.send_error(error, subscription=self.subscription, rule_if_raises="2.10")

    def subscribe_again(self) -> None:
        """A second on_subscribe (from a second source): with the first subscription active, 2.5
        says the subscriber must cancel the new one."""
        subscription = self.subscription
        active = not subscription.terminal and not subscription.cancelled
        second = self.session.source(second_subscription=True)  # the situation 2.5 is about
        self.second.append((second, active))
        second.subscribe(self.subscriber)

    def send_none(self, method: str) -> None:
        """on_subscribe(None), on_next(None) or on_error(None) must raise the profile's type error (2.13)."""
        session = self.session
        session.calls.expecting_error(self.subscriber, method, (None,), error_type=session.error_names.type_error,
                                      rule="2.13", actor=self.label)

    def check_settled(self, *, expect_demand: bool = True) -> None:
        session, subscription = self.session, self.subscription
        def asked() -> bool:
            return bool(subscription.terminal or subscription.cancelled or subscription.requests)

        # Where a quiet window decided the settle, a request still to come is waited for until the deadline first.
        if expect_demand and not (asked() or session.settler.await_signal(asked, session.deadline)):
            session.findings.violate("2.1", "request(n) to receive on_next (the kit sends none without demand)",
                                     f"{self.label} has made no request on {subscription.name} once settled")
        for second, first_was_active in self.second:
            if first_was_active and not second.subscription.cancelled:
                session.findings.violate("2.5", f"cancel() on the second subscription {second.subscription.name}",
                                         f"{self.label} had {subscription.name} active and left the new one "
                                         "uncancelled")
        if self.observer is not None:
            self._check_processing()

    def _check_processing(self) -> None:
        """2.11 (white box): what the subscriber reports as processed is what was sent, in order, each once.
        It may stop early (after a cancel); it may not repeat, reorder or invent."""
        sent_items = [value for kind, value in self.sent if kind == "on_next"]
        processed_items = [value for kind, value in self.observer.processed if kind == "on_next"]
        if processed_items != sent_items[:len(processed_items)]:
            first = next((i for i, (a, b) in enumerate(zip(processed_items, sent_items)) if a != b),
                         min(len(processed_items), len(sent_items)))
            self.session.findings.violate("2.11",
                                          f"elements processed once each, in the order sent ({show(sent_items)})",
                                          f"{self.label} processed {show(processed_items)}: it diverges at element "
                                          f"{first + 1}")
            return
        terminals_sent = [kind for kind, _ in self.sent if kind in ("on_complete", "on_error")]
        terminals_processed = [kind for kind, _ in self.observer.processed if kind in ("on_complete", "on_error")]
        if len(terminals_processed) > 1 or (terminals_processed and terminals_processed[0] not in terminals_sent):
            sent = ", ".join(terminals_sent) or "none sent"
            self.session.findings.violate("2.11", f"the terminal signal processed once ({sent})",
                                          f"{self.label} processed {', '.join(terminals_processed)}")

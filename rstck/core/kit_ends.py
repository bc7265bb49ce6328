"""The kit's ends in one check: the probes that subscribe to publishers under test, and the subscriptions the
kit's publishers hand to subscribers under test. A settle tells them which cancels have taken effect; the
check's end winds them down as a well-behaved peer."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rstck.core.findings import Findings
    from rstck.core.labels import Labels
    from rstck.core.probes import ProbePublisher, ProbeSubscriber, ProbeSubscription


class KitEnds:
    """One check's probes and the subscriptions its kit publishers handed out."""

    def __init__(self, findings: Findings, labels: Labels):
        self._findings = findings
        self._labels = labels
        self.probes: weakref.WeakSet[ProbeSubscriber] = weakref.WeakSet()
        self.subscriptions: list[ProbeSubscription] = []
        self._subscribers: set[int] = set()  # subscribers under test the kit's publishers subscribed

    def handed_out(self, publisher: ProbePublisher, subscriber: Any, subscription: ProbeSubscription) -> None:
        """`publisher` hands `subscription` to `subscriber`: the kit's publishers give a subscriber on_subscribe
        once, unless the check is about 2.5."""
        if id(subscriber) in self._subscribers and not publisher.second_subscription:
            self._findings.kit_fault("2.12", "on_subscribe at most once for a given subscriber",
                                     f"{publisher.name} would subscribe {self._labels.of(subscriber)} again")
        self._subscribers.add(id(subscriber))
        self.subscriptions.append(subscription)

    def settled(self) -> None:
        """A settle came: every cancel made before it has taken effect."""
        for probe in list(self.probes):
            if probe.cancelled:
                probe.cancel_settled = True
        for subscription in self.subscriptions:
            if subscription.cancelled:
                subscription.cancel_settled = True

    def open_probes(self) -> list[ProbeSubscriber]:
        """The probes whose subscription is still open: neither cancelled nor ended."""
        return [probe for probe in list(self.probes) if _open(probe)]

    def wind_down(self) -> None:
        """Cancel every subscription a probe still has open, and complete every stream the kit still feeds to a
        subscriber under test (2.9 allows it at any time), so that nothing the check started waits forever."""
        for probe in list(self.probes):
            if _open(probe):  # looked at as its turn comes: an earlier cancel may have ended this stream
                probe.cancel()
        for subscription in self.subscriptions:
            publisher = subscription.publisher
            if subscription.announced and not subscription.cancelled and publisher.can_signal(subscription):
                publisher.send_complete(subscription=subscription, rule_if_raises="2.9")

    def sealed(self) -> None:
        """The check is sealed: every probe takes what still arrives on its slow path, which counts it and
        judges nothing."""
        for probe in list(self.probes):
            probe._refresh()


def _open(probe: ProbeSubscriber) -> bool:
    return probe.subscription is not None and not probe.cancelled and not probe.terminated

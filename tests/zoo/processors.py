"""Mutants of the reference identity processor, each broken in one way."""

from __future__ import annotations

from rstck.reference.processors import MapProcessor


class SwallowsError(MapProcessor):
    """4.2: an upstream on_error is neither propagated nor recovered from: it vanishes."""

    def on_error(self, error) -> None:
        if error is None:
            raise TypeError("error must not be None (rule 2.13)")


class OverDelivers(MapProcessor):
    """1.1: asks upstream for one more than downstream asked for, and passes everything on."""

    def _request(self, n: int) -> None:
        super()._request(n + 1 if n > 0 else n)

    def on_next(self, item) -> None:
        with self._lock:
            self._demand += 1  # the defect: its own demand check can never trip
        super().on_next(item)


class KeepsUpstreamOpen(MapProcessor):
    """4.2.cancel-upstream (RECOMMENDED): a downstream cancel is not passed upstream."""

    def _cancel_upstream_locked(self) -> None:
        if not self._downstream_cancelled:
            super()._cancel_upstream_locked()


class RequestsAfterUpstreamCompleted(MapProcessor):
    """Correct (it was a 2.4 mutant under the old reading): after upstream completed, downstream demand is
    still forwarded upstream, where it is a NOP (1.6, 3.6)."""

    completed_upstream = None

    def on_subscribe(self, subscription) -> None:
        self.upstream_subscription = subscription
        super().on_subscribe(subscription)

    def on_complete(self) -> None:
        self.completed_upstream = self.upstream_subscription
        super().on_complete()

    def _request(self, n: int) -> None:
        if self.completed_upstream is not None:
            self.completed_upstream.request(n)
        super()._request(n)

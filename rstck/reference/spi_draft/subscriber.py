"""The SPI draft's subscriber."""

from __future__ import annotations

from typing import Any

from rstck.reference.spi_draft.events import SerialEvents
from rstck.reference.spi_draft.publisher import IllegalStateError


class DraftSubscriber(SerialEvents):
    """A subscriber of the SPI draft that requests `batch` elements at a time and cancels after `max_items`.

    Its signal methods only schedule an event on `executor` (spi.on-next.1, spi.on-terminal.1), and the
    events, run one at a time, make every call on the subscription (spi.on-next.2, spi.on-terminal.2). An
    onSubscribe while its subscription is active raises IllegalStateError (spi.subscriber.1). After a
    terminal signal or its own cancel it calls the subscription no more (spi.on-terminal.3,
    spi.subscriber.3, .4), and takes what still arrives (spi.subscriber.5-7). `observer` (the kit's white
    box) hears of each signal once it is processed.
    """

    def __init__(self, executor: Any, *, batch: int = 4, max_items: int | None = None, observer: Any = None):
        self._init_events(executor)
        self._batch = batch
        self._max_items = max_items
        self._observer = observer
        self._subscription: Any = None
        self._done = False  # cancelled, or ended: the subscription counts as cancelled
        self._outstanding = 0
        self.received: list[Any] = []

    def on_subscribe(self, subscription: Any) -> None:
        with self._lock:
            if self._subscription is not None and not self._done:
                raise IllegalStateError("this subscriber has an active subscription already (spi.subscriber.1)")
            self._subscription, self._done = subscription, False
        self._schedule("subscribed", subscription)

    def _on_subscribed(self, subscription: Any) -> None:
        if self._observer is not None:
            self._observer.on_subscribe_processed()
        self._request()

    def _on_element(self, element: Any) -> None:
        if self._done:
            return  # after its cancel: taken, not processed (spi.subscriber.5)
        self.received.append(element)
        self._outstanding -= 1
        if self._observer is not None:
            self._observer.on_next_processed(element)
        if self._max_items is not None and len(self.received) >= self._max_items:
            self._done = True
            self._subscription.cancel()
        elif self._outstanding == 0:
            self._request()

    def _on_end(self, ended: tuple) -> None:
        was_done, self._done = self._done, True
        if self._observer is not None and not was_done:
            getattr(self._observer, f"{ended[0]}_processed")(*ended[1:])

    def _request(self) -> None:
        if not self._done:
            self._outstanding += self._batch
            self._subscription.request_more(self._batch)

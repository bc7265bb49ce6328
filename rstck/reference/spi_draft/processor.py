"""The SPI draft's identity processor."""

from __future__ import annotations

from collections import deque
from typing import Any

from rstck.reference.spi_draft.events import SerialEvents
from rstck.reference.spi_draft.publisher import MAX_TOTAL_DEMAND, IllegalStateError, check_request_more


class DraftProcessor(SerialEvents):
    """An identity processor of the SPI draft.

    Every signal from upstream, and every request and cancel from downstream, becomes an event run on
    `executor`, one at a time: a signal method only schedules (spi.on-next.1, spi.on-terminal.1) and calls
    nothing (spi.on-next.2, spi.on-terminal.2). It asks upstream for `prefetch` elements at once, and
    passes downstream demand on as it comes; elements that arrive without downstream demand are held
    (spi.processor.6), and dropped once downstream has cancelled (spi.processor.5).
    An upstream onError goes downstream at once, ahead of held elements (spi.processor.4); the last
    downstream cancel cancels upstream (spi.processor.3). One downstream subscriber at a time: another is
    rejected with onError; once ended, the processor answers `subscribe` as a completed or failed
    publisher does (spi.subscribe.1-4).
    """

    prefetch = 2

    def __init__(self, executor: Any):
        self._init_events(executor)
        # Touched only by the event that runs:
        self._upstream: Any = None
        self._upstream_cancelled = False
        self._asked = 0  # demand asked of upstream before it subscribed
        self._downstream: Any = None
        self._subscription: DraftProcessorSubscription | None = None
        self._held: deque[Any] = deque()
        self._demand = 0
        self._ended: tuple | None = None  # ("on_complete",) or ("on_error", error), once upstream ended

    # Subscriber (upstream) side: each signal only schedules its event (onNext, onError, onComplete: SerialEvents).
    def on_subscribe(self, subscription: Any) -> None:
        self._schedule("upstream", subscription)

    # Publisher (downstream) side.
    def subscribe(self, subscriber: Any) -> None:
        self._schedule("downstream", subscriber)

    def _on_upstream(self, subscription: Any) -> None:
        if self._upstream is not None:  # one upstream at a time (spi.subscriber.1's error)
            subscription.cancel()
            return
        self._upstream = subscription
        if self.prefetch + self._asked:
            subscription.request_more(self.prefetch + self._asked)

    def _on_downstream(self, subscriber: Any) -> None:
        if self._ended is not None and not self._held:
            getattr(subscriber, self._ended[0])(*self._ended[1:])  # no onSubscribe once ended (spi.subscribe.1-4)
        elif self._downstream is not None:
            subscriber.on_error(IllegalStateError("this processor has a subscriber already (spi.subscribe.6)"))
        else:
            self._downstream = subscriber
            self._subscription = DraftProcessorSubscription(self)
            subscriber.on_subscribe(self._subscription)

    def _on_demand(self, n: int) -> None:
        if self._downstream is None:
            return
        if self._demand + n > MAX_TOTAL_DEMAND:
            self._finish(("on_error", IllegalStateError("total demand beyond 2^63-1 (spi.request-more.3)")))
            self._cancel_upstream()
            return
        self._demand += n
        self._deliver()
        if self._upstream is None:
            self._asked += n
        elif not self._upstream_cancelled and self._ended is None:
            self._upstream.request_more(n)

    def _on_cancel(self, _: Any) -> None:
        self._downstream, self._subscription = None, None
        self._held.clear()
        self._cancel_upstream()  # spi.processor.3

    def _on_element(self, element: Any) -> None:
        if self._downstream is not None:  # else dropped: its last downstream cancelled (spi.processor.5)
            self._held.append(element)
            self._deliver()

    def _on_end(self, ended: tuple) -> None:
        self._ended = ended
        if ended[0] == "on_error":
            self._held.clear()  # passed on at once, not behind the elements held (spi.processor.4)
            self._finish(ended)
        else:
            self._deliver()

    def _deliver(self) -> None:
        while self._held and self._demand and self._downstream is not None:
            self._demand -= 1
            self._downstream.on_next(self._held.popleft())
        if self._ended is not None and not self._held:
            self._finish(self._ended)

    def _finish(self, ended: tuple) -> None:
        downstream, subscription = self._downstream, self._subscription
        self._downstream, self._subscription = None, None
        if subscription is not None:
            subscription.cancelled = True
        if downstream is not None:
            getattr(downstream, ended[0])(*ended[1:])

    def _cancel_upstream(self) -> None:
        if self._upstream is not None and not self._upstream_cancelled and self._ended is None:
            self._upstream_cancelled = True
            self._upstream.cancel()


class DraftProcessorSubscription:
    """The processor's downstream subscription: checks each call, and schedules it as an event."""

    def __init__(self, processor: DraftProcessor):
        self._processor = processor
        self.cancelled = False

    def request_more(self, n: int) -> None:
        check_request_more(self.cancelled, n)
        self._processor._schedule("demand", n)

    def cancel(self) -> None:
        if self.cancelled:
            raise IllegalStateError("cancel on a cancelled subscription (spi.cancel.1)")
        self.cancelled = True
        self._processor._schedule("cancel", None)

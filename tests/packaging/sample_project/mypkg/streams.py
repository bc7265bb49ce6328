"""A synchronous range publisher: it delivers 0, 1, ..., n-1 against demand, inside `request`."""

from __future__ import annotations

import logging


class RangeSubscription:
    def __init__(self, subscriber, n: int):
        self.subscriber, self.n, self.next, self.demand, self.done, self.busy = subscriber, n, 0, 0, False, False

    def request(self, n: int) -> None:
        if self.done:
            return
        if n <= 0:
            self.fail(ValueError(f"request({n}): a request must be positive (rule 3.9)"))
            return
        self.demand += n
        if self.busy:  # asked from inside on_next: the loop below serves it (3.3)
            return
        self.busy = True
        try:
            while self.demand > 0 and self.next < self.n and not self.done:
                self.demand -= 1
                self.next += 1
                try:
                    self.subscriber.on_next(self.next - 1)
                except Exception:  # 2.13: a subscriber that raises counts as cancelled; its error is logged
                    logging.getLogger(__name__).exception("on_next raised: the subscription is cancelled")
                    self.cancel()
                    return
            if self.next == self.n:
                self.finish()
        finally:
            self.busy = False

    def cancel(self) -> None:
        self.done, self.subscriber = True, None

    def finish(self) -> None:
        subscriber, self.subscriber, self.done = self.subscriber, None, True
        if subscriber is not None:
            subscriber.on_complete()

    def fail(self, error: Exception) -> None:
        subscriber, self.subscriber, self.done = self.subscriber, None, True
        subscriber.on_error(error)


class RangePublisher:
    subscription = RangeSubscription

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = self.subscription(subscriber, self.n)
        subscriber.on_subscribe(subscription)
        if self.n == 0:
            subscription.finish()

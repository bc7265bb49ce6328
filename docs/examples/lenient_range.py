"""A range publisher that takes request(0) as "nothing more for now" instead of an error: it breaks 3.9, and
docs/reproducers.md shows the reproducer `rstck check docs.examples.lenient_range:target --repro repro` writes for it.
`fixed` is the same publisher with the one change 3.9 asks for."""

from __future__ import annotations

import logging

from rstck import InProcessTarget


class RangeSubscription:
    """Delivers 0, 1, ..., n-1 against demand, synchronously, inside request."""

    def __init__(self, subscriber, n: int):
        self.subscriber, self.n, self.next, self.demand, self.done, self.busy = subscriber, n, 0, 0, False, False

    def request(self, n: int) -> None:
        if self.done or n <= 0:  # the defect: 3.9 asks for on_error(ValueError) when n <= 0
            return
        self.demand += n
        if self.busy:  # asked from inside on_next: the loop below serves it (3.3)
            return
        self.busy = True
        try:
            while self.demand > 0 and not self.done and self.next < self.n:  # n == 0: subscribe completes it
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


class StrictRangeSubscription(RangeSubscription):
    """The fix: request(n <= 0) ends the stream with on_error (3.9)."""

    def request(self, n: int) -> None:
        if not self.done and n <= 0:
            subscriber, self.subscriber, self.done = self.subscriber, None, True
            subscriber.on_error(ValueError(f"request({n}): 3.9 says a request must be positive"))
            return
        super().request(n)


class LenientRange:
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


class StrictRange(LenientRange):
    subscription = StrictRangeSubscription


target = InProcessTarget(create_publisher=LenientRange, name="lenient range")
fixed = InProcessTarget(create_publisher=StrictRange, name="strict range")

"""An idiomatic asyncio publisher: n, n-1, ..., 1, then on_complete.

It assumes what asyncio code assumes: every call comes on the loop's thread, with the loop
running. rstck makes its calls that way, so the target needs no setting for it:

    target = rstck.InProcessTarget(create_publisher=Countdown)
"""

import asyncio
import logging


class Countdown:
    def __init__(self, n):
        self.n = n

    def subscribe(self, subscriber):
        if subscriber is None:
            raise TypeError("subscriber must not be None")
        subscription = CountdownSubscription(self.n, subscriber)
        subscriber.on_subscribe(subscription)
        subscription.wake()  # an empty countdown ends without any demand


class CountdownSubscription:
    def __init__(self, n, subscriber):
        self.left, self.subscriber, self.demand, self.task = n, subscriber, 0, None

    def request(self, n):
        if self.subscriber is None:
            return  # cancelled or ended: a no-op
        if n <= 0:
            return self.end("on_error", ValueError(f"request(n) must be positive, got {n}"))
        self.demand = min(self.demand + n, 2**63 - 1)
        self.wake()

    def cancel(self):
        self.subscriber = None  # the task stops at its next look; nothing keeps the subscriber

    def wake(self):
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.run())

    async def run(self):
        while self.subscriber is not None and self.demand and self.left:
            self.demand, self.left = self.demand - 1, self.left - 1
            try:
                self.subscriber.on_next(self.left + 1)
            except Exception:  # the subscriber broke 2.13: it counts as cancelled, and we say so
                logging.getLogger(__name__).warning("on_next raised; cancelled", exc_info=True)
                self.subscriber = None
            await asyncio.sleep(0)  # let other tasks run between elements
        if self.subscriber is not None and not self.left:
            self.end("on_complete")

    def end(self, method, *args):
        subscriber, self.subscriber = self.subscriber, None
        if subscriber is not None:
            getattr(subscriber, method)(*args)

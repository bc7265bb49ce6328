"""A small correct subscriber, and mutants of it that each break one thing."""

from __future__ import annotations

import threading
import time


class Shared:
    """State shared by the subscribers one target makes (and only those): fresh per target."""

    blocked = False
    latest = None


class Subscriber:
    """Requests in batches of `batch`, refilling when its demand runs out; reports to an observer."""

    batch = 4

    def __init__(self, observer=None, shared: Shared | None = None, **resources):
        self.observer = observer
        self.shared = shared or Shared()
        self.resources = resources
        self.subscription = None
        self.received: list = []
        self.outstanding = 0
        self.done = False

    def notify(self, event: str, *args) -> None:
        if self.observer is not None:
            getattr(self.observer, event)(*args)

    def on_subscribe(self, subscription) -> None:
        if subscription is None:
            raise TypeError("subscription must not be None (rule 2.13)")
        if self.subscription is not None or self.done:
            subscription.cancel()  # 2.5
            return
        self.subscription = subscription
        self.notify("on_subscribe_processed")
        self.ask()

    def ask(self) -> None:
        self.outstanding += self.batch
        self.subscription.request(self.batch)

    def on_next(self, item) -> None:
        if item is None:
            raise TypeError("item must not be None (rule 2.13)")
        self.process(item)
        self.notify("on_next_processed", item)
        if self.done:
            return
        self.outstanding -= 1
        if self.outstanding == 0:
            self.ask()

    def process(self, item) -> None:
        self.received.append(item)

    def on_error(self, error) -> None:
        if error is None:
            raise TypeError("error must not be None (rule 2.13)")
        self.finish()
        self.notify("on_error_processed", error)

    def on_complete(self) -> None:
        self.finish()
        self.notify("on_complete_processed")

    def finish(self) -> None:
        self.done = True
        self.subscription = None


class CancelsAfterThree(Subscriber):
    """Guard (must pass): wants three elements, then cancels with demand still pending (2.6, 2.8)."""

    def on_next(self, item) -> None:
        if self.done:
            if item is None:
                raise TypeError("item must not be None (rule 2.13)")
            return self.notify("on_next_processed", item)
        super().on_next(item)
        if len(self.received) == 3:
            subscription, self.subscription, self.done = self.subscription, None, True
            subscription.cancel()


class AsynchronousRequests(Subscriber):
    """Guard (must pass): requests lazily, from the target's executor, one batch at a time. A queued
    request that finds the stream ended is dropped (2.4); the lock makes "ended?" and the call one step."""

    def __init__(self, observer=None, shared: Shared | None = None, **resources):
        super().__init__(observer, shared, **resources)
        self.lock = threading.Lock()

    def ask(self) -> None:
        self.outstanding += self.batch
        self.resources["executor"].submit(self.request_unless_ended, self.subscription, self.batch)

    def request_unless_ended(self, subscription, n: int) -> None:
        with self.lock:
            if not self.done:
                subscription.request(n)

    def finish(self) -> None:
        with self.lock:
            super().finish()


# --- mutants: one defect each -------------------------------------------------------


class NeverRequests(Subscriber):
    """2.1: waits for elements without signalling demand."""

    def ask(self) -> None:
        pass


class OneAtATime(Subscriber):
    """2.1.batch-demand (RECOMMENDED): stop-and-wait, one element per request."""

    batch = 1


class SlowFirstElement(Subscriber):
    """2.2 (RECOMMENDED): heavy processing of the first element on the publisher's thread."""

    def process(self, item) -> None:
        if not self.received:
            time.sleep(0.08)
        super().process(item)


class BlocksOnce(Subscriber):
    """async.non-blocking: one on_next (the first of those its target's subscribers get) waits for
    something that never happens."""

    def process(self, item) -> None:
        if not self.shared.blocked:
            self.shared.blocked = True
            threading.Event().wait(30)
        super().process(item)


class CancelsInOnComplete(Subscriber):
    """2.3: cleans up by cancelling its subscription from inside on_complete."""

    def on_complete(self) -> None:
        subscription = self.subscription
        if subscription is not None:
            subscription.cancel()
        super().on_complete()


class RequestsAfterComplete(Subscriber):
    """Correct (it was a 2.4 mutant under the old reading): on_complete schedules a last refill on the loop,
    which runs after the stream ended: a NOP on a subscription that counts as cancelled (1.6, 3.6)."""

    def on_complete(self) -> None:
        subscription = self.subscription
        super().on_complete()
        if subscription is not None:
            self.resources["loop"].call_soon(subscription.request, self.batch)


class KeepsTwoSubscriptions(Subscriber):
    """2.5: a second on_subscribe replaces the first subscription instead of being cancelled."""

    def on_subscribe(self, subscription) -> None:
        if subscription is None:
            raise TypeError("subscription must not be None (rule 2.13)")
        self.subscription = subscription
        self.notify("on_subscribe_processed")
        self.ask()


class ConcurrentRequests(Subscriber):
    """2.7: refills from several pool threads at once."""

    def ask(self) -> None:
        self.outstanding += self.batch
        subscription = self.subscription
        for _ in range(self.batch // 2):
            self.resources["executor"].submit(subscription.request, 2)


class RaisesAfterCancel(CancelsAfterThree):
    """2.8: cancels after three elements, then treats the elements still in flight as an error."""

    def on_next(self, item) -> None:
        if self.done and item is not None:
            raise RuntimeError(f"on_next({item!r}) after I cancelled")
        super().on_next(item)


class RaisesOnEarlyComplete(Subscriber):
    """2.9: assumes on_complete only ever follows some elements."""

    def on_complete(self) -> None:
        if not self.received:
            raise RuntimeError("on_complete before any element")
        super().on_complete()


class RaisesOnEarlyError(Subscriber):
    """2.10: assumes on_error only ever follows some elements."""

    def on_error(self, error) -> None:
        if error is not None and not self.received:
            raise RuntimeError("on_error before any element")
        super().on_error(error)


class LatestSlot(Subscriber):
    """2.11: hands elements to its processing through one unsynchronised slot, processed later on the
    loop: elements that arrive together overwrite each other."""

    def on_next(self, item) -> None:
        if item is None:
            raise TypeError("item must not be None (rule 2.13)")
        self.latest = item
        self.resources["loop"].call_soon(self.process_latest)

    def process_latest(self) -> None:
        item = self.latest
        self.received.append(item)
        self.notify("on_next_processed", item)
        self.outstanding -= 1
        if self.outstanding == 0 and not self.done:
            self.ask()

    def on_complete(self) -> None:
        self.resources["loop"].call_soon(super().on_complete)


class AcceptsNone(Subscriber):
    """2.13: on_next(None) returns normally."""

    def on_next(self, item) -> None:
        if item is not None:
            super().on_next(item)


class RaisesOnThird(Subscriber):
    """2.13: signals failure by raising from on_next."""

    def process(self, item) -> None:
        super().process(item)
        if len(self.received) == 3:
            raise RuntimeError("cannot handle a third element")


class SharedSubscription(Subscriber):
    """3.1: keeps its latest subscription where every instance of its target sees it, so one instance
    requests on another's."""

    def on_subscribe(self, subscription) -> None:
        if self.subscription is None and subscription is not None:
            self.shared.latest = subscription
        super().on_subscribe(subscription)

    def ask(self) -> None:
        self.outstanding += self.batch
        self.shared.latest.request(self.batch)

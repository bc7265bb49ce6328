"""A small correct publisher, and mutants of it that each break one thing.

The baseline is written independently of rstck.reference so that the zoo does not
inherit the reference's choices; every mutant overrides one method.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import threading
import time

MAX_DEMAND = 2**63 - 1
_END = object()


class Subscription:
    def __init__(self, publisher: "Publisher", subscriber, source):
        self.publisher = publisher
        self.subscriber = subscriber
        self.source = source
        self.demand = 0
        self.done = False
        self.draining = False
        self.delivered = 0
        self.lock = threading.Lock()  # demand is touched by the requesting and the delivering thread
        self.lookahead = next(source, _END)

    def request(self, n: int) -> None:
        if self.done:
            return
        if n <= 0:
            return self.reject(n)
        self.add_demand(n)
        self.drain()

    def reject(self, n: int) -> None:
        self.terminate(lambda s: s.on_error(ValueError(f"rule 3.9: request({n}) must be positive")))

    def add_demand(self, n: int) -> None:
        with self.lock:
            self.demand = min(self.demand + n, MAX_DEMAND)

    def use_demand(self) -> None:
        with self.lock:
            self.demand -= 1

    def drain(self) -> None:
        if self.draining:  # trampoline: a request from inside on_next only adds demand
            return
        self.draining = True
        try:
            while not self.done and self.demand > 0 and self.lookahead is not _END and not self.halted():
                self.use_demand()
                self.emit(self.take())
            if not self.done and self.lookahead is _END and not self.halted():
                self.terminate(lambda s: s.on_complete())
        finally:
            self.draining = False

    def halted(self) -> bool:
        """Whether delivery stops for a signal still to be sent (a deferred on_error, say)."""
        return False

    def take(self):
        item, self.lookahead = self.lookahead, next(self.source, _END)
        self.delivered += 1
        return item

    def emit(self, item) -> None:
        try:
            self.subscriber.on_next(item)
        except Exception:  # 2.13: a raising subscriber counts as cancelled, and the error is logged
            self.done = True
            self.subscriber = None
            logging.getLogger(__name__).warning("on_next raised; the subscription is cancelled", exc_info=True)

    def terminate(self, signal) -> None:
        subscriber, self.subscriber, self.done = self.subscriber, None, True
        signal(subscriber)

    def cancel(self) -> None:
        self.done = True
        self.subscriber = None

    def started(self) -> None:
        self.drain()  # an empty stream completes without demand


class Publisher:
    subscription = Subscription

    def __init__(self, n: int, **options):
        self.n = n
        self.options = options

    def source(self):
        return iter(range(self.n))

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        live = self.__dict__.setdefault("live", {})
        existing = live.get(id(subscriber))
        if existing is not None and existing.subscriber is subscriber:
            return  # 2.12: already subscribed; a second on_subscribe is not allowed
        live[id(subscriber)] = self.accept(subscriber)

    def accept(self, subscriber) -> Subscription:
        subscription = self.subscription(self, subscriber, self.source())
        subscriber.on_subscribe(subscription)
        subscription.started()
        return subscription


class FailedSubscription(Subscription):
    """Live until the publisher fails it: requests are taken (and checked, 3.9) but nothing is emitted."""

    def drain(self) -> None:
        pass


class FailedPublisher:
    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = FailedSubscription(Publisher(0), subscriber, iter(()))
        subscriber.on_subscribe(subscription)
        if not subscription.done:  # unless cancelled, or failed by a request(0), from inside on_subscribe
            subscription.terminate(lambda s: s.on_error(RuntimeError("failed on purpose")))


# --- mutants: one defect each -------------------------------------------------------


class ExcessOnNext(Subscription):
    """1.1: an off-by-one in the demand check delivers one more than requested."""

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        try:
            while not self.done and self.demand >= 0 and self.lookahead is not _END:
                self.demand -= 1
                self.emit(self.take())
            if not self.done and self.lookahead is _END:
                self.terminate(lambda s: s.on_complete())
        finally:
            self.draining = False


class NeverCompletes(Subscription):
    """1.5: the end of the stream is never signalled."""

    def terminate(self, signal) -> None:
        if signal.__code__.co_names == ("on_complete",):
            return
        super().terminate(signal)


class FailedPublisherCompletes(FailedPublisher):
    """1.4: the failed publisher reports success."""

    def subscribe(self, subscriber) -> None:
        subscription = Subscription(Publisher(0), subscriber, iter(()))
        subscriber.on_subscribe(subscription)
        subscription.drain()


class ErrorsWhenCancelledAfterEnd(Subscription):
    """1.6: after on_complete, a cancel is answered with on_error instead of being a NOP."""

    ended_subscriber = None

    def cancel(self) -> None:
        if self.ended_subscriber is not None:
            self.ended_subscriber.on_error(RuntimeError("the stream has already ended"))
            return
        super().cancel()

    def terminate(self, signal) -> None:
        self.ended_subscriber = self.subscriber
        super().terminate(signal)


class CompletesTwice(Subscription):
    """1.7: on_complete is signalled a second time when demand is left over."""

    def terminate(self, signal) -> None:
        subscriber = self.subscriber
        super().terminate(signal)
        if subscriber is not None and self.demand > 0:
            signal(subscriber)


class SubscribeRaises(Publisher):
    """1.9: subscribe raises instead of returning normally."""

    def subscribe(self, subscriber) -> None:
        super().subscribe(subscriber)
        raise RuntimeError("subscribed, but I complain anyway")


class NoOnSubscribe(Publisher):
    """1.9: signals without calling on_subscribe first."""

    def subscribe(self, subscriber) -> None:
        subscription = self.subscription(self, subscriber, self.source())
        subscription.request(1)


class AcceptsNoneSubscriber(Publisher):
    """1.9: subscribe(None) returns normally."""

    def subscribe(self, subscriber) -> None:
        if subscriber is not None:
            super().subscribe(subscriber)


class SharedIterator(Publisher):
    """1.10: every subscriber shares one iterator, so a later subscriber finds the stream used up."""

    def __init__(self, n: int, **options):
        super().__init__(n, **options)
        self.shared = iter(range(n))

    def source(self):
        return self.shared


class RejectsSecondSubscriber(Publisher):
    """1.11 (MAY, not offered): unicast; a second concurrent subscriber gets on_error."""

    active = 0

    def accept(self, subscriber) -> Subscription:
        if self.active:
            subscription = Subscription(self, subscriber, iter(()))
            subscriber.on_subscribe(subscription)
            subscription.terminate(lambda s: s.on_error(RuntimeError("only one subscriber at a time")))
            return subscription
        self.active = 1
        return super().accept(subscriber)


class ReentrantRequestRaises(Subscription):
    """3.2: request from inside on_next raises."""

    def request(self, n: int) -> None:
        if self.draining:
            raise RuntimeError("request is not re-entrant")
        super().request(n)


class ReentrantRequestDeadlocks(Subscription):
    """3.2: a non-reentrant lock around request deadlocks a request from inside on_next."""

    def __init__(self, *args):
        super().__init__(*args)
        self.request_lock = threading.Lock()

    def request(self, n: int) -> None:
        with self.request_lock:
            super().request(n)


class RecursiveDelivery(Subscription):
    """3.3: no trampoline: each request delivers directly, so request -> on_next recursion grows
    with every element."""

    def drain(self) -> None:
        while not self.done and self.demand > 0 and self.lookahead is not _END:
            self.demand -= 1
            self.emit(self.take())
        if not self.done and self.lookahead is _END:
            self.terminate(lambda s: s.on_complete())


class DepthThreeDelivery(Subscription):
    """3.3.depth-one (RECOMMENDED): recursion bounded at depth 3, not 1."""

    depth = 0

    def drain(self) -> None:
        if self.depth >= 3:
            return
        self.depth += 1
        try:
            while not self.done and self.demand > 0 and self.lookahead is not _END:
                self.demand -= 1
                self.emit(self.take())
            if not self.done and self.lookahead is _END:
                self.terminate(lambda s: s.on_complete())
        finally:
            self.depth -= 1


class SlowFirstRequest(Subscription):
    """3.4 (SHOULD): the first request of each subscription blocks its caller."""

    slow = True

    def request(self, n: int) -> None:
        if self.slow:
            self.slow = False
            time.sleep(0.08)
        super().request(n)


class SlowCancel(Subscription):
    """3.5: cancel blocks its caller."""

    def cancel(self) -> None:
        time.sleep(0.08)
        super().cancel()


class ThreadAffineCancel(Subscription):
    """3.5: keeps its state in a thread-local of the thread that subscribed, so a cancel from any
    other thread finds no state and raises."""

    def __init__(self, *args):
        super().__init__(*args)
        self.local = threading.local()
        self.local.state = "live"

    def cancel(self) -> None:
        self.local.state = f"cancelled (was {self.local.state})"  # AttributeError on another thread
        super().cancel()


class RequestAfterCancelDelivers(Subscription):
    """3.6: cancel only stops the current delivery; a later request revives the subscription."""

    def cancel(self) -> None:
        self.cancelled_subscriber = self.subscriber
        super().cancel()

    def request(self, n: int) -> None:
        if self.done and getattr(self, "cancelled_subscriber", None) is not None:
            self.subscriber, self.done = self.cancelled_subscriber, False
        super().request(n)


class SecondCancelCompletes(Subscription):
    """3.7: a second cancel signals on_complete."""

    def cancel(self) -> None:
        if self.done and getattr(self, "cancelled_subscriber", None) is not None:
            subscriber, self.cancelled_subscriber = self.cancelled_subscriber, None
            subscriber.on_complete()
            return
        self.cancelled_subscriber = self.subscriber
        super().cancel()


class RequestReplacesDemand(Subscription):
    """3.8: request sets the demand instead of adding to it."""

    def add_demand(self, n: int) -> None:
        self.demand = min(n, MAX_DEMAND)


class IgnoresNonPositiveRequest(Subscription):
    """3.9: request(0) and request(-1) are silently ignored."""

    def reject(self, n: int) -> None:
        pass


class UnhelpfulRequestError(Subscription):
    """3.9.message (SHOULD): the error for request(0) does not say what was wrong."""

    def reject(self, n: int) -> None:
        self.terminate(lambda s: s.on_error(ValueError("oops")))


class DeliveryIgnoresCancel(Subscription):
    """3.12: cancel blocks later requests, but a delivery already under way runs to the end."""

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        subscriber = self.subscriber  # the defect: the loop keeps its own reference and never looks again
        try:
            while self.demand > 0 and self.lookahead is not _END:
                self.demand -= 1
                self.subscriber = subscriber
                self.emit(self.take())
            if self.lookahead is _END and subscriber is not None:
                self.done = True
                self.subscriber = None
                subscriber.on_complete()
        finally:
            self.draining = False


class KeepsSubscribers(Publisher):
    """3.13: the publisher remembers every subscriber it ever had."""

    def __init__(self, n: int, **options):
        super().__init__(n, **options)
        self.everyone = []

    def subscribe(self, subscriber) -> None:
        self.everyone.append(subscriber)
        super().subscribe(subscriber)


class ShutsDownAfterCancel(Publisher):
    """3.14 (MAY, offered): once its subscriber cancels, new subscribers are completed at once."""

    shut_down = False

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        if self.shut_down:
            subscription = Subscription(self, subscriber, iter(()))
            subscriber.on_subscribe(subscription)
            subscription.started()
            return
        super().subscribe(subscriber)


class ShutDownSubscription(Subscription):
    def cancel(self) -> None:
        super().cancel()
        self.publisher.shut_down = True


class CancelRaises(Subscription):
    """3.15: cancel of a live subscription raises."""

    def cancel(self) -> None:
        if not self.done:
            super().cancel()
            raise RuntimeError("cancelled (and complaining about it)")


class RequestRaisesBeyondRemaining(Subscription):
    """3.16: request validates by raising when asked for more than is left (re-entrant calls, which
    only add demand, escape the check)."""

    def request(self, n: int) -> None:
        remaining = self.publisher.n - self.delivered
        if not self.draining and not self.done and n > remaining:
            raise ValueError(f"only {remaining} elements left, cannot serve request({n})")
        super().request(n)


class Int64Demand(Subscription):
    """3.17: demand kept in a signed 64-bit counter, which wraps negative when it overflows."""

    def add_demand(self, n: int) -> None:
        self.demand = ctypes.c_int64(self.demand + ctypes.c_int64(n).value).value


class RejectsDemandBeyondMax(Subscription):
    """3.17.unbounded (MAY, not offered): a single request above 2**63-1 is refused with on_error."""

    def request(self, n: int) -> None:
        if n > MAX_DEMAND and not self.done:
            return self.terminate(lambda s: s.on_error(OverflowError("demand above 2**63-1")))
        super().request(n)


class PumpSubscription(Subscription):
    def cancel(self) -> None:
        self.done = True  # the defect: it stays registered and keeps its subscriber

    def request(self, n: int) -> None:
        super().request(n)
        self.publisher.pump(self)


class PumpsCancelledSubscribers(Publisher):
    """1.8: a shared pump serves every registered subscription with demand left, and only a
    subscription's own delivery loop looks at its cancelled flag."""

    subscription = PumpSubscription

    def __init__(self, n: int, **options):
        super().__init__(n, **options)
        self.registry: list[PumpSubscription] = []

    def pump(self, requester: PumpSubscription) -> None:
        for other in [s for s in self.registry if s is not requester]:
            while other.demand > 0 and other.lookahead is not _END and other.subscriber is not None:
                other.use_demand()
                other.subscriber.on_next(other.take())


class _Registered(PumpSubscription):
    def __init__(self, publisher, subscriber, source):
        super().__init__(publisher, subscriber, source)
        publisher.registry.append(self)


PumpsCancelledSubscribers.subscription = _Registered


class ExecutorSubscription(Subscription):
    """Delivers on the publisher's executor, one drain task at a time, and none before on_subscribe
    has returned (a drain started by a request made inside on_subscribe would overlap it)."""

    scheduled = False
    subscribed = False
    rejection = None  # a non-positive request, answered by the next task (3.9)

    def request(self, n: int) -> None:
        if self.done:
            return
        if n <= 0:
            self.rejection = n
        else:
            self.add_demand(n)
        self.schedule()

    def schedule(self) -> None:
        with self.lock:
            if self.scheduled or not self.subscribed:
                return
            self.scheduled = True
        self.publisher.options["executor"].submit(self.run)

    def run(self) -> None:
        if self.rejection is not None and not self.done:
            self.reject(self.rejection)
        self.drain()
        with self.lock:
            self.scheduled = False
        if not self.done and (self.rejection is not None or (self.demand > 0 and self.lookahead is not _END)):
            self.schedule()  # demand (or a request(0)) that arrived while this task was finishing

    def halted(self) -> bool:
        # A request(n <= 0) made inside on_next, during this task's drain, stops it: the next task sends on_error,
        # and no element or on_complete may go out first on demand made after it (3.9; found by the fuzzer).
        return self.rejection is not None

    def started(self) -> None:
        self.subscribed = True
        self.schedule()


class UnserializedSubscription(ExecutorSubscription):
    """1.3: each element is handed to the pool as its own task, so on_next calls overlap."""

    def emit(self, item) -> None:
        future = self.publisher.options["executor"].submit(super().emit, item)
        self.pending = getattr(self, "pending", []) + [future]

    def terminate(self, signal) -> None:
        import concurrent.futures

        concurrent.futures.wait(getattr(self, "pending", []))
        super().terminate(signal)


class LazyCompletion(Subscription):
    """Guard (must pass): no look-ahead, so the end is found only when one more is requested."""

    def __init__(self, publisher, subscriber, source):
        super().__init__(publisher, subscriber, source)
        self.source = source
        self.pending_item = self.lookahead
        self.lookahead = None if self.pending_item is not _END else _END

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        try:
            while not self.done and self.demand > 0:
                if self.pending_item is _END:
                    self.terminate(lambda s: s.on_complete())
                    break
                self.use_demand()
                item, self.pending_item = self.pending_item, next(self.source, _END)
                self.emit(item)
        finally:
            self.draining = False

    def started(self) -> None:
        pass


TIMER_PACE_S = 0.005


class TimerSubscription(Subscription):
    """Guard (must pass): slow but correct; each element comes from an asyncio timer 5 ms later."""

    def drain(self) -> None:
        if self.draining or self.done:
            return
        self.draining = True
        self.publisher.options["loop"].call_later(TIMER_PACE_S, self.deliver_one)

    def deliver_one(self) -> None:
        self.draining = False
        if self.done:
            return
        if self.lookahead is _END:
            self.terminate(lambda s: s.on_complete())
        elif self.demand > 0:
            self.use_demand()
            self.emit(self.take())
            self.drain()


class SubscriptionKeepsSubscriber(Subscription):
    """Guard (must pass): after cancel the subscription still points at its subscriber, but nothing
    the publisher holds points at the subscription, so the subscriber can be collected (3.13)."""

    def cancel(self) -> None:
        self.done = True
        self.publisher.live.pop(id(self.subscriber), None)


# --- mutants of the false-verdict classes: what the kit must still catch where it learned to pass


class SwallowsSubscriberError(Subscription):
    """2.13.surfaced (SHOULD): a raising subscriber is cancelled, and its error vanishes without a trace."""

    def emit(self, item) -> None:
        try:
            self.subscriber.on_next(item)
        except Exception:
            self.done = True
            self.subscriber = None


class SignalsOnSubscribeTwice(Publisher):
    """2.12: one subscribe brings two on_subscribe."""

    def accept(self, subscriber) -> Subscription:
        subscriber.on_subscribe(FailedSubscription(self, subscriber, iter(())))
        return super().accept(subscriber)


class IgnoresSecondSubscriber(Publisher):
    """1.9 (with 1.11): a second subscriber while the first is live gets no signal at all."""

    def accept(self, subscriber) -> Subscription:
        live = [s for s in self.live.values() if not s.done]
        if live:
            return live[0]  # neither served nor rejected with on_error
        return super().accept(subscriber)


class ThreadPerRequestLosesDemand(Subscription):
    """3.8 (seen on a thread of its own): each request is served by a new thread, and a request made
    while another thread is still serving is dropped instead of added."""

    def __init__(self, *args):
        super().__init__(*args)
        self.serving = threading.Lock()

    def request(self, n: int) -> None:
        threading.Thread(target=self.serve, args=(n,), daemon=True).start()

    def serve(self, n: int) -> None:
        if not self.serving.acquire(blocking=False):
            return  # the defect: the demand is lost
        try:
            Subscription.request(self, n)
        finally:
            self.serving.release()

    def started(self) -> None:
        threading.Thread(target=self.serve_start, daemon=True).start()

    def serve_start(self) -> None:
        with self.serving:
            self.drain()


class ThreadPerRequestPublisher(Publisher):
    def accept(self, subscriber) -> Subscription:
        subscription = self.subscription(self, subscriber, self.source())
        with subscription.serving:  # signals stay serial: on_subscribe before any delivery
            subscriber.on_subscribe(subscription)
        subscription.started()
        return subscription


class AsyncioPublisher(Publisher):
    """Idiomatic asyncio (guard): subscribe and request run on the kit's running loop and schedule with
    call_soon, as asyncio code does."""

    def accept(self, subscriber) -> Subscription:
        subscription = self.subscription(self, subscriber, self.source())
        loop = asyncio.get_running_loop()
        loop.call_soon(subscriber.on_subscribe, subscription)
        loop.call_soon(subscription.started)
        return subscription


class AsyncioSubscription(Subscription):
    def request(self, n: int) -> None:
        asyncio.get_running_loop().call_soon(Subscription.request, self, n)


class AsyncioExcessOnNext(AsyncioSubscription, ExcessOnNext):
    """1.1 in an idiomatic asyncio publisher: one element more than requested."""


class EmptyCompletesOnEveryRequest(Publisher):
    """1.7: an empty-stream publisher that signals on_complete again for every request it gets."""

    def accept(self, subscriber) -> Subscription:
        subscription = FailedSubscription(self, subscriber, iter(()))
        subscription.request = lambda n: subscriber.on_complete()  # the defect
        subscriber.on_subscribe(subscription)
        subscriber.on_complete()
        return subscription

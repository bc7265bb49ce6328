"""Mutants of the reference SPI draft publisher, one per checked item, each with the verdicts the
spi-draft profile must reach on it (Case: exactly these fails and warns)."""

from __future__ import annotations

import time
import weakref

from rstck import InProcessTarget
from rstck.reference.spi_draft import (DraftProcessor, DraftPublisher, DraftSubscriber, DraftSubscription,
                                       IllegalStateError)

from ..zoo.publisher_mutants import ZOO_RESPONSIVENESS_BOUND_S, Case


def draft_target(name: str, publisher: type[DraftPublisher] = DraftPublisher, *, executor: bool = False) -> InProcessTarget:
    """A target of `publisher` (a DraftPublisher subclass); `executor`: the publisher gets the kit's
    instrumented executor to deliver on."""
    def create(n: int) -> DraftPublisher:
        made = publisher(range(n))
        made.executor = target.executor if executor else None
        return made

    def create_failed() -> DraftPublisher:
        return publisher((), error=RuntimeError(f"{name} fails on purpose"))

    target = InProcessTarget(create_publisher=create, create_failed_publisher=create_failed, name=name,
                             responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)
    return target


def case(name: str, publisher: type[DraftPublisher], *, executor: bool = False, **verdicts: frozenset[str]) -> Case:
    return Case(name, lambda: draft_target(name, publisher, executor=executor), **verdicts)


# -- Publisher::subscribe ------------------------------------------------------------------------

class AnnouncesWhenCompleted(DraftPublisher):
    """Completed, it still calls onSubscribe before onComplete."""

    def subscribe(self, subscriber):
        if self._completed:
            subscriber.on_subscribe(DraftSubscription(self, subscriber))
        super().subscribe(subscriber)


class SilentWhenCompleted(DraftPublisher):
    """Completed, it ignores a new subscriber."""

    def subscribe(self, subscriber):
        if not self._completed:
            super().subscribe(subscriber)


class AnnouncesWhenFailed(DraftPublisher):
    """Failed, it calls onSubscribe before onError."""

    def subscribe(self, subscriber):
        if self._error is not None:
            subscriber.on_subscribe(DraftSubscription(self, subscriber))
        super().subscribe(subscriber)


class SilentOnceFailed(DraftPublisher):
    """Failed, it tells only its first subscriber."""

    told = False

    def subscribe(self, subscriber):
        if self._error is None or not self.told:
            self.told = self._error is not None
            super().subscribe(subscriber)


class NeverAnnounces(DraftPublisher):
    """Live, it keeps a new subscriber without calling onSubscribe."""

    def subscribe(self, subscriber):
        if self._error is not None or self._completed:
            super().subscribe(subscriber)


class IgnoresSecondSubscribe(DraftPublisher):
    """Rejects a subscriber already active by ignoring it, not with onError."""

    def subscribe(self, subscriber):
        if id(subscriber) not in self._active:
            super().subscribe(subscriber)


class AcceptsSecondSubscribe(DraftPublisher):
    """Gives a subscriber already active a second subscription."""

    def subscribe(self, subscriber):
        self._active.pop(id(subscriber), None)
        super().subscribe(subscriber)


# -- Subscription::requestMore ----------------------------------------------------------------------

class OffByOneSubscription(DraftSubscription):
    def request_more(self, n):
        super().request_more(n - 1 if isinstance(n, int) and 1 < n < 2**62 else n)


class RegistersOneLess(DraftPublisher):
    """requestMore(n) registers n - 1 elements when n > 1."""

    subscription = OffByOneSubscription


class CappingSubscription(DraftSubscription):
    def request_more(self, n):
        super().request_more(min(n, 2**63 - 1 - self._demand) if isinstance(n, int) and n > 0 else n)


class CapsDemand(DraftPublisher):
    """Caps the total demand at 2^63-1 instead of signalling onError (the final spec's 3.17.unbounded)."""

    subscription = CappingSubscription


class SignallingSubscription(DraftSubscription):
    def request_more(self, n):
        if isinstance(n, int) and n <= 0:
            self._end("on_error", ValueError(f"non-positive request {n}"))  # as the final spec's 3.9 asks
            return
        super().request_more(n)


class SignalsNonPositive(DraftPublisher):
    """Answers requestMore(n <= 0) with onError instead of raising."""

    subscription = SignallingSubscription


class ThreadedSubscription(DraftSubscription):
    def _drain(self):
        self._publisher.executor.submit(super()._drain)


class DeliversOnThreads(DraftPublisher):
    """Delivers on an executor, never inside requestMore."""

    subscription = ThreadedSubscription


class LateEndingSubscription(DraftSubscription):
    def _end(self, kind, *args):
        if kind == "on_complete" and self._publisher.executor is not None:
            self._publisher.executor.submit(lambda: DraftSubscription._end(self, kind, *args))
            return
        super()._end(kind, *args)


class CompletesOnAThread(DraftPublisher):
    """Delivers elements inside requestMore, but onComplete on an executor."""

    subscription = LateEndingSubscription


# -- Subscription::cancel --------------------------------------------------------------------------------

class BroadcastingSubscription(DraftSubscription):
    def cancel(self):
        self._publisher.held.append(self._subscriber)  # kept, and told of the end of the stream
        super().cancel()

    def _end(self, kind, *args):
        super()._end(kind, *args)
        if kind == "on_complete":
            for subscriber in self._publisher.held:
                subscriber.on_complete()


class TellsCancelledOfTheEnd(DraftPublisher):
    """Keeps cancelled subscribers and tells them when another completes."""

    subscription = BroadcastingSubscription

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.held = []


class RememberingSubscription(DraftSubscription):
    def cancel(self):
        self._publisher.history.append(self._subscriber)
        super().cancel()


class RemembersCancelled(DraftPublisher):
    """Keeps every cancelled subscriber in a history list (never calls them)."""

    subscription = RememberingSubscription

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.history = []


class LazilyForgettingSubscription(DraftSubscription):
    def cancel(self):
        with self._lock:
            if self.cancelled:
                raise IllegalStateError("cancel on a cancelled subscription")
            self.cancelled = True
            self._subscriber = None
        # forgets the subscriber only on a later subscribe of another one: a resubscribe overtakes the cancel
        self._publisher.stale.append(self)


class ForgetsCancelledLate(DraftPublisher):
    """Removes a cancelled subscriber from its active ones only when another subscriber arrives."""

    subscription = LazilyForgettingSubscription

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stale = []

    def subscribe(self, subscriber):
        if id(subscriber) not in self._active:
            while self.stale:
                self._forget(self.stale.pop())
        super().subscribe(subscriber)


# -- A Publisher -----------------------------------------------------------------------------------------

class OneTooManySubscription(DraftSubscription):
    def request_more(self, n):
        first = not getattr(self, "asked", False)
        self.asked = True
        super().request_more(n + 1 if first and isinstance(n, int) and 0 < n < 2**62 else n)


class DeliversOneTooMany(DraftPublisher):
    """Delivers one element more than the first requestMore asked for."""

    subscription = OneTooManySubscription


class _EndsFirst:
    """Stands between the publisher and a subscriber: onComplete comes before the final element."""

    def __init__(self, subscriber, last):
        self.subscriber, self.last, self.ended = subscriber, last, False

    def on_subscribe(self, subscription):
        self.subscriber.on_subscribe(subscription)

    def on_next(self, element):
        if element == self.last and not self.ended:
            self.ended = True
            self.subscriber.on_complete()
        self.subscriber.on_next(element)

    def on_error(self, error):
        self.subscriber.on_error(error)

    def on_complete(self):
        if not self.ended:
            self.subscriber.on_complete()


class CompletesBeforeTheLastElement(DraftPublisher):
    """Calls onComplete before delivering the final element."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fronts = weakref.WeakValueDictionary()  # held by the subscription alone: dropped with it

    def subscribe(self, subscriber):
        last = self._elements[-1] if self._elements else None
        super().subscribe(self.fronts.setdefault(id(subscriber), _EndsFirst(subscriber, last)))


class Reversed(DraftPublisher):
    """Its second subscriber gets the elements in reverse order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.count = 0

    def subscribe(self, subscriber):
        self.count += 1
        super().subscribe(subscriber)
        subscription = self._active.get(id(subscriber))
        if self.count == 2 and subscription is not None:
            subscription.reversed = True


class ReversingSubscription(DraftSubscription):
    reversed = False

    def _drain(self):
        if not self.reversed:
            return super()._drain()
        forward = self._publisher._elements
        self._publisher._elements = forward[::-1]
        try:
            super()._drain()
        finally:
            self._publisher._elements = forward


Reversed.subscription = ReversingSubscription


class NeverCompletesSubscription(DraftSubscription):
    def _end(self, kind, *args):
        if kind != "on_complete":
            super()._end(kind, *args)


class NeverCompletes(DraftPublisher):
    """Delivers every element, never onComplete."""

    subscription = NeverCompletesSubscription


class LazyEndSubscription(DraftSubscription):
    asked_after_end = False

    def request_more(self, n):
        self.asked_after_end = self._position >= len(self._publisher._elements)
        super().request_more(n)

    def _end(self, kind, *args):
        if kind == "on_complete" and not (self.asked_after_end or self._demand):
            return  # finds the end only when asked for more than there was
        super()._end(kind, *args)


class FindsTheEndLate(DraftPublisher):
    """Calls onComplete only on a requestMore after the final element."""

    subscription = LazyEndSubscription


class LiveStartSubscription(DraftSubscription):
    def __init__(self, publisher, subscriber):
        super().__init__(publisher, subscriber)
        self._position = max((s._position for s in publisher._active.values()), default=0)


class StartsNewSubscribersLive(DraftPublisher):
    """Starts a new subscriber where its most advanced subscriber is, not with the oldest element."""

    subscription = LiveStartSubscription


class TwiceEndingSubscription(DraftSubscription):
    def _end(self, kind, *args):
        subscriber = self._subscriber
        super()._end(kind, *args)
        if kind == "on_complete" and subscriber is not None:
            subscriber.on_complete()


class CompletesTwice(DraftPublisher):
    """Calls onComplete twice."""

    subscription = TwiceEndingSubscription


# -- Generally ---------------------------------------------------------------------------------------------

class SlowSubscription(DraftSubscription):
    def request_more(self, n):
        time.sleep(ZOO_RESPONSIVENESS_BOUND_S * 2)  # the mutant's own slowness, not a check's wait
        super().request_more(n)


class SlowToRequest(DraftPublisher):
    """Takes twice the responsiveness bound in every requestMore."""

    subscription = SlowSubscription


# -- A Processor -------------------------------------------------------------------------------------------

class KeepsUpstreamOpen(DraftProcessor):
    """Leaves its upstream subscription open when its last downstream cancels."""

    def _cancel_upstream(self):
        pass


class QueuesTheError(DraftProcessor):
    """Passes an upstream onError on only behind the elements it holds, as one more in-stream event."""

    def _on_end(self, ended):
        self._ended = ended
        self._deliver()


class RaisesWhenUnsubscribed(DraftProcessor):
    """Raises from onNext once its downstream has cancelled."""

    def on_next(self, element):
        if self._subscription is None or self._subscription.cancelled:
            raise IllegalStateError("no downstream subscriber")
        super().on_next(element)


class RaisesBeforeDemand(DraftProcessor):
    """Prefetches, then raises from onNext while downstream has not requested anything yet."""

    def on_next(self, element):
        if not self.asked_downstream:
            raise IllegalStateError("nothing requested downstream yet")
        super().on_next(element)

    asked_downstream = False

    def _schedule(self, kind, value):
        self.asked_downstream = self.asked_downstream or kind == "demand"
        super()._schedule(kind, value)


def processor_case(name: str, processor: type[DraftProcessor], **verdicts: frozenset[str]) -> Case:
    def make() -> InProcessTarget:
        target = InProcessTarget(create_processor=lambda: processor(target.executor), name=name,
                                 responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)
        return target

    return Case(name, make, **verdicts)


# -- Subscribers --------------------------------------------------------------------------------------------

class ReportsNextInline(DraftSubscriber):
    """Processes onSubscribe and onNext inside the call (tells the observer before returning)."""

    def __init__(self, executor, *, observer=None, **options):
        super().__init__(executor, **options)
        self.inline = observer

    def on_subscribe(self, subscription):
        super().on_subscribe(subscription)
        self.inline.on_subscribe_processed()

    def on_next(self, element):
        self.inline.on_next_processed(element)
        super().on_next(element)


class ReportsEndInline(DraftSubscriber):
    """Processes onComplete and onError inside the call."""

    def __init__(self, executor, *, observer=None, **options):
        super().__init__(executor, **options)
        self.inline = observer

    def on_complete(self):
        self.inline.on_complete_processed()
        super().on_complete()

    def on_error(self, error):
        self.inline.on_error_processed(error)
        super().on_error(error)


class RequestsInOnSubscribe(DraftSubscriber):
    """Asks for one element from inside onSubscribe, as a final-spec subscriber may (3.2)."""

    def on_subscribe(self, subscription):
        super().on_subscribe(subscription)
        self._outstanding += 1
        subscription.request_more(1)


class CancelsInOnComplete(DraftSubscriber):
    """Cancels from inside onComplete."""

    def on_complete(self):
        try:
            self._subscription.cancel()
        except IllegalStateError:
            pass
        super().on_complete()


class RequestsAfterTheEnd(DraftSubscriber):
    """Asks for more once it has processed onComplete or onError."""

    def _on_end(self, ended):
        super()._on_end(ended)
        try:
            self._subscription.request_more(1)
        except IllegalStateError:
            pass


class AcceptsASecondSubscription(DraftSubscriber):
    """Takes an onSubscribe while its subscription is active without an error."""

    def on_subscribe(self, subscription):
        if self._subscription is not None and not self._done:
            return
        super().on_subscribe(subscription)


class RequestsAfterItsCancel(DraftSubscriber):
    """Asks for more once it has cancelled."""

    def _on_element(self, element):
        was_done = self._done
        super()._on_element(element)
        if self._done and not was_done:
            try:
                self._subscription.request_more(1)
            except IllegalStateError:
                pass


class CancelsTwice(DraftSubscriber):
    """Cancels again once it has cancelled."""

    def _on_element(self, element):
        was_done = self._done
        super()._on_element(element)
        if self._done and not was_done:
            try:
                self._subscription.cancel()
            except IllegalStateError:
                pass


class ExpectsElementsFirst(DraftSubscriber):
    """Raises from onComplete and onError when no element has come before them (as when nothing was requested)."""

    def on_complete(self):
        if not self.received and not self._events:
            raise IllegalStateError("onComplete before any element")
        super().on_complete()

    def on_error(self, error):
        if not self.received and not self._events:
            raise IllegalStateError("onError before any element")
        super().on_error(error)


def subscriber_case(name: str, subscriber: type[DraftSubscriber], **verdicts: frozenset[str]) -> Case:
    def make() -> InProcessTarget:
        target = InProcessTarget(
            create_whitebox_subscriber=lambda observer: subscriber(target.executor, max_items=5, observer=observer),
            name=name, responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)
        return target

    return Case(name, make, **verdicts)


M = frozenset
CASES = [
    case("announces-when-completed", AnnouncesWhenCompleted, fails=M({"spi.subscribe.1"})),
    case("silent-when-completed", SilentWhenCompleted, fails=M({"spi.subscribe.2"})),
    case("announces-when-failed", AnnouncesWhenFailed, fails=M({"spi.subscribe.3"})),
    case("silent-once-failed", SilentOnceFailed, fails=M({"spi.subscribe.4"})),
    case("never-announces", NeverAnnounces, fails=M({"spi.subscribe.5"})),
    case("ignores-second-subscribe", IgnoresSecondSubscribe, fails=M({"spi.subscribe.6"})),
    case("accepts-second-subscribe", AcceptsSecondSubscribe, fails=M({"spi.subscribe.7"})),
    case("registers-one-less", RegistersOneLess, fails=M({"spi.request-more.2"})),
    case("caps-demand", CapsDemand, fails=M({"spi.request-more.3"})),
    case("signals-non-positive", SignalsNonPositive, fails=M({"spi.request-more.4"})),
    case("delivers-on-threads", DeliversOnThreads, executor=True,
         unsupported=M({"spi.request-more.5", "spi.request-more.6"})),
    case("completes-on-a-thread", CompletesOnAThread, executor=True, unsupported=M({"spi.request-more.6"}),
         passes=M({"spi.request-more.5"})),
    case("tells-cancelled-of-the-end", TellsCancelledOfTheEnd, fails=M({"spi.cancel.2", "spi.cancel.3"})),
    case("remembers-cancelled", RemembersCancelled, fails=M({"spi.cancel.3"})),
    case("forgets-cancelled-late", ForgetsCancelledLate, fails=M({"spi.cancel.4"})),
    case("delivers-one-too-many", DeliversOneTooMany, fails=M({"spi.publisher.1"})),
    case("completes-before-the-last-element", CompletesBeforeTheLastElement, fails=M({"spi.publisher.2"})),
    case("reversed-for-the-second", Reversed, fails=M({"spi.publisher.3"})),
    case("never-completes", NeverCompletes, fails=M({"spi.publisher.4"}), warns=M({"spi.publisher.5.no-wait"})),
    case("finds-the-end-late", FindsTheEndLate, warns=M({"spi.publisher.5.no-wait"})),
    case("starts-new-subscribers-live", StartsNewSubscribersLive, fails=M({"spi.publisher.6"})),
    case("completes-twice", CompletesTwice, fails=M({"spi.publisher.7"})),
    case("slow-to-request", SlowToRequest, warns=M({"spi.generally.1"})),
    processor_case("keeps-upstream-open", KeepsUpstreamOpen, fails=M({"spi.processor.3"})),
    processor_case("queues-the-error", QueuesTheError, fails=M({"spi.processor.4"})),
    processor_case("raises-when-unsubscribed", RaisesWhenUnsubscribed, fails=M({"spi.processor.5"})),
    processor_case("raises-before-demand", RaisesBeforeDemand, fails=M({"spi.processor.6"})),
    subscriber_case("reports-next-inline", ReportsNextInline, fails=M({"spi.on-next.1"})),
    subscriber_case("reports-end-inline", ReportsEndInline, fails=M({"spi.on-terminal.1"})),
    subscriber_case("requests-in-on-subscribe", RequestsInOnSubscribe, fails=M({"spi.on-next.2"})),
    subscriber_case("cancels-in-on-complete", CancelsInOnComplete, fails=M({"spi.on-terminal.2"})),
    subscriber_case("requests-after-the-end", RequestsAfterTheEnd, fails=M({"spi.on-terminal.3"})),
    subscriber_case("accepts-a-second-subscription", AcceptsASecondSubscription, fails=M({"spi.subscriber.1"})),
    subscriber_case("requests-after-its-cancel", RequestsAfterItsCancel, fails=M({"spi.subscriber.3"})),
    subscriber_case("cancels-twice", CancelsTwice, fails=M({"spi.subscriber.4"})),
    subscriber_case("expects-elements-first", ExpectsElementsFirst, fails=M({"spi.subscriber.6", "spi.subscriber.7"})),
]

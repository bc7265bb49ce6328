"""Mutants the rule checks once missed, each broken in one way that only a call the checks did not make
shows: a request after the end, a request after the subscriber raised, a request(0) once the stream has
settled at its end, subscribe(None) on a failed publisher, subscriber ids reused by CPython, a processor
that keeps an upstream nobody can use any more, and so on. Each comes with the items it must be caught on;
the correct implementations next to them must pass everything."""

from __future__ import annotations

import logging

from rstck.reference.processors import MapProcessor

from ..conformant.processors import (AsyncioIdentity, PrefetchingIdentity, UnicastIdentity, _non_positive_request,
                                     _require, _SerialQueue)
from . import publishers as p
from .publisher_mutants import case
from .subscriber_mutants import processor_case

_log = logging.getLogger(__name__)


# --- publishers -----------------------------------------------------------------------------------------


class ResignalsTerminalOnRequest(p.Subscription):
    """1.6: after its terminal signal, a request draws that signal again."""

    ended = None

    def terminate(self, signal) -> None:
        self.ended = (self.subscriber, signal)
        super().terminate(signal)

    def request(self, n: int) -> None:
        if self.ended is not None:
            subscriber, signal = self.ended
            return signal(subscriber)  # the defect: the end is answered, not ignored
        super().request(n)


class ResignalsFailureOnRequest(ResignalsTerminalOnRequest, p.FailedSubscription):
    pass


class FailsAgainOnRequest(p.FailedPublisher):
    """1.6: a failed publisher whose subscription signals on_error again for every later request."""

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = ResignalsFailureOnRequest(p.Publisher(0), subscriber, iter(()))
        subscriber.on_subscribe(subscription)
        if not subscription.done:
            subscription.terminate(lambda s: s.on_error(RuntimeError("failed on purpose")))


class RevivedByRequestAfterRaise(p.Subscription):
    """2.13: a subscriber whose on_next raised loses its demand but not its subscription: its next request
    is served."""

    def emit(self, item) -> None:
        try:
            self.subscriber.on_next(item)
        except Exception:
            with self.lock:
                self.demand = 0  # the defect: the delivery stops, the subscription stays live
            _log.warning("on_next raised; delivery stops", exc_info=True)


class LazyExecutorSubscription(p.ExecutorSubscription):
    """Correct: delivers on the publisher's executor, and finds the end of the stream only when asked for
    one more element (so an empty stream stays live until the first request)."""

    def __init__(self, publisher, subscriber, source):
        super().__init__(publisher, subscriber, source)
        self.pending_item, self.lookahead = self.lookahead, None

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        try:
            while not self.done and self.demand > 0:
                if self.pending_item is p._END:
                    self.terminate(lambda s: s.on_complete())
                    break
                self.use_demand()
                item, self.pending_item = self.pending_item, next(self.source, p._END)
                self.emit(item)
        finally:
            self.draining = False


class LazyExecutorEndsOnAnyRequest(LazyExecutorSubscription):
    """3.9: at the end of the stream, any request looks for the end: request(0) is answered by on_complete
    (on the executor's thread) instead of on_error."""

    def request(self, n: int) -> None:
        if not self.done and self.pending_item is p._END and n <= 0:
            n = 1  # the defect
        super().request(n)


class FailedAcceptsNone(p.FailedPublisher):
    """1.9: the failed publisher lets subscribe(None) return normally."""

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            return  # the defect
        super().subscribe(subscriber)


class RemembersSubscriberIds(p.Publisher):
    """1.9: it takes a subscriber whose id() it has seen for one already subscribed (2.12) and ignores it; once
    an earlier subscriber is gone, CPython gives a new one the same address, and it never hears on_subscribe."""

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        seen = self.__dict__.setdefault("seen", set())
        if id(subscriber) in seen:
            return  # the defect: an id outlives its object
        seen.add(id(subscriber))
        self.accept(subscriber)


class IgnoresRequestZeroWhenUnbounded(p.Subscription):
    """3.9: a fast path for unbounded demand stops looking at requests, request(0) included."""

    def request(self, n: int) -> None:
        if self.demand == p.MAX_DEMAND:
            return  # the defect
        super().request(n)

    def use_demand(self) -> None:
        if self.demand != p.MAX_DEMAND:
            super().use_demand()


class FastPathIgnoresCancel(p.Subscription):
    """3.12: unbounded demand takes a fast path that runs to the end without looking at cancel."""

    def drain(self) -> None:
        if self.demand != p.MAX_DEMAND or self.draining:
            return super().drain()
        self.draining = True
        subscriber = self.subscriber
        try:
            while self.lookahead is not p._END:
                subscriber.on_next(self.take())  # the defect: a cancel made in here is never seen
            self.done, self.subscriber = True, None
            subscriber.on_complete()
        finally:
            self.draining = False


class CountsByIdentity(p.Subscription):
    """1.5: the end is recognised by comparing counts with `is`, which holds only while both are small ints
    CPython shares (up to 256): a longer stream never completes."""

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        try:
            while not self.done and self.demand > 0 and self.delivered != self.publisher.n:
                self.use_demand()
                self.emit(self.take())
            if not self.done and self.delivered is self.publisher.n:  # the defect: `is` for `==`
                self.terminate(lambda s: s.on_complete())
        finally:
            self.draining = False


PUBLISHER_MUTANTS = [
    case("resignals_complete_on_request", subscription=ResignalsTerminalOnRequest, fails={"1.6"}),
    case("fails_again_on_request", failed=FailsAgainOnRequest, fails={"1.6"}),
    case("revived_by_request_after_raise", subscription=RevivedByRequestAfterRaise, fails={"2.13"}),
    case("lazy_executor_ends_on_any_request", subscription=LazyExecutorEndsOnAnyRequest, uses=("executor",),
         fails={"3.9"}, unsupported={"3.10", "3.11"}),
    case("failed_accepts_none", failed=FailedAcceptsNone, fails={"1.9"}),
    case("remembers_subscriber_ids", publisher=RemembersSubscriberIds, fails={"1.9"}),
    case("ignores_request_zero_when_unbounded", subscription=IgnoresRequestZeroWhenUnbounded, fails={"3.9"}),
    # the same fast path runs on past the on_error of a request(0) made inside it (1.7)
    case("fast_path_ignores_cancel", subscription=FastPathIgnoresCancel, fails={"3.12", "1.7"}),
    case("counts_by_identity", subscription=CountsByIdentity, fails={"1.5"}),
]

PUBLISHER_GUARDS = [
    case("lazy_executor_delivery", subscription=LazyExecutorSubscription, uses=("executor",),
         unsupported={"3.10", "3.11"}),
]


# --- processors ---------------------------------------------------------------------------------------


class KeepsUpstreamAfterFailingDownstream(MapProcessor):
    """2.6: a request(0) from its only subscriber ends that subscriber with on_error (3.9), and the upstream
    subscription, of no use to anyone now, is kept open."""

    def _fail_locked(self, error: BaseException) -> None:
        self._finish_downstream_locked("on_error", error)  # the defect: no cancel upstream


class NeverCancelsUpstream(KeepsUpstreamAfterFailingDownstream):
    """2.6 (and the RECOMMENDED of 4.2): neither its subscriber's cancel nor its end cancels the upstream."""

    def _cancel_upstream_locked(self) -> None:
        self._upstream_state, self._upstream = "done", None  # forgets the upstream without cancelling it


class ForwardsNoneBeforeRaising(MapProcessor):
    """2.13: on_next(None) raises TypeError, but only after passing the None on downstream."""

    def on_next(self, item) -> None:
        if item is None:
            downstream = self._downstream
            if downstream is not None:
                try:
                    downstream.on_next(item)  # the defect
                except Exception:
                    pass
            raise TypeError("on_next(None) (rule 2.13)")
        super().on_next(item)


class CompletesBeforeDraining(PrefetchingIdentity):
    """4.1: it prefetches once downstream first asks, and an upstream on_complete arriving while downstream
    has no demand pending drops what it prefetched and ends downstream at once."""

    def __init__(self):
        super().__init__()
        self._prefetched = True  # not yet: the first downstream request starts it
        self._asked = False

    def _downstream_request(self, n) -> None:
        with self._lock:
            if not self._asked:
                self._asked, self._prefetched = True, False
        super()._downstream_request(n)

    def _upstream_ended(self, end: tuple) -> None:
        if end[0] == "on_complete":
            with self._lock:
                if not self._demand:
                    self._buffer.clear()  # the defect
        super()._upstream_ended(end)


class CapsDemandMadeBeforeItsUpstream(UnicastIdentity):
    """3.17: demand its subscriber makes before the upstream arrives is kept up to a cap of 62 (`2|63 - 1` where
    `2**63 - 1` was meant): under request(2**63-1) a longer stream stalls after 62 elements."""

    CAP = 2 | 63 - 1  # the defect

    def _downstream_request(self, n) -> None:
        with self._lock:
            early = isinstance(n, int) and n > 0 and not self._upstream_seen and not self._downstream_done
            if early:
                self._pending_demand = min(self._pending_demand + n, self.CAP)
        if not early:
            super()._downstream_request(n)


class PrefetchingCapsDemand(PrefetchingIdentity):
    """3.17: its subscriber's demand is capped at 60 (`2^63 - 1`): under request(2**63-1) a longer stream stalls."""

    CAP = 2 ^ 63 - 1  # the defect

    def _downstream_request(self, n) -> None:
        with self._lock:
            if self._downstream_gone:
                return
            if isinstance(n, int) and n > 0:
                self._demand = min(self._demand + n, self.CAP)
            elif self._rejection is None:
                self._rejection = _non_positive_request(n)
        self._drain()


class AsyncioCapsDemand(AsyncioIdentity):
    """3.17: asks upstream for at most 125 in all (`2*63 - 1`): under request(2**63-1) a longer stream stalls."""

    CAP = 2 * 63 - 1  # the defect

    def _downstream_request(self, n) -> None:
        if isinstance(n, int) and n > 0:
            n = min(n, self.CAP - self._unasked - self._outstanding)
            if n <= 0:
                return
        super()._downstream_request(n)


class AsyncioShiftsItsCap(AsyncioIdentity):
    """3.8: its cap on what it asks upstream for is computed with a shift where a subtraction was meant, so once 63
    or more elements are outstanding upstream, a further downstream request is dropped."""

    def _downstream_request(self, n) -> None:
        if isinstance(n, int) and n > 0 and not self._ended:
            n = min(n, (p.MAX_DEMAND - self._unasked) >> self._outstanding)  # the defect: `>>` for `-`
            if n <= 0:
                return
        super()._downstream_request(n)


class RaisesFromItsOwnErrorHandler(PrefetchingIdentity):
    """2.13 and 2.6: when its subscriber's on_next raises, the handler compares the subscriber with `<=` (where
    `is` was meant) and raises TypeError: out of its own on_next into its upstream, leaving its drain loop
    stuck, and the upstream, of no use to anyone now, never cancelled."""

    def _perform(self, callee, method: str, args: tuple) -> None:
        try:
            getattr(callee, method)(*args)
        except Exception:
            if callee <= self._downstream:  # the defect
                with self._lock:
                    self._downstream, self._downstream_gone = None, True
                    self._buffer.clear()


class PassesItsSubscribersRaiseUp(UnicastIdentity):
    """2.13: when its subscriber raises from an on_next, it counts that subscription as cancelled, cancels its
    upstream, and then lets the error go on out of its own on_next, into the upstream that called it."""

    def on_next(self, item) -> None:
        _require(item, "item")
        raised: list[BaseException] = []
        self._to_downstream.run(self._pass_on, item, raised)
        if raised:
            raise raised[0]  # the defect

    def _pass_on(self, item, raised: list) -> None:
        downstream = self._downstream
        if downstream is None:
            return
        try:
            downstream.on_next(item)
        except Exception as error:
            raised.append(error)
            self._downstream_cancel()


class _QueueThatLetsTwoDrain(_SerialQueue):
    """A serial queue that never marks itself as draining: a second thread runs calls alongside the first."""

    def drain(self) -> None:
        while True:
            with self._lock:
                if not self._calls:
                    return
                call, args = self._calls.popleft()
            call(*args)


class SignalsFromTwoThreadsAtOnce(UnicastIdentity):
    """1.3: its queue of downstream signals lets a second thread drain while the first is inside a signal, so the
    on_error for a request(0) made on another thread (3.9) overlaps an on_next still running."""

    def __init__(self):
        super().__init__()
        self._to_upstream, self._to_downstream = _QueueThatLetsTwoDrain(), _QueueThatLetsTwoDrain()


class DrainGuardStartsBelowZero(PrefetchingIdentity):
    """1.3: its work-in-progress counter starts at -1, so during its very first drain (signalling on_subscribe
    downstream) another thread's call finds the loop free and runs a second one alongside: an on_next
    downstream while on_subscribe is still running."""

    def __init__(self):
        super().__init__()
        self._wip = -1  # the defect


PROCESSOR_MUTANTS = [
    processor_case("keeps_upstream_after_failing_downstream", KeepsUpstreamAfterFailingDownstream, fails={"2.6"}),
    processor_case("never_cancels_upstream", NeverCancelsUpstream, fails={"2.6"}, warns={"4.2.cancel-upstream"}),
    processor_case("forwards_none_before_raising", ForwardsNoneBeforeRaising, fails={"2.13"}),
    # seen as a publisher (4.1's view), the elements it drops also fall short of 3.17's whole stream
    processor_case("completes_before_draining", CompletesBeforeDraining, fails={"4.1", "3.17"}),
    processor_case("caps_demand_made_before_its_upstream", CapsDemandMadeBeforeItsUpstream, fails={"3.17"}),
    # seen as a publisher (4.1's view), its stream of 300 asked for in one request also stalls short of on_complete;
    # and 100 then 50 asked for before the upstream sent anything lose what passes the cap (3.8)
    processor_case("prefetching_caps_demand", PrefetchingCapsDemand, fails={"3.17", "1.5", "3.8"}),
    processor_case("asyncio_caps_demand", AsyncioCapsDemand, fails={"3.17", "1.5", "3.8"}),
    processor_case("asyncio_shifts_its_cap", AsyncioShiftsItsCap, fails={"3.8"}),
    processor_case("raises_from_its_own_error_handler", RaisesFromItsOwnErrorHandler, fails={"2.13", "2.6"}),
    processor_case("passes_its_subscribers_raise_up", PassesItsSubscribersRaiseUp, fails={"2.13"}),
    processor_case("signals_from_two_threads_at_once", SignalsFromTwoThreadsAtOnce, fails={"1.3"}),
    processor_case("drain_guard_starts_below_zero", DrainGuardStartsBelowZero, fails={"1.3"}),
]

class HandsUpstreamToTheNextSubscriber(MapProcessor):
    """Correct, if unusual: when its subscriber cancels it keeps the upstream for the next one, which it then
    serves. The upstream is still of use, so 2.6 does not apply; only 4.2's RECOMMENDED does (a warn)."""

    def _cancel(self) -> None:
        with self._lock:
            if self._downstream_state != "active":
                return  # 3.7
            self._downstream_state, self._downstream, self._demand = "new", None, 0  # 3.13; open to the next
        self._drain()


PROCESSOR_GUARDS = [
    processor_case("prefetching_identity", PrefetchingIdentity),
    processor_case("hands_upstream_to_the_next_subscriber", HandsUpstreamToTheNextSubscriber,
                   warns={"4.2.cancel-upstream"}),
]

MUTANTS = PUBLISHER_MUTANTS + PROCESSOR_MUTANTS
GUARDS = PUBLISHER_GUARDS + PROCESSOR_GUARDS

"""Publishers that break 1.3 only in a race, and their fixed versions.

Each delivers on threads of its own and keeps its deliveries serial among themselves (a
work-in-progress count admits one drainer at a time). The defect they share: `subscribe`
calls `on_subscribe` on the caller's thread with nothing held, so a `request` made from inside
`on_subscribe` starts a delivery on another thread while `on_subscribe` is still running. How
soon that delivery begins differs: (A) a new thread per request, at once; (B) a timer that
drains the demand 2 ms later; (C) a private thread pool. Whether the overlap shows depends on
the schedule, which is what the kit's lingering probe decides instead of the machine's load.

The fixed versions signal `on_subscribe` under the lock every delivery holds (A, B), or on their
own worker, from the serial drain itself (C).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading

MAX_DEMAND = 2**63 - 1
# How long the timer publisher waits before it drains the demand.
TIMER_DELAY_S = 0.002


class RaceSubscription:
    """Serves demand on the publisher's own threads, one drain at a time."""

    def __init__(self, publisher: "RacePublisher", subscriber, n: int):
        self.publisher = publisher
        self.subscriber = subscriber
        self.n = n
        self.sent = 0
        self.demand = 0
        self.rejected: int | None = None  # a non-positive request, answered with on_error by the next drain (3.9)
        self.done = False
        self.lock = threading.Lock()  # demand and the work count, touched by requesting and delivering threads
        self.work = 0

    def request(self, n: int) -> None:
        if self.done:
            return
        with self.lock:
            if n <= 0:
                self.rejected = n
            else:
                self.demand = min(self.demand + n, MAX_DEMAND)
        self.schedule_drain()

    def cancel(self) -> None:
        self.done = True
        self.subscriber = None  # 3.13
        self.publisher.forget(self)

    def schedule_drain(self) -> None:
        with self.lock:
            self.work += 1
            first = self.work == 1
        if first:
            self.publisher.run_elsewhere(self.drain)

    def drain(self) -> None:
        missed = 1
        while True:
            with self.publisher.signal_lock:
                self.deliver_what_is_due()
            with self.lock:
                self.work -= missed
                missed = self.work
                if missed == 0:
                    return

    def deliver_what_is_due(self) -> None:
        while not self.done:
            if self.rejected is not None:
                return self.end(self.rejection)
            if self.sent == self.n:
                return self.end(lambda s: s.on_complete())
            with self.lock:
                if self.demand == 0:
                    return
                self.demand -= 1
            self.sent += 1
            self.emit(self.sent - 1)

    def rejection(self, subscriber) -> None:
        subscriber.on_error(ValueError(f"rule 3.9: request({self.rejected}) must be positive"))

    def emit(self, item: int) -> None:
        try:
            self.subscriber.on_next(item)
        except Exception:  # 2.13: a raising subscriber counts as cancelled, and the error is logged
            logging.getLogger(__name__).warning("on_next raised; the subscription is cancelled", exc_info=True)
            self.cancel()

    def end(self, signal) -> None:
        subscriber, self.subscriber, self.done = self.subscriber, None, True
        self.publisher.forget(self)
        signal(subscriber)


class RacePublisher:
    """Announces on the caller's thread with nothing held: the defect."""

    def __init__(self, n: int):
        self.n = n
        self.signal_lock = threading.RLock()  # held by every delivery
        self.live: set[RaceSubscription] = set()

    def run_elsewhere(self, work) -> None:
        raise NotImplementedError

    def forget(self, subscription: RaceSubscription) -> None:
        self.live.discard(subscription)

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = RaceSubscription(self, subscriber, self.n)
        self.live.add(subscription)
        self.announce(subscriber, subscription)

    def announce(self, subscriber, subscription: RaceSubscription) -> None:
        subscriber.on_subscribe(subscription)
        subscription.schedule_drain()  # an empty stream completes without demand


class ThreadPerRequestRace(RacePublisher):
    """(A) each drain on a new thread."""

    def run_elsewhere(self, work) -> None:
        threading.Thread(target=work, name="race-thread-per-request", daemon=True).start()


class TimerRace(RacePublisher):
    """(B) each drain from a timer 2 ms later."""

    def run_elsewhere(self, work) -> None:
        timer = threading.Timer(TIMER_DELAY_S, work)
        timer.daemon = True
        timer.start()


class PoolRace(RacePublisher):
    """(C) each drain on a private thread pool."""

    def __init__(self, n: int):
        super().__init__(n)
        self.pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="race-pool")

    def run_elsewhere(self, work) -> None:
        self.pool.submit(work)


class AnnouncesUnderLock:
    """The fix of (A) and (B): on_subscribe is signalled holding the lock every delivery holds."""

    def announce(self, subscriber, subscription: RaceSubscription) -> None:
        with self.signal_lock:
            subscriber.on_subscribe(subscription)
        subscription.schedule_drain()


class ThreadPerRequestFixed(AnnouncesUnderLock, ThreadPerRequestRace):
    pass


class TimerFixed(AnnouncesUnderLock, TimerRace):
    pass


class PoolFixed(PoolRace):
    """The fix of (C): on_subscribe is signalled on the pool, by the serial drain, before any element."""

    def announce(self, subscriber, subscription: RaceSubscription) -> None:
        announced = []

        def drain_after_announcing(drain=subscription.drain) -> None:
            if not announced:
                announced.append(True)
                subscriber.on_subscribe(subscription)
            drain()

        subscription.drain = drain_after_announcing
        subscription.schedule_drain()


RACES = {"thread_per_request_race": ThreadPerRequestRace, "timer_race": TimerRace, "pool_race": PoolRace}
FIXED = {"thread_per_request_fixed": ThreadPerRequestFixed, "timer_fixed": TimerFixed, "pool_fixed": PoolFixed}


def _race_case(name: str, publisher: type, fails: set[str], *, synchronous: bool = False):
    from rstck import InProcessTarget

    from . import publishers
    from .publisher_mutants import ZOO_RESPONSIVENESS_BOUND_S, Case

    def make() -> InProcessTarget:
        return InProcessTarget(create_publisher=publisher, create_failed_publisher=publishers.FailedPublisher,
                               name=name, responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)

    # one delivering only on threads of its own offers neither MAY of a synchronous request
    synchronous_mays = frozenset() if synchronous else frozenset({"3.10", "3.11"})
    return Case(name, make, frozenset(fails), unsupported=synchronous_mays)


MUTANTS = [_race_case(name, publisher, {"1.3"}) for name, publisher in RACES.items()]
GUARDS = [_race_case(name, publisher, set()) for name, publisher in FIXED.items()]


# --- demand read before on_next and written back after it: requests from other threads in between are lost


class DemandWrittenBackAfterDelivery:
    """The delivering thread reads the demand, signals on_next, then writes back what it read less one, with no
    lock (a fast path): a request another thread made during on_next is lost (3.8). A request from inside on_next,
    on the delivering thread itself, is kept apart and added, so only the cross-thread case is wrong."""

    def deliver_what_is_due(self) -> None:
        self.delivering_on = threading.get_ident()
        try:
            self.deliver_reading_ahead()
        finally:
            self.delivering_on = None

    def deliver_reading_ahead(self) -> None:
        while not self.done:
            if self.rejected is not None:
                return self.end(self.rejection)
            if self.sent == self.n:
                return self.end(lambda s: s.on_complete())
            read = self.demand
            if read == 0:
                return
            self.sent += 1
            self.asked_inside = 0
            self.emit(self.sent - 1)
            self.demand = read - 1 + self.asked_inside  # the defect: another thread's request is overwritten

    def request(self, n: int) -> None:
        if n > 0 and not self.done and threading.get_ident() == getattr(self, "delivering_on", None):
            self.asked_inside += n
            return
        RaceSubscription.request(self, n)


class UnlockedFastPathSubscription(DemandWrittenBackAfterDelivery, RaceSubscription):
    pass


class UnlockedFastPathPublisher(ThreadPerRequestFixed):
    """Delivers on a thread of its own, serial and announced under its lock: only the demand is wrong."""

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = UnlockedFastPathSubscription(self, subscriber, self.n)
        self.live.add(subscription)
        self.announce(subscriber, subscription)


class SubscribeDrainSubscription(DemandWrittenBackAfterDelivery, RaceSubscription):
    started = False  # until subscribe has signalled on_subscribe, a request only adds demand

    def schedule_drain(self) -> None:
        if not self.started:
            return
        with self.lock:
            self.work += 1
            first = self.work == 1
        if first:
            self.drain()  # on the caller's thread: inside subscribe, or inside the request that started it


class SubscribeDrainPublisher(RacePublisher):
    """Delivers on the caller's thread, within `subscribe` when demand came from inside on_subscribe: a request
    another thread makes meanwhile is lost."""

    def run_elsewhere(self, work) -> None:
        work()

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = SubscribeDrainSubscription(self, subscriber, self.n)
        self.live.add(subscription)
        subscriber.on_subscribe(subscription)
        subscription.started = True
        subscription.schedule_drain()


# a request lost between a delivery's read and write of the demand is 3.8's
MUTANTS += [_race_case("unlocked_fast_path", UnlockedFastPathPublisher, {"3.8"}),
            _race_case("subscribe_drain_loses_foreign_request", SubscribeDrainPublisher, {"3.8"}, synchronous=True)]


class CancelWrittenBackAfterDelivery(RaceSubscription):
    """3.12: the delivering thread reads whether it is cancelled before on_next and writes that back after, with no
    lock: a cancel another thread made during on_next is lost (one from inside on_next, on the delivering thread
    itself, is kept)."""

    delivering_on = None

    def cancel(self) -> None:
        if self.delivering_on is None:  # nothing in flight: cancelled at once
            return RaceSubscription.cancel(self)
        if threading.get_ident() == self.delivering_on:
            self.cancelled_inside = True
        self.done = True

    def deliver_what_is_due(self) -> None:
        self.delivering_on = threading.get_ident()
        try:
            while not self.done:
                if self.rejected is not None:
                    return self.end(self.rejection)
                if self.sent == self.n:
                    return self.end(lambda s: s.on_complete())
                with self.lock:
                    if self.demand == 0:
                        return
                    self.demand -= 1
                done, self.cancelled_inside = self.done, False
                self.sent += 1
                self.subscriber.on_next(self.sent - 1)
                self.done = done or self.cancelled_inside  # the defect: another thread's cancel is overwritten
        finally:
            self.delivering_on = None
        if self.done:
            self.subscriber = None
            self.publisher.forget(self)


class CancelLostPublisher(ThreadPerRequestFixed):
    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None (rule 1.9)")
        subscription = CancelWrittenBackAfterDelivery(self, subscriber, self.n)
        self.live.add(subscription)
        self.announce(subscriber, subscription)


MUTANTS += [_race_case("cancel_lost_during_delivery", CancelLostPublisher, {"3.12"})]


# --- a processor that reads its downstream demand before passing an element on and writes it back after


def _demand_written_back_processor():
    from rstck.reference.processors import MapProcessor

    class DemandWrittenBackAcrossSignal(MapProcessor):
        """3.8: passes each element on directly, having read its downstream demand before and writing it back after,
        without the lock: a downstream request another thread made meanwhile is lost (one from inside the
        downstream on_next, on the signalling thread itself, is kept). 1.3: passed on directly, outside its queue
        of downstream signals, an element overlaps a signal that queue is making on another thread."""

        _signalling_on = None
        _asked_inside = 0

        def on_next(self, item) -> None:
            with self._lock:
                subscriber, read = self._downstream, self._demand
            if item is None or subscriber is None or read in (0, MAX_DEMAND):
                return super().on_next(item)
            self._signalling_on, self._asked_inside = threading.get_ident(), 0
            try:
                subscriber.on_next(item)
            except Exception:  # 2.13: a raising subscriber counts as cancelled, and the error is logged
                logging.getLogger(__name__).warning("on_next raised; cancelled", exc_info=True)
                return self._cancel()
            finally:
                self._signalling_on = None
            with self._lock:
                self._demand = read - 1 + self._asked_inside  # the defect

        def _request(self, n: int) -> None:
            if threading.get_ident() == self._signalling_on and n > 0:
                self._asked_inside += n
            super()._request(n)

    return DemandWrittenBackAcrossSignal()


def _processor_case(name: str, create, fails: set[str]):
    from rstck import InProcessTarget

    from .publisher_mutants import ZOO_RESPONSIVENESS_BOUND_S, Case

    def make() -> InProcessTarget:
        return InProcessTarget(create_processor=create, name=name, responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)

    return Case(name, make, frozenset(fails))


PROCESSOR_MUTANTS = [
    _processor_case("processor_loses_demand_while_signalling", _demand_written_back_processor, {"3.8", "1.3"})]


# --- a subscriber whose calls on its subscription overlap only in a race (2.7)


def _top_up_subscribers():
    from .subscribers import Subscriber

    class TopsUpFromATimer(Subscriber):
        """2.7: after each element it asks a 2 ms timer to request one more, and when its batch runs out it requests
        the next batch from inside on_next: the timer's request can run while that one is still under way."""

        def on_next(self, item) -> None:
            if item is not None and not self.done:
                timer = threading.Timer(TIMER_DELAY_S, self.top_up)
                timer.daemon = True
                timer.start()
            super().on_next(item)

        def top_up(self) -> None:
            subscription = self.subscription
            if subscription is not None and not self.done:
                subscription.request(1)  # extra demand, beyond the batch it counts

    class TopsUpUnderLock(TopsUpFromATimer):
        """The fix: every request is made holding one lock, so the calls are serial."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls = threading.RLock()

        def ask(self) -> None:
            with self.calls:
                super().ask()

        def top_up(self) -> None:
            with self.calls:
                super().top_up()

    return TopsUpFromATimer, TopsUpUnderLock


def _subscriber_case(name: str, pick, fails: set[str]):
    from .subscriber_mutants import subscriber_case

    return subscriber_case(name, lambda observer, **kwargs: pick(_top_up_subscribers())(observer, **kwargs),
                           fails=fails)


SUBSCRIBER_MUTANTS = [_subscriber_case("tops_up_from_a_timer", lambda classes: classes[0], {"2.7"})]
SUBSCRIBER_GUARDS = [_subscriber_case("tops_up_under_lock", lambda classes: classes[1], set())]

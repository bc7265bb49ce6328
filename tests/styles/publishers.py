"""Publishers of range(n) in every allowed style, and the subscription that is also a processor's downstream side.

A subscription delivers what is due (elements within demand, then the end) in a *drain*; at most one thread holds
the right to drain at a time, and only the holder signals. The guard decides how that right and the state are
kept; the delivery decides where a scheduled drain runs; `on_subscribe` whether subscribe signals it itself or
leaves it to the first drain on the delivery; `request` whether a request that wins the right drains at once, on
its own thread (where the delivery lets it: a loop's deliveries stay on the loop), or schedules the drain.

Rules every guard keeps by construction:

- the right is held from the start until on_subscribe has returned, so nothing a request inside it asks for is
  delivered meanwhile (1.3, 1.9); a request made while a drain runs only adds demand, and the running drain looks
  again before it lets go of the right (3.3, 3.8: no request is lost, no delivery nests);
- cancel only sets a flag and drops the subscriber, from any thread, at once (3.5, 3.13); the drain reads the
  flag before every signal (3.12);
- a subscriber that raises counts as cancelled, and the error is logged (2.13).

A style's defect (choices.DEFECTS) is injected here, at the one place where the classic mistake is made.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading

from .choices import Style
from .deliveries import delivery_for
from .missed_count import MissedCount

_log = logging.getLogger(__name__)

# 3.17: demand that reaches 2**63-1 counts as unbounded.
MAX_DEMAND = 2**63 - 1


def require_subscriber(subscriber) -> None:
    if subscriber is None:
        raise TypeError("subscribe(None): a subscriber is required (rule 1.9)")


def non_positive_request(n) -> ValueError:
    return ValueError(f"request({n!r}) is illegal: the number of elements requested must be positive (rule 3.9)")


class RangeSource:
    """0..n-1, then on_complete (or on_error with `failure`)."""

    def __init__(self, n: int, failure: BaseException | None = None):
        self.n = n
        self.position = 0
        self.failure = failure

    def ending(self) -> tuple | None:
        """The terminal signal (method, args) once nothing is left to deliver, else None."""
        if self.position < self.n:
            return None
        return ("on_error", (self.failure,)) if self.failure is not None else ("on_complete", ())

    def has_next(self) -> bool:
        return self.position < self.n

    def next(self):
        self.position += 1
        return self.position - 1


class Hooks:
    """What a subscription tells its owner besides signalling: a processor forwards demand upstream and lets go of
    its upstream when its subscriber does. A plain publisher's owner needs none of it."""

    # A re-entrant lock the owner shares with the subscription of the reentrant_lock_across_signals guard, so that
    # one lock orders both (a processor's calls upstream and its signals downstream): two would deadlock.
    reentrant_lock = None

    def requested(self, n: int) -> None:
        """A positive request was recorded (outside the guard)."""

    def released(self) -> None:
        """The subscriber is gone: cancelled, raised, or ended by a non-positive request."""


NO_HOOKS = Hooks()


class StyledSubscription:
    """What every guard shares: the state, the next signal due, signalling, cancel, and the defects."""

    def __init__(self, style: Style, delivery, subscriber, source, hooks: Hooks = NO_HOOKS):
        self.style = style
        self.delivery = delivery
        self.subscriber = subscriber  # dropped at the end and on cancel (3.13)
        self.announced_to = subscriber  # whom on_subscribe goes to, even once the stream has ended
        self.source = source
        self.hooks = hooks
        self.demand = 0
        self.rejection: ValueError | None = None
        self.done = False  # the drain signalled the end
        self.cancelled = False  # set by cancel, from any thread
        # What the defects read and write while an on_next is in flight.
        self.delivering_on: int | None = None
        self.asked_inside = 0
        self.cancelled_inside = False

    # -- subscribe --------------------------------------------------------------------------------

    def start(self) -> None:
        """From subscribe: on_subscribe (here or on the worker), then the first drain, which completes an empty
        stream and serves what on_subscribe asked for. The right to drain is held from construction."""
        defect = self.style.defect
        here = self.style.on_subscribe == "in_subscribe"
        if defect == "overlapping_on_subscribe":
            self.let_go_before_announcing()
            first, then = self.announce_unguarded_then_wake, None
        elif defect == "signal_before_on_subscribe":
            first, then = self.deliver_then_announce, self.drain
        else:
            first, then = self.announce, self.drain
        if here:
            first()
            if then is not None:
                self.delivery.schedule(then)
            return

        def on_the_worker() -> None:
            first()
            if then is not None:
                then()

        self.delivery.schedule(on_the_worker)

    def announce(self) -> None:
        """on_subscribe, holding the right to drain."""
        self.signal_on_subscribe()

    def signal_on_subscribe(self) -> None:
        subscriber, self.announced_to = self.announced_to, None  # not kept once told (3.13)
        self.signal(subscriber, "on_subscribe", (self,))

    def deliver_then_announce(self) -> None:
        """The 1.9 defect: the source is started (an empty or failed stream ends at once) before on_subscribe."""
        self.emit_due()
        self.announce()

    def announce_unguarded_then_wake(self) -> None:
        """The 1.3 defect: on_subscribe with the right to drain free, so a request inside it starts a drain."""
        self.signal_on_subscribe()
        self.wake()

    # -- what the guards implement ------------------------------------------------------------------

    def request(self, n) -> None:
        raise NotImplementedError

    def wake(self) -> None:
        """Something became due without a request (a processor's upstream sent an element or ended)."""
        raise NotImplementedError

    def drain(self) -> None:
        """Deliver what is due, then let go of the right unless more came meanwhile (the holder only)."""
        raise NotImplementedError

    def emit_due(self) -> None:
        """Deliver what is due, keeping the right (the holder only)."""
        raise NotImplementedError

    def let_go_before_announcing(self) -> None:
        """The 1.3 defect: give up the right to drain that construction holds, before on_subscribe."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------------

    def start_drain(self) -> None:
        """The caller just took the right to drain: drain here, or where the delivery runs drains."""
        if self.style.request == "drains_inline" and self.delivery.may_run_here():
            self.drain()
        else:
            self.delivery.schedule(self.drain)

    def record(self, n) -> bool:
        """Add a request to the state (by whoever may touch it); whether it was a positive one."""
        if isinstance(n, int) and n > 0:
            self.demand = min(self.demand + n, MAX_DEMAND)
            return True
        if self.rejection is None:
            self.rejection = non_positive_request(n)
        return False

    def next_signal(self) -> tuple | None:
        """(subscriber, method, args) of the next signal due, or None; an end is marked as it is taken."""
        subscriber = self.subscriber
        if self.done or self.cancelled or subscriber is None:
            return None
        if self.rejection is not None:
            return self.finish(subscriber, "on_error", (self.rejection,))
        ending = self.source.ending()
        if ending is not None:
            return self.finish(subscriber, *ending)
        if self.demand == 0 or not self.source.has_next():
            return None
        self.demand -= 1
        return subscriber, "on_next", (self.source.next(),)

    def finish(self, subscriber, method: str, args: tuple) -> tuple:
        self.done = True
        self.subscriber = None
        return subscriber, method, args

    def signal(self, subscriber, method: str, args: tuple) -> None:
        if subscriber is None:
            return
        with self.defects_around(method):
            try:
                getattr(subscriber, method)(*args)
            except Exception:
                _log.warning("the subscriber's %s raised; its subscription is cancelled (rule 2.13)", method,
                             exc_info=True)
                self.cancel()
        if method == "on_error" and self.rejection is not None and args[0] is self.rejection:
            self.hooks.released()  # ended by its own bad request: nobody downstream any more

    def cancel(self) -> None:
        if self.style.defect == "cancel_written_back" and self.delivering_on is not None:
            # The 3.12 defect's other half: while an on_next is in flight the subscriber is kept, and the flag set
            # here is overwritten by the delivering thread once it returns (unless it is that thread's own cancel).
            if self.delivering_on == threading.get_ident():
                self.cancelled_inside = True
            self.cancelled = True
            return
        self.cancelled = True
        self.subscriber = None
        self.hooks.released()

    @contextlib.contextmanager
    def defects_around(self, method: str):
        """The two write-back defects wrap each on_next; without a defect, nothing."""
        defect = self.style.defect
        if method != "on_next" or defect not in ("demand_written_back", "cancel_written_back"):
            yield
            return
        read_demand, was_cancelled = self.demand, self.cancelled
        self.delivering_on, self.asked_inside, self.cancelled_inside = threading.get_ident(), 0, False
        try:
            yield
        finally:
            self.delivering_on = None
            if defect == "demand_written_back":
                self.demand = read_demand + self.asked_inside  # a request another thread made meanwhile is lost
            else:
                self.cancelled = was_cancelled or self.cancelled_inside  # so is another thread's cancel

    def request_under_lock(self, n) -> None:
        """request(n) for the styles whose counters `self.lock` guards: recorded under it, answered outside it."""
        if self.unguarded_request(n):
            return
        with self.lock:
            if self.done or self.cancelled:
                return
            positive = self.record(n)
        if positive:
            self.hooks.requested(n)
        self.wake()

    def unguarded_request(self, n) -> bool:
        """The 3.8 defect's other half, a fast path: while an on_next is in flight, a request adds to the demand
        directly (one from inside that on_next, kept apart, is added by the write-back). Whether it was taken."""
        if self.style.defect != "demand_written_back" or not (isinstance(n, int) and n > 0):
            return False
        delivering_on = self.delivering_on
        if delivering_on is None:
            return False
        if delivering_on == threading.get_ident():
            self.asked_inside += n
        else:
            self.demand += n
        self.hooks.requested(n)
        return True


class CountedDrain(StyledSubscription):
    """A missed count admits one drainer at a time: whoever raises it from zero drains, the others only add to it,
    and the drainer looks again until nothing came meanwhile. `next_step` is what the drainer signals next."""

    def __init__(self, *args, count_lock=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.missed = MissedCount(count_lock, held=True)  # held by start()

    @property
    def wip(self) -> int:
        """What the drainer still has to look at (0: no drain holds the right)."""
        return self.missed.count

    def wake(self) -> None:
        if self.missed.enter():
            self.start_drain()

    def let_go_before_announcing(self) -> None:
        self.missed.let_go()

    def drain(self) -> None:
        while True:
            self.emit_due()
            if self.missed.looked_again():
                return

    def emit_due(self) -> None:
        while (step := self.next_step()) is not None:
            self.signal(*step)
            del step  # not kept while the next one is awaited: cancel may be dropping the subscriber

    def next_step(self) -> tuple | None:
        raise NotImplementedError


class BookkeepingLockSubscription(CountedDrain):
    """A lock around the counters (and the missed count) only; signals are made outside it."""

    def __init__(self, *args, **kwargs):
        lock = threading.Lock()
        super().__init__(*args, count_lock=lock, **kwargs)
        self.lock = lock

    def request(self, n) -> None:
        self.request_under_lock(n)

    def next_step(self) -> tuple | None:
        with self.lock:
            return self.next_signal()


class QueueDrainSubscription(CountedDrain):
    """Requests are messages: a queue carries them to the drainer, which alone touches demand and position; the
    missed count has a lock of its own, around that count only."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.inbox: collections.deque = collections.deque()

    def request(self, n) -> None:
        if self.unguarded_request(n) or self.cancelled:
            return
        self.inbox.append(n)
        self.wake()

    def next_step(self) -> tuple | None:
        self.take_requests()
        return self.next_signal()

    def take_requests(self) -> None:
        while self.inbox:
            n = self.inbox.popleft()
            if not self.done and self.record(n):
                self.hooks.requested(n)


class ReentrantLockSubscription(StyledSubscription):
    """A re-entrant lock held while on_subscribe, on_next, on_error and on_complete are called: a request from
    inside a signal re-enters it and only adds demand; one from another thread waits until the signal returns."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lock = self.hooks.reentrant_lock or threading.RLock()
        self.busy = True  # a drain holds the right: held by start()

    def request(self, n) -> None:
        self.request_under_lock(n)

    def wake(self) -> None:
        with self.lock:
            if self.busy:
                return
            self.busy = True
        self.start_drain()

    def let_go_before_announcing(self) -> None:
        self.busy = False

    def announce(self) -> None:
        with self.lock:
            super().announce()

    def drain(self) -> None:
        self.emit_due(letting_go=True)

    def emit_due(self, letting_go: bool = False) -> None:
        while True:
            with self.lock:
                step = self.next_signal()
                if step is None:
                    if letting_go:
                        self.busy = False
                    return
                self.signal(*step)
            del step


class NoLockSubscription(StyledSubscription):
    """No lock: the state lives on the delivery's loop, and a call from another thread hops onto it. Only cancel
    is made where it is called, which its flag allows."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.busy = True  # held by start()

    def request(self, n) -> None:
        if self.unguarded_request(n):
            return
        if not self.delivery.may_run_here():
            self.delivery.hop(lambda: self.request(n))
            return
        if self.done or self.cancelled:
            return
        if self.record(n):
            self.hooks.requested(n)
        self.wake()

    def wake(self) -> None:
        if not self.delivery.may_run_here():
            self.delivery.hop(self.wake)
            return
        if self.busy:
            return
        self.busy = True
        self.start_drain()

    def let_go_before_announcing(self) -> None:
        self.busy = False

    def drain(self) -> None:
        self.emit_due()
        self.busy = False

    def emit_due(self) -> None:
        while True:
            step = self.next_signal()
            if step is None:
                return
            self.signal(*step)
            del step


GUARDED_SUBSCRIPTIONS = {
    "no_lock": NoLockSubscription,
    "bookkeeping_lock": BookkeepingLockSubscription,
    "reentrant_lock_across_signals": ReentrantLockSubscription,
    "queue_drain": QueueDrainSubscription,
}


def subscription_for(style: Style, delivery, subscriber, source, hooks: Hooks = NO_HOOKS) -> StyledSubscription:
    return GUARDED_SUBSCRIPTIONS[style.guard](style, delivery, subscriber, source, hooks)


class StyledPublisher:
    """A cold publisher of range(n) (then on_error with `failure`, if given) in `style`; `target` is the rstck
    target whose event loop the asyncio_loop delivery uses."""

    def __init__(self, style: Style, n: int, target, failure: BaseException | None = None):
        self.style = style
        self.n = n
        self.target = target
        self.failure = failure

    def subscribe(self, subscriber) -> None:
        require_subscriber(subscriber)
        delivery = delivery_for(self.style.delivery, self.target)
        subscription_for(self.style, delivery, subscriber, RangeSource(self.n, self.failure)).start()

    def __repr__(self) -> str:
        return f"<{self.style.name} publisher of {self.n}>"

"""Identity processors in every allowed style: the publisher of the style downstream, fed by what the upstream
sends.

Downstream, a processor is a subscription of the style (tests/styles/publishers.py) whose source is a buffer:
upstream elements go into it and wake the drain, which delivers them within the downstream demand, in order, and
the upstream's end after them (an upstream error at once). Upstream, every downstream request is passed on: at once,
from the requesting call (`drains_inline`), or recorded and passed on by work scheduled on the style's delivery
(`records_and_schedules`); demand made before the upstream has come is kept for it. The calls on the upstream
subscription are kept serial (2.7) by the style's guard: a re-entrant lock held across each call (the one held
across the downstream signals: one lock, so that the two sides cannot wait for each other); a
missed-counter queue of calls, made outside any lock (the lock-around-bookkeeping and queue guards); or, without
a lock, every call on the loop's thread. The processor serves one subscriber (a later one gets on_subscribe, then
on_error), lets go of its upstream when that subscriber cancels, raises from on_next or is ended by a
non-positive request (2.6), and never calls the upstream again once it has ended (2.4).
"""

from __future__ import annotations

import collections
import contextlib
import threading

from .choices import Style
from .deliveries import TIMER_DELAY_S, delivery_for
from .missed_count import MissedCount
from .publishers import MAX_DEMAND, Hooks, require_subscriber, subscription_for


class BufferSource:
    """What the upstream sent and the downstream has not yet received."""

    def __init__(self):
        self.buffer: collections.deque = collections.deque()
        self.end: tuple | None = None  # (method, args) once the upstream ended

    def ending(self) -> tuple | None:
        if self.end is not None and (self.end[0] == "on_error" or not self.buffer):
            return self.end
        return None

    def has_next(self) -> bool:
        return bool(self.buffer)

    def next(self):
        return self.buffer.popleft()


class _Refused:
    """The subscription a refused second subscriber gets before its on_error."""

    def request(self, n) -> None:
        pass

    def cancel(self) -> None:
        pass


class UpstreamCalls:
    """The processor's calls on its upstream subscription: what is owed and whether to let go, passed on by one
    caller at a time (`pump`). This one: a missed count admits the caller, and no lock is held while it calls."""

    def __init__(self, processor: "StyledProcessor"):
        self.processor = processor
        self.lock = threading.Lock()
        self.subscription = None
        self.over = False  # the upstream ended: never called again (2.4)
        self.owed = 0
        self.letting_go = False
        self.let_go = False
        self.waiting = MissedCount(self.lock)

    def attach(self, subscription) -> bool:
        """The upstream's on_subscribe; whether it is the first (a later one is cancelled, 2.5)."""
        with self.lock:
            if self.subscription is not None or self.over:
                return False
            self.subscription = subscription
        self.pump()
        return True

    def owe(self, n: int) -> None:
        with self.lock:
            self.owed = min(self.owed + n, MAX_DEMAND)

    def release(self) -> None:
        with self.lock:
            self.letting_go = True
        self.pump()

    def ended(self) -> None:
        with self.lock:
            self.over = True

    def next_call(self) -> tuple | None:
        """(subscription, method, args) to make next, or None (holding the lock)."""
        subscription = self.subscription
        if subscription is None or self.over or self.let_go:
            return None
        if self.letting_go:
            self.let_go = True
            return subscription, "cancel", ()
        if self.owed:
            owed, self.owed = self.owed, 0
            return subscription, "request", (owed,)
        return None

    def locked_next_call(self) -> tuple | None:
        with self.lock:
            return self.next_call()

    def make_calls(self, next_call) -> None:
        """Make each call `next_call` gives, until it gives none."""
        while (call := next_call()) is not None:
            subscription, method, args = call
            getattr(subscription, method)(*args)
            del call, subscription  # not kept while the next is asked for

    def pump(self) -> None:
        if not self.waiting.enter():
            return
        while True:
            self.make_calls(self.locked_next_call)
            if self.waiting.looked_again():
                return


class ReentrantUpstreamCalls(UpstreamCalls):
    """A re-entrant lock held across each call; one made from inside a call of this thread's (an upstream that
    delivers inside request) is left to the loop already running."""

    def __init__(self, processor: "StyledProcessor"):
        super().__init__(processor)
        self.lock = processor.reentrant_lock
        self.pumping = False

    def pump(self) -> None:
        with self.lock:
            if self.pumping:
                return
            self.pumping = True
            try:
                self.make_calls(self.next_call)
            finally:
                self.pumping = False


class LoopUpstreamCalls(UpstreamCalls):
    """No lock: the state and every call live on the delivery's loop; from another thread, a call hops there."""

    def __init__(self, processor: "StyledProcessor"):
        super().__init__(processor)
        self.lock = contextlib.nullcontext()
        self.delivery = processor.delivery
        self.pumping = False

    def on_loop(self, work, *args) -> bool:
        """Whether the caller is on the loop's thread; if not, `work(*args)` hops there."""
        if self.delivery.may_run_here():
            return True
        self.delivery.hop(lambda: work(*args))
        return False

    def attach(self, subscription) -> bool:
        if not self.on_loop(self.attach_here, subscription):
            return True  # decided on the loop, which cancels a second one itself
        return self.attach_here(subscription)

    def attach_here(self, subscription) -> bool:
        if self.subscription is not None or self.over:
            subscription.cancel()
            return True
        self.subscription = subscription
        self.pump()
        return True

    def owe(self, n: int) -> None:
        if self.on_loop(self.owe, n):
            self.owed = min(self.owed + n, MAX_DEMAND)

    def release(self) -> None:
        if self.on_loop(self.release):
            self.letting_go = True
            self.pump()

    def ended(self) -> None:
        self.over = True  # a flag the loop reads before each call: set at once, from the upstream's thread (2.4)

    def pump(self) -> None:
        if not self.on_loop(self.pump) or self.pumping:
            return
        self.pumping = True
        try:
            self.make_calls(self.next_call)
        finally:
            self.pumping = False


UPSTREAM_CALLS = {
    "no_lock": LoopUpstreamCalls,
    "bookkeeping_lock": UpstreamCalls,
    "reentrant_lock_across_signals": ReentrantUpstreamCalls,
    "queue_drain": UpstreamCalls,
}


class StyledProcessor(Hooks):
    """An identity processor in `style`."""

    def __init__(self, style: Style, target):
        self.style = style
        self.delivery = delivery_for(style.delivery, target)
        self.reentrant_lock = threading.RLock() if style.guard == "reentrant_lock_across_signals" else None
        self.source = BufferSource()
        self.upstream = UPSTREAM_CALLS[style.guard](self)
        self.downstream = None  # the downstream subscription, once there is a subscriber
        self.claim_lock = threading.Lock()
        self.claimed = False

    # -- the subscriber side --------------------------------------------------------------------

    def on_subscribe(self, subscription) -> None:
        if subscription is None:
            raise TypeError("on_subscribe(None): a subscription is required (rule 2.13)")
        if not self.upstream.attach(subscription):
            subscription.cancel()  # it has its upstream already (2.5)

    def on_next(self, item) -> None:
        if item is None:
            raise TypeError("on_next(None): an element is required (rule 2.13)")
        self.source.buffer.append(item)
        if self.style.defect == "unserialised_top_up":
            self.top_up_later()
        self.wake_downstream()

    def on_error(self, error) -> None:
        if error is None:
            raise TypeError("on_error(None): an error is required (rule 2.13)")
        self.upstream_ended(("on_error", (error,)))

    def on_complete(self) -> None:
        self.upstream_ended(("on_complete", ()))

    def upstream_ended(self, end: tuple) -> None:
        self.upstream.ended()
        self.source.end = end
        self.wake_downstream()

    def wake_downstream(self) -> None:
        downstream = self.downstream
        if downstream is not None:
            downstream.wake()

    def top_up_later(self) -> None:
        """The 2.7 defect: a timer asks the upstream for one more beside the calls the guard keeps serial."""
        timer = threading.Timer(TIMER_DELAY_S, self.top_up)
        timer.daemon = True
        timer.start()

    def top_up(self) -> None:
        subscription = self.upstream.subscription
        if subscription is not None and not self.upstream.over:
            subscription.request(1)

    # -- the publisher side -----------------------------------------------------------------------

    def subscribe(self, subscriber) -> None:
        require_subscriber(subscriber)
        with self.claim_lock:
            refused, self.claimed = self.claimed, True
        if refused:
            subscriber.on_subscribe(_Refused())
            subscriber.on_error(RuntimeError("this processor serves a single subscriber"))
            return
        downstream = subscription_for(self.style, self.delivery, subscriber, self.source, hooks=self)
        self.downstream = downstream
        downstream.start()

    # -- what the downstream subscription tells it (publishers.Hooks) -----------------------------------

    def requested(self, n: int) -> None:
        self.upstream.owe(n)
        if self.style.request == "drains_inline":
            self.upstream.pump()
        else:
            self.delivery.schedule(self.upstream.pump)

    def released(self) -> None:
        self.upstream.release()

    def __repr__(self) -> str:
        return f"<{self.style.name}>"

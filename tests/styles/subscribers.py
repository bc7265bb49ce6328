"""Subscribers in every allowed style.

The matrix read from a subscriber's side: the delivery is where it processes what it receives (on the caller's
thread: inside the signal method itself; anywhere else, the signal methods only hand each signal over); the guard
is how its processing and its calls on the subscription are kept serial (2.7); `on_subscribe` is where it makes its
first request (inside on_subscribe on the publisher's thread, or on its worker once the worker has processed
on_subscribe); `request` is how it asks for more once it has processed half a batch: at once, from the processing
(`drains_inline`), or by recording the demand and scheduling the request on its delivery (`records_and_schedules`),
where it runs as a processing step of its own.

Every style asks for a batch of CAPACITY and again for half of it each time half has been processed (2.1 without
stop-and-wait); takes only its first subscription and cancels any later one (2.5); raises TypeError for a None
(2.13); and makes no call once on_complete or on_error has come (2.3; 2.4), because every call first reads the
`ended` flag the terminal signal sets before it hands itself over. Only the holder of the right to process calls
the subscription, and only one thread holds it at a time.
"""

from __future__ import annotations

import collections
import logging
import threading

from .choices import Style
from .deliveries import TIMER_DELAY_S, delivery_for
from .missed_count import MissedCount

_log = logging.getLogger(__name__)

CAPACITY = 8
HALF = CAPACITY // 2


def require(value, what: str) -> None:
    if value is None:
        raise TypeError(f"{what} must not be None (rule 2.13)")


class AtSignalEnd:
    """The caller's-thread delivery of a subscriber: work scheduled while a signal is processed runs on the same
    thread once that signal's processing is done, before the signal method returns."""

    def __init__(self):
        self.pending: collections.deque = collections.deque()

    def schedule(self, work) -> None:
        self.pending.append(work)

    def may_run_here(self) -> bool:
        return True

    def run_pending(self) -> None:
        while self.pending:
            self.pending.popleft()()


class StyledSubscriber:
    """What every guard shares: the signal methods, the processing of each signal, and asking for more."""

    def __init__(self, style: Style, target, observer=None):
        self.style = style
        self.inline = style.delivery == "caller"
        self.delivery = AtSignalEnd() if self.inline else delivery_for(style.delivery, target)
        self.observer = observer
        self.mailbox: collections.deque = collections.deque()
        self.subscription = None
        self.ended = False  # on_complete or on_error came: no call on the subscription from here on
        self.items: list = []
        self.error: BaseException | None = None
        self.completed = False
        self.consumed = 0  # elements processed since the last request
        self.owed = 0  # demand recorded and not yet asked for (records_and_schedules)
        self.depth = 0  # signals of this subscriber in progress on the caller's thread (nested by a synchronous one)

    # -- the signal methods -------------------------------------------------------------------------

    def on_subscribe(self, subscription) -> None:
        require(subscription, "subscription")
        if self.__dict__.setdefault("claimed", subscription) is not subscription:
            subscription.cancel()  # it has its subscription already (2.5)
            return
        self.subscription = subscription
        self.signalled(("on_subscribe", None), here=self.style.on_subscribe == "in_subscribe")

    def on_next(self, item) -> None:
        require(item, "element")
        self.signalled(("on_next", item))

    def on_error(self, error) -> None:
        require(error, "error")
        self.ended = True
        self.signalled(("on_error", error))

    def on_complete(self) -> None:
        self.ended = True
        self.signalled(("on_complete", None))

    def signalled(self, message: tuple, *, here: bool = False) -> None:
        """A signal method's hand-over. On the caller's thread it is processed at once, and what its processing
        scheduled runs once the outermost signal of this subscriber in progress on the thread is done."""
        if not self.inline:
            return self.post(message, here=here)
        self.depth += 1
        try:
            self.post(message, here=True)
        finally:
            self.depth -= 1
        if self.depth == 0:
            self.delivery.run_pending()

    # -- processing (by the holder of the right only) -----------------------------------------------

    def process(self, message: tuple) -> None:
        kind, value = message
        if kind == "on_subscribe":
            self.report("on_subscribe_processed")
            self.call_request(CAPACITY)
        elif kind == "on_next":
            self.items.append(value)
            self.report("on_next_processed", value)
            if self.style.defect == "unserialised_top_up":
                self.top_up_later()
            self.consumed += 1
            if self.consumed == HALF:
                self.consumed = 0
                self.ask(HALF)
        elif kind == "ask_owed":
            owed, self.owed = self.owed, 0
            self.call_request(owed)
        elif kind == "on_error":
            self.error = value
            self.report("on_error_processed", value)
        else:
            self.completed = True
            self.report("on_complete_processed")

    def ask(self, n: int) -> None:
        if self.style.request == "drains_inline":
            return self.call_request(n)
        self.owed += n
        self.delivery.schedule(lambda: self.post(("ask_owed", None)))

    def call_request(self, n: int) -> None:
        if n > 0 and not self.ended:
            self.subscription.request(n)

    def report(self, method: str, *args) -> None:
        if self.observer is not None:
            getattr(self.observer, method)(*args)

    def top_up_later(self) -> None:
        """The 2.7 defect: a timer of its own asks for one more, beside the guard that keeps its other calls
        serial, so the two can be under way at once."""
        timer = threading.Timer(TIMER_DELAY_S, self.top_up)
        timer.daemon = True
        timer.start()

    def top_up(self) -> None:
        if not self.ended:
            self.subscription.request(1)

    # -- what the guards implement ------------------------------------------------------------------

    def post(self, message: tuple, *, here: bool = False) -> None:
        """Hand `message` to processing; `here`: this thread processes it itself (taking the right), and hands
        whatever else came meanwhile to the delivery."""
        raise NotImplementedError

    def start_run(self, here: bool) -> None:
        if here:
            self.run(only_first=not self.inline)
        else:
            self.delivery.schedule(self.run)


class CountedRun(StyledSubscriber):
    """The right to process is a count of what is waiting: whoever raises it from zero processes, and gives back
    what it has seen before it looks again (the guards with a lock around bookkeeping, or a queue)."""

    def __init__(self, *args, count_lock=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.waiting = MissedCount(count_lock)  # its own lock unless a subclass shares one

    def post(self, message: tuple, *, here: bool = False) -> None:
        self.enqueue(message)
        if self.waiting.enter():
            self.start_run(here)

    def enqueue(self, message: tuple) -> None:
        raise NotImplementedError

    def take(self) -> tuple | None:
        raise NotImplementedError

    def run(self, only_first: bool = False) -> None:
        """Process what is waiting, then give back the count seen and look again; `only_first`: process one
        message (the first there is: the caller posted it) and hand the rest, and the right, to the delivery."""
        while True:
            while (message := self.take()) is not None:
                self.process(message)
                if only_first:
                    break
            if self.waiting.looked_again():
                return
            if only_first:
                return self.delivery.schedule(self.run)


class BookkeepingLockSubscriber(CountedRun):
    """A lock around its mailbox and counters only; calls on the subscription are made outside it."""

    def __init__(self, *args, **kwargs):
        lock = threading.Lock()
        super().__init__(*args, count_lock=lock, **kwargs)  # the count's lock too
        self.lock = lock

    def enqueue(self, message: tuple) -> None:
        with self.lock:
            self.mailbox.append(message)

    def take(self) -> tuple | None:
        with self.lock:
            return self.mailbox.popleft() if self.mailbox else None


class QueueDrainSubscriber(CountedRun):
    """Signals are messages on a queue; a missed count (a lock around that count only) admits one drainer."""

    def enqueue(self, message: tuple) -> None:
        self.mailbox.append(message)

    def take(self) -> tuple | None:
        try:
            return self.mailbox.popleft()
        except IndexError:
            return None


class ReentrantLockSubscriber(StyledSubscriber):
    """A re-entrant lock held while it processes and while it calls its subscription; a signal handed over
    meanwhile waits in the mailbox, and a run started for it takes the lock in turn."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lock = threading.RLock()
        self.running = False  # read and written holding the lock

    def post(self, message: tuple, *, here: bool = False) -> None:
        self.mailbox.append(message)
        self.start_run(here)

    def run(self, only_first: bool = False) -> None:
        with self.lock:
            if self.running:  # re-entered from inside this thread's own processing: that run takes it
                return
            self.running = True
            try:
                while self.mailbox:
                    self.process(self.mailbox.popleft())
                    if only_first:
                        break
            finally:
                self.running = False
            more = only_first and bool(self.mailbox)
        if more:
            self.delivery.schedule(self.run)


class NoLockSubscriber(StyledSubscriber):
    """No lock: everything happens on one thread. Processing on the caller's thread, that is the thread of the
    signal (1.3 makes signals serial, and every call is made before the signal returns); on a loop, the loop's,
    where a signal from another thread hops."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.running = False

    def post(self, message: tuple, *, here: bool = False) -> None:
        if not self.inline and not self.delivery.may_run_here():
            self.delivery.hop(lambda: self.post(message))
            return
        self.mailbox.append(message)
        if self.running:
            return
        self.running = True
        if self.inline:
            self.run()
        else:
            self.delivery.schedule(self.run)

    def run(self, only_first: bool = False) -> None:
        while self.mailbox:
            self.process(self.mailbox.popleft())
        self.running = False


GUARDED_SUBSCRIBERS = {
    "no_lock": NoLockSubscriber,
    "bookkeeping_lock": BookkeepingLockSubscriber,
    "reentrant_lock_across_signals": ReentrantLockSubscriber,
    "queue_drain": QueueDrainSubscriber,
}


def subscriber_for(style: Style, target, observer=None) -> StyledSubscriber:
    return GUARDED_SUBSCRIBERS[style.guard](style, target, observer)

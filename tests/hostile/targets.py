"""Hostile targets: implementations the kit must survive, each the sole subject of one case.

Whatever a target here does (deadlock, flood, never return, raise a BaseException, kill the
process, print escape sequences, tamper with stdout, the working directory, the hooks or
`threading`), a run of the kit against it must end with a verdict per check, bounded in time and
memory, the fault charged to the target. `EXPECTED[name]` says in a phrase what the kit must
report; `CASES[name]` builds a fresh target; the module-level attribute of the same name is
one built at import, for `rstck check tests.hostile.targets:NAME`.

Building a target starts no thread, blocks nowhere and changes nothing in the process: every
hostile act happens only once the kit calls a factory, subscribe, request or cancel.

Several of these end or wreck the process they run in (os._exit, non-daemon threads that never
end, a closed sys.stdout, replaced hooks): run them only in a process of their own.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import tempfile
import threading
import time

import rstck

from ..conformant.publishers import (SyncTrampolined, ThreadPerRequest, _is_positive_count,
                                     _log_raising_subscriber, _require_subscriber, _ThreadPerRequestSubscription,
                                     _TrampolinedSubscription)
from ..conformant.subscribers import Batching

# -- shared pieces -------------------------------------------------------------------------------


class _Sync(SyncTrampolined):
    """SyncTrampolined whose subscription is made by one overridable method, so a case changes only
    what it must (a correct publisher of exactly n elements until a subclass says otherwise)."""

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        self._subscription(subscriber).start()

    def _subscription(self, subscriber) -> _TrampolinedSubscription:
        return _TrampolinedSubscription(subscriber, self.n, self.fail_with)


class _MappedSubscription(_TrampolinedSubscription):
    """A correct trampolined subscription whose k-th on_next carries `element(k)` instead of k."""

    def __init__(self, subscriber, n: int, element):
        super().__init__(subscriber, n, None)
        self._element = element

    def _call(self, method: str, *args) -> None:
        if method == "on_next":
            args = (self._element(args[0]),)
        super()._call(method, *args)


class _NeverSet:
    """Blocks the calling thread forever: an untimed wait on an Event nobody ever sets."""

    def __init__(self):
        self._event = threading.Event()

    def wait(self) -> None:
        self._event.wait()


def _swallow(*args, **kwargs) -> None:
    """A hook that takes anything and does nothing."""


# -- 1. a real deadlock between request and the delivery thread -------------------------------------


class DeadlockBetweenRequestAndOnNext:
    """A publisher whose first request deadlocks with its own delivery thread, forever.

    subscribe calls on_subscribe on the caller's thread (an empty stream then completes at once,
    correctly). The first request takes lock B (the demand lock), adds the demand, starts a
    NON-daemon delivery thread, waits until that thread holds lock A (the delivery lock), then
    wants A. The delivery thread takes A, says so, then wants B to read the demand. Each holds
    what the other wants: both threads are stuck for good, deterministically (the hand-over
    is an Event, not luck), and the delivery thread keeps a normal interpreter exit waiting
    forever. Nothing is ever delivered. Every later request or cancel from another thread:
    request blocks on B too; cancel takes no lock and returns.

    Breaks 3.4 (request never returns; a "return normally" reading makes it 3.16 as well), and so
    1.2/3.8 (the demand is never served, the stream never ends).
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _DeadlockingSubscription(subscriber)
        subscriber.on_subscribe(subscription)
        if self.n == 0 and not subscription.started:
            subscription.done = True  # later requests are no-ops, as they must be
            subscriber.on_complete()


class _DeadlockingSubscription:
    def __init__(self, subscriber):
        self._subscriber = subscriber
        self._a = threading.Lock()  # the delivery lock: the delivery thread takes it first
        self._b = threading.Lock()  # the demand lock: request takes it first
        self._a_is_held = threading.Event()
        self._demand = 0
        self.started = False
        self.done = False

    def request(self, n) -> None:
        if self.done:
            return
        with self._b:
            self._demand += n if _is_positive_count(n) else 0
            if not self.started:
                self.started = True
                threading.Thread(target=self._deliver, name="hostile-deadlocked-delivery", daemon=False).start()
            self._a_is_held.wait()
            with self._a:  # held by the delivery thread, which waits for B: never acquired
                pass

    def cancel(self) -> None:
        self._subscriber = None

    def _deliver(self) -> None:
        with self._a:
            self._a_is_held.set()
            with self._b:  # held by request, which waits for A: never acquired
                subscriber = self._subscriber
                if subscriber is not None:
                    subscriber.on_next(0)


# -- 2. an endless flood of on_next from a thread of its own ----------------------------------------


class DeliversForeverAfterCancel:
    """A publisher whose first request starts a NON-daemon thread that calls on_next(0), on_next(1),
    ... in a tight loop, forever.

    The thread ignores demand, cancel, non-positive requests and later requests alike, swallows
    whatever Exception on_next raises and goes on, keeps the subscriber referenced, and yields
    with `time.sleep(0)` every 1,000 elements so that the machine stays usable. It begins only
    after on_subscribe has returned (so signals stay serial), and an empty publisher still
    completes at subscribe. It never calls on_complete for n > 0, and keeps a normal interpreter
    exit waiting forever.

    Breaks 1.1 (on_next beyond demand), 1.8 and 3.12 (signals after cancel), 3.13 (keeps the
    subscriber), 3.9 (request(0) starts the flood instead of on_error), and the target's promise
    of exactly n elements then on_complete (1.5).
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _FloodingSubscription(subscriber)
        if self.n == 0:
            subscription.done = True
        subscriber.on_subscribe(subscription)
        subscription.subscribed.set()
        if self.n == 0:
            subscriber.on_complete()


class _FloodingSubscription:
    def __init__(self, subscriber):
        self._subscriber = subscriber
        self._lock = threading.Lock()
        self._started = False
        self.done = False
        self.subscribed = threading.Event()
        self.cancelled = False  # recorded, never honoured

    def request(self, n) -> None:
        with self._lock:
            if self._started or self.done:
                return
            self._started = True
        threading.Thread(target=self._flood, name="hostile-endless-flood", daemon=False).start()

    def cancel(self) -> None:
        self.cancelled = True

    def _flood(self) -> None:
        self.subscribed.wait()
        subscriber = self._subscriber
        i = 0
        while True:
            try:
                subscriber.on_next(i)
            except Exception:
                pass
            i += 1
            if i % 1000 == 0:
                time.sleep(0)


# -- 3. request never returns -----------------------------------------------------------------------


class RequestNeverReturns(_Sync):
    """SyncTrampolined (correct) except that request blocks forever on an Event nobody sets.

    subscribe, on_subscribe, cancel and an empty stream's on_complete (sent from subscribe,
    without any request) are all correct; any request, including one made inside on_subscribe
    (which then keeps subscribe from returning), never returns and registers nothing.

    Breaks 3.4 (request must return in a timely manner; 3.16 on a "must return" reading), and
    so 3.8 and 1.2 (nothing requested is delivered).
    """

    def _subscription(self, subscriber):
        return _BlockingRequestSubscription(subscriber, self.n, None)


class _BlockingRequestSubscription(_TrampolinedSubscription):
    def __init__(self, *args):
        super().__init__(*args)
        self._never = _NeverSet()

    def request(self, n) -> None:
        self._never.wait()


# -- 4. an endless synchronous delivery inside request ----------------------------------------------


class InfiniteSynchronous:
    """A synchronous publisher whose request delivers on_next(0), on_next(1), ... on the caller's
    thread, forever: request never returns.

    It ignores both its own n (it never completes, an empty one included) and the argument of
    request: every request, non-positive ones too, counts as unbounded demand, the only nod to
    demand being that nothing is delivered before the first request. Like a trampoline, a
    request made inside on_subscribe is served once on_subscribe has returned (subscribe then
    never returns), and a request made inside on_next returns at once (the loop further up the
    stack goes on), so the stack never grows. cancel is recorded and ignored; whatever Exception
    on_next raises is swallowed. It does not yield: the tight loop runs on the kit's thread.

    Breaks 1.1 (on_next beyond demand), 3.4 (request never returns), 1.8 and 3.12 (signals after
    cancel), 3.13 (keeps the subscriber), 3.9 (request(0) delivers instead of on_error), and the
    target's promise of exactly n elements then on_complete (1.5).
    """

    def __init__(self, n: int):
        self.n = n

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _InfiniteSubscription(subscriber)
        subscription.looping = True  # what on_subscribe requests waits until it has returned
        subscriber.on_subscribe(subscription)
        subscription.looping = False
        if subscription.requested:
            subscription.deliver_forever()


class _InfiniteSubscription:
    def __init__(self, subscriber):
        self._subscriber = subscriber
        self.looping = False
        self.requested = False
        self.cancelled = False  # recorded, never honoured

    def request(self, n) -> None:
        self.requested = True
        if not self.looping:
            self.deliver_forever()

    def cancel(self) -> None:
        self.cancelled = True

    def deliver_forever(self) -> None:
        self.looping = True
        on_next = self._subscriber.on_next
        i = 0
        while True:
            try:
                on_next(i)
            except Exception:
                pass
            i += 1


# -- 5. a correct publisher that answers a large demand with a million elements at once ----------



class MillionElementsConformant(_Sync):
    """A correct, fast synchronous (trampolined) publisher of exactly n elements that delivers all the
    demand it is given inside the request, in a plain loop: with `rstck check --stream-length 1000000`
    (or any create_publisher(1_000_000) asked for everything at once) it sends a million elements inside
    one request. It breaks no rule: the kit must pass it, however long the stream."""

    def _subscription(self, subscriber):
        return _BurstSubscription(subscriber, self.n, None)


class _BurstSubscription(_TrampolinedSubscription):

    def _loop(self) -> None:
        if self._looping:
            return
        self._looping = True
        try:
            while not self._done:
                if self._rejection is not None:
                    self._finish("on_error", self._rejection)
                elif self._sent == self._n:
                    self._finish("on_complete")
                elif self._demand > 0:
                    self._deliver_batch()
                else:
                    return
        finally:
            self._looping = False

    def _deliver_batch(self) -> None:
        """Deliver what is both demanded and left, in a plain loop that still sees, before every
        element, a cancel or a 3.9 error caused by the element before (demand taken but not used
        then goes back, so the counts stay exact)."""
        subscriber = self._subscriber
        if subscriber is None:
            return
        on_next = subscriber.on_next
        item = self._sent
        end = item + min(self._demand, self._n - item)
        self._demand -= end - item
        try:
            while item < end:
                if self._done or self._rejection is not None:
                    break
                self._sent = item + 1
                try:
                    on_next(item)
                except Exception as exc:
                    self.cancel()
                    _log_raising_subscriber("on_next", exc)
                    item += 1
                    break
                item += 1
        finally:
            self._demand += end - item


# -- 6. elements of 100 MB --------------------------------------------------------------------------


@functools.cache
def _hundred_megabytes() -> bytes:
    """One 100 MB zero-filled bytes object, made on first use and shared by every element."""
    return bytes(100 * 2**20)


class HugeElements(_Sync):
    """A correct synchronous (trampolined) publisher of n elements, each a 100 MB `bytes` object.

    All elements are one and the same object, made the first time an element is delivered (not
    at import or at build time) and kept for the life of the process; the stream is otherwise
    that of SyncTrampolined. A kit that copies, formats, hashes or pickles elements pays 100 MB
    (or 400 MB of repr) for each.

    Breaks no rule.
    """

    def _subscription(self, subscriber):
        return _MappedSubscription(subscriber, self.n, lambda k: _hundred_megabytes())


# -- 7. BaseExceptions raised by the target's code --------------------------------------------------


class KeyboardInterruptInRequest(_Sync):
    """SyncTrampolined (correct) except that every call of request raises KeyboardInterrupt at once,
    registering nothing (also when made inside on_subscribe: it then escapes from subscribe).

    Breaks 3.16 (request must return normally), 3.8 and 1.2 (nothing requested is delivered),
    and 1.9 when the request is made inside on_subscribe (subscribe raises).
    """

    def _subscription(self, subscriber):
        return _InterruptingRequestSubscription(subscriber, self.n, None)


class _InterruptingRequestSubscription(_TrampolinedSubscription):
    def request(self, n) -> None:
        raise KeyboardInterrupt(f"keyboard_interrupt_in_request: request({n!r}) raised KeyboardInterrupt on purpose")


class SystemExitInSubscribe(_Sync):
    """A publisher whose subscribe raises SystemExit(7) for every subscriber, before on_subscribe
    (subscribe(None) still raises TypeError, correctly). Were the SystemExit to reach the top,
    the process would end with status 7.

    Breaks 1.9 (subscribe must call on_subscribe and return normally).
    """

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        raise SystemExit(7)


class GeneratorExitInCancel(_Sync):
    """SyncTrampolined (correct) except that cancel, having cancelled correctly, raises GeneratorExit,
    on every call (the first and the idempotent later ones alike).

    Breaks 3.15 (cancel must return normally).
    """

    def _subscription(self, subscriber):
        return _GeneratorExitCancelSubscription(subscriber, self.n, None)


class _GeneratorExitCancelSubscription(_TrampolinedSubscription):
    def cancel(self) -> None:
        super().cancel()
        raise GeneratorExit("generator_exit_in_cancel: cancel raised GeneratorExit on purpose")


class KeyboardInterruptInOnSubscribe(Batching):
    """A subscriber (the conformant Batching, capacity 16) whose on_subscribe raises KeyboardInterrupt
    at once, whatever it is given (None included), without keeping or using the subscription.
    Its other methods are Batching's; as it never requests, they only see what arrives unasked.

    Breaks 2.13 (on_subscribe must return normally for a non-null subscription, and raise
    TypeError for None).
    """

    def on_subscribe(self, subscription) -> None:
        raise KeyboardInterrupt("keyboard_interrupt_in_on_subscribe: on_subscribe raised KeyboardInterrupt on purpose")


class SystemExitFactory:
    """A create_publisher that raises SystemExit(8) on every call, making nothing. Were the
    SystemExit to reach the top, the process would end with status 8.

    Breaks no rule of the specification (no publisher exists); it breaks the target's promise
    that create_publisher(n) makes a publisher.
    """

    def __call__(self, n: int):
        raise SystemExit(8)


class _InterruptingRepr:
    """An element whose repr (and so str and format) raises KeyboardInterrupt."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        raise KeyboardInterrupt(f"keyboard_interrupt_in_element_repr: repr of element {self.index} raised "
                                "KeyboardInterrupt on purpose")


class KeyboardInterruptInElementRepr(_Sync):
    """A correct synchronous (trampolined) publisher of n elements; the k-th is an object (with
    `.index == k`) whose __repr__ raises KeyboardInterrupt, and with it str() and format(),
    which fall back to it. Equality and hashing are object identity's.

    Breaks no rule: what elements are is the publisher's business.
    """

    def _subscription(self, subscriber):
        return _MappedSubscription(subscriber, self.n, _InterruptingRepr)


# -- 8. exceptions that cannot be printed -----------------------------------------------------------


class UnprintableError(ValueError):
    """A ValueError (so of the right type for 3.9) whose __str__ and __repr__ raise another
    UnprintableError, which cannot be printed either."""

    def __str__(self) -> str:
        raise UnprintableError("str")

    def __repr__(self) -> str:
        raise UnprintableError("repr")


class ExceptionWhoseStrRaises(_Sync):
    """SyncTrampolined, with two changes that involve an exception that cannot be printed.

    A non-positive request is answered, as 3.9 requires, with on_error, but of an
    UnprintableError (a ValueError whose __str__ and __repr__ raise another UnprintableError).
    A request(k) with k greater than the elements not yet sent nor demanded raises an
    UnprintableError from request (registering nothing), so request(2**63-1) on any non-empty
    publisher raises. Every other request, cancel, and the stream itself are correct.

    Breaks 3.16 (request must return normally) and so 3.17 (a demand of 2**63-1 is refused);
    the 3.9 error's message, which SHOULD explain, cannot even be read.
    """

    def _subscription(self, subscriber):
        return _UnprintableSubscription(subscriber, self.n, None)


class _UnprintableSubscription(_TrampolinedSubscription):
    def request(self, n) -> None:
        if self._done:
            return
        if not _is_positive_count(n):
            if self._rejection is None:
                self._rejection = UnprintableError(f"request({n!r}): non-positive requests are illegal (rule 3.9)")
            self._loop()
            return
        if n > self._n - self._sent - self._demand:
            raise UnprintableError(f"request({n!r}) asks for more than the {self._n - self._sent - self._demand} "
                                   "elements left")
        super().request(n)


# -- 9, 10. factories that do not make a publisher ----------------------------------------------


class FactoryReturns42:
    """A create_publisher that returns the int 42 on every call.

    Breaks no rule of the specification (no publisher exists); it breaks the target's promise
    that create_publisher(n) makes a publisher.
    """

    def __call__(self, n: int):
        return 42


class FactoryBlocks:
    """A create_publisher that never returns: each call waits on an Event nobody sets.

    Breaks no rule of the specification (no publisher exists); it breaks the target's promise
    that create_publisher(n) makes a publisher.
    """

    def __call__(self, n: int):
        _NeverSet().wait()


# -- 11. one element too many, then a hang --------------------------------------------------------


class OverDeliversThenHangs(_Sync):
    """SyncTrampolined except for its requests: the first positive request(k) of a subscription
    registers k + 1, delivers (one element more than requested, if the stream has it, and whatever
    requests made inside its on_next calls add), and then blocks forever on an Event nobody sets;
    so does every request after it from outside that delivery. A non-positive request before it is
    answered correctly, with on_error.

    Breaks 1.1 (on_next beyond demand), then 3.4 (request never returns; 3.16 on a "must return"
    reading) in the same call.
    """

    def _subscription(self, subscriber):
        return _OverDeliveringSubscription(subscriber, self.n, None, hang_later=True)


class _OverDeliveringSubscription(_TrampolinedSubscription):
    def __init__(self, subscriber, n: int, fail_with, *, hang_later: bool):
        super().__init__(subscriber, n, fail_with)
        self._over_delivered = False
        self._delivering_first = False
        self._hang_later = hang_later
        self._never = _NeverSet()

    def request(self, n) -> None:
        first = not self._over_delivered and _is_positive_count(n)
        if self._over_delivered and self._hang_later and not self._delivering_first:
            self._never.wait()
        if first:
            self._over_delivered = self._delivering_first = True
            n += 1
        super().request(n)
        if first and self._hang_later:
            self._delivering_first = False
            self._never.wait()


# -- 12. the process ends in request ------------------------------------------------------------


class _Counter:
    """A thread-safe count, shared by every publisher of one target."""

    def __init__(self):
        self._lock = threading.Lock()
        self._value = 0

    def next(self) -> int:
        with self._lock:
            self._value += 1
            return self._value


class ExitsTheProcessInRequest(_Sync):
    """SyncTrampolined (correct) except that the third call of request made on any subscription of
    any publisher of this target (counted across the whole target) calls os._exit(3): the
    process ends at once with status 3, no cleanup, no flush, no finally blocks.

    Breaks 3.16 (request must return normally) and 3.4, in the most final way.
    """

    def __init__(self, n: int, requests: _Counter):
        super().__init__(n)
        self.requests = requests

    def _subscription(self, subscriber):
        return _ExitingSubscription(subscriber, self.n, None, self.requests)


class _ExitingSubscription(_TrampolinedSubscription):
    def __init__(self, subscriber, n: int, fail_with, requests: _Counter):
        super().__init__(subscriber, n, fail_with)
        self._requests = requests

    def request(self, n) -> None:
        if self._requests.next() == 3:
            os._exit(3)
        super().request(n)


# -- 13. terminal escape sequences everywhere ---------------------------------------------------

_ESCAPES = [
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b[31m",  # red, never reset
    "\x1b]0;hostile window title\x07",  # set the window title (OSC 0)
    "\x1b]8;;https://example.invalid/\x1b\\click me\x1b]8;;\x1b\\",  # a hyperlink (OSC 8)
    "\r\x1b[K",  # back to the line's start, erase it
    "\x1b[1A\x1b[2K",  # up one line, erase it
    "\x1b[8m",  # hidden text, never reset
    "\x08\x08\x08\x07",  # backspaces and a bell
    "\u202e",  # right-to-left override
    "\x1b[5m\x1b[7m",  # blinking, reversed
]


def _escape_element(k: int) -> str:
    return f"{_ESCAPES[k % len(_ESCAPES)]}element {k}{_ESCAPES[(k + 1) % len(_ESCAPES)]}"


# A ValueError (so of the right type for 3.9) whose very name paints the terminal red.
EscapeError = type("Escape\x1b[31mError\x1b[2J", (ValueError,), {
    "__module__": __name__,
    "__qualname__": "Escape\x1b[31mError\x1b[2J",
    "__doc__": "A ValueError whose class name holds terminal escape sequences.",
})


class EscapeSequences(_Sync):
    """A synchronous (trampolined) publisher whose output is full of terminal escape sequences.

    The k-th element is a str holding escape sequences around "element k" (clear screen, colours
    never reset, window title, hyperlink, erase line, hidden text, backspaces and bell, a
    right-to-left override). A non-positive request is answered with on_error of an EscapeError,
    a ValueError subclass whose __name__ is "Escape\\x1b[31mError\\x1b[2J" and whose message holds
    escapes too. The first positive request(k) of a subscription registers k + 1, so one element
    more than requested is delivered (if the stream has it), to make the kit print a failure with
    its trace; all else is SyncTrampolined's, correct.

    Breaks 1.1 (one on_next beyond demand).
    """

    def _subscription(self, subscriber):
        return _EscapingSubscription(subscriber, self.n, None, hang_later=False)


class _EscapingSubscription(_OverDeliveringSubscription):
    def request(self, n) -> None:
        if not self._done and not _is_positive_count(n) and self._rejection is None:
            self._rejection = EscapeError(f"\x1b[2J\x1b[31mrequest({n!r})\x1b]0;pwned\x07 is illegal\x1b[8m "
                                          "(rule 3.9)\r\x1b[K")
        super().request(n)

    def _call(self, method: str, *args) -> None:
        if method == "on_next":
            args = (_escape_element(args[0]),)
        super()._call(method, *args)


# -- 14. an uncaught exception in the publisher's own thread --------------------------------------


class UncaughtExceptionInItsThread(ThreadPerRequest):
    """The conformant ThreadPerRequest, except that each of its delivery threads (daemon threads,
    one per request), once it has delivered everything demanded and released its lock, raises
    an uncaught RuntimeError and dies. Every signal is delivered correctly.

    Breaks no rule: the specification says nothing of a publisher's own threads.
    """

    def subscribe(self, subscriber) -> None:
        _require_subscriber(subscriber)
        subscription = _DyingThreadSubscription(subscriber, self.n)
        with subscription.signalling:
            subscription.deliver("on_subscribe", subscription)
        if self.n == 0:
            subscription.start_delivery()


class _DyingThreadSubscription(_ThreadPerRequestSubscription):
    def _deliver_demanded(self) -> None:
        super()._deliver_demanded()
        raise RuntimeError("uncaught_exception_in_its_thread: the delivery thread dies after delivering, on purpose")


# -- 15-18. factories that tamper with the process ------------------------------------------------


class ClosesStdout:
    """A create_publisher that makes a correct SyncTrampolined(n) and, the first time it is called,
    first closes sys.stdout (`sys.stdout.close()`: file descriptor 1 stays open; whatever object
    sys.stdout is at that moment is closed, and left in place).

    Breaks no rule.
    """

    def __init__(self):
        self._closed = False

    def __call__(self, n: int):
        if not self._closed:
            self._closed = True
            sys.stdout.close()
        return SyncTrampolined(n)


class ChangesWorkingDirectory:
    """A create_publisher that makes a correct SyncTrampolined(n) and, on every call, changes the
    process's working directory (os.chdir) to a temporary directory of its own, made on the first
    call and left behind.

    Breaks no rule.
    """

    def __init__(self):
        self._directory: str | None = None

    def __call__(self, n: int):
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="rstck-hostile-cwd-")
        os.chdir(self._directory)
        return SyncTrampolined(n)


class InstallsItsOwnHooks:
    """A create_publisher that makes a correct SyncTrampolined(n) and, on every call, first replaces
    sys.excepthook and threading.excepthook with functions that swallow everything and, when
    called on the main thread, installs a SIGINT handler that ignores the signal (on any other
    thread it skips that part: signal.signal works only on the main thread).

    Breaks no rule.
    """

    def __call__(self, n: int):
        sys.excepthook = _swallow
        threading.excepthook = _swallow
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, _swallow)
        return SyncTrampolined(n)


_COUNTING_MARK = "_rstck_hostile_counting_start"


class MonkeypatchesThreading:
    """A create_publisher that makes a correct SyncTrampolined(n) and, on every call, makes sure
    threading.Thread.start is its counting wrapper: unless it already is, it replaces it with a
    function that adds one to `self.starts` and calls the method it replaced (so threads still
    start, and its own wrappers never nest). The publisher itself starts no thread.

    Breaks no rule.
    """

    def __init__(self):
        self.starts = 0

    def __call__(self, n: int):
        current = threading.Thread.start
        if not getattr(current, _COUNTING_MARK, False):
            factory = self

            @functools.wraps(current)
            def start(thread, *args, **kwargs):
                factory.starts += 1
                return current(thread, *args, **kwargs)

            setattr(start, _COUNTING_MARK, True)
            threading.Thread.start = start
        return SyncTrampolined(n)


# -- the targets ------------------------------------------------------------------------------------


def _publisher_target(name: str, create_publisher, **options) -> rstck.Target:
    return rstck.InProcessTarget(create_publisher=create_publisher, name=name, **options)


def build_deadlock_between_request_and_on_next():
    return _publisher_target("deadlock_between_request_and_on_next", DeadlockBetweenRequestAndOnNext)


def build_delivers_forever_after_cancel():
    return _publisher_target("delivers_forever_after_cancel", DeliversForeverAfterCancel)


def build_request_never_returns():
    return _publisher_target("request_never_returns", RequestNeverReturns)


def build_infinite_synchronous():
    return _publisher_target("infinite_synchronous", InfiniteSynchronous)


def build_million_elements_conformant():
    return _publisher_target("million_elements_conformant", MillionElementsConformant)


def build_huge_elements():
    return _publisher_target("huge_elements", HugeElements)


def build_keyboard_interrupt_in_request():
    return _publisher_target("keyboard_interrupt_in_request", KeyboardInterruptInRequest)


def build_system_exit_in_subscribe():
    return _publisher_target("system_exit_in_subscribe", SystemExitInSubscribe)


def build_generator_exit_in_cancel():
    return _publisher_target("generator_exit_in_cancel", GeneratorExitInCancel)


def build_keyboard_interrupt_in_on_subscribe():
    return rstck.InProcessTarget(create_subscriber=KeyboardInterruptInOnSubscribe,
                                 name="keyboard_interrupt_in_on_subscribe")


def build_system_exit_in_factory():
    return _publisher_target("system_exit_in_factory", SystemExitFactory())


def build_keyboard_interrupt_in_element_repr():
    return _publisher_target("keyboard_interrupt_in_element_repr", KeyboardInterruptInElementRepr)


def build_exception_whose_str_raises():
    return _publisher_target("exception_whose_str_raises", ExceptionWhoseStrRaises)


def build_factory_returns_42():
    return _publisher_target("factory_returns_42", FactoryReturns42())


def build_factory_blocks():
    return _publisher_target("factory_blocks", FactoryBlocks())


def build_over_delivers_then_hangs():
    return _publisher_target("over_delivers_then_hangs", OverDeliversThenHangs)


def build_exits_the_process_in_request():
    requests = _Counter()  # one count per target: the third request anywhere on it ends the process
    return _publisher_target("exits_the_process_in_request", lambda n: ExitsTheProcessInRequest(n, requests))


def build_escape_sequences():
    return _publisher_target("escape_sequences", EscapeSequences)


def build_uncaught_exception_in_its_thread():
    return _publisher_target("uncaught_exception_in_its_thread", UncaughtExceptionInItsThread)


def build_closes_stdout():
    return _publisher_target("closes_stdout", ClosesStdout())


def build_changes_working_directory():
    return _publisher_target("changes_working_directory", ChangesWorkingDirectory())


def build_installs_its_own_hooks():
    return _publisher_target("installs_its_own_hooks", InstallsItsOwnHooks())


def build_monkeypatches_threading():
    return _publisher_target("monkeypatches_threading", MonkeypatchesThreading())


CASES = {
    "deadlock_between_request_and_on_next": build_deadlock_between_request_and_on_next,
    "delivers_forever_after_cancel": build_delivers_forever_after_cancel,
    "request_never_returns": build_request_never_returns,
    "infinite_synchronous": build_infinite_synchronous,
    "million_elements_conformant": build_million_elements_conformant,
    "huge_elements": build_huge_elements,
    "keyboard_interrupt_in_request": build_keyboard_interrupt_in_request,
    "system_exit_in_subscribe": build_system_exit_in_subscribe,
    "generator_exit_in_cancel": build_generator_exit_in_cancel,
    "keyboard_interrupt_in_on_subscribe": build_keyboard_interrupt_in_on_subscribe,
    "system_exit_in_factory": build_system_exit_in_factory,
    "keyboard_interrupt_in_element_repr": build_keyboard_interrupt_in_element_repr,
    "exception_whose_str_raises": build_exception_whose_str_raises,
    "factory_returns_42": build_factory_returns_42,
    "factory_blocks": build_factory_blocks,
    "over_delivers_then_hangs": build_over_delivers_then_hangs,
    "exits_the_process_in_request": build_exits_the_process_in_request,
    "escape_sequences": build_escape_sequences,
    "uncaught_exception_in_its_thread": build_uncaught_exception_in_its_thread,
    "closes_stdout": build_closes_stdout,
    "changes_working_directory": build_changes_working_directory,
    "installs_its_own_hooks": build_installs_its_own_hooks,
    "monkeypatches_threading": build_monkeypatches_threading,
}

# What a run of every check against the case must report (beyond: it ends, in bounded time and
# memory, with a verdict per check).
EXPECTED = {
    "deadlock_between_request_and_on_next": "3.4 (or 3.16) hang in request, charged to the target; the deadlocked "
                                            "non-daemon thread does not keep the run from ending",
    "delivers_forever_after_cancel": "1.1 and 1.8 fail (on_next beyond demand, after cancel; also 3.9, 3.13), "
                                     "charged to the target; the endless non-daemon flood neither exhausts memory "
                                     "nor keeps the run from ending",
    "request_never_returns": "3.4 (or 3.16) hang in request, charged to the target",
    "infinite_synchronous": "3.4 (or 3.16) hang in request and 1.1 (on_next beyond demand), charged to the target; "
                            "the endless flood inside request is cut off in bounded time and memory",
    "million_elements_conformant": "conformant, also with --stream-length 1000000 (a million elements in one "
                                   "request), within the default deadline and bounded memory",
    "huge_elements": "conformant, in bounded memory: 100 MB elements neither copied nor printed in full",
    "keyboard_interrupt_in_request": "3.16 fails (request raised KeyboardInterrupt), charged to the target; "
                                     "the run is not interrupted",
    "system_exit_in_subscribe": "1.9 fails (subscribe raised SystemExit), charged to the target; "
                                "the process does not exit",
    "generator_exit_in_cancel": "3.15 fails (cancel raised GeneratorExit), charged to the target",
    "keyboard_interrupt_in_on_subscribe": "2.13 fails (on_subscribe raised KeyboardInterrupt), charged to the "
                                          "subscriber under test; the run is not interrupted",
    "system_exit_in_factory": "error naming create_publisher (raised SystemExit), charged to the target; "
                              "the process does not exit",
    "keyboard_interrupt_in_element_repr": "conformant; elements whose repr raises are shown by a placeholder, "
                                          "the run is not interrupted",
    "exception_whose_str_raises": "3.16 (request raised) and 3.17 fail, charged to the target; 3.9's message "
                                  "unreadable; the unprintable exceptions shown by a placeholder, no crash",
    "factory_returns_42": "error naming create_publisher (returned 42, not a publisher)",
    "factory_blocks": "error naming create_publisher (never returned), charged to the target within the deadline",
    "over_delivers_then_hangs": "1.1 fails (one element beyond demand), then 3.4 (or 3.16) hang in the same "
                                "request: both shown, the violation first, charged to the target",
    "exits_the_process_in_request": "the process running the checks ends with status 3 on the third request: "
                                    "that check charged to the target (process ended), every other check a verdict",
    "escape_sequences": "1.1 fails; the report, trace, elements and the error's class name and message printed "
                        "with every escape sequence neutralised",
    "uncaught_exception_in_its_thread": "conformant; the RuntimeError that kills the publisher's thread is reported, "
                                        "not lost and not fatal",
    "closes_stdout": "conformant; the report still appears although the target closed sys.stdout",
    "changes_working_directory": "conformant; the kit's paths and output files unaffected by the target's chdir",
    "installs_its_own_hooks": "conformant; the kit's own exception reporting and Ctrl-C handling still work "
                              "despite the target's hooks",
    "monkeypatches_threading": "conformant; the kit's watching of threads still works with Thread.start wrapped",
}

deadlock_between_request_and_on_next = build_deadlock_between_request_and_on_next()
delivers_forever_after_cancel = build_delivers_forever_after_cancel()
request_never_returns = build_request_never_returns()
infinite_synchronous = build_infinite_synchronous()
million_elements_conformant = build_million_elements_conformant()
huge_elements = build_huge_elements()
keyboard_interrupt_in_request = build_keyboard_interrupt_in_request()
system_exit_in_subscribe = build_system_exit_in_subscribe()
generator_exit_in_cancel = build_generator_exit_in_cancel()
keyboard_interrupt_in_on_subscribe = build_keyboard_interrupt_in_on_subscribe()
system_exit_in_factory = build_system_exit_in_factory()
keyboard_interrupt_in_element_repr = build_keyboard_interrupt_in_element_repr()
exception_whose_str_raises = build_exception_whose_str_raises()
factory_returns_42 = build_factory_returns_42()
factory_blocks = build_factory_blocks()
over_delivers_then_hangs = build_over_delivers_then_hangs()
exits_the_process_in_request = build_exits_the_process_in_request()
escape_sequences = build_escape_sequences()
uncaught_exception_in_its_thread = build_uncaught_exception_in_its_thread()
closes_stdout = build_closes_stdout()
changes_working_directory = build_changes_working_directory()
installs_its_own_hooks = build_installs_its_own_hooks()
monkeypatches_threading = build_monkeypatches_threading()

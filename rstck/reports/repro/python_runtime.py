# ---- The kit's side, written out (rstck/reports/repro/python_runtime.py): a recording subscriber and a
# recording source that judge every signal as rstck's probes do, settling, and the verdict. Standard library only.

import collections
import gc
import importlib
import os
import sys
import threading
import time
import traceback
import weakref

MAX_DEMAND = 2**63 - 1
# How long nothing may reach the kit before a settle takes the implementation's own threads as done; override
# with RSTCK_REPRO_QUIET_S on a slow machine. A settle of an implementation that started no thread is immediate.
QUIET_S = float(os.environ.get("RSTCK_REPRO_QUIET_S", "0.2"))
LINGER_BOUND_S = 0.25  # the longest a recorder lingers inside a signal (the race window rstck held open)
STUCK_S = 0.01  # a thread of the script's that stays at one place this long waits for something
EXIT_KEPT, EXIT_BROKEN, EXIT_CANNOT_RUN = 0, 1, 2
# What the scenario says of itself (main's arguments): the target it was written for, the rule, the check's deadline.
_config = {"target": "", "rule": "", "deadline_s": 5.0, "responsiveness_bound_s": 0.25, "event_loop": False,
           "factories": {}, "attempts": 1, "session": None, "spark_master": "", "path": [], "load": None,
           "classpath": []}
_loop = []  # the event loop the scenario's calls run in, for an implementation that lives on one (asyncio)

_lock = threading.RLock()
_activity = threading.Condition(_lock)
_local = threading.local()
_transcript = []  # every call and signal, in order
_violations = []
_outstanding = {}  # id -> (text, rule, since, thread): calls into the implementation under way
_handling = {}  # id -> thread: the implementation's calls into the script (a recorder's signal) under way
_kit_threads = set()  # this script's own threads, never the implementation's
_baseline = set()  # the threads alive before the scenario began
_recorders = weakref.WeakSet()  # weakly: 3.13 needs a recorder collectable
_kit_subscriptions = []
_second_threads = []
_raises = []  # (object, method name) of every call into the implementation that raised, on-purpose errors too
_last_activity = [time.monotonic()]
_numbers = collections.Counter()


class Stop(Exception):
    """A violation that ends the scenario, as it ends rstck's check."""


class CannotRun(Exception):
    """The scenario cannot go on: the implementation broke what the reproducer relies on (not a rule)."""


class OnPurpose(RuntimeError):
    """What a recorder raises from on_next on purpose (the publisher's half of 2.13)."""


def show(value):
    if type(value).__name__ in ("Recorder", "RareSizeRecorder", "Source", "KitSubscription", "Observer"):  # by name
        return value.name
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value) if not (isinstance(value, int) and value == MAX_DEMAND) else "2**63-1"
    if isinstance(value, (str, bytes)):
        return repr(value[:40]) + ("…" if len(value) > 40 else "")
    if isinstance(value, BaseException):
        return f"{type(value).__name__}({str(value)[:120]!r})"
    return f"<{type(value).__name__}>"


class Entry:
    __slots__ = ("seq", "text", "depth", "thread", "outcome", "ident")

    def __init__(self, text, depth, thread):
        self.ident = threading.get_ident()
        with _lock:
            _numbers["seq"] += 1
            self.seq = _numbers["seq"]
            _transcript.append(self)
        self.text, self.depth, self.thread, self.outcome = text, depth, thread, ""

    def __str__(self):
        text = "  " * self.depth + self.text
        if self.outcome:
            text = f"{text:<34} -> {self.outcome}"
        if self.thread != "MainThread":
            text += f"  [{self.thread}]"
        return f"{self.seq:>5}  {text}"


def _depth():
    return getattr(_local, "depth", 0)


def log(text):
    with _lock:
        _last_activity[0] = time.monotonic()
        _activity.notify_all()
    return Entry(text, _depth(), threading.current_thread().name)


def note(text):
    return Entry(f"({text})", _depth(), threading.current_thread().name)


class _Handled:
    """An implementation's call into the script (a recorder's signal) under way on this thread."""

    def __enter__(self):
        self.key = object()
        with _lock:
            _handling[id(self.key)] = threading.get_ident()

    def __exit__(self, *exc):
        with _lock:
            del _handling[id(self.key)]


def _under_way_elsewhere():
    """The calls between the script and the implementation under way on other threads: (text, rule) of each call
    into the implementation, then ("", "") for each call into the script."""
    me = threading.get_ident()
    with _lock:
        return [(e[0], e[1]) for e in _outstanding.values() if e[3] != me] + \
            [("", "") for thread in _handling.values() if thread != me]


def _places(idents):
    """Where each thread is: its innermost frame's code and position (None: not running Python code). The collector
    is off meanwhile: CPython holds its thread list's lock while it makes the frames."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        frames = sys._current_frames()
        places = {ident: (frames[ident].f_code, frames[ident].f_lasti) if ident in frames else None
                  for ident in idents}
        del frames
    finally:
        if enabled:
            gc.enable()
    return places


def _stuck(thread, done, bound_s):
    """Wait until `done()`, or until `thread` has stayed at one place for STUCK_S (it waits for something, maybe
    for the thread that waits here), or for `bound_s`; True if it is stuck."""
    end = time.monotonic() + bound_s
    where, since = None, time.monotonic()
    while not done() and time.monotonic() < end:
        here = _places([thread.ident])[thread.ident]
        if here != where:
            where, since = here, time.monotonic()
        elif here is not None and time.monotonic() - since >= STUCK_S:
            return True
        time.sleep(0.001)
    return False


class _Nested:
    def __enter__(self):
        _local.depth = _depth() + 1

    def __exit__(self, *exc):
        _local.depth -= 1


def violation(rule, expected, observed, *, stops=True):
    with _lock:
        _violations.append((rule, expected, observed, stops))
    note(f"!! {rule}: {observed}")


def raise_pending():
    with _lock:
        stopping = [v for v in _violations if v[3]]
    if stopping:
        raise Stop()


def fail(rule, expected, observed):
    raise_pending()
    violation(rule, expected, observed)
    raise Stop()


def call(text, function, *args, rule, hang_rule=None, goes_on=False):
    """Call into the implementation: a raise breaks `rule`; a call that never returns, `hang_rule` (the
    watchdog's)."""
    entry = log(text)
    key = object()
    with _lock:
        _outstanding[id(key)] = (text, hang_rule or rule, time.monotonic(), threading.get_ident())
    calls = _local.__dict__.setdefault("calls", [])
    calls.append(getattr(function, "__name__", ""))
    try:
        with _Nested():
            in_loop(function, *args)
    except BaseException as exc:  # noqa: BLE001 - whatever the implementation raises is its own doing
        _raises.append((getattr(function, "__self__", None), getattr(function, "__name__", "")))
        if _carries_on_purpose(exc):
            entry.outcome = "raised the kit's on-purpose error back (2.13: surfaced to the caller)"
            _surfaced.append("raised")
            return exc
        entry.outcome = f"raised {show(exc)}"
        violation(rule, f"{text.split('(')[0].split('.')[-1]}() to return normally", f"#{entry.seq} raised {show(exc)}",
                  stops=not goes_on)
        return exc
    finally:
        calls.pop()
        with _lock:
            del _outstanding[id(key)]
    entry.outcome = "returned normally"
    return None


def in_loop(function, *args):
    """Make a call from the scenario as rstck makes it: for an implementation that lives on an event loop, with
    that loop running (asyncio's get_running_loop(), call_soon() and create_task() work) as one of its callbacks
    would be called, and no other callback run meanwhile: what the call schedules waits for the next settle. From
    inside a signal, as it comes. (rstck's own: rstck.core.loops.call_in_loop; a script cannot import it.)"""
    if not _loop or _loop[0].is_running():
        return function(*args)
    import asyncio

    loop = _loop[0]
    previous = asyncio.events._get_running_loop()
    loop._thread_id = threading.get_ident()  # what run_forever sets: the loop is_running() on this thread
    asyncio.events._set_running_loop(loop)
    try:
        return function(*args)
    finally:
        asyncio.events._set_running_loop(previous)
        loop._thread_id = None


def _run_the_loop():
    """Run the event loop until it has nothing ready and no timer due within the check's deadline."""
    import asyncio

    loop = _loop[0]
    while True:
        loop.run_until_complete(asyncio.sleep(0))
        timers = [t for t in getattr(loop, "_scheduled", ()) if not t.cancelled()]
        if getattr(loop, "_ready", None):
            continue
        due = min((t.when() for t in timers), default=None)
        if due is None or due - loop.time() > _config["deadline_s"]:
            return
        loop.run_until_complete(asyncio.sleep(max(0.0, due - loop.time())))


def _carries_on_purpose(exc, depth=0):
    if exc is None or depth > 8:
        return False
    if isinstance(exc, OnPurpose):
        return True
    inner = list(getattr(exc, "exceptions", ()) or ()) + [exc.__cause__, exc.__context__]
    return any(_carries_on_purpose(e, depth + 1) for e in inner if isinstance(e, BaseException))


ON_PURPOSE_TEXT = "the kit's subscriber fails on purpose (2.13)"
_surfaced = []  # how the error a recorder raised on purpose came back: "raised", "log", "thread", "loop"


def _reported(how, exc, text):
    """Something the implementation reported (a log record, a thread's death, its loop's error): a note; one that
    carries the on-purpose error surfaces it (2.13)."""
    note(text if exc is None else f"{text}: {show(exc)}")
    if _carries_on_purpose(exc) or (how == "log" and ON_PURPOSE_TEXT in text):
        _surfaced.append(how)


def _hear_reports():
    """Hear the implementation's log records (WARNING and above) from now on, as rstck does once its subscriber
    is about to raise on purpose: an implementation may load logging only to report that error."""
    import logging

    if not any(getattr(h, "hears_reports", False) for h in logging.getLogger().handlers):
        class Heard(logging.Handler):
            hears_reports = True

            def emit(self, record):
                exc = record.exc_info[1] if record.exc_info else None
                _reported("log", exc, f"log {record.levelname} {record.name}: {record.getMessage()}")

        logging.getLogger().addHandler(Heard(logging.WARNING))


def expect_raise(obj, label, method, args, *, error_type, rule):
    """A call the rule says must raise `error_type` (by class name, or a base class's) to its caller."""
    entry = log(f"{label}.{method}({', '.join(show(a) for a in args)})")
    key = object()
    with _lock:
        _outstanding[id(key)] = (entry.text, rule, time.monotonic(), threading.get_ident())
    try:
        with _Nested():
            in_loop(getattr(obj, method), *args)
    except BaseException as exc:  # noqa: BLE001
        entry.outcome = f"raised {show(exc)}"
        if error_type not in {cls.__name__ for cls in type(exc).__mro__}:
            violation(rule, f"{method}() to raise {error_type}", f"#{entry.seq} raised {show(exc)}")
    else:
        entry.outcome = "returned normally"
        violation(rule, f"{method}() to raise {error_type}", f"#{entry.seq} returned normally")
    finally:
        with _lock:
            del _outstanding[id(key)]


class SerialCalls:
    """Runs the kit's calls one at a time, never holding a lock while the implementation runs (as rstck's own):
    a call from another thread waits for the running one while it makes progress, else is queued for that thread
    to run (it may wait for the very thread that wants to call)."""

    WAIT_S = 0.1

    def __init__(self):
        self._free = threading.Condition()
        self._queue = collections.deque()
        self._owner = None

    def run(self, function):
        me = threading.get_ident()
        owner = threading._active.get(self._owner) if self._owner not in (None, me) else None
        if owner is not None:
            _stuck(owner, lambda: self._owner in (None, me), self.WAIT_S)
        with self._free:
            if self._owner not in (None, me):
                self._queue.append(function)
                return
            nested, self._owner = self._owner == me, me
        if nested:
            function()
            return
        try:
            function()
            while True:
                with self._free:
                    if not self._queue:
                        break
                    queued = self._queue.popleft()
                queued()
        finally:
            with self._free:
                self._owner = None
                leftover = list(self._queue)
                self._queue.clear()
                self._free.notify_all()
            for queued in leftover:
                self.run(queued)


def _positive(n):
    return (isinstance(n, int) and not isinstance(n, bool) and n > 0) or n == float("inf")


def _ordinary(n):
    return isinstance(n, int) and not isinstance(n, bool) and 0 < n < MAX_DEMAND


class Recorder:
    """The kit's subscriber (rstck's probe#N): records each signal, judges it against the publisher rules
    (1.1, 1.3, 1.6-1.9, 2.12), and does what rstck did from inside a signal (`when`)."""

    def __init__(self, name, *, dwell_s=0.0, fail_on_next=False, timed=False, linger_in=(), repeats=None):
        self.name = name
        self.repeats = dict(repeats or {})  # kind -> what rstck's reaction does inside such a signal (`react`)
        self.dwell_s, self.fail_on_next, self.timed, self.linger_in = dwell_s, fail_on_next, timed, set(linger_in)
        self.subscription = None
        self.subscribed = self.received = self.completed = self.requested = self.calls_after_terminal = 0
        self.elements, self.errors = [], []
        self.cancelled = self.cancel_settled = self.failed_on_purpose = False
        self.cancelled_at = None
        self.ended_unasked = False  # its stream ended before a request rstck made on a live subscription
        self.silence_rule = None
        self.reactions = {}
        self.max_depth = self.nulls = 0
        self.last_request_s = 0.0
        self._arrivals = collections.Counter()
        self._inside = {}
        self._on_next_depth = collections.Counter()
        self._calls = SerialCalls()
        self._guard = threading.Lock()
        self._in_callbacks_s = threading.local()
        _recorders.add(self)

    def __repr__(self):
        return self.name

    def when(self, kind, nth, reaction):
        """Do `reaction` inside this recorder's `nth` signal of `kind`, as rstck did."""
        self.reactions[(kind, nth)] = reaction

    def react(self, kind, repeat):
        """From now on, inside each signal of `kind`, do what `repeat` says (None: nothing): at element number
        `at` only, or while fewer than `while_below` elements came, make each of the `requests` and then `cancel`,
        `on_second_thread` if so (waited for up to LINGER_BOUND_S while the signal is in flight)."""
        if repeat is None:
            self.repeats.pop(kind, None)
        else:
            self.repeats[kind] = repeat

    def _repeat(self, repeat):
        if repeat.get("at") is not None and self.received != repeat["at"]:
            return
        if repeat.get("while_below") is not None and self.received >= repeat["while_below"]:
            return

        def act():
            for n in repeat.get("requests", ()):
                self.request(n, judged_all_the_same=repeat.get("judged_all_the_same", False))
            if repeat.get("cancel"):
                self.cancel()

        if repeat.get("on_second_thread") and _second_thread_allowed():
            on_second_thread(act, LINGER_BOUND_S)
        else:
            act()

    # -- what the publisher calls ---------------------------------------------------------------

    def on_subscribe(self, subscription):
        self._signal("on_subscribe", subscription)

    def on_next(self, item):
        self._signal("on_next", item)

    def on_error(self, error):
        self._signal("on_error", error)

    def on_complete(self):
        self._signal("on_complete", None)

    def _signal(self, kind, arg):
        with _Handled():
            self._handle(kind, arg)

    def _handle(self, kind, arg):
        started = time.perf_counter()
        me = threading.get_ident()
        shown = "" if kind == "on_complete" else ("sub" if kind == "on_subscribe" and arg is not None else show(arg))
        entry = log(f"{self.name}.{kind}({shown})")
        with self._guard:
            others = [stack[-1] for thread, stack in self._inside.items() if thread != me and stack]
            self._inside.setdefault(me, []).append(entry)
            self._arrivals[kind] += 1
            nth = self.received + 1 if kind == "on_next" else self._arrivals[kind]
            if kind == "on_next":
                self._on_next_depth[me] += 1
                self.max_depth = max(self.max_depth, self._on_next_depth[me])
        try:
            with _Nested():
                if others:
                    violation("1.3", "signals to a subscriber to be serial (not overlapping)",
                              f"#{entry.seq} {entry.text} began on {entry.thread} while #{others[0].seq} "
                              f"{others[0].text} (on {others[0].thread}) was still running")
                if arg is None and kind != "on_complete":
                    self.nulls += 1
                    entry.outcome = "raised TypeError (2.13: null argument)"
                    raise TypeError(f"{self.name}.{kind}: argument must not be None (rule 2.13)")
                self._admit(kind, entry, arg)
                if self.dwell_s and threading.current_thread() is not threading.main_thread():
                    time.sleep(self.dwell_s)  # widens the window in which an overlap can show, as rstck's does
                reaction = self.reactions.get((kind, nth))
                if reaction is not None:
                    reaction()
                repeat = self.repeats.get(kind)
                if repeat is not None:
                    self._repeat(repeat)
                if kind in self.linger_in:
                    linger(f"inside {kind}", self.name)
                if kind == "on_next" and self.fail_on_next and not self.failed_on_purpose:
                    self.failed_on_purpose, self.silence_rule, self.cancelled = True, "2.13", True
                    entry.outcome = "raised OnPurpose (on purpose)"
                    _hear_reports()
                    raise OnPurpose(ON_PURPOSE_TEXT)
        finally:
            with self._guard:
                self._inside[me].pop()
                if kind == "on_next":
                    self._on_next_depth[me] -= 1
            spent = getattr(self._in_callbacks_s, "value", 0.0)
            self._in_callbacks_s.value = spent + time.perf_counter() - started

    def _admit(self, kind, entry, arg):
        where = f"#{entry.seq} {entry.text}"
        if kind == "on_subscribe":
            self.subscribed += 1
            if self.subscribed > 1:
                violation("2.12", "on_subscribe at most once for a given subscriber", f"{where}: a second on_subscribe")
                call("sub.cancel()", arg.cancel, rule="3.15")  # 2.5: the extra subscription is cancelled
                return
            self.subscription = arg
            return
        if not self.subscribed:
            violation("1.9", "on_subscribe before any other signal", f"{where} came before on_subscribe")
        elif self.silence_rule:
            violation(self.silence_rule, "no further signal", where)
        elif self.terminated and self.calls_after_terminal:
            violation("1.6", "the subscription to count as cancelled after a terminal signal",
                      f"{where} answered a call made after the terminal signal")
        elif self.terminated:
            violation("1.7", "no signal after a terminal signal", f"{where} after {self._terminal_text()}")
        elif self.cancel_settled:
            violation("1.8", "no signal once cancel has taken effect", f"{where} after cancel had settled")
        elif kind == "on_next" and self.received + 1 > self.requested:
            violation("1.1", f"at most {show(self.requested)} on_next (the total requested)",
                      f"{where} is on_next number {self.received + 1}")
        if kind == "on_next":
            self.received += 1
            self.elements.append(arg)
        elif kind == "on_complete":
            self.completed += 1
        else:
            self.errors.append(arg)

    @property
    def terminated(self):
        return bool(self.completed or self.errors)

    def _terminal_text(self):
        return "on_complete" if self.completed else f"on_error({show(self.errors[0])})"

    def observed(self):
        parts = [f"{self.received} on_next"]
        if self.completed:
            parts.append("on_complete")
        if self.errors:
            parts.append(f"on_error({show(self.errors[0])})")
        if not self.subscribed:
            parts.insert(0, "no on_subscribe")
        return ", ".join(parts)

    # -- what the kit calls on the subscription -------------------------------------------------

    def request(self, n, *, rule_if_raises=None, judged_all_the_same=False, ended=False):
        """`ended`: rstck's probe found its stream ended here too, and made no request either."""
        if self.subscription is None:
            self._no_subscription("request")
            return
        self._calls.run(lambda: self._request_now(n, rule_if_raises, judged_all_the_same, ended))

    def _request_now(self, n, rule_if_raises, goes_on, ended):
        if self.terminated:
            note(f"{self.name} does not request({show(n)}): its stream has ended")
            self.ended_unasked = self.ended_unasked or not ended
            return
        if isinstance(n, int) and n > 0 and not self.cancelled:
            self.requested += n
        reentrant = bool(self._inside.get(threading.get_ident())) and _ordinary(n)
        rule = rule_if_raises or ("3.2" if reentrant else "3.16")
        before = getattr(self._in_callbacks_s, "value", 0.0)
        started = time.perf_counter()
        call(f"sub.request({show(n)})", self.subscription.request, n, rule=rule, goes_on=goes_on)
        if self.timed:
            spent = getattr(self._in_callbacks_s, "value", 0.0) - before
            self.last_request_s = max(0.0, time.perf_counter() - started - spent)
            self.slowest_request_s = max(getattr(self, "slowest_request_s", 0.0), self.last_request_s)

    def request_after_terminal(self, n, *, rule_if_raises="1.6"):
        """A request once the stream has ended: a NOP on a subscription that counts as cancelled (1.6)."""
        if self.subscription is None:
            self._no_subscription("request")
            return

        def now():
            self.calls_after_terminal += 1
            call(f"sub.request({show(n)})", self.subscription.request, n, rule=rule_if_raises)

        self._calls.run(now)

    def cancel(self, *, rule_if_raises="3.15"):
        if self.subscription is None:
            self._no_subscription("cancel")
            return

        def now():
            first = not self.cancelled
            if first:
                self.cancelled_at = self.received
            self.cancelled = True
            self.calls_after_terminal += self.terminated
            started = time.perf_counter()
            call("sub.cancel()", self.subscription.cancel, rule=rule_if_raises, hang_rule="3.5")
            self.cancel_took_s = time.perf_counter() - started
            if first:  # only what comes after the call returned is surely after the cancel, as rstck counts
                self.cancelled_at = self.received

        self._calls.run(now)

    def silence(self, rule):
        """From now on any signal to this recorder breaks `rule`."""
        self.silence_rule = rule

    def let_go(self):
        """Drop the recorder's own reference to its (cancelled) subscription."""
        self.subscription = None

    def linger_also(self, kind):
        self.linger_in.add(kind)

    def _no_subscription(self, what):
        if not _violations:
            violation("1.9", f"on_subscribe (a subscription to {what} on)", "no on_subscribe arrived")


class RareSizeRecorder(Recorder):
    """A recorder of a size little else in the process allocates, as rstck's probes of subscribers in a row (1.9):
    CPython hands the next one made the address, the id(), of the last one freed."""

    __slots__ = tuple(f"_padding{i}" for i in range(30))


def let_go_of(released):
    """The scenario has dropped a recorder, where rstck let go of its probe: free it now, from a cycle too."""
    if released() is not None:
        gc.collect()


class KitSubscription:
    """The subscription the kit's source hands a subscriber under test: records request and cancel, and judges
    them (2.3, 2.7, 3.1)."""

    def __init__(self, source, subscriber, name):
        self.source, self.subscriber, self.name = source, subscriber, name
        self.requests = []
        self.requested = self.delivered = self.delivered_after_cancel = self.cancels = 0
        self.cancel_settled = self.announced = self.terminal_returned = False
        self.terminal = None
        self.silence_rule = None
        self._calling = collections.Counter()
        self._guard = threading.Lock()
        _kit_subscriptions.append(self)

    def __repr__(self):
        return self.name

    @property
    def cancelled(self):
        return self.cancels > 0

    @property
    def outstanding(self):
        return max(0, self.requested - self.delivered) if not self.cancelled else 0

    def request(self, n):
        self._called("request", (n,))
        if self.terminal is None and not self.cancelled:
            if _positive(n):
                self.requested += n
            self.requests.append(n)
        self.source._on_request(self, n)

    def cancel(self):
        self._called("cancel", ())
        self.cancels += 1

    def _called(self, kind, args):
        with _Handled():
            self._judge_call(kind, args)

    def _judge_call(self, kind, args):
        me = threading.get_ident()
        entry = log(f"{self.name}.{kind}({', '.join(show(a) for a in args)})")
        terminal, returned, silence = self.terminal, self.terminal_returned, self.silence_rule
        inside = _signals_in_progress()
        with self._guard:
            overlapping = any(depth and thread != me for thread, depth in self._calling.items())
            self._calling[me] += 1
        try:
            where = f"#{entry.seq} {entry.text}"
            if overlapping:
                violation("2.7", "request and cancel called serially",
                          f"{where} began on {entry.thread} while another call was still running")
            if self.source.dwell_s and threading.current_thread() is not threading.main_thread():
                time.sleep(self.source.dwell_s)
            if self.source.linger_in_calls and not overlapping:
                linger(f"inside {kind}", self.name)
            if inside and inside[-1][0] is not self.subscriber and all(s is not self.subscriber for s, _ in inside):
                violation("3.1", "request/cancel called only from within its own subscriber",
                          f"{where} was made while another subscriber was being signalled")
            in_terminal = [k for s, k in inside if s is self.subscriber and k in ("on_complete", "on_error")]
            if silence:
                violation(silence, "no further call on the subscription", where)
            elif in_terminal:
                violation("2.3", f"no call on the subscription from within {in_terminal[-1]}", where)
            elif terminal and returned and kind == "request":
                note(f"{where} came after {terminal}: a NOP on a subscription that counts as cancelled")
        finally:
            with self._guard:
                self._calling[me] -= 1
            entry.outcome = "returned normally"


def _signals_in_progress():
    return list(getattr(_local, "signalling", ()))


class Source:
    """The kit's publisher (rstck's source#N): signals a subscriber under test when the scenario says so, or,
    given `elements`, serves them against demand and then completes (or fails with `fail_with`). It answers a
    request(n <= 0) with on_error (3.9) and never sends what the publisher rules forbid: such a signal is left
    out, as rstck leaves it out."""

    def __init__(self, name, *, elements=None, fail_with=None, dwell_s=0.0, second_subscription=False,
                 linger_in_calls=False):
        self.name = name
        self.subscriptions = []
        self.dwell_s, self.linger_in_calls = dwell_s, linger_in_calls
        self._source = iter(elements) if elements is not None else None
        self._ahead = self._nothing = object()
        self._exhausted = self._source is None
        self._fail_with = fail_with
        self._signals = SerialCalls()
        self._draining = False
        self.on_next_s = []  # how long each on_next to the subscriber under test took

    def __repr__(self):
        return self.name

    @property
    def subscription(self):
        return self.subscriptions[-1]

    def subscribe(self, subscriber):
        if subscriber is None:
            raise TypeError(f"{self.name}.subscribe: subscriber must not be None (rule 1.9)")
        for kind in (k for _, k in _signals_in_progress() if k in ("on_complete", "on_error")):
            violation("2.3", f"no call on the publisher from within {kind}", f"a subscribe from within {kind}")
        _numbers["sub"] += 1
        subscription = KitSubscription(self, subscriber, f"kit_sub{_numbers['sub']}")
        self.subscriptions.append(subscription)
        self._signals.run(lambda: self._announce(subscription))

    def _announce(self, sub):
        self._emit(sub, "on_subscribe", sub)
        if self._source is not None:
            self._drain(sub)

    def send_next(self, item, *, subscription=None, rule_if_raises="2.13"):
        sub = self.subscriptions[subscription] if subscription is not None else self.subscription
        self._signals.run(lambda: self._emit(sub, "on_next", item, rule_if_raises=rule_if_raises))

    def send_available(self, items, *, subscription=None, limit=None, after_cancel=0):
        """Send as many of `items` as the subscriber has demand for (at most `limit`), and after its cancel at most
        `after_cancel` more (2.8); how many went."""
        sub = self.subscriptions[subscription] if subscription is not None else self.subscription
        items = iter(items)
        sent = sent_after_cancel = 0
        while sub.requested > sub.delivered and (limit is None or sent < limit) and not sub.terminal:
            if sub.cancelled:
                if sent_after_cancel >= after_cancel or sub.cancel_settled:
                    break
                sent_after_cancel += 1
            item = next(items, self._nothing)
            if item is self._nothing:
                break
            index = self.subscriptions.index(sub)
            self.send_next(item, subscription=index, rule_if_raises="2.8" if sub.cancelled else "2.13")
            sent += 1
        return sent

    def can_signal(self):
        return self.subscription.terminal is None and not self.subscription.cancel_settled

    def send_complete(self, *, subscription=None, rule_if_raises="2.13"):
        sub = self.subscriptions[subscription] if subscription is not None else self.subscription
        self._signals.run(lambda: self._terminate(sub, "on_complete", rule_if_raises=rule_if_raises))

    def send_error(self, error, *, subscription=None, rule_if_raises="2.13"):
        sub = self.subscriptions[subscription] if subscription is not None else self.subscription
        self._signals.run(lambda: self._terminate(sub, "on_error", error, rule_if_raises=rule_if_raises))

    def _terminate(self, sub, kind, *args, rule_if_raises="2.13"):
        if not self._lawful(sub, kind):
            return
        sub.terminal = kind
        try:
            self._send(sub, kind, *args, rule_if_raises=rule_if_raises)
        finally:
            sub.terminal_returned = True

    def _emit(self, sub, kind, *args, rule_if_raises="2.13"):
        if not self._lawful(sub, kind):
            return
        if kind == "on_subscribe":
            sub.announced = True
        elif kind == "on_next":
            sub.delivered += 1
            sub.delivered_after_cancel += sub.cancelled
        self._send(sub, kind, *args, rule_if_raises=rule_if_raises)

    def _lawful(self, sub, kind):
        why = ""
        if kind == "on_subscribe" and sub.announced:
            why = "a second on_subscribe"
        elif kind != "on_subscribe" and not sub.announced:
            why = f"{kind} before on_subscribe"
        elif sub.terminal is not None:
            why = f"{kind} after {sub.terminal}"
        elif sub.cancel_settled:
            why = f"{kind} after the cancel took effect"
        elif kind == "on_next" and sub.delivered >= sub.requested:
            why = f"on_next number {sub.delivered + 1} of {sub.requested} requested"
        if why:
            note(f"{self.name} does not send {why}: the publisher rules forbid it")
        return not why

    def _send(self, sub, kind, *args, rule_if_raises):
        stack = _local.__dict__.setdefault("signalling", [])
        stack.append((sub.subscriber, kind))
        started = time.perf_counter()
        try:
            shown = ", ".join(show(a) for a in args)
            call(f"subscriber.{kind}({shown})", getattr(sub.subscriber, kind), *args, rule=rule_if_raises,
                 hang_rule="async.non-blocking")
        finally:
            stack.pop()
            if kind == "on_next":
                self.on_next_s.append(time.perf_counter() - started)

    def _on_request(self, sub, n):
        if sub.terminal or sub.cancelled:
            return
        if not _positive(n):
            error = ValueError(f"3.9: non-positive request signals are illegal, got {show(n)}")
            self._signals.run(lambda: self._terminate(sub, "on_error", error))
        elif self._source is not None:
            self._signals.run(lambda: self._drain(sub))

    def _drain(self, sub):
        if self._draining:
            return
        self._draining = True
        try:
            while sub.terminal is None and not sub.cancelled:
                if self._ahead is self._nothing and not self._exhausted:
                    self._ahead = next(self._source, self._nothing)
                    self._exhausted = self._ahead is self._nothing
                if self._ahead is self._nothing:
                    if self._fail_with is not None:
                        self._terminate(sub, "on_error", self._fail_with)
                    else:
                        self._terminate(sub, "on_complete")
                    return
                if sub.requested <= sub.delivered:
                    return
                item, self._ahead = self._ahead, self._nothing
                self._emit(sub, "on_next", item)
        finally:
            self._draining = False


class Observer:
    """The white-box hook a subscriber under test reports each processed signal to."""

    def __init__(self, name):
        self.name = name
        self.processed = []

    def _record(self, kind, *args):
        self.processed.append((kind, args[0] if args else None))
        log(f"{self.name}.{kind}_processed({', '.join(show(a) for a in args)})")

    def on_subscribe_processed(self):
        self._record("on_subscribe")

    def on_next_processed(self, item):
        self._record("on_next", item)

    def on_error_processed(self, error):
        self._record("on_error", error)

    def on_complete_processed(self):
        self._record("on_complete")


# -- the scenario's steps ---------------------------------------------------------------------------


def make(target, factory, *args):
    """Call one of the target's factories (a factory that raises is no rule's: the script cannot run)."""
    entry = log(f"{factory}({', '.join(show(a) for a in args)})")
    try:
        with _Nested():
            made = in_loop(getattr(target, factory), *args)
    except BaseException as exc:  # noqa: BLE001
        entry.outcome = f"raised {show(exc)}"
        raise CannotRun(f"{factory}() raised {show(exc)}") from exc
    entry.outcome = f"made a {type(made).__name__}"
    return made


def subscribe(publisher, recorder):
    """publisher.subscribe(recorder), which must return normally (1.9); settled if on_subscribe did not come."""
    call(f"publisher.subscribe({recorder.name})", publisher.subscribe, recorder, rule="1.9")
    if not recorder.subscribed:
        settle()


def _foreign_threads():
    return [t for t in threading.enumerate()
            if t.ident not in _baseline and t not in _kit_threads and t.is_alive()]


def settle():
    """Return once the implementation can do nothing more without the kit: at once when it runs no thread of its
    own; else once every thread it started has ended, or nothing has reached the kit for QUIET_S (bounded by the
    check's deadline)."""
    end = time.monotonic() + _config["deadline_s"]
    how = "idle"
    while True:
        _wait_for_calls_elsewhere(end)
        if _loop:
            _run_the_loop()
        with _activity:
            while _foreign_threads():
                quiet_for = time.monotonic() - _last_activity[0]
                if quiet_for >= QUIET_S:
                    how = f"quiet for {QUIET_S:g} s"
                    break
                if time.monotonic() >= end:
                    how = "the deadline"
                    break
                _activity.wait(min(QUIET_S - quiet_for, 0.01))
        if not _under_way_elsewhere():
            break
    for recorder in _recorders:
        recorder.cancel_settled = recorder.cancel_settled or recorder.cancelled
    for subscription in _kit_subscriptions:
        subscription.cancel_settled = subscription.cancel_settled or subscription.cancelled
    note("settled" if how == "idle" else f"settled: {how}")
    raise_pending()


def _wait_for_calls_elsewhere(end):
    """No silence is judged while a call between the script and the implementation is under way on another thread
    (the implementation goes on once it returns): wait for it, and charge a call still under way at the deadline."""
    with _activity:
        while _under_way_elsewhere():
            if time.monotonic() >= end:
                calls = [call for call in _under_way_elsewhere() if call[1]]
                if calls:
                    fail(calls[0][1], f"{calls[0][0]} to return", "it had not returned by the deadline (settling "
                         "waits for the calls under way before it judges any silence)")
                return
            _activity.wait(0.002)


def linger(why, actor=None):
    """Hold this thread (inside a signal) until the implementation's other threads signal `actor` (the recorder or
    subscription that lingers; anyone, for None), or each end or wait at one place, or LINGER_BOUND_S passes: the
    window a race needs, held open as rstck held it."""
    end = time.monotonic() + LINGER_BOUND_S
    seen = _numbers["seq"]
    started = since = time.monotonic()
    places = None
    with _activity:
        while not _implementation_signalled(seen, actor) and time.monotonic() < end:
            threads = _foreign_threads()
            if not threads:
                break
            now = _places([thread.ident for thread in threads])
            if now != places:
                places, since = now, time.monotonic()
            elif time.monotonic() - since >= STUCK_S:
                break  # each waits at one place (for a lock this thread holds, maybe): nothing more comes of waiting
            _activity.wait(0.001)
    note(f"lingered {(time.monotonic() - started) * 1000:.1f} ms {why}")


def _implementation_signalled(seen, actor):
    """Whether a thread of the implementation's recorded a call to `actor` (to anyone, for None) after entry `seen`:
    this script's own entries, and the implementation's calls to others, do not end a linger."""
    ours = {threading.main_thread().ident, threading.get_ident()} | {thread.ident for thread in _kit_threads}
    with _lock:
        later = _transcript[seen:]
    return any(entry.ident not in ours and (actor is None or entry.text.startswith(f"{actor}.")) for entry in later)


def _second_thread_allowed():
    """As rstck decides: from a thread of the implementation's, yes; from the scenario's own, only inside its
    subscribe or a signal it sends a subscriber under test (a delivery there leaves room for a second thread), and
    not for an implementation on an event loop, whose calls belong on the loop's thread."""
    if threading.current_thread() is not threading.main_thread():
        return True
    calls = _local.__dict__.get("calls", [])
    return bool(calls) and calls[-1] in ("subscribe", "on_subscribe", "on_next", "on_complete", "on_error") \
        and not _loop


def on_second_thread(function, bound_s):
    """Run `function` on a second thread while this signal is in flight, waiting for it up to `bound_s`, but only
    while it makes progress: once it waits at one place (on a lock the implementation holds across this signal),
    the signal returns and the call goes on when the implementation lets it, as rstck does."""
    thread = threading.Thread(target=function, name="second-thread", daemon=True)
    _kit_threads.add(thread)
    thread.start()
    if _stuck(thread, lambda: not thread.is_alive(), bound_s):
        note("the call on the second thread waits inside the implementation: the signal returns")
    _second_threads.append(thread)


def on_another_thread(function, rule):
    """Run `function` on another thread and wait for it (bounded by the check's deadline)."""
    thread = threading.Thread(target=function, name="another-thread", daemon=True)
    _kit_threads.add(thread)
    thread.start()
    thread.join(_config["deadline_s"])
    if thread.is_alive():
        fail(rule, "the call made on another thread to return", "it had not returned by the deadline")


def join_second_threads(rule):
    for thread in _second_threads:
        thread.join(_config["deadline_s"])
        if thread.is_alive():
            fail(rule, "the call made on the kit's second thread to return", "it had not returned by the deadline")


def feed(source, count=32, *, burst=False, after_cancel=0):
    """Offer `count` elements as demand allows, settling after each (or, in a burst, after all the demand there
    is); once the subscriber cancels, at most `after_cancel` more before the next settle (2.8)."""
    sent = 0
    while sent < count:
        subscription = source.subscription
        if subscription.terminal or subscription.cancel_settled:
            break
        went = source.send_available(range(sent, count), limit=None if burst else 1, after_cancel=after_cancel)
        settle()
        if not went:
            break
        sent += went
    return sent


def end_stream(source, terminal, *, after, **send_options):
    """Offer `after` elements, then end the stream with `terminal` (unless the subscriber cancelled)."""
    sent = feed(source, max(0, after - 1))
    subscription = source.subscription
    if sent < after and not subscription.cancelled and source.can_signal():
        source.send_available([sent], limit=1)
    if not subscription.cancelled and source.can_signal():
        if terminal == "on_complete":
            source.send_complete(**send_options)
        else:
            source.send_error(RuntimeError("the kit's source fails on purpose"), **send_options)
    settle()


def pump(upstream, downstream, want, elements):
    """Serve a processor's upstream demand from `elements` until downstream has `want` elements."""
    while downstream.received < want and not downstream.terminated:
        if not upstream.send_available(elements, limit=1):
            break
        settle()


def serve_upstream(upstream, downstream, n):
    """Send upstream as many as the processor asked for (never more) until `n` went, downstream ended, or the
    processor asks for nothing more."""
    sent = 0
    while sent < n and not downstream.terminated:
        went = upstream.send_available(range(sent, n))
        sent += went
        if went:
            settle()
        elif not _awaited(lambda: upstream.subscription.outstanding > 0 or downstream.terminated):
            break
    settle()


def elements(over, position):
    """Elements a scenario hands out bit by bit (shared between its steps)."""
    items = iter(over)
    for _ in range(position):
        next(items)
    return items


def yield_to_implementation():
    linger("before the next step")


def _awaited(arrived):
    """Whether an expected signal came: where the implementation runs threads of its own, waited for up to the
    check's deadline, so that a slow implementation is not failed early."""
    end = time.monotonic() + _config["deadline_s"]
    with _activity:
        while not arrived() and _foreign_threads() and time.monotonic() < end:
            _activity.wait(0.01)
    return arrived()


def expect(recorder, what, rule, *, count=None, error_type=None):
    """What rstck expected at this point (its check's expectation)."""
    raise_pending()
    if what == "subscribed" or _awaited(lambda: recorder.subscribed):
        if not recorder.subscribed:
            fail(rule, "on_subscribe", "no on_subscribe arrived")
    if what == "elements":
        _awaited(lambda: recorder.received >= count or recorder.terminated)
        if recorder.received > count:
            raise CannotRun(f"the target broke its contract: create_publisher(n) makes exactly n elements, "
                            f"{recorder.name} received {recorder.received} of {count}")
        if recorder.received != count:
            fail(rule, f"{count} on_next", recorder.observed())
    elif what == "complete":
        if not _awaited(lambda: recorder.terminated) or not recorder.completed:
            fail(rule, "on_complete", recorder.observed())
    elif what == "error":
        if recorder.completed and recorder.ended_unasked:
            note(f"{recorder.name}'s stream completed before a request rstck made on a live subscription: "
                 "there is no answer to judge")
            return
        if not _awaited(lambda: recorder.terminated) or not recorder.errors:
            fail(rule, f"on_error({error_type})", recorder.observed())
        if error_type not in {cls.__name__ for cls in type(recorder.errors[0]).__mro__}:
            fail(rule, f"on_error({error_type})", f"on_error({show(recorder.errors[0])})")


# -- what a check judged itself, at its end -----------------------------------------------------------


def expect_served(recorder, count, rule, *, exact, unless):
    """`count` elements (exactly, or at least), unless the stream ended (`unless`: "error", "terminal")."""
    _awaited(lambda: recorder.received >= count or recorder.terminated)
    ended = recorder.errors if unless == "error" else recorder.terminated
    served = recorder.received == count if exact else recorder.received >= count
    if not (ended or served):
        fail(rule, f"{count} on_next, or an {'on_error' if unless == 'error' else 'end of the stream'}",
             recorder.observed())


def expect_requested(source, rule):
    """The subscriber under test signalled demand (n > 0) on the kit's subscription."""
    subscription = source.subscription
    if not _awaited(lambda: subscription.requested > 0):
        made = ", ".join(f"request({show(n)})" for n in subscription.requests) or "no request"
        fail(rule, "request(n) with n > 0 after on_subscribe", f"{made} once settled")


def expect_batch_demand(source, rule):
    subscription = source.subscription
    if subscription.delivered >= 4 and subscription.requests and max(subscription.requests) <= 1:
        fail(rule, "requests for more than one element",
             f"{len(subscription.requests)} requests of 1 for {subscription.delivered} elements")


def expect_on_next_within(source, rule):
    slowest = max(source.on_next_s, default=0.0)
    if slowest > _config["responsiveness_bound_s"]:
        fail(rule, f"on_next to return within {_config['responsiveness_bound_s']:g} s",
             f"the slowest took {slowest:.3f} s")


def expect_cancelled(source, rule, *, subscription=None):
    """The kit's subscription was cancelled (waited for up to the check's deadline)."""
    kit_subscription = source.subscriptions[subscription] if subscription is not None else source.subscription
    if not _awaited(lambda: kit_subscription.cancelled):
        fail(rule, f"cancel() on {kit_subscription.name}", "it was left open")


def expect_processed_in_order(observer, source, rule):
    """2.11: on_subscribe, then the elements sent, in order and each once, then the terminal signal once."""
    subscription = source.subscription
    sent = list(range(subscription.delivered))
    processed = [item for kind, item in observer.processed if kind == "on_next"]
    kinds = [kind for kind, _ in observer.processed]
    expected = f"on_subscribe, then {len(sent)} elements in order, each once"
    if kinds[:1] != ["on_subscribe"] or kinds.count("on_subscribe") != 1:
        fail(rule, expected, f"processed {kinds[:3]} first")
    if processed != sent[:len(processed)]:
        fail(rule, expected, f"processing diverged: processed {processed[:8]}")
    if not subscription.cancelled and len(processed) < len(sent):
        fail(rule, expected, f"only {len(processed)} processed, and it never cancelled")
    terminal_sent = ["on_complete"] if subscription.terminal == "on_complete" else []
    terminal = [kind for kind in kinds if kind in ("on_complete", "on_error")]
    if terminal != terminal_sent and not (subscription.cancelled and not terminal):
        fail(rule, "the terminal signal processed once", f"processed {', '.join(terminal) or 'none'}")


def expect_bounded_recursion(recorder, rule):
    if recorder.received >= 4 and recorder.max_depth >= recorder.received:
        fail(rule, "an upper bound on request -> on_next recursion",
             f"each of {recorder.received} on_next ran inside the previous one's request (depth {recorder.max_depth})")


def expect_depth_one(recorder, rule):
    if recorder.max_depth > 1:
        fail(rule, "on_next never nested in on_next (depth 1)", f"depth {recorder.max_depth}")


def expect_request_within(recorder, rule):
    slowest = getattr(recorder, "slowest_request_s", 0.0)
    if slowest > _config["responsiveness_bound_s"]:
        fail(rule, f"request to return within {_config['responsiveness_bound_s']:g} s",
             f"the slowest took {slowest:.3f} s")


def expect_cancel_within(recorder, rule):
    took = getattr(recorder, "cancel_took_s", 0.0)
    if took > _config["responsiveness_bound_s"]:
        fail(rule, f"cancel to return within {_config['responsiveness_bound_s']:g} s", f"it took {took:.3f} s")


def expect_error_explains(recorder, rule, *, words):
    message = str(recorder.errors[0]) if recorder.errors else ""
    if not any(word in message.lower() for word in words):
        fail(rule, "a message explaining that non-positive requests are illegal", f"message {show(message)}")


def expect_stopped_after_cancel(recorder, count, rule):
    """3.12: a stream of `count` cancelled before its end does not reach it."""
    at = recorder.cancelled_at
    if at is None or at >= count:
        note(f"the cancel reached the publisher only after all {count} elements: nothing to judge")
        return
    if recorder.completed or recorder.received >= count:
        fail(rule, "the publisher to stop signalling after cancel",
             f"cancelled at on_next {at} of {count}, it went on to {recorder.observed()}")


def expect_collected(alive, name, rule):
    """3.13: the recorder, cancelled and let go of by the script, is unreachable while the publisher lives."""
    gc.collect()
    settle()
    gc.collect()
    if alive() is not None:
        holders = sorted({type(r).__name__ for r in gc.get_referrers(alive()) if type(r).__name__ != "frame"})
        fail(rule, f"{name} to be collectable once cancelled",
             f"it is still referenced (by {', '.join(holders) or 'something'}) while the publisher is alive")


def expect_surfaced(recorder, rule):
    """2.13 (the caller's duty): the error the recorder raised on purpose was made known: raised back to the
    caller, logged, or handed to a thread's or the event loop's exception hook."""
    if recorder.failed_on_purpose and not _surfaced:
        fail(rule, "the subscriber's error raised to the caller, logged, or handed to an exception hook",
             "nothing showed it: it was swallowed")


def expect_elements(recorder, elements, rule):
    if recorder.elements != elements:
        fail(rule, f"the elements {elements}", f"{recorder.elements[:10]} ({recorder.observed()})")


def expect_elements_sent(recorder, source, rule):
    """Downstream got, in order, every element the kit's source sent upstream."""
    sent = list(range(source.subscription.delivered))
    if recorder.elements != sent:
        fail(rule, f"the {len(sent)} elements sent upstream, in order",
             f"{recorder.elements[:10]} ({recorder.observed()})")


def expect_went_on_or_failed(recorder, count, rule):
    """4.2: after the upstream's on_error, on_error downstream, or a recovery (more elements, on_complete)."""
    if not (recorder.errors or recorder.completed or recorder.received > count):
        fail(rule, "on_error propagated downstream, or a recovery",
             f"downstream heard nothing after the upstream error ({recorder.observed()})")


def expect_returned_normally(subject, rule, *, method):
    """Every `method` call on `subject` returned normally (raising what its own subscriber raised included)."""
    if any(obj is subject and name == method for obj, name in _raises):
        fail(rule, f"{method}() to return normally", f"a {method}() call raised (see the transcript)")


def expect_no_null(recorder, rule):
    if recorder.nulls:
        fail(rule, "the None argument rejected, and not signalled downstream", f"{recorder.name} got on_next(None)")


def expect_subscribed(recorder, rule):
    if not _awaited(lambda: recorder.subscribed):
        fail(rule, "subscribe to call on_subscribe", f"{recorder.name} got no on_subscribe once settled")


def expect_few_after_cancel(recorder, count, rule):
    """3.12's "eventually": at most `count` on_next after the cancel."""
    if recorder.cancelled_at is not None and recorder.received - recorder.cancelled_at > count:
        fail(rule, f"at most {count} on_next after cancel (eventually none)",
             f"{recorder.name} received {recorder.received - recorder.cancelled_at} on_next after its cancel")


def expect_nesting_below(recorder, count, rule):
    if recorder.max_depth >= count:
        fail(rule, "an upper bound on request -> on_next recursion",
             f"on_next to {recorder.name} nested {recorder.max_depth} deep in on_next")


def expect_failed_publisher_errors(recorder, rule):
    """1.4: a failed publisher ends the stream with on_error, and never with on_complete."""
    if recorder.completed or (not recorder.terminated and not recorder.cancelled and recorder.requested > 0):
        fail(rule, "on_error from a failed publisher", recorder.observed())


def expect_demand_served(recorder, count, rule):
    """Outstanding demand on a publisher of `count` elements is served (3.8), and its end signalled (1.5)."""
    if recorder.terminated or recorder.cancelled or recorder.requested <= recorder.received:
        return
    if recorder.received < count:
        fail("3.8", "the outstanding demand served (or a terminal signal)",
             f"{recorder.name} got {recorder.received} of {count} elements; nothing more came once settled")
    fail("1.5", "on_complete after the last element", f"{recorder.name} got all {count} elements, and no on_complete")


def expect_range_error(recorder, rule, *, error_type):
    """3.9: after a non-positive request on a live subscription, on_error with the range error."""
    if not recorder.terminated and recorder.cancelled:
        return
    if not recorder.errors or error_type not in {cls.__name__ for cls in type(recorder.errors[0]).__mro__}:
        fail(rule, f"on_error({error_type}) after a non-positive request", recorder.observed())


# -- running it -------------------------------------------------------------------------------------


def _watchdog():
    """A call into the implementation that has not returned after the check's deadline is a hang: the verdict."""
    while True:
        time.sleep(0.02)
        now = time.monotonic()
        with _lock:
            outstanding = list(_outstanding.values())
        if any(now - entry[2] > _config["deadline_s"] for entry in outstanding):
            # The innermost call, begun last, is what the others wait for: the verdict is its own, once it too is
            # past the deadline (as rstck judges it), however long after the outer call it began.
            text, rule, began, _thread = max(outstanding, key=lambda entry: entry[2])
            if now - began <= _config["deadline_s"]:
                continue
            violation(rule, f"{text} to return", f"it had not returned after {_config['deadline_s']:g} s")
            _report()
            sys.stdout.flush()  # os._exit flushes nothing: a piped report would be lost
            os._exit(EXIT_BROKEN)


def _report():
    with _lock:
        lines = [str(entry) for entry in list(_transcript)]
        found = list(_violations)
    print("\n".join(lines))
    if not found:
        print(f"\nkept: nothing broke {_config['rule']} (nor any rule rstck's probes judge) in this scenario")
        return EXIT_KEPT
    # One verdict line, the scenario's own rule's violation if it has one; every other violation is a detail after it.
    verdict = next((broken for broken in found if broken[0] == _config["rule"]), found[0])
    print(f"\nBROKEN {verdict[0]}: expected {verdict[1]}; observed {verdict[2]}")
    others = [broken for broken in found if broken is not verdict]
    if others:
        print(f"  and {len(others)} more violation{'s' * (len(others) != 1)} in this run:")
    for rule, expected, observed, _ in others:
        print(f"    {rule}: expected {expected}; observed {observed}")
    return EXIT_BROKEN


def _imported(spec):
    """MODULE:QUALNAME, or a MODULE, imported from the project's root (or the folder of it the script names)."""
    module_name, _, name = spec.partition(":")
    for folder in [os.getcwd(), *(os.path.join(os.getcwd(), folder) for folder in _config["path"])]:
        if folder not in sys.path:
            sys.path.insert(0, folder)
    found = importlib.import_module(module_name)
    for part in name.split(".") if name else ():
        found = getattr(found, part)
    return found


class _Factories:
    """The target's factories without the target's module: each imported by its own name, or written out as a lambda
    over names imported by theirs. Given a session (Spark's), each is handed it first, as the target hands it."""

    def __init__(self, factories, session=None):
        for factory, spec in factories.items():
            made = _imported(spec) if isinstance(spec, str) else _written_out(*spec)
            setattr(self, factory, made if session is None else _handed(session, made))


def _written_out(code, names):
    return eval(code, {name: _imported(where) for name, where in names.items()})  # noqa: S307 - the kit wrote it


def _shown(factories):
    return ", ".join(spec if isinstance(spec, str) else spec[0] for spec in factories.values())


def _handed(session, factory):
    return lambda *args: factory(session, *args)


# How long a Spark session may take to start (a JVM; longer on a loaded machine, or registering with a cluster).
SPARK_START_S = 120.0


def spark_session():
    """The Spark session the factories are handed, got as the implementation's own code gets one: the master the
    target names, else $RSTCK_SPARK_MASTER, else an embedded local[*]. Its start is bounded (SPARK_START_S)."""
    master = _config["spark_master"] or os.environ.get("RSTCK_SPARK_MASTER") or "local[*]"
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors run this Python
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName("rstck reproducer").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    if master.startswith("local"):  # an embedded session talks to nobody
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    started, outcome = time.monotonic(), {}

    def start():
        try:
            session = builder.getOrCreate()
            session.sparkContext.setLogLevel("ERROR")
            session.range(1).collect()  # the first job loads most of Spark's code: paid here, not in a deadline
            outcome["session"] = session
        except BaseException as exc:  # noqa: BLE001 - said below: the script cannot run
            outcome["error"] = exc

    thread = threading.Thread(target=start, name="spark-start", daemon=True)
    thread.start()
    thread.join(SPARK_START_S)
    if "session" not in outcome:
        why = f"raised {show(outcome['error'])}" if "error" in outcome else f"did not start within {SPARK_START_S:g} s"
        raise CannotRun(f"the Spark session ({master}) {why}")
    _config["spark_master"], _config["spark_start_s"] = master, time.monotonic() - started
    return outcome["session"]


def main(scenario, **config):
    """Load the target (the script's own, or MODULE:ATTR given as the argument), play the scenario, judge."""
    _config.update(config)
    given = sys.argv[1] if len(sys.argv) > 1 else ""
    spec = given or _config["target"]
    session = None
    kit_before = "rstck" in sys.modules  # a process that had it before the target loaded (a test's) says nothing
    if _config["session"] is not None:  # before the baseline of threads: the session's own are not the implementation's
        try:
            session = _config["session"]()
        except BaseException as exc:  # noqa: BLE001 - no session (no pyspark, no Java): the script cannot run
            if not isinstance(exc, CannotRun):
                traceback.print_exc()
            print(f"\ncannot run: {exc if isinstance(exc, CannotRun) else 'no Spark session: ' + show(exc)}")
            sys.exit(EXIT_CANNOT_RUN)
    try:
        # Named on the command line: that target's factories; else the factories themselves, where each has a name
        # of its own, or the target's module.
        if _config["factories"] and not given:
            target, spec = _Factories(_config["factories"], session), _shown(_config["factories"])
        elif _config["load"] is not None:  # a target of another kind than MODULE:ATTR (jvm:CLASS)
            target = _config["load"](spec)
        else:
            target = _imported(spec)
    except CannotRun as exc:  # what the target needs is missing (a JDK, py4j)
        print(f"\ncannot run: {exc}")
        sys.exit(EXIT_CANNOT_RUN)
    except BaseException:  # noqa: BLE001 - whatever stops the import, the script cannot run
        traceback.print_exc()
        print(f"\ncannot run: {spec} does not load (run from the project's root, or name MODULE:ATTR)")
        sys.exit(EXIT_CANNOT_RUN)
    if _config["event_loop"]:
        import asyncio

        _loop.append(asyncio.new_event_loop())
        _loop[0].set_exception_handler(
            lambda _loop_, context: _reported("loop", context.get("exception"), f"the loop: {context.get('message')}"))
    _baseline.update(t.ident for t in threading.enumerate())
    threading.excepthook = lambda args: _reported("thread", args.exc_value, f"thread {args.thread.name} raised")
    watchdog = threading.Thread(target=_watchdog, name="watchdog", daemon=True)
    _kit_threads.add(watchdog)
    watchdog.start()
    print(f"reproducing {_config['rule']} against {spec}\n")
    if "rstck" in sys.modules and not kit_before and not given:
        print(f"(not standalone: loading {spec} imported rstck; keep the implementation in a module that does not "
              "import rstck, and the target in one that does, its factories classes or lambdas over the "
              "implementation's names: docs/reproducers.md)\n")
    if session is not None:
        print(f"(a Spark session, {_config['spark_master']}, started in {_config['spark_start_s']:.1f} s)\n")
    try:
        scenario(target)
    except Stop:
        pass
    except CannotRun as exc:
        _report()
        print(f"\ncannot run: {exc}")
        sys.stdout.flush()
        os._exit(EXIT_CANNOT_RUN)
    except BaseException:  # noqa: BLE001 - a defect of this script, not of the implementation
        _report()
        traceback.print_exc()
        sys.stdout.flush()
        os._exit(EXIT_CANNOT_RUN)
    code = _report()
    attempt = int(os.environ.get("RSTCK_REPRO_ATTEMPT", "1"))
    if code == EXIT_KEPT and attempt < _config["attempts"]:
        # A race: the window the scenario holds open is wide, but a loaded machine may still let it pass unseen.
        print(f"\nthe race did not show in attempt {attempt} of {_config['attempts']}: again, in a fresh process\n")
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "RSTCK_REPRO_ATTEMPT": str(attempt + 1)})
    sys.stdout.flush()
    os._exit(code)  # threads the implementation left must not keep the verdict waiting

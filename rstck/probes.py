"""Kit-side instrumented ends: the probe subscriber that watches a publisher under test.

A probe is a well-behaved subscriber (it obeys the 2.x rules itself) that records
every call into the trace and monitors the publisher's rules as signals arrive. A
monitor never raises into the publisher: it records the violation with the id of
the rule it breaks, and the session raises it on the check's own thread at the next
settle or expectation.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from .signals import Label, Signal, show
from .verdict import RuleViolation

Reaction = Callable[..., None]
_NOTHING = object()


class ProbeSubscriber:
    """Subscribes to a publisher under test, requests when told, and records what arrives.

    `on_subscribe` and `on_next` reactions run synchronously inside the signal, the only
    way to exercise request-from-within-on_next (3.2, 3.3) or cancel mid-stream.
    `dwell_s` holds each signal that arrives on a foreign thread for that long, so that
    an overlapping call from another thread (1.3) has the chance to show itself.
    """

    def __init__(self, session: Any, name: str, *, on_subscribe: Reaction | None = None,
                 on_next: Reaction | None = None, dwell_s: float = 0.0,
                 raise_in_on_next: BaseException | None = None):
        self._session = session
        self.trace = session.trace
        self.name = name
        self.subscription: Any = None
        self.subscription_name = ""
        self.subscribed = 0
        self.elements: list[Any] = []
        self.completed = 0
        self.errors: list[BaseException] = []
        self.requested = 0  # demand signalled while the subscription was live
        self.cancelled = False
        self.cancel_settled = False
        self.silence_rule: str | None = None
        self.calls_after_terminal = 0  # request/cancel made after on_complete/on_error (1.6)
        self.max_depth = 0  # deepest nesting of on_next within on_next on one thread
        self.reactions = {"on_subscribe": on_subscribe, "on_next": on_next}
        self.dwell_s = dwell_s
        self.raise_in_on_next = raise_in_on_next  # break 2.13 once, on purpose (the publisher's half of 2.13)
        self.last_request_s = 0.0  # duration of the last request, less time spent in this probe
        self._lock = threading.Lock()
        self._inside: dict[int, int] = {}  # thread id -> nesting of on_* calls on that thread
        self._on_next_depth: dict[int, int] = {}
        self._callback_ns = threading.local()

    def __repr__(self) -> str:
        return self.name

    # -- what the publisher calls ---------------------------------------------------

    def on_subscribe(self, subscription: Any) -> None:
        self._signal("on_subscribe", (subscription,), subscription is None)

    def on_next(self, item: Any) -> None:
        self._signal("on_next", (item,), item is None)

    def on_error(self, error: BaseException) -> None:
        self._signal("on_error", (error,), error is None)

    def on_complete(self) -> None:
        self._signal("on_complete", (), False)

    def _signal(self, kind: str, args: tuple, null_argument: bool) -> None:
        started = time.perf_counter_ns()
        me = threading.get_ident()
        if kind == "on_subscribe" and args[0] is not None:
            shown: tuple = (Label(self._session.label(args[0], "sub")),)
        else:
            shown = args
        signal = self.trace.record(kind, self.name, shown)
        with self._lock:
            others = [t for t, depth in self._inside.items() if depth and t != me]
            self._inside[me] = self._inside.get(me, 0) + 1
            if kind == "on_next":
                depth = self._on_next_depth.get(me, 0) + 1
                self._on_next_depth[me] = depth
                self.max_depth = max(self.max_depth, depth)
        self.trace.enter()
        try:
            if others:
                self._violate("1.3", "signals to a subscriber to be serial (not overlapping)",
                              f"#{signal.seq} {kind} began on {signal.thread} while another signal "
                              "was still running on a different thread")
            if null_argument:
                signal.outcome = "raised TypeError (2.13: null argument)"
                raise TypeError(f"{self.name}.{kind}: argument must not be None (rule 2.13)")
            self._admit(kind, signal, args)
            if self.dwell_s and threading.current_thread() is not self._session.check_thread:
                time.sleep(self.dwell_s)  # widen the window in which an overlap can show
            reaction = self.reactions.get(kind)
            if reaction is not None:
                self._session.run_reaction(reaction, self, *args)
            if kind == "on_next" and self.raise_in_on_next is not None and not self.silence_rule:
                self.silence("2.13")  # from now on the subscription counts as cancelled, by both sides
                self.cancelled = True
                signal.outcome = f"raised {show(self.raise_in_on_next)} (on purpose)"
                raise self.raise_in_on_next
        finally:
            self.trace.leave()
            with self._lock:
                self._inside[me] -= 1
                if kind == "on_next":
                    self._on_next_depth[me] -= 1
            spent = getattr(self._callback_ns, "value", 0)
            self._callback_ns.value = spent + time.perf_counter_ns() - started

    def _admit(self, kind: str, signal: Signal, args: tuple) -> None:
        """Check the signal against the publisher's rules, then take it in."""
        where = f"#{signal.seq} {signal.call_text()}"
        if kind == "on_subscribe":
            self.subscribed += 1
            if self.subscribed > 1:
                self._violate("2.12", "on_subscribe at most once for a given subscriber",
                              f"{where}: a second on_subscribe")
                self._session.call(args[0], "cancel", (), actor=self._session.label(args[0], "sub"),
                                   rule_if_raises="3.15")  # 2.5: the probe cancels the extra subscription
                return
            self.subscription = args[0]
            self.subscription_name = self._session.label(args[0], "sub")
            return
        if not self.subscribed:
            self._violate("1.9", "on_subscribe before any other signal", f"{where} came before on_subscribe")
        elif self.silence_rule:
            self._violate(self.silence_rule, "no further signal", f"{where}")
        elif self.terminated and self.calls_after_terminal:
            self._violate("1.6", "the subscription to count as cancelled after a terminal signal",
                          f"{where} answered a call made after {self._terminal_text()}")
        elif self.terminated:
            self._violate("1.7", "no signal after a terminal signal", f"{where} after {self._terminal_text()}")
        elif self.cancel_settled:
            self._violate("1.8", "no signal once cancel has taken effect", f"{where} after cancel had settled")
        elif kind == "on_next" and len(self.elements) + 1 > self.requested:
            self._violate("1.1", f"at most {self.requested} on_next (the total requested)",
                          f"{where} is on_next number {len(self.elements) + 1}")
        if kind == "on_next":
            self.elements.append(args[0])
        elif kind == "on_complete":
            self.completed += 1
        else:
            self.errors.append(args[0])

    # -- what the kit calls on the subscription -------------------------------------

    def request(self, n: int, *, rule_if_raises: str | None = None) -> None:
        """Signal demand. A raise is a violation of 3.16 (3.2 when called from within a signal)."""
        if self.subscription is None:
            self._no_subscription("request")
            return
        if self.terminated:
            self.calls_after_terminal += 1
        elif n > 0 and not self.cancelled:
            self.requested += n
        reentrant = self._inside.get(threading.get_ident(), 0) > 0
        rule = rule_if_raises or ("3.2" if reentrant else "3.16")
        before = getattr(self._callback_ns, "value", 0)
        started = time.perf_counter_ns()
        self._session.call(self.subscription, "request", (n,), actor=self.subscription_name, rule_if_raises=rule)
        spent_in_probe = getattr(self._callback_ns, "value", 0) - before
        self.last_request_s = max(0, time.perf_counter_ns() - started - spent_in_probe) / 1e9

    def cancel(self, *, rule_if_raises: str = "3.15") -> None:
        if self.subscription is None:
            self._no_subscription("cancel")
            return
        self.cancelled = True
        self.calls_after_terminal += self.terminated
        self._session.call(self.subscription, "cancel", (), actor=self.subscription_name, rule_if_raises=rule_if_raises)

    def _no_subscription(self, call: str) -> None:
        if not self._session.violations:  # once is evidence enough
            self._violate("1.9", f"on_subscribe (a subscription to {call} on)", "no on_subscribe arrived")

    def silence(self, rule: str) -> None:
        """From now on any signal to this probe violates `rule`."""
        self.silence_rule = rule

    # -- state and expectations (called on the check's thread, after settle) ----------

    @property
    def terminated(self) -> bool:
        return bool(self.completed or self.errors)

    @property
    def signal_count(self) -> int:
        return self.subscribed + len(self.elements) + self.completed + len(self.errors)

    def _terminal_text(self) -> str:
        return "on_complete" if self.completed else f"on_error({show(self.errors[0])})"

    def _violate(self, rule: str, expected: str, observed: str) -> None:
        self._session.violate(rule, expected, observed)

    def _fail(self, rule: str, expected: str, observed: str) -> None:
        self._session.raise_pending()
        raise RuleViolation(rule, expected, observed)

    def observed(self) -> str:
        parts = [f"{len(self.elements)} on_next"]
        if self.completed:
            parts.append("on_complete")
        if self.errors:
            parts.append(f"on_error({show(self.errors[0])})")
        if not self.subscribed:
            parts.insert(0, "no on_subscribe")
        return ", ".join(parts)

    def expect_subscribed(self, rule: str = "1.9") -> None:
        if not self.subscribed:
            self._fail(rule, "on_subscribe", "no on_subscribe arrived")

    def expect_elements(self, count: int, rule: str) -> None:
        self.expect_subscribed()
        if len(self.elements) != count:
            self._fail(rule, f"{count} on_next", self.observed())

    def expect_complete(self, rule: str = "1.5") -> None:
        self.expect_subscribed()
        if not self.completed:
            self._fail(rule, "on_complete", self.observed())

    def expect_error(self, error_type: str, rule: str) -> BaseException:
        """Expect on_error with an exception whose class (or a base class) is named `error_type`."""
        self.expect_subscribed()
        if not self.errors:
            self._fail(rule, f"on_error({error_type})", self.observed())
        error = self.errors[0]
        if error_type not in {cls.__name__ for cls in type(error).__mro__}:
            self._fail(rule, f"on_error({error_type})", f"on_error({show(error)})")
        return error

    def expect_not_terminated(self, rule: str) -> None:
        if self.terminated:
            self._fail(rule, "no terminal signal", self.observed())


class ProbeSubscription:
    """The subscription the kit's probe publisher hands to a subscriber under test.

    It records every request/cancel and monitors the subscriber's rules on each call:
    2.3 (no call from inside on_complete/on_error), 2.4 (none after them), 2.7 (calls
    serial across threads) and 3.1 (called only from its own subscriber's context).
    """

    def __init__(self, publisher: "ProbePublisher", subscriber: Any, name: str):
        self.publisher = publisher
        self.subscriber = subscriber
        self.name = name
        self.requests: list[int] = []
        self.requested = 0  # positive demand received while live
        self.delivered = 0
        self.cancels = 0
        self.terminal: str | None = None  # "on_complete" / "on_error" once sent
        self.terminal_returned = False
        self.silence_rule: str | None = None
        self._lock = threading.Lock()
        self._calling: dict[int, int] = {}  # thread id -> nesting of request/cancel calls

    def __repr__(self) -> str:
        return self.name

    @property
    def cancelled(self) -> bool:
        return self.cancels > 0

    @property
    def outstanding(self) -> int:
        return max(0, self.requested - self.delivered) if not self.cancelled else 0

    def request(self, n: int) -> None:
        self._called("request", (n,))
        if self.terminal is None and not self.cancelled:
            if isinstance(n, int) and n > 0:
                self.requested += n
            self.requests.append(n)
        self.publisher._on_request(self, n)

    def cancel(self) -> None:
        self._called("cancel", ())
        self.cancels += 1

    def _called(self, kind: str, args: tuple) -> None:
        session = self.publisher.session
        me = threading.get_ident()
        signal = session.trace.record(kind, self.name, args)
        # The state when the call began decides 2.3/2.4: a request made before on_complete must not be
        # charged because on_complete arrived while it was still running (or dwelling).
        terminal, terminal_returned, silence_rule = self.terminal, self.terminal_returned, self.silence_rule
        with self._lock:
            overlapping = any(depth and thread != me for thread, depth in self._calling.items())
            self._calling[me] = self._calling.get(me, 0) + 1
        try:
            where = f"#{signal.seq} {signal.call_text()}"
            if overlapping:
                session.violate("2.7", "request and cancel called serially",
                                f"{where} began on {signal.thread} while another call was still running")
            if self.publisher.dwell_s and threading.current_thread() is not session.check_thread:
                time.sleep(self.publisher.dwell_s)  # widen the window in which an overlap can show
            inside = session.signalled_subscribers()
            if inside and inside[-1] is not self.subscriber and self.subscriber not in inside:
                session.violate("3.1", "request/cancel called only from within its own subscriber",
                                f"{where} was made while {session.label(inside[-1])} was being signalled")
            if silence_rule:
                session.violate(silence_rule, "no further call on the subscription", where)
            elif terminal and not terminal_returned:
                session.violate("2.3", f"no call on the subscription from within {terminal}", where)
            elif terminal:
                session.violate("2.4", f"the subscription considered cancelled after {terminal}", where)
        finally:
            with self._lock:
                self._calling[me] -= 1
            signal.outcome = "returned normally"


class ProbePublisher:
    """The kit as publisher, driving a subscriber (or a processor's upstream side) under test.

    In manual mode (`elements=None`) a check sends each signal itself. Given `elements`, it
    is a well-behaved source: it serves demand from them synchronously inside `request`
    (trampolined, depth one), completes when they run out, or signals `fail_with` after
    them. Either way it answers a non-positive request with on_error (3.9).
    """

    def __init__(self, session: Any, name: str, *, elements: Any = None,
                 fail_with: BaseException | None = None, dwell_s: float = 0.0):
        self.session = session
        self.name = name
        self.subscriptions: list[ProbeSubscription] = []
        self.dwell_s = dwell_s
        self._elements = iter(elements) if elements is not None else None
        self._fail_with = fail_with
        self._ended = self._elements is not None and self._peek_end()
        self._draining = threading.local()
        self._serial = threading.RLock()

    def __repr__(self) -> str:
        return self.name

    @property
    def subscription(self) -> ProbeSubscription:
        return self.subscriptions[-1]

    def subscribe(self, subscriber: Any) -> None:
        """The Publisher method: hand `subscriber` a recording subscription (on_subscribe)."""
        session = self.session
        if subscriber is None:
            raise TypeError(f"{self.name}.subscribe: subscriber must not be None (rule 1.9)")
        inside = session.signalled_subscribers()
        for sub in self.subscriptions:
            if sub.terminal and not sub.terminal_returned and sub.subscriber in inside:
                session.violate("2.3", f"no call on the publisher from within {sub.terminal}",
                                f"{session.label(subscriber)} subscribed from within {sub.terminal}")
        subscription = ProbeSubscription(self, subscriber, session.fresh_name("sub"))
        self.subscriptions.append(subscription)
        self._signal(subscription, "on_subscribe", subscription)
        if self._ended:
            self._end(subscription)  # nothing to deliver: end at once, demand or not (2.9, 2.10)

    # -- what checks send ----------------------------------------------------------------

    def send_next(self, item: Any, *, subscription: ProbeSubscription | None = None,
                  rule_if_raises: str = "2.13") -> None:
        sub = subscription or self.subscription
        if sub.requested <= sub.delivered:  # after a cancel, demand still pending may be served (2.8)
            raise AssertionError(f"kit error: {self.name} would send on_next beyond {sub.name}'s demand")
        sub.delivered += 1
        self._signal(sub, "on_next", item, rule_if_raises=rule_if_raises)

    def send_available(self, items: Any, *, subscription: ProbeSubscription | None = None,
                       limit: int | None = None) -> int:
        """Send as many of `items` as the subscriber has demand for (at most `limit`); returns how many."""
        sub = subscription or self.subscription
        items = iter(items)
        sent = 0
        while sub.requested > sub.delivered and (limit is None or sent < limit) and not sub.terminal:
            item = next(items, _NOTHING)
            if item is _NOTHING:
                break
            self.send_next(item, subscription=sub)
            sent += 1
        return sent

    def send_complete(self, *, subscription: ProbeSubscription | None = None, rule_if_raises: str = "2.13") -> None:
        self._terminate(subscription or self.subscription, "on_complete", rule_if_raises=rule_if_raises)

    def send_error(self, error: BaseException, *, subscription: ProbeSubscription | None = None,
                   rule_if_raises: str = "2.13") -> None:
        self._terminate(subscription or self.subscription, "on_error", error, rule_if_raises=rule_if_raises)

    # -- internals --------------------------------------------------------------------------

    def _terminate(self, sub: ProbeSubscription, kind: str, *args: Any, rule_if_raises: str = "2.13") -> None:
        sub.terminal = kind
        try:
            self._signal(sub, kind, *args, rule_if_raises=rule_if_raises)
        finally:
            sub.terminal_returned = True

    def _signal(self, sub: ProbeSubscription, kind: str, *args: Any, rule_if_raises: str = "2.13") -> None:
        session = self.session
        with session.signalling(sub.subscriber):
            session.call(sub.subscriber, kind, args, actor=session.label(sub.subscriber),
                         rule_if_raises=rule_if_raises, rule_if_hangs="async.non-blocking")

    def _peek_end(self) -> bool:
        try:
            self._lookahead = next(self._elements)
            return False
        except StopIteration:
            return True

    def _end(self, sub: ProbeSubscription) -> None:
        if self._fail_with is not None:
            self._terminate(sub, "on_error", self._fail_with)
        else:
            self._terminate(sub, "on_complete")

    def _on_request(self, sub: ProbeSubscription, n: int) -> None:
        if sub.terminal or sub.cancelled:
            return
        if not (isinstance(n, int) and n > 0):
            self._terminate(sub, "on_error", ValueError(f"3.9: non-positive request signals are illegal, got {n!r}"))
            return
        if self._elements is None:
            return
        if getattr(self._draining, "active", False):
            return  # trampoline: the outer delivery loop serves this demand
        with self._serial:
            self._draining.active = True
            try:
                while not sub.terminal and not sub.cancelled and sub.requested > sub.delivered:
                    self.send_next(self._lookahead, subscription=sub)
                    self._ended = self._peek_end()
                    if self._ended:
                        self._end(sub)
            finally:
                self._draining.active = False


class ProbeObserver:
    """The white-box hook a subscriber under test may accept: it reports each processed signal.

    A subscriber created with `create_subscriber=lambda observer: MySubscriber(observer)`
    calls, once it has finished processing a signal, `observer.on_subscribe_processed()`,
    `observer.on_next_processed(item)`, `observer.on_error_processed(error)` or
    `observer.on_complete_processed()`. Black-box checks never need it.
    """

    def __init__(self, session: Any, name: str):
        self.session = session
        self.name = name
        self.processed: list[tuple[str, Any]] = []

    def _record(self, kind: str, *args: Any) -> None:
        self.processed.append((kind, args[0] if args else None))
        self.session.trace.record(f"{kind}_processed", self.name, args)

    def on_subscribe_processed(self) -> None:
        self._record("on_subscribe")

    def on_next_processed(self, item: Any) -> None:
        self._record("on_next", item)

    def on_error_processed(self, error: BaseException) -> None:
        self._record("on_error", error)

    def on_complete_processed(self) -> None:
        self._record("on_complete")

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


class ProbeSubscriber:
    """Subscribes to a publisher under test, requests when told, and records what arrives.

    `on_subscribe` and `on_next` reactions run synchronously inside the signal, the only
    way to exercise request-from-within-on_next (3.2, 3.3) or cancel mid-stream.
    `dwell_s` holds each signal that arrives on a foreign thread for that long, so that
    an overlapping call from another thread (1.3) has the chance to show itself.
    """

    def __init__(self, session: Any, name: str, *, on_subscribe: Reaction | None = None,
                 on_next: Reaction | None = None, dwell_s: float = 0.0):
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
        shown = (Label(f"sub#{self._session.name_of(args[0])}"),) if kind == "on_subscribe" and args[0] is not None else args
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
                self._session.call(args[0], "cancel", (), actor=f"sub#{self._session.name_of(args[0])}",
                                   rule_if_raises="3.15")  # 2.5: the probe cancels the extra subscription
                return
            self.subscription = args[0]
            self.subscription_name = f"sub#{self._session.name_of(args[0])}"
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
            self._violate("1.9", "on_subscribe (a subscription to request from)", "no on_subscribe arrived")
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
            self._violate("1.9", "on_subscribe (a subscription to cancel)", "no on_subscribe arrived")
            return
        self.cancelled = True
        self.calls_after_terminal += self.terminated
        self._session.call(self.subscription, "cancel", (), actor=self.subscription_name, rule_if_raises=rule_if_raises)

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

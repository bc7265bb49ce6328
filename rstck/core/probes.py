"""Kit-side instrumented ends: the probe subscriber that watches a publisher under test, and the
probe publisher that drives a subscriber under test.

A probe is a well-behaved peer: it obeys the rules of its role itself (its own calls are
serial, it asks after a terminal signal only to check that the call is a NOP, it never signals beyond demand), and
what it would do against them is recorded as a fault of the kit, never charged to the target.
It records every call into the trace and monitors the other side's rules as signals arrive. A
monitor never raises into the implementation: it records the violation with the id of the rule
it breaks, and the session raises it on the check's own thread at the next settle or expectation.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable

from rstck.api import MAX_DEMAND
from rstck.core.evidence import EXPECTATION, MONITOR, recorded
from rstck.core.signals import HEAD as TAPE_HEAD
from rstck.core.signals import Label, Signal, kept_as as _kept_as, show
from rstck.core.signals import SMALL_INT_HIGH as _SMALL_INT_HIGH
from rstck.core.signals import SMALL_INT_LOW as _SMALL_INT_LOW
from rstck.core.verdict import RuleViolation, TargetError

Reaction = Callable[..., None]
_NOTHING = object()
_get_ident = threading.get_ident
# How many elements a probe keeps by default (it counts them all): enough for every check that
# compares content, bounded for a stream of any length.
KEEP_ELEMENTS = 1024


def _describe(entry: Any) -> str:
    """A signal still in progress, as a 1.3 message names it: a Signal, or a fast path's (seq, item)."""
    if isinstance(entry, Signal):
        return f"#{entry.seq} {entry.call_text()} (on {entry.thread})"
    seq, item = entry
    return f"#{seq} on_next({show(item)})"


class SerialCalls:
    """Runs calls one at a time, never holding a lock of the kit's while the implementation runs.

    A call nested inside the running one (same thread) runs at once, as a re-entrant call may. A call
    made while another thread's call is running waits for it while it makes progress: the call under way
    normally returns at once (it only hands demand over). Once it waits at one place (maybe for the very
    thread that wants to call, which holds a lock of the implementation's), the new call is queued and that
    thread runs it once its own call returns. So the kit's calls on one subscription, or its signals to one
    subscriber, never overlap (2.7, 1.3), and the kit never holds up a thread of the implementation's on a
    call that waits for it.
    """

    WAIT_S = 0.1  # the longest a call waits for another thread's that keeps running

    def __init__(self) -> None:
        self._free = threading.Condition()
        self._queue: collections.deque[Callable[[], None]] = collections.deque()
        self._owner: int | None = None

    def run(self, call: Callable[[], None]) -> bool:
        """Run `call` now, or queue it; False if it was queued for the running thread."""
        me = threading.get_ident()
        owner = self._owner
        running = threading._active.get(owner) if owner not in (None, me) else None  # type: ignore[attr-defined]
        if running is not None:
            from rstck.core.perturb import BLOCKED_STABLE_S, LOOK_S
            from rstck.core.thread_states import wait_unless_stuck

            wait_unless_stuck(running, lambda: self._owner in (None, me), time.monotonic() + self.WAIT_S,
                              stable_s=BLOCKED_STABLE_S, look_s=LOOK_S)
        with self._free:
            if self._owner not in (None, me):
                self._queue.append(call)
                return False
            nested, self._owner = self._owner == me, me
        if nested:
            call()
            return True
        try:
            call()
            self._run_queued()
        finally:
            with self._free:
                self._owner = None
                leftover = list(self._queue)  # queued after the last look, or left by an exception
                self._queue.clear()
                self._free.notify_all()
            for queued in leftover:
                self.run(queued)
        return True

    @property
    def running_on(self) -> int | None:
        """The thread a call is running on now, if any."""
        return self._owner

    def _run_queued(self) -> None:
        while True:
            with self._free:
                if not self._queue:
                    return
                queued = self._queue.popleft()
            queued()


def _positive_demand(n: Any) -> bool:
    """Demand a subscriber may signal: a positive integer, or positive infinity (a JavaScript subscriber's
    `request(Infinity)`, a Number above 2**63-1: "effectively unbounded", 3.17)."""
    return (isinstance(n, int) and not isinstance(n, bool) and n > 0) or (isinstance(n, float) and n == float("inf"))


def _ordinary_demand(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and 0 < n < MAX_DEMAND


def _evidence(kit_object: Any) -> Any:
    """The evidence of the check a probe or kit publisher belongs to (rstck/core/evidence.py)."""
    session = getattr(kit_object, "_session", None) or getattr(kit_object, "session", None)
    return getattr(session, "evidence", None)


def described(**what: Any) -> Callable[[Reaction], Reaction]:
    """Mark a probe's reaction with what it does, as data a reproducer acts on (rstck/core/evidence.py) instead of
    replaying only what it did in this run: `requests` (a list of n), `cancel`, made at the element number `at`
    (else in every signal of its kind, while fewer than `while_below` elements came), `on_second_thread`,
    `judged_all_the_same` (as request's)."""

    def mark(reaction: Reaction) -> Reaction:
        reaction.describes = what  # type: ignore[attr-defined]
        return reaction

    return mark


def requesting(n: int, *, while_below: int | None = None) -> Reaction:
    """A reaction that requests `n` from inside every signal of its kind (while fewer than `while_below` elements
    came)."""

    @described(requests=[n], while_below=while_below)
    def request_more(probe: ProbeSubscriber, _arg: Any) -> None:
        if while_below is None or probe.received < while_below:
            probe.request(n)

    return request_more


def at_element(at: int, *, requests: tuple[int, ...] = (), cancel: bool = False,
               judged_all_the_same: bool = False) -> Reaction:
    """A reaction that, inside the signal that brings element number `at`, requests each of `requests`, then cancels
    if `cancel`."""

    @described(at=at, requests=list(requests), cancel=cancel, judged_all_the_same=judged_all_the_same)
    def act(probe: ProbeSubscriber, _arg: Any) -> None:
        if probe.received == at:
            for n in requests:
                probe.request(n, judged_all_the_same=judged_all_the_same)
            if cancel:
                probe.cancel()

    return act


def _described(reaction: Reaction | None) -> dict[str, Any] | None:
    return getattr(reaction, "describes", None)


_REQUIRED = object()


def _probe_op(what: str = "", **parameters: Any):
    """An operation of a probe's, for the evidence: the probe's name and its arguments (`parameters`: their names in
    order, with their defaults, _REQUIRED for none); for an expectation (`what` it expects), every argument, else
    those given another value than their default."""

    def describe(probe: Any, evidence: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        given = {**parameters, **dict(zip(parameters, args)), **kwargs}
        data = {"probe": probe.name.replace("#", ""), **({"what": what} if what else {})}
        for name, value in given.items():
            if what or parameters[name] is _REQUIRED or value != parameters[name]:
                data[name] = evidence.value(value)
        return data

    return describe


def _request_op(probe: Any, evidence: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """A request, and whether the probe's stream had ended before it (the probe then makes none): a script that
    meets a stream ended where the probe's was live has not played the kit's scenario from there on."""
    data = _describe_request(probe, evidence, *args, **kwargs)
    return {**data, "ended": True} if probe.terminated else data


_describe_request = _probe_op(n=_REQUIRED, rule_if_raises=None, judged_all_the_same=False)


class ProbeSubscriber:
    """Subscribes to a publisher under test, requests when told, and records what arrives.

    `on_subscribe` and `on_next` reactions run synchronously inside the signal, the only
    way to exercise request-from-within-on_next (3.2, 3.3) or cancel mid-stream.
    `dwell_s` holds each signal that arrives on a foreign thread for that long, so that
    an overlapping call from another thread (1.3) has the chance to show itself.
    `fail_on_next` makes the first on_next raise the session's on-purpose error (2.13).
    `keep` is how many elements it keeps (`elements`); `received` counts them all.

    An on_next that needs nothing but counting (no reaction, nothing wrong so far) takes a fast
    path: one lock, one trace entry, a few counters; so a long stream costs little per element.
    """

    # A probe made to take the address of an earlier one the kit let go of (1.9): a script makes its recorder where
    # the kit made the probe, of a size as rare, and drops it where the kit let go of it (`released_by_the_kit`).
    REUSES_ADDRESSES = False

    def __init__(self, session: Any, name: str, *, on_subscribe: Reaction | None = None,
                 on_next: Reaction | None = None, dwell_s: float = 0.0, fail_on_next: bool = False,
                 keep: int = KEEP_ELEMENTS, timed: bool = False, linger_in: frozenset[str] = frozenset()):
        self._session = session
        self.trace = session.trace
        self.name = name
        self.subscription: Any = None
        self.subscription_name = ""
        self.subscribed = 0
        self.elements: list[Any] = []
        self.received = 0
        self.keep = keep
        self.completed = 0
        self.errors: list[BaseException] = []
        # The terminal signal reached the kit inside one of its calls but happened before it (rstck.core.signalling):
        # the call met a stream already over.
        self.ended_before_a_call = False
        self.requested = 0  # demand signalled while the subscription was live
        self.cancelled = False
        self.cancelled_at: int | None = None  # elements received when the first cancel was made
        self._cancel_under_way = False  # the first cancel's call has not returned yet
        self._cancel_settled = False
        self.silence_rule: str | None = None
        self.calls_after_terminal = 0  # requests and cancels made after on_complete/on_error (1.6)
        self._max_depth = 0  # deepest nesting of on_next within on_next on one thread, past the first
        self.reactions = {"on_subscribe": on_subscribe, "on_next": on_next}
        self.dwell_s = dwell_s
        # Signals in which the probe, once its reaction has run, lingers (rstck.core.perturb): the target's other
        # threads then run while it is still inside, as they would on a loaded machine.
        self.linger_in = frozenset(linger_in)
        self.fail_on_next = fail_on_next
        self.failed_on_purpose = False
        self.timed = timed  # measure how long each request takes (3.4)
        self.last_request_s = 0.0  # duration of the last request, less time spent in this probe
        self._calls = SerialCalls()
        self._lock = threading.Lock()
        self._inside: dict[int, list[Any]] = {}  # thread id -> the signals in progress on it (none: no key)
        self._gate = threading.Lock()  # held by the one on_next on the fast path
        self._on_next_depth: dict[int, int] = {}
        self._callback_ns = threading.local()
        self._tape = self.trace.tape(name)
        self._check_thread_id = session.check_thread_id
        self._refresh()
        evidence = _evidence(self)
        if evidence is not None:
            repeats = {kind: _described(r) for kind, r in self.reactions.items() if _described(r) is not None}
            evidence.named(self, name, kind="probe", dwell_s=dwell_s, fail_on_next=fail_on_next, timed=timed,
                           linger_in=sorted(linger_in), repeats=repeats,
                           **({"reuses_addresses": True} if self.REUSES_ADDRESSES else {}))
            if self.REUSES_ADDRESSES:
                evidence.made_here(name)

    def __repr__(self) -> str:
        return self.name

    # -- what the publisher calls ---------------------------------------------------

    def on_subscribe(self, subscription: Any) -> None:
        self._signal("on_subscribe", (subscription,), subscription is None)

    def on_next(self, item: Any) -> None:
        gate = self._gate
        if not (self._simple and item is not None and self.received < self.requested and gate.acquire(False)):
            self._signal("on_next", (item,), item is None)  # anything but counting: the slow path judges it
            return
        try:
            me = _get_ident()
            inside = self._inside
            fast = not inside or (len(inside) == 1 and me in inside)  # else another thread is inside: 1.3
            if fast:  # counted, and kept on the probe's tape: the hot path of a long stream, kept lean
                trace = self.trace
                seq = next(trace._numbers)
                if seq > trace.count:
                    trace.count = seq
                if me != self._check_thread_id:
                    trace.saw(me)
                shown = item if type(item) is int and _SMALL_INT_LOW < item < _SMALL_INT_HIGH else _kept_as(item)
                received = self.received
                if received < TAPE_HEAD:
                    self._tape.head.append((seq, shown, me, trace._depth.get(me, 0)))
                else:
                    self._tape.tail.append((seq, shown, me, trace._depth.get(me, 0)))
                if inside:  # nested in a slow-path on_next on this thread (3.3 counts the nesting)
                    nested = self._on_next_depth.get(me, 0) + 1
                    if nested > self._max_depth:
                        self._max_depth = nested
                if received < self.keep:
                    self.elements.append(item)
                self.received = received + 1
        finally:
            gate.release()
        if not fast:
            self._signal("on_next", (item,), False)

    def _refresh(self) -> None:
        """Whether an on_next needs nothing but counting: no reaction, no dwell, nothing wrong so far."""
        self._simple = (self.subscribed == 1 and not (self.completed or self.errors or self.silence_rule
                                                      or self._cancel_settled or self._cancel_under_way
                                                      or self.fail_on_next or self.dwell_s
                                                      or "on_next" in self.linger_in
                                                      or self.timed or self._session.lifecycle.sealed)
                        and self.reactions["on_next"] is None)

    @recorded("linger_also", _probe_op(kind=_REQUIRED), _evidence)
    def linger_also(self, kind: str) -> None:
        """From now on the probe lingers inside `kind` too (rstck.core.perturb)."""
        self.linger_in = self.linger_in | {kind}
        self._refresh()

    @recorded("react", lambda probe, evidence, kind, reaction: {"probe": probe.name.replace("#", ""), "kind": kind,
                                                                 "repeat": _described(reaction)}, _evidence)
    def react(self, kind: str, reaction: Reaction | None) -> None:
        """Set (or clear, with None) what the probe does from inside `kind`."""
        self.reactions[kind] = reaction
        self._refresh()

    @property
    def calling_thread(self) -> int | None:
        """The thread one of the probe's own calls (request, cancel) is running on now, if any."""
        return self._calls.running_on

    @property
    def max_depth(self) -> int:
        """The deepest nesting of on_next within on_next on one thread (1: never nested)."""
        return max(self._max_depth, 1 if self.received else 0)

    @property
    def cancel_settled(self) -> bool:
        return self._cancel_settled

    @cancel_settled.setter
    def cancel_settled(self, value: bool) -> None:
        self._cancel_settled = value
        self._refresh()

    def on_error(self, error: BaseException) -> None:
        self._signal("on_error", (error,), error is None)

    def on_complete(self) -> None:
        self._signal("on_complete", (), False)

    def _signal(self, kind: str, args: tuple, null_argument: bool) -> None:
        if self._session.lifecycle.sealed:  # a call from what an abandoned check left behind: counted, not judged
            self.trace.record_fast(kind, self.name, None)
            return
        with self._session.calls.handled(f"{self.name}.{kind}", kind):
            self._handle(kind, args, null_argument)

    def _handle(self, kind: str, args: tuple, null_argument: bool) -> None:
        started = time.perf_counter_ns()
        me = _get_ident()
        if kind == "on_subscribe" and args[0] is not None:
            shown: tuple = (Label(self._session.labels.of(args[0], "sub")),)
        else:
            shown = args
        signal = self.trace.record(kind, self.name, shown)
        with self._lock:
            others = [stack[-1] for thread, stack in self._inside.items() if thread != me]
            if self._gate.locked():  # an on_next on the fast path, on another thread: the tape's last entry
                last = (self._tape.tail or self._tape.head or [None])[-1]
                others.append(last[:2] if last is not None else (self.trace.count, "…"))
            self._inside.setdefault(me, []).append(signal)
            if kind == "on_next":
                depth = self._on_next_depth.get(me, 0) + 1
                self._on_next_depth[me] = depth
                self._max_depth = max(self._max_depth, depth)
        evidence = _evidence(self)
        if evidence is not None:
            nth = self.received + 1 if kind == "on_next" else evidence.arrival(self.name, kind)
            evidence.enter_signal(self.name, kind, nth, described=_described(self.reactions.get(kind)) is not None)
        self.trace.enter()
        try:
            if others:
                other = _describe(others[0])
                self._violate("1.3", "signals to a subscriber to be serial (not overlapping)",
                              f"#{signal.seq} {signal.call_text()} began on {signal.thread} while "
                              f"{other} was still running")
            if null_argument:
                signal.outcome = "raised TypeError (2.13: null argument)"
                raise TypeError(f"{self.name}.{kind}: argument must not be None (rule 2.13)")
            self._admit(kind, signal, args)
            if self.dwell_s and threading.current_thread() is not self._session.check_thread:
                time.sleep(self.dwell_s)  # widen the window in which an overlap can show
            reaction = self.reactions.get(kind)
            if reaction is not None:
                try:
                    reaction(self, *args)
                except Exception as exc:  # a check's own reaction broke: the kit's fault
                    self._session.findings.kit_errors.append(exc)
            if kind in self.linger_in:
                from rstck.core.perturb import linger

                linger(self._session, why=f"inside {kind}", actor=self.name)
            if kind == "on_next" and self.fail_on_next and not self.failed_on_purpose:
                self.failed_on_purpose = True
                self.silence("2.13")  # from now on the subscription counts as cancelled, by both sides
                self.cancelled = True
                error = self._session.surfacing.armed()
                signal.outcome = f"raised {show(error)} (on purpose)"
                raise error
        finally:
            if evidence is not None:
                evidence.leave_signal()
            self._refresh()
            self.trace.leave()
            with self._lock:
                stack = self._inside[me]
                stack.pop()
                if not stack:
                    del self._inside[me]
                if kind == "on_next":
                    self._on_next_depth[me] -= 1
            if self.timed:
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
                self._session.calls.make(args[0], "cancel", (), actor=self._session.labels.of(args[0], "sub"),
                                         rule_if_raises="3.15")  # 2.5: the probe cancels the extra subscription
                return
            self.subscription = args[0]
            self.subscription_name = self._session.labels.of(args[0], "sub")
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
        elif kind == "on_next" and self.received + 1 > self.requested:
            self._violate("1.1", f"at most {show(self.requested)} on_next (the total requested)",
                          f"{where} is on_next number {self.received + 1}")
        self._take_in(kind, args)

    def _take_in(self, kind: str, args: tuple) -> None:
        """Count an element or terminal signal once it has been judged (the draft's probe shares this)."""
        if kind == "on_next":
            self.received += 1
            if self._cancel_under_way and self._session.signalling.happened_before_the_call():
                self.cancelled_at = self.received  # delivered before the cancel reached the publisher (3.12)
            if len(self.elements) < self.keep:
                self.elements.append(args[0])
        elif kind == "on_complete":
            self.completed += 1
        else:
            self.errors.append(args[0])
        if kind != "on_next" and self._session.signalling.happened_before_the_call():
            self.ended_before_a_call = True

    # -- what the kit calls on the subscription -------------------------------------

    @recorded("request", _request_op, _evidence)
    def request(self, n: int, *, rule_if_raises: str | None = None, judged_all_the_same: bool = False) -> None:
        """Signal demand. A raise is a violation of 3.16 (3.2 when called from within a signal).
        `judged_all_the_same`: a raise does not stop the check, whose own item judges what else this request
        must do (3.9: signal on_error; 3.17: deliver), so that each sentence one call breaks is charged."""
        if self.subscription is None and not self._subscription_arrived("request"):
            return
        judged = {"judged_all_the_same": True} if judged_all_the_same else {}  # (a subclass may not take it)
        self._calls.run(lambda: self._request_now(n, rule_if_raises, **judged))

    def _request_now(self, n: int, rule_if_raises: str | None, *, judged_all_the_same: bool = False) -> None:
        if self.terminated:  # a probe asks for nothing once its stream has ended, as 2.4 asks of subscribers
            self.trace.note(f"{self.name} does not request({show(n)}): its stream has ended ({self._terminal_text()})")
            return
        # A request made from inside a signal that happened before the pending cancel reached the publisher
        # (delivered to the kit while it waited for that cancel) is demand the publisher still counts.
        before_the_cancel = self._cancel_under_way and self._session.signalling.happened_before_the_call()
        if isinstance(n, int) and n > 0 and (not self.cancelled or before_the_cancel):
            self.requested += n
        # A raise from inside a signal is 3.2's only for a demand every publisher must take as it is: one at
        # a bound (<= 0, or 2**63-1 and beyond, which 3.9 and 3.17 let a publisher treat apart) may have been
        # refused for its value, wherever it was asked, and that breaks 3.16 alone.
        reentrant = threading.get_ident() in self._inside and _ordinary_demand(n)
        rule = rule_if_raises or ("3.2" if reentrant else "3.16")
        before = getattr(self._callback_ns, "value", 0)
        started = time.perf_counter_ns()
        self._session.calls.make(self.subscription, "request", (n,), actor=self.subscription_name,
                                 rule_if_raises=rule, check_goes_on=judged_all_the_same)
        if self.timed:
            spent_in_probe = getattr(self._callback_ns, "value", 0) - before
            self.last_request_s = max(0, time.perf_counter_ns() - started - spent_in_probe) / 1e9

    @recorded("request_after_terminal", _probe_op(n=_REQUIRED, rule_if_raises="1.6"), _evidence)
    def request_after_terminal(self, n: int, *, rule_if_raises: str = "1.6") -> None:
        """Request once the stream has ended: the subscription counts as cancelled (1.6), so the call must
        return normally and draw no signal (3.6), whatever `n` (3.9 binds only a live subscription). A
        subscriber may make it: 2.4 asks it to consider the subscription cancelled, and calls on a cancelled
        subscription are NOPs."""
        if self.subscription is None and not self._subscription_arrived("request"):
            return
        self._calls.run(lambda: self._request_after_terminal_now(n, rule_if_raises))

    def _request_after_terminal_now(self, n: int, rule_if_raises: str) -> None:
        assert self.terminated, "only a stream that has ended is asked after its end"
        self.calls_after_terminal += 1
        self._session.calls.make(self.subscription, "request", (n,), actor=self.subscription_name,
                                 rule_if_raises=rule_if_raises)

    @recorded("cancel", _probe_op(rule_if_raises="3.15"), _evidence)
    def cancel(self, *, rule_if_raises: str = "3.15") -> None:
        """Cancel; also allowed after a terminal signal, where it must be a NOP (1.6)."""
        if self.subscription is None and not self._subscription_arrived("cancel"):
            return
        self._calls.run(lambda: self._cancel_now(rule_if_raises))

    def _cancel_now(self, rule_if_raises: str) -> None:
        first = not self.cancelled
        if first:
            self.cancelled_at = self.received
        self.cancelled = True
        self.calls_after_terminal += self.terminated
        self._cancel_under_way = first
        self._refresh()  # an element that comes meanwhile takes the slow path, which tells when it was sent
        try:
            self._session.calls.make(self.subscription, "cancel", (), actor=self.subscription_name,
                                     rule_if_raises=rule_if_raises)
        finally:
            if first:
                # What came while the call was under way may have been sent before the cancel reached the
                # publisher (a call across a bridge or blocked on the publisher's lock can take long): only what
                # comes after it returned is surely after the cancel (3.12: "NOT REQUIRED to affect the
                # Subscription immediately").
                self.cancelled_at = self.received
            self._cancel_under_way = False
            self._refresh()

    @recorded("release", _probe_op(), _evidence)
    def released_by_the_kit(self) -> None:
        """The kit keeps no reference to this probe from here on: the evidence says so, and a script drops its
        recorder here too."""

    @recorded("let_go", _probe_op(), _evidence)
    def let_go_of_subscription(self) -> None:
        """Drop the probe's reference to its (cancelled) subscription: the kit's own reference is no
        reference of the publisher's (3.13), and across a bridge to another process it would keep the
        publisher's objects, and through them this probe, reachable."""
        assert self.cancelled, "only a cancelled subscription is let go of"
        self.subscription = None

    def _subscription_arrived(self, call: str) -> bool:
        """Whether the subscription to make `call` on has arrived. Where a quiet window decided the settle before
        the call, on_subscribe is waited for until the deadline first (a verdict of absence never rests on a window
        alone); if it does not come, that is 1.9's, said once."""
        if self._awaited(lambda: self.subscription is not None):
            return True
        self._no_subscription(call)
        return False

    def _no_subscription(self, call: str) -> None:
        if not self._session.findings.violations:  # once is evidence enough
            self._violate("1.9", f"on_subscribe (a subscription to {call} on)", "no on_subscribe arrived")

    @recorded("silence", _probe_op(rule=_REQUIRED), _evidence)
    def silence(self, rule: str | None) -> None:
        """From now on any signal to this probe violates `rule` (None: no longer)."""
        self.silence_rule = rule
        self._refresh()

    # -- state and expectations (called on the check's thread, after settle) ----------

    @property
    def terminated(self) -> bool:
        return bool(self.completed or self.errors)

    @property
    def signal_count(self) -> int:
        return self.subscribed + self.received + self.completed + len(self.errors)

    def _terminal_text(self) -> str:
        return "on_complete" if self.completed else f"on_error({show(self.errors[0])})"

    def _violate(self, rule: str, expected: str, observed: str) -> None:
        self._session.findings.violate(rule, expected, observed, claim=MONITOR)

    def _fail(self, rule: str, expected: str, observed: str) -> None:
        self._session.findings.raise_pending()
        raise RuleViolation(rule, expected, observed + self._session.quiet_note(), claim=EXPECTATION)

    def observed(self) -> str:
        parts = [f"{self.received} on_next"]
        if self.completed:
            parts.append("on_complete")
        if self.errors:
            parts.append(f"on_error({show(self.errors[0])})")
        if not self.subscribed:
            parts.insert(0, "no on_subscribe")
        return ", ".join(parts)

    def _awaited(self, arrived: Callable[[], bool]) -> bool:
        """Whether an expected signal has arrived; where settling cannot be exact (a target across a network),
        the settler waits for it up to the check's deadline first, so a slow target is not failed early."""
        return arrived() or self._session.settler.await_signal(arrived, self._session.deadline)

    @recorded("expect", _probe_op("subscribed", rule="1.9"), _evidence)
    def expect_subscribed(self, rule: str = "1.9") -> None:
        if not self._awaited(lambda: self.subscribed):
            self._fail(rule, "on_subscribe", "no on_subscribe arrived")

    @recorded("expect", _probe_op("elements", count=_REQUIRED, rule=_REQUIRED), _evidence)
    def expect_elements(self, count: int, rule: str) -> None:
        """Exactly `count` elements; more than that within demand breaks the target's contract, not `rule`."""
        self.expect_subscribed()
        self._awaited(lambda: self.received >= count or self.terminated)
        got = self.received
        if got > count:
            self._session.findings.raise_pending()
            raise TargetError(f"the target broke its contract: create_publisher(n) makes a publisher of exactly n "
                              f"elements, then on_complete; expected {count} elements, {self.name} received {got} "
                              "on_next")
        if got != count:
            self._fail(rule, f"{count} on_next", self.observed())

    @recorded("expect", _probe_op("complete", rule="1.5"), _evidence)
    def expect_complete(self, rule: str = "1.5") -> None:
        self.expect_subscribed()
        if not self._awaited(lambda: self.terminated) or not self.completed:
            self._fail(rule, "on_complete", self.observed())

    @recorded("expect", _probe_op("error", error_type=_REQUIRED, rule=_REQUIRED), _evidence)
    def expect_error(self, error_type: str, rule: str) -> BaseException:
        """Expect on_error with an exception whose class (or a base class) is named `error_type`."""
        self.expect_subscribed()
        if not self._awaited(lambda: self.terminated) or not self.errors:
            self._fail(rule, f"on_error({error_type})", self.observed())
        error = self.errors[0]
        if error_type not in {cls.__name__ for cls in type(error).__mro__}:
            self._fail(rule, f"on_error({error_type})", f"on_error({show(error)})")
        return error


class ProbeSubscription:
    """The subscription the kit's probe publisher hands to a subscriber under test.

    It records every request/cancel and monitors the subscriber's rules on each call:
    2.3 (no call from inside on_complete/on_error), 2.7 (calls serial across threads) and 3.1 (called
    only from its own subscriber's context). A request once they have returned is a NOP the subscriber may
    make (1.6, 3.6); only a profile without those sentences (the SPI draft, by its alias of 2.4) charges it.
    """

    def __init__(self, publisher: "ProbePublisher", subscriber: Any, name: str):
        self.publisher = publisher
        self.subscriber = subscriber
        self.name = name
        self.requests: list[Any] = []
        self.requested = 0  # positive demand received while live
        self.delivered = 0
        self.delivered_after_cancel = 0  # on_next sent after the subscriber's cancel (2.8)
        self.cancels = 0
        self.cancel_settled = False
        self.announced = False  # on_subscribe sent
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
            if _positive_demand(n):
                self.requested += n
            self.requests.append(n)
        self.publisher._on_request(self, n)

    def cancel(self) -> None:
        self._called("cancel", ())
        self.cancels += 1

    def _called(self, kind: str, args: tuple) -> None:
        with self.publisher.session.calls.handled(f"{self.name}.{kind}", kind):
            self._judge_call(kind, args)

    def _judge_call(self, kind: str, args: tuple) -> None:
        session = self.publisher.session
        me = threading.get_ident()
        signal = session.trace.record(kind, self.name, args)
        # The state when the call began decides 2.3/2.4: a request made before on_complete must not be
        # charged because on_complete arrived while it was still running (or dwelling).
        terminal, terminal_returned, silence_rule = self.terminal, self.terminal_returned, self.silence_rule
        inside = session.signalling.in_progress()
        with self._lock:
            overlapping = any(depth and thread != me for thread, depth in self._calling.items())
            self._calling[me] = self._calling.get(me, 0) + 1
        try:
            where = f"#{signal.seq} {signal.call_text()}"
            if overlapping:
                session.findings.violate("2.7", "request and cancel called serially",
                                         f"{where} began on {signal.thread} while another call was still running",
                                         claim=MONITOR)
            if self.publisher.dwell_s and threading.current_thread() is not session.check_thread:
                time.sleep(self.publisher.dwell_s)  # widen the window in which an overlap can show
            if self.publisher.linger_in_calls and not overlapping:
                from rstck.core.perturb import linger

                linger(session, why=f"inside {kind}", actor=self.name)
            if inside and inside[-1][0] is not self.subscriber and all(s is not self.subscriber for s, _ in inside):
                session.findings.violate("3.1", "request/cancel called only from within its own subscriber",
                                         f"{where} was made while {session.labels.of(inside[-1][0])} was being "
                                         "signalled", claim=MONITOR)
            in_terminal = [k for s, k in inside if s is self.subscriber and k in ("on_complete", "on_error")]
            if silence_rule:
                session.findings.violate(silence_rule, "no further call on the subscription", where, claim=MONITOR)
            elif in_terminal:
                session.findings.violate("2.3", f"no call on the subscription from within {in_terminal[-1]}", where,
                                         claim=MONITOR)
            elif terminal and terminal_returned and kind == "request":
                # A profile with no sentence that makes the call a NOP (the draft) charges it.
                if "2.4" in session.findings.rule_aliases:
                    session.findings.violate("2.4", f"the subscription considered cancelled after {terminal}: no "
                                             "request", where, claim=MONITOR)
                else:  # 1.6 and 3.6 make it a NOP, which a subscriber considering it cancelled may still make
                    session.trace.note(f"{where} came after {terminal}: a NOP on a subscription that counts as "
                                       "cancelled (1.6, 3.6), not charged to 2.4")
        finally:
            with self._lock:
                self._calling[me] -= 1
            signal.outcome = "returned normally"


def _send_op(source: Any, evidence: Any, kind: str, args: list, subscription: Any, rule: str) -> dict[str, Any]:
    """A signal a check has a kit publisher send, for the evidence; `subscription` by its place among the
    publisher's (the last one when None)."""
    data = {"source": source.name.replace("#", ""), "kind": kind, "args": [evidence.value(a) for a in args],
            **_which(source, subscription)}
    if rule != "2.13":
        data["rule_if_raises"] = rule
    return data


def _which(source: Any, subscription: Any) -> dict[str, int]:
    """A kit publisher's subscription other than its last, for the evidence: by its place among them."""
    if subscription is not None and subscription is not source.subscriptions[-1]:
        return {"subscription": source.subscriptions.index(subscription)}
    return {}


class ProbePublisher:
    """The kit as publisher, driving a subscriber (or a processor's upstream side) under test.

    In manual mode (`elements=None`) a check sends each signal itself. Given `elements`, it
    is a well-behaved source: it serves demand from them inside `request` (trampolined, depth
    one), reads one element ahead so that it completes when they run out even without demand,
    or signals `fail_with` after them. Either way it answers a non-positive request with
    on_error (3.9). Its signals to one subscriber never overlap, and it checks each against
    the publisher rules before sending: what would break one is a fault of the kit.
    """

    subscription_class = ProbeSubscription  # an opt-in profile's kit publisher hands out its own

    def __init__(self, session: Any, name: str, *, elements: Any = None,
                 fail_with: BaseException | None = None, dwell_s: float = 0.0, second_subscription: bool = False,
                 linger_in_calls: bool = False):
        self.session = session
        self.name = name
        self.subscriptions: list[ProbeSubscription] = []
        self.dwell_s = dwell_s
        # Whether a request or cancel lingers (rstck.core.perturb) until the subscriber's other threads have done what
        # they can: a call they make meanwhile overlaps it (2.7), on a quiet machine as on a loaded one.
        self.linger_in_calls = linger_in_calls
        self.second_subscription = second_subscription  # the 2.5 premise: a subscriber already subscribed
        # Whether a raise from a signal of the kit's lets the check go on (it is still charged): a check whose own
        # item is about what the subscriber under test does next judges that all the same.
        self.raises_judged_all_the_same = False
        self._source = iter(elements) if elements is not None else None
        self._ahead: Any = _NOTHING
        self._exhausted = self._source is None
        self._fail_with = fail_with
        self._signals = SerialCalls()
        self._draining = False
        evidence = _evidence(self)
        if evidence is not None:
            if elements is None or isinstance(elements, (range, list, tuple)):
                evidence.named(self, name, kind="source", elements=evidence.value(elements),
                               fail_with=evidence.value(fail_with), dwell_s=dwell_s,
                               second_subscription=second_subscription, linger_in_calls=linger_in_calls)
            else:  # an iterator: what it yields is known only once served
                evidence.cannot("the kit's source serves elements from an iterator a script cannot write out")

    def __repr__(self) -> str:
        return self.name

    @property
    def subscription(self) -> ProbeSubscription:
        return self.subscriptions[-1]

    @recorded("source_subscribe", lambda source, evidence, subscriber: {
        "source": source.name.replace("#", ""), "subscriber": evidence.value(subscriber)}, _evidence)
    def subscribe(self, subscriber: Any) -> None:
        """The Publisher method: hand `subscriber` a recording subscription (on_subscribe)."""
        session = self.session
        if subscriber is None:
            raise TypeError(f"{self.name}.subscribe: subscriber must not be None (rule 1.9)")
        for kind in (k for s, k in session.signalling.in_progress() if k in ("on_complete", "on_error")):
            session.findings.violate("2.3", f"no call on the publisher from within {kind}",
                                     f"{session.labels.of(subscriber)} subscribed from within {kind}", claim=MONITOR)
        subscription = self.subscription_class(self, subscriber, session.labels.fresh("sub"))
        session.ends.handed_out(self, subscriber, subscription)
        self.subscriptions.append(subscription)
        self._signals.run(lambda: self._announce(subscription))

    def _announce(self, sub: ProbeSubscription) -> None:
        self._emit(sub, "on_subscribe", sub)
        if self._source is not None:
            self._drain(sub)  # an empty or failed source ends at once, demand or not (2.9, 2.10)

    # -- what checks send ----------------------------------------------------------------

    @recorded("send", lambda source, evidence, item, *, subscription=None, rule_if_raises="2.13": _send_op(
        source, evidence, "on_next", [item], subscription, rule_if_raises), _evidence)
    def send_next(self, item: Any, *, subscription: ProbeSubscription | None = None,
                  rule_if_raises: str = "2.13") -> None:
        sub = subscription or self.subscription
        self._signals.run(lambda: self._emit(sub, "on_next", item, rule_if_raises=rule_if_raises))

    @recorded("send_available", lambda source, evidence, items, *, subscription=None, limit=None, after_cancel=0: {
        "source": source.name.replace("#", ""), "items": evidence.value(items), "limit": limit,
        "after_cancel": after_cancel, **_which(source, subscription)}, _evidence)
    def send_available(self, items: Any, *, subscription: ProbeSubscription | None = None,
                       limit: int | None = None, after_cancel: int = 0) -> int:
        """Send as many of `items` as the subscriber has demand for (at most `limit`), and after its
        cancel at most `after_cancel` more (2.8: demand pending may still be served); how many went."""
        sub = subscription or self.subscription
        items = iter(items)
        sent = sent_after_cancel = 0
        while sub.requested > sub.delivered and (limit is None or sent < limit) and not sub.terminal:
            if sub.cancelled:
                if sent_after_cancel >= after_cancel or sub.cancel_settled:
                    break
                sent_after_cancel += 1
            item = next(items, _NOTHING)
            if item is _NOTHING:
                break
            self.send_next(item, subscription=sub, rule_if_raises="2.8" if sub.cancelled else "2.13")
            sent += 1
        return sent

    @recorded("send", lambda source, evidence, *, subscription=None, rule_if_raises="2.13": _send_op(
        source, evidence, "on_complete", [], subscription, rule_if_raises), _evidence)
    def send_complete(self, *, subscription: ProbeSubscription | None = None, rule_if_raises: str = "2.13") -> None:
        sub = subscription or self.subscription
        self._signals.run(lambda: self._terminate(sub, "on_complete", rule_if_raises=rule_if_raises))

    @recorded("send", lambda source, evidence, error, *, subscription=None, rule_if_raises="2.13": _send_op(
        source, evidence, "on_error", [error], subscription, rule_if_raises), _evidence)
    def send_error(self, error: BaseException, *, subscription: ProbeSubscription | None = None,
                   rule_if_raises: str = "2.13") -> None:
        sub = subscription or self.subscription
        self._signals.run(lambda: self._terminate(sub, "on_error", error, rule_if_raises=rule_if_raises))

    def can_signal(self, sub: ProbeSubscription | None = None) -> bool:
        """Whether a terminal signal may still be sent: not after one, nor once a cancel has settled."""
        sub = sub or self.subscription
        return sub.terminal is None and not sub.cancel_settled

    # -- internals --------------------------------------------------------------------------

    def _terminate(self, sub: ProbeSubscription, kind: str, *args: Any, rule_if_raises: str = "2.13") -> None:
        if not self._lawful(sub, kind):
            return
        sub.terminal = kind
        try:
            self._send(sub, kind, *args, rule_if_raises=rule_if_raises)
        finally:
            sub.terminal_returned = True

    def _emit(self, sub: ProbeSubscription, kind: str, *args: Any, rule_if_raises: str = "2.13") -> None:
        if not self._lawful(sub, kind):
            return
        if kind == "on_subscribe":
            sub.announced = True
        elif kind == "on_next":
            sub.delivered += 1
            sub.delivered_after_cancel += sub.cancelled
        self._send(sub, kind, *args, rule_if_raises=rule_if_raises)

    def _lawful(self, sub: ProbeSubscription, kind: str) -> bool:
        """The publisher rules, applied to the kit's own signal; a breach is the kit's fault, not sent."""
        session, to = self.session, f"{self.name} -> {sub.name}"
        if kind == "on_subscribe" and sub.announced:
            return session.findings.kit_fault("2.12", "on_subscribe at most once", f"{to}: a second on_subscribe")
        if kind != "on_subscribe" and not sub.announced:
            return session.findings.kit_fault("1.9", "on_subscribe first", f"{to}: {kind} before on_subscribe")
        if sub.terminal is not None:
            return session.findings.kit_fault("1.7", "nothing after a terminal signal",
                                              f"{to}: {kind} after {sub.terminal}")
        if sub.cancel_settled:
            return session.findings.kit_fault("1.8", "nothing once a cancel has taken effect",
                                              f"{to}: {kind} after cancel")
        if kind == "on_next" and sub.delivered >= sub.requested:
            return session.findings.kit_fault("1.1", "on_next only against demand",
                                              f"{to}: on_next number {sub.delivered + 1} of {sub.requested} requested")
        return True

    def _send(self, sub: ProbeSubscription, kind: str, *args: Any, rule_if_raises: str) -> None:
        session = self.session
        with session.signalling.inside(sub.subscriber, kind):
            session.calls.make(sub.subscriber, kind, args, actor=session.labels.of(sub.subscriber),
                               rule_if_raises=rule_if_raises, rule_if_hangs="async.non-blocking",
                               check_goes_on=self.raises_judged_all_the_same)

    def _on_request(self, sub: ProbeSubscription, n: Any) -> None:
        if sub.terminal or sub.cancelled:
            return  # 3.6: a NOP
        if not _positive_demand(n):
            error = ValueError(f"3.9: non-positive request signals are illegal, got {show(n)}")
            self._signals.run(lambda: self._terminate(sub, "on_error", error))
        elif self._source is not None:
            self._signals.run(lambda: self._drain(sub))

    def _drain(self, sub: ProbeSubscription) -> None:
        """Serve the demand from the elements; end once they run out. Runs serialised (SerialCalls)."""
        if self._draining:
            return  # trampoline: a request from inside on_next only adds demand; this loop serves it
        self._draining = True
        try:
            while sub.terminal is None and not sub.cancelled:
                if self._peek_end():
                    if self._fail_with is not None:
                        self._terminate(sub, "on_error", self._fail_with)
                    else:
                        self._terminate(sub, "on_complete")
                    return
                if sub.requested <= sub.delivered:
                    return
                item, self._ahead = self._ahead, _NOTHING
                self._emit(sub, "on_next", item)
        finally:
            self._draining = False

    def _peek_end(self) -> bool:
        if self._ahead is _NOTHING and not self._exhausted:
            self._ahead = next(self._source, _NOTHING)  # type: ignore[arg-type]
            self._exhausted = self._ahead is _NOTHING
        return self._ahead is _NOTHING


class ProbeObserver:
    """The white-box hook a subscriber under test may accept: it reports each processed signal.

    A subscriber made by `create_whitebox_subscriber=lambda observer: MySubscriber(observer)`
    calls, once it has finished processing a signal, `observer.on_subscribe_processed()`,
    `observer.on_next_processed(item)`, `observer.on_error_processed(error)` or
    `observer.on_complete_processed()`. Black-box checks never need it.
    """

    def __init__(self, session: Any, name: str):
        self.session = session
        self.name = name
        self.processed: list[tuple[str, Any]] = []
        evidence = _evidence(self)
        if evidence is not None:
            evidence.named(self, name, kind="observer")

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

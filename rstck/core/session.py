"""The per-check session: one check's use of a target.

A check receives a `Session`. It creates the objects under test through the target's
factories, subscribes kit probes to them, settles, and collects into one trace the
violations the probes observe, the faults of the kit itself, and what the implementation
reports meanwhile (logs, threads that died).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable

from rstck.core.probes import OnPurpose, ProbeObserver, ProbePublisher, ProbeSubscriber, ProbeSubscription
from rstck.core.catalog import load_catalog
from rstck.core.settle import SettleOutcome, Settler
from rstck.core.signals import Label, Trace, show
from rstck.core.threads import mark_kit_thread
from rstck.core.verdict import NotApplicable, RuleViolation, TargetError

if TYPE_CHECKING:
    import asyncio

    from rstck.core.executor import InstrumentedExecutor
    from rstck.core.target import ErrorNames, Target


# How many violations of one rule a check keeps in full (the rest are counted).
VIOLATIONS_KEPT_PER_RULE = 3

# Where a supervised worker keeps the call it is in (rstck.execution.supervise), for when the target kills it.
CALL_STATUS: Callable[[str], None] | None = None


class RetryCallMode(BaseException):
    """The way the kit makes its calls does not suit the implementation (it runs an event loop of its own
    inside a call, or it needs a running one): the check starts over with calls made the other way. A
    BaseException, so that no `except Exception` between the call and the runner swallows it."""


class KitFault(RuleViolation):
    """The kit was about to break a rule itself; never charged to the target."""


@dataclasses.dataclass
class Outstanding:
    """A call into the implementation that has not returned yet: what to charge if it never does."""

    text: str  # as the trace shows it: "sub#1.request(1)"
    rule: str  # the rule a hang here breaks; "" for a factory (a target error)
    method: str  # "request", "create_publisher", ...
    since: float  # time.monotonic() when it began



class Session:
    """One check's use of a target: factories, probes, settling and the shared trace."""

    def __init__(self, target: Target, deadline_s: float):
        self.target = target
        self.trace = Trace()
        self.deadline = time.monotonic() + deadline_s
        self._check_thread: threading.Thread | None = None
        self.check_thread_id: int | None = None
        self.violations: list[RuleViolation] = []
        self.violation_counts: dict[str, int] = {}
        # Another profile's items for the core rules the kit's ends watch (None: that profile has no such rule);
        # set by a check of an opt-in profile (rstck/rules/spi_draft), empty for every other.
        self.rule_aliases: dict[str, str | None] = {}
        self.kit_errors: list[BaseException] = []  # a check's own reaction raised
        self.kit_faults: list[KitFault] = []  # the kit would have broken a rule
        self.settled_by: list[str] = []  # how each settle was decided, first occurrence order
        self.quiet_window_s = 0.0  # the longest quiet window a settle relied on
        self.outstanding: list[Outstanding] = []  # calls under way, innermost last
        self.on_purpose = OnPurpose(f"the kit's subscriber fails on purpose (2.13) [{os.urandom(4).hex()}]")
        self.surfaced: list[str] = []  # how the on-purpose error came back: raised, log, thread, loop
        self.kit_subscriptions: list[ProbeSubscription] = []
        self.abandoned = False  # the runner gave up on this check: what it left behind is counted, not judged
        self.check_returned = False  # the check ran to its end: it decided its own item
        self._settler = target.make_settler(self.trace)
        self.must_broken = False  # a MUST item is violated already
        self._settler.broken = lambda: self.must_broken
        # Labels by id(); the weak reference tells a live object from a later one at the same address,
        # without keeping anything alive (3.13 needs the subscriber collectable).
        self._labels: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._numbers: dict[str, itertools.count] = {}
        self._signalling = threading.local()
        self._kit_subscribed: set[int] = set()  # subscribers under test the kit's publishers subscribed
        self.probes: weakref.WeakSet[ProbeSubscriber] = weakref.WeakSet()

    @property
    def check_thread(self) -> threading.Thread | None:
        """The thread the check runs on (the kit's own: signals on it are never a foreign thread's)."""
        return self._check_thread

    @check_thread.setter
    def check_thread(self, thread: threading.Thread) -> None:
        self._check_thread = thread
        self.check_thread_id = thread.ident
        self.target.bind_thread(thread, self)

    # -- what checks use ----------------------------------------------------------------

    @property
    def settler(self) -> Settler:
        """What settles this check; an adapter's own keeps what the check opened (connections, processes)."""
        return self._settler

    @property
    def error_names(self) -> ErrorNames:
        return self.target.error_names

    @property
    def max_elements(self) -> int | None:
        return self.target.max_elements

    @property
    def responsiveness_bound_s(self) -> float:
        return self.target.responsiveness_bound_s

    @property
    def stream_length(self) -> int:
        """The stress mode's stream length (`--stream-length`); 0 in a normal run."""
        return self.target.stream_length

    def has(self, capability: str) -> bool:
        return capability in self.target.capabilities

    def elements(self, wanted: int, *, at_least: int = 1) -> int:
        """`wanted` elements, or as many as the publisher can produce; n/a below `at_least`."""
        limit = self.target.max_elements
        n = wanted if limit is None else min(wanted, limit)
        if n < at_least:
            raise NotApplicable(f"needs a publisher of at least {at_least} elements; max_elements is {limit}")
        return n

    def create_publisher(self, n: int) -> Any:
        return self.target.new_publisher(self, n)

    def create_failed_publisher(self) -> Any:
        return self.target.new_failed_publisher(self)

    def create_subscriber(self) -> Any:
        return self.target.new_subscriber(self)

    def create_whitebox_subscriber(self, observer: ProbeObserver) -> Any:
        return self.target.new_whitebox_subscriber(self, observer)

    def create_processor(self) -> Any:
        return self.target.new_processor(self)

    def observer(self) -> ProbeObserver:
        return ProbeObserver(self, self.fresh_name("observer"))

    def source(self, **options: Any) -> ProbePublisher:
        """A kit publisher to drive a subscriber under test (manual unless given `elements`)."""
        return ProbePublisher(self, self.fresh_name("source"), **options)

    def probe(self, **options: Any) -> ProbeSubscriber:
        probe = ProbeSubscriber(self, self.fresh_name("probe"), **options)
        self.probes.add(probe)
        return probe

    def subscribe(self, publisher: Any, probe: ProbeSubscriber | None = None, **options: Any) -> ProbeSubscriber:
        """Subscribe a probe (a new one unless given) to `publisher`; subscribe must return normally (1.9)."""
        probe = probe or self.probe(**options)
        if getattr(probe, "subscribe_calls", 0):
            self.kit_fault("1.10", "a different subscriber for each subscribe", f"{probe.name} subscribed again")
            return probe
        probe.subscribe_calls = 1
        self.call(publisher, "subscribe", (probe,), actor="publisher", rule_if_raises="1.9")
        if not probe.subscribed:
            self.settle()  # an asynchronous publisher's on_subscribe: the probe needs it to request
        return probe

    def settle(self) -> SettleOutcome:
        """Return once the target can produce no further signal without outside input."""
        outcome = self._settler.settle(self.deadline)
        if outcome.method not in self.settled_by:
            self.settled_by.append(outcome.method)
        self.quiet_window_s = max(self.quiet_window_s, outcome.window_s)
        for probe in list(self.probes):
            if probe.cancelled:
                probe.cancel_settled = True
        for subscription in self.kit_subscriptions:
            if subscription.cancelled:
                subscription.cancel_settled = True
        self.trace.note("settled" if outcome.method == "idle" else f"settled: {outcome.method}")
        self.raise_pending()
        return outcome

    def quiet_note(self) -> str:
        """What a verdict of "nothing (more) arrived" rests on, when a quiet window decided it."""
        if "quiet-period" not in self.settled_by:
            return ""
        return f" (settled by a quiet period of {self.quiet_window_s * 1000:.0f} ms: {self._settler.quiet_reason})"

    @property
    def executor(self) -> InstrumentedExecutor:
        if self._settler.executor is None:
            from rstck.core.executor import InstrumentedExecutor
            from rstck.core.threads import watch_pool

            self._settler.executor = InstrumentedExecutor()
            watch_pool(self._settler.executor)
        return self._settler.executor

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._settler.loop is None:
            import asyncio

            loop = asyncio.new_event_loop()
            loop.set_exception_handler(lambda _loop, context: self.report(
                "loop", context.get("exception"), f"event loop: {context.get('message', 'an error')}"))
            self._settler.loop = loop
        return self._settler.loop

    def on_another_thread(self, call: Callable[[], None], *, rule: str) -> None:
        """Make `call` on a kit thread other than the check's, and wait for it: nothing else of the kit's
        runs meanwhile, so its calls stay serial. An implementation that lives on the kit's event loop gets
        it on the loop's thread, where its calls belong (thread safety there is by construction, as in
        JavaScript)."""
        if self._settler.loop_used:
            self.trace.note("the implementation lives on the kit's event loop: the call stays on the loop's thread")
            call()
            return
        thread = threading.Thread(target=call, name="rstck-another-thread", daemon=True)
        mark_kit_thread(thread)
        thread.start()
        thread.join(max(0.0, self.deadline - time.monotonic()))
        if thread.is_alive():
            raise RuleViolation(rule, "the call made on another thread to return", "it had not returned by the "
                                "deadline", timed_out=True)

    # -- what probes use ------------------------------------------------------------------

    def fresh_name(self, prefix: str) -> str:
        counter = self._numbers.setdefault(prefix, itertools.count(1))
        return f"{prefix}#{next(counter)}"

    def label(self, obj: Any, prefix: str | None = None) -> str:
        """How the trace names an object: a kit probe by its name, anything else by `prefix` (its class
        by default) and a number that stays the same for the object's life."""
        if isinstance(obj, (ProbeSubscriber, ProbePublisher)):
            return obj.name
        known = self._labels.get(id(obj))
        if known is not None and known[1]() is obj:
            return known[0]
        label = self.fresh_name(prefix or type(obj).__name__)
        try:
            ref = weakref.ref(obj)
        except TypeError:  # not weakly referenceable: a strong reference is the only way to keep the name
            ref = (lambda o: lambda: o)(obj)
        self._labels[id(obj)] = (label, ref)
        return label

    @contextlib.contextmanager
    def signalling(self, subscriber: Any, kind: str):
        """Marks that this thread is inside signal `kind` to `subscriber` (the context of 2.3 and 3.1)."""
        stack = self._signalling.__dict__.setdefault("stack", [])
        stack.append((subscriber, kind))
        try:
            yield
        finally:
            stack.pop()

    def happened_before_the_call(self) -> bool:
        """Whether what reaches the kit now is run `apart()`: it happened before the call the kit waits for."""
        return bool(self._signalling.__dict__.get("apart"))

    def signals_in_progress(self) -> list[tuple[Any, str]]:
        """(subscriber, signal kind) of the kit's signals this thread is inside, outermost first."""
        return list(self._signalling.__dict__.get("stack", ()))

    @contextlib.contextmanager
    def apart(self):
        """Run, outside the kit's calls and signals, what the implementation did on its own schedule but reaches
        the kit on a thread that is inside one of them: a Node callback that ran before the driver read the
        kit's next call is delivered while that call waits (rstck.adapters.node), and happened before it."""
        local = self._signalling.__dict__
        stack = local.pop("stack", None)
        depth = self.trace.nest_under_nothing()
        local["apart"] = local.get("apart", 0) + 1
        try:
            yield
        finally:
            local["apart"] -= 1
            self.trace.nest_again(depth)
            if stack is not None:
                local["stack"] = stack
            else:
                local.pop("stack", None)

    def kit_subscribes(self, publisher: ProbePublisher, subscriber: Any) -> None:
        """The kit's publishers give a subscriber on_subscribe once, unless the check is about 2.5."""
        if id(subscriber) in self._kit_subscribed and not publisher.second_subscription:
            self.kit_fault("2.12", "on_subscribe at most once for a given subscriber",
                           f"{publisher.name} would subscribe {self.label(subscriber)} again")
        self._kit_subscribed.add(id(subscriber))

    def invoke(self, function: Callable[..., Any], args: tuple = ()) -> Any:
        """Call into the implementation the way its target says (e.g. inside the target's running loop)."""
        return self.target.invoke(self, function, args)

    def call(self, obj: Any, method: str, args: tuple, *, actor: str, rule_if_raises: str,
             rule_if_hangs: str | None = None, check_goes_on: bool = False) -> BaseException | None:
        """Call a method of the implementation, record it, and charge a raise to `rule_if_raises`
        (`check_goes_on`: the raise does not stop the check, which still judges what else the call did).

        Whatever the implementation raises is its own doing, BaseExceptions included (a KeyboardInterrupt
        or SystemExit raised by its code is no signal to the kit: the check runs on a thread of its own,
        and a real interrupt from the terminal reaches the main thread only)."""
        if type(obj).__module__.startswith("rstck.") and not callable(getattr(obj, method, None)):
            # The kit's own stand-in for the implementation's object (an adapter's proxy) lacks the method:
            # a defect of the kit, never a raise of the implementation's.
            raise AssertionError(f"the kit's stand-in {self.label(obj)} has no {method}() method")
        signal = self.trace.record(method, actor, args)
        hang_rule = rule_if_hangs or {"cancel": "3.5"}.get(method, rule_if_raises)
        with self.underway(signal.call_text(), hang_rule, method):
            try:
                self.invoke(getattr(obj, method), args)
            except RetryCallMode:
                raise
            except BaseException as exc:  # noqa: BLE001 - see the docstring
                if self._is_on_purpose(exc):
                    carried = "" if exc is self.on_purpose else f"{show(exc)}, carrying "
                    signal.outcome = f"raised {carried}the kit's on-purpose error back (2.13: surfaced to the caller)"
                    self.surfaced.append("raised")
                    return exc
                instead = (self.target.call_not_made(exc, signal.call_text())
                           or self.target.loop_retry(exc, signal.call_text()))
                if instead is not None:
                    raise instead from exc
                signal.outcome = f"raised {show(exc)}"
                self.violate(rule_if_raises, f"{method}() to return normally", f"#{signal.seq} raised {show(exc)}",
                             check_goes_on=check_goes_on)
                return exc
            finally:
                signal.returned_ns = time.monotonic_ns()
        signal.outcome = "returned normally"
        return None

    @contextlib.contextmanager
    def underway(self, text: str, rule: str, method: str):
        """Marks a call into the implementation as under way (nested in the trace): if it never returns, the
        runner charges `rule` (a factory, with rule "", is a target error)."""
        entry = Outstanding(text, rule, method, time.monotonic())
        self.outstanding.append(entry)
        if CALL_STATUS is not None:
            CALL_STATUS(text)
        self.trace.enter()
        try:
            yield entry
        finally:
            self.trace.leave()
            self.outstanding.remove(entry)
            if CALL_STATUS is not None:
                CALL_STATUS(self.outstanding[-1].text if self.outstanding else "")

    def call_expecting_error(self, obj: Any, method: str, args: tuple, *, error_type: str, rule: str,
                             actor: str = "publisher") -> None:
        """Call a method that the rule says must raise `error_type` to its caller (1.9, 2.13)."""
        signal = self.trace.record(method, actor, args)
        with self.underway(signal.call_text(), rule, method):
            try:
                self.invoke(getattr(obj, method), args)
            except RetryCallMode:
                raise
            except BaseException as exc:  # noqa: BLE001 - the implementation's own doing (see call)
                not_made = self.target.call_not_made(exc, signal.call_text())
                if not_made is not None:
                    raise not_made from exc
                signal.outcome = f"raised {show(exc)}"
                if error_type not in {cls.__name__ for cls in type(exc).__mro__}:
                    self.violate(rule, f"{method}() to raise {error_type}", f"#{signal.seq} raised {show(exc)}")
            else:
                signal.outcome = "returned normally"
                self.violate(rule, f"{method}() to raise {error_type}", f"#{signal.seq} returned normally")

    def violate(self, rule: str, expected: str, observed: str, *, check_goes_on: bool = False) -> None:
        """Record a violation. The first few of each rule are kept with their trace context; after that
        they are only counted, so that an implementation that breaks a rule on every element of an endless
        stream costs no memory. `check_goes_on`: the violation does not stop the check at its next settle
        or expectation (it is raised when the check ends), so that the check still judges its own item."""
        charged = self.rule_aliases.get(rule, rule)
        if charged is None:
            self.trace.note(f"{observed} (not charged by this check: {rule} of the core, or an item it does not judge)")
            return
        rule = charged
        seen = self.violation_counts[rule] = self.violation_counts.get(rule, 0) + 1
        if seen > VIOLATIONS_KEPT_PER_RULE:
            return
        violation = RuleViolation(rule, expected, observed)
        violation.check_goes_on = check_goes_on
        self.violations.append(violation)
        self.must_broken = self.must_broken or load_catalog()[rule].is_must
        more = " (further ones are counted, not shown)" if seen == VIOLATIONS_KEPT_PER_RULE else ""
        self.trace.record("violation", "", (Label(f"!! {rule}: {observed}{more}"),))

    def kit_fault(self, rule: str, expected: str, observed: str) -> bool:
        """The kit would break `rule` itself: recorded as the kit's fault (an error verdict). Returns False,
        so that `return session.kit_fault(...)` both records and refuses."""
        self.kit_faults.append(KitFault(rule, expected, observed))
        self.trace.record("violation", "", (Label(f"!! the kit's own fault, {rule}: {observed}"),))
        return False

    def contract_deviation(self, expected: str, observed: str) -> None:
        """The target did not make what its factory promises (create_publisher(n): exactly n elements)."""
        raise TargetError(f"the target broke its contract: create_publisher(n) makes a publisher of exactly "
                          f"n elements, then on_complete; expected {expected}, {observed}")

    def report(self, source: str, exception: BaseException | None, text: str) -> None:
        """Something the implementation reported (a log record, a thread that died, a loop error)."""
        self.trace.note(text if exception is None else f"{text}: {show(exception)}")
        if self._is_on_purpose(exception) or (source == "log" and str(self.on_purpose) in text):
            self.surfaced.append(source)

    def _is_on_purpose(self, exception: BaseException | None, depth: int = 0) -> bool:
        """Whether `exception` is the on-purpose error, or carries it (as cause, context or in a group)."""
        if exception is None or depth > 8:
            return False
        if exception is self.on_purpose:
            return True
        inner = list(getattr(exception, "exceptions", ()) or ()) + [exception.__cause__, exception.__context__]
        return any(self._is_on_purpose(e, depth + 1) for e in inner if isinstance(e, BaseException))

    def run_reaction(self, reaction: Callable[..., None], *args: Any) -> None:
        try:
            reaction(*args)
        except Exception as exc:  # a check's own reaction broke: the kit's fault
            self.kit_errors.append(exc)

    def raise_pending(self, *, every: bool = False) -> None:
        """Raise the most severe violation recorded so far that stops the check (`every`: of all), if any."""
        stopping = self.violations if every else [v for v in self.violations if not getattr(v, "check_goes_on", False)]
        if stopping:
            raise load_catalog().most_severe(stopping)

    def finish(self) -> None:
        """End the check as a well-behaved peer: cancel every subscription a probe still has open, and
        complete every stream the kit still feeds to a subscriber under test (2.9 allows it at any time),
        so that nothing the check started waits on forever."""
        self.check_returned = True
        self.raise_pending(every=True)
        for probe in list(self.probes):
            if probe.subscription is not None and not probe.cancelled and not probe.terminated:
                probe.cancel()
        for subscription in self.kit_subscriptions:
            if subscription.announced and not subscription.cancelled and subscription.publisher.can_signal(subscription):
                subscription.publisher.send_complete(subscription=subscription, rule_if_raises="2.9")
        self.raise_pending(every=True)

    def seal(self) -> None:
        """The check is over: from now on what it left behind (threads still delivering, calls that return
        late) is counted, not recorded or judged."""
        self.abandoned = True
        self.trace.recording = False
        for probe in list(self.probes):
            probe._refresh()

    def abandon(self) -> None:
        """The check was given up at its deadline: sealed, and the subscriptions its probes still hold are
        cancelled (on a thread of their own: the cancel may hang as well)."""
        self.seal()
        probes = list(self.probes)
        open_subscriptions = [p for p in probes if p.subscription is not None and not p.cancelled and not p.terminated]

        def cancel_all() -> None:
            for probe in open_subscriptions:
                probe.cancel()

        if open_subscriptions:
            thread = threading.Thread(target=cancel_all, name="rstck-abandon", daemon=True)
            mark_kit_thread(thread)
            thread.start()

    def leftovers(self) -> list[str]:
        """The threads an abandoned check left busy (on a CPU or waiting for one): its own, and the
        implementation's it watched. Parked or blocked threads cost nothing and are not listed."""
        threads = self._settler.threads.watched(self._settler.signalling())
        if self._check_thread is not None and self._check_thread.is_alive():
            threads[self._check_thread.ident] = self._check_thread
        states = self._settler.threads.states(threads)
        return [thread.name if thread is not None else str(ident)
                for ident, thread in threads.items() if states[ident].kind == "running"]

    def close(self) -> None:
        self.target.session_closed(self)
        self._settler.close()

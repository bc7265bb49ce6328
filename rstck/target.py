"""Targets: what an adapter hands to the rules, and the per-check session the rules use.

A check receives a `Session`: one check's use of a target. It creates the objects
under test through the target's factories, subscribes kit probes to them, settles,
and collects the violations the probes observe, all into one trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import itertools
import threading
import time
import weakref
from typing import Any, Callable

from .probes import ProbeObserver, ProbePublisher, ProbeSubscriber
from .rules.catalog import load_catalog
from .settle import DEFAULT_DEADLINE_S, RESPONSIVENESS_BOUND_S, InstrumentedExecutor, SettleOutcome, Settler
from .signals import Label, Trace, show
from .verdict import NotApplicable, RuleViolation, TargetError


@dataclasses.dataclass(frozen=True)
class Profile:
    """How a language maps the spec's error types. Errors are matched by class name."""

    name: str
    type_error: str  # null arguments (1.9, 2.13)
    range_error: str  # request(n <= 0) (3.9)


PYTHON = Profile("python", type_error="TypeError", range_error="ValueError")

# What a target can offer; a check that needs something a target lacks is n/a.
FACTORY_CAPABILITIES = ("publisher", "failed_publisher", "subscriber", "processor")


class Target:
    """Base of all targets. Adapters subclass it and fill in the factories they support."""

    name: str = "target"
    profile: Profile = PYTHON
    max_elements: int | None = None
    capabilities: frozenset[str] = frozenset()
    quiet_period_s: float | None = None
    responsiveness_bound_s: float = RESPONSIVENESS_BOUND_S

    def __init__(self) -> None:
        self._active: Session | None = None

    def new_publisher(self, session: Session, n: int) -> Any:
        raise NotApplicable("this target offers no publisher")

    def new_failed_publisher(self, session: Session) -> Any:
        raise NotApplicable("this target offers no failed publisher (create_failed_publisher)")

    def new_subscriber(self, session: Session, observer: Any = None) -> Any:
        raise NotApplicable("this target offers no subscriber")

    def new_processor(self, session: Session) -> Any:
        raise NotApplicable("this target offers no processor")

    def make_settler(self, trace: Trace) -> Settler:
        return Settler(trace, quiet_period_s=self.quiet_period_s)

    def open_session(self, deadline_s: float = DEFAULT_DEADLINE_S) -> Session:
        session = Session(self, deadline_s)
        self._active = session
        return session

    # Implementations reach the active session's loop and executor through the target,
    # so factories can be written once: lambda n: MyPublisher(range(n), target.executor).
    @property
    def executor(self) -> InstrumentedExecutor:
        return self._require_session("executor").executor

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._require_session("loop").loop

    def _require_session(self, what: str) -> Session:
        if self._active is None:
            raise RuntimeError(f"target.{what} exists only while a check runs: use it inside a factory")
        return self._active

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class InProcessTarget(Target):
    """A target made of Python factories: the in-process adapter.

    create_publisher(n): a publisher of exactly n elements, then on_complete.
    create_failed_publisher(): optional; a publisher that signals on_error after on_subscribe.
    max_elements: None when any n can be produced, else the most the publisher can produce.
    create_subscriber(): optional; a subscriber under test. It may take one argument,
        an observer that it tells when it has processed each signal (white box).
    create_processor(): optional; an identity processor under test.
    quiet_period_s: only for implementations that start threads the kit cannot see (not
        target.executor or target.loop): settle then also waits until no signal arrived
        for this long, and the result row says so.
    responsiveness_bound_s: how long request, cancel (3.4, 3.5) and on_next (2.2) may take
        to return.
    """

    def __init__(self, create_publisher: Callable[[int], Any] | None = None,
                 create_failed_publisher: Callable[[], Any] | None = None,
                 max_elements: int | None = None, *,
                 create_subscriber: Callable[..., Any] | None = None,
                 create_processor: Callable[[], Any] | None = None,
                 name: str | None = None, quiet_period_s: float | None = None,
                 responsiveness_bound_s: float = RESPONSIVENESS_BOUND_S, profile: Profile = PYTHON):
        super().__init__()
        for label, factory in (("create_publisher", create_publisher),
                               ("create_failed_publisher", create_failed_publisher),
                               ("create_subscriber", create_subscriber),
                               ("create_processor", create_processor)):
            if factory is not None and not callable(factory):
                raise TypeError(f"InProcessTarget: {label} must be callable, got {show(factory)}")
        if max_elements is not None and (not isinstance(max_elements, int) or max_elements < 0):
            raise TypeError(f"InProcessTarget: max_elements must be None or an int >= 0, got {max_elements!r}")
        self.create_publisher = create_publisher
        self.create_failed_publisher = create_failed_publisher
        self.create_subscriber = create_subscriber
        self.create_processor = create_processor
        self.max_elements = max_elements
        self.name = name or "in-process target"
        self.quiet_period_s = quiet_period_s
        self.responsiveness_bound_s = responsiveness_bound_s
        self.profile = profile
        offered = dict(zip(FACTORY_CAPABILITIES, (create_publisher, create_failed_publisher,
                                                 create_subscriber, create_processor)))
        self.capabilities = frozenset({k for k, v in offered.items() if v is not None}
                                      | {"null_arguments", "call_depth", "identity", "threads"}
                                      | ({"observer"} if create_subscriber and _takes_an_argument(create_subscriber)
                                         else set()))

    def new_publisher(self, session: Session, n: int) -> Any:
        if self.create_publisher is None:
            return super().new_publisher(session, n)
        return _made(f"create_publisher({n})", self.create_publisher, n)

    def new_failed_publisher(self, session: Session) -> Any:
        if self.create_failed_publisher is None:
            return super().new_failed_publisher(session)
        return _made("create_failed_publisher()", self.create_failed_publisher)

    def new_subscriber(self, session: Session, observer: Any = None) -> Any:
        if self.create_subscriber is None:
            return super().new_subscriber(session, observer)
        if _takes_an_argument(self.create_subscriber):
            return _made("create_subscriber(observer)", self.create_subscriber, observer)
        return _made("create_subscriber()", self.create_subscriber)

    def new_processor(self, session: Session) -> Any:
        if self.create_processor is None:
            return super().new_processor(session)
        return _made("create_processor()", self.create_processor)


# The demand the kit's downstream probe keeps open on a processor under test as a subscriber,
# so that the processor has a reason to request upstream.
DOWNSTREAM_DEMAND = 16


class _ProcessorView(Target):
    """A processor target seen in one role (4.1: it must obey both contracts)."""

    role = ""

    def __init__(self, processor_target: Target):
        super().__init__()
        self.base = processor_target
        self.name = f"{processor_target.name} (processor as {self.role})"
        self.profile = processor_target.profile
        self.max_elements = processor_target.max_elements
        self.quiet_period_s = processor_target.quiet_period_s
        self.responsiveness_bound_s = processor_target.responsiveness_bound_s
        self.capabilities = (processor_target.capabilities - set(FACTORY_CAPABILITIES) - {"observer"}) | {
            self.role} | ({"failed_publisher"} if self.role == "publisher" else set())

    def make_settler(self, trace: Trace) -> Settler:
        return self.base.make_settler(trace)

    def open_session(self, deadline_s: float = DEFAULT_DEADLINE_S) -> Session:
        session = super().open_session(deadline_s)
        self.base._active = session  # the processor's factory may use target.executor / target.loop
        return session


class ProcessorAsPublisher(_ProcessorView):
    """The processor under test as a publisher: the kit's source upstream feeds it n elements."""

    role = "publisher"

    def new_publisher(self, session: Session, n: int) -> Any:
        processor = self.base.new_processor(session)
        session.source(elements=range(n)).subscribe(processor)
        return processor

    def new_failed_publisher(self, session: Session) -> Any:
        processor = self.base.new_processor(session)
        session.source(elements=(), fail_with=RuntimeError("the kit's upstream fails on purpose")).subscribe(processor)
        return processor


class ProcessorAsSubscriber(_ProcessorView):
    """The processor under test as a subscriber: a kit probe downstream keeps demand open."""

    role = "subscriber"

    def new_subscriber(self, session: Session, observer: Any = None) -> Any:
        processor = self.base.new_processor(session)
        downstream = session.probe(on_next=lambda probe, _item: probe.request(1))
        session.subscribe(processor, downstream)
        downstream.request(DOWNSTREAM_DEMAND)
        return processor


def _takes_an_argument(factory: Callable[..., Any]) -> bool:
    try:
        return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
                   for p in inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return False


def _made(call: str, factory: Callable[..., Any], *args: Any) -> Any:
    try:
        made = factory(*args)
    except Exception as exc:
        raise TargetError(f"{call} raised {show(exc)}") from exc
    if made is None:
        raise TargetError(f"{call} returned None")
    return made


class Session:
    """One check's use of a target: factories, probes, settling and the shared trace."""

    def __init__(self, target: Target, deadline_s: float):
        self.target = target
        self.trace = Trace()
        self.deadline = time.monotonic() + deadline_s
        self.check_thread: threading.Thread | None = None
        self.violations: list[RuleViolation] = []
        self.kit_errors: list[BaseException] = []
        self.settled_by: set[str] = set()
        self.outstanding: list[tuple[str, str]] = []  # (call text, rule if it never returns)
        self._settler = target.make_settler(self.trace)
        # Labels by id(); the weak reference tells a live object from a later one at the same address,
        # without keeping anything alive (3.13 needs the subscriber collectable).
        self._labels: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._numbers: dict[str, itertools.count] = {}
        self._signalled = threading.local()
        self.probes: weakref.WeakSet[ProbeSubscriber] = weakref.WeakSet()

    # -- what checks use ----------------------------------------------------------------

    @property
    def profile(self) -> Profile:
        return self.target.profile

    @property
    def max_elements(self) -> int | None:
        return self.target.max_elements

    @property
    def responsiveness_bound_s(self) -> float:
        return self.target.responsiveness_bound_s

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

    def create_subscriber(self, observer: Any = None) -> Any:
        return self.target.new_subscriber(self, observer)

    def observer(self) -> ProbeObserver:
        return ProbeObserver(self, self.fresh_name("observer"))

    def source(self, **options: Any) -> ProbePublisher:
        """A kit publisher to drive a subscriber under test (manual unless given `elements`)."""
        return ProbePublisher(self, self.fresh_name("source"), **options)

    def create_processor(self) -> Any:
        return self.target.new_processor(self)

    def probe(self, **options: Any) -> ProbeSubscriber:
        probe = ProbeSubscriber(self, self.fresh_name("probe"), **options)
        self.probes.add(probe)
        return probe

    def subscribe(self, publisher: Any, probe: ProbeSubscriber | None = None, **options: Any) -> ProbeSubscriber:
        """Subscribe a probe (a new one unless given) to `publisher`; subscribe must return normally (1.9)."""
        probe = probe or self.probe(**options)
        subscribed = probe.subscribed
        self.call(publisher, "subscribe", (probe,), actor="publisher", rule_if_raises="1.9")
        if probe.subscribed == subscribed:
            self.settle()  # an asynchronous publisher's on_subscribe: the probe needs it to request
        return probe

    def settle(self) -> SettleOutcome:
        """Return once the target can produce no further signal without outside input."""
        outcome = self._settler.settle(self.deadline)
        self.settled_by.add(outcome.method)
        for probe in list(self.probes):
            if probe.cancelled:
                probe.cancel_settled = True
        self.trace.note("settled")
        self.raise_pending()
        return outcome

    @property
    def executor(self) -> InstrumentedExecutor:
        if self._settler.executor is None:
            self._settler.executor = InstrumentedExecutor()
        return self._settler.executor

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._settler.loop is None:
            self._settler.loop = asyncio.new_event_loop()
        return self._settler.loop

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
    def signalling(self, subscriber: Any):
        """Marks that this thread is inside a signal to `subscriber` (the context of 3.1)."""
        stack = self._signalled.__dict__.setdefault("stack", [])
        stack.append(subscriber)
        try:
            yield
        finally:
            stack.pop()

    def signalled_subscribers(self) -> list[Any]:
        return list(self._signalled.__dict__.get("stack", ()))

    def call(self, obj: Any, method: str, args: tuple, *, actor: str, rule_if_raises: str,
             rule_if_hangs: str | None = None) -> BaseException | None:
        """Call a method of the implementation, record it, and charge a raise to `rule_if_raises`."""
        signal = self.trace.record(method, actor, args)
        hang_rule = rule_if_hangs or {"cancel": "3.5"}.get(method, rule_if_raises)
        entry = (signal.call_text(), hang_rule)
        self.outstanding.append(entry)
        self.trace.enter()
        try:
            getattr(obj, method)(*args)
        except Exception as exc:
            signal.outcome = f"raised {show(exc)}"
            self.violate(rule_if_raises, f"{method}() to return normally", f"#{signal.seq} raised {show(exc)}")
            return exc
        finally:
            self.trace.leave()
            self.outstanding.remove(entry)
            signal.returned_ns = time.monotonic_ns()
        signal.outcome = "returned normally"
        return None

    def call_expecting_error(self, obj: Any, method: str, args: tuple, *, error_type: str, rule: str,
                             actor: str = "publisher") -> None:
        """Call a method that the rule says must raise `error_type` to its caller (1.9, 2.13)."""
        signal = self.trace.record(method, actor, args)
        self.trace.enter()
        try:
            getattr(obj, method)(*args)
        except Exception as exc:
            signal.outcome = f"raised {show(exc)}"
            if error_type not in {cls.__name__ for cls in type(exc).__mro__}:
                self.violate(rule, f"{method}() to raise {error_type}", f"#{signal.seq} raised {show(exc)}")
        else:
            signal.outcome = "returned normally"
            self.violate(rule, f"{method}() to raise {error_type}", f"#{signal.seq} returned normally")
        finally:
            self.trace.leave()

    def violate(self, rule: str, expected: str, observed: str) -> None:
        self.violations.append(RuleViolation(rule, expected, observed))
        self.trace.record("violation", "", (Label(f"!! {rule}: {observed}"),))

    def run_reaction(self, reaction: Callable[..., None], *args: Any) -> None:
        try:
            reaction(*args)
        except Exception as exc:  # a check's own reaction broke: the kit's fault
            self.kit_errors.append(exc)

    def raise_pending(self) -> None:
        """Raise the most severe violation recorded so far, if any."""
        if self.violations:
            raise load_catalog().most_severe(self.violations)

    def finish(self) -> None:
        """End the check as a well-behaved subscriber: cancel every subscription still open."""
        self.raise_pending()
        for probe in list(self.probes):
            if probe.subscription is not None and not probe.cancelled and not probe.terminated:
                probe.cancel()
        self.raise_pending()

    def close(self) -> None:
        self.target._active = None
        self._settler.close()


def load_target(spec: str) -> Target:
    """Import `module:attribute` and return the Target it names; BadInput says what to fix."""
    import importlib
    import os
    import sys

    from .verdict import BadInput

    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise BadInput(f"target {spec!r}: write it as MODULE:ATTRIBUTE, e.g. mypkg.tck:target")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: the user's project is importable
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BadInput(f"target {spec!r}: cannot import {module_name!r} ({exc}); "
                       "run from your project's root or install it") from exc
    except Exception as exc:
        raise BadInput(f"target {spec!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    try:
        target = getattr(module, attribute)
    except AttributeError:
        raise BadInput(f"target {spec!r}: module {module_name!r} has no attribute {attribute!r}") from None
    if not isinstance(target, Target):
        raise BadInput(f"target {spec!r} is a {type(target).__name__}, not a target: "
                       "assign rstck.InProcessTarget(create_publisher=...) to it")
    if target.name in ("target", "in-process target"):
        target.name = spec
    return target

"""JvmTarget: a Java class's Reactive Streams factories, checked through the kit's JVM (one per process).

Every check runs unchanged: the probes reach Java as proxies implementing Flow.Subscriber, the kit's
subscriptions as proxies implementing Flow.Subscription (rstck.protocols.jvm.proxies), and Java's publishers,
subscriptions, subscribers and processors are Python stand-ins. The profile is
Java's: NullPointerException for null arguments, IllegalArgumentException for request(n <= 0), matched by the
Java class name or a superclass's.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from rstck.core.session import Session
from rstck.core.settle import QUIET_WINDOW_MIN_S, SettleOutcome, Settler, SettleTimeout
from rstck.core.signals import Trace
from rstck.core.target import ErrorNames, Target
from rstck.core.thread_states import ThreadState
from rstck.core.verdict import BadInput, TargetError
from rstck.protocols.jvm.errors import raised_in_call
from rstck.protocols.jvm.process import JvmProcess, shared_jvm
from rstck.protocols.jvm.proxies import (FLOW, REACTIVE_STREAMS, TCK_WHITEBOX_PROBE, JavaElements, JavaProcessor,
                                         JavaPublisher, JavaReferences, JavaSubscriber, compiled_tck_probe,
                                         observer_proxy, tck_whitebox_probe)
from rstck.protocols.jvm.threads import describe, java_threads, linger_state

JAVA = ErrorNames("java", type_error="NullPointerException", range_error="IllegalArgumentException")

# The factory methods of the JVM TCK's verification classes, by role: the Flow form first.
PUBLISHER_FACTORIES = ("createFlowPublisher", "createPublisher")
FAILED_PUBLISHER_FACTORIES = ("createFailedFlowPublisher", "createFailedPublisher")
SUBSCRIBER_FACTORIES = ("createFlowSubscriber", "createSubscriber")
# The white box without the TCK's WhiteboxSubscriberProbe: the observer is a Subscriber of the same family, told
# each signal once processed (docs/jvm.md).
WHITEBOX_FACTORIES = (("createWhiteboxFlowSubscriber", FLOW), ("createWhiteboxSubscriber", REACTIVE_STREAMS))
# The JVM TCK's own white box (SubscriberWhiteboxVerification, and its Flow variant): the factory takes the TCK's
# WhiteboxSubscriberProbe, which the kit hands as a stand-in of its own that tells the same observer.
TCK_WHITEBOX_FACTORIES = ("createFlowSubscriber", "createSubscriber")
PROCESSOR_FACTORIES = ("createIdentityFlowProcessor", "createIdentityProcessor")
ELEMENT_FACTORY = "createElement(int)"
# The JVM TCK's IdentityProcessorVerification passes its TEST_BUFFER_SIZE to createIdentityProcessor(int).
PROCESSOR_BUFFER_SIZE = 16
LONG_MAX = 2**63 - 1

NOT_OBSERVABLE = {
    "2.13.surfaced": "the JVM adapter does not yet read Java's logs, standard error or uncaught-exception handlers, "
                     "where a Java publisher makes a subscriber's error known",
}

# The kit's subscribers each JVM may still call (3.13), one registry per JVM: its targets share it.
_REFERENCES: weakref.WeakKeyDictionary[JvmProcess, JavaReferences] = weakref.WeakKeyDictionary()


def java_references(jvm: JvmProcess) -> JavaReferences:
    references = _REFERENCES.get(jvm)
    if references is None:
        references = _REFERENCES.setdefault(jvm, JavaReferences())
    return references


class JvmTarget(Target):
    """The factories of a Java class (a public no-argument constructor), on `classpath`.

    class_name: the class's binary name (com.example.RangeFactory, or a nested one with `$`).
    classpath: its jars and class directories (py4j's jar and the kit's bridge are added).
    """

    may_serve = frozenset({"publisher", "subscriber", "processor"})
    error_names = JAVA

    def __init__(self, class_name: str, *, classpath: list[str] | tuple[str, ...] = (), name: str | None = None):
        super().__init__()
        if not class_name:
            raise BadInput("target jvm:CLASS: name the class, e.g. jvm:com.example.RangeFactory")
        self.class_name = class_name
        self.classpath = list(classpath)
        self.name = name or f"jvm:{class_name}"
        self.loaded_as = self.name
        jvm = shared_jvm(self.classpath)
        try:
            listed = jvm.bridge.methods(class_name)
        except Exception as exc:  # noqa: BLE001 - not found, or not loadable: the user's to fix
            raise BadInput(f"target {self.name}: the class cannot be loaded from the classpath "
                           f"{':'.join(self.classpath) or '(empty)'}: {raised_in_call(jvm.bridge, exc)!r}") from None
        self.methods = dict(line.split(" ", 1) for line in listed.splitlines())  # "name(parameter)" -> returns
        self.publisher_factory = self._factory(PUBLISHER_FACTORIES, "long")
        self.failed_factory = self._factory(FAILED_PUBLISHER_FACTORIES, "")
        self.subscriber_factory = self._factory(SUBSCRIBER_FACTORIES, "")
        self.whitebox_factory = next(((name, family) for name, family in WHITEBOX_FACTORIES
                                      if f"{name}({family}Subscriber)" in self.methods), None)
        self.whitebox_takes_tck_probe = False
        if self.whitebox_factory is None:
            self.whitebox_factory = self._factory(TCK_WHITEBOX_FACTORIES, TCK_WHITEBOX_PROBE)
            self.whitebox_takes_tck_probe = self.whitebox_factory is not None
        self.processor_factory = self._factory(PROCESSOR_FACTORIES, "int")
        if not (self.publisher_factory or self.failed_factory or self.subscriber_factory or self.whitebox_factory
                or self.processor_factory):
            raise BadInput(f"target {self.name}: the class has none of {', '.join(PUBLISHER_FACTORIES)}(long), "
                           f"{', '.join(FAILED_PUBLISHER_FACTORIES)}(), {', '.join(SUBSCRIBER_FACTORIES)}(), "
                           f"{', '.join(f'{n}({f}Subscriber)' for n, f in WHITEBOX_FACTORIES)}, "
                           f"{', '.join(TCK_WHITEBOX_FACTORIES)}(WhiteboxSubscriberProbe), "
                           f"{', '.join(PROCESSOR_FACTORIES)}(int)")
        instance = self._instance(jvm)
        self.max_elements = self._max_elements(instance)
        self.recursion_bound = self._long_or_none(instance, "boundedDepthOfOnNextAndRequestRecursion")
        self.capabilities = frozenset(
            {"null_arguments", "call_depth", "threads", "identity"}
            | ({"publisher"} if self.publisher_factory else set())
            | ({"failed_publisher"} if self.failed_factory else set())
            | ({"subscriber"} if self.subscriber_factory or self.whitebox_factory else set())
            | ({"observer"} if self.whitebox_factory else set())
            | ({"processor"} if self.processor_factory else set()))

    def _factory(self, names: tuple[str, ...], parameter: str) -> tuple[str, str] | None:
        """The first of `names` the class has with `parameter`, and the interface family of what it returns."""
        for name in names:
            returns = self.methods.get(f"{name}({parameter})")
            if returns is not None:
                family = REACTIVE_STREAMS if returns.startswith(REACTIVE_STREAMS) else FLOW
                return name, family
        return None

    def _instance(self, jvm: JvmProcess) -> Any:
        try:
            return jvm.bridge.newInstance(self.class_name)
        except Exception as exc:  # noqa: BLE001 - its constructor threw, or it has no public no-argument one
            raise BadInput(f"target {self.name}: cannot make an instance (a public no-argument constructor): "
                           f"{raised_in_call(jvm.bridge, exc)!r}") from None

    def _long_or_none(self, instance: Any, method: str) -> int | None:
        if f"{method}()" not in self.methods:
            return None
        value = getattr(instance, method)()
        return None if value >= LONG_MAX else int(value)

    def _max_elements(self, instance: Any) -> int | None:
        # The JVM TCK's default is Long.MAX_VALUE - 1 ("unbounded"); either bound of a long means no limit here.
        value = self._long_or_none(instance, "maxElementsFromPublisher")
        return None if value is not None and value >= LONG_MAX - 1 else value

    # -- the checks' JVM ------------------------------------------------------------------------

    def prepare(self) -> None:
        shared_jvm(self.classpath)  # started, and the TCK probe's stand-in compiled, outside every check's deadline
        if self.whitebox_takes_tck_probe:
            compiled_tck_probe(self.classpath)

    def jvm(self) -> JvmProcess:
        return shared_jvm(self.classpath)

    def not_observable(self, rule: str) -> str | None:
        if rule == "3.13" and not java_references(self.jvm()).collects_on_request(self.jvm().bridge):
            return ("the JVM does not collect garbage when asked (System.gc() is disabled, as -XX:+DisableExplicitGC "
                    "does): whether a publisher dropped its subscriber cannot be seen")
        return NOT_OBSERVABLE.get(rule)

    def session_abandoned(self, session: Session) -> None:
        """Stop the JVM at once: the call the check's thread is stuck in ends; the next check starts another."""
        self.jvm().stop()

    def call_not_made(self, exc: BaseException, call: str) -> Exception | None:
        from py4j.protocol import Py4JNetworkError

        # The JVM gone (a hang's deadline stops it): py4j says so as Py4JNetworkError, or, when the connection is
        # refused at once, as the socket's own error. Neither is the call raising.
        if isinstance(exc, (Py4JNetworkError, ConnectionError)):
            return TargetError(f"the JVM ended or stopped answering during {call}: {exc!r}")
        return None

    def make_settler(self, trace: Trace) -> Settler:
        return JvmSettler(trace, self)

    def outside_thread_states(self) -> dict[Any, ThreadState]:
        """The implementation's Java threads, for lingering and yielding: read on the lingering thread, so that the
        Java thread delivering the signal it lingers in is left out (pinned threads: rstck.protocols.jvm.threads)."""
        return {("java", thread.id): linger_state(thread) for thread in java_threads(self.jvm().bridge)}

    # -- the factories ---------------------------------------------------------------------------

    def new_publisher(self, session: Session, n: int) -> Any:
        if self.publisher_factory is None:
            return super().new_publisher(session, n)
        return self._made(session, *self.publisher_factory, (n,))

    def new_failed_publisher(self, session: Session) -> Any:
        if self.failed_factory is None:
            return super().new_failed_publisher(session)
        return self._made(session, *self.failed_factory, ())

    def new_subscriber(self, session: Session) -> Any:
        if self.subscriber_factory is None:
            if self.whitebox_factory is not None:  # given alone, the white box serves the black-box checks too
                return self.new_whitebox_subscriber(session, session.observer())
            return super().new_subscriber(session)
        return self._made(session, *self.subscriber_factory, (), role="subscriber")

    def new_whitebox_subscriber(self, session: Session, observer: Any) -> Any:
        if self.whitebox_factory is None:
            return super().new_whitebox_subscriber(session, observer)
        return self._made(session, *self.whitebox_factory, (observer,), role="subscriber")

    def new_processor(self, session: Session) -> Any:
        if self.processor_factory is None:
            return super().new_processor(session)
        return self._made(session, *self.processor_factory, (PROCESSOR_BUFFER_SIZE,), role="processor")

    def _observer_for_java(self, jvm: JvmProcess, observer: Any, family: str, elements: JavaElements) -> Any:
        """The white-box observer as the factory takes it: a Subscriber of the family, or the JVM TCK's probe."""
        if self.whitebox_takes_tck_probe:
            return tck_whitebox_probe(jvm, observer, elements)
        return observer_proxy(jvm.bridge, observer, family, elements)

    def _made(self, session: Session, factory: str, family: str, args: tuple, role: str = "publisher") -> Any:
        """Call a factory on a fresh instance; what it throws or returns instead of the role's object is the
        target's. A subscriber's or processor's elements are made by the same instance's createElement(int)."""
        jvm = self.jvm()
        call = f"{factory}({', '.join(map(str, args))})"
        try:
            with session.calls.underway(call, "", factory):
                instance = self._instance(jvm)
                elements = JavaElements(instance if ELEMENT_FACTORY in self.methods else None)
                java_args = tuple(self._observer_for_java(jvm, arg, family, elements) if role == "subscriber" else arg
                                  for arg in args)
                made = getattr(instance, factory)(*java_args)
        except BadInput as exc:
            raise TargetError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - whatever a factory throws is the target's
            raise TargetError(f"{call} threw {raised_in_call(jvm.bridge, exc)!r}") from None
        interface = family + role.capitalize()
        if made is None or not jvm.bridge.isInstance(interface, made):
            raise TargetError(f"{call} returned {'null' if made is None else made.getClass().getName()}: "
                              f"not a {interface}")
        if role == "subscriber":
            stand_in = JavaSubscriber(jvm.bridge, made, family, elements)
        elif role == "processor":
            stand_in = JavaProcessor(jvm.bridge, made, family, elements, java_references(jvm))
        else:
            stand_in = JavaPublisher(jvm.bridge, made, family, references=java_references(jvm))
        session.evidence.made(stand_in, factory, args, role)
        return stand_in


class JvmSettler(Settler):
    """Settles a check whose implementation runs in the JVM: it is settled once every Java thread of the
    implementation's is parked (waiting untimed, or an idle pool worker) and stayed so, unwoken, for a confirming
    window; a thread on a timer, blocked on a monitor or running is waited for; one blocked or on a timer that
    does not move for the quiet window counts as quiet (as a Python thread the kit cannot read). Every such settle
    is a window's judgement (a thread woken but not yet run reads as parked): see `settle`."""

    quiet_reason = "the implementation's Java threads were judged by a quiet window"

    def __init__(self, trace: Trace, target: JvmTarget):
        super().__init__(trace)
        self.target = target

    def settle(self, deadline: float) -> SettleOutcome:
        outcome = self._settle(deadline)
        if outcome.method != "violation":
            self._release_collected()
        return outcome

    def _release_collected(self) -> None:
        """3.13: once settled after the kit let go of a cancelled subscription, the JVM collects garbage and the
        kit lets go of the subscribers Java no longer references (rstck.protocols.jvm.proxies.JavaReferences): a
        subscriber the publisher dropped is then collectable in Python too, and one it kept is still held."""
        jvm = self.target.jvm()
        references = java_references(jvm)
        if references.collection_due():
            references.release_collected(jvm.bridge)

    def _settle(self, deadline: float) -> SettleOutcome:
        started = time.monotonic()
        bridge = self.target.jvm().bridge
        snapshot, stable_since = None, started
        while True:
            if self.broken():
                return SettleOutcome("violation", time.monotonic() - started)
            seen = len(self.trace)
            threads = java_threads(bridge)
            now = time.monotonic()
            if not threads:
                return SettleOutcome("idle", now - started)
            state = (seen, [(t.id, t.kind, t.where, t.waits) for t in threads])
            if state != snapshot:
                snapshot, stable_since = state, now
            self._scan_trace()
            kinds = {t.kind for t in threads}
            busy = bool(kinds & {"running", "callback"})
            window = self.quiet_window(deadline)
            # Parked threads are confirmed over the smallest window: a thread woken a moment ago may not yet run.
            needed = QUIET_WINDOW_MIN_S if kinds <= {"parked"} else window
            if not busy and now - stable_since >= needed:
                # Even all parked is a window's judgement here: a Java thread unparked a moment ago reads as
                # WAITING, its wait count unchanged, until it runs, and on a loaded machine that can be longer
                # than any window. So an expected signal is waited for until the deadline before it is called
                # missing (Settler.await_signal), as for every settle a window decided.
                self.relied_on_quiet = True
                return SettleOutcome("quiet-period", now - started, needed)
            if now >= deadline:
                raise SettleTimeout(f"the implementation's Java threads were still busy at the deadline: "
                                    f"{describe(threads)}")
            self.trace.wait_for_more(seen, min(0.002, max(0.0, deadline - now)))

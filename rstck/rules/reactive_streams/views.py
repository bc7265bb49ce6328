"""A processor target seen in one role: 4.1 says a processor obeys both contracts, so every
publisher check runs against it as a publisher and every subscriber check as a subscriber."""

from __future__ import annotations

import threading
from typing import Any, Callable

from rstck.core.probes import requesting
from rstck.core.session import Session
from rstck.core.settle import DEFAULT_DEADLINE_S, Settler
from rstck.core.signals import Trace
from rstck.core.target import FACTORY_CAPABILITIES, Target

# The demand the kit's downstream probe keeps open on a processor under test as a subscriber,
# so that the processor has a reason to request upstream.
DOWNSTREAM_DEMAND = 16


class _ProcessorView(Target):
    role = ""

    def __init__(self, processor_target: Target):
        super().__init__()
        self.base = processor_target
        self.name = f"{processor_target.name} (processor as {self.role})"
        self.error_names = processor_target.error_names
        self.max_elements = processor_target.max_elements
        self.quiet_period_s = processor_target.quiet_period_s
        self.responsiveness_bound_s = processor_target.responsiveness_bound_s
        self.stream_length = processor_target.stream_length
        self.may_serve = processor_target.may_serve
        self.known_hangs = processor_target.known_hangs  # one processor, whichever role it is checked in
        self.capabilities = (processor_target.capabilities - set(FACTORY_CAPABILITIES) - {"observer"}) | {
            self.role} | ({"failed_publisher"} if self.role == "publisher" else set())

    def make_settler(self, trace: Trace) -> Settler:
        return self.base.make_settler(trace)

    def not_observable(self, rule: str) -> str | None:
        return self.base.not_observable(rule)

    def invoke(self, session: Session, function: Callable[..., Any], args: tuple) -> Any:
        return self.base.invoke(session, function, args)

    def loop_retry(self, exc: BaseException, call: str) -> BaseException | None:
        return self.base.loop_retry(exc, call)

    def call_not_made(self, exc: BaseException, call: str) -> Exception | None:
        return self.base.call_not_made(exc, call)

    def open_session(self, deadline_s: float = DEFAULT_DEADLINE_S) -> Session:
        session = super().open_session(deadline_s)
        self.base._active = session  # the processor's factory may use target.executor / target.loop
        return session

    def session_closed(self, session: Session) -> None:
        super().session_closed(session)
        self.base.session_closed(session)

    def session_abandoned(self, session: Session) -> None:
        self.base.session_abandoned(session)

    def bind_thread(self, thread, session: Session) -> None:
        super().bind_thread(thread, session)
        self.base.bind_thread(thread, session)


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


def _demand_asker() -> Callable[[Any, Any], None]:
    """A reaction that asks for the downstream demand once, from whichever comes first: the probe's on_subscribe
    or the check's thread."""
    lock, asked = threading.Lock(), []

    def ask(probe: Any, _subscription: Any) -> None:
        with lock:
            if asked:
                return
            asked.append(True)
        probe.request(DOWNSTREAM_DEMAND)

    return ask


class ProcessorAsSubscriber(_ProcessorView):
    """The processor under test as a subscriber: a kit probe downstream keeps demand open."""

    role = "subscriber"

    def new_subscriber(self, session: Session) -> Any:
        processor = self.base.new_processor(session)
        downstream = session.probe(on_next=requesting(1))
        session.subscribe(processor, downstream)
        ask = _demand_asker()
        if not downstream.subscribed:  # 1.9 sets no time for on_subscribe: it may wait for the processor's upstream
            downstream.react("on_subscribe", ask)
        if downstream.subscribed:  # (or came meanwhile, perhaps before the reaction was set)
            ask(downstream, None)
        return processor

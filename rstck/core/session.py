"""The per-check session: one check's use of a target, and what a core check is called with.

A check creates the objects under test through the target's factories, subscribes kit probes to them, and
settles. The session is made of parts that the probes, the adapters and the runner use directly:

- `findings` (rstck.core.findings): the rules broken, by the implementation or by the kit itself;
- `calls` (rstck.core.calls): the kit's calls into the implementation, and those still under way;
- `labels` (rstck.core.labels): how the trace names the check's objects;
- `signalling` (rstck.core.signalling): the kit's signals in progress on each thread;
- `surfacing` (rstck.core.surfacing): the on-purpose error of 2.13, and what the implementation reports;
- `ends` (rstck.core.kit_ends): the kit's probes and the subscriptions its publishers handed out;
- `lifecycle` (rstck.core.lifecycle): the check's end, and what it opened that must be closed then;
- `settler` (rstck.core.settle): what decides that nothing more happens without outside input.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from rstck.core.calls import Calls
from rstck.core.evidence import Evidence, recorded
from rstck.core.findings import Findings
from rstck.core.kit_ends import KitEnds
from rstck.core.kit_threads import start_kit_thread
from rstck.core.labels import Labels
from rstck.core.lifecycle import Lifecycle
from rstck.core.probes import ProbeObserver, ProbePublisher, ProbeSubscriber
from rstck.core.settle import SettleOutcome, SettleTimeout
from rstck.core.signalling import Signalling
from rstck.core.signals import Trace
from rstck.core.surfacing import Surfacing
from rstck.core.verdict import NotApplicable, RuleViolation

if TYPE_CHECKING:
    import asyncio

    from rstck.core.executor import InstrumentedExecutor
    from rstck.core.target import ErrorNames, Target


class Session:
    """One check's use of a target: factories, probes, settling and the shared trace."""

    def __init__(self, target: Target, deadline_s: float):
        self.target = target
        self.trace = Trace()
        self.evidence = Evidence(self.trace)  # what a reproducer of this check needs (rstck/core/evidence.py)
        self.deadline = time.monotonic() + deadline_s
        self._check_thread: threading.Thread | None = None
        self.check_thread_id: int | None = None
        self.findings = Findings(self.trace)
        self.labels = Labels()
        self.signalling = Signalling(self.trace)
        self.surfacing = Surfacing(self.trace)
        self.ends = KitEnds(self.findings, self.labels)
        self.calls = Calls(self)
        self.lifecycle = Lifecycle(self)
        self.settler = target.make_settler(self.trace)
        # Settling may end early once a MUST item is broken: the verdict is decided.
        self.settler.broken = lambda: self.findings.must_broken
        self.settled_by: list[str] = []  # how each settle was decided, first occurrence order
        self.quiet_window_s = 0.0  # the longest quiet window a settle relied on

    @property
    def check_thread(self) -> threading.Thread | None:
        """The thread the check runs on (the kit's own: signals on it are never a foreign thread's)."""
        return self._check_thread

    @check_thread.setter
    def check_thread(self, thread: threading.Thread) -> None:
        self._check_thread = thread
        self.check_thread_id = thread.ident
        self.target.bind_thread(thread, self)

    # -- what the target offers ---------------------------------------------------------------

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

    # -- the objects under test, and the kit's ends ---------------------------------------------

    def create_publisher(self, n: int) -> Any:
        return self._named_publisher(self.target.new_publisher(self, n))

    def create_failed_publisher(self) -> Any:
        return self._named_publisher(self.target.new_failed_publisher(self))

    def _named_publisher(self, publisher: Any) -> Any:
        self.labels.call_as("publisher", publisher)
        return publisher

    def create_subscriber(self) -> Any:
        return self.target.new_subscriber(self)

    def create_whitebox_subscriber(self, observer: ProbeObserver) -> Any:
        return self.target.new_whitebox_subscriber(self, observer)

    def create_processor(self) -> Any:
        return self.target.new_processor(self)

    def observer(self) -> ProbeObserver:
        return ProbeObserver(self, self.labels.fresh("observer"))

    def source(self, **options: Any) -> ProbePublisher:
        """A kit publisher to drive a subscriber under test (manual unless given `elements`)."""
        return ProbePublisher(self, self.labels.fresh("source"), **options)

    def probe(self, kind: type[ProbeSubscriber] = ProbeSubscriber, **options: Any) -> ProbeSubscriber:
        probe = kind(self, self.labels.fresh("probe"), **options)
        self.ends.probes.add(probe)
        return probe

    def subscribe(self, publisher: Any, probe: ProbeSubscriber | None = None, **options: Any) -> ProbeSubscriber:
        """Subscribe a probe (a new one unless given) to `publisher`; subscribe must return normally (1.9)."""
        return self._subscribe(publisher, probe or self.probe(**options))

    @recorded("subscribe", lambda self, evidence, publisher, probe: {"publisher": evidence.value(publisher),
                                                                     "probe": evidence.value(probe)},
              lambda self: self.evidence)
    def _subscribe(self, publisher: Any, probe: ProbeSubscriber) -> ProbeSubscriber:
        if getattr(probe, "subscribe_calls", 0):
            self.findings.kit_fault("1.10", "a different subscriber for each subscribe",
                                    f"{probe.name} subscribed again")
            return probe
        probe.subscribe_calls = 1
        self.calls.make(publisher, "subscribe", (probe,), actor="publisher", rule_if_raises="1.9")
        if not probe.subscribed:
            self.settle()  # an asynchronous publisher's on_subscribe: the probe needs it to request
        return probe

    # -- settling -------------------------------------------------------------------------------

    @recorded("settle", lambda self, evidence: {}, lambda self: self.evidence)
    def settle(self) -> SettleOutcome:
        """Return once the target can produce no further signal without outside input.

        Never while a call between the kit and the implementation is under way on another thread (the kit's
        second-thread request blocked on the implementation's lock, a probe lingering inside on_next on the
        implementation's thread): the implementation goes on once it returns, so a silence then would be one the
        kit caused. Settling waits for it, up to the deadline; a call still under way then is charged to the
        rule its hang breaks, saying so."""
        outcome = self.settler.settle(self.deadline)
        while self.calls.under_way_elsewhere() and not self.findings.must_broken:
            self.wait_for_calls_elsewhere()
            outcome = self.settler.settle(self.deadline)
        self.note_settled(outcome.method, outcome.window_s)
        self.ends.settled()
        self.trace.note("settled" if outcome.method == "idle" else f"settled: {outcome.method}")
        self.findings.raise_pending()
        return outcome

    def wait_for_calls_elsewhere(self, *, judge: bool = True) -> None:
        """Wait until no call between the kit and the implementation is under way on another thread; at the
        deadline, charge the one that hung (`judge`), or just stop waiting."""
        while True:
            under_way = self.calls.under_way_elsewhere()
            if not under_way or (judge and self.findings.must_broken):
                return
            if time.monotonic() >= self.deadline:
                if not judge:
                    return
                calls = [entry for entry in under_way if entry.rule]  # the kit's calls into the implementation
                if not calls:
                    raise SettleTimeout(f"{under_way[0].text} was still under way at the deadline")
                call = calls[0]
                raise RuleViolation(call.rule, f"{call.text} to return",
                                    f"it had not returned by the deadline ({time.monotonic() - call.since:.2f} s; "
                                    "settling waits for the kit's calls under way before it judges any silence)",
                                    timed_out=True)
            self.trace.wait_for_more(len(self.trace), 0.002)

    def note_settled(self, method: str, window_s: float = 0.0) -> None:
        """A settle was decided by `method` (rstck.core.settle.SettleOutcome), relying on a quiet window of
        `window_s`: the result row says so."""
        if method not in self.settled_by:
            self.settled_by.append(method)
        self.quiet_window_s = max(self.quiet_window_s, window_s)

    def quiet_note(self) -> str:
        """What a verdict of "nothing (more) arrived" rests on, when a quiet window decided it."""
        if "quiet-period" not in self.settled_by:
            return ""
        waited = ", then waited for until the deadline" if self.settler.waited_to_deadline else ""
        return (f" (settled by a quiet period of {self.quiet_window_s * 1000:.0f} ms{waited}: "
                f"{self.settler.quiet_reason})")

    # -- what the kit hands to the implementation -------------------------------------------------

    @property
    def executor(self) -> InstrumentedExecutor:
        """A pool for a threaded implementation (`target.executor`), whose work settling counts exactly."""
        if self.settler.executor is None:
            from rstck.core.executor import InstrumentedExecutor
            from rstck.core.process_end import watch_pool

            executor = InstrumentedExecutor()
            watch_pool(executor)
            self.settler.executor = executor
            self.lifecycle.close_at_end(lambda: executor.shutdown(wait=False, cancel_futures=True), "the executor")
        return self.settler.executor

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The check's event loop for an asyncio implementation (`target.loop`), run by settling."""
        if self.settler.loop is None:
            import asyncio

            from rstck.core.loops import close_loop

            loop = asyncio.new_event_loop()
            loop.set_exception_handler(lambda _loop, context: self.surfacing.report(
                "loop", context.get("exception"), f"event loop: {context.get('message', 'an error')}"))
            self.settler.loop = loop
            self.lifecycle.close_at_end(lambda: close_loop(loop), "the event loop")
        return self.settler.loop

    @recorded("another_thread", lambda self, evidence, call, *, rule: {"rule": rule}, lambda self: self.evidence)
    def on_another_thread(self, call: Callable[[], None], *, rule: str) -> None:
        """Make `call` on a kit thread other than the check's, and wait for it: nothing else of the kit's
        runs meanwhile, so its calls stay serial. An implementation that lives on the kit's event loop gets
        it on the loop's thread, where its calls belong (thread safety there is by construction, as in
        JavaScript)."""
        if self.settler.loop_used:
            self.trace.note("the implementation lives on the kit's event loop: the call stays on the loop's thread")
            call()
            return
        thread = start_kit_thread(self.evidence.on_thread(call), "rstck-another-thread")
        thread.join(max(0.0, self.deadline - time.monotonic()))
        if thread.is_alive():
            raise RuleViolation(rule, "the call made on another thread to return", "it had not returned by the "
                                "deadline", timed_out=True)

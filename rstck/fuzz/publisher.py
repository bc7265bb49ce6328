"""The publisher machine: kit subscribers against a publisher under test (rules 1.x and 3.x).

Steps: subscribe a probe (to a new, an existing or a failed publisher; None), request(n), cancel,
give a probe a re-entrant reaction, settle. The kit's probes stay well-behaved subscribers: their
calls are serial and they never subscribe twice (1.10). A request or cancel after a terminal signal is a call
on a cancelled subscription (1.6), which a subscriber may make (2.4 asks it only to consider the subscription
cancelled): a signal it draws, or a raise, is 1.6's. The probes' monitors judge each signal as it arrives (1.1,
1.3, 1.6-1.9; a raise is charged to 1.9, 3.2, 3.15 or 3.16 by the session). This machine adds what needs the
history of the example:

- after every step: 3.12 (a cancelled subscriber heard more than CANCEL_SLACK on_next before
  the cancel settled) and 3.3 (on_next nested RECURSION_EVIDENCE deep in on_next);
- once settled: 1.9 (on_subscribe came), 3.9 (a non-positive request on a live subscription
  ended it with the profile's range error; a terminal signal of another kind is excused only where it may
  have been under way already: the demand reached the stream's end, and the request came inside a signal or
  before the target had settled since the kit's last call), 1.4 (a failed publisher signalled on_error),
  3.8 (outstanding demand was served while elements remained, whatever the total requested)
  and 1.5 (on_complete once the last element was delivered);
- calls after cancel has settled: a signal during them is 3.6 (request) or 3.7 (cancel).

The liveness checks only judge a subscriber that is its publisher's sole live one: a
multicast publisher may legitimately pace everyone to its slowest subscriber (1.11).
"""

from __future__ import annotations

import dataclasses
import time
from time import monotonic_ns as trace_clock_ns  # the clock of the trace's records
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from rstck.core import perturb
from rstck.core.evidence import recorded
from rstck.core.probes import ProbeSubscriber
from rstck.core.signals import show
from rstck.fuzz.machine import FuzzMachine, RunContext, step
from rstck.fuzz.strategies import (Reaction, demands, on_next_reactions, on_subscribe_reactions, options, stream_lengths,
                         weighted)

MAX_SUBSCRIBERS = 4
# 3.12 says "eventually": how many on_next a cancelled subscriber may still receive before its
# cancel has settled. An implementation with a deeper prefetch would be charged; none of the
# references delivers a single one.
CANCEL_SLACK = 8
# 3.3 asks for *a* bound: on_next nested this deep within on_next is taken as having none.
RECURSION_EVIDENCE = 8
# Like the 1.3 check: a signal arriving on a foreign thread dwells, so an overlap can show.
DWELL_S = 0.0005
# Where a probe may linger (rstck.core.perturb).
LINGER_POINTS = ("on_next", "on_subscribe", "on_complete")
# A reaction "at each on_next" stops after this many, so an example stays short.
MAX_REACTIONS = 64

# Where a subscribe step subscribes: the corner cases (a failed publisher, None) stay rarer than
# the subscribers that go on to request and cancel.
SOURCES = {"new": 4, "existing": 4, "failed": 1, "None": 1}
subscriber_index = st.integers(0, MAX_SUBSCRIBERS - 1)


@dataclasses.dataclass(eq=False)
class Watch:
    """The machine's bookkeeping for one probe, next to what the probe records itself."""

    probe: ProbeSubscriber
    publisher: Any
    size: int | None  # the publisher's elements; None for a failed publisher
    range_error_due: bool = False  # a non-positive request was made on the live subscription (3.9)
    # ... from inside on_subscribe, where the publisher may already have decided to end the stream
    range_error_at_subscribe: bool = False
    # ... when a terminal signal may already have been under way: the demand reached the stream's end, and the
    # request came from inside a signal or before the target had settled since the kit's last call
    end_maybe_under_way: bool = False
    elements_at_cancel: int | None = None
    reactions_run: int = 0


class PublisherMachine(FuzzMachine):
    role = "publisher"

    def __init__(self, context: RunContext):
        super().__init__(context)
        self.publishers: list[tuple[Any, int | None]] = []
        self.watches: list[Watch] = []
        self.capabilities = context.target.capabilities
        self.machine_thread = self.session.check_thread.name
        self.calls_since_settle = 0  # the kit's calls since the target last settled (0: nothing under way)
        self.linger_next_on_subscribe = False  # the next probe lingers inside on_subscribe (rstck.core.perturb)
        self.second_threads: list = []  # the kit's second-thread calls still under way, with the rule a hang breaks
        self.subscribe_calls: dict[str, tuple[int, int]] = {}  # probe name -> when the kit's subscribe ran (ns)

    # -- rules --------------------------------------------------------------------------------

    @rule(source=weighted(SOURCES), which=subscriber_index, size=stream_lengths,
          on_subscribe=on_subscribe_reactions, on_next=on_next_reactions, dwell=st.booleans())
    @step
    def subscribe(self, source: str, which: int, size: int, on_subscribe: Reaction | None,
                  on_next: Reaction | None, dwell: bool) -> None:
        """Subscribe to a new publisher of `size` elements, or to existing publisher number `which`."""
        session = self.session
        if len(self.watches) >= MAX_SUBSCRIBERS:
            return
        publisher, size = self._publisher_for(source, which, size)
        if source == "None" and "null_arguments" in self.capabilities:
            session.calls.expecting_error(publisher, "subscribe", (None,), error_type=session.error_names.type_error,
                                          rule="1.9", actor=self._label(publisher))
            return
        watch = self._new_watch(publisher, size)
        probe = session.probe(on_subscribe=self._reaction(watch, on_subscribe),
                              on_next=self._reaction(watch, on_next), dwell_s=DWELL_S if dwell else 0.0,
                              linger_in=self._lingering(on_subscribe, on_next))
        watch.probe = probe
        self.watches.append(watch)
        for reaction in (on_subscribe, on_next):
            if reaction is not None:
                session.trace.note(f"{probe.name} will {reaction!r}")
        self._subscribe(publisher, probe)

    @recorded("subscribe", lambda machine, evidence, publisher, probe: {"publisher": evidence.value(publisher),
                                                                        "probe": evidence.value(probe)},
              lambda machine: machine.session.evidence)
    def _subscribe(self, publisher: Any, probe: ProbeSubscriber) -> None:
        session = self.session
        self.calls_since_settle += 1
        started = trace_clock_ns()
        session.calls.make(publisher, "subscribe", (probe,), actor=self._label(publisher), rule_if_raises="1.9")
        self.subscribe_calls[probe.name] = (started, trace_clock_ns())
        if not probe.subscribed:
            self.settle_target()  # an asynchronous publisher's on_subscribe
            self.calls_since_settle = 0
            if self.still_absent(lambda: probe.subscribed):
                session.findings.violate("1.9", "subscribe to call on_subscribe",
                                         f"subscribe({probe.name}) returned and the target settled without "
                                         "on_subscribe",
                                         claim=session.evidence.claim("subscribed", probe=probe))

    # No preconditions: a step that does not apply does nothing. Preconditions would change
    # which rules a drawn index means as the state changes, and deleting one step while
    # shrinking would then garble every step after it.

    @rule(which=subscriber_index, n=demands)
    @step
    def request(self, which: int, n: int) -> None:
        if self.watches:
            self._request(self.watches[which % len(self.watches)], n)

    @rule(which=subscriber_index)
    @step
    def cancel(self, which: int) -> None:
        if self.watches:
            self._cancel(self.watches[which % len(self.watches)])

    @rule(which=subscriber_index, on_next=on_next_reactions)
    @step
    def react(self, which: int, on_next: Reaction | None) -> None:
        if not self.watches:
            return
        watch = self.watches[which % len(self.watches)]
        watch.probe.react("on_next", self._reaction(watch, on_next))
        if on_next is not None and "threads" in self.capabilities:
            watch.probe.linger_also("on_next")  # as a probe subscribed with this reaction would
        self.session.trace.note(f"{watch.probe.name} will {on_next!r}" if on_next
                                else f"{watch.probe.name} stops reacting to on_next")

    @rule()
    @step
    def settle(self) -> None:
        self.settle_target()
        self.calls_since_settle = 0
        self.check_settled()

    # -- schedule perturbation (rstck.core.perturb): drawn as steps, so a shrunk example replays its schedule --------

    @rule(which=subscriber_index, where=options(list(LINGER_POINTS)))
    @step
    def linger(self, which: int, where: str) -> None:
        """From now on probe number `which` lingers inside `where` (after its reaction) until the target's other
        threads have done what they can; for on_subscribe, the next probe subscribed does."""
        if "threads" not in self.capabilities:
            return
        if where == "on_subscribe":
            self.linger_next_on_subscribe = True
        elif self.watches:
            probe = self.watches[which % len(self.watches)].probe
            probe.linger_also(where)
            self.session.trace.note(f"{probe.name} will linger inside {where}")

    @rule(which=subscriber_index, n=demands, cancel=st.booleans())
    @step
    def call_from_second_thread(self, which: int, n: int, cancel: bool) -> None:
        """Probe number `which` requests `n` and, inside the next on_next, requests `n` again (or cancels) on a
        second thread of the kit's while that on_next is still in flight."""
        if "threads" not in self.capabilities or not self.watches:
            return
        watch = self.watches[which % len(self.watches)]
        watch.probe.react("on_next", self._from_second_thread(watch, n, cancel))
        self._request(watch, n)

    @rule(size=stream_lengths, n=demands, cancel=st.booleans())
    @step
    def subscribe_then_call_from_second_thread(self, size: int, n: int, cancel: bool) -> None:
        """A new probe requests `n` from inside on_subscribe and, inside its first on_next (maybe still within
        `subscribe`), requests `n` again (or cancels) on a second thread of the kit's."""
        if "threads" not in self.capabilities or len(self.watches) >= MAX_SUBSCRIBERS:
            return
        publisher, size = self._publisher_for("new", 0, size)
        watch = self._new_watch(publisher, size)
        watch.probe = self.session.probe(on_subscribe=self._reaction(watch, Reaction("request", n, 0, "on_subscribe")),
                                         on_next=self._from_second_thread(watch, n, cancel), linger_in={"on_subscribe"})
        self.watches.append(watch)
        self._subscribe(publisher, watch.probe)

    def _from_second_thread(self, watch: Watch, n: int, cancel: bool):
        call = (lambda: self._cancel(watch)) if cancel else (lambda: self._request(watch, n, in_signal=True))
        what = "cancels" if cancel else f"requests {show(n)}"
        self.session.trace.note(f"{watch.probe.name if watch.probe else 'the next probe'} will, at its next "
                                f"on_next, {'cancel' if cancel else f'request({show(n)})'} on a second thread")

        def from_second_thread(probe: ProbeSubscriber, _item: Any) -> None:
            probe.react("on_next", None)  # once
            thread = perturb.on_second_thread(self.session, probe, call, what)
            self.second_threads.append((thread, "3.5" if cancel else "3.16"))  # what a call that never returns breaks

        return from_second_thread

    @rule()
    @step
    def yield_to_target(self) -> None:
        """The kit's thread gives the target's threads their turn before its next call."""
        if "threads" in self.capabilities:
            perturb.yield_to_target(self.session, why="before the next step")

    def _lingering(self, on_subscribe: Reaction | None, on_next: Reaction | None) -> set[str]:
        """Where a new probe lingers: inside a signal whose reaction calls the publisher (a race there then shows in
        every replay, not only when the machine is slow), and inside on_subscribe once a linger step asked."""
        if "threads" not in self.capabilities:
            return set()
        kinds = {kind for kind, reaction in (("on_subscribe", on_subscribe), ("on_next", on_next)) if reaction}
        return kinds | ({"on_subscribe"} if self.linger_next_on_subscribe else set())

    def join_second_threads(self) -> None:
        while self.second_threads:
            thread, rule_if_hangs = self.second_threads.pop()
            if thread is not None:
                thread.join(max(0.0, self.session.deadline - time.monotonic()))
                if thread.is_alive():
                    self.session.findings.violate(rule_if_hangs, "the call made on the kit's second thread to return",
                                                  "it had not returned by the deadline", timed_out=True)

    # -- the kit's calls, from steps and from reactions ---------------------------------------

    def _request(self, watch: Watch, n: int, *, in_on_subscribe: bool = False, in_signal: bool = False) -> None:
        probe = watch.probe
        if probe.subscription is None:
            return  # charged to 1.9 when it subscribed
        under_way, self.calls_since_settle = self.calls_since_settle > 0 or in_signal, self.calls_since_settle + 1
        if probe.terminated:
            return probe.request_after_terminal(n)  # a NOP on a subscription that counts as cancelled (1.6)
        if probe.cancelled:
            return self._after_cancel(probe, "3.6", lambda rule: probe.request(n, rule_if_raises=rule))
        if n <= 0:
            watch.range_error_due = True
            watch.range_error_at_subscribe = in_on_subscribe
            watch.end_maybe_under_way = under_way and (watch.size is None or probe.requested >= watch.size)
        probe.request(n)  # a raise is 3.2 from inside a signal, else 3.16
        if n <= 0 and probe.ended_before_a_call:
            # The stream ended before the request reached the publisher (a JavaScript target delivered it, with the
            # demand the probe's reactions added, before the driver read the call): a NOP there, no 3.9 on_error.
            watch.range_error_due = False

    def _cancel(self, watch: Watch) -> None:
        probe = watch.probe
        if probe.subscription is None:
            return
        self.calls_since_settle += 1
        if probe.terminated:
            return probe.cancel(rule_if_raises="1.6")  # a NOP, and allowed: 1.6
        if probe.cancelled:
            return self._after_cancel(probe, "3.7", lambda rule: probe.cancel(rule_if_raises=rule))
        watch.range_error_due = False  # the cancel may overtake a pending 3.9 on_error
        probe.cancel()
        # What the publisher had delivered when the cancel reached it (an element that reached the kit while it
        # waited for the cancel, but was sent before it, is no element after the cancel).
        watch.elements_at_cancel = probe.cancelled_at

    @staticmethod
    def _after_cancel(probe: ProbeSubscriber, rule: str, call) -> None:
        """A request (3.6) or cancel (3.7) after cancel must be a NOP. Before the cancel has settled,
        signals still under way are allowed (3.12); after, a signal that arrives *during* this call
        is charged to the call. Outside the call the probe's own 1.8 applies: another subscriber's
        request may be what drew it."""
        if not probe.cancel_settled:
            return call("3.5" if rule == "3.7" else rule)  # 3.5: cancel is idempotent
        before = probe.silence_rule
        probe.silence(rule)
        try:
            call(rule)
        finally:
            probe.silence(before)

    def _reaction(self, watch: Watch, reaction: Reaction | None):
        if reaction is None:
            return None

        def react(probe: ProbeSubscriber, _argument: Any) -> None:
            if reaction.where == "on_next" and not reaction.due(probe.received):
                return
            if watch.reactions_run >= MAX_REACTIONS:
                return
            watch.reactions_run += 1
            if reaction.action == "request":
                self._request(watch, reaction.n, in_on_subscribe=reaction.where == "on_subscribe", in_signal=True)
            else:
                self._cancel(watch)

        return react

    def _publisher_for(self, source: str, which: int, size: int) -> tuple[Any, int | None]:
        session = self.session
        if source == "failed" and "failed_publisher" in self.capabilities:
            made: tuple[Any, int | None] = (session.create_failed_publisher(), None)
            session.trace.note(f"{self._label(made[0])} = create_failed_publisher()")
        elif source != "new" and source != "failed" and self.publishers:
            return self.publishers[which % len(self.publishers)]
        else:
            limit = session.max_elements
            size = size if limit is None else min(size, limit)
            made = (session.create_publisher(size), size)
            session.trace.note(f"{self._label(made[0])} = create_publisher({size})")
        self.publishers.append(made)
        return made

    def _new_watch(self, publisher: Any, size: int | None) -> Watch:
        return Watch(probe=None, publisher=publisher, size=size)  # type: ignore[arg-type]  # the probe comes next

    def _label(self, publisher: Any) -> str:
        return self.session.labels.of(publisher, "publisher")

    # -- invariants -------------------------------------------------------------------------------

    def after_step(self) -> None:
        self.join_second_threads()
        for watch in self.watches:
            probe = watch.probe
            if watch.elements_at_cancel is not None:
                late = probe.received - watch.elements_at_cancel
                if late > CANCEL_SLACK:
                    self.session.findings.violate("3.12",
                                                  f"at most {CANCEL_SLACK} on_next after cancel (eventually none)",
                                                  f"{probe.name} received {late} on_next after its cancel",
                                                  claim=self.session.evidence.claim("few_after_cancel", probe=probe,
                                                                                    count=CANCEL_SLACK))
            if probe.max_depth >= RECURSION_EVIDENCE:
                self.session.findings.violate("3.3", "an upper bound on request -> on_next recursion",
                                              f"on_next to {probe.name} nested {probe.max_depth} deep in on_next",
                                              claim=self.session.evidence.claim("nesting_below", probe=probe,
                                                                                count=RECURSION_EVIDENCE))

    def finish(self) -> None:
        self.settle_target()
        self.calls_since_settle = 0
        self.check_settled()

    def check_settled(self) -> None:
        """What must hold once the target has settled: nothing owed is still pending."""
        for watch in self.watches:
            self._check_settled(watch)

    def _check_settled(self, watch: Watch) -> None:
        probe = watch.probe
        if probe.subscription is None:
            return
        if watch.range_error_due:
            watch.range_error_due = False
            self._check_range_error(watch)
            return
        self.check_demand_served(watch)

    def check_demand_served(self, watch: Watch) -> None:
        """Liveness of a publisher of `watch.size` elements (or a failed one) towards its sole live subscriber."""
        probe, session = watch.probe, self.session
        if watch.size is None:  # a failed publisher
            claim = session.evidence.claim("failed_publisher_errors", probe=probe)
            if probe.completed:
                session.findings.violate("1.4", "on_error from a failed publisher", f"{probe.name}: {probe.observed()}",
                                         claim=claim)
            elif not probe.terminated and not probe.cancelled and probe.requested > 0 \
                    and self.still_absent(lambda: probe.terminated or probe.cancelled):
                session.findings.violate("1.4", "on_error from a failed publisher",
                                         f"{probe.name} had requested {show(probe.requested)} and heard nothing once "
                                         "settled",
                                         claim=claim)
            return
        outstanding = probe.requested - probe.received
        if probe.terminated or probe.cancelled or outstanding <= 0 or not self._sole_live_subscriber(watch):
            return
        delivered = probe.received
        if not self.still_absent(lambda: probe.terminated or probe.cancelled or probe.received > delivered):
            return  # more came: what is owed now is judged at the next settle
        claim = session.evidence.claim("demand_served", probe=probe, count=watch.size)
        if delivered < watch.size:
            session.findings.violate("3.8", "the outstanding demand served (or a terminal signal)",
                                     f"{probe.name} requested {show(probe.requested)} in all and got {delivered} of "
                                     f"{watch.size} elements; nothing more came once settled",
                                     claim=claim)
        else:
            session.findings.violate("1.5", "on_complete after the last element",
                                     f"{probe.name} got all {watch.size} elements, demand was left, and no on_complete "
                                     "came once settled",
                                     claim=claim)

    def _check_range_error(self, watch: Watch) -> None:
        probe, session = watch.probe, self.session
        expected = f"on_error({session.error_names.range_error}) after a non-positive request"
        claim = session.evidence.claim("range_error", probe=probe, error_type=session.error_names.range_error)
        if not probe.terminated and self.still_absent(lambda: probe.terminated or probe.cancelled):
            if probe.cancelled:  # a cancel after the request (a step's, or the probe's own in a signal on
                return           # another thread) may overtake the on_error, as _cancel allows (1.8, 3.12)
            session.findings.violate("3.9", expected, f"{probe.name} was still live once settled ({probe.observed()})",
                                     claim=claim)
        elif not probe.terminated:  # cancelled while the on_error was waited for: it may overtake it (1.8, 3.12)
            return
        elif probe.errors and session.error_names.range_error in {c.__name__ for c in type(probe.errors[0]).__mro__}:
            return
        elif not (watch.end_maybe_under_way
                  and (watch.range_error_at_subscribe or self._delivered_asynchronously(probe))) \
                and not (watch.range_error_at_subscribe and self._rejected_by_subscribe(probe)):
            # Otherwise the terminal signal may have been decided before the request: under way on another
            # thread, or, asked from inside on_subscribe, a stream that was over already or a subscriber the
            # publisher rejected. Not where nothing was under way (settled since the kit's last call), nor where
            # the demand fell short of the end.
            session.findings.violate("3.9", expected, f"{probe.name}: {probe.observed()}", claim=claim)

    def _rejected_by_subscribe(self, probe: ProbeSubscriber) -> bool:
        """Whether the publisher's subscribe ended the subscription itself: on_error came inside the kit's subscribe
        call, after on_subscribe had returned and at its level, not from inside a call the probe made there. A
        publisher that cannot serve a subscriber (a unicast one's second, say) signals on_subscribe and then
        on_error, decided before any request (1.9)."""
        started, ended = self.subscribe_calls.get(probe.name, (0, 0))
        trace = self.session.trace
        return any(error.thread == subscribed.thread == self.machine_thread and error.depth == subscribed.depth
                   and started <= subscribed.t_ns < error.t_ns <= ended  # later, at its level: on_subscribe had returned
                   for subscribed in trace.signals_of(probe.name, "on_subscribe")
                   for error in trace.signals_of(probe.name, "on_error"))

    def _delivered_asynchronously(self, probe: ProbeSubscriber) -> bool:
        """Whether a terminal signal reached `probe` other than inside one of the kit's calls."""
        terminal = (self.session.trace.signals_of(probe.name, "on_complete")
                    + self.session.trace.signals_of(probe.name, "on_error"))
        return any(s.thread != self.machine_thread or s.depth == 0 for s in terminal)

    def _sole_live_subscriber(self, watch: Watch) -> bool:
        others = [w.probe for w in self.watches if w is not watch and w.publisher is watch.publisher]
        return all(p.terminated or p.cancelled for p in others)

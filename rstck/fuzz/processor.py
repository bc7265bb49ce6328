"""The processor machine: both contracts at once (4.1), kit ends on both sides.

Downstream, kit probes subscribe, request, cancel and react exactly as against a publisher
(every step of the publisher machine, with the processor as the only publisher). Upstream,
the kit as publisher sends on_next against the processor's demand, on_complete, on_error,
a second on_subscribe and None arguments (upstream.py). Every publisher and subscriber
invariant holds on its side; once settled, this machine adds what ties the two together
for the identity processor a target's create_processor() makes:

- 4.1: a subscriber that was there from the start gets the upstream elements unchanged and
  in order, and the upstream's on_complete ends its stream once its elements are through (a sole
  subscriber completed before it had every element the processor took from upstream lost some);
- 4.2: after the upstream's on_error, a subscriber with demand pending hears on_error (or
  the processor recovers: further elements, on_complete);
- 3.8: demand downstream is served from elements the processor holds, or passed upstream.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from rstck.core.signals import show
from rstck.fuzz.machine import RunContext, step
from rstck.fuzz.publisher import PublisherMachine, Watch, subscriber_index
from rstck.fuzz.strategies import NONE_ARGUMENTS, demands, options, weighted
from rstck.fuzz.upstream import Upstream
# The most elements the upstream serves in one step.
MAX_SERVED = 16
# Elements most of the time: a terminal signal ends the upstream for the rest of the example.
UPSTREAM_ACTIONS = {"next": 6, "complete": 1, "error": 1, "subscribe again": 1, "None": 1}


@dataclasses.dataclass(eq=False)
class DownstreamWatch(Watch):
    sent_before: int = 0  # upstream elements sent before this subscriber came
    before_terminal: bool = True  # it subscribed before the upstream's terminal signal


class ProcessorMachine(PublisherMachine):
    role = "processor"

    def __init__(self, context: RunContext):
        super().__init__(context)
        self.processor: Any = None
        self.upstream: Upstream | None = None

    @initialize(dwell=st.booleans())
    @step
    def wire(self, dwell: bool) -> None:
        session = self.session
        self.processor = session.create_processor()
        session.trace.note(f"{self._label(self.processor)} = create_processor()")
        self.upstream = Upstream(session, self.processor, dwell=dwell)
        self.upstream.attach()

    # -- the upstream side -----------------------------------------------------------------------

    @rule(action=weighted(UPSTREAM_ACTIONS), count=st.integers(1, 4), method=options(NONE_ARGUMENTS))
    @step
    def upstream(self, action: str, count: int, method: str) -> None:
        """What the kit's source does next: `count` on_next (as far as the processor's demand goes),
        on_complete, on_error, a second on_subscribe, or `method` with a None argument."""
        upstream = self.upstream
        self.calls_since_settle += 1
        if action == "next":
            upstream.send(count)
        elif action == "complete":
            upstream.complete()
        elif action == "error":
            upstream.fail()
        elif action == "subscribe again":
            upstream.subscribe_again()
        elif "null_arguments" in self.capabilities:
            upstream.send_none(method)

    @rule(which=subscriber_index, n=demands)
    @step
    def request_then_serve(self, which: int, n: int) -> None:
        """A downstream request, then the upstream serves at once whatever the processor asked it for:
        the ordering that shows a processor passing on more than was asked of it (1.1)."""
        if self.watches:
            self._request(self.watches[which % len(self.watches)], n)
        self.calls_since_settle += 1
        self.upstream.send(MAX_SERVED)

    # -- the downstream side: the publisher machine's steps, against the processor ----------------

    def _publisher_for(self, source: str, which: int, size: int) -> tuple[Any, int | None]:
        if not self.publishers:
            self.publishers.append((self.processor, None))
        return self.publishers[0]

    def _new_watch(self, publisher: Any, size: int | None) -> Watch:
        upstream = self.upstream
        return DownstreamWatch(probe=None, publisher=publisher, size=size,  # type: ignore[arg-type]
                               sent_before=sum(kind == "on_next" for kind, _ in upstream.sent),
                               before_terminal=not upstream.subscription.terminal)

    # -- invariants -------------------------------------------------------------------------------

    def check_settled(self) -> None:
        super().check_settled()
        self.upstream.check_settled(expect_demand=False)  # it requests upstream only for downstream demand

    def check_demand_served(self, watch: DownstreamWatch) -> None:  # type: ignore[override]
        probe, session, upstream = watch.probe, self.session, self.upstream
        sent = [value for kind, value in upstream.sent if kind == "on_next"]
        if watch.sent_before == 0 and probe.elements != sent[:len(probe.elements)]:
            session.findings.violate("4.1", f"the upstream elements unchanged and in order ({show(sent)})",
                                     f"{probe.name} got {show(probe.elements)}")
            return
        if (probe.completed and not probe.cancelled and watch.sent_before == 0 and len(self.watches) == 1
                and upstream.subscription.terminal == "on_complete" and probe.received < len(sent)):
            session.findings.violate("4.1", f"every element it received from upstream ({len(sent)}) passed on "
                                            "before on_complete", f"{probe.name} got {probe.received} and then "
                                            "on_complete")
            return
        outstanding = probe.requested - probe.received
        if probe.terminated or probe.cancelled or outstanding <= 0 or not self._sole_live_subscriber(watch):
            return
        received = probe.received
        if not self.still_absent(lambda: probe.terminated or probe.cancelled or probe.received > received):
            return  # more came: what is owed now is judged at the next settle
        subscription = upstream.subscription
        held = subscription.delivered - probe.received - watch.sent_before
        if subscription.terminal == "on_error" and watch.before_terminal:
            session.findings.violate("4.2", "on_error propagated downstream, or a recovery",
                                     f"{probe.name} had demand pending and heard nothing after the upstream's on_error")
        elif held > 0 and not subscription.cancelled:  # after its cancel it may drop what still comes (2.8)
            session.findings.violate("3.8", "the outstanding demand served from the elements the processor holds",
                                     f"{probe.name} has {show(outstanding)} requested and the processor holds {held} "
                                     "elements it received; nothing more came once settled")
        elif subscription.terminal == "on_complete" and watch.before_terminal:
            session.findings.violate("4.1", "on_complete downstream after the upstream completed (4.1: both contracts)",
                                     f"{probe.name} got every element and demand was left, but no on_complete")
        elif not subscription.terminal and not subscription.cancelled and subscription.outstanding == 0:
            session.findings.violate("3.8", "the demand passed upstream (the processor holds no element to serve it)",
                                     f"{probe.name} has {show(outstanding)} requested; the processor asked its "
                                     f"upstream for nothing more ({subscription.name} requested "
                                     f"{show(subscription.requested)}, delivered {subscription.delivered})")

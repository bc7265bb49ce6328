"""Processor rules 4.1-4.2, and the rules only a processor lets the kit see from both sides (1.3: signals
one side's call causes while the other side signals; 2.6: an upstream nobody can use any more; 2.13: a null
element that goes on downstream, a subscriber that raises; 3.17: a long stream under unbounded demand).

4.1 also runs every publisher and subscriber check against the processor in that role
(rstck.execution.plan); the checks here wire kit ends to both sides at once.
"""

from __future__ import annotations

from rstck.api import MAX_DEMAND
from rstck.core.evidence import recorded
from rstck.core.probes import described
from rstck.core.signals import show
from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import rule
from rstck.rules.reactive_streams import LONG_STREAM, SMALL_INT_CACHE_END


def wire(session, **probe_options):
    """A processor between a manual kit source (upstream) and a kit probe (downstream)."""
    processor = session.create_processor()
    upstream = session.source()
    upstream.subscribe(processor)
    downstream = session.subscribe(processor, **probe_options)
    session.settle()
    return processor, upstream, downstream


def _evidence(session):
    return session.evidence


@recorded("pump", lambda session, evidence, upstream, downstream, want, elements: {
    "upstream": evidence.value(upstream), "downstream": evidence.value(downstream), "want": want,
    "elements": evidence.value(elements)}, _evidence)
def pump(session, upstream, downstream, want: int, elements) -> None:
    """Serve the processor's upstream demand from `elements` until downstream has `want` elements."""
    while downstream.received < want and not downstream.terminated:
        if not upstream.send_available(elements, limit=1):
            break
        session.settle()


def cancel_reaches_upstream(session, upstream, downstream) -> bool:
    """Whether a downstream cancel after two elements cancels the upstream subscription (4.2.cancel-upstream;
    the spi-draft profile's spi.processor.3)."""
    downstream.request(2)
    session.settle()
    pump(session, upstream, downstream, 2, iter(range(2)))
    downstream.cancel()
    session.settle()
    return upstream.subscription.cancelled


@rule("4.1")
def processor_passes_elements_through_both_contracts(session):
    """4.1: elements requested downstream are requested upstream and arrive unchanged and in order,
    and the upstream's on_complete ends the downstream stream."""
    _, upstream, downstream = wire(session)
    elements = iter(range(6))
    downstream.request(3)
    session.settle()
    pump(session, upstream, downstream, 3, elements)
    if downstream.elements != [0, 1, 2]:
        raise RuleViolation("4.1", "on_next(0), on_next(1), on_next(2) downstream for request(3) "
                                   "(an identity processor)", downstream.observed(),
                            claim=session.evidence.claim("elements", probe=downstream, elements=[0, 1, 2]))
    downstream.request(10)
    session.settle()
    pump(session, upstream, downstream, 6, elements)
    if upstream.can_signal():
        upstream.send_complete()
    session.settle()
    downstream.expect_complete(rule="4.1")
    if downstream.elements != list(range(6)):
        raise RuleViolation("4.1", "the six upstream elements, unchanged and in order", str(downstream.elements),
                            claim=session.evidence.claim("elements", probe=downstream, elements=list(range(6))))


@rule("4.2")
def upstream_error_is_propagated_or_recovered(session):
    """4.2: after an upstream on_error the processor either signals on_error downstream without being
    asked, or recovers (goes on downstream) and never calls the upstream subscription again."""
    _, upstream, downstream = wire(session)
    downstream.request(4)
    session.settle()
    pump(session, upstream, downstream, 2, iter(range(2)))
    delivered = downstream.received
    if not upstream.can_signal():
        raise NotApplicable("the processor ended its upstream subscription before the kit could fail it")
    upstream.send_error(RuntimeError("the kit's upstream fails on purpose"))
    upstream.subscription.silence_rule = "4.2"  # recovered or not, the upstream subscription is over
    session.settle()
    if downstream.errors:
        return
    if not (downstream.completed or downstream.received > delivered):
        raise RuleViolation("4.2", "on_error propagated downstream, or a recovery (further elements or "
                                   "on_complete downstream)", f"downstream heard nothing after the upstream error "
                                                              f"({downstream.observed()})",
                            claim=session.evidence.claim("went_on_or_failed", probe=downstream, count=delivered))


@rule("4.2.cancel-upstream")
def downstream_cancel_cancels_upstream(session):
    """4.2 (RECOMMENDED): when its only subscriber cancels, the processor cancels its upstream."""
    _, upstream, downstream = wire(session)
    if not cancel_reaches_upstream(session, upstream, downstream):
        raise RuleViolation("4.2.cancel-upstream", "cancel() on the upstream subscription",
                            "the upstream subscription was left open",
                            claim=session.evidence.claim("cancelled", source=upstream))


@rule("4.1")
def upstream_completion_waits_for_held_elements(session):
    """4.1: elements the processor took from upstream beyond what downstream asked for so far (a prefetch)
    reach downstream once it asks, in order, before the on_complete that the upstream sent meanwhile."""
    _, upstream, downstream = wire(session)
    downstream.request(1)
    session.settle()
    held = upstream.send_available(range(8))  # all the processor asked for, however far ahead
    session.settle()
    if not upstream.can_signal():
        raise NotApplicable("the processor ended its upstream subscription before the kit could complete it")
    upstream.send_complete()
    session.settle()
    downstream.request(8)
    session.settle()
    downstream.expect_complete(rule="4.1")
    if downstream.elements != list(range(held)):
        raise RuleViolation("4.1", f"the {held} elements it received from upstream, in order, then on_complete",
                            f"downstream got {show(downstream.elements)} before on_complete",
                            claim=session.evidence.claim("elements_sent", probe=downstream, source=upstream))


def _upstream_cancelled_once_unusable(session, processor, upstream, why: str) -> None:
    """2.6 for a processor whose only subscriber is gone (`why`): its upstream subscription is no longer
    needed unless it would serve a later subscriber, so it must be cancelled. Whether it would is asked of
    the processor: a new subscriber that it rejects (on_subscribe then on_error, no element) shows that
    nobody can use the upstream any more. One it serves may be why the upstream stays open (4.2's RECOMMENDED
    then applies)."""
    session.settle()
    if upstream.subscription.cancelled:
        return
    latecomer = session.subscribe(processor)
    latecomer.request(1)
    session.settle()
    if upstream.subscription.cancelled or not (latecomer.errors and not latecomer.received):
        return
    if session.settler.await_signal(lambda: upstream.subscription.cancelled, session.deadline):
        return
    raise RuleViolation("2.6", "cancel() on the upstream subscription, which nobody can use any more",
                        f"{why}, and a new subscriber was rejected ({latecomer.observed()}), but "
                        f"{upstream.subscription.name} was left open" + session.quiet_note(),
                        claim=session.evidence.claim("cancelled", source=upstream))


@rule("2.6")
def upstream_cancelled_when_the_only_subscriber_cancels(session):
    """2.6: a single-use processor cancels its upstream once its only subscriber has cancelled."""
    processor, upstream, downstream = wire(session)
    cancel_reaches_upstream(session, upstream, downstream)
    _upstream_cancelled_once_unusable(session, processor, upstream, "its only subscriber cancelled")


@rule("2.6")
def upstream_cancelled_when_the_only_subscriber_is_ended_by_3_9(session):
    """2.6: a single-use processor cancels its upstream once it has ended its only subscriber with on_error
    for a request(0) (3.9)."""
    processor, upstream, downstream = wire(session)
    downstream.request(0, judged_all_the_same=True)
    session.settle()
    if not downstream.errors:
        raise NotApplicable(f"request(0) did not end the subscriber with on_error ({downstream.observed()}): "
                            "that is 3.9's finding, and 2.6 has no premise here")
    _upstream_cancelled_once_unusable(session, processor, upstream, "it ended its only subscriber with on_error (3.9)")


@rule("2.13", needs={"processor", "null_arguments"})
def null_element_is_not_passed_downstream(session):
    """2.13: on_next(None) raises the profile's type error, and the None goes no further: a processor that
    hands it downstream first signals null to its subscriber."""
    processor, _, downstream = wire(session)
    downstream.request(1)
    session.settle()
    session.calls.expecting_error(processor, "on_next", (None,), error_type=session.error_names.type_error,
                                  rule="2.13", actor=session.labels.of(processor))
    session.settle()
    passed_on = [s for s in session.trace.signals_of(downstream.name, "on_next") if s.args and s.args[0] is None]
    if passed_on:
        raise RuleViolation("2.13", "the None argument rejected, and not signalled downstream",
                            f"#{passed_on[0].seq} {passed_on[0].call_text()}",
                            claim=session.evidence.claim("no_null", probe=downstream))


@rule("3.8", needs={"processor", "threads"})
def downstream_request_from_a_second_thread_while_upstream_signals_is_added(session):
    """3.8 across a processor's two sides (rstck.core.perturb): while the kit's upstream on_next is in flight and the
    processor passes the element on, the downstream probe requests two more on a second thread of the kit's and
    waits (bounded) for that request to return. A processor that reads its downstream demand before signalling
    and writes it back after loses those two. Targets without kit-callable threads are n/a."""
    from rstck.core.perturb import join_kit_thread, request_from_second_thread

    _, upstream, downstream = wire(session)
    under_way = []

    @described(at=1, requests=[2], on_second_thread=True)
    def ask_from_a_second_thread(probe, _item):
        if probe.received == 1:
            under_way.append(request_from_second_thread(session, probe, 2))

    downstream.react("on_next", ask_from_a_second_thread)
    downstream.request(1)
    session.settle()
    elements = iter(range(3))
    pump(session, upstream, downstream, 1, elements)
    for thread in filter(None, under_way):
        join_kit_thread(session, thread, rule="3.16")
    session.settle()
    pump(session, upstream, downstream, 3, elements)
    downstream.expect_elements(3, rule="3.8")


# Why a check that subscribes downstream before the processor has an upstream cannot go on: 1.9 sets no time for
# on_subscribe, and a processor may wait for its upstream before it greets its subscriber.
_GREETS_ONLY_WITH_AN_UPSTREAM = "the processor had not signalled on_subscribe to a subscriber while it had no upstream"


@recorded("serve_upstream", lambda session, evidence, upstream, downstream, n: {
    "upstream": evidence.value(upstream), "downstream": evidence.value(downstream), "n": n}, _evidence)
def serve_upstream(session, upstream, downstream, n: int) -> None:
    """Send upstream, as many at once as the processor asked for (never more), until `n` elements went, downstream
    ended, or the processor asks for nothing more by the deadline; settled."""
    def asked_more() -> bool:
        return upstream.subscription.outstanding > 0 or downstream.terminated

    sent = 0
    while sent < n and not downstream.terminated:
        went = upstream.send_available(range(sent, n))
        sent += went
        if went:
            session.settle()
        elif not session.settler.await_signal(asked_more, session.deadline):
            break  # the processor asks upstream for nothing more
    session.settle()


def _long_stream_under_unbounded_demand(session, *, demand_first: bool) -> None:
    """3.17: downstream asks once for 2**63-1, and the kit's upstream sends every element the processor asks for
    (never more), as many at once as asked: all LONG_STREAM elements must come out. `demand_first`: the demand is
    made before the processor has its upstream, so it is the processor that keeps it meanwhile."""
    n = session.elements(LONG_STREAM, at_least=SMALL_INT_CACHE_END + 1)
    processor = session.create_processor()
    upstream = session.source()
    if not demand_first:
        upstream.subscribe(processor)
    downstream = session.subscribe(processor)
    if demand_first and not downstream.subscribed:
        raise NotApplicable(_GREETS_ONLY_WITH_AN_UPSTREAM)
    downstream.request(MAX_DEMAND, judged_all_the_same=True)  # a raise is 3.16's; what it did not deliver 3.17's
    if demand_first:
        upstream.subscribe(processor)
    session.settle()
    serve_upstream(session, upstream, downstream, n)
    if not session.settler.await_signal(lambda: downstream.received >= n or downstream.terminated, session.deadline):
        raise RuleViolation("3.17", f"all {n} elements downstream under one request(2**63-1), the kit's upstream "
                                    "sending each one the processor asked for",
                            f"downstream: {downstream.observed()}; the processor asked upstream for "
                            f"{show(upstream.subscription.requested)} in all" + session.quiet_note(),
                            claim=session.evidence.claim("served", probe=downstream, count=n, exact=False,
                                                         unless="terminal"))


@rule("3.8", needs={"processor"})
def demand_added_while_the_upstream_holds_back_is_served(session):
    """3.8 across a processor: downstream asks for 100, then for 50 more, before the kit's upstream has sent
    anything; all 150 come out (a processor that sizes what it forwards by what is still outstanding upstream, and
    gets that wrong, loses the 50)."""
    n = session.elements(150)
    _, upstream, downstream = wire(session)
    downstream.request(100)
    downstream.request(n - 100)
    session.settle()
    serve_upstream(session, upstream, downstream, n)
    downstream.expect_elements(n, rule="3.8")


@rule("3.17", needs={"processor"})
def unbounded_demand_carries_a_long_stream_through(session):
    """3.17 across a processor: request(2**63-1) downstream, once the processor has its upstream, carries a stream
    longer than any small cap all the way through (a processor that caps its demand stalls)."""
    _long_stream_under_unbounded_demand(session, demand_first=False)


@rule("3.17", needs={"processor"})
def unbounded_demand_made_before_the_upstream_carries_a_long_stream_through(session):
    """3.17 across a processor: request(2**63-1) made downstream before the processor has an upstream is kept
    whole until the upstream comes, and carries a long stream through."""
    _long_stream_under_unbounded_demand(session, demand_first=True)


def _feed_a_raising_subscriber(session):
    """A processor whose downstream probe raises from its first on_next, fed what it asks upstream for (up to
    two elements downstream asked for). Once it raised, the probe counts its subscription as cancelled: a
    further signal to it is 2.13's."""
    processor, upstream, downstream = wire(session, fail_on_next=True)
    upstream.raises_judged_all_the_same = True  # a raise back is charged (2.13); the check still judges its own item
    downstream.request(2)
    session.settle()
    pump(session, upstream, downstream, 1, iter(range(2)))
    return processor, upstream, downstream


@rule("2.13", needs={"processor"})
def processor_returns_normally_when_its_subscriber_raises(session):
    """2.13 for a processor as a subscriber: the upstream's on_next returns normally even when the processor's own
    subscriber raised from the on_next it caused. That raise is the processor's to handle as its publisher (the
    subscription counts as cancelled, the error is made known); passed up to the upstream, even as it came, it
    is the processor's on_next that raised."""
    processor, _, downstream = _feed_a_raising_subscriber(session)
    if not downstream.failed_on_purpose:
        raise NotApplicable(f"no on_next reached the raising subscriber ({downstream.observed()})")
    raised = [s for s in session.trace.signals_of(session.labels.of(processor), "on_next")
              if (s.outcome or "").startswith("raised")]
    if raised:
        raise RuleViolation("2.13", "on_next() to return normally (it was the processor's subscriber that raised)",
                            f"#{raised[0].seq} {raised[0].call_text()} {raised[0].outcome}",
                            claim=session.evidence.claim("returned_normally", subject=processor, method="on_next"))


@rule("2.6", needs={"processor"})
def upstream_cancelled_when_the_only_subscriber_raises(session):
    """2.6: a single-use processor cancels its upstream once its only subscriber has raised from on_next (2.13
    makes that subscription count as cancelled)."""
    processor, upstream, downstream = _feed_a_raising_subscriber(session)
    if not downstream.failed_on_purpose:
        raise NotApplicable(f"no on_next reached the raising subscriber ({downstream.observed()})")
    _upstream_cancelled_once_unusable(session, processor, upstream,
                                      "its only subscriber raised from on_next (2.13: that subscription counts as "
                                      "cancelled)")


@rule("1.3", needs={"processor", "threads"})
def on_error_for_a_second_threads_request_waits_for_the_on_next_in_flight(session):
    """1.3 across a processor's two sides (rstck.core.perturb): inside the first on_next that the kit's upstream on_next
    causes, the downstream probe calls request(0) on a second thread of the kit's (a serial call: the first thread
    makes none meanwhile) and lingers. The on_error 3.9 asks for must wait until that on_next has returned; the
    probe sees an overlap. Targets without kit-callable threads are n/a."""
    from rstck.core.perturb import join_kit_thread, on_second_thread

    _, upstream, downstream = wire(session, linger_in=frozenset({"on_next"}))
    under_way = []

    @described(at=1, requests=[0], judged_all_the_same=True, on_second_thread=True)
    def request_zero_from_a_second_thread(probe, _item):
        if probe.received == 1:
            under_way.append(on_second_thread(session, probe, lambda: probe.request(0, judged_all_the_same=True),
                                              "requests 0"))

    downstream.react("on_next", request_zero_from_a_second_thread)
    downstream.request(2)
    session.settle()
    pump(session, upstream, downstream, 1, iter(range(2)))
    for thread in filter(None, under_way):
        join_kit_thread(session, thread, rule="3.16")
    session.settle()


@rule("1.3", needs={"processor", "threads"})
def elements_from_an_upstream_arriving_meanwhile_wait_for_on_subscribe(session):
    """1.3 across a processor's two sides (rstck.core.perturb): subscribed before the processor has an upstream, the
    downstream probe requests inside on_subscribe and, still inside, has the kit's upstream subscribe the processor
    on a second thread of the kit's; that upstream serves demand inside request. Its elements must wait until
    on_subscribe has returned; the probe, lingering there, sees an overlap. Targets without kit-callable threads
    are n/a."""
    from rstck.core.perturb import join_kit_thread, on_second_thread

    n = session.elements(4, at_least=1)
    processor = session.create_processor()
    upstream = session.source(elements=range(n))
    under_way = []

    def subscribe_upstream_from_a_second_thread(probe, _subscription):
        probe.request(n)
        under_way.append(on_second_thread(session, probe, lambda: upstream.subscribe(processor),
                                          "has the kit's upstream subscribe the processor"))

    downstream = session.subscribe(processor, on_subscribe=subscribe_upstream_from_a_second_thread,
                                  linger_in=frozenset({"on_subscribe"}))
    if not downstream.subscribed:
        raise NotApplicable(_GREETS_ONLY_WITH_AN_UPSTREAM)
    for thread in filter(None, under_way):
        join_kit_thread(session, thread, rule="async.non-blocking")
    session.settle()

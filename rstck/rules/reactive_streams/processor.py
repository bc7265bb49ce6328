"""Processor rules 4.1-4.2, and the subscriber rules only a processor lets the kit see from both sides
(2.6: an upstream nobody can use any more; 2.13: a null element that goes on downstream).

4.1 also runs every publisher and subscriber check against the processor in that role
(rstck.plan); the checks here wire kit ends to both sides at once.
"""

from __future__ import annotations

from ...signals import show
from ...verdict import NotApplicable, RuleViolation
from .. import rule


def wire(target):
    """A processor between a manual kit source (upstream) and a kit probe (downstream)."""
    processor = target.create_processor()
    upstream = target.source()
    upstream.subscribe(processor)
    downstream = target.subscribe(processor)
    target.settle()
    return processor, upstream, downstream


def pump(target, upstream, downstream, want: int, elements) -> None:
    """Serve the processor's upstream demand from `elements` until downstream has `want` elements."""
    while downstream.received < want and not downstream.terminated:
        if not upstream.send_available(elements, limit=1):
            break
        target.settle()


def cancel_reaches_upstream(target, upstream, downstream) -> bool:
    """Whether a downstream cancel after two elements cancels the upstream subscription (4.2.cancel-upstream;
    the spi-draft profile's spi.processor.3)."""
    downstream.request(2)
    target.settle()
    pump(target, upstream, downstream, 2, iter(range(2)))
    downstream.cancel()
    target.settle()
    return upstream.subscription.cancelled


@rule("4.1")
def processor_passes_elements_through_both_contracts(target):
    """4.1: elements requested downstream are requested upstream and arrive unchanged and in order,
    and the upstream's on_complete ends the downstream stream."""
    _, upstream, downstream = wire(target)
    elements = iter(range(6))
    downstream.request(3)
    target.settle()
    pump(target, upstream, downstream, 3, elements)
    if downstream.elements != [0, 1, 2]:
        raise RuleViolation("4.1", "on_next(0), on_next(1), on_next(2) downstream for request(3) "
                                   "(an identity processor)", downstream.observed())
    downstream.request(10)
    target.settle()
    pump(target, upstream, downstream, 6, elements)
    if upstream.can_signal():
        upstream.send_complete()
    target.settle()
    downstream.expect_complete(rule="4.1")
    if downstream.elements != list(range(6)):
        raise RuleViolation("4.1", "the six upstream elements, unchanged and in order", str(downstream.elements))


@rule("4.2")
def upstream_error_is_propagated_or_recovered(target):
    """4.2: after an upstream on_error the processor either signals on_error downstream without being
    asked, or recovers (goes on downstream) and never calls the upstream subscription again."""
    _, upstream, downstream = wire(target)
    downstream.request(4)
    target.settle()
    pump(target, upstream, downstream, 2, iter(range(2)))
    delivered = downstream.received
    if not upstream.can_signal():
        raise NotApplicable("the processor ended its upstream subscription before the kit could fail it")
    upstream.send_error(RuntimeError("the kit's upstream fails on purpose"))
    upstream.subscription.silence_rule = "4.2"  # recovered or not, the upstream subscription is over
    target.settle()
    if downstream.errors:
        return
    if not (downstream.completed or downstream.received > delivered):
        raise RuleViolation("4.2", "on_error propagated downstream, or a recovery (further elements or "
                                   "on_complete downstream)", f"downstream heard nothing after the upstream error "
                                                              f"({downstream.observed()})")


@rule("4.2.cancel-upstream")
def downstream_cancel_cancels_upstream(target):
    """4.2 (RECOMMENDED): when its only subscriber cancels, the processor cancels its upstream."""
    _, upstream, downstream = wire(target)
    if not cancel_reaches_upstream(target, upstream, downstream):
        raise RuleViolation("4.2.cancel-upstream", "cancel() on the upstream subscription",
                            "the upstream subscription was left open")


@rule("4.1")
def upstream_completion_waits_for_held_elements(target):
    """4.1: elements the processor took from upstream beyond what downstream asked for so far (a prefetch)
    reach downstream once it asks, in order, before the on_complete that the upstream sent meanwhile."""
    _, upstream, downstream = wire(target)
    downstream.request(1)
    target.settle()
    held = upstream.send_available(range(8))  # all the processor asked for, however far ahead
    target.settle()
    if not upstream.can_signal():
        raise NotApplicable("the processor ended its upstream subscription before the kit could complete it")
    upstream.send_complete()
    target.settle()
    downstream.request(8)
    target.settle()
    downstream.expect_complete(rule="4.1")
    if downstream.elements != list(range(held)):
        raise RuleViolation("4.1", f"the {held} elements it received from upstream, in order, then on_complete",
                            f"downstream got {show(downstream.elements)} before on_complete")


def _upstream_cancelled_once_unusable(target, processor, upstream, why: str) -> None:
    """2.6 for a processor whose only subscriber is gone (`why`): its upstream subscription is no longer
    needed unless it would serve a later subscriber, so it must be cancelled. Whether it would is asked of
    the processor: a new subscriber that it rejects (on_subscribe then on_error, no element) shows that
    nobody can use the upstream any more. One it serves may be why the upstream stays open (4.2's RECOMMENDED
    then applies)."""
    target.settle()
    if upstream.subscription.cancelled:
        return
    latecomer = target.subscribe(processor)
    latecomer.request(1)
    target.settle()
    if upstream.subscription.cancelled or not (latecomer.errors and not latecomer.received):
        return
    if target.settler.await_signal(lambda: upstream.subscription.cancelled, target.deadline):
        return
    raise RuleViolation("2.6", "cancel() on the upstream subscription, which nobody can use any more",
                        f"{why}, and a new subscriber was rejected ({latecomer.observed()}), but "
                        f"{upstream.subscription.name} was left open" + target.quiet_note())


@rule("2.6")
def upstream_cancelled_when_the_only_subscriber_cancels(target):
    """2.6: a single-use processor cancels its upstream once its only subscriber has cancelled."""
    processor, upstream, downstream = wire(target)
    cancel_reaches_upstream(target, upstream, downstream)
    _upstream_cancelled_once_unusable(target, processor, upstream, "its only subscriber cancelled")


@rule("2.6")
def upstream_cancelled_when_the_only_subscriber_is_ended_by_3_9(target):
    """2.6: a single-use processor cancels its upstream once it has ended its only subscriber with on_error
    for a request(0) (3.9)."""
    processor, upstream, downstream = wire(target)
    downstream.request(0, judged_all_the_same=True)
    target.settle()
    if not downstream.errors:
        raise NotApplicable(f"request(0) did not end the subscriber with on_error ({downstream.observed()}): "
                            "that is 3.9's finding, and 2.6 has no premise here")
    _upstream_cancelled_once_unusable(target, processor, upstream, "it ended its only subscriber with on_error (3.9)")


@rule("2.13", needs={"processor", "null_arguments"})
def null_element_is_not_passed_downstream(target):
    """2.13: on_next(None) raises the profile's type error, and the None goes no further: a processor that
    hands it downstream first signals null to its subscriber."""
    processor, _, downstream = wire(target)
    downstream.request(1)
    target.settle()
    target.call_expecting_error(processor, "on_next", (None,), error_type=target.profile.type_error, rule="2.13",
                                actor=target.label(processor))
    target.settle()
    passed_on = [s for s in target.trace.signals_of(downstream.name, "on_next") if s.args and s.args[0] is None]
    if passed_on:
        raise RuleViolation("2.13", "the None argument rejected, and not signalled downstream",
                            f"#{passed_on[0].seq} {passed_on[0].call_text()}")


@rule("3.8", needs={"processor", "threads"})
def downstream_request_from_a_second_thread_while_upstream_signals_is_added(target):
    """3.8 across a processor's two sides (rstck.perturb): while the kit's upstream on_next is in flight and the
    processor passes the element on, the downstream probe requests two more on a second thread of the kit's and
    waits (bounded) for that request to return. A processor that reads its downstream demand before signalling
    and writes it back after loses those two. Targets without kit-callable threads are n/a."""
    from ...perturb import join_kit_thread, request_from_second_thread

    _, upstream, downstream = wire(target)
    under_way = []

    def ask_from_a_second_thread(probe, _item):
        if probe.received == 1:
            under_way.append(request_from_second_thread(target, probe, 2))

    downstream.react("on_next", ask_from_a_second_thread)
    downstream.request(1)
    target.settle()
    elements = iter(range(3))
    pump(target, upstream, downstream, 1, elements)
    for thread in filter(None, under_way):
        join_kit_thread(target, thread, rule="3.16")
    target.settle()
    pump(target, upstream, downstream, 3, elements)
    downstream.expect_elements(3, rule="3.8")

"""Processor rules 4.1-4.2.

4.1 also runs every publisher and subscriber check against the processor in that role
(rstck.plan); the checks here wire kit ends to both sides at once.
"""

from __future__ import annotations

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

"""A Processor: spi.processor.1-6.

The checks wire the kit's draft publisher upstream (`upstream.DraftSource`) and a draft probe
downstream. A raise from one of the processor's signal methods is charged to the item the check is about.
"""

from __future__ import annotations

from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import rule, untested
from rstck.rules.reactive_streams.processor import cancel_reaches_upstream, pump
from rstck.rules.spi_draft.probe import subscribe
from rstck.rules.spi_draft.upstream import draft_source, judging

untested("spi.processor.1", "the profile's publisher checks are not run through a processor's producing side yet; "
                            "spi.processor.3-6 observe it")
untested("spi.processor.2", "the profile's subscriber checks are not run through a processor's consuming side yet; "
                            "spi.processor.3-6 observe it")


def wire(session, item: str):
    """A processor between the kit's draft publisher (upstream) and a draft probe (downstream), for the
    check of `item` (`upstream.judging`)."""
    judging(session, item)
    processor = session.create_processor()
    upstream = draft_source(session)
    upstream.subscribe(processor)
    downstream = subscribe(session, processor)
    session.settle()
    downstream.expect_subscribed()
    return upstream, downstream


@rule("spi.processor.3")
def last_downstream_cancel_cancels_upstream(session):
    """spi.processor.3: when its only downstream subscriber cancels, the processor cancels its upstream."""
    upstream, downstream = wire(session, "spi.processor.3")
    if not cancel_reaches_upstream(session, upstream, downstream):
        raise RuleViolation("spi.processor.3", "cancel on the upstream subscription",
                            "the upstream subscription was left open")


@rule("spi.processor.4")
def upstream_error_is_passed_on_at_once(session):
    """spi.processor.4: an upstream onError reaches downstream without a further request, ahead of
    elements the processor may hold ([9]: errors are not in-stream events to buffer)."""
    upstream, downstream = wire(session, "spi.processor.4")
    downstream.request(1)
    session.settle()
    pump(session, upstream, downstream, 1, iter(range(1)))
    upstream.send_available(range(1, 4))  # whatever more it asked for: held, with no demand downstream
    session.settle()
    if not upstream.can_signal():
        raise NotApplicable("the processor ended its upstream subscription before the kit could fail it")
    upstream.send_error(RuntimeError("the kit's upstream fails on purpose"))
    session.settle()
    if not downstream.awaited(lambda: downstream.terminated) or not downstream.errors:
        raise RuleViolation("spi.processor.4", "onError passed on downstream at once",
                            f"downstream: {downstream.observed()}" + session.quiet_note())


@rule("spi.processor.5")
def elements_after_the_last_cancel_are_taken(session):
    """spi.processor.5: elements its upstream still delivers after the last downstream cancelled (demand
    pending) are taken without a raise, and not passed on (spi.cancel.2)."""
    upstream, downstream = wire(session, "spi.processor.5")
    downstream.request(3)
    session.settle()
    pump(session, upstream, downstream, 1, iter(range(1)))
    if downstream.terminated or upstream.subscription.outstanding == 0:
        raise NotApplicable(f"no upstream demand left pending after the first element ({downstream.observed()})")
    downstream.cancel()
    upstream.send_available(range(1, 3), after_cancel=2)
    session.settle()


@rule("spi.processor.6")
def elements_before_downstream_demand_are_taken(session):
    """spi.processor.6: elements the processor asked its upstream for before any downstream demand are
    taken without a raise, and not passed on before they are requested (spi.publisher.1)."""
    upstream, downstream = wire(session, "spi.processor.6")
    sent = upstream.send_available(range(4))
    session.settle()
    if not sent:
        raise NotApplicable("the processor asks its upstream for nothing before downstream demand")
    downstream.request(sent)
    session.settle()
    downstream.expect_elements(sent, rule="spi.processor.6")

"""Publisher rules 1.1-1.11.

The probes monitor every publisher rule on every signal, so any check may report a
violation of another item; the checks here are the situations built to provoke each
rule's own violation.
"""

from __future__ import annotations

import gc
import time
import weakref

from rstck.core.verdict import RuleViolation, Unsupported
from rstck.core.checks import rule
from rstck.core.probes import ProbeSubscriber, at_element, requesting
from rstck.rules.reactive_streams import LONG_STREAM, SMALL_INT_CACHE_END


@rule("1.1")
def on_next_count_never_exceeds_requested(session):
    """1.1: the probe counts its demand and charges every on_next beyond it at once ("at all times": in
    the stress mode, over a stream of `--stream-length` elements)."""
    n = session.elements(max(10, session.stream_length), at_least=4)
    probe = session.subscribe(session.create_publisher(n))
    session.settle()  # no demand yet: any on_next now exceeds it
    for k in (1, 2, 1):
        probe.request(k)
        session.settle()
    if n > 10:  # the stress mode: the rest of the long stream, against its demand
        probe.request(n - 5)
        session.settle()


@rule("1.1")
def on_next_within_demand_signalled_from_on_next(session):
    """1.1 with demand of one signalled from inside each on_next (stop-and-wait)."""
    publisher = session.create_publisher(session.elements(10, at_least=2))
    probe = session.subscribe(publisher, on_next=requesting(1, while_below=3))
    probe.request(1)
    session.settle()


@rule("1.2")
def may_signal_fewer_on_next_than_requested_and_complete(session):
    """1.2 (MAY): asked for more than it has, the publisher ends the stream early, with on_complete
    or on_error."""
    n = session.elements(3, at_least=0)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(n + 7)
    session.settle()
    if not probe.terminated:
        raise Unsupported(f"asked for {n + 7} of {n} elements, it signalled {probe.observed()}")


@rule("1.3")
def signals_are_serial(session):
    """1.3: overlapping calls are detected across threads; a foreign-thread signal dwells briefly so
    that a concurrent one can collide with it."""
    n = session.elements(64, at_least=2)
    probe = session.subscribe(session.create_publisher(n), dwell_s=0.0005)
    for _ in range(n // 4):  # many small requests in a row give a careless publisher many chances to race
        probe.request(4)
    session.settle()


@rule("1.4", needs={"failed_publisher"})
def failed_publisher_signals_on_error(session):
    """1.4: with or without demand (2.10), a failed publisher signals on_error."""
    probe = session.subscribe(session.create_failed_publisher())
    session.settle()
    probe.request(1)
    session.settle()
    probe.expect_error("BaseException", rule="1.4")


@rule("1.5")
def finite_stream_signals_on_complete(session):
    """1.5: after its last element, with the demand met or one more request, on_complete follows."""
    n = session.elements(3)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(n)
    session.settle()
    probe.request(1)  # a lazy publisher may need to look for the end
    session.settle()
    probe.expect_complete(rule="1.5")


@rule("1.5")
def empty_stream_signals_on_complete(session):
    """1.5 for a stream of no elements, with or without demand (2.9)."""
    probe = session.subscribe(session.create_publisher(0))
    session.settle()
    probe.request(1)
    session.settle()
    probe.expect_complete(rule="1.5")


@rule("1.5")
def long_finite_stream_signals_on_complete(session):
    """1.5 for a stream of 300 elements, asked for in one request: every element, then on_complete. Past 256,
    where CPython stops sharing small int objects, a count compared with `is` instead of `==` stops matching."""
    n = session.elements(LONG_STREAM, at_least=SMALL_INT_CACHE_END + 1)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(n)
    session.settle()
    probe.expect_elements(n, rule="1.5")
    probe.request(1)  # a lazy publisher may need to look for the end
    session.settle()
    probe.expect_complete(rule="1.5")


@rule("1.6")
def cancel_after_on_complete_is_a_nop(session):
    """1.6: after on_complete the subscription counts as cancelled: a cancel returns normally and draws
    no signal."""
    n = session.elements(2, at_least=0)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(n + 1)
    session.settle()
    probe.request(1)
    session.settle()
    probe.expect_complete(rule="1.5")
    probe.silence("1.6")
    probe.cancel(rule_if_raises="1.6")
    session.settle()


@rule("1.6", needs={"failed_publisher"})
def cancel_after_on_error_is_a_nop(session):
    """1.6 after on_error."""
    probe = session.subscribe(session.create_failed_publisher())
    probe.request(1)
    session.settle()
    probe.expect_error("BaseException", rule="1.4")
    probe.silence("1.6")
    probe.cancel(rule_if_raises="1.6")
    session.settle()


def _ended(session, probe, expect_end) -> None:
    """Request after the end: as on a cancelled subscription (1.6), request(1) and request(0) must return
    normally and draw no signal (3.6; 3.9 binds only a live subscription). 2.4 lets a subscriber make them."""
    expect_end()
    probe.silence("1.6")
    probe.request_after_terminal(1)
    probe.request_after_terminal(0)
    session.settle()


@rule("1.6")
def request_after_on_complete_is_a_nop(session):
    """1.6: after on_complete, a request is a NOP: the end is not signalled again, nor anything else."""
    n = session.elements(2, at_least=0)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(n + 1)
    session.settle()
    probe.request(1)  # a lazy publisher may need to look for the end
    session.settle()
    _ended(session, probe, lambda: probe.expect_complete(rule="1.5"))


@rule("1.6", needs={"failed_publisher"})
def request_after_on_error_is_a_nop(session):
    """1.6 after on_error."""
    probe = session.subscribe(session.create_failed_publisher())
    probe.request(1)
    session.settle()
    _ended(session, probe, lambda: probe.expect_error("BaseException", rule="1.4"))


@rule("1.7")
def no_signal_after_on_complete(session):
    """1.7: demand left over after the end must not draw further signals."""
    n = session.elements(5, at_least=0)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(n + 5)
    session.settle()
    probe.expect_complete(rule="1.5")


@rule("1.7")
def no_signal_after_on_complete_when_asked_from_on_subscribe(session):
    """1.7 with the demand signalled from inside on_subscribe, where the stream may end before
    subscribe returns: the end is signalled once."""
    n = session.elements(5, at_least=0)
    probe = session.subscribe(session.create_publisher(n), on_subscribe=lambda p, _: p.request(n + 5))
    session.settle()
    probe.expect_complete(rule="1.5")


@rule("1.7", needs={"failed_publisher"})
def no_signal_after_on_error(session):
    """1.7 after on_error."""
    probe = session.subscribe(session.create_failed_publisher())
    probe.request(5)
    session.settle()
    probe.expect_error("BaseException", rule="1.4")


@rule("1.8")
def cancelled_subscriber_is_not_signalled_for_others_demand(session):
    """1.8: a subscriber that cancels with demand still pending hears nothing more once the cancel
    has settled, even while another subscriber of the same publisher goes on requesting."""
    publisher = session.create_publisher(session.elements(10, at_least=4))
    first = session.subscribe(publisher, on_next=at_element(1, cancel=True))
    second = session.subscribe(publisher)
    first.request(3)
    session.settle()
    second.request(1)
    session.settle()


@rule("1.9")
def subscribe_signals_on_subscribe_first(session):
    """1.9: subscribe returns normally and on_subscribe precedes every other signal."""
    probe = session.subscribe(session.create_publisher(session.elements(3, at_least=0)))
    session.settle()
    probe.expect_subscribed()
    probe.request(3)
    session.settle()


@rule("1.9", needs={"failed_publisher"})
def failed_publisher_signals_on_subscribe_before_on_error(session):
    """1.9: even a failed publisher calls on_subscribe before on_error."""
    probe = session.subscribe(session.create_failed_publisher())
    session.settle()
    probe.expect_subscribed()


@rule("1.9", needs={"publisher", "null_arguments"})
def subscribe_none_raises_type_error(session):
    """1.9: subscribe(None) raises TypeError (the profile's type error) to the caller."""
    publisher = session.create_publisher(session.elements(1, at_least=0))
    session.calls.expecting_error(publisher, "subscribe", (None,), error_type=session.error_names.type_error,
                                  rule="1.9")
    session.settle()


@rule("1.9", needs={"failed_publisher", "null_arguments"})
def failed_publisher_subscribe_none_raises_type_error(session):
    """1.9 on the failed publisher too: subscribe(None) raises the profile's type error to the caller."""
    session.calls.expecting_error(session.create_failed_publisher(), "subscribe", (None,),
                                  error_type=session.error_names.type_error, rule="1.9")
    session.settle()


# How many subscribers in a row the check of reused addresses subscribes at most, and how many of them must have
# come at an earlier one's address (id()) before it has seen enough.
SEQUENTIAL_SUBSCRIBERS = 64
REUSED_ADDRESSES_WANTED = 3


class ProbeOfARareSize(ProbeSubscriber):
    """A probe of a size little else in the process allocates: CPython's allocator keeps a freed block of a size
    class at the head of its pool's free list, so the next probe made gets the last one's address. A probe of the
    common size shares its size class with tuples and dicts, and in some runs none of 64 got one: the zoo's
    id-keyed publisher passed 1 to 4 runs of 20. With this size each probe after the first got one, and 100 runs
    of 100 failed it (docs/decisions.md)."""

    __slots__ = tuple(f"_padding{i}" for i in range(30))
    REUSES_ADDRESSES = True


@rule("1.9")
def subscribers_in_a_row_each_get_on_subscribe(session):
    """1.9 for subscribers that come one after another, each let go of once its stream has ended: the kit
    keeps no reference to an earlier one, so in CPython a later subscriber gets an earlier one's address
    (its id()). A publisher that takes it for the earlier subscriber, still subscribed, and leaves it without
    on_subscribe breaks 1.9."""
    n = session.elements(2, at_least=0)
    publisher = session.create_publisher(n)
    started = time.monotonic()
    budget_s = (session.deadline - started) / 3  # more subscribers only add evidence: never at the deadline's cost
    addresses: set[int] = set()
    reused = 0
    for count in range(SEQUENTIAL_SUBSCRIBERS):
        if reused >= REUSED_ADDRESSES_WANTED:
            break
        if count and time.monotonic() - started > budget_s:
            session.trace.note(f"{count} subscribers in a row took a third of the check's time: no more are tried")
            break
        probe = session.probe(ProbeOfARareSize)
        reused += id(probe) in addresses
        addresses.add(id(probe))
        session.subscribe(publisher, probe)
        probe.expect_subscribed(rule="1.9")
        probe.request(n + 1)
        session.settle()
        if not probe.terminated:
            probe.cancel()
            session.settle()
        probe.released_by_the_kit()
        released = weakref.ref(probe)
        del probe
        if released() is not None:  # held in a cycle: a collection frees it (only then: it costs time)
            gc.collect()
    session.trace.note(f"{reused} of the subscribers came at an earlier one's address" if reused else
                       "no subscriber came at an earlier one's address: only 1.9's plain case was tested")


@rule("1.10")
def subscribe_keeps_its_semantics_for_each_new_subscriber(session):
    """1.10: subscribe may be called again and again, each time with a new subscriber, and each
    call is a full subscribe: on_subscribe, then the elements or an on_error rejecting it (whether
    the stream then completes is 1.5's business)."""
    n = session.elements(3, at_least=0)
    publisher = session.create_publisher(n)
    for attempt in range(1, 4):
        probe = session.subscribe(publisher)
        probe.request(n + 1)
        session.settle()
        probe.expect_subscribed(rule="1.10")
        if not (probe.errors or probe.received == n):
            raise RuleViolation("1.10", f"subscribe #{attempt} to work like the first: {n} on_next, "
                                        "or an on_error", probe.observed() + session.quiet_note(),
                                claim=session.evidence.claim("served", probe=probe, count=n, exact=True,
                                                             unless="error"))
        if not probe.terminated:
            probe.cancel()


@rule("1.11")
def may_support_multiple_subscribers(session):
    """1.11 (MAY) with 1.9: two subscribers at once. The second is either served (its demand
    honoured) or rejected with on_subscribe then on_error; one left without any signal, or whose
    demand goes nowhere, breaks 1.9 (on_error is the only legal way to reject a subscriber)."""
    n = session.elements(5, at_least=0)
    publisher = session.create_publisher(n)
    probes = [session.subscribe(publisher) for _ in range(2)]
    for probe in probes:
        probe.request(n)
    session.settle()
    for probe in probes:
        probe.expect_subscribed(rule="1.9")
        if not probe.terminated and probe.received < n:
            raise RuleViolation("1.9", f"{probe.name} served (its demand of {n} honoured) or rejected with on_error",
                                f"{probe.observed()} once settled" + session.quiet_note(),
                                claim=session.evidence.claim("served", probe=probe, count=n, exact=False,
                                                             unless="terminal"))
    rejected = [p for p in probes if p.errors and not p.received]
    if rejected:
        raise Unsupported(f"{rejected[0].name} was rejected: {rejected[0].observed()}")


@rule("1.3", needs={"publisher", "threads"})
def signals_are_serial_while_the_probe_lingers(session):
    """1.3 with the race windows held open (rstck.core.perturb): the probe requests from inside on_subscribe and
    each on_next, then lingers there until the publisher's own threads have done what they can, so a delivery
    that request starts on another thread meets the signal still running, on a quiet machine as on a loaded
    one. Needs threads the kit can call from (an in-process target); elsewhere n/a."""
    n = session.elements(6, at_least=2)
    probe = session.subscribe(session.create_publisher(n), on_subscribe=lambda p, _: p.request(1),
                             on_next=requesting(1, while_below=n),
                             linger_in={"on_subscribe", "on_next"})
    session.settle()


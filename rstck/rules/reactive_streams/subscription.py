"""Subscription rules 3.1-3.17 (as served by a publisher under test).

3.1 binds the subscriber: it is checked with the Subscriber verification.
"""

from __future__ import annotations

import gc
import time
import weakref

from rstck.api import MAX_DEMAND
from rstck.core.signals import show
from rstck.core.verdict import NotApplicable, RuleViolation, Unsupported
from rstck.core.checks import rule
from rstck.core.probes import at_element, described, requesting

# 3.3: a stream this long whose every element nests inside the previous one's request has no
# bound below the stream's length. Kept small: a deeper stack could overflow Python's.
RECURSION_PROBE_ELEMENTS = 32


@rule("3.2")
def request_from_on_subscribe_and_on_next_is_allowed(session):
    """3.2: request called synchronously from inside on_subscribe and on_next must work; a raise
    or a hang there is charged to 3.2."""
    n = session.elements(10, at_least=0)
    probe = session.subscribe(session.create_publisher(n),
                             on_subscribe=lambda p, _: p.request(1), on_next=requesting(1))
    session.settle()
    probe.expect_elements(n, rule="3.2")


def _recursion_depth(session) -> tuple[int, int, dict | None]:
    """How deep on_next nested, how many came, and the claim of a reproducer (over the probe)."""
    n = session.elements(RECURSION_PROBE_ELEMENTS, at_least=4)
    probe = session.subscribe(session.create_publisher(n), on_next=requesting(1))
    probe.request(1)
    session.settle()
    return probe.max_depth, probe.received, session.evidence.claim("bounded_recursion", probe=probe)


@rule("3.3")
def request_on_next_recursion_is_bounded(session):
    """3.3: the probe requests one more from inside each on_next and measures how deeply on_next
    calls nest; nesting that grows with every element has no bound."""
    depth, delivered, claim = _recursion_depth(session)
    if delivered >= 4 and depth >= delivered:
        raise RuleViolation("3.3", "an upper bound on request -> on_next recursion",
                            f"each of {delivered} on_next ran inside the previous one's request (depth {depth})",
                            claim=claim)


@rule("3.3.depth-one")
def request_on_next_recursion_depth_is_one(session):
    """3.3 (RECOMMENDED): the recursion is limited to depth 1."""
    depth, _, claim = _recursion_depth(session)
    if depth > 1:
        raise RuleViolation("3.3.depth-one", "on_next never nested in on_next (depth 1)", f"depth {depth}",
                            claim=claim and {**claim, "claim": "depth_one"})


@rule("3.4")
def request_returns_promptly(session):
    """3.4 (SHOULD): request returns within the responsiveness bound (time spent inside the probe's
    own on_next excluded)."""
    probe = session.subscribe(session.create_publisher(session.elements(4)), timed=True)
    session.settle()
    slowest = 0.0
    for n in (1, 1, 2):
        probe.request(n)
        slowest = max(slowest, probe.last_request_s)
        session.settle()
    if slowest > session.responsiveness_bound_s:
        raise RuleViolation("3.4", f"request to return within {session.responsiveness_bound_s:g} s",
                            f"the slowest took {slowest:.3f} s", timed_out=True,
                            claim=session.evidence.claim("request_within", probe=probe))


@rule("3.5")
def cancel_returns_promptly(session):
    """3.5: cancel respects its caller's responsivity (a cancel that never returns is charged 3.5)."""
    probe = session.subscribe(session.create_publisher(session.elements(4, at_least=2)))
    probe.request(1)
    session.settle()
    cancel_took = _timed(probe.cancel)
    session.settle()
    if cancel_took > session.responsiveness_bound_s:
        raise RuleViolation("3.5", f"cancel to return within {session.responsiveness_bound_s:g} s",
                            f"it took {cancel_took:.3f} s", timed_out=True,
                            claim=session.evidence.claim("cancel_within", probe=probe))


@rule("3.5")
def cancel_is_idempotent(session):
    """3.5: cancel called twice in a row, before the first has settled, is harmless."""
    probe = session.subscribe(session.create_publisher(session.elements(4, at_least=2)))
    probe.request(1)
    session.settle()
    probe.cancel()  # a raise here is 3.15's
    probe.cancel(rule_if_raises="3.5")
    session.settle()


@rule("3.5")
def cancel_is_thread_safe(session):
    """3.5: cancel is thread-safe: called from a thread other than the one that subscribed and
    requested, while the publisher may still be delivering on threads of its own, it returns
    normally and the stream stops. The kit's calls stay serial, as 2.7 asks of every subscriber:
    cancels made at the same instant from several threads would break that rule, so none are made."""
    n = session.elements(256, at_least=2)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(1)
    session.settle()
    probe.request(n)  # an asynchronous publisher now delivers on its own threads
    session.on_another_thread(lambda: probe.cancel(rule_if_raises="3.5"), rule="3.5")
    session.settle()


def _cancelled(session):
    """A probe that cancelled a live subscription, settled: after one element when the publisher has two
    or more, else from inside on_subscribe (an empty stream)."""
    n = session.elements(10, at_least=0)
    if n >= 2:
        probe = session.subscribe(session.create_publisher(n))
        probe.request(1)
        session.settle()
        probe.cancel()
    else:
        probe = session.subscribe(session.create_publisher(n), on_subscribe=lambda p, _: p.cancel())
    session.settle()
    return probe


@rule("3.6")
def request_after_cancel_is_a_nop(session):
    """3.6: once cancelled, request (even request(0)) draws no signal and returns normally."""
    probe = _cancelled(session)
    probe.silence("3.6")
    # A stream that ended as it was cancelled is cancelled twice over (1.6): the requests are NOPs all the same.
    request = probe.request_after_terminal if probe.terminated else probe.request
    request(2, rule_if_raises="3.6")
    request(0, rule_if_raises="3.6")
    session.settle()


@rule("3.7")
def cancel_after_cancel_is_a_nop(session):
    """3.7: a cancel after the first has taken effect draws no signal and returns normally."""
    probe = _cancelled(session)
    probe.silence("3.7")
    probe.cancel(rule_if_raises="3.7")
    session.settle()


@rule("3.8")
def request_adds_to_outstanding_demand(session):
    """3.8: two requests made before the publisher could serve the first add up, whether made from
    inside on_next or back to back from outside."""
    n = session.elements(12, at_least=7)
    inside = session.subscribe(session.create_publisher(n), on_next=at_element(1, requests=(2, 3)))
    inside.request(1)
    session.settle()
    inside.expect_elements(6, rule="3.8")
    outside = session.subscribe(session.create_publisher(n))
    session.settle()
    outside.request(2)
    outside.request(3)
    session.settle()
    outside.expect_elements(5, rule="3.8")
    if session.stream_length:  # the stress mode: two halves of a long stream, asked for back to back
        long = session.elements(session.stream_length)
        cumulative = session.subscribe(session.create_publisher(long))
        session.settle()
        cumulative.request(long // 2)
        cumulative.request(long - long // 2)
        session.settle()
        cumulative.expect_elements(long, rule="3.8")


@rule("3.9")
def request_zero_signals_on_error(session):
    """3.9: request(0) on a live subscription signals on_error with the profile's range error."""
    probe = session.subscribe(session.create_publisher(session.elements(10)))
    probe.request(0, judged_all_the_same=True)  # a raise is 3.16's; the missing on_error still 3.9's
    session.settle()
    probe.expect_error(session.error_names.range_error, rule="3.9")


@rule("3.9")
def request_negative_signals_on_error(session):
    """3.9 with a negative argument, after some elements have been delivered."""
    probe = session.subscribe(session.create_publisher(session.elements(10, at_least=2)))
    probe.request(1)
    session.settle()
    probe.request(-1, judged_all_the_same=True)
    session.settle()
    probe.expect_error(session.error_names.range_error, rule="3.9")


@rule("3.9")
def request_zero_at_the_end_of_the_stream_signals_on_error(session):
    """3.9 where the stream is at its end but not yet ended: every element delivered, or none to deliver,
    the target settled and no terminal signal yet (a publisher that finds its end only when asked for
    more). Nothing is under way, so a request(0) must be answered with on_error, not on_complete."""
    live = []
    for n in sorted({session.elements(2, at_least=0), 0}):
        probe = session.subscribe(session.create_publisher(n))
        if n:
            probe.request(n)
        session.settle()
        if not probe.terminated:
            live.append(probe)
    if not live:  # nothing to ask: each stream ended with its last element (a request(0) now is 1.6's NOP)
        session.trace.note("each stream ended with its last element: no live subscription at its end to ask")
    for probe in live:
        probe.request(0, judged_all_the_same=True)
        session.settle()
        probe.expect_error(session.error_names.range_error, rule="3.9")


@rule("3.9")
def request_zero_after_unbounded_demand_signals_on_error(session):
    """3.9 once the demand is unbounded (2**63-1): a request(0) made from inside the first on_next, with
    elements still to come, must still end the stream with on_error. The demand covers the whole stream, so
    an on_complete delivered on a thread or task of the publisher's own may have been under way before the
    request(0) was seen; one delivered inside the kit's own request, synchronously, cannot have been."""
    n = session.elements(10, at_least=2)
    probe = session.subscribe(session.create_publisher(n),
                              on_next=at_element(1, requests=(0,), judged_all_the_same=True))
    probe.request(MAX_DEMAND, judged_all_the_same=True)  # a raise is 3.16's; what it did not deliver 3.17's
    session.settle()
    if not probe.received:  # the request(0) is made inside the first on_next
        raise NotApplicable(f"the unbounded demand brought no element ({probe.observed()}), so no request(0) was "
                            "made: that is 3.17's finding")
    if probe.completed and not probe.errors and not _inside_the_checks_call(session, probe, "on_complete"):
        raise NotApplicable("on_complete came from the publisher's own thread or task, with the whole stream "
                            "requested: it may have been under way before the request(0)")
    probe.expect_error(session.error_names.range_error, rule="3.9")


def _inside_the_checks_call(session, probe, kind: str) -> bool:
    """Whether `kind` reached `probe` on the check's own thread, nested inside one of the kit's calls."""
    check_thread = session.check_thread.name
    return any(s.thread == check_thread and s.depth > 0 for s in session.trace.signals_of(probe.name, kind))


# Words that show an error message explains the 3.9 violation.
_EXPLAINS_NON_POSITIVE = ("3.9", "positive", "> 0", "<= 0", ">0", "<=0", "greater than 0", "greater than zero",
                          "illegal", "invalid", "must be at least 1", ">= 1")


@rule("3.9.message")
def non_positive_request_error_explains_itself(session):
    """3.9 (SHOULD): the on_error message says that non-positive requests are illegal."""
    probe = session.subscribe(session.create_publisher(session.elements(10)))
    probe.request(0)
    session.settle()
    error = probe.expect_error(session.error_names.range_error, rule="3.9")
    try:
        message = str(error)
    except BaseException as exc:  # noqa: BLE001 - the implementation's error cannot even say what it is
        raise RuleViolation("3.9.message", "a message explaining that non-positive requests are illegal",
                            f"str() of the error raised {show(exc)}") from None
    if not any(word in message.lower() for word in _EXPLAINS_NON_POSITIVE):
        raise RuleViolation("3.9.message", "a message explaining that non-positive requests are illegal",
                            f"message {show(message)}",
                            claim=session.evidence.claim("error_explains", probe=probe,
                                                         words=list(_EXPLAINS_NON_POSITIVE)))


def _synchronously(session, probe, kind: str, request: int) -> bool:
    """Whether `kind` reached `probe` on the check's own thread, inside a request(`request`)."""
    before = len(session.trace)
    probe.request(request)
    check_thread = session.check_thread.name
    return any(s.seq > before and s.thread == check_thread and s.depth > 0
               for s in session.trace.signals_of(probe.name, kind))


@rule("3.10")
def request_may_signal_on_next_synchronously(session):
    """3.10 (MAY): request(1) delivers on_next before it returns, on the caller's thread."""
    probe = session.subscribe(session.create_publisher(session.elements(3)))
    session.settle()
    if not _synchronously(session, probe, "on_next", 1):
        session.settle()
        raise Unsupported("request(1) returned before on_next; delivery is asynchronous")
    session.settle()


@rule("3.11")
def request_may_signal_on_complete_synchronously(session):
    """3.11 (MAY): request delivers the last element and on_complete before it returns."""
    probe = session.subscribe(session.create_publisher(session.elements(1)))
    session.settle()
    if not _synchronously(session, probe, "on_complete", 2):
        session.settle()
        raise Unsupported("request(2) on a one-element stream returned before on_complete")
    session.settle()


@rule("3.12")
def cancel_stops_a_stream_with_demand_pending(session):
    """3.12: cancelled at its first element with the whole stream requested, the publisher stops
    before reaching the end; running on to on_complete means the cancel was ignored."""
    _cancel_stops_the_stream(session, lambda n: n)


@rule("3.12")
def cancel_stops_a_stream_with_unbounded_demand(session):
    """3.12 with unbounded demand (2**63-1), which a publisher may serve on a path of its own."""
    _cancel_stops_the_stream(session, lambda _n: MAX_DEMAND)


def _cancel_stops_the_stream(session, demand) -> None:
    n = session.elements(256, at_least=64)
    probe = session.subscribe(session.create_publisher(n), on_next=at_element(1, cancel=True))
    probe.request(demand(n))
    session.settle()
    _expect_stopped_after_cancel(session, probe, n)


def _expect_stopped_after_cancel(session, probe, n: int, how: str = "") -> None:
    """3.12: a stream of `n` cancelled before its end must not reach it (n/a if the cancel came too late)."""
    at = probe.cancelled_at
    if at is None or at >= n:
        raise NotApplicable(f"the cancel reached the publisher only after all {n} elements had been delivered")
    if probe.completed or probe.received >= n:
        raise RuleViolation("3.12", "the publisher to stop signalling after cancel",
                            f"cancelled at on_next {at} of {n}{how}, it went on to {probe.observed()}",
                            claim=session.evidence.claim("stopped_after_cancel", probe=probe, count=n))


@rule("3.13", needs={"publisher", "identity"})
def cancel_drops_the_reference_to_the_subscriber(session):
    """3.13: after cancel has settled and a garbage collection, the subscriber is unreachable
    while the publisher itself is still alive."""
    publisher = session.create_publisher(session.elements(5, at_least=2))
    name, alive = cancelled_and_collected(session, session.subscribe(publisher))
    if alive() is not None:
        holders = sorted({type(r).__name__ for r in gc.get_referrers(alive()) if not _is_frame_or_kit(r)})
        raise RuleViolation("3.13", f"{name} to be collectable once cancelled",
                            f"it is still referenced (by {', '.join(holders) or 'something'}) while the "
                            "publisher is alive", claim=session.evidence.claim("collectable", probe=alive()))
    del publisher


def cancelled_and_collected(session, probe):
    """Request one, cancel, settle, collect: the probe's name and a weak reference to it (3.13; the
    spi-draft profile's spi.cancel.3). The caller keeps the publisher alive and no reference to `probe`."""
    probe.request(1)
    session.settle()
    probe.cancel()
    # The kit lets go of its own references first: its handle on the subscription (through an adapter's
    # stand-in, a reference held in another process) would keep the subscriber reachable by itself.
    probe.let_go_of_subscription()
    gc.collect()
    session.settle()
    name, alive = probe.name, weakref.ref(probe)
    del probe
    gc.collect()
    return name, alive


def _is_frame_or_kit(referrer) -> bool:
    return type(referrer).__name__ in ("frame", "WeakSet", "ref") or isinstance(referrer, weakref.ref)


@rule("3.14")
def cancel_may_shut_the_publisher_down(session):
    """3.14 (MAY): after its only subscriber cancels, a stateful publisher may end new subscriptions
    at once with on_complete or on_error."""
    n = session.elements(5, at_least=2)
    publisher = session.create_publisher(n)
    first = session.subscribe(publisher)
    first.request(1)
    session.settle()
    first.cancel()
    session.settle()
    second = session.subscribe(publisher)
    second.request(n)
    session.settle()
    second.expect_subscribed()
    if not (second.terminated and not second.received):
        raise Unsupported(f"a new subscriber after the cancel was served as usual ({second.observed()})")


@rule("3.15")
def cancel_before_any_request_returns_normally(session):
    """3.15: cancel before any request returns normally."""
    fresh = session.subscribe(session.create_publisher(session.elements(5, at_least=0)))
    session.settle()
    fresh.cancel()
    session.settle()


@rule("3.15")
def cancel_after_a_partial_request_returns_normally(session):
    """3.15: cancel after part of the stream was requested and delivered returns normally."""
    partial = session.subscribe(session.create_publisher(session.elements(5, at_least=2)))
    partial.request(1)
    session.settle()
    partial.cancel()
    session.settle()


@rule("3.16")
def request_returns_normally(session):
    """3.16: request returns normally in every state of a live subscription, including past the
    end of the stream."""
    n = session.elements(5, at_least=2)
    probe = session.subscribe(session.create_publisher(n))
    for k in (1, 1, n):
        probe.request(k)
        session.settle()


@rule("3.17")
def demand_up_to_max_is_supported(session):
    """3.17: a demand of 2**63-1 in one call, and reaching it cumulatively, delivers everything (in the
    stress mode, a stream of `--stream-length` elements)."""
    n = session.elements(max(10, session.stream_length))
    once = session.subscribe(session.create_publisher(n))
    once.request(MAX_DEMAND, judged_all_the_same=True)  # a raise is 3.16's; what it did not deliver 3.17's
    session.settle()
    once.expect_elements(n, rule="3.17")
    cumulative = session.subscribe(session.create_publisher(n))
    cumulative.request(1)
    session.settle()
    cumulative.request(MAX_DEMAND - 1, judged_all_the_same=True)
    session.settle()
    cumulative.expect_elements(n, rule="3.17")


@rule("3.17")
def pending_demand_beyond_max_keeps_working(session):
    """3.17: demand pending above 2**63-1 (two maximal requests before delivery) neither errors nor
    wraps around; made both from inside on_next and back to back from outside."""
    n = session.elements(10, at_least=3)
    inside = session.subscribe(session.create_publisher(n), on_next=at_element(1, requests=(MAX_DEMAND, MAX_DEMAND)))
    inside.request(1)
    session.settle()
    inside.expect_elements(n, rule="3.17")
    outside = session.subscribe(session.create_publisher(n))
    session.settle()
    outside.request(MAX_DEMAND, judged_all_the_same=True)
    outside.request(MAX_DEMAND, judged_all_the_same=True)
    session.settle()
    outside.expect_elements(n, rule="3.17")


@rule("3.17")
def many_small_requests_are_supported(session):
    """3.17: an unbounded number of calls: one request(1) per element, hundreds of times."""
    n = session.elements(256, at_least=16)
    probe = session.subscribe(session.create_publisher(n))
    for _ in range(n):
        probe.request(1)
    session.settle()
    probe.expect_elements(n, rule="3.17")


@rule("3.17.unbounded")
def demand_beyond_max_is_effectively_unbounded(session):
    """3.17 (MAY): one request above 2**63-1 is taken as unbounded demand rather than refused."""
    n = session.elements(5)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(2**64, judged_all_the_same=True)  # a raise is 3.16's; the MAY is judged all the same
    session.settle()
    probe.expect_subscribed()
    served = lambda: probe.received >= n or probe.terminated  # noqa: E731
    if not served():  # where settling cannot be exact (a quiet window), a slow target is not judged early
        session.settler.await_signal(served, session.deadline)
    if probe.received != n:
        raise Unsupported(f"request(2**64) led to {probe.observed()}")


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


@rule("3.8", needs={"publisher", "threads"})
def demand_from_a_second_thread_during_a_delivery_is_added(session):
    """3.8 (and 1.1, 1.3) with demand signalled from a second thread of the kit's while an on_next is in flight
    (rstck.core.perturb): asked for one element from inside on_subscribe, the probe, inside that element's on_next,
    requests two more on a kit thread and waits (bounded) for that request to return before it returns itself.
    A publisher delivering on its own thread, or still inside `subscribe`, that reads its demand counter before
    on_next and writes it back after (a fast path without the lock) loses those two. Where no second thread can
    be used (a delivery inside the kit's own request, a target on the kit's event loop) the request is made
    from inside the on_next, an ordinary 3.8 case; targets without kit-callable threads are n/a."""
    from rstck.core.perturb import join_kit_thread, request_from_second_thread

    n = session.elements(6, at_least=4)
    under_way = []

    @described(at=1, requests=[2], on_second_thread=True)
    def ask_from_a_second_thread(probe, _item):
        if probe.received == 1:
            under_way.append(request_from_second_thread(session, probe, 2))

    probe = session.subscribe(session.create_publisher(n), on_subscribe=lambda p, _: p.request(1),
                             on_next=ask_from_a_second_thread)
    session.settle()
    for thread in filter(None, under_way):
        join_kit_thread(session, thread, rule="3.16")
    session.settle()
    probe.expect_elements(3, rule="3.8")


@rule("3.12", needs={"publisher", "threads"})
def cancel_from_a_second_thread_during_a_delivery_stops_the_stream(session):
    """3.12 (and 3.5: a cancel that does not return) with the cancel made from a second thread of the kit's while an
    on_next is in flight
    (rstck.core.perturb): with the whole stream requested, the probe, inside its first on_next, cancels on a kit thread
    and waits (bounded) for that cancel to return. A publisher that reads its state before on_next and writes it
    back after loses the cancel and runs on to the end. Targets without kit-callable threads are n/a."""
    from rstck.core.perturb import join_kit_thread, on_second_thread

    n = session.elements(256, at_least=64)
    under_way = []

    @described(at=1, cancel=True, on_second_thread=True)
    def cancel_from_a_second_thread(probe, _item):
        if probe.received == 1:
            under_way.append(on_second_thread(session, probe, probe.cancel, "cancels"))  # a raise is 3.15's

    probe = session.subscribe(session.create_publisher(n), on_next=cancel_from_a_second_thread)
    probe.request(n)
    session.settle()
    for thread in filter(None, under_way):
        join_kit_thread(session, thread, rule="3.5")
    session.settle()
    _expect_stopped_after_cancel(session, probe, n, " from a second thread")

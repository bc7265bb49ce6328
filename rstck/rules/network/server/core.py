"""The Reactive Streams core protocol over the wire: ids, element sizes, id reuse, and rstck's readings of the
core rules for frames (net.rstck.7-12). The core profile's own Publisher and Subscription checks also run against
the server, through the kit's client (rstck/adapters/network/server_target.py)."""

from __future__ import annotations

from rstck.core.verdict import NotApplicable, RuleViolation, Unsupported
from rstck.protocols.network.wire import INT64_MAX, Cancel, Goodbye, OnComplete, OnError, Request, Subscribe
from rstck.core.checks import rule, untested
from rstck.rules.network.server import (connect, expect_goodbye, expect_still_stopped, expect_stopped, flowing,
                                       served_claim)

untested("net.core.1", "rstck's side publishes nothing: a server that subscribes to the kit is answered with "
                       "subscribed and onError (net.rstck.11), and whether a server subscribes is its own choice")
# net.core.2 for a server: the core profile's Publisher and Subscription checks run against its reserved
# publishers and are reported under their own ids (1.1, 1.9, 3.9, ...); its client check is in client/core.py.


def _completes(peer, name: str, demand: int, rule_id: str, *, stream_id: int | None = None):
    stream_id = peer.subscribe(name, demand, stream_id=stream_id)
    stream = peer.until_ended(stream_id, rule=rule_id, expected=f"{name} with demand {demand} to end")
    _unreadable_elements_decide(peer)
    return stream


def _unreadable_elements_decide(peer) -> None:
    """Before a check counts a stream's elements: a MUST finding already made on this connection (elements of the
    wrong size, which the kit cannot keep) is what the count would show, so it stops the check, and the check's own
    item is blocked by it rather than charged a second time. The terminal signal may arrive in the same read as
    the offending frames, before `until` had a frame to stop at."""
    if peer.session.findings.must_broken:
        peer.session.findings.raise_pending()


@rule("net.core.2")
def a_server_that_subscribes_takes_the_kits_on_error(wire):
    """net.core.2 (rule 2.10 over the wire), for a server that subscribes to the kit (net.core.1): the kit answers
    each subscribe with subscribed, then onError (it publishes nothing); the server, as a subscriber, must take
    that onError and go on: round trips (rstck/empty) are answered until one passes with no new subscribe of
    the server's, so the server has read the kit's answers to all of them. n/a for a server that subscribes to
    nothing."""
    peer = connect(wire)
    subscribes = 0
    for _ in range(4):  # a server that subscribes on every round trip is judged on its first few subscribes
        barrier = peer.subscribe("rstck/empty")
        # Judged by the frame itself: the ledger may have taken the onComplete already, with frames before it.
        seen = peer.until(peer.frame_of(OnComplete, OnError, stream_id=barrier), rule="net.core.2",
                          expected=f"rstck/empty to complete, the server having read the kit's subscribed and "
                                   f"onError for its {subscribes} subscribes" if subscribes else
                                   "rstck/empty to complete")
        new = sum(type(f) is Subscribe for f in seen)
        if not new and subscribes:
            return
        subscribes += new
        if not subscribes:
            raise NotApplicable("the server subscribed to nothing by the answer to a round trip")


@rule("net.core.3")
def every_signal_carries_its_subscribers_id(wire):
    """net.core.3: three streams open at once, with ids 5, 2**40 and 7: each gets its own subscribed, elements
    and onComplete, and no frame names an id the kit did not use."""
    peer = connect(wire)
    ids = (5, 2**40, 7)
    for stream_id in ids:
        peer.subscribe("rstck/range/3", 0, stream_id=stream_id)
    for stream_id in ids:
        peer.send(Request(stream_id, 3))
    for stream_id in ids:
        stream = peer.until_ended(stream_id, rule="net.core.3", expected=f"stream {stream_id} to end")
        _unreadable_elements_decide(peer)
        if len(stream.elements) != 3 or not stream.terminal.startswith("onComplete"):
            raise RuleViolation("net.core.3", f"stream {stream_id} to get its own 3 elements, then onComplete",
                                f"it got {len(stream.elements)} elements, then {stream.terminal}",
                                claim=served_claim(peer, stream_id, "onComplete", elements=3))


@rule("net.core.4")
def elements_have_the_declared_size(wire):
    """net.core.4: in streams of rstck/range (which may declare 8-byte elements), every element, plain, packed or
    joined from parts, has the size subscribed declared (every frame is checked as it arrives)."""
    peer = connect(wire)
    _completes(peer, "rstck/range/40", 40, "1.5")
    stream_id = peer.subscribe("rstck/infinite", 25)
    peer.until(peer.has_received(stream_id, 25), rule="3.8",
               expected="the 25 elements requested of rstck/infinite")
    peer.send(Cancel(stream_id))


@rule("net.ids.1")
def a_reused_id_starts_a_new_stream(wire):
    """net.ids.1 (the subscriber's MAY; a server that refuses it leaves it unsupported): after id 1's stream
    completed, subscribe with id 1 again starts a new stream from its first element."""
    peer = connect(wire)
    _completes(peer, "rstck/range/2", 2, "1.5", stream_id=1)
    stream = _completes(peer, "rstck/range/3", 3, "net.ids.1", stream_id=1)
    if peer.goodbye_received is not None or len(stream.elements) != 3 or not stream.terminal.startswith("onComplete"):
        raise Unsupported(f"a subscribe reusing id 1 after its stream completed got {len(stream.elements)} elements "
                          f"and {stream.terminal or 'no terminal signal'}")


@rule("net.rstck.7")
def a_request_of_zero_gets_on_error_and_the_connection_stays_open(wire):
    """net.rstck.7: request(0) on an open stream of rstck/range/5 ends that stream with onError; the connection
    goes on serving (a second stream completes)."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/range/5")
    peer.send(Request(stream_id, 0))
    _ends_with_error_only(peer, stream_id, "request(0)")


@rule("net.rstck.7")
def a_negative_request_gets_on_error(wire):
    """net.rstck.7: request(-2**63) on an open stream ends that stream with onError."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/range/5")
    peer.send(Request(stream_id, -2**63))
    _ends_with_error_only(peer, stream_id, "request(-2**63)")


@rule("net.rstck.7")
def a_negative_initial_demand_gets_on_error(wire):
    """net.rstck.7: subscribe with initial demand -1 is answered with subscribed, then onError."""
    peer = connect(wire)
    stream_id = peer.new_id()
    peer.send(Subscribe("rstck/range/5", stream_id, -1))
    _ends_with_error_only(peer, stream_id, "an initial demand of -1")


def _ends_with_error_only(peer, stream_id: int, what: str) -> None:
    stream = peer.until_ended(stream_id, rule="net.rstck.7", expected=f"onError for {what}")
    if not stream.terminal.startswith("onError"):
        raise RuleViolation("net.rstck.7", f"onError for {what}", f"{stream.terminal}",
                            claim=served_claim(peer, stream_id, "onError"))
    if peer.goodbye_received is not None:
        raise RuleViolation("net.rstck.7", "the connection to stay open", f"goodbye({peer.goodbye_received.reason!r})",
                            claim=served_claim(peer, None))
    after = _completes(peer, "rstck/range/1", 1, "net.rstck.7")
    if not after.terminal.startswith("onComplete"):
        raise RuleViolation("net.rstck.7", "the connection to go on serving after the stream failed",
                            f"the next stream ended with {after.terminal}",
                            claim=served_claim(peer, after.id, "onComplete"))


@rule("net.rstck.8")
def cumulative_demand_beyond_the_maximum_is_unbounded(wire):
    """net.rstck.8: two requests of 2**63-1 on rstck/infinite: elements keep coming (the kit reads 1,000 of
    them), and by the answer to a round trip (a subscribe to rstck/empty) the stream has had no onError and the
    connection no goodbye."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/infinite")
    peer.send(Request(stream_id, INT64_MAX))
    peer.send(Request(stream_id, INT64_MAX))
    stream = peer.stream(stream_id)
    peer.until(peer.has_received(stream_id, 1000) | peer.ended(stream_id) | peer.frame_of(Goodbye),
               rule="net.rstck.8", expected="elements to keep coming after demand of 2 * (2**63-1)")
    if peer.goodbye_received is None:
        # A round trip with the stream still open: by its answer the server has acted on both requests, and what
        # it made of them (elements it had buffered, then an onError) was written before, by a server that
        # writes its streams in turn. A cancel first would let a server drop an onError it had not written yet.
        # Made even when the onError came with the elements, so that a reproducer (which may read them apart)
        # makes it too.
        barrier = peer.subscribe("rstck/empty")
        peer.until(peer.ended(barrier) | peer.ended(stream_id), rule="net.rstck.8",
                   expected="rstck/empty to complete")
    if stream.terminal or peer.goodbye_received is not None:
        raise RuleViolation("net.rstck.8", "demand beyond 2**63-1 treated as unbounded",
                            f"after {stream.received} elements: "
                            f"{stream.terminal or f'goodbye({peer.goodbye_received.reason!r})'}",
                            claim=served_claim(peer, stream_id))
    peer.send(Cancel(stream_id))


@rule("net.rstck.9")
def request_and_cancel_for_ids_without_a_stream_are_ignored(wire):
    """net.rstck.9: request and cancel for an id never subscribed, and for a stream that completed, change
    nothing: no goodbye, no signal for those ids, and the next stream is served."""
    peer = connect(wire)
    _completes(peer, "rstck/range/1", 1, "1.5", stream_id=4)
    for frame in (Request(99, 5), Cancel(98), Request(4, 1), Cancel(4)):
        peer.send(frame)
    after = _completes(peer, "rstck/range/2", 2, "net.rstck.9")
    if peer.goodbye_received is not None or not after.terminal.startswith("onComplete"):
        raise RuleViolation("net.rstck.9", "request and cancel for ids without a stream ignored",
                            f"goodbye({peer.goodbye_received.reason!r})" if peer.goodbye_received else after.terminal,
                            claim=served_claim(peer, after.id, "onComplete"))


@rule("net.rstck.11")
def an_unknown_publisher_gets_subscribed_then_on_error(wire):
    """net.rstck.11: subscribe to a name the server does not serve is answered with subscribed, then onError, and
    the connection goes on serving."""
    peer = connect(wire)
    stream = _completes(peer, "rstck-test/no such publisher", 1, "net.rstck.11")
    if not stream.subscribed or not stream.terminal.startswith("onError"):
        raise RuleViolation("net.rstck.11", "subscribed, then onError",
                            f"{'subscribed, then ' if stream.subscribed else ''}{stream.terminal}",
                            claim=served_claim(peer, stream.id, "onError"))
    after = _completes(peer, "rstck/range/1", 1, "net.rstck.11")
    if peer.goodbye_received is not None or not after.terminal.startswith("onComplete"):
        raise RuleViolation("net.rstck.11", "the connection to go on serving", after.terminal or "goodbye",
                            claim=served_claim(peer, after.id, "onComplete"))


# 40 bytes (a MessagePack str8) and 300 bytes (a str16): a reader that finds a name's length at the wrong
# offset, or reads too few of its length bytes, loses the frame boundary on names like these alone.
LONG_NAME_LENGTHS = (40, 300)


@rule("net.rstck.11")
def an_unknown_publisher_with_a_long_name_gets_subscribed_then_on_error(wire):
    """net.rstck.11: subscribes naming publishers the server does not serve, with names of 40 and 300 bytes, are
    each answered with subscribed, then onError, and the connection goes on serving."""
    peer = connect(wire)
    for length in LONG_NAME_LENGTHS:
        name = "rstck-test/no such publisher " + "x" * (length - 29)
        stream = _completes(peer, name, 1, "net.rstck.11")
        if not stream.subscribed or not stream.terminal.startswith("onError"):
            raise RuleViolation("net.rstck.11", f"subscribed, then onError, for a name of {length} bytes",
                                f"{'subscribed, then ' if stream.subscribed else ''}{stream.terminal}",
                                claim=served_claim(peer, stream.id, "onError"))
    after = _completes(peer, "rstck/range/1", 1, "net.rstck.11")
    if peer.goodbye_received is not None or not after.terminal.startswith("onComplete"):
        raise RuleViolation("net.rstck.11", "the connection to go on serving", after.terminal or "goodbye",
                            claim=served_claim(peer, after.id, "onComplete"))


@rule("net.rstck.12")
def subscribe_with_an_open_id_gets_goodbye(wire):
    """net.rstck.12: a second subscribe with the id of a stream still open is answered with goodbye and a
    close."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/infinite")
    peer.send(Subscribe("rstck/range/1", stream_id, 1), fault=f"subscribe with id {stream_id}, still open")
    expect_goodbye(peer, "net.rstck.12", f"a subscribe with the open id {stream_id}")


@rule("3.12")
def cancel_stops_an_unbounded_stream(wire):
    """3.12 over the wire: rstck/infinite with demand 2**63-1, cancelled once 50 elements have arrived, stops
    (`expect_stopped`: what was already on its way may still arrive). The core profile's 3.12 check, through the
    kit's client, cannot see this: the client drops what follows a cancel, and its stream is finite."""
    peer = connect(wire)
    peer.quiet_window()  # measured before the flow, which would otherwise lengthen the round trip
    stream_id = flowing(peer)
    peer.send(Cancel(stream_id))
    expect_stopped(peer, stream_id, "3.12")


@rule("1.8")
def a_cancelled_stream_stops_while_another_flows(wire):
    """1.8 over the wire: two streams of rstck/infinite with demand 2**63-1 on one connection; the first,
    cancelled, stops being signalled (`expect_stopped`) while the second goes on, and stays stopped once the
    second is cancelled too and stops (`expect_still_stopped`)."""
    peer = connect(wire)
    peer.quiet_window()  # measured before the flows, which would otherwise lengthen the round trip
    cancelled, going_on = flowing(peer), flowing(peer)
    # A few more frames of each, so that the gaps of the first while the second is served are known.
    peer.until(peer.more_element_frames({cancelled: 3, going_on: 3}) | peer.ended(cancelled) | peer.ended(going_on),
               rule="3.8", expected="both streams of rstck/infinite to go on")
    peer.send(Cancel(cancelled))
    expect_stopped(peer, cancelled, "1.8")
    peer.send(Cancel(going_on))
    expect_still_stopped(peer, cancelled, going_on, "1.8")

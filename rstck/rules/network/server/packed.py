"""Packed messaging: a fixed element size declared in subscribed, and onNextPacked within demand."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation, Unsupported
from rstck.protocols.network.wire import OnNextPacked, Request
from rstck.core.checks import rule
from rstck.rules.network.server import connect


@rule("net.packed.1")
def range_streams_may_declare_their_element_size(wire):
    """net.packed.1 (MAY): subscribed for rstck/range/4, whose elements are all 8 bytes, declares element_size."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/range/4", 4)
    stream = peer.until_ended(stream_id, rule="1.5", expected="rstck/range/4 to complete")
    if not stream.element_size:
        raise Unsupported("subscribed for rstck/range/4 declared element_size 0")


@rule("net.packed.2")
def a_sized_stream_may_come_packed(wire):
    """net.packed.2 (MAY): with demand for a whole stream of rstck/range at once (64, 1,024, then 16,384 elements),
    the server may pack elements into onNextPacked (only ever in a stream that declared an element size: checked on
    every frame). The first onNextPacked decides; a server too slow to finish the streams by the deadline without
    packing is `unsupported` by that deadline, never failed for being slow."""
    peer = connect(wire)
    for n in (64, 1024, 16384):
        stream_id = peer.subscribe(f"rstck/range/{n}", n)
        stream = peer.stream(stream_id)
        try:
            seen = peer.until(peer.frame_of(OnNextPacked) | peer.ended(stream_id), rule="1.5",
                              expected=f"rstck/range/{n} to complete")
        except RuleViolation as violation:
            if not violation.timed_out:
                raise
            raise Unsupported(f"no onNextPacked before the deadline, {stream.received} elements of rstck/range/{n} "
                              "in (decided by a deadline)") from None
        if type(seen[-1]) is OnNextPacked:
            return
    raise Unsupported("every element of three streams came as onNext")


@rule("net.packed.3")
def packed_elements_stay_within_demand(wire):
    """net.packed.3: rstck/range/100 requested 3, then 5, then 1, each once the elements before it arrived:
    no onNextPacked takes the count past what was requested (then a quiet window: nothing beyond 9)."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/range/100", 3)
    total = 3
    for more in (5, 1):
        peer.until(peer.has_received(stream_id, total) | peer.ended(stream_id), rule="3.8",
                   expected=f"the {total} elements requested")
        peer.send(Request(stream_id, more))
        total += more
    peer.until(peer.has_received(stream_id, total) | peer.ended(stream_id), rule="3.8",
               expected=f"the {total} elements requested")
    peer.quiet()

"""Transport assumptions: rstck runs the protocol over TCP; what a server adds is the order of what it sends."""

from __future__ import annotations

from rstck.protocols.network.reserved import range_element
from rstck.core.verdict import RuleViolation
from rstck.core.checks import rule, untested
from rstck.rules.network.server import connect

untested("net.transport.1", "a requirement on the transport, not on a peer: rstck runs the protocol over TCP, "
                            "which is bidirectional, full-duplex, an octet stream and ordered")
untested("net.transport.2", "over TCP there are no transport messages to map protocol messages to")


@rule("net.transport.3")
def elements_arrive_in_the_order_published(wire):
    """net.transport.3: rstck/range/200 with demand for all of it arrives as elements 0 to 199, in order."""
    peer = connect(wire)
    stream_id = peer.subscribe("rstck/range/200", 200)
    stream = peer.until_ended(stream_id, rule="1.5", expected="rstck/range/200 to complete once all 200 elements "
                              "were requested")
    for i, element in enumerate(stream.elements):
        if element != range_element(i):
            raise RuleViolation("net.transport.3", f"element {i} to be {range_element(i).hex()}",
                                f"element {i} was {element.hex()}",
                                claim=wire.session.evidence.claim("elements_of", connection=peer, stream=stream_id,
                                                                  publisher="rstck/range/200"))

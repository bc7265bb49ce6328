"""Packed messaging, as a subscribing client takes it: it accepts onNextPacked as well as onNext."""

from __future__ import annotations

from rstck.protocols.network.reserved import RANGE_ELEMENT_SIZE, range_element
from rstck.core.checks import rule
from rstck.rules.network.client import DELIVERY, expect_completed, run_client, serve_stream, told

PACKED = "rstck/range/10"
PACKED_ELEMENTS = [range_element(i) for i in range(10)]


@rule("net.packed.2")
def client_prints_each_element_of_on_next_packed(client):
    """net.packed.2: rstck/range/10 with element_size 8, every element sent in onNextPacked frames of as many
    elements as the client's demand allows: the client prints the 10 elements one per line and exits 0. Packing
    is the publisher's MAY, but each packed element is an onNext signal: a client that drops or mangles one fails
    net.core.2."""
    case = run_client(client, PACKED)
    with told(case):
        serve_stream(case.peer, PACKED_ELEMENTS, rule=DELIVERY, element_size=RANGE_ELEMENT_SIZE, form="packed")
    expect_completed(case, PACKED_ELEMENTS, rule=DELIVERY, what="the 10 packed elements, one hex line each")

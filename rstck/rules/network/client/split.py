"""Split messaging, as a subscribing client must support it: parts joined into one element, in the order they
arrived (net.split.2, net.split.4)."""

from __future__ import annotations

from rstck.protocols.network.reserved import blob_element
from rstck.core.checks import rule
from rstck.rules.network.client import expect_completed, run_client, serve_stream, told

# Blob bytes repeat every 251 bytes, so elements of 753 bytes cut in parts of 251 are three equal parts: joined
# in any order they make the same element, and only the joining itself shows.
WHOLE = "rstck/blobs/3/753"
WHOLE_ELEMENTS = [blob_element(i, 753) for i in range(3)]
# Parts of 4 bytes of a 12-byte blob differ from each other: a join in another order shows.
ORDERED = "rstck/blobs/2/12"
ORDERED_ELEMENTS = [blob_element(i, 12) for i in range(2)]


@rule("net.split.2")
def client_prints_a_split_element_whole_and_once(client):
    """net.split.2: rstck/blobs/3/753, each element sent as two onNextPart and an onNextLastPart of 251 bytes (equal
    parts, so their order cannot show): the client prints each element whole, once, and exits 0."""
    case = run_client(client, WHOLE)
    with told(case):
        serve_stream(case.peer, WHOLE_ELEMENTS, rule="net.split.2", form="split", part_size=251)
    expect_completed(case, WHOLE_ELEMENTS, rule="net.split.2", what="each of the 3 split elements whole, on one line")


@rule("net.split.4")
def client_joins_parts_in_the_order_received(client):
    """net.split.4: rstck/blobs/2/12, each element sent in three parts of 4 bytes, each part different: the client
    joins them in the order they arrived."""
    case = run_client(client, ORDERED)
    with told(case):
        serve_stream(case.peer, ORDERED_ELEMENTS, rule="net.split.4", form="split", part_size=4)
    expect_completed(case, ORDERED_ELEMENTS, rule="net.split.4", what="each element joined from its parts in the "
                     "order they were sent")

"""Split messaging: an element larger than a part goes out as onNextPart frames and one onNextLastPart."""

from __future__ import annotations

from rstck.protocols.network.reserved import blob_element
from rstck.core.verdict import RuleViolation, Unsupported
from rstck.protocols.network.wire import OnNextPart
from rstck.core.checks import rule
from rstck.rules.network.server import connect

BLOB_SIZE = 300_000  # several parts of any part size under 100 KB (the reference server's is 64 KiB)


@rule("net.split.1")
def large_elements_may_be_split(wire):
    """net.split.1 (MAY): elements of 300,000 bytes (rstck/blobs/2/300000) may come in parts."""
    peer = connect(wire)
    stream_id = peer.subscribe(f"rstck/blobs/2/{BLOB_SIZE}", 2)
    seen = peer.until(peer.ended(stream_id), rule="1.5",
                      expected="rstck/blobs/2/300000 to complete")
    if not any(type(f) is OnNextPart for f in seen):
        raise Unsupported(f"no element came in parts (the stream ended with {peer.stream(stream_id).terminal})")


@rule("net.split.3")
def split_elements_come_whole_one_after_another(wire):
    """net.split.3: the parts of each element of rstck/blobs/3/300000 come together, end with one onNextLastPart,
    and join to exactly the element (checked against the reserved name's content)."""
    peer = connect(wire)
    stream_id = peer.subscribe(f"rstck/blobs/3/{BLOB_SIZE}", 3)
    stream = peer.until_ended(stream_id, rule="1.5", expected="rstck/blobs/3/300000 to complete")
    for i, element in enumerate(stream.elements):
        if element != blob_element(i, BLOB_SIZE):
            differs = next((k for k, (a, b) in enumerate(zip(element, blob_element(i, BLOB_SIZE))) if a != b),
                           min(len(element), BLOB_SIZE))
            raise RuleViolation("net.split.3", f"element {i} joined from its parts to the {BLOB_SIZE} bytes of "
                                f"rstck/blobs (docs/wire-format.md)", f"{len(element)} bytes, differing from "
                                f"byte {differs} on",
                                claim=wire.session.evidence.claim("elements_of", connection=peer, stream=stream_id,
                                                                  publisher=f"rstck/blobs/3/{BLOB_SIZE}"))

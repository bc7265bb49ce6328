"""Message framing: what the server sends is well-formed frames, and a malformed frame from the client ends the
session with goodbye (rstck's decisions net.rstck.1-4, docs/wire-format.md)."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.protocols.network.wire import PROTOCOL_VERSION, ClientHello, Subscribe
from rstck.core.checks import rule, untested
from rstck.rules.network.server import answers_fault_with_goodbye, connect, expect_goodbye, raw, send_in_pieces

FORMAT = "rstck fixes the format to MessagePack (docs/wire-format.md): a choice made for the protocol, not " \
         "something a peer could do otherwise and still be understood"
untested("net.framing.1", FORMAT)
untested("net.framing.2", FORMAT)
untested("net.framing.3", FORMAT)


@rule("net.framing.4")
def every_frame_from_the_server_is_well_formed(wire):
    """net.framing.4: plain, packed, split, failed and refused streams are all sent as frames of the layout in
    docs/wire-format.md (every frame the kit reads is checked as it arrives)."""
    peer = connect(wire)
    for name, demand in (("rstck/range/5", 5), ("rstck/blobs/2/100000", 2), ("rstck/error", 1),
                         ("rstck/empty", 1), ("rstck/no/such/publisher", 1)):
        stream_id = peer.subscribe(name, demand)
        peer.until_ended(stream_id, rule="net.framing.4", expected=f"{name} to end with onComplete or onError")


# Sixteen extension ids make the hello's list a MessagePack array16 (header dc 00 10 at bytes 3-5): ids no
# extension is known to use, offered only for that header. rstck ignores ids it does not know, as a server that
# knows none of them does (docs/wire-format.md).
OFFERED_EXTENSIONS = tuple(2**62 + i for i in range(16))


@rule("net.framing.4")
def frames_cut_inside_their_headers_are_read(wire):
    """net.framing.4 (rstck's reading: a frame is delimited by its own bytes, however the stream is cut): a
    clientHello offering 16 extension ids, cut after each byte of its list's array16 header, and subscribes with
    names of 40 (str8) and 300 bytes (str16), cut inside the name's header, then rstck/range/3 sent whole: every
    stream ends and rstck/range/3 brings its 3 elements and onComplete."""
    peer = connect(wire, hello=False)
    send_in_pieces(peer, ClientHello(PROTOCOL_VERSION, OFFERED_EXTENSIONS), (4, 5))
    names = ["rstck-test/no such publisher " + "x" * (length - 29) for length in (40, 300)]
    cut = {40: (3,), 300: (3, 4)}  # after d9; after da and after its first length byte
    ids = []
    for name in names:
        ids.append(peer.new_id())
        send_in_pieces(peer, Subscribe(name, ids[-1], 1), cut[len(name)])
    ids.append(peer.subscribe("rstck/range/3", 3))
    for stream_id in ids:
        stream = peer.until_ended(stream_id, rule="net.framing.4", expected=f"stream {stream_id} to end: its "
                                  "subscribe, like the frames before it, was read though it came in pieces")
    if len(stream.elements) != 3 or not stream.terminal.startswith("onComplete"):
        raise RuleViolation("net.framing.4", "rstck/range/3 to bring 3 elements, then onComplete",
                            f"{len(stream.elements)} elements, then {stream.terminal}")


@rule("net.rstck.1")
def bytes_that_are_not_messagepack_get_goodbye(wire):
    """net.rstck.1: 0xc1, a byte MessagePack never uses, after the hello."""
    answers_fault_with_goodbye(wire, "net.rstck.1", b"\xc1", "a byte that is not MessagePack")


@rule("net.rstck.1")
def a_frame_that_is_not_an_array_gets_goodbye(wire):
    """net.rstck.1: a MessagePack integer where a frame (an array) belongs."""
    answers_fault_with_goodbye(wire, "net.rstck.1", b"\x2a", "the integer 42 instead of an array")


@rule("net.rstck.1")
def an_empty_array_gets_goodbye(wire):
    """net.rstck.1: an empty array, which has no message type."""
    answers_fault_with_goodbye(wire, "net.rstck.1", raw(), "an empty array")


@rule("net.rstck.2")
def an_undefined_message_type_gets_goodbye(wire):
    """net.rstck.2: message type 13, which version 0 does not define."""
    answers_fault_with_goodbye(wire, "net.rstck.2", raw(13, 1), "message type 13")


@rule("net.rstck.2")
def an_extension_type_not_negotiated_gets_goodbye(wire):
    """net.rstck.2: message type 64, an extension's, when the hellos named no extension."""
    answers_fault_with_goodbye(wire, "net.rstck.2", raw(64, 1), "message type 64, not negotiated")


@rule("net.rstck.3")
def a_field_of_the_wrong_type_gets_goodbye(wire):
    """net.rstck.3: request whose demand is a str."""
    answers_fault_with_goodbye(wire, "net.rstck.3", raw(3, 1, "5"), "request with the demand as a str")


@rule("net.rstck.3")
def a_missing_field_gets_goodbye(wire):
    """net.rstck.3: request without its demand."""
    answers_fault_with_goodbye(wire, "net.rstck.3", raw(3, 1), "request without its demand")


@rule("net.rstck.3")
def a_field_too_many_gets_goodbye(wire):
    """net.rstck.3: cancel with a second field."""
    answers_fault_with_goodbye(wire, "net.rstck.3", raw(4, 1, 2), "cancel with a field too many")


@rule("net.rstck.3")
def an_id_out_of_range_gets_goodbye(wire):
    """net.rstck.3: subscribe with a negative subscriber id."""
    answers_fault_with_goodbye(wire, "net.rstck.3", raw(2, "rstck/range/1", -1, 1), "subscribe with id -1")


# 300 bytes (a bin16) that begin like MessagePack headers (those of a 1 MiB bin32): a reader that finds the bin's
# end anywhere but at its declared length reads them as headers and waits for bytes that never come.
HEADER_LIKE_BYTES = b"\x00\xc6\x00\x10\x00\x00" + bytes(294)


@rule("net.rstck.3")
def a_bin_where_the_name_belongs_gets_goodbye(wire):
    """net.rstck.3: subscribe whose publisher name is a bin of 300 bytes (a bin16), not a str; its bytes look
    like headers, so the answer shows the server found the frame's end from the bin's declared length."""
    peer = connect(wire)
    stream_id = peer.new_id()
    peer.ledger.used_ids.add(stream_id)  # the kit did use the id: what the server makes of it is judged here
    peer.send_bytes(raw(2, HEADER_LIKE_BYTES, stream_id, 1), fault="subscribe whose name is a 300-byte bin")
    expect_goodbye(peer, "net.rstck.3", "a subscribe whose name is a bin")


@rule("net.rstck.3")
def an_on_error_with_a_negative_id_gets_goodbye(wire):
    """net.rstck.3: onError with subscriber id -1. Out of range whether or not the server subscribes to the kit
    (net.core.1): no stream can have that id."""
    answers_fault_with_goodbye(wire, "net.rstck.3", raw(8, -1, "failed"), "onError with subscriber id -1")


@rule("net.rstck.3")
def a_str_that_is_not_utf8_gets_goodbye(wire):
    """net.rstck.3: subscribe whose publisher name (a str) is not valid UTF-8: "rstck/range/1" and the byte 0xff.
    A server that reads it anyway (replacing the byte, or keeping the raw bytes) answers a subscribe instead."""
    peer = connect(wire)
    stream_id = peer.new_id()
    peer.ledger.used_ids.add(stream_id)  # the kit did use the id: what the server makes of it is judged here
    name = b"rstck/range/1\xff"
    peer.send_bytes(bytes([0x94, 0x02, 0xa0 | len(name)]) + name + bytes([stream_id, 1]),  # [2, name, id, 1]
                    fault="subscribe whose name is not valid UTF-8")
    expect_goodbye(peer, "net.rstck.3", "a subscribe whose name is not valid UTF-8")


@rule("net.rstck.4")
def a_declared_4_gib_frame_gets_goodbye_before_its_bytes(wire):
    """net.rstck.4: a subscribe whose name declares 4 GiB - 1 bytes, and none of them sent: the answer must come
    from the declared length alone (the kit waits for it without sending more)."""
    header = b"\x94\x02\xdb\xff\xff\xff\xff"  # [2, str32 of 4294967295 bytes ...
    answers_fault_with_goodbye(wire, "net.rstck.4", header, "a frame declaring a 4 GiB name, its bytes unsent")

"""Message framing: what the server sends is well-formed frames, and a malformed frame from the client ends the
session with goodbye (rstck's decisions net.rstck.1-4, docs/wire-format.md)."""

from __future__ import annotations

from ... import rule, untested
from . import answers_fault_with_goodbye, connect, expect_goodbye, raw

FORMAT = "rstck fixes the format to MessagePack (docs/wire-format.md): a choice made for the protocol, not " \
         "something a peer could do otherwise and still be understood"
untested("net.framing.1", FORMAT)
untested("net.framing.2", FORMAT)
untested("net.framing.3", FORMAT)


@rule("net.framing.4")
def every_frame_from_the_server_is_well_formed(target):
    """net.framing.4: plain, packed, split, failed and refused streams are all sent as frames of the layout in
    docs/wire-format.md (every frame the kit reads is checked as it arrives)."""
    peer = connect(target)
    for name, demand in (("rstck/range/5", 5), ("rstck/blobs/2/100000", 2), ("rstck/error", 1),
                         ("rstck/empty", 1), ("rstck/no/such/publisher", 1)):
        stream_id = peer.subscribe(name, demand)
        peer.until_ended(stream_id, rule="net.framing.4", expected=f"{name} to end with onComplete or onError")


@rule("net.rstck.1")
def bytes_that_are_not_messagepack_get_goodbye(target):
    """net.rstck.1: 0xc1, a byte MessagePack never uses, after the hello."""
    answers_fault_with_goodbye(target, "net.rstck.1", b"\xc1", "a byte that is not MessagePack")


@rule("net.rstck.1")
def a_frame_that_is_not_an_array_gets_goodbye(target):
    """net.rstck.1: a MessagePack integer where a frame (an array) belongs."""
    answers_fault_with_goodbye(target, "net.rstck.1", b"\x2a", "the integer 42 instead of an array")


@rule("net.rstck.1")
def an_empty_array_gets_goodbye(target):
    """net.rstck.1: an empty array, which has no message type."""
    answers_fault_with_goodbye(target, "net.rstck.1", raw(), "an empty array")


@rule("net.rstck.2")
def an_undefined_message_type_gets_goodbye(target):
    """net.rstck.2: message type 13, which version 0 does not define."""
    answers_fault_with_goodbye(target, "net.rstck.2", raw(13, 1), "message type 13")


@rule("net.rstck.2")
def an_extension_type_not_negotiated_gets_goodbye(target):
    """net.rstck.2: message type 64, an extension's, when the hellos named no extension."""
    answers_fault_with_goodbye(target, "net.rstck.2", raw(64, 1), "message type 64, not negotiated")


@rule("net.rstck.3")
def a_field_of_the_wrong_type_gets_goodbye(target):
    """net.rstck.3: request whose demand is a str."""
    answers_fault_with_goodbye(target, "net.rstck.3", raw(3, 1, "5"), "request with the demand as a str")


@rule("net.rstck.3")
def a_missing_field_gets_goodbye(target):
    """net.rstck.3: request without its demand."""
    answers_fault_with_goodbye(target, "net.rstck.3", raw(3, 1), "request without its demand")


@rule("net.rstck.3")
def a_field_too_many_gets_goodbye(target):
    """net.rstck.3: cancel with a second field."""
    answers_fault_with_goodbye(target, "net.rstck.3", raw(4, 1, 2), "cancel with a field too many")


@rule("net.rstck.3")
def an_id_out_of_range_gets_goodbye(target):
    """net.rstck.3: subscribe with a negative subscriber id."""
    answers_fault_with_goodbye(target, "net.rstck.3", raw(2, "rstck/range/1", -1, 1), "subscribe with id -1")


@rule("net.rstck.3")
def a_str_that_is_not_utf8_gets_goodbye(target):
    """net.rstck.3: subscribe whose publisher name (a str) is not valid UTF-8: "rstck/range/1" and the byte 0xff.
    A server that reads it anyway (replacing the byte, or keeping the raw bytes) answers a subscribe instead."""
    peer = connect(target)
    stream_id = peer.new_id()
    peer.ledger.used_ids.add(stream_id)  # the kit did use the id: what the server makes of it is judged here
    name = b"rstck/range/1\xff"
    peer.send_bytes(bytes([0x94, 0x02, 0xa0 | len(name)]) + name + bytes([stream_id, 1]),  # [2, name, id, 1]
                    fault="subscribe whose name is not valid UTF-8")
    expect_goodbye(peer, "net.rstck.3", "a subscribe whose name is not valid UTF-8")


@rule("net.rstck.4")
def a_declared_4_gib_frame_gets_goodbye_before_its_bytes(target):
    """net.rstck.4: a subscribe whose name declares 4 GiB - 1 bytes, and none of them sent: the answer must come
    from the declared length alone (the kit waits for it without sending more)."""
    header = b"\x94\x02\xdb\xff\xff\xff\xff"  # [2, str32 of 4294967295 bytes ...
    answers_fault_with_goodbye(target, "net.rstck.4", header, "a frame declaring a 4 GiB name, its bytes unsent")

"""Message framing, as a client takes it: a frame it cannot read ends the session with goodbye (rstck's
decisions net.rstck.1-4, docs/wire-format.md, "Faults"). Every frame the client sends is checked as it arrives
(net.framing.4), in every check."""

from __future__ import annotations

from rstck.protocols.network.wire import OnComplete, OnError, OnNext, OnNextPacked, Subscribed
from rstck.core.checks import rule
from rstck.rules.network.client import RANGE_ELEMENTS, answers_fault_with_goodbye


@rule("net.rstck.1")
def client_answers_bytes_that_are_not_messagepack_with_goodbye(client):
    """net.rstck.1: 0xc1, a byte MessagePack never uses, after the first element."""
    answers_fault_with_goodbye(client, "net.rstck.1", "a byte that is not MessagePack",
                               lambda peer, _: peer.inject(b"\xc1", fault="a byte that is not MessagePack"))


@rule("net.rstck.1")
def client_answers_a_frame_that_is_not_an_array_with_goodbye(client):
    """net.rstck.1: a MessagePack integer where a frame (an array) belongs."""
    answers_fault_with_goodbye(client, "net.rstck.1", "the integer 42 instead of an array",
                               lambda peer, _: peer.inject(b"\x2a", fault="the integer 42 instead of an array"))


@rule("net.rstck.1")
def client_answers_an_empty_array_with_goodbye(client):
    """net.rstck.1: an empty array, which has no message type."""
    answers_fault_with_goodbye(client, "net.rstck.1", "an empty array",
                               lambda peer, _: peer.inject([], fault="an empty array"))


@rule("net.rstck.2")
def client_answers_an_undefined_message_type_with_goodbye(client):
    """net.rstck.2: message type 13, which version 0 does not define, for the client's stream."""
    answers_fault_with_goodbye(client, "net.rstck.2", "message type 13",
                               lambda peer, stream: peer.inject([13, stream], fault="message type 13"))


@rule("net.rstck.2")
def client_answers_an_extension_type_not_negotiated_with_goodbye(client):
    """net.rstck.2: message type 64, an extension's, when the hellos named no extension."""
    answers_fault_with_goodbye(client, "net.rstck.2", "message type 64, not negotiated",
                               lambda peer, stream: peer.inject([64, stream],
                                                                    fault="message type 64, not negotiated"))


@rule("net.rstck.3")
def client_answers_an_element_that_is_not_bin_with_goodbye(client):
    """net.rstck.3: onNext whose element is a str, not a bin."""
    answers_fault_with_goodbye(client, "net.rstck.3", "onNext with a str element",
                               lambda peer, stream: peer.inject([6, stream, RANGE_ELEMENTS[1].hex()],
                                                                    fault="onNext with a str element"))


@rule("net.rstck.3")
def client_answers_an_element_of_another_size_than_declared_with_goodbye(client):
    """net.rstck.3: in a stream whose subscribed declared 8-byte elements, an onNext of 5 bytes."""
    fault = "an element of 5 bytes in a stream of 8-byte elements"
    answers_fault_with_goodbye(client, "net.rstck.3", fault,
                               lambda peer, stream: peer.send(OnNext(stream.id, b"\x01\x02\x03\x04\x05"),
                                                              fault=fault), element_size=8)


@rule("net.rstck.3")
def client_answers_on_next_packed_without_element_size_with_goodbye(client):
    """net.rstck.3: onNextPacked of one 8-byte element in a stream whose subscribed declared no element size."""
    fault = "onNextPacked in a stream without element_size"
    answers_fault_with_goodbye(client, "net.rstck.3", fault,
                               lambda peer, stream: peer.send(OnNextPacked(stream.id, 1, RANGE_ELEMENTS[1]),
                                                              fault=fault))


# The kit's id for its subscribe to the client: the ids of the two directions are apart (docs/wire-format.md, Ids).
KIT_STREAM = 1
ANSWERS = (Subscribed, OnNext, OnComplete, OnError)  # what a publisher sends a subscriber


@rule("net.rstck.3")
def client_answers_a_str_that_is_not_utf8_with_goodbye(client):
    """net.rstck.3: a subscribe from the kit whose publisher name is a str holding c3 28, which is not UTF-8.
    The kit may subscribe to a client (net.core.1), so a client that took the frame answers it, with subscribed
    (then onError, as one that publishes nothing): that answer decides at once."""
    fault = "a subscribe whose publisher name is a str that is not UTF-8 (c3 28)"

    def inject(peer, _):
        peer.expect_answers_for(KIT_STREAM)  # the client's answer is for this id: no stranger's signal
        peer.inject(b"\x94\x02\xa2\xc3\x28", KIT_STREAM, b"\x00", fault=fault)  # [2, "\xc3\x28", KIT_STREAM, 0]

    answers_fault_with_goodbye(client, "net.rstck.3", fault, inject,
                               taken=lambda peer: peer.frame_of(*ANSWERS, stream_id=KIT_STREAM))


@rule("net.rstck.4")
def client_answers_a_declared_4_gib_frame_with_goodbye_before_its_bytes(client):
    """net.rstck.4: an onNext whose element declares 4 GiB - 1 bytes, and none of them sent: the answer must come
    from the declared length alone (the kit waits for it without sending more)."""
    fault = "an onNext declaring a 4 GiB element, its bytes unsent"
    answers_fault_with_goodbye(client, "net.rstck.4", fault,
                               lambda peer, stream: peer.inject(*_declaring_4_gib(stream), fault=fault))


def _declaring_4_gib(stream) -> tuple:
    """The head of onNext(stream, a bin32 of 4294967295 bytes), [6, id, c6 ff ff ff ff ..., as pieces for
    `ServingPeer.inject`."""
    return b"\x93\x06", stream, b"\xc6\xff\xff\xff\xff"

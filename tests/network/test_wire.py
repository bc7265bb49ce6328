"""The frame codec of the network protocol: round trips, every fault with its message, and the bounds that hold
against a hostile peer (declared sizes, endless frames, a million frames), with real msgpack throughout."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rstck.protocols.network import wire
from rstck.protocols.network.wire import (
    INT64_MAX,
    Cancel,
    ClientHello,
    ExtensionFrame,
    FrameDecoder,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    Request,
    ServerHello,
    Subscribe,
    Subscribed,
    WireError,
    describe,
    encode,
    encode_raw,
)

INT64_MIN = -2**63
EVERY_MESSAGE = [
    ClientHello(0, (1, 2)),
    ServerHello(0, ()),
    Subscribe("rstck/range/10", 1, 5),
    Request(1, 3),
    Cancel(1),
    Subscribed(1, 8),
    OnNext(1, b"\x00" * 7 + b"\x07"),
    OnComplete(1),
    OnError(1, "boom"),
    OnNextPacked(1, 2, bytes(range(16))),
    OnNextPart(1, 9, b"first half"),
    OnNextLastPart(1, 9, b"second half"),
    Goodbye("done"),
]


def decode_all(data: bytes, **options) -> list:
    decoder = FrameDecoder(**options)
    frames = decoder.feed(data)
    decoder.close()
    return frames


def fault(data: bytes, **options) -> WireError:
    with pytest.raises(WireError) as caught:
        decode_all(data, **options)
    return caught.value


# Round trips

@pytest.mark.parametrize("frame", EVERY_MESSAGE, ids=lambda frame: frame.name)
def test_every_message_round_trips(frame):
    assert decode_all(encode(frame)) == [frame]
    assert encode(frame)[1] == frame.TYPE  # a fixarray header, then the type


def test_every_message_type_has_its_drafts_name():
    assert [(f.TYPE, f.name) for f in EVERY_MESSAGE] == [
        (0, "clientHello"), (1, "serverHello"), (2, "subscribe"), (3, "request"), (4, "cancel"), (5, "subscribed"),
        (6, "onNext"), (7, "onComplete"), (8, "onError"), (9, "onNextPacked"), (10, "onNextPart"),
        (11, "onNextLastPart"), (12, "goodbye")]


def test_a_frame_is_one_array_with_str_and_bin_fields():
    assert encode(Subscribe("p", 1, 2)) == b"\x94\x02\xa1p\x01\x02"
    assert encode(OnNext(3, b"ab")) == b"\x93\x06\x03\xc4\x02ab"
    assert encode(ClientHello()) == b"\x93\x00\x00\x90"


@pytest.mark.parametrize(("values", "frame"), [
    ([0], ClientHello(0, ())),
    ([0, 0], ClientHello(0, ())),
    ([1], ServerHello(0, ())),
    ([1, 0], ServerHello(0, ())),
    ([2, "p", 4], Subscribe("p", 4, 0)),
    ([5, 4], Subscribed(4, 0)),
    ([12], Goodbye("")),
])
def test_trailing_fields_with_a_default_may_be_left_out(values, frame):
    assert decode_all(encode_raw(values)) == [frame]


def test_an_extension_frame_decodes_once_negotiated():
    data = encode_raw([64, 1, "x", b"\x01", [2, 3]])
    assert fault(data).kind == "unknown-type"
    assert decode_all(data, extensions={64}) == [ExtensionFrame(64, (1, "x", b"\x01", (2, 3)))]
    decoder = FrameDecoder()
    decoder.allow_extensions([64, 70])
    assert decoder.extensions == {64, 70}
    assert decoder.feed(data + encode(ExtensionFrame(70))) == [ExtensionFrame(64, (1, "x", b"\x01", (2, 3))),
                                                                ExtensionFrame(70, ())]


def test_only_extension_types_can_be_allowed():
    with pytest.raises(ValueError, match="from 64"):
        FrameDecoder(extensions={12})


@pytest.mark.parametrize("demand", [0, -1, INT64_MIN, INT64_MAX])
def test_a_request_for_any_int64_decodes_because_rule_3_9_is_the_receivers_to_answer(demand):
    assert decode_all(encode_raw([3, 1, demand])) == [Request(1, demand)]
    assert decode_all(encode_raw([2, "p", 1, demand])) == [Subscribe("p", 1, demand)]


def test_ids_reach_int64_max():
    assert decode_all(encode_raw([4, INT64_MAX])) == [Cancel(INT64_MAX)]
    assert decode_all(encode_raw([10, INT64_MAX, INT64_MAX, b""])) == [OnNextPart(INT64_MAX, INT64_MAX, b"")]


def test_frames_given_other_containers_keep_tuples_and_bytes():
    assert ClientHello(0, [1, 2]).extensions == (1, 2)
    assert OnNext(1, bytearray(b"ab")).element == b"ab"
    assert ExtensionFrame(64, [1]).fields == (1,)


# Packed elements

def test_packed_data_slices_into_elements():
    assert OnNextPacked(1, 3, b"aabbcc").elements(2) == [b"aa", b"bb", b"cc"]
    assert OnNextPacked(1, 0, b"").elements(8) == []


def test_packed_data_of_the_wrong_length_is_a_bad_field():
    with pytest.raises(WireError) as caught:
        OnNextPacked(1, 3, b"aabbc").elements(2)
    assert caught.value.kind == "bad-field"
    assert caught.value.detail == "onNextPacked.data holds 5 bytes, not count × element_size = 3 × 2 = 6"


def test_packed_elements_need_a_fixed_element_size():
    with pytest.raises(WireError) as caught:
        OnNextPacked(1, 0, b"").elements(0)
    assert caught.value.kind == "bad-field"
    assert "subscribed.element_size" in caught.value.detail


# Every fault, with its message

@pytest.mark.parametrize(("values", "detail"), [
    (5, "a frame is a MessagePack array, got an integer 5"),
    ({"type": 3}, "a frame is a MessagePack array, got a map of 1 entry"),
    ("hello", "a frame is a MessagePack array, got a str 'hello'"),
    (None, "a frame is a MessagePack array, got nil"),
])
def test_a_value_that_is_not_an_array_is_not_a_frame(values, detail):
    error = fault(encode_raw(values))
    assert (error.kind, error.detail) == ("not-an-array", detail)
    assert str(error) == f"not-an-array: {detail}"


def test_an_empty_array_is_not_a_frame():
    error = fault(encode_raw([]))
    assert (error.kind, error.detail) == (
        "empty-array", "a frame is an array that starts with its message type, got an empty array")


@pytest.mark.parametrize(("values", "detail"), [
    ([13], "message type 13 is not defined by protocol version 0 (0-12 are, and 64 up for extensions)"),
    ([63, 1], "message type 63 is not defined by protocol version 0 (0-12 are, and 64 up for extensions)"),
    ([-1], "message type -1 is not defined by protocol version 0 (0-12 are, and 64 up for extensions)"),
    ([64], "message type 64 belongs to an extension that was not negotiated (negotiated: none)"),
    (["request", 1, 1], "the message type must be an integer, got 'request'"),
    ([True, 1], "the message type must be an integer, got True"),
    ([3.0, 1, 1], "the message type must be an integer, got 3.0"),
])
def test_an_unknown_message_type_is_named(values, detail):
    error = fault(encode_raw(values))
    assert (error.kind, error.detail) == ("unknown-type", detail)


def test_an_extension_not_negotiated_lists_those_that_were():
    error = fault(encode_raw([65]), extensions={64, 66})
    assert error.detail == "message type 65 belongs to an extension that was not negotiated (negotiated: 64, 66)"


@pytest.mark.parametrize(("values", "detail"), [
    ([2, "p", "x"], "subscribe.subscriber must be a non-negative integer within int64, got 'x'"),
    ([2, b"p", 1], "subscribe.publisher must be a str, got b'p'"),
    ([4, -1], "cancel.subscriber must be a non-negative integer within int64, got -1"),
    ([4, 2**63], "cancel.subscriber must be a non-negative integer within int64, got 2**63"),
    ([4, True], "cancel.subscriber must be a non-negative integer within int64, got True"),
    ([3, 1, 2**63], "request.demand must be an integer within int64, got 2**63"),
    ([3, 1, 1.5], "request.demand must be an integer within int64, got 1.5"),
    ([6, 1, "text"], "onNext.element must be a bin (bytes), got 'text'"),
    ([8, 1, b"boom"], "onError.message must be a str, got b'boom'"),
    ([0, 0, [1, -2]], "clientHello.extensions must be an array of non-negative integers within int64, "
                      "got an array of 2 values"),
    ([0, 0, 7], "clientHello.extensions must be an array of non-negative integers within int64, got 7"),
    ([5, 1, -8], "subscribed.element_size must be a non-negative integer within int64, got -8"),
    ([9, 1, -1, b""], "onNextPacked.count must be a non-negative integer within int64, got -1"),
    ([11, 1, {"a": 1}, b""], "onNextLastPart.element_id must be a non-negative integer within int64, "
                             "got a map of 1 entry"),
    ([3, 1], "request.demand is missing: request has 2 fields (subscriber, demand), got 1"),
    ([2], "subscribe.publisher is missing: subscribe has 2 to 3 fields (publisher, subscriber, initial_demand), "
          "got 0"),
    ([4, 1, 2], "cancel has too many fields: cancel has 1 field (subscriber), got 2"),
    ([12, "bye", "now"], "goodbye has too many fields: goodbye has 0 to 1 fields (reason), got 2"),
])
def test_a_bad_field_names_the_message_and_the_field(values, detail):
    error = fault(encode_raw(values))
    assert (error.kind, error.detail) == ("bad-field", detail)


def test_a_bad_field_is_also_refused_when_a_frame_is_made():
    with pytest.raises(WireError, match=r"request\.subscriber must be a non-negative integer within int64, got -1"):
        Request(-1, 1)
    with pytest.raises(WireError, match="extension.type must be an integer from 64"):
        ExtensionFrame(12)


def test_a_deeply_nested_field_is_shown_in_a_few_words():
    error = fault(b"\x92\x04" + b"\x91" * 1000 + b"\x01")  # [4, [[[...[1]...]]]]: rendering it would recurse
    assert error.detail == "cancel.subscriber must be a non-negative integer within int64, got an array of 1 value"


@pytest.mark.parametrize(("data", "detail"), [
    (b"\x93\x06\x01\xc1", "not valid MessagePack: the reserved byte 0xc1, which begins no value"),
    (b"\x93\x08\x01\xa2\xff\xfe", "a str that is not valid UTF-8 (invalid start byte at byte 0 of it)"),
    (b"\x92\x40" + b"\x91" * 1100 + b"\x01", "values nested more than 1024 deep, deeper than the decoder follows"),
])
def test_bytes_that_are_not_messagepack_are_malformed(data, detail):
    error = fault(data, extensions={64})
    assert (error.kind, error.detail) == ("malformed", detail)


def test_a_stream_that_ends_inside_a_frame_is_truncated():
    decoder = FrameDecoder()
    data = encode(Request(1, 1)) + encode(OnNext(1, b"12345678"))
    assert decoder.feed(data[:-3]) == [Request(1, 1)]
    assert decoder.buffered == len(encode(OnNext(1, b"12345678"))) - 3
    with pytest.raises(WireError) as caught:
        decoder.close()
    assert (caught.value.kind, caught.value.detail) == ("truncated",
                                                         "the stream ended inside a frame, after 10 bytes of it")


def test_a_stream_that_ends_between_frames_closes_quietly():
    decoder = FrameDecoder()
    assert decoder.feed(encode(Cancel(1))) == [Cancel(1)]
    assert decoder.buffered == 0
    decoder.close()


def test_after_a_fault_the_decoder_stays_broken():
    decoder = FrameDecoder()
    with pytest.raises(WireError) as first:
        decoder.feed(encode_raw([13]))
    for again in (lambda: decoder.feed(encode(Cancel(1))), decoder.close):
        with pytest.raises(WireError) as caught:
            again()
        assert (caught.value.kind, caught.value.detail) == (first.value.kind, first.value.detail)


def test_frames_decoded_before_a_fault_come_with_it():
    decoder = FrameDecoder()
    with pytest.raises(WireError) as caught:
        decoder.feed(encode(Request(1, 1)) + encode(Cancel(1)) + b"\xc1" + encode(Cancel(2)))
    assert caught.value.kind == "malformed"
    assert caught.value.decoded_before == [Request(1, 1), Cancel(1)]


# Sizes: declared, buffered, exact

MIB = 2**20


@pytest.mark.parametrize(("header", "declared"), [
    (b"\x93\x06\x01\xc6\xff\xff\xff\xff", "at least 4294967303 bytes"),  # onNext whose element is a 4 GiB bin
    (b"\x93\x08\x01\xdb\xff\xff\xff\xff", "at least 4294967303 bytes"),  # onError whose message is a 4 GiB str
    (b"\x92\x40\xc9\xff\xff\xff\xff\x01", "an ext value longer than max_frame_bytes"),  # an extension's 4 GiB ext
    (b"\x92\x40\xc9\xff\xff\xff\xf0\x01", "at least 4294967288 bytes"),
    (b"\xdd\xff\xff\xff\xff", "an array of 4294967295 values"),  # a frame of 2**32 - 1 fields
    (b"\x92\x40\xdf\xff\xff\xff\xff", "a map of 4294967295 entries"),
])
def test_a_declared_4_gib_is_rejected_at_once_without_memory(header, declared):
    tracemalloc.start()
    try:
        decoder = FrameDecoder(extensions={64})
        with pytest.raises(WireError) as caught:
            decoder.feed(header)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.kind == "too-large"
    assert declared in caught.value.detail
    assert peak < MIB


def test_a_declared_size_is_rejected_when_its_length_field_is_complete():
    decoder = FrameDecoder()
    header = b"\x93\x06\x01\xc6\xff\xff\xff\xff"
    for byte in header[:-1]:
        assert decoder.feed(bytes([byte])) == []
    with pytest.raises(WireError) as caught:
        decoder.feed(header[-1:])
    assert caught.value.detail == ("the frame declares at least 4294967303 bytes; max_frame_bytes is "
                                   f"{wire.DEFAULT_MAX_FRAME_BYTES}")


def test_a_frame_of_exactly_max_frame_bytes_decodes_and_one_byte_more_does_not():
    frame = OnNext(1, bytes(100))
    size = len(encode(frame))
    assert decode_all(encode(frame) * 2, max_frame_bytes=size) == [frame, frame]
    error = fault(encode(OnNext(1, bytes(101))), max_frame_bytes=size)
    assert (error.kind, error.detail) == ("too-large", f"the frame declares at least {size + 1} bytes; "
                                                       f"max_frame_bytes is {size}")


def test_a_frame_that_outgrows_the_bound_byte_by_byte_is_rejected_at_the_bound():
    decoder = FrameDecoder(max_frame_bytes=6)
    with pytest.raises(WireError) as caught:
        for byte in b"\x93\x06\x01\xc6\x00\x00\x00\x00":  # the bin's length field is cut at the bound
            decoder.feed(bytes([byte]))
    assert (caught.value.kind, caught.value.detail) == ("too-large", "the frame has not ended after 6 bytes; "
                                                                      "max_frame_bytes is 6")


def endless_frame(chunk_size: int):
    """An extension frame of 1000 fields, each a 64 KiB bin: 65 MB that never declares more than 64 KiB at a
    time, in chunks."""
    element = b"\xc5\xff\xff" + bytes(65535)
    stream = bytearray(b"\xdc\x03\xe8\x40")
    while True:
        while len(stream) < chunk_size:
            stream += element
        yield bytes(stream[:chunk_size])
        del stream[:chunk_size]


def test_an_endless_frame_is_rejected_before_more_than_max_frame_bytes_are_buffered():
    decoder = FrameDecoder(extensions={64})
    fed = 0
    with pytest.raises(WireError) as caught:
        for chunk in endless_frame(MIB):
            assert decoder.buffered <= decoder.max_frame_bytes
            decoder.feed(chunk)
            fed += len(chunk)
    assert caught.value.kind == "too-large"
    assert fed <= decoder.max_frame_bytes + MIB
    assert decoder.buffered <= decoder.max_frame_bytes


def test_a_chunk_larger_than_the_bound_is_taken_a_frame_at_a_time():
    frames = [OnNext(i, bytes(40)) for i in range(200)]  # 8.6 KB in all, 43 bytes a frame
    assert decode_all(b"".join(map(encode, frames)), max_frame_bytes=50) == frames


# Split frames and random bytes

ids = st.integers(0, INT64_MAX)
int64s = st.integers(INT64_MIN, INT64_MAX)
texts = st.text(max_size=12)
blobs = st.binary(max_size=40)
extension_values = st.one_of(st.none(), st.booleans(), int64s, st.floats(allow_nan=False), texts, blobs)
frames = st.one_of(
    st.builds(ClientHello, ids, st.lists(ids, max_size=3).map(tuple)),
    st.builds(ServerHello, ids, st.lists(ids, max_size=3).map(tuple)),
    st.builds(Subscribe, texts, ids, int64s),
    st.builds(Request, ids, int64s),
    st.builds(Cancel, ids),
    st.builds(Subscribed, ids, ids),
    st.builds(OnNext, ids, blobs),
    st.builds(OnComplete, ids),
    st.builds(OnError, ids, texts),
    st.builds(OnNextPacked, ids, ids, blobs),
    st.builds(OnNextPart, ids, ids, blobs),
    st.builds(OnNextLastPart, ids, ids, blobs),
    st.builds(Goodbye, texts),
    st.builds(ExtensionFrame, st.sampled_from([64, 99]), st.lists(extension_values, max_size=3).map(tuple)),
)
quick = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in zip(points, points[1:])]


@quick
@given(st.lists(frames, max_size=12), st.lists(st.integers(0, 10**6), max_size=30))
def test_frames_cut_at_any_points_decode_to_the_same_frames(sent, cuts):
    data = b"".join(map(encode, sent))
    decoder = FrameDecoder(extensions={64, 99})
    received = [frame for piece in cut(data, cuts) for frame in decoder.feed(piece)]
    decoder.close()
    assert received == sent
    assert decoder.buffered == 0


@quick
@given(st.binary(max_size=300), st.lists(st.integers(0, 400), max_size=10), st.sampled_from([8, 64, 2**20]))
def test_random_bytes_raise_nothing_but_wire_error(data, cuts, max_frame_bytes):
    decoder = FrameDecoder(max_frame_bytes=max_frame_bytes, extensions={64})
    try:
        for piece in cut(data, cuts):
            decoder.feed(piece)
            assert decoder.buffered <= max_frame_bytes
        decoder.close()
    except WireError as error:
        assert error.kind in wire.KINDS
        assert "\n" not in str(error) and len(str(error)) < 400


messagepack_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(INT64_MIN, 2**64 - 1), st.floats(), st.text(max_size=8),
              st.binary(max_size=8)),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4) | int64s, inner, max_size=3),
    max_leaves=12)


@quick
@given(st.lists(messagepack_values, min_size=1, max_size=5), st.booleans())
def test_any_messagepack_values_decode_to_frames_or_a_wire_error(values, as_frames):
    value = [values[0] if type(values[0]) is int else 3, *values[1:]] if as_frames else values[0]
    try:
        for frame in decode_all(encode_raw(value), extensions={64}):
            assert describe(frame)
            assert decode_all(encode(frame), extensions={64}) == [frame]
    except WireError as error:
        assert error.kind in wire.KINDS


@quick
@given(st.lists(messagepack_values, max_size=4), st.lists(st.integers(0, 10**4), max_size=8))
def test_the_bound_holds_exactly_for_every_kind_of_value_cut_anywhere(fields, cuts):
    data = encode_raw([64, *fields])  # any MessagePack values: the early size check reads every kind of header
    decoder = FrameDecoder(max_frame_bytes=len(data), extensions={64})
    received = [frame for piece in cut(data, cuts) for frame in decoder.feed(piece)]
    assert list(map(encode, received)) == [data]  # compared as bytes: a NaN is not equal to itself
    decoder = FrameDecoder(max_frame_bytes=len(data) - 1, extensions={64})
    with pytest.raises(WireError) as caught:
        for piece in cut(data, cuts):
            decoder.feed(piece)
    assert caught.value.kind == "too-large"


# Volume

def test_frames_fed_one_byte_at_a_time_decode():
    sent = [Request(i, i) for i in range(3000)] + [OnNext(i, bytes(8)) for i in range(2000)]
    data = b"".join(map(encode, sent))
    decoder = FrameDecoder()
    received = [frame for at in range(len(data)) for frame in decoder.feed(data[at:at + 1])]
    assert received == sent


def test_frames_fed_in_one_chunk_decode():
    data = encode(Request(1, 1)) * 200_000
    decoder = FrameDecoder()
    assert len(decoder.feed(data)) == 200_000
    assert decoder.buffered == 0


def test_a_million_tiny_frames_decode_in_64_kib_chunks_with_bounded_buffering():
    data = b"".join(encode(Request(i % 1000, 1)) for i in range(1000)) * 1000  # 1,000,000 frames
    decoder = FrameDecoder()
    decoded = most_buffered = 0
    for at in range(0, len(data), 64 * 1024):
        decoded += len(decoder.feed(data[at:at + 64 * 1024]))
        most_buffered = max(most_buffered, decoder.buffered)
    assert decoded == 1_000_000
    assert most_buffered < 16  # only the frame cut by the chunk's end is held


def test_decoding_many_frames_holds_no_memory():
    data = b"".join(encode(Request(i, 1)) for i in range(1000)) * 20  # 20,000 frames in 64 KiB chunks
    decoder = FrameDecoder()
    decoder.feed(data[:64 * 1024])  # the unpacker's buffer, once
    tracemalloc.start()
    try:
        for at in range(64 * 1024, len(data), 64 * 1024):
            decoder.feed(data[at:at + 64 * 1024])
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert current < 64 * 1024
    assert peak < 4 * MIB  # one chunk's frames at a time


# Describing

@pytest.mark.parametrize(("frame", "line"), [
    (OnNext(3, (7).to_bytes(8, "big")), "onNext(sub=3, 8 bytes: 0000000000000007)"),
    (Subscribe("rstck/range/10", 1), 'subscribe("rstck/range/10", sub=1, demand=0)'),
    (ClientHello(0, (1, 2)), "clientHello(version=0, extensions=[1, 2])"),
    (Request(1, -1), "request(sub=1, demand=-1)"),
    (Cancel(2), "cancel(sub=2)"),
    (Subscribed(1, 8), "subscribed(sub=1, element_size=8)"),
    (OnComplete(1), "onComplete(sub=1)"),
    (OnError(1, 'say "no"'), r'onError(sub=1, "say \"no\"")'),
    (OnNextPacked(1, 2, b"\x01\x02"), "onNextPacked(sub=1, count=2, 2 bytes: 0102)"),
    (OnNextPart(1, 4, b""), "onNextPart(sub=1, element=4, 0 bytes)"),
    (OnNextLastPart(1, 4, b"\xff"), "onNextLastPart(sub=1, element=4, 1 byte: ff)"),
    (Goodbye(), 'goodbye("")'),
    (ExtensionFrame(64, (1, "a", b"\x00", (1, 2))), 'extension 64(1, "a", 1 byte: 00, an array of 2 values)'),
])
def test_describe_is_one_line_per_frame(frame, line):
    assert describe(frame) == line


def test_describe_keeps_hostile_content_to_one_bounded_line():
    line = describe(OnError(1, "\x1b[2J\nforged line\u202e" + "x" * 10_000))
    assert line.startswith(r'onError(sub=1, "\x1b[2J\nforged line\u202e')
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert len(line) < 120
    assert describe(OnNext(1, bytes(10**6))) == "onNext(sub=1, 1000000 bytes: " + "00" * 16 + "…)"
    assert len(describe(ServerHello(0, tuple(range(1000))))) < 120

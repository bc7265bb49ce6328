"""The frames of the Reactive Streams network protocol, as rstck fixes the draft's open choices.

The draft leaves the serialisation open; rstck uses MessagePack. A frame is one MessagePack array whose first
element is the message type, then the message's fields in the draft's order:

    clientHello 0 [0, version, [extension ids]]      serverHello 1 [1, version, [extension ids]]
    subscribe 2 [2, publisher, subscriber, initial_demand=0]
    request 3 [3, subscriber, demand]                 cancel 4 [4, subscriber]
    subscribed 5 [5, subscriber, element_size=0]      onNext 6 [6, subscriber, element]
    onComplete 7 [7, subscriber]                      onError 8 [8, subscriber, message]
    onNextPacked 9 [9, subscriber, count, count * element_size bytes]
    onNextPart 10, onNextLastPart 11 [t, subscriber, element_id, data]
    goodbye 12 [12, reason=""]

Trailing fields that have a default may be left out; types from 64 up belong to extensions. Strings are
MessagePack str, elements and data bin. Ids, versions, counts and sizes are non-negative integers within int64;
a demand is any int64: a request for n <= 0 is a well-formed frame that the receiver answers with onError
(rule 3.9), so it decodes.

A decoder holds at most `max_frame_bytes` of a frame, and rejects a frame as soon as what arrived or what it
declares (a 4 GiB bin, an array of 2**32 values) exceeds that: it never waits for, nor allocates, a declared size.
"""

from __future__ import annotations

import dataclasses
import operator
import re
import threading
from typing import Any, ClassVar

import msgpack

from rstck.core.signals import show

PROTOCOL_VERSION = 0
DEFAULT_MAX_FRAME_BYTES = 16 * 2**20
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
FIRST_EXTENSION_TYPE = 64
# The most values an array or a map may declare. msgpack allocates a declared array before its values arrive,
# and nests up to 1024 deep: this keeps what a hostile frame's headers can make a decoder allocate to a few MiB.
# The protocol's own arrays hold four fields at most, or a hello's extension ids.
MAX_ARRAY_VALUES = 1024

KINDS = ("not-an-array", "empty-array", "unknown-type", "bad-field", "too-large", "malformed", "truncated")


class WireError(Exception):
    """Bytes that are not a frame of the protocol. `kind` is one of KINDS; `detail` says what was wrong.

    `decoded_before` holds the frames that the same `FrameDecoder.feed` call decoded before the fault, in order:
    a receiver handles them first, as they arrived first."""

    def __init__(self, kind: str, detail: str):
        if kind not in KINDS:
            raise ValueError(f"unknown WireError kind {kind!r}")
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail
        self.decoded_before: list[Frame] = []

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


# What each field of the protocol holds; a field's name means the same in every message.
class _Kind:
    def __init__(self, wanted: str, test: str):
        self.wanted = wanted  # said in a bad-field error: "{message}.{field} must be {wanted}, got ..."
        self.test = test  # a Python expression of {0}; exact types, so that a bool is not taken for an int
        self.accepts = eval(f"lambda value: {test.format('value')}", _TEST_NAMES)


def _is_id(value: object) -> bool:
    return type(value) is int and 0 <= value <= INT64_MAX


_TEST_NAMES = {"INT64_MIN": INT64_MIN, "INT64_MAX": INT64_MAX, "_is_id": _is_id}
_ID = _Kind("a non-negative integer within int64", "type({0}) is int and 0 <= {0} <= INT64_MAX")
_INT64 = _Kind("an integer within int64", "type({0}) is int and INT64_MIN <= {0} <= INT64_MAX")
_TEXT = _Kind("a str", "type({0}) is str")
_BYTES = _Kind("a bin (bytes)", "type({0}) is bytes")
_IDS = _Kind("an array of non-negative integers within int64", "type({0}) is tuple and all(map(_is_id, {0}))")
_FIELD_KINDS = {
    "version": _ID, "extensions": _IDS, "publisher": _TEXT, "subscriber": _ID, "initial_demand": _INT64,
    "demand": _INT64, "element_size": _ID, "element": _BYTES, "message": _TEXT, "count": _ID, "data": _BYTES,
    "element_id": _ID, "reason": _TEXT,
}


def _converted(kind: _Kind, value: object) -> object:
    """`value` in the type a frame keeps, when it is merely another container (a list of ids, a bytearray)."""
    if kind is _IDS and isinstance(value, list):
        return tuple(value)
    if kind is _BYTES and isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


class _Message:
    """What every message of the core protocol shares: its type, its name, and checked fields."""

    __slots__ = ()
    TYPE: ClassVar[int]
    name: ClassVar[str]
    _fields: ClassVar[tuple[str, ...]]
    _kinds: ClassVar[tuple[_Kind, ...]]
    _required: ClassVar[int]  # fields before the first one with a default
    _values: ClassVar[Any]  # the fields' values, in order

    def __post_init__(self) -> None:  # each message compiles a faster one: see _compiled
        self._refit()

    def _refit(self) -> None:
        """Convert a field given as another container, or raise bad-field for the first field that is wrong."""
        for field, kind in zip(self._fields, self._kinds):
            value = getattr(self, field)
            if not kind.accepts(value):
                value = _converted(kind, value)
                if not kind.accepts(value):
                    raise WireError("bad-field", f"{self.name}.{field} must be {kind.wanted}, got {_shown(value)}")
                object.__setattr__(self, field, value)


def _compiled(cls: type[_Message]) -> None:
    """Compile the tests of a message's fields into its __post_init__, and into a decoder for each length its
    array may have, as dataclasses compile __init__: a FrameDecoder makes a frame per message, and a frozen
    __init__ with a loop over the fields would take most of its time. A decoder sets the slots of a new frame
    once the fields pass, and otherwise calls the class, whose `_refit` says what is wrong."""
    fields = [f.name for f in dataclasses.fields(cls)]
    arguments = ", ".join(fields)
    tests = " and ".join(f"({_FIELD_KINDS[field].test.format(field)})" for field in fields)
    source = ["def _post_init(self):",
              f"    {arguments}, = self._values(self)",
              f"    if not ({tests}):",
              "        self._refit()"]
    for given in range(cls._required, len(fields) + 1):
        source += [f"def _decoded_{given}(array):",
                   f"    {', '.join(['_', *fields[:given]])}, = array",
                   *(f"    {field} = _default_{field}" for field in fields[given:]),
                   f"    if {tests}:",
                   "        frame = _new(cls)",
                   *(f"        _set_{field}(frame, {field})" for field in fields),
                   "        return frame",
                   f"    return cls({arguments})"]
    names = {**_TEST_NAMES, "cls": cls, "_new": object.__new__}
    for f in dataclasses.fields(cls):
        names[f"_set_{f.name}"] = getattr(cls, f.name).__set__  # the slot itself: frozen only to __setattr__
        names[f"_default_{f.name}"] = f.default
    exec("\n".join(source), names)
    cls.__post_init__ = names["_post_init"]
    for given in range(cls._required, len(fields) + 1):
        _DECODER_OF_SHAPE[cls.TYPE, 1 + given] = names[f"_decoded_{given}"]


_MESSAGES: dict[int, type[_Message]] = {}
_DECODER_OF_SHAPE: dict[tuple[int, int], Any] = {}  # (type, length of the array) -> its compiled decoder


def _message(type_: int, name: str):
    """Make a class a frozen message dataclass of type `type_`, named as the draft names it."""

    def make(cls):
        cls = dataclasses.dataclass(frozen=True, slots=True)(cls)
        names = tuple(f.name for f in dataclasses.fields(cls))
        cls.TYPE, cls.name, cls._fields = type_, name, names
        cls._kinds = tuple(_FIELD_KINDS[n] for n in names)
        cls._required = sum(f.default is dataclasses.MISSING for f in dataclasses.fields(cls))
        get = operator.attrgetter(*names)
        cls._values = staticmethod(get if len(names) > 1 else lambda frame: (get(frame),))
        _compiled(cls)
        _MESSAGES[type_] = cls
        return cls

    return make


@_message(0, "clientHello")
class ClientHello(_Message):
    version: int = PROTOCOL_VERSION
    extensions: tuple[int, ...] = ()


@_message(1, "serverHello")
class ServerHello(_Message):
    version: int = PROTOCOL_VERSION
    extensions: tuple[int, ...] = ()


@_message(2, "subscribe")
class Subscribe(_Message):
    publisher: str
    subscriber: int
    initial_demand: int = 0


@_message(3, "request")
class Request(_Message):
    subscriber: int
    demand: int  # any int64: n <= 0 is for the receiver to answer with onError (rule 3.9)


@_message(4, "cancel")
class Cancel(_Message):
    subscriber: int


@_message(5, "subscribed")
class Subscribed(_Message):
    subscriber: int
    element_size: int = 0  # 0: elements of any size; else every element has this size, and may come packed


@_message(6, "onNext")
class OnNext(_Message):
    subscriber: int
    element: bytes


@_message(7, "onComplete")
class OnComplete(_Message):
    subscriber: int


@_message(8, "onError")
class OnError(_Message):
    subscriber: int
    message: str


@_message(9, "onNextPacked")
class OnNextPacked(_Message):
    subscriber: int
    count: int
    data: bytes  # count elements of the size the subscribed frame declared, back to back

    def elements(self, element_size: int) -> list[bytes]:
        """The packed elements, given the stream's element size; a bad-field error if the data does not hold
        exactly `count` of them."""
        if not _is_id(element_size) or element_size == 0:
            raise WireError("bad-field", "onNextPacked needs the stream's element size, a positive integer "
                                         f"(subscribed.element_size), got {_shown(element_size)}")
        if len(self.data) != self.count * element_size:
            raise WireError("bad-field", f"onNextPacked.data holds {len(self.data)} bytes, not count × element_size"
                                         f" = {self.count} × {element_size} = {self.count * element_size}")
        return [self.data[at:at + element_size] for at in range(0, len(self.data), element_size)]


@_message(10, "onNextPart")
class OnNextPart(_Message):
    subscriber: int
    element_id: int  # the publisher's id of the split element: parts with the same id are joined
    data: bytes


@_message(11, "onNextLastPart")
class OnNextLastPart(_Message):
    subscriber: int
    element_id: int
    data: bytes


@_message(12, "goodbye")
class Goodbye(_Message):
    reason: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class ExtensionFrame:
    """A frame of a negotiated extension: its type (64 and up) and its fields, as decoded."""

    TYPE: ClassVar[int] = FIRST_EXTENSION_TYPE  # the first of the types; `type` is this frame's
    name: ClassVar[str] = "extension"
    type: int
    fields: tuple = ()

    def __post_init__(self) -> None:
        if not _is_id(self.type) or self.type < FIRST_EXTENSION_TYPE:
            raise WireError("bad-field", f"extension.type must be an integer from {FIRST_EXTENSION_TYPE} within "
                                         f"int64, got {_shown(self.type)}")
        if type(self.fields) is not tuple:
            if not isinstance(self.fields, list):
                raise WireError("bad-field", f"extension.fields must be a tuple, got {_shown(self.fields)}")
            object.__setattr__(self, "fields", tuple(self.fields))


Frame = (ClientHello | ServerHello | Subscribe | Request | Cancel | Subscribed | OnNext | OnComplete | OnError
         | OnNextPacked | OnNextPart | OnNextLastPart | Goodbye | ExtensionFrame)


# Encoding

_local = threading.local()  # a Packer keeps a buffer between calls: one per thread


def _packer() -> msgpack.Packer:
    try:
        return _local.packer
    except AttributeError:
        _local.packer = msgpack.Packer(use_bin_type=True)
        return _local.packer


def encode(frame: Frame) -> bytes:
    """The frame as one MessagePack array, every field written (defaults too)."""
    if type(frame) is ExtensionFrame:
        try:
            return _packer().pack([frame.type, *frame.fields])
        except (TypeError, ValueError, OverflowError) as exc:
            raise WireError("bad-field", f"extension {frame.type}'s fields cannot be packed: {exc}") from None
    return _packer().pack((frame.TYPE, *frame._values(frame)))


def encode_raw(values: Any) -> bytes:
    """`values` packed as they are, checked against nothing: for tests and for sending faulty frames."""
    return msgpack.packb(values, use_bin_type=True)


# Decoding

class _Pairs(tuple):
    """A decoded map with a key that cannot be a dict key (a map): its (key, value) pairs."""


def _map_of(pairs: list) -> dict | _Pairs:
    try:
        return dict(pairs)
    except TypeError:
        return _Pairs(pairs)


def _what(value: object) -> str:
    """What a decoded value is, in MessagePack's words, for a not-an-array error."""
    if value is None:
        return "nil"
    name = {bool: "a boolean", int: "an integer", float: "a float", str: "a str", bytes: "a bin"}.get(type(value))
    return f"{name} {show(value)}" if name else _shown(value)


def _unusual_frame(value: object, extensions: frozenset[int] | set[int]) -> Frame:
    """The frame of a decoded value that is not a core message of a length it may have (those FrameDecoder._take
    decodes itself): an extension's frame, or the WireError that says why it is no frame."""
    if type(value) is not tuple:
        raise WireError("not-an-array", f"a frame is a MessagePack array, got {_what(value)}")
    if not value:
        raise WireError("empty-array", "a frame is an array that starts with its message type, got an empty array")
    type_, fields = value[0], value[1:]
    if type(type_) is not int:
        raise WireError("unknown-type", f"the message type must be an integer, got {_shown(type_)}")
    if type_ in extensions:
        return ExtensionFrame(type_, fields)
    message = _MESSAGES.get(type_)
    if message is None:
        if type_ >= FIRST_EXTENSION_TYPE:
            negotiated = ", ".join(map(str, sorted(extensions))) or "none"
            raise WireError("unknown-type", f"message type {show(type_)} belongs to an extension that was not "
                                            f"negotiated (negotiated: {negotiated})")
        raise WireError("unknown-type", f"message type {show(type_)} is not defined by protocol version "
                                        f"{PROTOCOL_VERSION} (0-12 are, and {FIRST_EXTENSION_TYPE} up for extensions)")
    if len(fields) < message._required:
        raise WireError("bad-field", f"{message.name}.{message._fields[len(fields)]} is missing: {_arity(message)}, "
                                     f"got {len(fields)}")
    raise WireError("bad-field", f"{message.name} has too many fields: {_arity(message)}, got {len(fields)}")


def _arity(message: type[_Message]) -> str:
    most = len(message._fields)
    count = _counted(most, "field", "fields") if message._required == most else f"{message._required} to {most} fields"
    return f"{message.name} has {count} ({', '.join(message._fields)})"


# The few bytes at the head of a value that give its size: the scan of a frame that is still arriving reads them
# to reject a declared size beyond the bound at once. msgpack's Unpacker checks max_bin_len and max_str_len only
# when the whole value has arrived, so it would wait for (and buffer) a declared 4 GiB.
_FIXED_SIZE = bytearray(256)  # first byte -> size of a value that has no length field (0: it has one, or nests)
for _first in [*range(0x00, 0x80), *range(0xe0, 0x100), 0xc0, 0xc1, 0xc2, 0xc3]:  # Unpacker rejects 0xc1 itself
    _FIXED_SIZE[_first] = 1
for _first in range(0xa0, 0xc0):  # fixstr
    _FIXED_SIZE[_first] = 1 + (_first & 0x1f)
for _first, _size in {0xca: 5, 0xcb: 9, 0xcc: 2, 0xcd: 3, 0xce: 5, 0xcf: 9, 0xd0: 2, 0xd1: 3, 0xd2: 5, 0xd3: 9,
                      0xd4: 3, 0xd5: 4, 0xd6: 6, 0xd7: 10, 0xd8: 18}.items():  # floats, ints, fixext
    _FIXED_SIZE[_first] = _size
del _first, _size
# first byte -> (bytes of its length field, bytes after that field, values per unit of length: 0 for bytes of payload)
_LENGTH_FIELD = {
    0xc4: (1, 0, 0), 0xc5: (2, 0, 0), 0xc6: (4, 0, 0),  # bin 8/16/32
    0xc7: (1, 1, 0), 0xc8: (2, 1, 0), 0xc9: (4, 1, 0),  # ext 8/16/32 (a type byte follows the length)
    0xd9: (1, 0, 0), 0xda: (2, 0, 0), 0xdb: (4, 0, 0),  # str 8/16/32
    0xdc: (2, 0, 1), 0xdd: (4, 0, 1),  # array 16/32
    0xde: (2, 0, 2), 0xdf: (4, 0, 2),  # map 16/32: a key and a value per entry
}


def _scan(data: bytes, due: int) -> tuple[int, int]:
    """Walk the value headers of `data`, the unscanned rest of a frame, while `due` values of it remain.

    Returns the offset of the next header (beyond `data` while a payload is still arriving; at a header cut
    short, its start) and the values still due. Every due value takes at least a byte, so the frame is at least
    offset + due bytes from the start of `data`."""
    at, end = 0, len(data)
    while due and at < end:
        first = data[at]
        if size := _FIXED_SIZE[first]:
            at += size
            due -= 1
        elif first < 0xa0:  # fixmap or fixarray
            at += 1
            due += (first & 0x0f) * (2 if first < 0x90 else 1) - 1
        else:
            width, after, per = _LENGTH_FIELD[first]
            if at + 1 + width + after > end:
                break
            length = int.from_bytes(data[at + 1:at + 1 + width], "big")
            at += 1 + width + after + (0 if per else length)
            due += length * per - 1
    return at, due


_EXCEEDS = re.compile(r"(\d+) exceeds max_(\w+)_len")
_DECLARED = {"array": "an array of {} values", "map": "a map of {} entries"}


def _unreadable(exc: Exception, max_frame_bytes: int) -> WireError:
    """The WireError for what msgpack raised while decoding."""
    if isinstance(exc, msgpack.exceptions.FormatError):
        return WireError("malformed", "not valid MessagePack: the reserved byte 0xc1, which begins no value")
    if isinstance(exc, msgpack.exceptions.StackError):
        return WireError("malformed", "values nested more than 1024 deep, deeper than the decoder follows")
    if isinstance(exc, UnicodeDecodeError):
        return WireError("malformed", f"a str that is not valid UTF-8 ({exc.reason} at byte {exc.start} of it)")
    if isinstance(exc, msgpack.exceptions.BufferFull):
        return WireError("too-large", f"the frame is longer than max_frame_bytes ({max_frame_bytes})")
    if exceeds := _EXCEEDS.search(str(exc)):
        if exceeds[2] in _DECLARED:  # checked by msgpack when the header arrives
            return WireError("too-large", f"the frame declares {_DECLARED[exceeds[2]].format(exceeds[1])}; a "
                                          f"frame's arrays and maps hold at most {MAX_ARRAY_VALUES} values")
        # A bin or str never arrives whole past the bound; an ext32 of 2**32 - 1 bytes overflows msgpack's count,
        # which then reports a wrong size at once.
        what = "an ext value" if exceeds[2] == "ext" else f"a {exceeds[2]}"
        return WireError("too-large", f"the frame declares {what} longer than max_frame_bytes ({max_frame_bytes})")
    return WireError("malformed", f"not valid MessagePack: {type(exc).__name__}: {exc}")


class FrameDecoder:
    """Frames from a byte stream that arrives in pieces of any size.

    `feed` returns the frames completed so far and keeps the start of the next. A frame that is, or declares
    to be, longer than `max_frame_bytes` is rejected as soon as that is known; no more of it is buffered. After a
    WireError the decoder is broken: every later call raises the same error again.
    """

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, extensions=frozenset()):
        if type(max_frame_bytes) is not int or max_frame_bytes < 1:
            raise ValueError(f"max_frame_bytes must be a positive integer, got {max_frame_bytes!r}")
        self.max_frame_bytes = max_frame_bytes
        self._extensions: set[int] = set()
        self.allow_extensions(extensions)
        values = min(max_frame_bytes, MAX_ARRAY_VALUES)
        self._unpacker = msgpack.Unpacker(
            raw=False, use_list=False, strict_map_key=False, object_pairs_hook=_map_of,
            max_buffer_size=max_frame_bytes, read_size=min(max_frame_bytes, 64 * 1024),
            max_bin_len=max_frame_bytes, max_str_len=max_frame_bytes, max_ext_len=max_frame_bytes,
            max_array_len=values, max_map_len=values)
        self._fed = 0  # bytes fed so far
        self._frame_start = 0  # stream offset where the frame not yet complete begins
        # The scan of that frame's headers: where the next header begins (an offset in the stream), how many
        # values are still due, and the first bytes of a header that was cut short.
        self._next_header = 0
        self._values_due = 1
        self._header_start = b""
        self._error: WireError | None = None

    @property
    def extensions(self) -> frozenset[int]:
        """The extensions' message types this decoder accepts."""
        return frozenset(self._extensions)

    @property
    def buffered(self) -> int:
        """Bytes held of the frame not yet complete."""
        return self._fed - self._frame_start

    def allow_extensions(self, ids) -> None:
        """Accept the message types `ids` (64 and up) from now on: the extensions both sides agreed on."""
        ids = set(ids)
        for type_ in ids:
            if not _is_id(type_) or type_ < FIRST_EXTENSION_TYPE:
                raise ValueError(f"an extension's message type is an integer from {FIRST_EXTENSION_TYPE} within "
                                 f"int64, got {type_!r}")
        self._extensions |= ids

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """The frames that `data` completes, in order."""
        self._raise_if_broken()
        frames: list[Frame] = []
        try:
            room = self.max_frame_bytes - self.buffered
            if len(data) <= room:
                self._take(data, frames)
            else:  # never more in the unpacker than one frame may hold
                view = memoryview(data)
                while view:
                    room = self.max_frame_bytes - self.buffered
                    self._take(view[:room], frames)
                    view = view[room:]
        except WireError as error:
            error.decoded_before = frames
            self._error = error
            raise
        return frames

    def feed_until_fault(self, data: bytes | bytearray | memoryview) -> tuple[list[Frame], WireError | None]:
        """What a receiver acts on: the frames `data` completes up to a fault (they arrived first), and the
        fault, if there is one."""
        try:
            return self.feed(data), None
        except WireError as error:
            return error.decoded_before, error

    def close(self) -> None:
        """The stream has ended: a WireError "truncated" if it ended inside a frame."""
        self._raise_if_broken()
        if self.buffered:
            self._error = WireError("truncated", f"the stream ended inside a frame, after {self.buffered} bytes of it")
            raise self._error

    def _raise_if_broken(self) -> None:
        if self._error is not None:
            raise WireError(self._error.kind, self._error.detail)

    def _take(self, piece, frames: list[Frame]) -> None:
        unpacker, extensions = self._unpacker, self._extensions
        piece_start = self._fed
        unpacker.feed(piece)
        self._fed += len(piece)
        frame_start, tell, append, decoder_of = self._frame_start, unpacker.tell, frames.append, _DECODER_OF_SHAPE.get
        try:
            for value in unpacker:  # this runs once per frame: a core message goes straight to its decoder
                if type(value) is tuple and value and type(value[0]) is int and (
                        decoder := decoder_of((value[0], len(value)))) is not None:
                    append(decoder(value))
                else:
                    append(_unusual_frame(value, extensions))
                frame_start = tell()
        except WireError:
            raise
        except (ValueError, TypeError) as exc:  # FormatError, StackError, UnicodeDecodeError, a limit passed
            raise _unreadable(exc, self.max_frame_bytes) from exc
        self._frame_start = frame_start
        if self._frame_start < self._fed:
            self._check_unfinished(piece, piece_start)

    def _check_unfinished(self, piece, piece_start: int) -> None:
        """Reject the frame still arriving if it already is, or declares to be, longer than the bound."""
        if self._frame_start >= piece_start:  # it began in this piece: scan it from its first byte
            self._next_header, self._values_due, self._header_start = self._frame_start, 1, b""
        if self._next_header < self._fed:  # header bytes arrived (else a payload is still arriving)
            scanned_from = self._next_header
            data = self._header_start + bytes(piece[max(scanned_from - piece_start, 0):])
            at, self._values_due = _scan(data, self._values_due)
            self._next_header = scanned_from + at
            self._header_start = data[at:] if at < len(data) else b""
        declared = self._next_header - self._frame_start + self._values_due
        if declared > self.max_frame_bytes:
            raise WireError("too-large", f"the frame declares at least {declared} bytes; max_frame_bytes is "
                                         f"{self.max_frame_bytes}")
        if self.buffered >= self.max_frame_bytes:  # and it has not ended
            raise WireError("too-large", f"the frame has not ended after {self.buffered} bytes; max_frame_bytes "
                                         f"is {self.max_frame_bytes}")


# Describing

SHOWN_CHARS = 60  # of a string
SHOWN_BYTES = 16  # of a bin, in hex
SHOWN_VALUES = 8  # of an extension list or an extension frame's fields


def _quoted(text: str) -> str:
    """`text` in double quotes, cut to SHOWN_CHARS, with anything not printable (controls, bidi overrides,
    line breaks) escaped: a hostile string cannot break or forge a line of a log."""
    cut = text[:SHOWN_CHARS]
    body = "".join(c if c.isprintable() and c not in '"\\' else "\\" + c if c in '"\\' else repr(c)[1:-1]
                   for c in cut)
    return f'"{body}"' + ("…" if len(text) > SHOWN_CHARS else "")


def _bytes_shown(data: bytes) -> str:
    size = _counted(len(data), "byte", "bytes")
    if not data:
        return size
    return f"{size}: {data[:SHOWN_BYTES].hex()}" + ("…" if len(data) > SHOWN_BYTES else "")


def _values_shown(values: tuple) -> str:
    shown = ", ".join(_quoted(v) if type(v) is str else _bytes_shown(v) if type(v) is bytes else _shown(v)
                      for v in values[:SHOWN_VALUES])
    return shown + (f", … {len(values) - SHOWN_VALUES} more" if len(values) > SHOWN_VALUES else "")


def _shown(value: object) -> str:
    """A decoded value in a few dozen characters, whatever it holds: an array or a map (which may nest a
    thousand deep) by its length only, the rest as `show` renders it."""
    if isinstance(value, msgpack.Timestamp):
        return "a timestamp"
    if isinstance(value, msgpack.ExtType):
        return f"an ext value of type {value.code} and {_counted(len(value.data), 'byte', 'bytes')}"
    if isinstance(value, (tuple, list)):
        return f"an array of {_counted(len(value), 'value', 'values')}"
    if isinstance(value, (dict, _Pairs)):
        return f"a map of {_counted(len(value), 'entry', 'entries')}"
    return show(value)


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


_SHOWN_AS = {  # field -> how describe() shows it
    "version": lambda v: f"version={v}", "extensions": lambda v: f"extensions=[{_values_shown(v)}]",
    "publisher": _quoted, "subscriber": lambda v: f"sub={v}", "initial_demand": lambda v: f"demand={v}",
    "demand": lambda v: f"demand={v}", "element_size": lambda v: f"element_size={v}", "element": _bytes_shown,
    "message": _quoted, "count": lambda v: f"count={v}", "data": _bytes_shown,
    "element_id": lambda v: f"element={v}", "reason": _quoted,
}


def describe(frame: Frame) -> str:
    """One bounded line for a wire log: `onNext(sub=3, 8 bytes: 0000000000000007)`."""
    if type(frame) is ExtensionFrame:
        return f"extension {frame.type}({_values_shown(frame.fields)})"
    return f"{frame.name}({', '.join(_SHOWN_AS[field](getattr(frame, field)) for field in frame._fields)})"

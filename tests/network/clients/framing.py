"""The frames of the network protocol, read and written by hand from docs/wire-format.md alone: the codec of the
zoo's conformant clients, which take nothing from the kit (no rstck import, no msgpack package).

`FrameReader.feed(data)` returns the frames that `data` completes, each a tuple (type, *fields) with the fields
checked against the wire format, up to the first thing a peer must answer with goodbye, and that `Fault`.
A frame over the size limit is a fault as soon as a header declares it, before its bytes arrive.
"""

from __future__ import annotations

import struct

MAX_FRAME_BYTES = 16 * 2**20
ID_MAX = 2**63 - 1
INT64_MIN = -2**63

CLIENT_HELLO, SERVER_HELLO, SUBSCRIBE, REQUEST, CANCEL, SUBSCRIBED, ON_NEXT, ON_COMPLETE, ON_ERROR, \
    ON_NEXT_PACKED, ON_NEXT_PART, ON_NEXT_LAST_PART, GOODBYE = range(13)

# The fields of each type, in order: "id" 0..2**63-1, "count" 1..2**63-1, "long" any int64, "str", "bin",
# "ids" an array of ids. Trailing fields with a default may be left out: (fields, how many are required).
_ID, _COUNT, _LONG, _STR, _BIN, _IDS = "id", "count", "long", "str", "bin", "ids"
LAYOUTS = {
    CLIENT_HELLO: ((_ID, _IDS), 2), SERVER_HELLO: ((_ID, _IDS), 2),
    SUBSCRIBE: ((_STR, _ID, _LONG), 2), REQUEST: ((_ID, _LONG), 2), CANCEL: ((_ID,), 1),
    SUBSCRIBED: ((_ID, _ID), 1), ON_NEXT: ((_ID, _BIN), 2), ON_COMPLETE: ((_ID,), 1),
    ON_ERROR: ((_ID, _STR), 2), ON_NEXT_PACKED: ((_ID, _COUNT, _BIN), 3),
    ON_NEXT_PART: ((_ID, _ID, _BIN), 3), ON_NEXT_LAST_PART: ((_ID, _ID, _BIN), 3), GOODBYE: ((_STR,), 1),
}
DEFAULTS = {SUBSCRIBE: (0,), SUBSCRIBED: (0,)}


class Fault(Exception):
    """What the peer sent cannot be taken: the session ends with goodbye(reason)."""


class _More(Exception):
    """The frame has not arrived whole yet."""


class _Array(tuple):
    pass


class _Other:
    """A value of a kind no field has (nil, bool, float, map, ext): enough to say so."""

    def __init__(self, kind: str):
        self.kind = kind


class FrameReader:
    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES):
        self.max = max_frame_bytes
        self.buffer = bytearray()

    def feed(self, data: bytes) -> tuple[list[tuple], Fault | None]:
        """The frames `data` completes, up to the first fault, and that fault (None if there is none): the frames
        before a fault arrived first and are taken; nothing after it is."""
        self.buffer += data
        frames = []
        while self.buffer:
            try:
                value, end = self._value(0, 0)
                frame = _checked(value)
            except _More:
                break
            except Fault as fault:
                self.buffer.clear()
                return frames, fault
            del self.buffer[:end]
            frames.append(frame)
        return frames, None

    def unfinished(self) -> bool:
        return bool(self.buffer)

    # A value at `at`, `depth` arrays deep: (value, offset after it). Every length is judged against the limit
    # when its header is read, so a declared 4 GiB costs nothing.
    def _need(self, end: int) -> None:
        if end > self.max:
            raise Fault(f"frame-too-large: the frame declares more than {self.max} bytes")
        if end > len(self.buffer):
            raise _More()

    def _take(self, at: int, size: int) -> bytes:
        self._need(at + size)
        return bytes(self.buffer[at:at + size])

    def _value(self, at: int, depth: int):
        first = self._take(at, 1)[0]
        at += 1
        if first <= 0x7f:
            return first, at
        if first >= 0xe0:
            return first - 0x100, at
        if 0x90 <= first <= 0x9f:
            return self._array(at, first & 0x0f, depth)
        if 0xa0 <= first <= 0xbf:
            return self._text(at, first & 0x1f)
        if 0x80 <= first <= 0x8f:
            return self._map(at, first & 0x0f, depth)
        if first == 0xc1:
            raise Fault("malformed: 0xc1 begins no MessagePack value")
        if first in (0xc0, 0xc2, 0xc3):
            return _Other("nil" if first == 0xc0 else "bool"), at
        if first in (0xcc, 0xcd, 0xce, 0xcf):
            size = 1 << (first - 0xcc)
            return int.from_bytes(self._take(at, size), "big"), at + size
        if first in (0xd0, 0xd1, 0xd2, 0xd3):
            size = 1 << (first - 0xd0)
            return int.from_bytes(self._take(at, size), "big", signed=True), at + size
        if first in (0xca, 0xcb):
            return _Other("float"), at + len(self._take(at, 4 if first == 0xca else 8))
        if first in (0xd4, 0xd5, 0xd6, 0xd7, 0xd8):
            return _Other("ext"), at + len(self._take(at, 1 + (1 << (first - 0xd4))))
        widths = {0xc4: 1, 0xc5: 2, 0xc6: 4, 0xd9: 1, 0xda: 2, 0xdb: 4, 0xdc: 2, 0xdd: 4, 0xde: 2, 0xdf: 4,
                  0xc7: 1, 0xc8: 2, 0xc9: 4}
        width = widths[first]
        length = int.from_bytes(self._take(at, width), "big")
        at += width
        if first in (0xc4, 0xc5, 0xc6):
            return self._take(at, length), at + length
        if first in (0xd9, 0xda, 0xdb):
            return self._text(at, length)
        if first in (0xdc, 0xdd):
            return self._array(at, length, depth)
        if first in (0xde, 0xdf):
            return self._map(at, length, depth)
        self._need(at + 1 + length)  # ext 8/16/32: a type byte, then the data
        return _Other("ext"), at + 1 + length

    def _text(self, at: int, length: int):
        raw = self._take(at, length)
        try:
            return raw.decode("utf-8"), at + length
        except UnicodeDecodeError as exc:
            raise Fault(f"bad-field: a str that is not valid UTF-8 ({exc.reason})") from None

    def _array(self, at: int, length: int, depth: int):
        self._need(at + length)  # each value takes a byte at least
        if depth > 8:
            raise Fault("malformed: arrays nested too deep for a frame")
        values = []
        for _ in range(length):
            value, at = self._value(at, depth + 1)
            values.append(value)
        return _Array(values), at

    def _map(self, at: int, length: int, depth: int):
        self._need(at + 2 * length)
        for _ in range(2 * length):
            _, at = self._value(at, depth + 1)
        return _Other("map"), at


def _kind(value) -> str:
    if isinstance(value, _Other):
        return value.kind
    return {int: "int", str: "str", bytes: "bin", _Array: "array"}[type(value)]


def _checked(value) -> tuple:
    """The frame as (type, *fields), trailing defaults filled in; a Fault if the wire format does not allow it."""
    if not isinstance(value, _Array):
        raise Fault(f"not-an-array: a frame is an array, this is a {_kind(value)}")
    if not value:
        raise Fault("empty-array: a frame without a message type")
    kind, *fields = value
    if type(kind) is not int:
        raise Fault(f"bad-field: the message type is a {_kind(kind)}")
    if kind not in LAYOUTS:
        raise Fault(f"unknown-type: message type {kind} is not one of version 0 (no extension was agreed)")
    layout, required = LAYOUTS[kind]
    if not required <= len(fields) <= len(layout):
        raise Fault(f"bad-field: message type {kind} has {len(fields)} fields")
    for field, wanted in zip(fields, layout):
        _field(kind, field, wanted)
    omitted = len(layout) - len(fields)
    return (kind, *fields, *DEFAULTS.get(kind, ())[len(DEFAULTS.get(kind, ())) - omitted:])


def _field(kind: int, value, wanted: str) -> None:
    ok = {
        _ID: lambda v: type(v) is int and 0 <= v <= ID_MAX,
        _COUNT: lambda v: type(v) is int and 1 <= v <= ID_MAX,
        _LONG: lambda v: type(v) is int and INT64_MIN <= v <= ID_MAX,
        _STR: lambda v: type(v) is str,
        _BIN: lambda v: type(v) is bytes,
        _IDS: lambda v: isinstance(v, _Array) and all(type(i) is int and 0 <= i <= ID_MAX for i in v),
    }[wanted](value)
    if not ok:
        raise Fault(f"bad-field: message type {kind} wants a {wanted}, got a {_kind(value)}")


# Writing

def _int(value: int) -> bytes:
    if 0 <= value <= 0x7f:
        return bytes([value])
    if -32 <= value < 0:
        return bytes([value + 0x100])
    if value >= 0:
        for first, fmt in ((0xcc, ">B"), (0xcd, ">H"), (0xce, ">I"), (0xcf, ">Q")):
            if value < 1 << (8 * struct.calcsize(fmt)):
                return bytes([first]) + struct.pack(fmt, value)
    for first, fmt in ((0xd0, ">b"), (0xd1, ">h"), (0xd2, ">i"), (0xd3, ">q")):
        bits = 8 * struct.calcsize(fmt) - 1
        if -(1 << bits) <= value:
            return bytes([first]) + struct.pack(fmt, value)
    raise ValueError(f"{value} is outside int64")


def _str(text: str) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) < 32:
        return bytes([0xa0 | len(raw)]) + raw
    if len(raw) < 256:
        return b"\xd9" + bytes([len(raw)]) + raw
    if len(raw) < 65536:
        return b"\xda" + struct.pack(">H", len(raw)) + raw
    return b"\xdb" + struct.pack(">I", len(raw)) + raw


def _any(value) -> bytes:
    if type(value) is int:
        return _int(value)
    if type(value) is str:
        return _str(value)
    if isinstance(value, (list, tuple)):
        if len(value) >= 16:
            raise ValueError("the zoo's frames have fewer than 16 values")
        return bytes([0x90 | len(value)]) + b"".join(_any(v) for v in value)
    raise TypeError(type(value))


def frame(kind: int, *fields) -> bytes:
    """One frame: the array [kind, *fields] (ints, strs, and arrays of ints)."""
    return _any([kind, *fields])

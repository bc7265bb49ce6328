"""Frames of the network protocol (docs/wire-format.md), read and written with msgpack: the one piece the zoo's
servers share. A `FrameReader` finds where a frame ends from its headers before decoding it, so a declared
length over the limit is refused without waiting for its bytes, and it checks each client frame's fields."""

from __future__ import annotations

import msgpack

CLIENT_HELLO, SERVER_HELLO, SUBSCRIBE, REQUEST, CANCEL, SUBSCRIBED = 0, 1, 2, 3, 4, 5
ON_NEXT, ON_COMPLETE, ON_ERROR, ON_NEXT_PACKED, ON_NEXT_PART, ON_NEXT_LAST_PART, GOODBYE = 6, 7, 8, 9, 10, 11, 12
LIMIT = 16 * 2**20
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


class Fault(Exception):
    """The client sent something a server answers with goodbye; the text is the goodbye's reason."""


def frame(*fields) -> bytes:
    return msgpack.packb(list(fields), use_bin_type=True)


# Per first byte: (header bytes, length bytes, nested values per count) for the variable-size kinds.
_SIZED = {0xc4: (2, 1), 0xc5: (3, 2), 0xc6: (5, 4), 0xd9: (2, 1), 0xda: (3, 2), 0xdb: (5, 4),
          0xc7: (3, 1), 0xc8: (4, 2), 0xc9: (6, 4)}  # bin, str, ext (ext adds a type byte)
_FIXED = {0xc0: 1, 0xc2: 1, 0xc3: 1, 0xca: 5, 0xcb: 9, 0xcc: 2, 0xcd: 3, 0xce: 5, 0xcf: 9, 0xd0: 2, 0xd1: 3,
          0xd2: 5, 0xd3: 9, 0xd4: 3, 0xd5: 4, 0xd6: 6, 0xd7: 10, 0xd8: 18}
_CONTAINERS = {0xdc: (3, 2, 1), 0xdd: (5, 4, 1), 0xde: (3, 2, 2), 0xdf: (5, 4, 2)}


def _frame_end(buf: bytes | bytearray, limit: int) -> int | None:
    """Where the value at the start of `buf` ends, None if more bytes are needed; Fault if it cannot be read or
    declares more than `limit` bytes."""
    pos, values = 0, 1
    while values:
        if pos >= len(buf):
            return None
        first = buf[pos]
        values -= 1
        if first <= 0x7f or first >= 0xe0:
            pos += 1
        elif 0x80 <= first <= 0x9f:
            values += (first & 0x0f) * (2 if first < 0x90 else 1)
            pos += 1
        elif 0xa0 <= first <= 0xbf:
            pos += 1 + (first & 0x1f)
        elif first in _FIXED:
            pos += _FIXED[first]
        elif first in _SIZED:
            header, width = _SIZED[first]
            if pos + 1 + width > len(buf):
                return None
            pos += header + int.from_bytes(buf[pos + 1:pos + 1 + width], "big")
        elif first in _CONTAINERS:
            header, width, per = _CONTAINERS[first]
            if pos + 1 + width > len(buf):
                return None
            count = int.from_bytes(buf[pos + 1:pos + 1 + width], "big")
            if count > 1024:
                raise Fault(f"a container of {count} values")
            values += count * per
            pos += header
        else:
            raise Fault(f"byte {first:#04x} is not MessagePack")
        if pos > limit:
            raise Fault(f"a frame over the {limit}-byte limit")
    return pos


def _int(value, low: int, high: int, what: str) -> int:
    if type(value) is not int or not low <= value <= high:
        raise Fault(f"{what} is not an integer in {low}..{high}")
    return value


def _text(value, what: str) -> str:
    if type(value) is not str:
        raise Fault(f"{what} is not a str")
    return value


def _arity(fields: list, least: int, most: int, name: str) -> None:
    if not least <= len(fields) <= most:
        raise Fault(f"{name} with {len(fields) - 1} fields")


def check_client_frame(fields) -> tuple:
    """A client's frame as a tuple of its type and fields (defaults filled in); Fault if it is not one."""
    if type(fields) is not list:
        raise Fault("a frame that is not an array")
    if not fields:
        raise Fault("an empty array")
    kind = fields[0]
    if type(kind) is not int:
        raise Fault("a message type that is not an integer")
    if kind == CLIENT_HELLO:
        _arity(fields, 1, 3, "clientHello")
        version = _int(fields[1], 0, INT64_MAX, "the version") if len(fields) > 1 else 0
        extensions = fields[2] if len(fields) > 2 else []
        if type(extensions) is not list or any(type(e) is not int for e in extensions):
            raise Fault("extensions that are not a list of integers")
        return kind, version, extensions
    if kind == SUBSCRIBE:
        _arity(fields, 3, 4, "subscribe")
        return (kind, _text(fields[1], "the publisher"), _int(fields[2], 0, INT64_MAX, "the subscriber id"),
                _int(fields[3], INT64_MIN, INT64_MAX, "the initial demand") if len(fields) > 3 else 0)
    if kind == REQUEST:
        _arity(fields, 3, 3, "request")
        return kind, _int(fields[1], 0, INT64_MAX, "the subscriber id"), _int(fields[2], INT64_MIN, INT64_MAX, "n")
    if kind == CANCEL:
        _arity(fields, 2, 2, "cancel")
        return kind, _int(fields[1], 0, INT64_MAX, "the subscriber id")
    if kind == GOODBYE:
        _arity(fields, 1, 2, "goodbye")
        return kind, _text(fields[1], "the reason") if len(fields) > 1 else ""
    if kind in (SUBSCRIBED, ON_COMPLETE):  # the client's side of a stream the server subscribed to
        _arity(fields, 2, 3 if kind == SUBSCRIBED else 2, "subscribed" if kind == SUBSCRIBED else "onComplete")
        return kind, _int(fields[1], 0, INT64_MAX, "the subscriber id")
    if kind == ON_ERROR:
        _arity(fields, 3, 3, "onError")
        return kind, _int(fields[1], 0, INT64_MAX, "the subscriber id"), _text(fields[2], "the message")
    if SERVER_HELLO <= kind <= GOODBYE:
        raise Fault(f"message type {kind} is not one a client sends")
    raise Fault(f"unknown message type {kind}")


class FrameReader:
    """Bytes in, checked client frames out; a Fault ends the session (nothing after it is read)."""

    def __init__(self, limit: int = LIMIT):
        self.limit = limit
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple]:
        self.buffer += data
        frames = []
        while self.buffer:
            end = _frame_end(self.buffer, self.limit)
            if end is None:
                break
            raw = bytes(self.buffer[:end])
            del self.buffer[:end]
            try:
                fields = msgpack.unpackb(raw, raw=False, strict_map_key=False)
            except UnicodeDecodeError:
                raise Fault("a str that is not valid UTF-8") from None
            except Exception as exc:  # anything msgpack cannot read
                raise Fault(f"bytes that are not MessagePack ({type(exc).__name__})") from None
            frames.append(check_client_frame(fields))
        return frames


def parse_reserved(name: str) -> tuple[str, tuple[int, ...]] | None:
    """('range', (n,)), ('blobs', (n, size)), ('empty', ()), ('error', ()), ('infinite', ()) or None."""
    parts = name.split("/")
    if len(parts) < 2 or parts[0] != "rstck":
        return None
    kind, numbers = parts[1], parts[2:]
    if not all(p.isascii() and p.isdigit() for p in numbers):
        return None
    arity = {"range": 1, "blobs": 2, "empty": 0, "error": 0, "infinite": 0}.get(kind)
    if arity is None or arity != len(numbers):
        return None
    return kind, tuple(int(p) for p in numbers)


def element(kind: str, numbers: tuple[int, ...], i: int) -> bytes:
    if kind == "blobs":
        size, start = numbers[1], (i * 31) % 251
        cycle = bytes(range(251))
        return (cycle[start:] + cycle * (size // 251 + 1))[:size]
    return i.to_bytes(8, "big")

# ---- The kit's side of the network protocol, written out (rstck/reports/repro/network_runtime.py): frames read
# and written by hand (docs/wire-format.md), every frame checked as rstck checks it, the waits and quiet windows
# rstck uses, and the verdict. Standard library only.

import collections
import os
import shlex
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

EXIT_KEPT, EXIT_BROKEN, EXIT_CANNOT_RUN = 0, 1, 2
MAX_ID = 2**63 - 1  # the largest id, and the demand that is unbounded
MAX_FRAME_BYTES = 16 * 2**20  # what a frame may declare (docs/wire-format.md, the frame size limit)
MAX_ARRAY_VALUES = 1024
# "Nothing more arrives": 20 round trips measured on the connection (a subscribe to rstck/empty and its end),
# at least 25 ms and at most 1 s, as rstck decides it; never a fixed sleep.
QUIET_ROUND_TRIPS = 20
QUIET_WINDOW_MIN_S = 0.025
QUIET_WINDOW_MAX_S = 1.0
CLOSE_LINGER_S = 1.0  # how long the other side may take to close after the goodbyes
PROMISE_RESERVE_S = 0.5  # a settle stops waiting for what a reserved name owes this long before the deadline
EXIT_GRACE_S = 0.5  # how long a client that closed its connection may take to exit
KEPT_OUTPUT_BYTES = 2**20
FRESH_IDS_FROM = 2**62  # ids of the script's own round trips: far from any the scenario names
TYPES = {0: "clientHello", 1: "serverHello", 2: "subscribe", 3: "request", 4: "cancel", 5: "subscribed",
         6: "onNext", 7: "onComplete", 8: "onError", 9: "onNextPacked", 10: "onNextPart", 11: "onNextLastPart",
         12: "goodbye"}
CODES = {name: code for code, name in TYPES.items()}
SIGNALS = {5, 6, 7, 8, 9, 10, 11}  # what a publisher sends a subscriber, with its id
ELEMENTS = {6, 9, 10, 11}
_started = [time.monotonic()]
_config = {"rule": "", "deadline_s": 5.0}
_findings = []  # (rule, expected, observed), the first of each rule
_must_stop = [False]  # a frame broke a rule: the next wait stops, as rstck's check stops


class Incomplete(Exception):
    """The value has not all arrived yet."""


class NotAFrame(Exception):
    """Bytes that are no frame of the protocol: `kind` and what was wrong."""

    def __init__(self, kind, detail):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


class Broken(Exception):
    """The implementation broke the sentence where the scenario stands."""

    def __init__(self, rule, expected, observed):
        super().__init__(rule)
        self.rule, self.expected, self.observed = rule, expected, observed


class Stop(Exception):
    """A frame broke a rule already: the verdict is decided, and the scenario ends there, as rstck's check does."""


class Closed(Exception):
    """The other side closed the connection."""


class Silent(Exception):
    """Nothing arrived in the time given."""


class CannotRun(Exception):
    """The scenario cannot be played: nothing listens at the URL, the client command does not connect."""


def say(text):
    print(f"{(time.monotonic() - _started[0]) * 1000:9.1f} ms  {text}", flush=True)


def deadline():
    return _started[0] + _config["deadline_s"]


def violate(rule, expected, observed):
    """A rule broken by a frame: kept (the first of each rule), and the scenario stops at its next wait."""
    say(f"(!! {rule}: {observed})")
    if not any(found[0] == rule for found in _findings):
        _findings.append((rule, expected, observed))
    _must_stop[0] = True


# -- MessagePack, as docs/wire-format.md uses it --------------------------------------------------------------


class Other:
    """A MessagePack value no frame holds (nil, a boolean, a float, a map, an ext): only named."""

    def __init__(self, what):
        self.what = what


def unpack(buf, pos, strict=True):
    """The MessagePack value that starts at `pos` of `buf`, and where it ends. Incomplete while it has not all
    arrived; NotAFrame for a byte MessagePack never uses, a declared size past the frame limit, or (`strict`) a str
    that is not UTF-8."""
    if pos >= len(buf):
        raise Incomplete()
    first = buf[pos]
    if first <= 0x7f:
        return first, pos + 1
    if first >= 0xe0:
        return first - 0x100, pos + 1
    if 0xa0 <= first <= 0xbf:
        return _text(buf, pos + 1, first & 0x1f, strict)
    if 0x90 <= first <= 0x9f:
        return _array(buf, pos + 1, first & 0x0f, strict)
    if 0x80 <= first <= 0x8f:
        return _map(buf, pos + 1, first & 0x0f, strict)
    if first == 0xc1:
        raise NotAFrame("malformed", "not valid MessagePack: the reserved byte 0xc1, which begins no value")
    if first in (0xc0, 0xc2, 0xc3):
        return Other({0xc0: "nil", 0xc2: "false", 0xc3: "true"}[first]), pos + 1
    if first in (0xca, 0xcb):
        return Other("a float"), _need(buf, pos + (5 if first == 0xca else 9))
    if 0xcc <= first <= 0xd3:
        width = 1 << ((first - 0xcc) & 3)
        end = _need(buf, pos + 1 + width)
        return int.from_bytes(buf[pos + 1:end], "big", signed=first >= 0xd0), end
    if 0xd4 <= first <= 0xd8:  # fixext
        return Other("an ext"), _need(buf, pos + 2 + (1 << (first - 0xd4)))
    width = {0xc4: 1, 0xc5: 2, 0xc6: 4, 0xc7: 1, 0xc8: 2, 0xc9: 4, 0xd9: 1, 0xda: 2, 0xdb: 4, 0xdc: 2, 0xdd: 4,
             0xde: 2, 0xdf: 4}[first]
    at = _need(buf, pos + 1 + width)
    length = int.from_bytes(buf[pos + 1:at], "big")
    if first in (0xdc, 0xdd):
        return _array(buf, at, length, strict)
    if first in (0xde, 0xdf):
        return _map(buf, at, length, strict)
    if length > MAX_FRAME_BYTES:
        raise NotAFrame("too-large", f"the frame declares a value of {length} bytes, more than {MAX_FRAME_BYTES}")
    if first <= 0xc6:
        end = _need(buf, at + length)
        return bytes(buf[at:end]), end
    if first <= 0xc9:
        return Other("an ext"), _need(buf, at + 1 + length)
    return _text(buf, at, length, strict)


def _need(buf, end):
    if end > len(buf):
        raise Incomplete()
    return end


def _text(buf, at, length, strict):
    end = _need(buf, at + length)
    try:
        return bytes(buf[at:end]).decode("utf-8"), end
    except UnicodeDecodeError as exc:
        if strict:
            raise NotAFrame("malformed", f"a str that is not valid UTF-8 ({exc.reason})") from None
        return bytes(buf[at:end]), end


def _array(buf, at, length, strict):
    if length > MAX_ARRAY_VALUES:
        raise NotAFrame("too-large", f"the frame declares an array of {length} values")
    values = []
    for _ in range(length):
        value, at = unpack(buf, at, strict)
        values.append(value)
    return values, at


def _map(buf, at, length, strict):
    if length > MAX_ARRAY_VALUES:
        raise NotAFrame("too-large", f"the frame declares a map of {length} entries")
    for _ in range(2 * length):
        _, at = unpack(buf, at, strict)
    return Other("a map"), at


def pack(value):
    """`value` (an int, str, bytes, or a list of them) as MessagePack."""
    if isinstance(value, bool) or value is None:
        raise TypeError("no frame holds nil or a boolean")
    if isinstance(value, int):
        if 0 <= value <= 0x7f or -32 <= value < 0:
            return struct.pack(">b" if value < 0 else ">B", value)
        for code, fmt in ((0xcc, ">B"), (0xcd, ">H"), (0xce, ">I"), (0xcf, ">Q")) if value > 0 else (
                (0xd0, ">b"), (0xd1, ">h"), (0xd2, ">i"), (0xd3, ">q")):
            try:
                return bytes([code]) + struct.pack(fmt, value)
            except struct.error:
                continue
        raise ValueError(f"{value} is beyond 64 bits")
    if isinstance(value, str):
        data = value.encode("utf-8")
        return _sized(data, 0xa0, 31, (0xd9, 0xda, 0xdb)) + data
    if isinstance(value, (bytes, bytearray)):
        return _sized(value, None, 0, (0xc4, 0xc5, 0xc6)) + bytes(value)
    return _sized(value, 0x90, 15, (None, 0xdc, 0xdd)) + b"".join(pack(item) for item in value)


def _sized(value, fix, fix_max, codes):
    n = len(value)
    if fix is not None and n <= fix_max:
        return bytes([fix | n])
    for code, fmt, most in zip(codes, (">B", ">H", ">I"), (0xff, 0xffff, 0xffffffff)):
        if code is not None and n <= most:
            return bytes([code]) + struct.pack(fmt, n)
    raise ValueError("too long")


# -- Frames: the layout of docs/wire-format.md -----------------------------------------------------------------


def _is_id(value):
    return type(value) is int and 0 <= value <= MAX_ID


def _is_int64(value):
    return type(value) is int and -2**63 <= value <= MAX_ID


FIELD_TESTS = {
    "id": (_is_id, "a non-negative integer within int64"),
    "int64": (_is_int64, "an integer within int64"),
    "str": (lambda value: type(value) is str, "a str"),
    "bin": (lambda value: type(value) is bytes, "a bin (bytes)"),
    "ids": (lambda value: type(value) is list and all(map(_is_id, value)), "an array of ids"),
}
REQUIRED = object()
# type -> its fields: (name, kind, default)
LAYOUT = {
    0: (("version", "id", 0), ("extensions", "ids", [])),
    1: (("version", "id", 0), ("extensions", "ids", [])),
    2: (("publisher", "str", REQUIRED), ("subscriber", "id", REQUIRED), ("initial_demand", "int64", 0)),
    3: (("subscriber", "id", REQUIRED), ("demand", "int64", REQUIRED)),
    4: (("subscriber", "id", REQUIRED),),
    5: (("subscriber", "id", REQUIRED), ("element_size", "id", 0)),
    6: (("subscriber", "id", REQUIRED), ("element", "bin", REQUIRED)),
    7: (("subscriber", "id", REQUIRED),),
    8: (("subscriber", "id", REQUIRED), ("message", "str", REQUIRED)),
    9: (("subscriber", "id", REQUIRED), ("count", "id", REQUIRED), ("data", "bin", REQUIRED)),
    10: (("subscriber", "id", REQUIRED), ("element_id", "id", REQUIRED), ("data", "bin", REQUIRED)),
    11: (("subscriber", "id", REQUIRED), ("element_id", "id", REQUIRED), ("data", "bin", REQUIRED)),
    12: (("reason", "str", ""),),
}


def frame_of(value):
    """The frame a decoded value is, as a list: its type, then every field (defaults filled in); NotAFrame if it
    is none."""
    if type(value) is not list:
        what = value.what if isinstance(value, Other) else type(value).__name__
        raise NotAFrame("not-an-array", f"a frame is a MessagePack array, got {what}")
    if not value:
        raise NotAFrame("empty-array", "a frame is an array that starts with its message type, got an empty array")
    kind, fields = value[0], value[1:]
    if type(kind) is not int or kind not in LAYOUT:
        if type(kind) is int and kind >= 64:
            raise NotAFrame("unknown-type", f"message type {kind} belongs to an extension that was not negotiated")
        raise NotAFrame("unknown-type", f"message type {kind!r} is not defined by protocol version 0")
    layout = LAYOUT[kind]
    required = sum(default is REQUIRED for _, _, default in layout)
    if not required <= len(fields) <= len(layout):
        raise NotAFrame("bad-field", f"{TYPES[kind]} has {len(layout)} fields at most, {required} at least, got "
                                     f"{len(fields)}")
    filled = [*fields, *(default for _, _, default in layout[len(fields):])]
    for (name, test, _), field in zip(layout, filled):
        accepts, wanted = FIELD_TESTS[test]
        if not accepts(field):
            raise NotAFrame("bad-field", f"{TYPES[kind]}.{name} must be {wanted}")
    return [kind, *filled]


def describe(frame):
    """A frame as the wire log shows it."""
    kind, fields = frame[0], frame[1:]
    shown = []
    for (name, _, _), field in zip(LAYOUT[kind], fields):
        if isinstance(field, bytes):
            field = f"{len(field)} bytes: {field[:16].hex()}{'…' if len(field) > 16 else ''}"
        elif isinstance(field, str):
            field = repr(field[:60])
        shown.append(f"{name}={field}")
    return f"{TYPES[kind]}({', '.join(shown)})"


def packed_frame(frame):
    """A frame (a list: its type, then its fields) as bytes."""
    return pack(list(frame))


class Reader:
    """Frames from a byte stream that arrives in pieces of any size."""

    def __init__(self, strict=True):
        self.buffer = bytearray()
        self.strict = strict

    def feed(self, data):
        """The values completed by `data`, in order, and the NotAFrame of the first bytes that are no frame (None:
        all were)."""
        self.buffer += data
        values, at = [], 0
        try:
            while at < len(self.buffer):
                value, at = unpack(self.buffer, at, self.strict)
                values.append(value)
        except Incomplete:
            return values, None
        except NotAFrame as fault:
            return values, fault
        finally:
            del self.buffer[:at]
        return values, None


# -- The kit's end of a connection ----------------------------------------------------------------------------


def ended(stream_id):
    """A wait reads until stream `stream_id` has had its terminal signal."""
    return ("ended", stream_id)


def received(stream_id, count):
    """A wait reads until stream `stream_id` has brought `count` elements."""
    return ("received", stream_id, count)


def frame(*kinds, id=None):
    """A wait reads until a frame of one of `kinds` (for stream `id`, when given) arrives."""
    return ("frame", kinds, id)


def more_frames(more):
    """A wait reads until each stream of `more` has brought that many more frames of elements."""
    return ("more_frames", more)


class Wire:
    """One TCP connection, read frame by frame within the deadline; what arrives is checked as it arrives."""

    label = "connection"

    def __init__(self, sock):
        self.sock = sock
        self.reader = Reader()
        self.inbox = collections.deque()
        self.eof = False
        self.unreadable = False
        self.goodbye_received = None
        self.goodbye_sent = False
        self.last_frame = None  # the frame the last wait stopped at
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def say(self, text):
        say(f"{self.label}  {text}")

    def write(self, data, shown):
        self.say(shown)
        self.sock.settimeout(max(0.05, deadline() - time.monotonic()))
        try:
            self.sock.sendall(data)
        except OSError as exc:  # the other side closed or reset: what it sent before is still read
            self.say(f"send failed: {exc.strerror or exc}")

    def receive(self, within_s=None):
        """The next frame, within `within_s` (the deadline at most); Silent if none came, Closed at EOF."""
        end = deadline() if within_s is None else min(deadline(), time.monotonic() + within_s)
        while not self.inbox:
            if self.eof:
                raise Closed()
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise Silent()
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except (TimeoutError, socket.timeout):
                raise Silent() from None
            except OSError as exc:  # a reset is a close
                self.say(f"connection reset ({exc.strerror or exc})")
                data = b""
            if not data:
                self.eof = True
                self.say("<- EOF")
                if self.reader.buffer and not self.unreadable:
                    violate("net.framing.4", "whole frames", "the connection closed inside a frame")
                continue
            if hasattr(socket, "TCP_QUICKACK"):
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            self.feed(data)
        return self.inbox.popleft()

    def feed(self, data):
        if self.unreadable:
            return
        values, fault = self.reader.feed(data)
        for value in values:
            try:
                self.arrived(frame_of(value))
            except NotAFrame as exc:
                fault = exc
                break
        if fault is not None:
            self.say(f"<- bytes that are not a frame: {fault}")
            self.unreadable = True
            self.not_a_frame(fault)

    def not_a_frame(self, fault):
        if "belongs to an extension" in fault.detail:
            violate("net.extensions.1", "no message of an extension type (64 and above): no extension was "
                    "negotiated", fault.detail)
        else:
            violate("net.framing.4", "well-formed frames (docs/wire-format.md)", str(fault))

    def holds(self, alternative, frame):
        """Whether a wait's alternative holds, with the frame just read (None: before reading)."""
        kind = alternative[0]
        if kind == "frame":
            kinds, stream_id = alternative[1], alternative[2]
            if any(self.arrived_already(kind) for kind in kinds):
                return True
            return frame is not None and TYPES[frame[0]] in kinds and (stream_id is None or frame[1] == stream_id)
        return self.state_holds(alternative)

    def arrived_already(self, kind):
        """Whether a frame of `kind` that a wait reads for arrived before (a goodbye, the other side's hello)."""
        return kind == "goodbye" and self.goodbye_received is not None

    def wait(self, alternatives, rule, expected):
        """Read until one of `alternatives` holds; Broken(rule) if the connection closes or the deadline comes
        first; Stop once a frame broke a rule."""
        start = self.start_of_wait(alternatives)
        seen = 0
        if any(self.holds(alternative, None) for alternative in start):
            return None
        while True:
            try:
                frame = self.receive()
            except Closed:
                self.stop_if_decided()
                raise Broken(rule, expected, f"the connection closed first (after {seen} frames)") from None
            except Silent:
                self.stop_if_decided()
                raise Broken(rule, expected, f"nothing more arrived before the deadline (after {seen} frames)") \
                    from None
            seen += 1
            if any(self.holds(alternative, frame) for alternative in start):
                self.last_frame = frame
                return frame
            self.stop_if_decided()

    def start_of_wait(self, alternatives):
        return alternatives

    def stop_if_decided(self):
        if _must_stop[0]:
            raise Stop()

    def read_until_closed(self, within_s):
        """Read (and check) until EOF, for `within_s` at most; whether it closed."""
        end = min(deadline(), time.monotonic() + within_s)
        try:
            while True:
                self.receive(max(0.0, end - time.monotonic()))
        except Closed:
            return True
        except Silent:
            return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Stream:
    """A stream the script subscribed to, as its frames arrive (the checks rstck makes of each)."""

    def __init__(self, stream_id, publisher, demand):
        self.id, self.publisher = stream_id, publisher
        self.requested = 0
        self.element_size = 0
        self.subscribed = self.cancelled = self.unreadable = False
        self.part_of = None
        self.parts = []
        self.received = self.after_cancel = self.element_frames = 0
        self.terminal = ""
        self.elements = []  # the first ones
        self.last_element_at = 0.0
        self.longest_gap_s = 0.0
        self.request(demand)

    def request(self, n):
        if not self.terminal and not self.cancelled and n > 0:
            self.requested = min(self.requested + n, MAX_ID)


class ServerConnection(Wire):
    """A connection the script opened to the server under test, as rstck's checks open one."""

    def __init__(self, sock, label):
        super().__init__(sock)
        self.label = label
        self.outgoing = Reader()  # the script's own frames, for what they open, request and cancel
        self.streams = {}
        self.used_ids = set()
        self.server_hello = None
        self.round_trip_s = None
        self.connect_s = 0.0
        self.fresh_ids = iter(range(FRESH_IDS_FROM, MAX_ID))
        self.delivered = {}  # stream id -> what takes its elements (the kit's client, for the core rules)

    def not_a_frame(self, fault):
        super().not_a_frame(fault)
        self.eof = True  # nothing after it can be read as frames: as rstck's checks, the script reads no further

    # -- sending

    def send(self, hex_bytes, shows, fault=None):
        """Send the recorded bytes (`fault`: a fault injected on purpose, so labelled)."""
        data = bytes.fromhex(hex_bytes)
        if fault:
            self.write(data, f"-> {shows}   [fault injected: {fault}]")
            self.outgoing = Reader()
            try:  # what the server makes of a subscribe's id from now on is the scenario's to judge
                value, _ = unpack(data, 0, strict=False)
                if type(value) is list and len(value) > 2 and value[0] == 2 and type(value[2]) is int:
                    self.used_ids.add(value[2])
                    self.streams.pop(value[2], None)
            except (Incomplete, NotAFrame):
                pass
            return
        self.write(data, f"-> {shows}")
        for value in self.outgoing.feed(data)[0]:
            self.sent(frame_of(value))

    def send_frame(self, frame):
        self.write(packed_frame(frame), f"-> {describe(frame)}")
        self.sent(frame)

    def sent(self, frame):
        kind = frame[0]
        if kind == 2:
            self.streams[frame[2]] = Stream(frame[2], frame[1], frame[3])
            self.used_ids.add(frame[2])
        elif kind == 3 and frame[1] in self.streams:
            self.streams[frame[1]].request(frame[2])
        elif kind == 4 and frame[1] in self.streams:
            self.streams[frame[1]].cancelled = True
        elif kind == 12:
            self.goodbye_sent = True

    # -- receiving

    def arrived(self, frame):
        self.say(f"<- {describe(frame)}")
        if self.goodbye_received is not None:
            violate("net.rstck.13", "nothing after the server's goodbye", describe(frame))
            return
        kind = frame[0]
        if kind == 12:
            self.goodbye_received = frame
        elif kind == 1 and self.server_hello is None:
            self.server_hello = frame
        elif kind == 2 and not self.goodbye_sent:  # the server subscribes to the kit, which publishes nothing
            self.send_frame([5, frame[2], 0])
            self.send_frame([8, frame[2], "the kit publishes nothing on this connection"])
        self.take(frame)
        self.inbox.append(frame)

    def take(self, frame):
        """Check one frame against the streams the script opened, as rstck's Ledger does."""
        kind = frame[0]
        if kind not in SIGNALS:
            return
        stream = self.streams.get(frame[1])
        if stream is None:
            if frame[1] not in self.used_ids:
                violate("net.core.3", "only ids of the script's subscribes", f"{describe(frame)}: never subscribed")
            return
        if stream.terminal:  # a cancel made after it crosses nothing
            violate("1.7", "no signal after the stream's terminal signal", f"{describe(frame)} after {stream.terminal}")
            return
        if stream.cancelled:
            if kind in ELEMENTS and kind != 10:
                stream.after_cancel += frame[2] if kind == 9 else 1
            return  # it may cross the cancel
        if kind == 5:
            if stream.subscribed:
                violate("1.9", "one subscribed per subscribe", f"a second {describe(frame)}")
            stream.subscribed, stream.element_size = True, frame[2]
            return
        if not stream.subscribed:
            violate("1.9", "subscribed before any other signal of the stream", f"{describe(frame)} before subscribed")
        if kind in (7, 8):
            if stream.part_of is not None:
                violate("net.split.3", "the parts of an element end with its onNextLastPart",
                        f"{describe(frame)} while element {stream.part_of} was unfinished")
            stream.terminal = describe(frame)
            return
        self.element(stream, frame)

    def element(self, stream, frame):
        kind = frame[0]
        if kind != 10:
            now = time.monotonic()
            if stream.element_frames:
                stream.longest_gap_s = max(stream.longest_gap_s, now - stream.last_element_at)
            stream.element_frames, stream.last_element_at = stream.element_frames + 1, now
        if kind in (6, 9) and stream.part_of is not None:
            violate("net.split.3", "no other element between the parts of one element",
                    f"{describe(frame)} while element {stream.part_of} was unfinished")
            stream.part_of, stream.parts = None, []
        if kind == 6:
            self.count(stream, 1, "1.1", frame)
            self.sized(stream, len(frame[2]), frame)
            self.keep(stream, [frame[2]])
        elif kind == 9:
            if not stream.element_size:
                if not stream.unreadable:
                    stream.unreadable = True
                    violate("net.rstck.3", "onNextPacked only in a stream whose subscribed declared an element size",
                            f"{describe(frame)} in a stream of element_size 0")
                return
            size = stream.element_size
            if len(frame[3]) != frame[2] * size:
                violate("net.core.4", f"{size}-byte elements", f"{describe(frame)}: not {frame[2]} of {size} bytes")
                return
            self.count(stream, frame[2], "net.packed.3", frame)
            self.keep(stream, [frame[3][at:at + size] for at in range(0, len(frame[3]), size)])
        else:
            if stream.part_of is None:
                self.count(stream, 1, "1.1", frame)
                stream.part_of = frame[2]
            elif frame[2] != stream.part_of:
                violate("net.split.3", "the parts of one element before any part of the next",
                        f"{describe(frame)} while element {stream.part_of} was unfinished")
                stream.part_of, stream.parts = frame[2], []
            stream.parts.append(frame[3])
            if kind == 11:
                element = b"".join(stream.parts)
                stream.part_of, stream.parts = None, []
                self.sized(stream, len(element), frame)
                self.keep(stream, [element])

    def count(self, stream, n, rule, frame):
        stream.received += n
        if stream.requested != MAX_ID and stream.received > stream.requested:
            violate(rule, f"at most the {stream.requested} elements requested of stream {stream.id}",
                    f"{describe(frame)} made it {stream.received}")

    def sized(self, stream, size, frame):
        if stream.element_size and size != stream.element_size:
            violate("net.core.4", f"elements of the declared {stream.element_size} bytes",
                    f"{describe(frame)}: an element of {size} bytes")

    def keep(self, stream, elements):
        if len(stream.elements) < 100_000:
            stream.elements += elements[:100_000 - len(stream.elements)]
        take = self.delivered.get(stream.id)
        if take is not None:
            take(elements)

    # -- waiting

    def arrived_already(self, kind):
        return super().arrived_already(kind) or (kind == "serverHello" and self.server_hello is not None)

    def state_holds(self, alternative):
        kind = alternative[0]
        if kind == "ended":
            return bool(self.stream(alternative[1]).terminal)
        if kind == "received":
            return self.stream(alternative[1]).received >= alternative[2]
        return all(self.stream(i).element_frames >= n for i, n in alternative[1].items())

    def start_of_wait(self, alternatives):
        """`more_frames` counts from the frames each stream has brought when the wait begins."""
        return [("more_frames", {i: self.stream(i).element_frames + n for i, n in alternative[1].items()})
                if alternative[0] == "more_frames" else alternative for alternative in alternatives]

    def stream(self, stream_id):
        if stream_id not in self.streams:
            raise CannotRun(f"stream {stream_id} was not subscribed by this scenario")
        return self.streams[stream_id]

    def read(self, within_s):
        """Read one frame, if one comes within `within_s`."""
        try:
            self.receive(within_s)
        except (Silent, Closed):
            pass

    def round_trip(self, stream_id=None):
        """A subscribe to rstck/empty and its end: every frame sent before has been read by the server then; the
        time it took is the round trip the quiet window is made of."""
        stream_id = next(self.fresh_ids) if stream_id is None else stream_id
        started = time.monotonic()
        self.send_frame([2, "rstck/empty", stream_id, 0])
        self.wait([ended(stream_id)], "net.core.2", "rstck/empty to complete (the reserved names)")
        self.round_trip_s = time.monotonic() - started
        self.say(f"round trip {self.round_trip_s * 1000:.2f} ms: quiet window {self.quiet_window() * 1000:.0f} ms")

    def quiet_window(self):
        if self.round_trip_s is None:
            if self.goodbye_sent or self.eof:
                return QUIET_WINDOW_MAX_S
            self.round_trip()
        return min(max(QUIET_ROUND_TRIPS * self.round_trip_s, QUIET_WINDOW_MIN_S), QUIET_WINDOW_MAX_S)

    def quiet(self, window_s=None):
        """Read until nothing has arrived for the quiet window (or `window_s`): what arrived meanwhile."""
        window = self.quiet_window() if window_s is None else window_s
        seen = []
        while True:
            try:
                seen.append(self.receive(window))
            except (Silent, Closed):
                self.say(f"(quiet for {window * 1000:.0f} ms)")
                return seen

    def until_read(self):
        """Wait until the server has read everything sent so far: known on this host (its receive queue is
        empty), else the quiet window of the connect's round trip."""
        if read_by_the_other_end(self.sock, min(deadline(), time.monotonic() + QUIET_WINDOW_MAX_S)):
            self.say("(the server has read it)")
        else:
            self.quiet(min(max(QUIET_ROUND_TRIPS * self.connect_s, QUIET_WINDOW_MIN_S), QUIET_WINDOW_MAX_S))

    def after_goodbye(self):
        """Read to the close after the server's goodbye, a second at most; what arrives is net.rstck.13's."""
        if not self.read_until_closed(CLOSE_LINGER_S):
            self.say(f"(still open {CLOSE_LINGER_S:.0f} s after the server's goodbye: the script closes it)")

    def reset(self):
        """Abort the connection (RST), as a crashed peer would: a fault injected on purpose."""
        self.say("-> connection reset   [fault injected]")
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close()
        self.eof = True

    def expect_stopped(self, stream_id, rule):
        """After the cancel of `stream_id`, its elements stop: a quiet window without one (twice the longest gap
        between its frames, if longer), a round trip and a second window, as rstck decides it; still arriving at
        the deadline breaks `rule`."""
        stream = self.stream(stream_id)
        window = min(max(self.quiet_window(), 2 * stream.longest_gap_s), QUIET_WINDOW_MAX_S)
        self.quiet_for(stream, window, rule)
        while True:
            before = stream.after_cancel
            barrier = next(self.fresh_ids)
            self.send_frame([2, "rstck/empty", barrier, 0])
            end = min(deadline(), time.monotonic() + QUIET_WINDOW_MAX_S)
            while not self.streams[barrier].terminal and time.monotonic() < end:
                try:
                    self.receive(max(0.0, end - time.monotonic()))
                except Silent:
                    break
            if not self.streams[barrier].terminal:
                break
            self.quiet_for(stream, window, rule)
            if stream.after_cancel == before:
                break
        self.say(f"(no element of stream {stream_id} for {window * 1000:.0f} ms, twice: it has stopped)")

    def expect_still_stopped(self, stream_id, after_id, rule):
        """Once `after_id` is cancelled too and has stopped, `stream_id`, judged stopped while it flowed, stays
        stopped: elements of it that come back and are still arriving at the deadline break `rule`."""
        stream = self.stream(stream_id)
        judged = stream.after_cancel
        try:
            self.expect_stopped(after_id, rule)
            self.expect_stopped(stream_id, rule)
        except Broken:
            if stream.after_cancel == judged:
                self.say(f"(the deadline came first; nothing of stream {stream_id} arrived since it had stopped)")
                return
            raise Broken(rule, f"stream {stream_id} to stay stopped once stream {after_id} was cancelled",
                         f"{stream.after_cancel - judged} more elements of stream {stream_id} after it had stopped "
                         f"while stream {after_id} flowed, still arriving at the deadline") from None

    def quiet_for(self, stream, window, rule):
        seen, changed = stream.after_cancel, time.monotonic()
        while time.monotonic() - changed < window:
            try:
                self.receive(window)
            except Silent:
                if time.monotonic() < deadline():
                    continue
                raise Broken(rule, f"stream {stream.id} to stop after its cancel",
                             f"{stream.after_cancel} elements after the cancel, still arriving at the deadline") \
                    from None
            if stream.after_cancel != seen:
                seen, changed = stream.after_cancel, time.monotonic()

    def stops_after_goodbye(self):
        """After the script's goodbye, the server closes, says goodbye, or goes quiet for the window measured
        before it; still sending at the deadline breaks net.closing.3."""
        window = self.quiet_window()
        while True:
            try:
                frame = self.receive(window)
            except Closed:
                return
            except Silent:
                if time.monotonic() < deadline():
                    return
                raise Broken("net.closing.3", "the stream to stop after goodbye",
                             "elements were still arriving at the deadline") from None
            if frame[0] == 12:
                return

    def answered_goodbye(self):
        """After the script's goodbye, the server's goodbye: closed first is net.closing.2's finding, still
        streaming at the deadline net.closing.3's."""
        window = self.quiet_window()
        last_element = None
        while True:
            try:
                frame = self.receive()
            except Closed:
                raise Broken("net.closing.2", "the server's goodbye in answer, before the close",
                             "the connection closed without it") from None
            except Silent:
                if last_element is not None and deadline() - last_element <= window:
                    raise Broken("net.closing.3", "the stream to stop after the goodbye",
                                 "elements were still arriving at the deadline, and no goodbye") from None
                raise Broken("net.closing.2", "the server's goodbye in answer", "none came before the deadline") \
                    from None
            if frame[0] == 12:
                return
            last_element = time.monotonic()

    def finish(self):
        """End the connection as rstck ends a case: goodbye, the answer or EOF (a second at most), close."""
        if self.sock.fileno() < 0:
            return
        if not self.goodbye_sent and not self.eof:
            self.send_frame([12, "the check is over"])
        end = min(deadline() + CLOSE_LINGER_S, time.monotonic() + CLOSE_LINGER_S)
        try:
            while not self.eof and self.goodbye_received is None:
                self.receive(max(0.0, end - time.monotonic()))
        except (Silent, Closed):
            pass
        self.close()


def read_by_the_other_end(sock, until):
    """Whether the other end of `sock`, on this host, has read every byte sent (Linux lists every TCP socket's
    queues in /proc/net/tcp{,6}); False when it cannot be known, or not before `until`."""
    try:
        ours, theirs = _endpoint(sock.getsockname()), _endpoint(sock.getpeername())
    except OSError:
        return False
    pause = 0.0005
    while True:
        sent = unread = None
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(table) as lines:
                    next(lines, None)
                    for line in lines:
                        fields = line.split()
                        if len(fields) < 5 or fields[3] == "0A":
                            continue
                        local, remote = _listed(fields[1]), _listed(fields[2])
                        tx_queue, rx_queue = (int(n, 16) for n in fields[4].split(":"))
                        if (local, remote) == (ours, theirs):
                            sent = tx_queue
                        elif (local, remote) == (theirs, ours):
                            unread = rx_queue
            except (OSError, ValueError):
                continue
        if sent is None or unread is None:
            return False
        if sent == 0 and unread == 0:
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(pause)  # a poll of the kernel's tables, not a guess that something happened
        pause = min(pause * 2, 0.01)


def _listed(text):
    import ipaddress

    host, port = text.split(":")
    raw = b"".join(int(host[at:at + 8], 16).to_bytes(4, sys.byteorder) for at in range(0, len(host), 8))
    address = ipaddress.ip_address(raw)
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(port, 16)


def _endpoint(pair):
    import ipaddress

    address = ipaddress.ip_address(pair[0].split("%")[0])
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), pair[1]


# -- The server under test ------------------------------------------------------------------------------------


class Kit:
    """The script's side against a server: its connections to the URL."""

    def __init__(self, url):
        self.url = url
        rest = url[len("tcp://"):].split("/", 1)[0].split("?", 1)[0]  # the publishers' names follow: the client's
        host, _, port = rest.rpartition(":")
        self.address = (host.strip("[]"), int(port))
        self.connections = []

    def connect(self, label):
        started = time.monotonic()
        try:
            sock = socket.create_connection(self.address, timeout=max(0.05, deadline() - started))
        except OSError as exc:
            if self.connections:
                raise Broken(_config["rule"], "a connection to the server", f"cannot connect: {exc}") from None
            raise CannotRun(f"cannot connect to {self.url} ({exc.strerror or exc}); is the server listening?") \
                from None
        connection = ServerConnection(sock, label)
        connection.connect_s = time.monotonic() - started
        self.connections.append(connection)
        connection.say(f"connected to {self.url}")
        return connection

    def finish(self):
        for connection in self.connections:
            connection.finish()


def expect_goodbye_reason(connection, rule):
    """The other side's goodbye (after a fault) gives a reason."""
    if connection.goodbye_received is not None and not connection.goodbye_received[1].strip():
        raise Broken(rule, "goodbye with a reason that names the fault", "goodbye with an empty reason")


def expect_served(connection, rule, stream=None, terminal="", elements=None):
    """The server served stream `stream`: it ended with `terminal` ("": not yet) after `elements` elements; and
    said no goodbye."""
    expected = (f"stream {stream} to end with {terminal}" if terminal else f"stream {stream} to go on") + (
        f" after {elements} elements" if elements is not None else "") + ", and no goodbye" if stream is not None \
        else "no goodbye: the connection stays open"
    if stream is not None:
        served = connection.stream(stream)
        if not served.terminal.startswith(terminal) or (not terminal and served.terminal):
            raise Broken(rule, expected, f"stream {stream} ended with {served.terminal or 'nothing yet'}")
        if elements is not None and len(served.elements) != elements:
            raise Broken(rule, expected, f"stream {stream} brought {len(served.elements)} elements")
    if connection.goodbye_received is not None:
        raise Broken(rule, expected, f"goodbye({connection.goodbye_received[1]!r})")


def reserved_element(publisher, i):
    """Element `i` of a reserved publisher (docs/wire-format.md, reserved publisher names)."""
    if publisher.startswith("rstck/blobs/"):
        size = int(publisher.rsplit("/", 1)[1])
        return bytes((i * 31 + j) % 251 for j in range(size))
    return i.to_bytes(8, "big")


def expect_elements_of(connection, rule, stream, publisher):
    """The elements of stream `stream` are those of the reserved publisher `publisher`, in order."""
    for i, element in enumerate(connection.stream(stream).elements):
        if element != reserved_element(publisher, i):
            raise Broken(rule, f"element {i} of {publisher} (docs/wire-format.md)",
                         f"element {i} was {element[:16].hex()}{'…' if len(element) > 16 else ''}")


def expect_hello_version(connection, rule, version):
    """The serverHello says `version`, the client's."""
    if connection.server_hello is None or connection.server_hello[1] != version:
        raise Broken(rule, f"serverHello(version={version})", f"serverHello(version={connection.server_hello[1]})"
                     if connection.server_hello else "no serverHello")


# -- The core rules over the wire: the kit's client, as rstck's (rstck.connect) -------------------------------


class Probe:
    """A subscriber of the kit's client: the elements delivered to it, and what it does in each (`repeats`)."""

    def __init__(self, name, repeats=None):
        self.name = name
        self.repeats = repeats or {}
        self.stream_id = None
        self.delivered = 0
        self.demand = 0  # outstanding, as the client counts it
        self.done = False
        self.error = ""

    def observed(self, connection):
        stream = connection.streams.get(self.stream_id)
        terminal = stream.terminal if stream is not None else ""
        return f"{self.delivered} on_next" + (f", then {terminal}" if terminal else "")


class KitClient:
    """Subscribes probes to reserved names over one connection, and settles as rstck's client does."""

    def __init__(self, kit):
        self.connection = kit.connect("the kit's client")
        self.connection.send_frame([0, 0, []])
        self.ids = iter(range(1, MAX_ID))
        self.barriers = set()

    def subscribe(self, publisher, probe):
        probe.stream_id = next(self.ids)
        self.connection.delivered[probe.stream_id] = lambda elements: self.deliver(probe, elements)
        self.connection.send_frame([2, publisher, probe.stream_id, 0])

    def deliver(self, probe, elements):
        """Elements reach the probe within the demand it signalled; past it the client cancels and fails the
        stream (rule 1.1), as rstck's client does."""
        for _ in elements:
            if probe.done:
                return
            if probe.demand == 0:
                self.connection.send_frame([4, probe.stream_id])
                probe.done, probe.error = True, "the server sent more elements than requested (rule 1.1)"
                return
            if probe.demand != MAX_ID:
                probe.demand -= 1
            probe.delivered += 1
            repeat = probe.repeats.get("on_next")
            if repeat and (repeat.get("while_below") is None or probe.delivered < repeat["while_below"]):
                for n in repeat.get("requests", []):
                    self.request(probe, n)

    def request(self, probe, n):
        self.await_subscribed(probe)
        stream = self.connection.streams[probe.stream_id]
        if probe.done or stream.terminal or stream.cancelled:
            return  # 3.6: after the end, nothing
        if n > 0:
            probe.demand = min(probe.demand + n, MAX_ID)
        self.connection.send_frame([3, probe.stream_id, max(-2**63, min(n, MAX_ID))])

    def cancel(self, probe):
        stream = self.connection.streams[probe.stream_id]
        if not (probe.done or stream.terminal or stream.cancelled):
            probe.done = True
            self.connection.send_frame([4, probe.stream_id])

    def await_subscribed(self, probe):
        stream = self.connection.streams[probe.stream_id]
        if not stream.subscribed:
            self.connection.wait([frame("subscribed", id=probe.stream_id)], "1.9", "subscribed for the subscribe")

    def settle(self):
        """A round trip, then what the reserved names owe the open streams (until it comes, or half a second
        before the deadline), then a quiet window with nothing arriving: again while something came."""
        connection = self.connection
        while True:
            barrier = next(self.ids)
            self.barriers.add(barrier)
            started = time.monotonic()
            connection.send_frame([2, "rstck/empty", barrier, 0])
            connection.wait([ended(barrier)], "net.core.2", "rstck/empty to complete (the settling round trip)")
            connection.round_trip_s = time.monotonic() - started
            until = deadline() - min(PROMISE_RESERVE_S, max(0.0, deadline() - time.monotonic()) / 4)
            while self.promised() and time.monotonic() < until and not _must_stop[0]:
                try:
                    connection.receive(max(0.0, until - time.monotonic()))
                except (Silent, Closed):
                    break
            # Frames decoded with the barrier's end (checked as they arrived) are not news: the quiet is what comes
            # after them.
            connection.inbox.clear()
            if not connection.quiet():
                return

    def promised(self):
        """The streams still owed something by the reserved names' definitions (docs/wire-format.md), or by the
        counts the user's publishers were named with."""
        owed = []
        for stream in self.connection.streams.values():
            if stream.id in self.barriers or stream.cancelled or stream.terminal:
                continue
            if not stream.subscribed:
                owed.append(stream.id)
                continue
            name = stream.publisher
            size = 0 if name in ("rstck/empty", "rstck/error") else (
                int(name[len("rstck/range/"):]) if name.startswith("rstck/range/") else _config["promises"].get(name))
            if size is None:
                continue
            if stream.received < min(size, stream.requested) or (stream.received >= size
                                                                  and stream.requested > stream.received):
                owed.append(stream.id)
        return owed

    def expect(self, probe, what, rule, count=None, error_type=None):
        """What the probe was signalled, awaited up to the deadline as rstck awaits it."""
        connection = self.connection
        stream = connection.streams[probe.stream_id]
        shown = {"subscribed": "on_subscribe", "elements": f"{count} on_next", "complete": "on_complete",
                 "error": f"on_error({error_type})"}[what]
        done = {"subscribed": lambda: stream.subscribed,
                "elements": lambda: probe.delivered >= count or bool(stream.terminal) or probe.done}.get(
            what, lambda: bool(stream.terminal) or probe.done)
        try:
            while not done():
                connection.receive()
        except (Silent, Closed):
            pass
        if what == "subscribed" and stream.subscribed:
            return
        if what == "elements" and probe.delivered == count:
            return
        if what == "complete" and stream.terminal.startswith("onComplete"):
            return
        if what == "error" and (stream.terminal.startswith("onError") or probe.error):
            return
        raise Broken(rule, shown, probe.observed(connection))


# -- A client under test: the script plays the server ---------------------------------------------------------


def stream(number):
    """The client's stream: its `number`th subscribe (the client picks the id)."""
    return ("stream", number)


def unused(number):
    """An id the client never used, as rstck picked it (above the client's highest, while the range has room)."""
    return ("unused", number)


class ServedStream:
    def __init__(self, stream_id, publisher, demand):
        self.id, self.publisher = stream_id, publisher
        self.requested = max(0, demand)
        self.sent = 0
        self.element_size = 0
        self.subscribed = self.cancelled = False
        self.ended = ""
        self.part_of = None

    @property
    def open(self):
        return not self.ended and not self.cancelled

    @property
    def outstanding(self):
        return MAX_ID if self.requested == MAX_ID else self.requested - self.sent


class ClientRun(Wire):
    """One run of the client command against the script's listener, served as rstck serves it."""

    label = "client"

    def __init__(self, argv, publisher, hello):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        self.url = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        self.publisher = publisher
        self.argv = [*argv, self.url, publisher]
        say(f"run: {shlex.join(self.argv)}")
        try:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise CannotRun(f"cannot run the client command: {exc.strerror or exc}") from None
        self.output = {"stdout": bytearray(), "stderr": bytearray()}
        self.readers = [threading.Thread(target=self.collect, args=(name,), daemon=True) for name in self.output]
        for reader in self.readers:
            reader.start()
        super().__init__(self.accept(listener))
        self.streams = {}
        self.numbers = {}  # the client's stream ids, in the order of its subscribes
        self.unused_ids = []
        self.kit_subscribed = set()
        self.client_hello = None
        self.answer_goodbye = True
        self.refused = ""
        self.code = None
        self.lines = []
        say("accepted the client's connection")
        if hello:
            self.send([1, 0, []])

    def collect(self, name):
        pipe = getattr(self.process, name)
        kept = self.output[name]
        while chunk := pipe.read1(65536) if hasattr(pipe, "read1") else pipe.read(65536):
            kept += chunk
            if name == "stderr" and len(kept) > KEPT_OUTPUT_BYTES:
                del kept[:len(kept) - KEPT_OUTPUT_BYTES]
            elif name == "stdout" and len(kept) > KEPT_OUTPUT_BYTES:
                del kept[KEPT_OUTPUT_BYTES:]

    def accept(self, listener):
        while True:
            exited = self.process.poll() is not None
            listener.settimeout(0.001 if exited else max(0.001, min(0.02, deadline() - time.monotonic())))
            try:
                sock, _ = listener.accept()
                listener.close()
                return sock
            except (TimeoutError, socket.timeout):
                pass
            if exited:
                raise CannotRun(f"the client exited with status {self.process.returncode} without connecting to "
                                f"{self.url}{self.stderr_said()}")
            if time.monotonic() >= deadline():
                raise CannotRun(f"the client did not connect to {self.url} before the deadline{self.stderr_said()}")

    def stderr_said(self):
        tail = " | ".join(self.output["stderr"].decode("utf-8", "replace").strip().splitlines()[-4:])
        return f"; its stderr ends: {tail}" if tail else ""

    # -- sending

    def value(self, value):
        """A value of a frame the scenario sends, with the client's streams and the unused ids resolved."""
        if isinstance(value, tuple) and value[0] == "stream":
            ids = list(self.numbers)
            if value[1] > len(ids):
                raise CannotRun(f"the client made no subscribe number {value[1]}")
            return ids[value[1] - 1]
        if isinstance(value, tuple) and value[0] == "unused":
            return self.unused_ids[value[1]]
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

    def send(self, frame, fault=None):
        """Send a frame (a list: its type, then its fields); `fault`: one that breaks the protocol on purpose."""
        frame = self.value(frame)
        shown = describe(frame) if not fault else f"{describe(frame)}   [fault injected: {fault}]"
        self.write(packed_frame(frame), f"-> {shown}")
        self.sent(frame)

    def send_pieces(self, *pieces, fault):
        """Send bytes that are no well-formed frame: each piece as it is (bytes) or MessagePack-encoded."""
        data = b"".join(piece if isinstance(piece, bytes) else pack(self.value(piece)) for piece in pieces)
        self.write(data, f"-> {len(data)} bytes {data[:16].hex()}   [fault injected: {fault}]")

    def send_together(self, *frames):
        """Send frames, each (frame, fault or None), in one write."""
        data = bytearray()
        for frame, fault in frames:
            frame = self.value(frame)
            self.say(f"-> {describe(frame)}" + (f"   [fault injected: {fault}]" if fault else ""))
            data += packed_frame(frame)
            self.sent(frame, shut=False)
        self.write(bytes(data), "(the frames above, in one write)")
        if self.goodbye_sent:
            self.shut()

    def sent(self, frame, shut=True):
        kind = frame[0]
        stream = self.streams.get(frame[1]) if kind in SIGNALS else None
        if kind == 2:
            self.kit_subscribed.add(frame[2])
        elif kind == 12:
            self.goodbye_sent = True
            if shut:
                self.shut()
        if stream is None:
            return
        if kind == 5:
            stream.subscribed, stream.element_size = True, frame[2]
        elif kind == 6:
            stream.sent += 1
        elif kind == 9:
            stream.sent += frame[2]
        elif kind in (10, 11):
            if stream.part_of is None:
                stream.sent += 1
            stream.part_of = None if kind == 11 else frame[2]
        elif kind in (7, 8):
            stream.ended = TYPES[kind]

    def shut(self):
        """After goodbye: EOF to the client, which reads to the end of what was sent."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def refuse(self, reason):
        """End the session as a server answers a fault: goodbye naming it; nothing taken after it."""
        if not self.refused:
            self.refused = reason
        if not self.goodbye_sent:
            self.send([12, reason])

    # -- receiving

    def not_a_frame(self, fault):
        if self.goodbye_received is not None:
            violate("net.rstck.13", "nothing from the client after its goodbye", f"bytes that are not a frame: {fault}")
        else:
            super().not_a_frame(fault)
        self.refuse(str(fault))

    def arrived(self, frame):
        self.say(f"<- {describe(frame)}")
        self.inbox.append(frame)
        if self.goodbye_received is not None:
            violate("net.rstck.13", "nothing from the client after its goodbye", describe(frame))
            return
        kind = frame[0]
        if kind == 12:
            self.goodbye_received = frame
            if self.answer_goodbye and not self.goodbye_sent:
                self.send([12, ""])
            return
        if self.goodbye_sent:
            return  # it crossed the script's goodbye: ignored
        if self.client_hello is None:
            if kind != 0:
                violate("net.rstck.14", "the clientHello as the client's first frame (only goodbye may come before "
                        "it)", f"{describe(frame)} before its clientHello")
                self.refuse(f"{TYPES[kind]} before the clientHello")
            else:
                self.client_hello = frame
                if frame[1] != 0:
                    self.refuse(f"unsupported version {frame[1]}")
            return
        if kind in (0, 1):
            self.refuse(f"a {TYPES[kind]} after the clientHello")
        elif kind == 2:
            self.subscribed_to(frame)
        elif kind == 3:
            self.requested(frame)
        elif kind == 4:
            stream = self.streams.get(frame[1])
            if stream is not None and stream.open:
                stream.cancelled = True
        elif frame[1] not in self.kit_subscribed:
            violate("net.core.3", "signals only for ids of the script's subscribes", describe(frame))

    def subscribed_to(self, frame):
        stream = self.streams.get(frame[2])
        if stream is not None and stream.open:
            violate("net.core.3", "a subscribe only with an id that has no open stream (net.ids.1)",
                    f"{describe(frame)} while stream {frame[2]} is open")
            self.refuse(f"subscribe for id {frame[2]}, whose stream is open")
            return
        self.streams[frame[2]] = ServedStream(frame[2], frame[1], frame[3])
        self.numbers.setdefault(frame[2], len(self.numbers) + 1)
        if frame[1] != self.publisher:
            self.send([5, frame[2], 0])
            self.send([8, frame[2], f"the script serves only {self.publisher!r} on this connection"])
        elif frame[3] < 0:
            self.send([5, frame[2], 0])
            self.send([8, frame[2], "3.9: request(n) with n <= 0 is illegal"])

    def requested(self, frame):
        stream = self.streams.get(frame[1])
        if stream is None or not stream.open:
            return
        if frame[2] > 0:
            stream.requested = MAX_ID if stream.requested == MAX_ID else min(stream.requested + frame[2], MAX_ID)
            return
        if not stream.subscribed:
            self.send([5, stream.id, 0])
        self.send([8, stream.id, "3.9: request(n) with n <= 0 is illegal"])

    # -- waiting

    def state_holds(self, alternative):
        return False

    def arrived_already(self, kind):
        return super().arrived_already(kind) or (kind == "clientHello" and self.client_hello is not None)

    def holds(self, alternative, frame):
        return super().holds(alternative, frame) or bool(self.refused)

    def unless_refused(self):
        """Once the script ended the session for the client's fault, that finding is the verdict."""
        if self.refused:
            raise Stop()

    def wait(self, alternatives, rule, expected):
        try:
            return super().wait(alternatives, rule, expected)
        finally:
            self.unless_refused()

    def expect_subscribe(self, rule, expected):
        """The client's subscribe to its publisher."""
        for served in self.streams.values():
            if served.publisher == self.publisher and not served.subscribed and served.open:
                return served
        while True:
            self.unless_refused()
            try:
                frame = self.receive()
            except Closed:
                self.unless_refused()
                raise Broken(rule, expected, "the connection closed first") from None
            except Silent:
                self.unless_refused()
                raise Broken(rule, expected, "nothing more arrived before the deadline") from None
            if frame[0] == 2 and frame[1] == self.publisher and frame[2] in self.streams:
                self.unless_refused()
                return self.streams[frame[2]]
            self.stop_if_decided()

    def await_demand(self, number, rule, expected):
        """Read until the client's stream has outstanding demand; that demand."""
        served = self.streams[self.value(stream(number))]
        while True:
            self.unless_refused()
            if served.cancelled:
                raise Broken(rule, expected, f"the client cancelled stream {served.id} after {served.sent} elements")
            if served.ended:
                raise Broken(rule, expected, f"the client's request of 0 or below ended stream {served.id}")
            if served.outstanding > 0:
                return served.outstanding
            try:
                self.receive()
            except Closed:
                self.unless_refused()
                raise Broken(rule, expected, f"the client closed the connection while the script waited for demand "
                             f"(it requested {served.requested}, was sent {served.sent})") from None
            except Silent:
                self.unless_refused()
                raise Broken(rule, expected, f"no request came before the deadline (it requested "
                             f"{served.requested}, was sent {served.sent})") from None

    def serve(self, number, elements, rule, expected, form="onNext", part_size=0):
        """Send `elements` (hex) as the client's demand allows: as onNext, onNextPacked, or split in parts."""
        elements = [bytes.fromhex(element) for element in elements]
        served_id = self.value(stream(number))
        sent, element_id = 0, 0
        while sent < len(elements):
            demand = self.await_demand(number, rule, expected)
            batch = elements[sent:sent + min(demand, len(elements) - sent)]
            if form == "packed":
                self.send([9, served_id, len(batch), b"".join(batch)])
            elif form == "split":
                for element in batch:
                    parts = [element[at:at + part_size] for at in range(0, len(element), part_size)]
                    for part in parts[:-1]:
                        self.send([10, served_id, element_id, part])
                    self.send([11, served_id, element_id, parts[-1]])
                    element_id += 1
            else:
                for element in batch:
                    self.send([6, served_id, element])
            sent += len(batch)

    def pick_unused(self, count):
        """`count` ids the client never used, as rstck picks them: the ones above its highest while the id range
        has room, else from 0 up; the scenario names them unused(0), unused(1), ... in that order."""
        used = set(self.numbers)
        ids = list(range(max(used, default=-1) + 1, min(max(used, default=-1) + 1 + count, MAX_ID + 1)))
        ids += [i for i in range(len(used) + count) if i not in used][:count - len(ids)]
        self.unused_ids += [stream_id for stream_id in ids if stream_id not in self.unused_ids]

    def expect_answers_for(self, stream_id):
        self.kit_subscribed.add(stream_id)

    def hold_goodbye_answer(self):
        self.answer_goodbye = False

    def read_to_close(self, rule, expected):
        """Read (and check) what the client still sends, until it closes."""
        if not self.read_until_closed(deadline() - time.monotonic()):
            raise Broken(rule, expected, "the connection was still open at the deadline")

    def goodbye_then_close(self, rule, expected):
        """After a fault the script injected: the client's goodbye, then EOF."""
        if self.goodbye_received is None:
            self.wait([frame("goodbye")], rule, expected)
        self.read_to_close(rule, expected)

    def goodbye_or_close(self):
        """After the script's goodbye: the client's goodbye, or at least the close, before the deadline."""
        try:
            while self.goodbye_received is None:
                self.receive()
        except Closed:
            pass
        except Silent:
            raise Broken("net.closing.2", "the client's goodbye, or at least the close, after the script's goodbye",
                         "the connection was still open at the deadline") from None

    def optimistic_subscribe(self, within_s):
        """The client's subscribe, sent before any serverHello, if it comes within `within_s`."""
        end = time.monotonic() + within_s
        while not any(served.publisher == self.publisher for served in self.streams.values()):
            try:
                self.receive(max(0.0, end - time.monotonic()))
            except Silent:
                break
            except Closed:
                self.unless_refused()
                raise Broken("net.handshake.5", "the client to wait for the server's hello",
                             "it closed the connection before any serverHello") from None
        self.unless_refused()
        if not self.streams:
            say(f"(the client sent no subscribe within {within_s:.0f} s, before any serverHello: there is nothing "
                "for it to consider discarded)")
            raise Kept()

    def wait_exit(self, rule, expected):
        """Read the connection until the client closes it, then its exit, within the deadline; at the deadline
        the client is killed (and `rule` broken)."""
        while self.process.poll() is None and time.monotonic() < deadline():
            if not self.eof and self.sock.fileno() >= 0:
                try:
                    self.receive(0.05)
                except (Silent, Closed):
                    pass
            else:
                try:
                    self.process.wait(max(0.0, min(0.05, deadline() - time.monotonic())))
                except subprocess.TimeoutExpired:
                    pass
        killed = self.process.poll() is None
        self.kill()
        for reader in self.readers:
            reader.join(1.0)
        text = self.output["stdout"].decode("utf-8", "replace")
        self.lines = text.split("\n")[:-1] if text.endswith("\n") else (text.split("\n") if text else [])
        self.code = None if killed else self.process.returncode
        say(f"the client {'was killed' if killed else f'exited with status {self.code}'}; it printed "
            f"{len(self.lines)} lines{self.stderr_said()}")
        if killed and rule:
            raise Broken(rule, expected, "the client was still running at the deadline, and was killed")

    def kill(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            pass

    def finish(self):
        if self.sock.fileno() >= 0:
            if not self.goodbye_sent and not self.eof:
                # What the client sent on the heels of its last frame, rstck's reader has taken in by the end of
                # its check (a second subscribe right after the first, net.core.3); the script ends sooner, so it
                # reads for the shortest quiet window before its goodbye, after which a frame is ignored.
                try:
                    while True:
                        self.receive(QUIET_WINDOW_MIN_S)
                except (Silent, Closed):
                    pass
            if not self.goodbye_sent and not self.eof:  # the client may have said goodbye meanwhile, and had its answer
                self.send([12, "the check is over"])
            self.read_until_closed(CLOSE_LINGER_S)
            self.close()
        if self.process.poll() is None:
            try:
                self.process.wait(EXIT_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


class Kept(Exception):
    """The scenario cannot break the sentence with this client (rstck's verdict would be n/a)."""


class Client:
    """The script's side against a client command: its runs."""

    def __init__(self, command):
        self.argv = shlex.split(command)
        self.connections = []

    def run(self, publisher, hello=True):
        run = ClientRun(self.argv, publisher, hello)
        self.connections.append(run)
        return run

    def finish(self):
        for run in self.connections:
            run.finish()


def expect_printed(run, rule, elements):
    """The client printed exactly `elements` (hex), one a line."""
    for number, line in enumerate(run.lines, 1):
        if line.strip("0123456789abcdef") or len(line) % 2:
            raise CannotRun(f"line {number} of the client's stdout is {line[:40]!r}, not an element in lowercase "
                            "hex (the client contract)")
    if run.lines != elements:
        raise Broken(rule, f"the client to print the {len(elements)} elements {elements[:4]}, one a line",
                     f"it printed {len(run.lines)} lines {run.lines[:4]}")


def expect_exit_failed(run, rule):
    """The client's exit status says its stream failed."""
    if run.code == 0:
        raise Broken(rule, "a non-zero exit status (3): the stream failed",
                     "the client exited with status 0, reporting a completed stream")


def expect_exit_status(run, rule, code):
    """The client exited with status `code`, as the client contract says."""
    if run.code != code:
        raise Broken(rule, f"exit status {code} (the client contract)",
                     f"the client exited with status {run.code}{run.stderr_said()}")


def expect_answered_with_goodbye(run, rule):
    """The client said goodbye: in answer to the script's, or to the frame the scenario injected (rather than
    taking it)."""
    answer = run.goodbye_received if run.goodbye_received is not None else run.last_frame
    if answer is None or answer[0] != 12:
        raise Broken(rule, "the client's goodbye", f"the client answered with {describe(answer)}: it took the frame"
                     if answer is not None else "the client closed the connection without goodbye")


# -- The verdict ----------------------------------------------------------------------------------------------


def main(scenario, *, target, rule, deadline_s, promises=None):
    """Play the scenario against the target (the one it was written for, or the URL or command given as the
    argument), end every connection as rstck does, and judge: exit 1 with BROKEN lines while the implementation
    breaks a rule the script checks, 0 once it keeps them, 2 if the script cannot run. `promises`: how many
    elements each publisher of the user's the scenario subscribes to promises (the reserved names say so
    themselves)."""
    _config.update(rule=rule, deadline_s=deadline_s, promises=promises or {})
    given = sys.argv[1] if len(sys.argv) > 1 else target
    side = Kit(given) if given.startswith("tcp://") else Client(given)
    print(f"reproducing {rule} against {given} (deadline {deadline_s} s)\n", flush=True)
    _started[0] = time.monotonic()
    broken = []
    try:
        scenario(side)
    except Broken as exc:
        broken.append((exc.rule, exc.expected, exc.observed))
    except (Stop, Kept):
        pass
    except CannotRun as exc:
        print(f"\ncannot run: {exc}")
        _finish(side)
        os._exit(EXIT_CANNOT_RUN)
    _finish(side)
    broken += [found for found in _findings if found[0] not in {b[0] for b in broken}]
    print()
    # One verdict line, the scenario's own rule's if it broke; every other rule broken is a detail after it.
    broken.sort(key=lambda found: found[0] != rule)
    for item, expected, observed in broken[:1]:
        print(f"BROKEN {item}: expected {expected}; observed {observed}")
    if broken[1:]:
        print(f"  and {len(broken) - 1} more violation{'s' * (len(broken) != 2)} in this run:")
    for item, expected, observed in broken[1:]:
        print(f"    {item}: expected {expected}; observed {observed}")
    if not broken:
        print(f"kept: nothing broke {rule} (nor any rule the script checks on every frame) in this scenario")
    sys.stdout.flush()
    os._exit(EXIT_BROKEN if broken else EXIT_KEPT)


def _finish(side):
    try:
        side.finish()
    except (OSError, Broken, Stop, CannotRun):
        pass

"""The kit's end of one connection, spoken frame by frame: the wire log and the rules every frame must keep.

A `WirePeer` runs on a check's thread with a blocking socket whose every wait is bounded by the check's
deadline. Every frame sent or received goes into the check's trace, numbered, decoded and timed from the
connection's start; a fault the kit injects on purpose is labelled as one. What the other side sends is
checked as it arrives, whatever the check is about (`Ledger`): a frame that is not well formed, a signal for an
id the kit never used, more elements than requested, an element of the wrong size, split parts out of order,
anything after the other side's goodbye. So a check for one item also charges every other item it sees broken,
as the probes do in-process.

"Nothing more arrives" is decided by reading to the other side's goodbye or EOF, or by a quiet window derived
from the round trip measured on this connection (`quiet`); a verdict that rests on a window says so.

What the kit sends, and what it waits for between its sends, is kept in the check's evidence as it happens
(rstck/protocols/network/recording.py), so that a standalone script can do the same against the server.
"""

from __future__ import annotations

import collections
import dataclasses
import socket
import struct
import time
from typing import Any, Callable

from rstck.core.evidence import EXPECTATION
from rstck.protocols.network.delivery import wait_until_read
from rstck.protocols.network.recording import WIRE, Awaited, connection_name, operation
from rstck.protocols.network.wire_log import log_frame, log_text
from rstck.core.verdict import RuleViolation, TargetError
from rstck.protocols.network.wire import (DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION, Cancel, ClientHello,
                     FrameDecoder, Goodbye, OnComplete, OnError, OnNext, OnNextLastPart, OnNextPacked,
                     OnNextPart, Request, ServerHello, Subscribe, Subscribed, WireError, describe, encode)

READ_SIZE = 64 * 1024
# The quiet window: this many measured round trips, within these bounds (a loopback round trip is well under a
# millisecond; a server's own threads may take a scheduler tick or two to produce what a request asked for).
QUIET_ROUND_TRIPS = 20
QUIET_WINDOW_MIN_S = 0.025
QUIET_WINDOW_MAX_S = 1.0
# How long the kit waits for the other side to close after the goodbyes, before it closes itself.
CLOSE_LINGER_S = 1.0

# The server's signals to a subscriber, which carry its id (net.core.3).
SIGNALS = (Subscribed, OnNext, OnNextPacked, OnNextPart, OnNextLastPart, OnComplete, OnError)
ELEMENTS = (OnNext, OnNextPacked, OnNextPart, OnNextLastPart)
UNBOUNDED = 2**63 - 1
# The elements of a stream kept for a check to compare (the checks' streams are far smaller); past either
# bound they are counted, not kept, so a server that floods costs the kit no memory.
KEPT_ELEMENTS = 100_000
KEPT_BYTES = 32 * 2**20


# Linux's switch for acknowledging at once; it lapses by itself, so it is set again after every read.
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)


def without_delays(sock: Any) -> None:
    """The kit's end of a connection delays nothing: its frames leave at once (no Nagle), and what arrives is
    acknowledged at once. A server that leaves Nagle's algorithm on holds each small write until the last is
    acknowledged; a delayed ACK on the kit's side (40 ms and more) would then slow every exchange, and inflate
    the round trip that the quiet window is derived from."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    acknowledge_at_once(sock)


def acknowledge_at_once(sock: Any) -> None:
    if _QUICKACK is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
        except OSError:
            pass


class PeerClosed(Exception):
    """The other side closed the connection (EOF or reset) where the kit needed a frame."""


class Silent(Exception):
    """Nothing arrived within the time given."""


@dataclasses.dataclass
class StreamState:
    """What both ends of the kit track of one stream, whichever side of it the kit is on."""

    id: int
    publisher: str
    requested: int = 0  # cumulative; UNBOUNDED once it reaches 2**63-1
    element_size: int = 0
    subscribed: bool = False
    cancelled: bool = False
    part_of: int | None = None  # the element id whose parts are under way


@dataclasses.dataclass
class _Stream(StreamState):
    """One subscribe the kit made on this connection, as the kit sees it from the wire."""

    received: int = 0  # elements, counted at onNext, per packed element, and at an element's first part
    terminal: str = ""  # "onComplete" or "onError(...)"
    parts: list[bytes] = dataclasses.field(default_factory=list)
    part_bytes: int = 0
    elements: list[bytes] = dataclasses.field(default_factory=list)  # the first ones, within KEPT_*
    kept_bytes: int = 0
    error: str = ""
    unreadable: bool = False  # packed frames came without an element size: charged once, then not read
    after_cancel: int = 0  # elements that arrived after the kit's cancel
    last_after_cancel: int = 0  # the number (Ledger.taken) of the last frame that brought them
    ended_at: int = 0  # the number (Ledger.taken) of the frame that brought the terminal signal
    element_frames: int = 0  # frames that carried elements (or an element's last part)
    last_element_at: float = 0.0
    longest_gap_s: float = 0.0  # the longest time between two such frames: how unevenly the server sends it

    @property
    def open(self) -> bool:
        return not self.terminal and not self.cancelled


class Ledger:
    """The rules every frame from a server must keep, checked as it arrives; violations go to `violate` (a
    reproducer's script checks every frame it reads the same way: the claim WIRE)."""

    def __init__(self, violate: Callable[..., None]):
        self._violate = violate
        self.streams: dict[int, _Stream] = {}
        self.used_ids: set[int] = set()
        # Frames taken so far: a frame's number says what the server sent before what (net.transport.3), which the
        # time it was read cannot, several frames being read at once.
        self.taken = 0

    def violate(self, rule: str, expected: str, observed: str) -> None:
        self._violate(rule, expected, observed, claim=WIRE)

    def subscribe(self, frame: Subscribe) -> _Stream:
        stream = _Stream(frame.subscriber, frame.publisher)
        self.streams[frame.subscriber] = stream
        self.used_ids.add(frame.subscriber)
        self.request(frame.subscriber, frame.initial_demand)
        return stream

    def request(self, stream_id: int, n: int) -> None:
        stream = self.streams.get(stream_id)
        if stream is not None and stream.open and n > 0:
            stream.requested = min(stream.requested + n, UNBOUNDED)

    def cancel(self, stream_id: int) -> None:
        stream = self.streams.get(stream_id)
        if stream is not None:
            stream.cancelled = True

    def take(self, frame: Any) -> None:
        """Check one frame from the server against the streams the kit opened."""
        self.taken += 1
        if type(frame) not in SIGNALS:
            return
        stream = self.streams.get(frame.subscriber)
        if stream is None:
            if frame.subscriber not in self.used_ids:
                self.violate("net.core.3", "only ids the kit's subscribes gave", f"{describe(frame)}: the kit never "
                             f"subscribed with id {frame.subscriber}")
            return
        if stream.terminal:  # a cancel the kit made after it crosses nothing
            self.violate("1.7", "no signal after the stream's terminal signal",
                         f"{describe(frame)} after {stream.terminal} of stream {stream.id}")
            return
        if stream.cancelled:
            if type(frame) in ELEMENTS and type(frame) is not OnNextPart:
                stream.after_cancel += frame.count if type(frame) is OnNextPacked else 1
                stream.last_after_cancel = self.taken
            return  # sent before the cancel arrived: it may cross it (1.8, net.rstck.10)
        kind = type(frame)
        if kind is Subscribed:
            if stream.subscribed:
                self.violate("1.9", "one subscribed per subscribe", f"a second {describe(frame)}")
            stream.subscribed, stream.element_size = True, frame.element_size
            return
        if not stream.subscribed:
            self.violate("1.9", "subscribed before any other signal of the stream",
                         f"{describe(frame)} before subscribed")
        if kind in (OnComplete, OnError):
            if stream.part_of is not None:
                self.violate("net.split.3", "the parts of an element end with its onNextLastPart",
                             f"{describe(frame)} while element {stream.part_of} was unfinished")
            stream.terminal, stream.ended_at = describe(frame), self.taken
            stream.error = frame.message if kind is OnError else ""
            return
        self._element(stream, frame)

    def _element(self, stream: _Stream, frame: Any) -> None:
        kind = type(frame)
        if kind is not OnNextPart:
            now = time.monotonic()
            if stream.element_frames:
                stream.longest_gap_s = max(stream.longest_gap_s, now - stream.last_element_at)
            stream.element_frames, stream.last_element_at = stream.element_frames + 1, now
        if kind in (OnNext, OnNextPacked) and stream.part_of is not None:
            self.violate("net.split.3", "no other element of the stream between the parts of one element",
                         f"{describe(frame)} while element {stream.part_of} was unfinished")
            stream.part_of, stream.parts, stream.part_bytes = None, [], 0
        if kind is OnNext:
            self._count(stream, 1, "1.1", frame)
            self._sized(stream, frame.element, frame)
            self._keep(stream, [frame.element])
        elif kind is OnNextPacked:
            if not stream.element_size:
                # A frame out of range, the fault docs/wire-format.md names net.rstck.3 (not the MAY of packing);
                # its elements cannot be told apart, so the stream's later packed frames are not charged again.
                if not stream.unreadable:
                    stream.unreadable = True
                    self.violate("net.rstck.3", "onNextPacked only in a stream whose subscribed declared an "
                                 "element size", f"{describe(frame)} in a stream of element_size 0")
                return
            try:
                elements = frame.elements(stream.element_size)
            except WireError as error:
                self.violate("net.core.4", f"{stream.element_size}-byte elements", f"{describe(frame)}: {error.detail}")
                return
            self._count(stream, len(elements), "net.packed.3", frame)
            self._keep(stream, elements)
        else:
            if stream.part_of is None:
                self._count(stream, 1, "1.1", frame)
                stream.part_of = frame.element_id
            elif frame.element_id != stream.part_of:
                self.violate("net.split.3", "the parts of one element before any part of the next",
                             f"{describe(frame)} while element {stream.part_of} was unfinished")
                stream.part_of, stream.parts, stream.part_bytes = frame.element_id, [], 0
            stream.part_bytes += len(frame.data)
            if stream.part_bytes <= KEPT_BYTES:  # past it, an element is measured, not joined
                stream.parts.append(frame.data)
            else:
                stream.parts = []
            if kind is OnNextLastPart:
                size, element = stream.part_bytes, b"".join(stream.parts)
                stream.part_of, stream.parts, stream.part_bytes = None, [], 0
                if stream.element_size and size != stream.element_size:
                    self.violate("net.core.4", f"elements of the declared {stream.element_size} bytes",
                                 f"{describe(frame)}: parts joining to {size} bytes")
                if size <= KEPT_BYTES:
                    self._keep(stream, [element])

    @staticmethod
    def _keep(stream: _Stream, elements: list[bytes]) -> None:
        for element in elements:
            if len(stream.elements) >= KEPT_ELEMENTS or stream.kept_bytes + len(element) > KEPT_BYTES:
                return
            stream.elements.append(element)
            stream.kept_bytes += len(element)

    def _count(self, stream: _Stream, n: int, rule: str, frame: Any) -> None:
        stream.received += n
        if stream.requested != UNBOUNDED and stream.received > stream.requested:
            self.violate(rule, f"at most the {stream.requested} elements requested of stream {stream.id}",
                         f"{describe(frame)} made it {stream.received}")

    def _sized(self, stream: _Stream, element: bytes, frame: Any) -> None:
        if stream.element_size and len(element) != stream.element_size:
            self.violate("net.core.4", f"elements of the declared {stream.element_size} bytes",
                         f"{describe(frame)}: an element of {len(element)} bytes")


class WirePeer:
    """One TCP connection the kit speaks by hand, as a client of the server under test."""

    other_side = "server"  # who is under test, as the wire log and the findings name it

    def __init__(self, sock: socket.socket, session: Any, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES):
        self.sock = sock
        self.session = session
        self.decoder = FrameDecoder(max_frame_bytes)
        self.ledger = Ledger(session.findings.violate)
        self.started = time.monotonic()
        self.inbox: collections.deque[Any] = collections.deque()
        self.eof = False
        self.goodbye_received: Goodbye | None = None
        self.goodbye_sent = False
        self.server_hello: ServerHello | None = None
        self.round_trip_s: float | None = None
        self.connect_s = 0.0  # how long the TCP handshake took: a round trip measured before any frame
        self._next_id = 1

    @classmethod
    def connect(cls, session: Any, address: tuple[str, int], *, hello: bool = True) -> WirePeer:
        """A fresh connection to the server under test; sends clientHello(0) unless told not to."""
        started = time.monotonic()
        remaining = max(0.05, session.deadline - started)
        try:
            sock = socket.create_connection(address, timeout=remaining)
        except OSError as exc:
            raise PeerClosed(f"cannot connect to {address[0]}:{address[1]}: {exc.strerror or exc}") from exc
        without_delays(sock)
        peer = cls(sock, session)
        peer.connect_s = time.monotonic() - started
        peer.record("connect")
        peer.note(f"connected to {address[0]}:{address[1]}")
        if hello:
            peer.send(ClientHello(PROTOCOL_VERSION, ()))
        return peer

    # -- the evidence ------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """This connection's name in the check's evidence."""
        return connection_name(self.session, self)

    def recorded(self, op: str | None, **fields: Any) -> Any:
        """An operation of the kit's on this connection, kept in the evidence as `op` with `fields` (None: one
        that is not kept, nor is anything made inside it)."""
        return operation(self.session, None if op is None else {"op": op, "conn": self.name, **fields})

    def record(self, op: str, **fields: Any) -> None:
        """An operation made at once (a connect, a send, a reset), kept in the evidence."""
        with self.recorded(op, **fields):
            pass

    # -- the wire log ------------------------------------------------------------------------------------------

    def note(self, text: str) -> None:
        log_text(self.session.trace, self.started, text)

    # -- sending -----------------------------------------------------------------------------------------------

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def send(self, frame: Any, *, fault: str = "") -> None:
        """Send one frame; `fault` labels a frame that breaks the protocol on purpose."""
        self._send_bytes(encode(frame), f"-> {describe(frame)}", fault)
        kind = type(frame)
        if kind is Subscribe:
            if fault:  # what the server makes of the id from now on is the check's to judge, not the ledger's
                self.ledger.used_ids.add(frame.subscriber)
                self.ledger.streams.pop(frame.subscriber, None)
            else:
                self.ledger.subscribe(frame)
        elif kind is Request:
            self.ledger.request(frame.subscriber, frame.demand)
        elif kind is Cancel:
            self.ledger.cancel(frame.subscriber)
        elif kind is Goodbye:
            self.goodbye_sent = True

    def send_bytes(self, data: bytes, *, fault: str) -> None:
        """Send bytes that are not a well-formed frame: always a fault injected on purpose."""
        shown = data[:16].hex() + ("…" if len(data) > 16 else "")
        self._send_bytes(data, f"-> {len(data)} bytes {shown}", fault)

    def send_piece(self, data: bytes, text: str) -> None:
        """Send part of a well-formed frame (the caller keeps the ledger once the frame is whole)."""
        self._send_bytes(data, text, "")

    def until_read(self) -> None:
        """Wait until the other side has read everything sent so far: known when it is on this host, else the
        quiet window (settled by a quiet period, as the row then says)."""
        with self.recorded("until_read"):
            self._until_read()

    def _until_read(self) -> None:
        end = min(self.session.deadline, time.monotonic() + QUIET_WINDOW_MAX_S)
        outcome = wait_until_read(self.sock, end)
        if outcome == "read":
            self.note(f"the {self.other_side} has read it (its receive queue is empty)")
        elif outcome == "closed":
            self.note(f"the {self.other_side} has closed its end")
        elif outcome == "not read":
            self.note(f"the {self.other_side} had not read it after {QUIET_WINDOW_MAX_S:.0f} s")
        else:  # not on this host: a window from the round trip the connect took (no frame may be sent now)
            self.quiet(min(max(QUIET_ROUND_TRIPS * self.connect_s, QUIET_WINDOW_MIN_S), QUIET_WINDOW_MAX_S))

    def _send_bytes(self, data: bytes, text: str, fault: str) -> None:
        if self.goodbye_sent and not fault:
            self.session.findings.kit_fault("net.rstck.13", "nothing sent after the kit's goodbye", text)
            return
        self.record("send", bytes=data.hex(), shows=text.removeprefix("-> "), **({"fault": fault} if fault else {}))
        self.note(f"{text}   [fault injected: {fault}]" if fault else text)
        self.sock.settimeout(max(0.05, self.session.deadline - time.monotonic()))
        try:
            self.sock.sendall(data)
        except (TimeoutError, socket.timeout):
            self.note("the server stopped reading: the send did not finish before the deadline")
            raise TargetError(f"the server stopped reading: a send of {len(data)} bytes did not finish before "
                              "the deadline") from None
        except OSError as exc:  # the other side closed or reset: what it sent before is still read
            self.note(f"send failed: {exc.strerror or exc}")

    def subscribe(self, publisher: str, demand: int = 0, *, stream_id: int | None = None) -> int:
        stream_id = self.new_id() if stream_id is None else stream_id
        self.send(Subscribe(publisher, stream_id, demand))
        return stream_id

    def stream(self, stream_id: int) -> _Stream:
        return self.ledger.streams[stream_id]

    # -- receiving ---------------------------------------------------------------------------------------------

    def receive(self, within_s: float | None = None) -> Any:
        """The next frame, within `within_s` (the check's deadline at most). Raises Silent if none came in
        time, PeerClosed at EOF or reset."""
        end = self.session.deadline if within_s is None else min(self.session.deadline,
                                                                  time.monotonic() + within_s)
        while not self.inbox:
            if self.eof:
                raise PeerClosed("the server closed the connection")
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise Silent()
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(READ_SIZE)
            except (TimeoutError, socket.timeout):
                raise Silent() from None
            except OSError as exc:  # a reset is a close (net.closing.1), not a kit error
                data = b""
                self.note(f"connection reset ({exc.strerror or exc})")
            if not data:
                self._at_eof()
                continue
            acknowledge_at_once(self.sock)
            self._decode(data)
        return self.inbox.popleft()

    def _at_eof(self) -> None:
        self.eof = True
        self.note("<- EOF")
        try:
            self.decoder.close()
        except WireError as error:
            self.session.findings.violate("net.framing.4", "whole frames",
                                          f"the {self.other_side} closed the connection inside a frame: {error.detail}",
                                          claim=WIRE)

    def _decode(self, data: bytes) -> None:
        frames, fault = self.decoder.feed_until_fault(data)
        for frame in frames:
            self._arrived(frame)
        if fault is not None:
            self.note(f"<- bytes that are not a frame: {fault}")
            if "belongs to an extension" in fault.detail:
                self.session.findings.violate("net.extensions.1", "no message of an extension type (64 and above): the "
                                              "kit's hello named no extension", fault.detail, claim=WIRE)
            else:
                self.session.findings.violate("net.framing.4", "well-formed frames (docs/wire-format.md)", str(fault),
                                              claim=WIRE)
            self.eof = True  # nothing after it can be read as frames
            self.sock.close()

    def _arrived(self, frame: Any) -> None:
        log_frame(self.session.trace, self.started, "<-", frame)
        if self.goodbye_received is not None:
            self.session.findings.violate("net.rstck.13", "nothing after the server's goodbye", describe(frame),
                                          claim=WIRE)
            return
        kind = type(frame)
        if kind is Goodbye:
            self.goodbye_received = frame
        elif kind is ServerHello:
            if self.server_hello is None:
                self.server_hello = frame
        elif kind is Subscribe and not self.goodbye_sent:
            # The server subscribes to the kit (net.core.1): the kit publishes nothing, and says so (1.9).
            self.send(Subscribed(frame.subscriber, 0))
            self.send(OnError(frame.subscriber, "the kit publishes nothing on this connection"))
        self.ledger.take(frame)
        self.inbox.append(frame)

    # -- what a wait reads for (Awaited: the test and its description, which the evidence keeps) ----------------

    def ended(self, stream_id: int) -> Awaited:
        """Stream `stream_id` has had its terminal signal."""
        return Awaited(lambda _: bool(self.ledger.streams[stream_id].terminal), {"ended": stream_id})

    def has_received(self, stream_id: int, count: int) -> Awaited:
        """Stream `stream_id` has brought `count` elements."""
        return Awaited(lambda _: self.ledger.streams[stream_id].received >= count, {"received": [stream_id, count]})

    def frame_of(self, *kinds: type, stream_id: int | None = None) -> Awaited:
        """The frame read is of one of `kinds` (for stream `stream_id`, when given)."""
        return Awaited(lambda frame: type(frame) in kinds and (stream_id is None or frame.subscriber == stream_id),
                       {"frame": [kind.name for kind in kinds], **({"id": stream_id} if stream_id is not None
                                                                    else {})})

    def more_element_frames(self, more: dict[int, int]) -> Awaited:
        """Each stream of `more` has brought that many more frames of elements than so far."""
        streams = {stream_id: self.ledger.streams[stream_id] for stream_id in more}
        at_least = {stream_id: streams[stream_id].element_frames + n for stream_id, n in more.items()}
        return Awaited(lambda _: all(streams[i].element_frames >= n for i, n in at_least.items()),
                       {"more_frames": [[stream_id, n] for stream_id, n in more.items()]})

    def until(self, done: Callable[[Any], bool], *, rule: str, expected: str) -> list[Any]:
        """Frames up to and including the first for which `done` holds; a violation of `rule` if the server
        closes or the deadline comes first. `done` is Awaited, so that the evidence says what the wait was for."""
        if not isinstance(done, Awaited):
            self.session.evidence.cannot("the kit waited for something its evidence does not describe")
        with self.recorded("wait", until=getattr(done, "described", []), rule=rule, expected=expected):
            return self._until(done, rule, expected)

    def _until(self, done: Callable[[Any], bool], rule: str, expected: str) -> list[Any]:
        seen: list[Any] = []
        while True:
            try:
                frame = self.receive()
            except PeerClosed:
                raise RuleViolation(rule, expected, f"the connection closed first (after {self._shown(seen)})",
                                    claim=EXPECTATION) from None
            except Silent:
                raise RuleViolation(rule, expected, f"nothing more arrived before the deadline (after "
                                    f"{self._shown(seen)})", timed_out=True, claim=EXPECTATION) from None
            seen.append(frame)
            if done(frame):
                return seen
            if self.session.findings.must_broken:  # a MUST item is broken already: the verdict is decided
                self.session.findings.raise_pending()

    def until_ended(self, stream_id: int, *, rule: str, expected: str) -> _Stream:
        """Read until stream `stream_id` has its terminal signal; the stream."""
        stream = self.stream(stream_id)
        if not stream.terminal:
            self.until(self.ended(stream_id), rule=rule, expected=expected)
        return stream

    def quiet(self, window: float | None = None) -> list[Any]:
        """The frames that arrive until none has for the quiet window, or `window` (the check's deadline bounds
        it)."""
        measured = window is None
        window = self.quiet_window() if window is None else window
        seen: list[Any] = []
        with self.recorded("quiet", **({} if measured else {"window_s": window})):
            while True:
                try:
                    seen.append(self.receive(window))
                except (Silent, PeerClosed):
                    self.session.note_settled("quiet-period", window)
                    return seen

    def quiet_window(self) -> float:
        if self.round_trip_s is None:
            self.measure_round_trip()
        return min(max(QUIET_ROUND_TRIPS * (self.round_trip_s or 0.0), QUIET_WINDOW_MIN_S), QUIET_WINDOW_MAX_S)

    def measure_round_trip(self) -> float:
        """A subscribe to rstck/empty and its onComplete: a round trip through the server's read loop."""
        started = time.monotonic()
        stream_id = self.new_id()
        with self.recorded("round_trip", id=stream_id):
            self.subscribe("rstck/empty", stream_id=stream_id)
            self.until_ended(stream_id, rule="net.core.2", expected="rstck/empty to complete (the reserved names, "
                             "docs/wire-format.md)")
        self.round_trip_s = time.monotonic() - started
        self.note(f"round trip {self.round_trip_s * 1000:.2f} ms: quiet window "
                  f"{self.quiet_window() * 1000:.0f} ms")
        return self.round_trip_s

    # -- ending ------------------------------------------------------------------------------------------------

    def goodbye_then_close(self, *, rule: str, expected: str = "goodbye with a reason, then the connection closed") \
            -> Goodbye:
        """After a fault the kit injected, or the kit's goodbye: the server's goodbye (a violation of `rule` if the
        connection closes or the deadline comes first), then its close (`after_goodbye`)."""
        frames = self.until(self.frame_of(Goodbye), rule=rule, expected=expected)
        self.after_goodbye()
        return frames[-1]

    def after_goodbye(self) -> None:
        """Read to the close (EOF or reset) after the server's goodbye, for CLOSE_LINGER_S at most. Whatever
        arrives meanwhile is net.rstck.13's, charged as it arrives. A connection still open then decides
        nothing: after goodbye either side may close it (the practical note of docs/wire-format.md has the
        sender of goodbye read on until the other side's EOF), so the kit closes it."""
        end = min(self.session.deadline, time.monotonic() + CLOSE_LINGER_S)
        with self.recorded("after_goodbye"):
            try:
                while True:
                    self.receive(max(0.0, end - time.monotonic()))
            except PeerClosed:
                return
            except Silent:
                self.note(f"the connection was still open {CLOSE_LINGER_S:.0f} s after the server's goodbye: the "
                          "kit closes it")

    def finish(self) -> None:
        """End the case as a well-behaved peer: goodbye, read to the answer or EOF (bounded), close."""
        if self.sock.fileno() < 0:
            return
        try:
            with self.recorded(None):  # a script ends its connections so of itself
                if not self.goodbye_sent and not self.eof:
                    self.send(Goodbye("the check is over"))
                end = min(self.session.deadline, time.monotonic() + CLOSE_LINGER_S)
                while not self.eof and self.goodbye_received is None:
                    self.receive(max(0.0, end - time.monotonic()))
        except (Silent, PeerClosed, OSError):
            pass
        finally:
            self.close()

    def reset(self) -> None:
        """Abort the connection (RST), as a crashed peer would."""
        self.record("reset")
        self.note("-> connection reset   [fault injected: the kit resets the connection]")
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    @staticmethod
    def _shown(frames: list[Any]) -> str:
        if not frames:
            return "no frame"
        shown = ", ".join(describe(f) for f in frames[-3:])
        return f"{len(frames)} frames, the last {shown}" if len(frames) > 3 else shown

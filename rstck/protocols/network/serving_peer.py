"""The kit's end of a connection that a client under test opened: the kit as the server, frame by frame.

A `ServingPeer` is a `WirePeer` turned around. It keeps the wire log, the deadline-bounded waits and the fault
labels of its parent, and checks every frame from the client as it arrives (`ClientLedger`): a frame that is
not well formed is net.framing.4, a message type of an extension nobody negotiated net.extensions.1, anything
after the client's goodbye net.rstck.13, a subscribe for an id whose stream is still open net.core.3, a message
before the clientHello net.rstck.14.

When the client's fault makes the kit end the session with goodbye, the kit sends nothing more (not the
serverHello a check withheld, not an answer) and the check stops where it waits next: that finding is its verdict,
and the check's own item, which it kept from being decided, is `blocked` by it (`unless_refused`).

What the kit sends and waits for is kept in the check's evidence (rstck/protocols/network/recording.py) with the
client's streams named by their order (the client picks their ids), so that a script plays the same server.

As a server the kit is a well-behaved peer, and refuses to be anything else unless a check injects a fault on
purpose (a frame sent with a `fault` label): it counts each stream's demand and never sends more elements than
the client requested (1.1, net.packed.3), sends subscribed before any other signal of a stream (1.9) and nothing
after its terminal signal (1.7); it answers what the wire format says a server answers (docs/wire-format.md,
"Faults") on its own: goodbye for a frame it cannot read or a message out of place, subscribed then onError for
a request of 0 or below (3.9) or a name it does not serve, its own goodbye for the client's.
"""

from __future__ import annotations

import dataclasses
import socket
import time
from typing import Any

from rstck.core.evidence import EXPECTATION
from rstck.core.verdict import RuleViolation, TargetError
from rstck.protocols.network.wire import (PROTOCOL_VERSION, Cancel, ClientHello, Goodbye, OnComplete, OnError, OnNext, OnNextLastPart,
                     OnNextPacked, OnNextPart, Request, ServerHello, Subscribe, Subscribed, describe,
                     encode, encode_raw)
from rstck.protocols.network.peer import QUIET_WINDOW_MAX_S, SIGNALS, UNBOUNDED, PeerClosed, Silent, StreamState, WirePeer
from rstck.protocols.network.recording import WIRE, Awaited, as_data
from rstck.protocols.network.wire_log import log_frame

REQUEST_ZERO_MESSAGE = "3.9: request(n) with n <= 0 is illegal"


@dataclasses.dataclass
class ServedStream(StreamState):
    """One subscribe of the client's, as the kit serves it (`subscribed`: the kit sent subscribed)."""

    sent: int = 0  # elements, counted at onNext, per packed element, and at an element's first part
    ended: str = ""  # the terminal signal the kit sent

    @property
    def open(self) -> bool:
        return not self.ended and not self.cancelled

    @property
    def outstanding(self) -> int:
        return UNBOUNDED if self.requested == UNBOUNDED else self.requested - self.sent


class ClientLedger:
    """The client's streams: what each requested and what the kit sent; what the kit may send next."""

    def __init__(self) -> None:
        self.streams: dict[int, ServedStream] = {}
        self.kit_subscribed: set[int] = set()  # ids the kit subscribed with, at the client's publishers
        self.numbers: dict[int, int] = {}  # the client's stream ids -> their order among its subscribes, from 1
        self.unused: dict[int, int] = {}  # ids the kit chose as ones the client never used -> their order, from 0

    def subscribe(self, frame: Subscribe) -> ServedStream:
        stream = ServedStream(frame.subscriber, frame.publisher, requested=max(0, frame.initial_demand))
        self.streams[frame.subscriber] = stream
        self.numbers[frame.subscriber] = len(self.numbers) + 1
        return stream

    def unused_ids(self, count: int) -> list[int]:
        """`count` ids the client never used: the ones above its highest while the id range (0 to 2**63-1) has
        room, else from 0 up. A client may take any id of the range, the last one included."""
        used = self.streams
        ids = [i for i in range(max(used) + 1, min(max(used) + 1 + count, UNBOUNDED + 1))]
        ids += [i for i in range(len(used) + count) if i not in used][:count - len(ids)]
        self.unused.update((stream_id, len(self.unused)) for stream_id in ids if stream_id not in self.unused)
        return ids

    def as_data(self, value: Any) -> Any:
        """A value of a frame the kit sends, as data (rstck/protocols/network/recording.py): a stream of the
        client's as {"stream": its number}, an id chosen as unused as {"unused": its number}."""
        if isinstance(value, ServedStream):
            return {"stream": self.numbers[value.id]}
        return as_data(value)

    def frame_data(self, frame: Any) -> list[Any]:
        """A frame the kit sends as data: its type and fields, the subscriber named as `as_data` names it."""
        values = [frame.TYPE, *frame._values(frame)]
        if "subscriber" in frame._fields:
            at = 1 + frame._fields.index("subscriber")
            stream_id = values[at]
            if stream_id in self.numbers:
                values[at] = {"stream": self.numbers[stream_id]}
            elif stream_id in self.unused:
                values[at] = {"unused": self.unused[stream_id]}
        return [self.as_data(value) if not isinstance(value, dict) else value for value in values]

    def request(self, stream: ServedStream, n: int) -> None:
        stream.requested = min(stream.requested + n, UNBOUNDED) if stream.requested != UNBOUNDED else UNBOUNDED

    def refusal(self, frame: Any) -> tuple[str, str, str] | None:
        """(rule, expected, observed) if sending `frame` would break a rule of a publisher; None if it may go."""
        kind = type(frame)
        if kind is Subscribe:
            return None
        if kind not in SIGNALS:
            return None
        stream = self.streams.get(frame.subscriber)
        shown = describe(frame)
        if stream is None:
            return "net.core.3", "signals only for ids the client subscribed with", f"{shown}: no such subscribe"
        if stream.ended:
            return "1.7", "no signal after the stream's terminal signal", f"{shown} after {stream.ended}"
        if kind is Subscribed:
            return ("1.9", "one subscribed per subscribe", f"a second {shown}") if stream.subscribed else None
        if not stream.subscribed:
            return "1.9", "subscribed before any other signal of the stream", f"{shown} before subscribed"
        count = {OnNext: 1, OnNextPacked: getattr(frame, "count", 0)}.get(kind, 0)
        if kind in (OnNextPart, OnNextLastPart) and stream.part_of is None:
            count = 1
        if count and stream.outstanding < count:
            rule = "net.packed.3" if kind is OnNextPacked else "1.1"
            return rule, f"at most the {stream.requested} elements requested of stream {stream.id}", \
                f"{shown} would make it {stream.sent + count}"
        return None

    def sent(self, frame: Any) -> None:
        """Count a frame the kit sent."""
        kind = type(frame)
        if kind is Subscribe:
            self.kit_subscribed.add(frame.subscriber)
            return
        stream = self.streams.get(getattr(frame, "subscriber", None)) if kind in SIGNALS else None
        if stream is None:
            return
        if kind is Subscribed:
            stream.subscribed, stream.element_size = True, frame.element_size
        elif kind is OnNext:
            stream.sent += 1
        elif kind is OnNextPacked:
            stream.sent += frame.count
        elif kind in (OnNextPart, OnNextLastPart):
            if stream.part_of is None:
                stream.sent += 1
            stream.part_of = None if kind is OnNextLastPart else frame.element_id
        elif kind in (OnComplete, OnError):
            stream.ended = describe(frame)


class ServingPeer(WirePeer):
    """The connection a client under test opened to the kit's listener; the kit speaks as the server.

    `publisher` is the name the kit gave the client: a subscribe to any other name is answered as a server
    answers a name it does not serve (subscribed, then onError: net.rstck.11)."""

    other_side = "client"

    def __init__(self, sock: socket.socket, session: Any, *, publisher: str):
        super().__init__(sock, session)
        self.ledger = ClientLedger()  # the frames from the client are checked here, not by WirePeer's Ledger
        self.publisher = publisher
        self.client_hello: ClientHello | None = None
        # The kit answers the client's goodbye with its own at once; a check that wants to send something first
        # (net.rstck.13) turns this off.
        self.answer_goodbye = True
        self.refused = ""  # why the kit ended the session with goodbye, when the client made it
        self.unreadable = False  # the client sent bytes that are not a frame: nothing after them is read

    # -- sending -----------------------------------------------------------------------------------------------

    def send(self, frame: Any, *, fault: str = "") -> None:
        """Send one frame; `fault` labels a frame that breaks the protocol on purpose. Without one, a frame that
        would break a publisher's rule is not sent, and the check's verdict is the kit's own error."""
        refusal = None if fault else self._refusal(frame)
        if refusal is not None:
            self.session.findings.kit_fault(*refusal)
            return
        self._record_send(frame=self.ledger.frame_data(frame), shows=describe(frame), fault=fault)
        self._send_bytes(encode(frame), f"-> {describe(frame)}", fault)
        self._sent(frame)

    def inject(self, *pieces: Any, fault: str) -> None:
        """Send bytes that are not a well-formed frame, always a fault injected on purpose: each of `pieces` is
        bytes sent as they are, or a value sent MessagePack-encoded (a ServedStream as its id, in a list too)."""
        data = b"".join(piece if isinstance(piece, bytes) else encode_raw(self._ids(piece)) for piece in pieces)
        self._record_send(pieces=[{"raw": piece.hex()} if isinstance(piece, bytes) else
                                  {"value": self._piece_data(piece)} for piece in pieces],
                          shows=f"{len(data)} bytes {data[:16].hex()}" + ("…" if len(data) > 16 else ""), fault=fault)
        self.send_bytes(data, fault=fault)

    def _ids(self, value: Any) -> Any:
        if isinstance(value, ServedStream):
            return value.id
        return [self._ids(item) for item in value] if isinstance(value, list) else value

    def _piece_data(self, value: Any) -> Any:
        return [self._piece_data(item) for item in value] if isinstance(value, list) else self.ledger.as_data(value)

    def _record_send(self, *, shows: str, fault: str, **what: Any) -> None:
        self.record("send", **what, shows=shows, **({"fault": fault} if fault else {}))

    def _refusal(self, frame: Any) -> tuple[str, str, str] | None:
        if self.goodbye_sent:
            return "net.rstck.13", "nothing sent after the kit's goodbye", describe(frame)
        return self.ledger.refusal(frame)

    def send_together(self, frames: list[tuple[Any, str]]) -> None:
        """Send frames in one write, each (frame, fault label or ""), so that they reach the client in one read
        as far as the kernel allows: what follows a terminal signal, say, arrives before the client can exit."""
        data, sent, kept = bytearray(), [], []
        for frame, fault in frames:
            refusal = None if fault else self._refusal(frame)
            if refusal is not None:
                self.session.findings.kit_fault(*refusal)
                break  # the frames before it are sent, as logged
            text = f"-> {describe(frame)}"
            self.note(f"{text}   [fault injected: {fault}]" if fault else text)
            kept.append({"frame": self.ledger.frame_data(frame), "shows": describe(frame),
                         **({"fault": fault} if fault else {})})
            data += encode(frame)
            self.ledger.sent(frame)
            sent.append(frame)
        if data:
            self.record("send_together", frames=kept)
            self._write(bytes(data))
        for frame in sent:
            self._sent(frame, counted=True)

    def _send_bytes(self, data: bytes, text: str, fault: str) -> None:
        if self.goodbye_sent and not fault:
            self.session.findings.kit_fault("net.rstck.13", "nothing sent after the kit's goodbye", text)
            return
        self.note(f"{text}   [fault injected: {fault}]" if fault else text)
        self._write(data)

    def _sent(self, frame: Any, *, counted: bool = False) -> None:
        if not counted:
            self.ledger.sent(frame)
        if type(frame) is Goodbye:
            self.goodbye_sent = True
            self._shut_sending_side()

    def _write(self, data: bytes) -> None:
        self.sock.settimeout(max(0.05, self.session.deadline - time.monotonic()))
        try:
            self.sock.sendall(data)
        except (TimeoutError, socket.timeout):
            # The kit sends a few KiB per case, far less than a socket holds: only a client that stopped reading
            # with its buffers full gets here, and the case cannot go on.
            raise TargetError("the client stopped reading: the kit's send did not finish before the deadline") \
                from None
        except OSError as exc:  # the client closed or reset: what it sent before is still read
            self.note(f"send failed: {exc.strerror or exc}")

    def _shut_sending_side(self) -> None:
        """After goodbye: EOF to the client, so that it reads to the end of what was sent (docs/wire-format.md,
        "Closing"); the kit still reads until the client closes."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def unused_ids(self, count: int) -> list[int]:
        """`count` ids the client never used (ClientLedger.unused_ids)."""
        self.record("pick_unused", count=count)
        return self.ledger.unused_ids(count)

    def expect_answers_for(self, stream_id: int) -> None:
        """The kit subscribes (in a frame a check sends on its own) with `stream_id`: the client's answers for it
        are no signals for an unknown id."""
        self.record("kit_subscribes", id=stream_id)
        self.ledger.kit_subscribed.add(stream_id)

    def hold_goodbye_answer(self) -> None:
        """The kit does not answer the client's goodbye at once: the check sends something first."""
        self.record("hold_goodbye_answer")
        self.answer_goodbye = False

    def hello(self, version: int = PROTOCOL_VERSION, *, fault: str = "") -> None:
        self.send(ServerHello(version, ()), fault=fault)

    def subscribed(self, stream: ServedStream, element_size: int = 0) -> None:
        self.send(Subscribed(stream.id, element_size))

    def complete(self, stream: ServedStream) -> None:
        self.send(OnComplete(stream.id))

    def fail(self, stream: ServedStream, message: str) -> None:
        self.send(OnError(stream.id, message))

    # -- serving -----------------------------------------------------------------------------------------------

    def expect_subscribe(self, *, rule: str, expected: str = "") -> ServedStream:
        """The client's subscribe to the name the kit gave it (read until it arrives)."""
        expected = expected or f"the client's subscribe to {self.publisher}"
        with self.recorded("expect_subscribe", rule=rule, expected=expected):
            return self._subscribe_awaited(rule, expected)

    def _subscribe_awaited(self, rule: str, expected: str) -> ServedStream:
        for stream in self.ledger.streams.values():
            if stream.publisher == self.publisher and not stream.subscribed and stream.open:
                return stream
        frames = self.until(Awaited(lambda f: type(f) is Subscribe and f.publisher == self.publisher
                                    and self.ledger.streams.get(f.subscriber) is not None), rule=rule,
                            expected=expected)
        self.unless_refused(rule, expected)
        return self.ledger.streams[frames[-1].subscriber]

    def await_demand(self, stream: ServedStream, *, rule: str, expected: str) -> int:
        """Read until the stream has outstanding demand; that demand. A violation of `rule` if the client cancels
        the stream or ends it with a request of 0 or below (which the kit answers with onError, as 3.9 asks),
        closes the connection, or the deadline comes first."""
        with self.recorded("await_demand", stream=self.ledger.numbers[stream.id], rule=rule, expected=expected):
            return self._demand(stream, rule, expected)

    def _demand(self, stream: ServedStream, rule: str, expected: str) -> int:
        while True:
            self.unless_refused(rule, expected)
            if stream.cancelled:
                raise RuleViolation(rule, expected, f"the client cancelled stream {stream.id} after {stream.sent} "
                                    f"elements", claim=EXPECTATION)
            if stream.ended:
                raise RuleViolation(rule, expected, f"the client's request of 0 or below ended stream {stream.id}: "
                                    f"the kit answered {stream.ended}, as rule 3.9 asks", claim=EXPECTATION)
            if stream.outstanding > 0:
                return stream.outstanding
            try:
                self.receive()
            except PeerClosed:
                self.unless_refused(rule, expected)
                raise RuleViolation(rule, expected, f"the client closed the connection while the kit waited for "
                                    f"demand (it requested {stream.requested}, the kit sent {stream.sent})",
                                    claim=EXPECTATION) from None
            except Silent:
                self.unless_refused(rule, expected)
                raise RuleViolation(rule, expected, f"no request came before the deadline (the client requested "
                                    f"{stream.requested}, the kit sent {stream.sent})", timed_out=True,
                                    claim=EXPECTATION) from None

    def serve(self, stream: ServedStream, elements: list[bytes], *, rule: str, expected: str, form: str = "onNext",
              part_size: int = 0) -> None:
        """Send `elements` as the client's demand allows, in `form`: "onNext", "packed" (onNextPacked of as many
        as the demand allows; the stream must have declared their size) or "split" (each element in parts of
        `part_size` bytes). What stops it is a violation of `rule` (`await_demand`)."""
        with self.recorded("serve", stream=self.ledger.numbers[stream.id], elements=[e.hex() for e in elements],
                           form=form, **({"part_size": part_size} if form == "split" else {}), rule=rule,
                           expected=expected):
            self._serve(stream, elements, rule, expected, form, part_size)

    def _serve(self, stream: ServedStream, elements: list[bytes], rule: str, expected: str, form: str,
               part_size: int) -> None:
        sent = 0
        element_id = 0
        while sent < len(elements):
            demand = self.await_demand(stream, rule=rule, expected=expected)
            batch = elements[sent:sent + min(demand, len(elements) - sent)]
            if form == "packed":
                self.send(OnNextPacked(stream.id, len(batch), b"".join(batch)))
            elif form == "split":
                for element in batch:
                    *first, last = [element[at:at + part_size] for at in range(0, len(element), part_size)]
                    for part in first:
                        self.send(OnNextPart(stream.id, element_id, part))
                    self.send(OnNextLastPart(stream.id, element_id, last))
                    element_id += 1
            else:
                for element in batch:
                    self.send(OnNext(stream.id, element))
            sent += len(batch)

    def until(self, done: Any, *, rule: str, expected: str) -> list[Any]:
        """As WirePeer.until, but a wait ends once the kit has ended the session with goodbye (the client made it
        do so): nothing the check would send next may follow that goodbye, so the check cannot go on."""
        frames = super().until(done | Awaited(lambda _: bool(self.refused)), rule=rule, expected=expected)
        if not done(frames[-1]):
            self.unless_refused(rule, expected)
        return frames

    def unless_refused(self, rule: str, expected: str) -> None:
        """Once the kit ended the session for the client's fault, the check cannot decide its own item: the finding
        that made the kit refuse is the verdict (the check's item is blocked by it), not a failure of `rule`."""
        if self.refused:
            self.session.findings.raise_pending()
            raise RuleViolation(rule, expected, f"the kit ended the session with goodbye: {self.refused}")

    # -- receiving ---------------------------------------------------------------------------------------------

    def _at_eof(self) -> None:
        if self.unreadable:  # the decoder stopped at a frame it could not read: what follows is no frame
            self.eof = True
            self.note("<- EOF")
            return
        super()._at_eof()

    def _decode(self, data: bytes) -> None:
        if self.unreadable:
            return  # after a frame it could not read, the kit reads on to the close, and takes nothing
        frames, fault = self.decoder.feed_until_fault(data)
        for frame in frames:
            self._arrived(frame)
        if fault is None:
            return
        self.note(f"<- bytes that are not a frame: {fault}")
        if self.goodbye_received is not None:
            self.session.findings.violate("net.rstck.13", "nothing from the client after its goodbye",
                                          f"bytes that are not a frame: {fault}", claim=WIRE)
        elif "belongs to an extension" in fault.detail:
            self.session.findings.violate("net.extensions.1", "no message of an extension type (64 and above): the "
                                          "kit's hello named no extension", fault.detail, claim=WIRE)
        else:
            self.session.findings.violate("net.framing.4", "well-formed frames (docs/wire-format.md)", str(fault),
                                          claim=WIRE)
        # As net.rstck.1-4 ask of a receiver: goodbye naming the fault, nothing taken after it; the kit reads on
        # (and discards) until the client closes, so that its goodbye is not lost to a reset.
        self.unreadable = True
        self._refuse(str(fault))

    def _arrived(self, frame: Any) -> None:
        log_frame(self.session.trace, self.started, "<-", frame)
        self.inbox.append(frame)
        if self.goodbye_received is not None:
            self.session.findings.violate("net.rstck.13", "nothing from the client after its goodbye", describe(frame),
                                          claim=WIRE)
            return
        kind = type(frame)
        if kind is Goodbye:
            self.goodbye_received = frame
            if self.answer_goodbye and not self.goodbye_sent:
                self.send(Goodbye(""))  # the acknowledgement of net.closing.2
            return
        if self.goodbye_sent:
            return  # it crossed the kit's goodbye: ignored, whatever it holds
        if self.client_hello is None:
            if kind is not ClientHello:
                # The client's duty broken (its hello first), charged by name; the kit's answer is net.rstck.5's.
                self.session.findings.violate("net.rstck.14", "the clientHello as the client's first frame (only "
                                              "goodbye may come before it)",
                                              f"{describe(frame)} before its clientHello", claim=WIRE)
                self._refuse(f"{describe(frame)} before the clientHello")
            elif frame.version != PROTOCOL_VERSION:
                self.client_hello = frame
                self._refuse(f"unsupported version {frame.version}")  # the kit's duty: net.handshake.2
            else:
                self.client_hello = frame
            return
        if kind is ClientHello or kind is ServerHello:
            self._refuse(f"a {frame.name} after the clientHello")  # the kit's duty: net.rstck.6, net.rstck.5
        elif kind is Subscribe:
            self._subscribe(frame)
        elif kind is Request:
            self._request(frame)
        elif kind is Cancel:
            stream = self.ledger.streams.get(frame.subscriber)
            if stream is not None and stream.open:
                stream.cancelled = True
        elif frame.subscriber not in self.ledger.kit_subscribed:
            self.session.findings.violate("net.core.3", "signals only for ids of the kit's subscribes (the kit "
                                          "subscribed to no publisher of the client's)", describe(frame), claim=WIRE)

    def _subscribe(self, frame: Subscribe) -> None:
        stream = self.ledger.streams.get(frame.subscriber)
        if stream is not None and stream.open:
            # No item binds the client to this directly: net.rstck.12 is the server's answer (goodbye), and
            # net.ids.1 only permits reuse after the stream closed. The id is what net.core.3 says names the one
            # stream all its messages belong to; a second open stream under it breaks that, so it is charged there.
            self.session.findings.violate("net.core.3",
                                          "a subscribe only with an id that has no open stream (net.ids.1)",
                                          f"{describe(frame)} while stream {frame.subscriber} is open", claim=WIRE)
            self._refuse(f"subscribe for id {frame.subscriber}, whose stream is open")  # net.rstck.12
            return
        stream = self.ledger.subscribe(frame)
        if frame.publisher != self.publisher:  # as a server answers a name it does not serve (net.rstck.11)
            self.send(Subscribed(frame.subscriber, 0))
            self.send(OnError(frame.subscriber, f"the kit serves only {self.publisher!r} on this connection"))
        elif frame.initial_demand < 0:  # 3.9, net.rstck.7
            self.send(Subscribed(frame.subscriber, 0))
            self.send(OnError(frame.subscriber, REQUEST_ZERO_MESSAGE))

    def _request(self, frame: Request) -> None:
        stream = self.ledger.streams.get(frame.subscriber)
        if stream is None or not stream.open:
            return  # never subscribed, cancelled or ended: ignored (net.rstck.9)
        if frame.demand > 0:
            self.ledger.request(stream, frame.demand)
            return
        # A request of 0 or below is no fault of the client's on the wire: the publisher answers it with onError
        # (3.9, net.rstck.7), as the kit does here; the stream then ends.
        if not stream.subscribed:
            self.send(Subscribed(stream.id, 0))
        self.send(OnError(stream.id, REQUEST_ZERO_MESSAGE))

    def _refuse(self, reason: str) -> None:
        """End the session as the wire format says a server answers a fault: goodbye naming it, then close."""
        if not self.refused:
            self.refused = reason
        if not self.goodbye_sent:
            self.send(Goodbye(reason))

    # -- waiting -----------------------------------------------------------------------------------------------

    def quiet_window(self) -> float:
        # A client serves no name the kit could ask for a round trip (WirePeer subscribes to rstck/empty): the
        # widest window it is, and a verdict that rests on it says so (`quiet`).
        return QUIET_WINDOW_MAX_S

    def read_to_close(self, *, rule: str, expected: str) -> None:
        """Read, and check, what the client still sends until it closes; a violation of `rule` at the deadline."""
        with self.recorded("read_to_close", rule=rule, expected=expected):
            self._read_to_close(rule, expected)

    def _read_to_close(self, rule: str, expected: str) -> None:
        """Read (and check) until the client closes: EOF or reset. The kit has said goodbye and shut its sending
        side by then, so a client that reads to the kit's EOF before closing is not kept waiting."""
        try:
            while True:
                self.receive()
        except PeerClosed:
            return
        except Silent:
            raise RuleViolation(rule, expected, "the connection was still open at the deadline",
                                timed_out=True, claim=EXPECTATION) from None

    def goodbye_then_close(self, *, rule: str, expected: str = "goodbye with a reason, then the connection closed") \
            -> Goodbye:
        """After a fault the kit injected: the client's goodbye with a reason, then EOF (the kit answers the
        goodbye meanwhile); a violation of `rule` otherwise."""
        with self.recorded("goodbye_then_close", rule=rule, expected=expected):
            if self.goodbye_received is None:  # else it came already, while the kit read for something else
                self.until(self.frame_of(Goodbye), rule=rule, expected=expected)
            goodbye = self.goodbye_received
            self._read_to_close(rule, expected)
        if not goodbye.reason:
            raise RuleViolation(rule, expected, "goodbye with an empty reason: a reason names the fault",
                                claim=self.session.evidence.claim("goodbye_reason", connection=self))
        return goodbye

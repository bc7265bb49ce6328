"""A server of the network protocol under test: `rstck check tcp://HOST:PORT`.

Two kinds of check run against it. The network profile's server checks (rstck/rules/network/server/) open
fresh connections of their own and speak frame by frame (`WirePeer`). The core profile's Publisher and
Subscription checks run unchanged against remote publishers: `create_publisher(n)` is the reserved name
`rstck/range/N` through the reference client, whose every frame is logged into the check's trace and checked
by the same `Ledger` as a raw connection's, so a server that over-delivers is charged 1.1 even though the
reference client would shield an ordinary subscriber from it. The rules that concern the calls a subscriber
makes on its Subscription object, which over the wire are the reference client's and not the server's, are
`n/a` with the reason.

Settling: the kit's own client thread is not watched; after it is idle a round trip through the server
(a subscribe to `rstck/empty`, answered after every earlier frame was read) and a quiet window derived from
the round trips measured decide that nothing more arrives.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from typing import Any

from rstck.protocols.network.connection import Connection, ThreadedConnection, connect_threaded, parse_url
from rstck.protocols.network.served_names import ServedNames, split_target_url
from rstck.core.settle import SettleOutcome, SettleTimeout, Settler
from rstck.core.signals import Trace
from rstck.core.target import ErrorNames, Target
from rstck.core.kit_threads import mark_kit_thread
from rstck.core.verdict import BadInput, RuleViolation, TargetError
from rstck.protocols.network.wire import Cancel, Request, Subscribe
from rstck.protocols.network.wire_log import log_frame
from rstck.protocols.network.peer import (CLOSE_LINGER_S, QUIET_ROUND_TRIPS, QUIET_WINDOW_MAX_S, QUIET_WINDOW_MIN_S, Ledger, PeerClosed,
                   WirePeer, acknowledge_at_once, without_delays)

CONNECT_TIMEOUT_S = 5.0
# The part of a check's time left to it after a settle stopped waiting for what a server owes (`promised`).
PROMISE_RESERVE_S = 0.5
BARRIER = "rstck/empty"  # the publisher whose subscribe and onComplete make the settling round trip

# The core rules that are about the Subscription object's methods or the calls' threads: over the wire the
# subscriber calls the reference client, which turns them into frames; the server never sees the call.
NOT_OBSERVABLE = {
    "1.3": "signals reach the subscriber through the kit's client, one at a time; the server's frames are "
           "ordered by the connection (net.transport.3)",
    "1.6": "a request or cancel after the stream's terminal signal is dropped by the kit's client; the server's "
           "side of it is net.rstck.9 (and a signal after the terminal one, 1.7, is checked on every frame)",
    "1.10": "each subscribe over the wire carries a fresh subscriber id, made by the kit's client",
    "3.2": "request from within on_next is a request frame over the wire; the server cannot call back into it",
    "3.3": "over the wire there is no synchronous recursion between subscriber and publisher",
    "3.3.depth-one": "over the wire there is no synchronous recursion between subscriber and publisher",
    "3.4": "request() is the kit's client writing a frame; the server's answer is asynchronous by nature",
    "3.5": "cancel() is the kit's client writing a frame; idempotence over the wire is net.rstck.9",
    "3.6": "a request after cancel is dropped by the kit's client; the server's side of it is net.rstck.9",
    "3.7": "a cancel after cancel is dropped by the kit's client; the server's side of it is net.rstck.9",
    "3.10": "over the wire nothing is synchronous to request()",
    "3.11": "over the wire nothing is synchronous to request()",
    "3.15": "cancel() is the kit's client's method; the server has no call to return from",
    "3.16": "request() is the kit's client's method; the server has no call to return from",
}


class NetworkServerTarget(Target):
    """A server at host:port that serves the reserved publisher names (docs/wire-format.md); the Reactive Streams
    checks subscribe to those, or to the user's own publishers a template in the URL names (`served_names`)."""

    # Over the wire an error is a message: the kit's client delivers every onError as a RemoteError.
    error_names = ErrorNames("network", type_error="RemoteError", range_error="RemoteError")

    capabilities = frozenset({"publisher", "failed_publisher", "server"})
    # The fuzz phase explores orderings of a subscriber's calls; over the wire the kit's client makes them, and
    # each settle costs a round trip: `rstck fuzz tcp://...` runs it when asked for.
    fuzz_phase = False

    def __init__(self, url: str):
        super().__init__()
        try:
            address, self.names = split_target_url(url)
            self.address = parse_url(address)
        except ValueError as exc:
            raise BadInput(f"target {url!r}: {exc}") from None
        self.url = address  # where to connect
        self.name = url
        self.loaded_as = url
        if self.names.failed is None:
            self.capabilities = self.capabilities - {"failed_publisher"}
        # Set by net.closing.1's check when the server stopped serving after the kit reset a connection: a check
        # that cannot connect afterwards is stopped by that finding, not an error of its own.
        self.down_after_reset = ""

    def reachable(self) -> None:
        """BadInput, before any check runs, if nothing accepts a connection at the address."""
        try:
            sock = socket.create_connection(self.address, timeout=CONNECT_TIMEOUT_S)
        except OSError as exc:
            raise BadInput(f"target {self.url}: cannot connect ({exc.strerror or exc}); is the server "
                           "listening there?") from None
        _close_politely(sock)

    def not_observable(self, rule: str) -> str | None:
        return NOT_OBSERVABLE.get(rule)

    def make_settler(self, trace: Trace) -> Settler:
        return NetworkSettler(trace, self)

    def new_publisher(self, session: Any, n: int) -> Any:
        publisher = session.settler.connection(session).publisher(self.names.of_count(n))
        session.evidence.made(publisher, "create_publisher", (n,), "publisher")
        return publisher

    def new_failed_publisher(self, session: Any) -> Any:
        publisher = session.settler.connection(session).publisher(self.names.failed)
        session.evidence.made(publisher, "create_failed_publisher", (), "publisher")
        return publisher

    def cannot_connect(self, why: str) -> Exception:
        """What a failed connection means: net.closing.1's finding if the server went down after a reset (the
        check is then blocked by it), else an error."""
        if self.down_after_reset:
            return RuleViolation("net.closing.1", "the server to go on serving after a connection was reset",
                                 f"{why}: {self.down_after_reset}")
        return TargetError(why)

    def context(self, kind: str, session: Any, rule: str) -> Any:
        return ServerConnections(self, session) if kind == "wire" else super().context(kind, session, rule)


class ServerConnections:
    """What a check of a server is called with: fresh connections to it, spoken frame by frame."""

    def __init__(self, target: NetworkServerTarget, session: Any):
        self.target = target
        self.session = session

    @property
    def deadline(self) -> float:
        return self.session.deadline

    def connect(self, *, hello: bool = True) -> WirePeer:
        """A fresh raw connection (clientHello sent unless not `hello`), closed (politely) when the check ends."""
        try:
            peer = WirePeer.connect(self.session, self.target.address, hello=hello)
        except PeerClosed as exc:
            raise self.target.cannot_connect(str(exc)) from None
        self.session.lifecycle.close_at_end(peer.finish, "a connection of the check's")
        return peer

    def down_after(self, reason: str) -> None:
        """The server stopped serving because of what this check did: the checks after it are blocked by this
        check's finding, not in error; its reproducer is kept without the confirming run, which would find the
        server down (rstck/reports/repro)."""
        self.target.down_after_reset = reason
        self.session.evidence.target_down = reason


def _close_politely(sock: socket.socket) -> None:
    """End a connection that said nothing with EOF, and read what the server sent (its serverHello) until its own
    EOF, at most CLOSE_LINGER_S: a socket closed with unread input sends a reset, and a reset is a fault case of
    its own (net.closing.1), never something the kit does by the way."""
    try:
        sock.shutdown(socket.SHUT_WR)
        end = time.monotonic() + CLOSE_LINGER_S
        while (left := end - time.monotonic()) > 0:
            sock.settimeout(left)
            if not sock.recv(65536):
                break
    except OSError:
        pass
    finally:
        sock.close()


class NetworkSettler(Settler):
    """Settles what the kit can watch, then the server: a round trip, then a quiet window."""

    quiet_reason = (f"the server is across a connection: a round trip through it, then {QUIET_ROUND_TRIPS} round "
                    f"trips long with no frame")

    def __init__(self, trace: Trace, target: NetworkServerTarget):
        super().__init__(trace)
        self.target = target
        self._connection: ThreadedConnection | None = None
        self._observer: FrameObserver | None = None

    def connection(self, session: Any) -> ThreadedConnection:
        """The reference client's connection the check's remote publishers come through (opened on first use,
        closed when the check ends); settling makes its round trips through it."""
        if self._connection is None:
            self._observer = FrameObserver(session)
            try:
                connection = connect_threaded(
                    self.target.url, timeout_s=max(0.1, session.deadline - time.monotonic()),
                    connection_type=functools.partial(ObservedConnection, observer=self._observer),
                    on_thread=mark_kit_thread)
            except (OSError, TimeoutError) as exc:
                host, port = self.target.address
                raise self.target.cannot_connect(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
            session.lifecycle.close_at_end(lambda: _say_goodbye(connection), "the kit's client connection")
            self._connection = connection
        return self._connection

    def settle(self, deadline: float) -> SettleOutcome:
        outcome = super().settle(deadline)
        if self._connection is None or self._connection.connection.closed:
            return outcome
        started = time.monotonic()
        while True:
            round_trip = self._round_trip(deadline)
            self._await_promised(deadline)
            window = min(max(QUIET_ROUND_TRIPS * round_trip, QUIET_WINDOW_MIN_S), QUIET_WINDOW_MAX_S)
            seen = len(self.trace)
            if not self.trace.wait_quiet(window, deadline):
                raise SettleTimeout("the server kept sending for longer than the deadline")
            if len(self.trace) == seen:
                return SettleOutcome("quiet-period", outcome.waited_s + time.monotonic() - started, window)

    def _await_promised(self, deadline: float) -> None:
        """Wait for what the reserved names promise and has not arrived yet (`promised`), so that a server whose
        elements leave long after the demand arrived is never judged by the quiet window. The wait ends a little
        before the deadline, leaving the check the time to reach its verdict; the trace says when it did."""
        if self._observer is None:
            return
        until = deadline - min(PROMISE_RESERVE_S, max(0.0, deadline - time.monotonic()) / 4)
        waiting = promised(self._observer.ledger, self.target.names)
        while waiting and time.monotonic() < until and not self.broken():
            self.trace.wait_for_more(len(self.trace), min(0.05, max(0.0, until - time.monotonic())))
            waiting = promised(self._observer.ledger, self.target.names)
        if waiting:
            self.trace.note(f"still awaited when the wait for it ended, short of the deadline: {'; '.join(waiting)}")

    def await_signal(self, arrived, deadline: float) -> bool:
        """A quiet window can be too short for a slow server: what a check expects is waited for up to the
        deadline (only a target that fails the expectation pays for that wait)."""
        while not arrived():
            if time.monotonic() >= deadline:
                return False
            self.trace.wait_for_more(len(self.trace), min(0.05, max(0.0, deadline - time.monotonic())))
        return True

    def _round_trip(self, deadline: float) -> float:
        """Subscribe to rstck/empty and wait for its end: every frame sent before has been read by then."""
        ended = threading.Event()
        started = time.monotonic()
        self._connection.publisher(BARRIER).subscribe(_Barrier(ended))
        if not ended.wait(max(0.0, deadline - time.monotonic())):
            raise SettleTimeout("the server did not answer a subscribe to rstck/empty before the deadline")
        return time.monotonic() - started



def _say_goodbye(connection: ThreadedConnection) -> None:
    """End the reference client's connection with goodbye, as the check ends."""
    try:
        connection.close("the check is over", timeout_s=CLOSE_LINGER_S)
    except Exception:  # a server that does not answer goodbye: the connection is closed anyway
        pass


def promised(ledger: Ledger, names: ServedNames) -> list[str]:
    """What the streams the kit's client opened are owed by the names' definitions (the reserved ones:
    docs/wire-format.md; a user's named by a template: n elements) and have not had: subscribed; of rstck/range/N
    (or the template's name for N) the elements requested, up to N; and the terminal signal of rstck/error (or the
    named failed publisher), rstck/empty, and of a range once its N elements came with demand left over (a
    publisher that completes only when asked for more gets that request from the check)."""
    owed = []
    for stream in ledger.streams.values():
        if stream.cancelled or stream.terminal:
            continue
        if not stream.subscribed:
            owed.append(f"subscribed for {stream.publisher} (id {stream.id})")
            continue
        size = 0 if stream.publisher == BARRIER else names.count_of(stream.publisher)
        if size is None:
            continue
        if stream.received < min(size, stream.requested):
            owed.append(f"{min(size, stream.requested) - stream.received} more elements of {stream.publisher} "
                        f"(id {stream.id})")
        elif stream.received >= size and stream.requested > stream.received:
            owed.append(f"the end of {stream.publisher} (id {stream.id})")
    return owed


class _Barrier:
    """The subscriber of the settling round trip: kept out of the trace, it only says when it has ended."""

    def __init__(self, ended: threading.Event):
        self._ended = ended

    def on_subscribe(self, subscription: Any) -> None:
        pass

    def on_next(self, element: Any) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        self._ended.set()

    def on_complete(self) -> None:
        self._ended.set()


class FrameObserver:
    """The wire log and the Ledger of the reference client's connection in one check. The round trips of
    settling (subscribes to rstck/empty) are kept out of the log."""

    def __init__(self, session: Any):
        self.session = session
        self.ledger = Ledger(session.findings.violate)
        self.started = time.monotonic()
        self._barriers: set[int] = set()

    def sent(self, frame: Any) -> None:
        kind = type(frame)
        if kind is Subscribe:
            if frame.publisher == BARRIER:
                self._barriers.add(frame.subscriber)
                return
            self.ledger.subscribe(frame)
        elif kind is Request:
            self.ledger.request(frame.subscriber, frame.demand)
        elif kind is Cancel:
            self.ledger.cancel(frame.subscriber)
        log_frame(self.session.trace, self.started, "->", frame)

    def received(self, frame: Any) -> None:
        if getattr(frame, "subscriber", None) in self._barriers:
            return
        log_frame(self.session.trace, self.started, "<-", frame)
        self.ledger.take(frame)


class _AcknowledgingReader:
    """The connection's reader, acknowledging what it read at once (`without_delays`)."""

    def __init__(self, reader: Any, sock: Any):
        self._reader, self._sock = reader, sock

    async def read(self, n: int = -1) -> bytes:
        data = await self._reader.read(n)
        acknowledge_at_once(self._sock)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)


class ObservedConnection(Connection):
    """The reference client's connection, showing every frame to a FrameObserver."""

    def __init__(self, reader: Any, writer: Any, *args: Any, observer: FrameObserver, **kwargs: Any):
        self._observer = observer
        sock = writer.get_extra_info("socket")
        if sock is not None:
            without_delays(sock)
            reader = _AcknowledgingReader(reader, sock)
        super().__init__(reader, writer, *args, **kwargs)

    def _write(self, frame: Any) -> None:
        self._observer.sent(frame)
        super()._write(frame)

    def _handle(self, frame: Any) -> None:
        self._observer.received(frame)
        super()._handle(frame)

    def _release(self, stream: Any) -> None:
        # Never reuse an id: a frame that crosses a cancel would otherwise look like the next stream's.
        super()._release(stream)
        if stream.id in self._free_ids:
            self._free_ids.remove(stream.id)

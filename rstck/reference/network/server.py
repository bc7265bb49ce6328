"""The reference server of the network protocol: in-process publishers served over TCP with asyncio.

One `ReferenceServer` runs per connection. Its read loop handles the client's frames in order; its pump
writes what the publishers signalled, stream by stream, and awaits `drain()` after each turn, so a slow
reader slows the publishers down.

Memory stays bounded per stream: the server asks a publisher for at most `UPSTREAM_WINDOW` elements beyond
those it has written, and never for more than the client requested (so a request for 2**63-1 of
rstck/infinite does not make a synchronous publisher loop forever, or fill a queue without end).
Publishers may signal on any thread: their signals reach the loop through `call_soon_threadsafe`, and
their number is bounded by what the server requested.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rstck.api import MAX_DEMAND, Publisher, Subscription
from rstck.protocols.network.wire import (DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION, Cancel, ClientHello, FrameDecoder, Goodbye,
                     OnComplete, OnError, OnNext, OnNextLastPart, OnNextPacked, OnNextPart, Request, ServerHello,
                     Subscribe, Subscribed, WireError, describe, encode, encode_raw)
from rstck.protocols.network import RESERVED_PREFIX, close_sending_side
from rstck.protocols.network.served_names import COUNT, ServedNames
from rstck.reference.network.reserved import ReservedPublisher, reserved_publisher

__all__ = ["DEFAULT_PART_SIZE", "ReferenceServer", "serve", "shut_down"]

_log = logging.getLogger("rstck.serve")

DEFAULT_PART_SIZE = 64 * 1024
UPSTREAM_WINDOW = 1024  # elements asked of a publisher and not yet written
PENDING_BYTES_LIMIT = 1024 * 1024  # no new requests upstream while a stream holds this much unwritten
# Nor while all the streams of a connection together hold this much: each stream's own limit alone would let a
# client that opens many streams of large elements make the server hold thousands of them.
CONNECTION_PENDING_LIMIT = 32 * 1024 * 1024
WRITE_TURN_BYTES = 256 * 1024  # written for one stream before the pump drains and turns to the next
MAX_OPEN_STREAMS = 4096  # per connection; a subscribe beyond it is refused with onError
FRAME_OVERHEAD = 64  # the most bytes a frame adds to the element data it carries
MIN_MAX_FRAME_BYTES = 4 * FRAME_OVERHEAD
READ_SIZE = 64 * 1024
GOODBYE_LINGER_S = 2.0  # after our goodbye, how long the peer has to close before we do

PublisherFactory = Callable[[], Publisher]


@functools.lru_cache(maxsize=4096)
def _on_next_header(stream_id: int) -> bytes:
    """The bytes of onNext(stream_id, ...) up to its element: [6, stream_id, then the bin."""
    return encode_raw([OnNext.TYPE, stream_id, b""])[:-2]  # less the empty bin: c4 00


def _bin_header(size: int) -> bytes:
    """MessagePack's header of a bin of `size` bytes (as wire.encode writes it)."""
    if size < 256:
        return b"\xc4" + size.to_bytes(1, "big")
    if size < 65536:
        return b"\xc5" + size.to_bytes(2, "big")
    return b"\xc6" + size.to_bytes(4, "big")

# The connections of each server that `serve` started, for `shut_down`.
_CONNECTIONS: weakref.WeakKeyDictionary[asyncio.Server, set[ReferenceServer]] = weakref.WeakKeyDictionary()


def served_factory(publishers: dict[str, PublisherFactory], name: str) -> PublisherFactory | None:
    """The factory serving `name`: the one registered under it, or under a template that makes it (`ticks/{n}`
    makes `ticks/5`, served by FACTORY(5)); None if none does."""
    factory = publishers.get(name)
    if factory is not None:
        return factory
    for template, templated in publishers.items():
        if COUNT in template:
            count = ServedNames(template, None).count_of(name)
            if count is not None:
                return functools.partial(templated, count)
    return None


async def serve(host: str = "127.0.0.1", port: int = 0, *,
                publishers: dict[str, PublisherFactory] | None = None,
                max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                part_size: int = DEFAULT_PART_SIZE,
                connection_type: type[ReferenceServer] | None = None) -> asyncio.Server:
    """Listen on host:port (port 0 picks a free one) and serve the reserved publishers plus `publishers`,
    whose factories are called once per subscribe; a name holding `{n}` once (`ticks/{n}`) serves FACTORY(n)
    under each name it makes (`ticks/5`: five elements, as the kit's checks ask). Stop it with `shut_down`. `connection_type` serves each
    connection (a subclass of ReferenceServer: the kit's tests serve mutants so)."""
    factories = dict(publishers or {})
    for name, factory in factories.items():
        if not isinstance(name, str) or name.startswith(RESERVED_PREFIX):
            raise ValueError(f"publisher name {name!r}: names starting with {RESERVED_PREFIX!r} are reserved")
        if name.count(COUNT) > 1:
            raise ValueError(f"publisher name {name!r}: {COUNT} stands for the number of elements, once")
        if not callable(factory):
            raise ValueError(f"publisher {name!r}: the factory must be callable, got {factory!r}")
    if type(max_frame_bytes) is not int or max_frame_bytes < MIN_MAX_FRAME_BYTES:
        raise ValueError(f"max_frame_bytes must be an integer of at least {MIN_MAX_FRAME_BYTES}, "
                         f"got {max_frame_bytes!r}")
    if type(part_size) is not int or part_size < 1:
        raise ValueError(f"part_size must be a positive integer, got {part_size!r}")
    connections: set[ReferenceServer] = set()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = (connection_type or ReferenceServer)(reader, writer, factories,
                                                          max_frame_bytes=max_frame_bytes, part_size=part_size)
        connections.add(connection)
        try:
            await connection.run()
        finally:
            connections.discard(connection)

    server = await asyncio.start_server(accept, host, port)
    _CONNECTIONS[server] = connections
    return server


async def shut_down(server: asyncio.Server, reason: str = "the server is shutting down") -> None:
    """Stop accepting, say goodbye on every connection, and wait (boundedly) until they have closed."""
    server.close()
    connections = list(_CONNECTIONS.get(server, ()))
    for connection in connections:
        connection.say_goodbye(reason)
    tasks = [c.task for c in connections if c.task is not None]
    if tasks:
        await asyncio.wait(tasks, timeout=GOODBYE_LINGER_S + 1)
    await server.wait_closed()


# What a stream has to write, besides its elements (which are bytes), in order.
class _Signal:
    pass


_SUBSCRIBED = _Signal()
_COMPLETE = _Signal()


@dataclass(frozen=True)
class _Failed(_Signal):
    message: str


class _Stream:
    """One subscribe of the client: the in-process subscription and what is owed to the wire."""

    def __init__(self, stream_id: int, element_size: int):
        self.id = stream_id
        self.element_size = element_size
        self.subscription: Subscription | None = None
        self.remote_demand = 0  # requested by the client, not yet asked of the publisher; MAX_DEMAND: unbounded
        self.deferred_illegal: int | None = None  # a request n <= 0 that arrived before on_subscribe
        self.asked = 0  # asked of the publisher, not yet received
        self.pending: collections.deque[bytes | _Signal] = collections.deque()  # to write, in order
        self.pending_elements = 0
        self.pending_bytes = 0
        self.ended = False  # a terminal signal is queued, or the stream is cancelled: ask the publisher nothing
        self.cancelled = False  # write nothing more of it
        self.in_pump_queue = False
        self.next_element_id = 0
        self.held_bytes = 0  # what its publisher holds from the subscribe on (ReservedPublisher.held_bytes)


class _ForwardingSubscriber:
    """The in-process subscriber of one stream: hands every signal to the connection's loop thread."""

    def __init__(self, connection: ReferenceServer, stream: _Stream):
        self._connection = connection
        self._stream = stream

    def on_subscribe(self, subscription: Subscription) -> None:
        self._hand(self._connection._on_subscribe, subscription)

    def on_next(self, element: Any) -> None:
        self._hand(self._connection._on_next, element)

    def on_error(self, error: BaseException) -> None:
        self._hand(self._connection._on_terminal, _Failed(str(error) or type(error).__name__))

    def on_complete(self) -> None:
        self._hand(self._connection._on_terminal, _COMPLETE)

    def _hand(self, handler: Callable[..., None], argument: Any) -> None:
        connection = self._connection
        if threading.get_ident() == connection.loop_thread:
            handler(self._stream, argument)
            return
        try:
            connection.loop.call_soon_threadsafe(handler, self._stream, argument)
        except RuntimeError:  # the loop has closed, and the connection with it
            pass


class _Fault(Exception):
    """A frame that ends the session with goodbye(reason)."""


class ReferenceServer:
    """One connection's protocol session, from serverHello to close."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 publishers: dict[str, PublisherFactory], *, max_frame_bytes: int, part_size: int):
        self._reader = reader
        self._writer = writer
        self._publishers = publishers
        self._decoder = FrameDecoder(max_frame_bytes)
        self._max_frame_bytes = max_frame_bytes
        self._part_size = min(part_size, max_frame_bytes - FRAME_OVERHEAD)
        self._streams: dict[int, _Stream] = {}
        self._ready: collections.deque[_Stream] = collections.deque()  # streams with something to write
        self._out: list[bytes] = []  # encoded frames of the current turn, flushed before any wait (`_flush`)
        self._pending_bytes = 0  # elements received from the publishers and not yet written, all streams
        self._starved: set[_Stream] = set()  # streams not topped up for the connection's budget
        self._wake_pump = asyncio.Event()
        self._hello_received = False
        self._goodbye_sent = False
        self._closed = False
        self._hard_close: asyncio.TimerHandle | None = None
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.task: asyncio.Task | None = None
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)

    async def run(self) -> None:
        """Serve the connection until it closes; never raises for anything the peer does."""
        self.task = asyncio.current_task()
        _log.info("connect from %s", self.peer)
        ended_by = "EOF"
        pump = asyncio.create_task(self._pump())
        try:
            self._write(ServerHello(PROTOCOL_VERSION, ()))
            self._flush()
            ended_by = await self._read_loop()
        except (ConnectionError, TimeoutError) as exc:
            ended_by = f"connection lost ({type(exc).__name__})"
        except Exception:
            _log.exception("connection from %s failed", self.peer)
            ended_by = "internal error"
        finally:
            self._closed = True
            self._end_streams()
            pump.cancel()
            if self._hard_close is not None:
                self._hard_close.cancel()
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            _log.info("close %s: %s", self.peer, ended_by)

    def say_goodbye(self, reason: str) -> None:
        """Send goodbye (once), end every stream, and close the sending side; the read loop then discards
        what arrives until EOF, or closes after GOODBYE_LINGER_S."""
        if self._goodbye_sent or self._closed:
            return
        self._goodbye_sent = True
        self._end_streams()
        self._write(Goodbye(reason))
        self._flush()
        close_sending_side(self._writer)
        self._hard_close = self.loop.call_later(GOODBYE_LINGER_S, self._writer.transport.abort)

    # Reading

    async def _read_loop(self) -> str:
        """Read and handle frames until EOF; returns what ended the connection."""
        ended_by = "EOF"
        while True:
            data = await self._reader.read(READ_SIZE)
            if not data:
                if not self._goodbye_sent:
                    try:
                        self._decoder.close()
                    except WireError:
                        ended_by = "EOF inside a frame"
                return ended_by
            if self._goodbye_sent:
                continue  # nothing after goodbye counts
            frames, fault = self._decoder.feed_until_fault(data)
            try:
                for frame in frames:
                    if self._handle(frame):
                        ended_by = "goodbye from the client"
                        break
                else:
                    if fault is not None:
                        raise _Fault(fault)
            except _Fault as reason:
                _log.info("%s: %s", self.peer, reason)
                ended_by = f"fault: {reason}"
                self.say_goodbye(str(reason))

    def _handle(self, frame: Any) -> bool:
        """Handle one frame; True when it was the client's goodbye. Raises _Fault for a fault."""
        kind = type(frame)
        if kind is Goodbye:
            self.say_goodbye("")
            return True
        if not self._hello_received:
            if kind is not ClientHello:
                raise _Fault(f"{describe(frame)} before the clientHello")
            if frame.version != PROTOCOL_VERSION:
                raise _Fault(f"unsupported version {frame.version}")
            self._hello_received = True
        elif kind is ClientHello:
            raise _Fault("a second clientHello")
        elif kind is Request:
            stream = self._streams.get(frame.subscriber)
            if stream is not None and not stream.ended:  # else crossing a terminal signal or a cancel: ignored
                self._remote_request(stream, frame.demand)
        elif kind is Cancel:
            self._cancel(frame.subscriber)
        elif kind is Subscribe:
            self._subscribe(frame.publisher, frame.subscriber, frame.initial_demand)
        else:
            raise _Fault(f"{describe(frame)} is not a message a client sends to a server")
        return False

    def _subscribe(self, name: str, stream_id: int, initial_demand: int) -> None:
        if stream_id in self._streams:
            raise _Fault(f"subscribe for id {stream_id}, whose stream is still open")
        reserved = reserved_publisher(name) if name.startswith(RESERVED_PREFIX) else None
        factory = served_factory(self._publishers, name)
        if reserved is None and factory is not None:
            reserved = ReservedPublisher(factory)
        stream = _Stream(stream_id, reserved.element_size if reserved else 0)
        held = sum(open_stream.held_bytes for open_stream in self._streams.values())
        self._streams[stream_id] = stream
        if len(self._streams) > MAX_OPEN_STREAMS:
            return self._refuse(stream, f"too many open streams on this connection (at most {MAX_OPEN_STREAMS})")
        if reserved is None:
            return self._refuse(stream, f"no publisher named {name!r} is served here")
        if reserved.held_bytes and held + reserved.held_bytes > CONNECTION_PENDING_LIMIT:
            return self._refuse(stream, f"open streams of large elements would hold more than "
                                        f"{CONNECTION_PENDING_LIMIT} bytes on this connection; try again once "
                                        f"one has ended")
        stream.held_bytes = reserved.held_bytes
        try:
            publisher = reserved.make()
        except Exception as exc:
            _log.warning("the factory of publisher %r raised", name, exc_info=True)
            return self._refuse(stream, f"the factory of publisher {name!r} raised {type(exc).__name__}: {exc}")
        if initial_demand != 0:
            self._remote_request(stream, initial_demand)
        try:
            publisher.subscribe(_ForwardingSubscriber(self, stream))
        except Exception as exc:
            _log.warning("subscribe to publisher %r raised", name, exc_info=True)
            if stream.subscription is None:
                self._refuse(stream, f"subscribe to publisher {name!r} raised {type(exc).__name__}: {exc}")
            else:
                self._fail(stream, f"subscribe to publisher {name!r} raised {type(exc).__name__}: {exc}")

    def _refuse(self, stream: _Stream, message: str) -> None:
        """Rule 1.9: the only way to reject a subscriber is onError after onSubscribe."""
        stream.ended = True
        self._queue(stream, _SUBSCRIBED)
        self._queue(stream, _Failed(message))

    def _cancel(self, stream_id: int) -> None:
        stream = self._streams.pop(stream_id, None)
        if stream is None:
            return  # 3.7, or crossing a terminal signal
        self._drop(stream)

    def _end_streams(self) -> None:
        """Goodbye or close: every stream ends as if cancelled."""
        streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            self._drop(stream)
        self._ready.clear()

    def _drop(self, stream: _Stream) -> None:
        stream.cancelled = stream.ended = True
        self._pending_bytes -= stream.pending_bytes
        stream.pending_bytes = stream.pending_elements = 0
        stream.pending.clear()
        self._starved.discard(stream)
        if stream.subscription is not None:
            self._call_upstream(stream, "cancel")

    # Demand, upstream

    def _remote_request(self, stream: _Stream, n: int) -> None:
        if n <= 0:  # the publisher answers with its own 3.9 on_error
            if stream.subscription is not None:
                self._call_upstream(stream, "request", n)
            elif stream.deferred_illegal is None:
                stream.deferred_illegal = n
            return
        stream.remote_demand = min(stream.remote_demand + n, MAX_DEMAND)  # MAX_DEMAND: unbounded (3.17)
        self._top_up(stream)

    def _top_up(self, stream: _Stream) -> None:
        """Ask the publisher for what the client requested, keeping at most UPSTREAM_WINDOW unwritten."""
        if stream.subscription is None or stream.ended or self._goodbye_sent:
            return
        if stream.pending_bytes >= PENDING_BYTES_LIMIT:
            return  # the pump asks again once it has written
        if self._pending_bytes >= CONNECTION_PENDING_LIMIT:
            self._starved.add(stream)  # the pump asks again once the connection's budget has room
            return
        n = min(UPSTREAM_WINDOW - stream.asked - stream.pending_elements, stream.remote_demand)
        if n <= 0:
            return
        if stream.remote_demand != MAX_DEMAND:
            stream.remote_demand -= n
        stream.asked += n
        self._call_upstream(stream, "request", n)

    def _call_upstream(self, stream: _Stream, method: str, *args: int) -> None:
        try:
            getattr(stream.subscription, method)(*args)
        except Exception as exc:
            _log.warning("subscription.%s of stream %d raised", method, stream.id, exc_info=True)
            if method == "request":
                self._fail(stream, f"the publisher's request raised {type(exc).__name__}: {exc}")

    def _fail(self, stream: _Stream, message: str) -> None:
        """End a stream whose publisher broke a rule: cancel it and tell the client."""
        if stream.ended:
            return
        stream.ended = True
        if stream.subscription is not None:
            self._call_upstream(stream, "cancel")
        self._queue(stream, _Failed(message))

    # The publisher's signals, on the loop thread

    def _on_subscribe(self, stream: _Stream, subscription: Subscription) -> None:
        if stream.subscription is not None or (stream.ended and not stream.cancelled):
            _log.warning("stream %d: a second on_subscribe (rule 2.5); cancelling it", stream.id)
            subscription.cancel()
            return
        stream.subscription = subscription
        if stream.cancelled:
            self._call_upstream(stream, "cancel")
            return
        self._queue(stream, _SUBSCRIBED)
        if stream.deferred_illegal is not None:
            self._call_upstream(stream, "request", stream.deferred_illegal)
        self._top_up(stream)

    def _on_next(self, stream: _Stream, element: Any) -> None:
        if stream.ended:
            return  # after cancel (1.8), or after the publisher's own terminal signal
        if stream.asked == 0:
            return self._fail(stream, "the publisher signalled more elements than requested (rule 1.1)")
        stream.asked -= 1
        if type(element) is not bytes:
            if not isinstance(element, (bytearray, memoryview)):
                return self._fail(stream, f"the publisher signalled a {type(element).__name__}, not bytes")
            element = bytes(element)
        size = len(element)
        if stream.element_size and size != stream.element_size:
            return self._fail(stream, f"the publisher signalled {size} bytes in a stream of "
                                      f"{stream.element_size}-byte elements")
        stream.pending_elements += 1
        stream.pending_bytes += size
        self._pending_bytes += size
        if stream.in_pump_queue:  # the common case, inline: the stream is already waiting for the pump
            stream.pending.append(element)
        else:
            self._queue(stream, element)

    def _on_terminal(self, stream: _Stream, signal: _Signal) -> None:
        if stream.ended:
            return
        stream.ended = True
        self._queue(stream, signal)

    # Writing

    def _queue(self, stream: _Stream, item: bytes | _Signal) -> None:
        if stream.cancelled:
            return
        stream.pending.append(item)
        if not stream.in_pump_queue:
            stream.in_pump_queue = True
            self._ready.append(stream)
            self._wake_pump.set()

    async def _pump(self) -> None:
        """Write the streams' signals, a turn per stream, draining after each turn."""
        try:
            while True:
                await self._wake_pump.wait()
                self._wake_pump.clear()
                while self._ready and not self._goodbye_sent:
                    stream = self._ready.popleft()
                    stream.in_pump_queue = False
                    await self._write_turn(stream)
                    # drain() returns at once while the socket takes everything (loopback buffers hold
                    # megabytes): yield, so the read loop sees a cancel and other connections get their turn
                    await asyncio.sleep(0)
                    if stream.pending and not stream.cancelled and not stream.in_pump_queue:
                        stream.in_pump_queue = True
                        self._ready.append(stream)
        except (ConnectionError, OSError):
            self._writer.transport.abort()  # the read loop sees the close

    async def _write_turn(self, stream: _Stream) -> None:
        written = 0
        while stream.pending and written < WRITE_TURN_BYTES and not stream.cancelled and not self._goodbye_sent:
            item = stream.pending[0]
            if type(item) is bytes:
                written += await self._write_elements(stream)
                continue
            stream.pending.popleft()
            if item is _SUBSCRIBED:
                self._write(Subscribed(stream.id, stream.element_size))
            else:
                self._write(OnComplete(stream.id) if item is _COMPLETE else OnError(stream.id, item.message))
                if self._streams.get(stream.id) is stream:
                    del self._streams[stream.id]  # finished: the client may reuse the id
        self._flush()
        await self._writer.drain()
        self._top_up(stream)
        if self._starved and self._pending_bytes < CONNECTION_PENDING_LIMIT:
            starved, self._starved = self._starved, set()
            for waiting in starved:
                self._top_up(waiting)

    async def _write_elements(self, stream: _Stream) -> int:
        """Write the elements at the head of `pending`: packed if the stream declared a size, else one, split
        into parts if it is larger than a part. Returns the bytes written."""
        pending = stream.pending
        if stream.element_size:
            most = min((self._max_frame_bytes - FRAME_OVERHEAD), WRITE_TURN_BYTES) // stream.element_size
            elements = []
            while pending and type(pending[0]) is bytes and len(elements) < most:
                elements.append(pending.popleft())
            self._took(stream, elements)
            if len(elements) == 1:
                self._write(OnNext(stream.id, elements[0]))
            else:
                self._write(OnNextPacked(stream.id, len(elements), b"".join(elements)))
            return len(elements) * stream.element_size
        element = pending[0]
        if len(element) <= self._part_size:  # every plain element at the head, in one go
            written, out, header, part_size = 0, self._out, _on_next_header(stream.id), self._part_size
            while pending and type(element := pending[0]) is bytes and len(element) <= part_size \
                    and written < WRITE_TURN_BYTES:
                pending.popleft()
                out.append(header + _bin_header(len(element)) + element)
                written += len(element)
                stream.pending_elements -= 1
            stream.pending_bytes -= written
            self._pending_bytes -= written
            return max(written, 1)
        pending.popleft()
        self._took(stream, [element])
        element_id, stream.next_element_id = stream.next_element_id, stream.next_element_id + 1
        view = memoryview(element)
        for at in range(0, len(element), self._part_size):
            if stream.cancelled or self._goodbye_sent:
                break  # the client ignores the rest of this element
            part = bytes(view[at:at + self._part_size])
            last = at + self._part_size >= len(element)
            self._write((OnNextLastPart if last else OnNextPart)(stream.id, element_id, part))
            if not last:
                self._flush()
                await self._writer.drain()
        return len(element)

    def _took(self, stream: _Stream, elements: list[bytes]) -> None:
        taken = sum(map(len, elements))
        stream.pending_elements -= len(elements)
        stream.pending_bytes -= taken
        self._pending_bytes -= taken

    def _write(self, frame: Any) -> None:
        self._out.append(encode(frame))

    def _flush(self) -> None:
        """Hand what the turn wrote to the transport in one piece: a send per frame would cost a system call
        per element."""
        if self._out:
            data = b"".join(self._out)
            self._out.clear()
            if not self._writer.is_closing():
                self._writer.write(data)

"""The reference client of the network protocol: a remote publisher as an ordinary rstck Publisher.

    connection = await connect("tcp://127.0.0.1:9000")
    connection.publisher("rstck/range/5").subscribe(subscriber)
    ...
    await connection.close()

Code that is not asyncio uses `rstck.connect(url)` (`connect_threaded`): the same connection, its loop on a
thread of its own.

Each subscribe sends subscribe(name, id, 0) and calls `on_subscribe` when the server's subscribed arrives, so
the stream's element size is known and every request follows the subscribe. Requests and cancels are sent as
they are made; elements are delivered as they arrive, never buffered: the client holds no more than the
element being joined from parts. Signals reach the subscriber one at a time on the connection's loop thread
(1.3); `subscribe`, `request` and `cancel` may be called from any thread.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

from rstck.api import MAX_DEMAND, Subscriber
from rstck.protocols.network.wire import (DEFAULT_MAX_FRAME_BYTES, INT64_MAX, INT64_MIN, PROTOCOL_VERSION, Cancel, ClientHello,
                     FrameDecoder, Goodbye, OnComplete, OnError, OnNext, OnNextLastPart, OnNextPacked, OnNextPart,
                     Request, ServerHello, Subscribe, Subscribed, WireError, describe, encode)
from rstck.protocols.network import close_sending_side

__all__ = ["Connection", "RemoteError", "RemotePublisher", "ThreadedConnection", "connect", "connect_threaded",
           "parse_url"]

_log = logging.getLogger(__name__)

READ_SIZE = 64 * 1024
# A split element may be this many frames long before the client refuses to hold more of it.
MAX_PARTS_FACTOR = 16


class RemoteError(Exception):
    """A remote stream failed: the publisher's onError message, or why the connection ended it."""


def parse_url(url: str) -> tuple[str, int]:
    """host and port of `tcp://HOST:PORT` (an IPv6 host in brackets); ValueError saying what is wrong."""
    if not isinstance(url, str):
        raise ValueError(f"a server URL is a string tcp://HOST:PORT, got {url!r}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "tcp":
        raise ValueError(f"{url!r}: a server URL starts with tcp://, as in tcp://127.0.0.1:9000")
    if parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(f"{url!r}: a server URL is tcp://HOST:PORT, with nothing after the port")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{url!r}: the port must be an integer from 0 to 65535") from None
    if not parts.hostname:
        raise ValueError(f"{url!r}: the host is missing, as in tcp://127.0.0.1:9000")
    if port is None or port == 0:
        raise ValueError(f"{url!r}: the port is missing or 0, as in tcp://127.0.0.1:9000")
    return parts.hostname, port


async def connect(url: str, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, timeout_s: float = 5.0,
                  connection_type: Callable[..., Connection] | None = None) -> Connection:
    """Open a connection to the server at `url` and send clientHello; the serverHello is not awaited (the
    handshake is loose). Raises ValueError for a bad URL, OSError or TimeoutError if it cannot connect.
    `connection_type` makes the Connection (a subclass that watches the frames, as the kit's adapter does)."""
    host, port = parse_url(url)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    return (connection_type or Connection)(reader, writer, max_frame_bytes=max_frame_bytes, timeout_s=timeout_s)


class _RemoteStream:
    def __init__(self, stream_id: int, subscriber: Subscriber[Any]):
        self.id = stream_id
        self.subscriber = subscriber
        self.subscribed = False
        self.done = False  # cancelled, terminated or ended with the connection: signal nothing more
        self.element_size = 0
        self.requested = 0  # outstanding demand; MAX_DEMAND: unbounded (3.17)
        self.part_id: int | None = None  # the element being joined from parts, if any
        self.parts = bytearray()


class RemoteSubscription:
    """The subscription of one remote stream; `id` is its subscriber id on the wire."""

    def __init__(self, connection: Connection, stream: _RemoteStream):
        self._connection = connection
        self._stream = stream
        self.id = stream.id

    def stands_for_class(self) -> tuple[str, str]:
        """What a trace calls the subscription this stands in for (rstck/core/labels.py): the server's."""
        return "RemoteSubscription", f"the server's stream {self.id}, over the network protocol"

    def request(self, n: int) -> None:
        self._connection._on_loop(self._connection._request, self._stream, n)

    def cancel(self) -> None:
        self._connection._on_loop(self._connection._cancel, self._stream)


class _EndedSubscription:
    """What a subscriber of a closed connection gets before its on_error (1.9)."""

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


class RemotePublisher:
    """A publisher the server serves under `name`; every subscribe opens a stream of its own."""

    def __init__(self, connection: Connection, name: str):
        self._connection = connection
        self.name = name

    def stands_for_class(self) -> tuple[str, str]:
        """What a trace calls the publisher this stands in for (rstck/core/labels.py): the server's."""
        return "RemotePublisher", f"the server's publisher {self.name!r}, over the network protocol"

    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        if subscriber is None:
            raise TypeError("1.9: subscribe(None) is illegal")
        self._connection._on_loop(self._connection._subscribe, self.name, subscriber)


class _Fault(Exception):
    """A frame that ends the session with goodbye(reason)."""


class Connection:
    """One protocol session with a server. Make it with `connect`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, max_frame_bytes: int,
                 timeout_s: float):
        self._reader = reader
        self._writer = writer
        self._decoder = FrameDecoder(max_frame_bytes)
        self._max_parts_bytes = max_frame_bytes * MAX_PARTS_FACTOR
        self._timeout_s = timeout_s
        self._streams: dict[int, _RemoteStream] = {}
        self._free_ids: list[int] = []  # ids whose streams ended, lowest reused first
        self._next_id = 1
        self._hello_received = False
        self._goodbye_sent = False
        self._ended: str | None = None  # why the streams ended, once they have
        self.goodbye_reason: str | None = None  # the server's goodbye, if it sent one
        self.loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._write(ClientHello(PROTOCOL_VERSION, ()))
        self._read_task = asyncio.create_task(self._read_loop())

    def publisher(self, name: str) -> RemotePublisher:
        return RemotePublisher(self, name)

    @property
    def closed(self) -> bool:
        return self._read_task.done()

    async def wait_closed(self) -> None:
        """Wait until the connection has closed, by either side."""
        await asyncio.shield(self._read_task)

    async def close(self, reason: str = "done") -> None:
        """Say goodbye, wait (at most timeout_s) for the server's goodbye or EOF, and close."""
        self._say_goodbye(reason)
        try:
            await asyncio.wait_for(asyncio.shield(self._read_task), self._timeout_s)
        except TimeoutError:
            self._writer.transport.abort()
        await self._read_task

    # Calls from the subscriber's side

    def _on_loop(self, call: Callable[..., None], *args: Any) -> None:
        if threading.get_ident() == self._loop_thread:
            call(*args)
            return
        try:
            self.loop.call_soon_threadsafe(call, *args)
        except RuntimeError:  # the loop has closed: every stream has ended already
            pass

    def _subscribe(self, name: str, subscriber: Subscriber[Any]) -> None:
        if self._ended is not None:
            _signal(subscriber, "on_subscribe", _EndedSubscription())
            _signal(subscriber, "on_error", RemoteError(self._ended))
            return
        if self._free_ids:
            stream_id = heapq.heappop(self._free_ids)
        else:
            stream_id, self._next_id = self._next_id, self._next_id + 1
        self._streams[stream_id] = _RemoteStream(stream_id, subscriber)
        self._write(Subscribe(name, stream_id, 0))

    def _request(self, stream: _RemoteStream, n: int) -> None:
        if stream.done:
            return  # 3.6
        if n > 0:
            stream.requested = min(stream.requested + n, MAX_DEMAND)
        # n <= 0 is forwarded too: the server answers with onError (3.9)
        self._write(Request(stream.id, max(INT64_MIN, min(n, INT64_MAX))))

    def _cancel(self, stream: _RemoteStream) -> None:
        if stream.done:
            return  # 3.7
        self._write(Cancel(stream.id))
        self._release(stream)  # the id may be reused at once: the server sees the cancel first

    def _release(self, stream: _RemoteStream) -> None:
        stream.done = True
        stream.parts = bytearray()
        if self._streams.get(stream.id) is stream:
            del self._streams[stream.id]
            heapq.heappush(self._free_ids, stream.id)

    # Reading

    async def _read_loop(self) -> None:
        ended = "the server closed the connection"
        try:
            while True:
                data = await self._reader.read(READ_SIZE)
                if not data:
                    break
                if self.goodbye_reason is not None:
                    continue  # nothing after goodbye counts
                frames, fault = self._decoder.feed_until_fault(data)
                for frame in frames:
                    self._handle(frame)
                    if self.goodbye_reason is not None:
                        ended = f"the server said goodbye: {self.goodbye_reason}"
                        break
                else:
                    if fault is not None:
                        raise _Fault(fault)
                if self.goodbye_reason is not None and self._goodbye_sent:
                    break  # both goodbyes are out: the session is over
        except _Fault as reason:
            ended = f"the server sent a faulty frame: {reason}"
            self._end_streams(ended)
            self._say_goodbye(str(reason))
            await self._discard_until_eof()
        except (ConnectionError, OSError) as exc:
            ended = f"the connection was lost: {type(exc).__name__}: {exc}"
        finally:
            self._end_streams(ended)
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    async def _discard_until_eof(self) -> None:
        try:
            async with asyncio.timeout(self._timeout_s):
                while await self._reader.read(READ_SIZE):
                    pass
        except (TimeoutError, ConnectionError, OSError):
            pass

    def _handle(self, frame: Any) -> None:
        kind = type(frame)
        if kind is Goodbye:
            self.goodbye_reason = frame.reason
            self._end_streams(f"the server said goodbye: {frame.reason}")
            self._say_goodbye("")
            return
        if not self._hello_received:
            if kind is not ServerHello:
                raise _Fault(f"{describe(frame)} before the serverHello")
            if frame.version != PROTOCOL_VERSION:
                self._end_streams(f"the server speaks protocol version {frame.version}, not {PROTOCOL_VERSION}")
                raise _Fault(f"unsupported version {frame.version}")
            self._hello_received = True
            return
        if kind is ServerHello or kind is ClientHello:
            raise _Fault(f"a {frame.name} after the serverHello")
        if kind is Subscribe:  # this client publishes nothing: refuse as rule 1.9 says
            self._write(Subscribed(frame.subscriber, 0))
            self._write(OnError(frame.subscriber, f"this client serves no publisher {frame.publisher!r}"))
            return
        if kind is Request or kind is Cancel:
            return  # for streams this client never published: ignored
        stream = self._streams.get(frame.subscriber)
        if stream is None or stream.done:
            return  # for a stream cancelled or ended: ignored
        if not stream.subscribed:
            if kind is Subscribed:  # anything before it belongs to a stream that used the id before
                stream.subscribed = True
                stream.element_size = frame.element_size
                self._signal(stream, "on_subscribe", RemoteSubscription(self, stream))
            return
        if kind is OnNext:
            self._check_size(stream, frame.element)
            self._deliver(stream, frame.element)
        elif kind is OnNextPacked:
            try:
                elements = frame.elements(stream.element_size)
            except WireError as error:  # no element size declared, or data of another length: a faulty frame
                raise _Fault(f"stream {stream.id}: {error.detail}") from None
            self._deliver_all(stream, elements)
        elif kind is OnNextPart or kind is OnNextLastPart:
            self._join(stream, frame)
        elif kind is OnComplete:
            self._release(stream)
            self._signal(stream, "on_complete")
        elif kind is OnError:
            self._release(stream)
            self._signal(stream, "on_error", RemoteError(frame.message))
        # a second subscribed for an open stream is ignored

    def _join(self, stream: _RemoteStream, frame: OnNextPart | OnNextLastPart) -> None:
        if stream.part_id is None:
            if not self._take_demand(stream):
                return
            stream.part_id = frame.element_id
        elif stream.part_id != frame.element_id:
            raise _Fault(f"stream {stream.id}: a part of element {frame.element_id} inside element {stream.part_id}")
        if len(stream.parts) + len(frame.data) > self._max_parts_bytes:
            raise _Fault(f"stream {stream.id}: a split element longer than {self._max_parts_bytes} bytes")
        stream.parts += frame.data
        if type(frame) is OnNextLastPart:
            element, stream.parts, stream.part_id = bytes(stream.parts), bytearray(), None
            self._check_size(stream, element)
            self._signal(stream, "on_next", element)

    @staticmethod
    def _check_size(stream: _RemoteStream, element: bytes) -> None:
        if stream.element_size and len(element) != stream.element_size:
            raise _Fault(f"stream {stream.id}: an element of {len(element)} bytes in a stream of "
                         f"{stream.element_size}-byte elements")

    def _deliver_all(self, stream: _RemoteStream, elements: list[bytes]) -> None:
        """The elements of one onNextPacked: as `_deliver` each, with the demand taken in one step when it
        covers them all."""
        if stream.requested != MAX_DEMAND and stream.requested < len(elements):
            for element in elements:  # the server breaks 1.1 within this frame: element by element
                if stream.done:
                    break
                self._deliver(stream, element)
            return
        if stream.requested != MAX_DEMAND:
            stream.requested -= len(elements)
        on_next = stream.subscriber.on_next
        for element in elements:
            try:
                on_next(element)
            except Exception:
                _log.warning("2.13: %s.on_next raised", type(stream.subscriber).__name__, exc_info=True)
                if not stream.done:
                    self._cancel(stream)
            if stream.done:
                break

    def _deliver(self, stream: _RemoteStream, element: bytes) -> None:
        if self._take_demand(stream):
            self._signal(stream, "on_next", element)

    def _take_demand(self, stream: _RemoteStream) -> bool:
        """Count one element against demand; a server that sends more than requested breaks 1.1: the stream
        fails and is cancelled, and nothing beyond the demand reaches the subscriber."""
        if stream.requested == 0:
            self._write(Cancel(stream.id))
            self._release(stream)
            self._signal(stream, "on_error", RemoteError("the server sent more elements than requested (rule 1.1)"))
            return False
        if stream.requested != MAX_DEMAND:
            stream.requested -= 1
        return True

    def _signal(self, stream: _RemoteStream, method: str, *args: Any) -> None:
        if not _signal(stream.subscriber, method, *args) and not stream.done:
            self._cancel(stream)  # 2.13: a subscriber that raised is cancelled

    # Ending

    def _say_goodbye(self, reason: str) -> None:
        if self._goodbye_sent:
            return
        self._goodbye_sent = True
        self._end_streams("the connection was closed by the client")
        self._write(Goodbye(reason))
        close_sending_side(self._writer)

    def _end_streams(self, why: str) -> None:
        """Every stream still open ends with on_error(RemoteError(why))."""
        if self._ended is None:
            self._ended = why
        streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            stream.done = True
            if not stream.subscribed:
                _signal(stream.subscriber, "on_subscribe", _EndedSubscription())
            _signal(stream.subscriber, "on_error", RemoteError(why))

    def _write(self, frame: Any) -> None:
        if not self._goodbye_sent or type(frame) is Goodbye:
            if not self._writer.is_closing():
                self._writer.write(encode(frame))


def _signal(subscriber: Subscriber[Any], method: str, *args: Any) -> bool:
    """Call a subscriber's method; False if it raised (2.13), which is logged, not propagated."""
    try:
        getattr(subscriber, method)(*args)
        return True
    except Exception:
        _log.warning("2.13: %s.%s raised", type(subscriber).__name__, method, exc_info=True)
        return False


class ThreadedConnection:
    """A connection for code that is not asyncio (`rstck.connect`): its loop runs on a thread of its own, and
    `publisher(name)` gives an ordinary Publisher to subscribe any Python subscriber to."""

    def __init__(self, connection: Connection, thread: threading.Thread, timeout_s: float):
        self.connection = connection
        self._thread = thread
        self._timeout_s = timeout_s

    def publisher(self, name: str) -> RemotePublisher:
        return self.connection.publisher(name)

    def close(self, reason: str = "done", *, timeout_s: float | None = None) -> None:
        """Say goodbye, wait for the answer (at most `timeout_s`, by default the connection's timeout), and stop
        the connection's thread."""
        loop = self.connection.loop
        if loop.is_closed():
            return
        if timeout_s is not None:
            self.connection._timeout_s = timeout_s
        try:
            asyncio.run_coroutine_threadsafe(self.connection.close(reason), loop).result(self._timeout_s * 2)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(self._timeout_s)
            if not self._thread.is_alive():
                loop.close()  # its selector holds a descriptor

    def __enter__(self) -> ThreadedConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def connect_threaded(url: str, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, timeout_s: float = 5.0,
                     connection_type: Callable[..., Connection] | None = None,
                     on_thread: Callable[[threading.Thread], None] | None = None) -> ThreadedConnection:
    """Open a connection whose event loop runs on a daemon thread; errors as `connect`'s. `on_thread` is shown
    the thread before it starts."""
    parse_url(url)  # a bad URL is reported before a thread starts
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=f"rstck-connection {url}", daemon=True)
    if on_thread is not None:
        on_thread(thread)
    thread.start()
    try:
        opened = asyncio.run_coroutine_threadsafe(connect(url, max_frame_bytes=max_frame_bytes, timeout_s=timeout_s,
                                                          connection_type=connection_type), loop)
        connection = opened.result(timeout_s * 2)
    except BaseException:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout_s)
        raise
    return ThreadedConnection(connection, thread, timeout_s)

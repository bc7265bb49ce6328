"""A conformant server on threads and blocking sockets: a reader thread per connection, a backend thread per
stream that produces what the demand allows, one lock for the connection's state and its writes.

Options shape it like the servers users run: `latency` (seconds, low and high) between a demand and the
elements it brings, as a slow or batching backend takes; `nagle` leaves Nagle's algorithm on; `byte_writes`
sends every small frame one byte at a time (larger ones in small pieces); `pack` declares 8-byte elements and
sends onNextPacked; `part_size` splits larger blobs, with element ids alternating between the largest and the
smallest an id can be; `subscribes_back` subscribes to the client after its hello, with subscriber ids 0 and
2**63-1 (net.core.1: the client refuses, as one that publishes nothing does)."""

from __future__ import annotations

import random
import socket
import threading
import time

from .codec import (CANCEL, CLIENT_HELLO, GOODBYE, INT64_MAX, ON_COMPLETE, ON_ERROR, ON_NEXT, ON_NEXT_LAST_PART,
                    ON_NEXT_PACKED, ON_NEXT_PART, REQUEST, SERVER_HELLO, SUBSCRIBE, SUBSCRIBED, Fault, FrameReader,
                    element, frame, parse_reserved)

BATCH = 64
MAX_BLOB = 16 * 2**20
LINGER_S = 2.0


class Stream:
    def __init__(self, stream_id: int, kind: str, numbers: tuple[int, ...]):
        self.id, self.kind, self.numbers = stream_id, kind, numbers
        self.demand = 0
        self.sent = 0
        self.over = False

    @property
    def total(self) -> int | None:
        return None if self.kind == "infinite" else self.numbers[0]


class Connection:
    def __init__(self, server: ThreadedServer, sock: socket.socket):
        self.server, self.sock = server, sock
        self.lock = threading.Condition()
        self.streams: dict[int, Stream] = {}
        self.hello = False
        self.goodbye_sent = False
        self.closed = False
        self.next_element_id = 0
        self.subscribed_to: dict[int, str] = {}  # the server's own subscribes to the client, by id

    # Writing: every write holds the lock, so frames never interleave.

    def _send(self, data: bytes) -> None:
        if self.goodbye_sent or self.closed:
            return
        step = 1 if len(data) <= 512 else 509
        try:
            if self.server.byte_writes:
                for at in range(0, len(data), step):
                    self.sock.sendall(data[at:at + step])
            else:
                self.sock.sendall(data)
        except OSError:
            self.closed = True
            self.lock.notify_all()

    def goodbye(self, reason: str) -> None:
        with self.lock:
            if self.goodbye_sent or self.closed:
                return
            self._send(frame(GOODBYE, reason))
            self.goodbye_sent = True
            for stream in self.streams.values():
                stream.over = True
            self.streams.clear()
            self.lock.notify_all()
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    # Reading

    def run(self) -> None:
        reader = FrameReader()
        with self.lock:
            self._send(frame(SERVER_HELLO, 0, []))
        ended = None
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            if self.goodbye_sent:
                if ended is None:
                    ended = time.monotonic()
                    self.sock.settimeout(LINGER_S)
                continue
            try:
                for fields in reader.feed(data):
                    self._handle(fields)
                    if self.goodbye_sent:
                        break
            except Fault as fault:
                self.goodbye(str(fault))
        with self.lock:
            self.closed = True
            for stream in self.streams.values():
                stream.over = True
            self.lock.notify_all()
        self.sock.close()

    def _handle(self, fields: tuple) -> None:
        kind = fields[0]
        if kind == GOODBYE:
            self.goodbye("goodbye to you too")
            return
        if not self.hello:
            if kind != CLIENT_HELLO:
                raise Fault("the first message must be clientHello")
            if fields[1] != 0:
                raise Fault(f"version {fields[1]} is not spoken here")
            self.hello = True
            if self.server.subscribes_back:  # ids at both ends of their range: the server chooses them
                with self.lock:
                    for stream_id in (0, INT64_MAX):
                        self.subscribed_to[stream_id] = "subscribing"
                        self._send(frame(SUBSCRIBE, "zoo/feedback", stream_id, 1))
            return
        if kind == CLIENT_HELLO:
            raise Fault("clientHello came twice")
        if kind in (SUBSCRIBED, ON_COMPLETE, ON_ERROR):
            state = self.subscribed_to.get(fields[1])
            if state is None:
                return  # for a stream that ended: crossing in flight, ignored
            if kind == SUBSCRIBED:
                self.subscribed_to[fields[1]] = "open"
            elif state == "subscribing":
                raise Fault(f"a terminal signal for stream {fields[1]} before subscribed")
            else:
                del self.subscribed_to[fields[1]]
            return
        with self.lock:
            if kind == SUBSCRIBE:
                self._subscribe(*fields[1:])
            elif kind == REQUEST:
                stream = self.streams.get(fields[1])
                if stream is not None:
                    self._request(stream, fields[2])
            elif kind == CANCEL:
                stream = self.streams.pop(fields[1], None)
                if stream is not None:
                    stream.over = True
                    self.lock.notify_all()

    def _subscribe(self, name: str, stream_id: int, demand: int) -> None:
        if stream_id in self.streams:
            raise Fault(f"subscriber id {stream_id} is in use")
        self._send(frame(SUBSCRIBED, stream_id, 8 if self.server.pack and self._sized(name) else 0))
        reserved = parse_reserved(name)
        if reserved is None or reserved[0] == "error":
            self._send(frame(ON_ERROR, stream_id, "no such publisher" if reserved is None else "failed, as asked"))
            return
        kind, numbers = reserved
        if kind == "empty" or (kind in ("range", "blobs") and numbers[0] == 0):
            self._send(frame(ON_COMPLETE, stream_id))
            return
        if kind == "blobs" and numbers[1] > MAX_BLOB:
            self._send(frame(ON_ERROR, stream_id, "blobs that large are not served"))
            return
        stream = self.streams[stream_id] = Stream(stream_id, kind, numbers)
        threading.Thread(target=self._backend, args=(stream,), daemon=True).start()
        if demand:
            self._request(stream, demand)

    @staticmethod
    def _sized(name: str) -> bool:
        reserved = parse_reserved(name)
        return reserved is not None and reserved[0] in ("range", "infinite")

    def _request(self, stream: Stream, n: int) -> None:
        if n <= 0:
            stream.over = True
            del self.streams[stream.id]
            self.lock.notify_all()
            self._send(frame(ON_ERROR, stream.id, f"request({n}): only positive requests are legal (rule 3.9)"))
            return
        stream.demand = min(INT64_MAX, stream.demand + n)
        self.lock.notify_all()

    # The backend of one stream

    def _backend(self, stream: Stream) -> None:
        low, high = self.server.latency
        while True:
            with self.lock:
                while not stream.over and not stream.demand:
                    self.lock.wait()
                if stream.over:
                    return
                left = BATCH if stream.total is None else stream.total - stream.sent
                batch = min(stream.demand, left, BATCH)
            if high:
                time.sleep(random.uniform(low, high))
            with self.lock:
                if stream.over:
                    return
                self._deliver(stream, [element(stream.kind, stream.numbers, stream.sent + i) for i in range(batch)])
                stream.demand -= batch
                stream.sent += batch
                if stream.sent == stream.total:
                    self._send(frame(ON_COMPLETE, stream.id))
                    stream.over = True
                    self.streams.pop(stream.id, None)

    def _deliver(self, stream: Stream, elements: list[bytes]) -> None:
        if self.server.pack and stream.kind != "blobs" and len(elements) > 1:
            self._send(frame(ON_NEXT_PACKED, stream.id, len(elements), b"".join(elements)))
            return
        part_size = self.server.part_size
        for item in elements:
            if stream.kind != "blobs" or len(item) <= part_size:
                self._send(frame(ON_NEXT, stream.id, item))
                continue
            element_id = INT64_MAX if self.next_element_id % 2 == 0 else 0
            self.next_element_id += 1
            for at in range(0, len(item), part_size):
                last = at + part_size >= len(item)
                self._send(frame(ON_NEXT_LAST_PART if last else ON_NEXT_PART, stream.id, element_id,
                                 item[at:at + part_size]))


class ThreadedServer:
    """Listens on 127.0.0.1 (a free port); `url` to test it, `stop()` to end it."""

    def __init__(self, *, latency: tuple[float, float] = (0.0, 0.0), nagle: bool = False,
                 byte_writes: bool = False, pack: bool = False, part_size: int = 64 * 1024,
                 subscribes_back: bool = False):
        self.latency, self.nagle, self.byte_writes, self.pack = latency, nagle, byte_writes, pack
        self.subscribes_back = subscribes_back
        self.part_size = part_size
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections: list[Connection] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0 if self.nagle else 1)
            connection = Connection(self, sock)
            self.connections.append(connection)
            threading.Thread(target=connection.run, daemon=True).start()

    def stop(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept; a close alone leaves it blocked
        except OSError:
            pass
        self.listener.close()
        for connection in self.connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(5)

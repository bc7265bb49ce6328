"""A conformant server on asyncio: a task per stream that fills the demand in batches from a backend that takes
its time (`latency`, seconds, low and high, per batch), onNextPacked for the 8-byte streams, blobs split into
small parts (`part_size`) with fresh element ids counting down from the largest, blobs only up to `max_blob`
bytes (larger ones get onError, as the reserved names allow), and, when asked, Nagle's algorithm left on."""

from __future__ import annotations

import asyncio
import random
import socket
import threading

from .codec import (CANCEL, CLIENT_HELLO, GOODBYE, INT64_MAX, ON_COMPLETE, ON_ERROR, ON_NEXT, ON_NEXT_LAST_PART,
                    ON_NEXT_PACKED, ON_NEXT_PART, REQUEST, SERVER_HELLO, SUBSCRIBE, SUBSCRIBED, Fault, FrameReader,
                    element, frame, parse_reserved)

BATCH = 256
LINGER_S = 2.0


class Session:
    def __init__(self, server: AsyncioServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.server, self.reader, self.writer = server, reader, writer
        self.streams: dict[int, dict] = {}
        self.hello = False
        self.done = False  # goodbye sent, or the connection is gone
        self.element_ids = INT64_MAX

    def send(self, *fields) -> None:
        if not self.done:
            self.writer.write(frame(*fields))

    def goodbye(self, reason: str) -> None:
        if self.done:
            return
        self.send(GOODBYE, reason)
        self.done = True
        for stream in self.streams.values():
            stream["task"].cancel()
        self.streams.clear()
        if self.writer.can_write_eof():
            self.writer.write_eof()

    async def run(self) -> None:
        frames = FrameReader()
        self.send(SERVER_HELLO, 0, [])
        try:
            while data := await (asyncio.wait_for(self.reader.read(65536), LINGER_S) if self.done
                                 else self.reader.read(65536)):
                if self.done:
                    continue
                try:
                    for fields in frames.feed(data):
                        self.handle(fields)
                        if self.done:
                            break
                except Fault as fault:
                    self.goodbye(str(fault))
        except (OSError, asyncio.TimeoutError):
            pass
        finally:
            self.done = True
            for stream in self.streams.values():
                stream["task"].cancel()
            self.writer.close()

    def handle(self, fields: tuple) -> None:
        kind = fields[0]
        if kind == GOODBYE:
            return self.goodbye("bye")
        if not self.hello:
            if kind != CLIENT_HELLO or fields[1] != 0:
                raise Fault("expected clientHello of version 0")
            self.hello = True
        elif kind == CLIENT_HELLO:
            raise Fault("a second clientHello")
        elif kind == SUBSCRIBE:
            self.subscribe(*fields[1:])
        elif kind == REQUEST and fields[1] in self.streams:
            stream = self.streams[fields[1]]
            if fields[2] <= 0:
                self.fail(stream, f"request({fields[2]}) is illegal: n must be positive (3.9)")
            else:
                stream["demand"] = min(INT64_MAX, stream["demand"] + fields[2])
                stream["more"].set()
        elif kind == CANCEL and fields[1] in self.streams:
            self.streams.pop(fields[1])["task"].cancel()

    def fail(self, stream: dict, message: str) -> None:
        self.streams.pop(stream["id"])["task"].cancel()
        self.send(ON_ERROR, stream["id"], message)

    def subscribe(self, name: str, stream_id: int, demand: int) -> None:
        if stream_id in self.streams:
            raise Fault(f"id {stream_id} already has a stream")
        reserved = parse_reserved(name)
        packed = reserved is not None and reserved[0] in ("range", "infinite")
        self.send(SUBSCRIBED, stream_id, 8 if packed else 0)
        if reserved is None:
            return self.send(ON_ERROR, stream_id, f"unknown publisher {name!r}")
        kind, numbers = reserved
        if kind == "error":
            return self.send(ON_ERROR, stream_id, "this publisher always fails")
        if kind == "blobs" and numbers[1] > self.server.max_blob:
            return self.send(ON_ERROR, stream_id, f"blobs over {self.server.max_blob} bytes are not served")
        stream = {"id": stream_id, "kind": kind, "numbers": numbers, "demand": 0, "more": asyncio.Event(),
                  "packed": packed}
        stream["task"] = asyncio.ensure_future(self.produce(stream))
        self.streams[stream_id] = stream
        if demand < 0:
            self.fail(stream, f"initial demand {demand} is illegal (3.9)")
        elif demand:
            stream["demand"] = demand
            stream["more"].set()

    async def produce(self, stream: dict) -> None:
        kind, numbers = stream["kind"], stream["numbers"]
        total = {"range": numbers[0] if numbers else 0, "blobs": numbers[0] if numbers else 0,
                 "empty": 0}.get(kind)
        sent = 0
        low, high = self.server.latency
        while total is None or sent < total:
            while not stream["demand"]:
                stream["more"].clear()
                await stream["more"].wait()
            batch = min(stream["demand"], BATCH, INT64_MAX if total is None else total - sent)
            if high:
                await asyncio.sleep(random.uniform(low, high))
            items = [element(kind, numbers, sent + i) for i in range(batch)]
            if stream["packed"]:
                self.send(ON_NEXT_PACKED, stream["id"], batch, b"".join(items))
            else:
                for item in items:
                    self.send_element(stream["id"], item)
            stream["demand"] -= batch
            sent += batch
            await self.writer.drain()
            await asyncio.sleep(0)  # drain() returns at once while the buffers take it: let the reader see a cancel
        self.streams.pop(stream["id"], None)
        self.send(ON_COMPLETE, stream["id"])

    def send_element(self, stream_id: int, item: bytes) -> None:
        size = self.server.part_size
        if len(item) <= size:
            return self.send(ON_NEXT, stream_id, item)
        element_id, self.element_ids = self.element_ids, self.element_ids - 1
        for at in range(0, len(item), size):
            self.send(ON_NEXT_LAST_PART if at + size >= len(item) else ON_NEXT_PART, stream_id, element_id,
                      item[at:at + size])


class AsyncioServer:
    """Listens on 127.0.0.1 (a free port) from a loop on a thread of its own; `url`, `stop()`."""

    def __init__(self, *, latency: tuple[float, float] = (0.0, 0.0), nagle: bool = False, part_size: int = 1000,
                 max_blob: int = 2**24):
        self.latency, self.nagle, self.part_size, self.max_blob = latency, nagle, part_size, max_blob
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self.accept, "127.0.0.1", 0),
                                                       self.loop).result(5)
        self.url = f"tcp://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.nagle:  # asyncio turns Nagle off on every TCP transport: this server turns it back on
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        await Session(self, reader, writer).run()

    def stop(self) -> None:
        async def close():
            self.server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

"""The reference server and client over real loopback TCP: each test runs its own server on a free port, and
talks to it either with the reference client or with raw frames, to see exactly what the server sends."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging

import pytest

from rstck.protocols.network.connection import RemoteError, connect, parse_url
from rstck.protocols.network.reserved import blob_element, range_element
from rstck.reference.network.server import serve, shut_down
from rstck.reference.publishers import ExecutorPublisher, IterablePublisher
from rstck.protocols.network.wire import (Cancel, ClientHello, FrameDecoder, Goodbye, OnComplete, OnError, OnNext, OnNextLastPart,
                        OnNextPacked, OnNextPart, Request, ServerHello, Subscribe, Subscribed, encode)

DEADLINE_S = 5.0


def run(test, **server_options):
    """Run `test(url)` against a fresh server, within DEADLINE_S."""

    async def main():
        server = await serve(**server_options)
        port = server.sockets[0].getsockname()[1]
        try:
            async with asyncio.timeout(DEADLINE_S):
                return await test(f"tcp://127.0.0.1:{port}")
        finally:
            await shut_down(server)

    return asyncio.run(main())


class CountingSubscriber:
    """Requests `batches` one after another, each once the previous is received; records what arrives and
    whether more ever arrived than it had requested."""

    def __init__(self, *batches: int):
        self.batches = list(batches)
        self.requested = 0
        self.elements: list[bytes] = []
        self.completed = False
        self.error: BaseException | None = None
        self.overflowed = False
        self.subscription = None
        self.ended = asyncio.Event()

    def on_subscribe(self, subscription):
        self.subscription = subscription
        self._request_next_batch()

    def on_next(self, element):
        self.elements.append(element)
        self.overflowed |= len(self.elements) > self.requested
        if len(self.elements) == self.requested:
            self._request_next_batch()

    def on_error(self, error):
        self.error = error
        self.ended.set()

    def on_complete(self):
        self.completed = True
        self.ended.set()

    def _request_next_batch(self):
        if self.batches:
            n = self.batches.pop(0)
            self.requested += max(n, 0)
            self.subscription.request(n)


class RawPeer:
    """A client that speaks frames by hand."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.decoder = FrameDecoder()
        self.frames: list = []

    @classmethod
    async def open(cls, url, *, hello=True):
        host, port = parse_url(url)
        peer = cls(*await asyncio.open_connection(host, port))
        if hello:
            peer.send(ClientHello(0, ()))
        return peer

    def send(self, frame_or_bytes):
        self.writer.write(frame_or_bytes if isinstance(frame_or_bytes, bytes) else encode(frame_or_bytes))

    async def next_frame(self):
        """The next frame, or None at EOF."""
        while not self.frames:
            data = await self.reader.read(65536)
            if not data:
                return None
            self.frames += self.decoder.feed(data)
        return self.frames.pop(0)

    async def frames_until(self, done) -> list:
        """Frames up to and including the first for which done(frame) holds."""
        seen = []
        while True:
            frame = await self.next_frame()
            assert frame is not None, f"EOF before the expected frame; got {seen}"
            seen.append(frame)
            if done(frame):
                return seen

    async def goodbye_then_eof(self) -> Goodbye:
        frames = await self.frames_until(lambda f: type(f) is Goodbye)
        assert await self.next_frame() is None, "the server sent something after goodbye"
        return frames[-1]

    def close(self):
        self.writer.close()


def frames_to_completion(subscribe: Subscribe, **server_options) -> list:
    """Every frame the server sends a raw peer for one subscribe, up to its onComplete."""
    async def raw(url):
        peer = await RawPeer.open(url)
        peer.send(subscribe)
        frames = await peer.frames_until(lambda f: type(f) is OnComplete)
        peer.close()
        return frames

    return run(raw, **server_options)


async def consume(url, name, *batches):
    connection = await connect(url)
    subscriber = CountingSubscriber(*batches)
    connection.publisher(name).subscribe(subscriber)
    await subscriber.ended.wait()
    await connection.close()
    return subscriber


def test_range_arrives_exactly_with_demand_2_then_3():
    subscriber = run(lambda url: consume(url, "rstck/range/5", 2, 3))
    assert subscriber.elements == [range_element(i) for i in range(5)]
    assert subscriber.completed and not subscriber.overflowed


def test_empty_completes_and_error_errors():
    empty = run(lambda url: consume(url, "rstck/empty"))
    assert empty.completed and empty.elements == []
    failed = run(lambda url: consume(url, "rstck/error"))
    assert isinstance(failed.error, RemoteError) and str(failed.error)


def test_an_unknown_or_malformed_name_is_subscribed_then_fails():
    for name in ("no/such/publisher", "rstck/range/x", "rstck/blobs/1"):
        subscriber = run(lambda url: consume(url, name, 1))
        assert subscriber.subscription is not None and isinstance(subscriber.error, RemoteError), name


def test_large_blobs_are_split_into_parts_and_joined_byte_exact():
    subscriber = run(lambda url: consume(url, "rstck/blobs/3/200000", 1, 1, 1))
    assert subscriber.elements == [blob_element(i, 200000) for i in range(3)]
    assert subscriber.completed

    frames = frames_to_completion(Subscribe("rstck/blobs/3/200000", 1, 3), part_size=64 * 1024)
    parts = [f for f in frames if type(f) in (OnNextPart, OnNextLastPart)]
    assert sum(type(f) is OnNextLastPart for f in parts) == 3
    assert len(parts) == 3 * 4  # 200000 bytes in parts of 65536
    assert all(len(f.data) <= 64 * 1024 for f in parts)


def test_range_streams_declare_8_byte_elements_and_come_packed():
    frames = frames_to_completion(Subscribe("rstck/range/1000", 1, 1000))
    assert type(frames[0]) is ServerHello and frames[1] == Subscribed(1, 8)
    packed = [f for f in frames if type(f) is OnNextPacked]
    assert packed
    elements = [e for f in frames if type(f) is OnNextPacked for e in f.elements(8)]
    elements += [f.element for f in frames if type(f) is OnNext]
    assert sorted(elements) == [range_element(i) for i in range(1000)]


def test_a_request_of_0_gets_on_error_for_that_stream_only():
    async def raw(url):
        peer = await RawPeer.open(url)
        peer.send(Subscribe("rstck/infinite", 1, 0))
        peer.send(Request(1, 0))
        peer.send(Subscribe("rstck/range/1", 2, 1))
        frames = await peer.frames_until(lambda f: type(f) is OnError)
        frames += await peer.frames_until(lambda f: type(f) is OnComplete and f.subscriber == 2)
        peer.close()
        return frames

    frames = run(raw)
    errors = [f for f in frames if type(f) is OnError]
    assert [f.subscriber for f in errors] == [1] and "3.9" in errors[0].message
    assert not any(type(f) in (OnNext, OnNextPacked) and f.subscriber == 1 for f in frames)


def test_a_cancelled_stream_stops_within_what_was_requested():
    async def test(url):
        connection = await connect(url)
        subscriber = CountingSubscriber(10)
        original = subscriber.on_next

        def on_next(element):
            original(element)
            if len(subscriber.elements) == 3:
                subscriber.subscription.cancel()
                subscriber.ended.set()

        subscriber.on_next = on_next
        connection.publisher("rstck/infinite").subscribe(subscriber)
        await subscriber.ended.wait()
        # A second stream on the same connection finishes after the cancel has reached the server.
        after = CountingSubscriber(1)
        connection.publisher("rstck/range/1").subscribe(after)
        await after.ended.wait()
        await connection.close()
        return subscriber, after

    cancelled, after = run(test)
    assert len(cancelled.elements) == 3 and not cancelled.overflowed
    assert cancelled.error is None and not cancelled.completed
    assert after.completed


def test_a_cancel_over_the_wire_ends_an_unbounded_stream():
    async def raw(url):
        peer = await RawPeer.open(url)
        peer.send(Subscribe("rstck/infinite", 1, DEMAND))
        await peer.frames_until(lambda f: type(f) in (OnNext, OnNextPacked))
        peer.send(Cancel(1))
        peer.send(Subscribe("rstck/range/2", 1, 2))  # reusing the id at once, as the draft allows
        before = await peer.frames_until(lambda f: type(f) is Subscribed)
        after = await peer.frames_until(lambda f: type(f) is OnComplete)
        peer.close()
        return before, after

    DEMAND = 10**6  # far more than the server can send before the cancel reaches it
    before, after = run(raw)
    sent_before_cancel = sum(f.count if type(f) is OnNextPacked else 1 for f in before
                             if type(f) in (OnNext, OnNextPacked))
    assert 1 <= sent_before_cancel < DEMAND
    elements = [e for f in after if type(f) is OnNextPacked for e in f.elements(8)]
    elements += [f.element for f in after if type(f) is OnNext]
    assert elements == [range_element(0), range_element(1)]


def test_a_wrong_version_gets_goodbye_then_eof():
    async def raw(url):
        peer = await RawPeer.open(url, hello=False)
        peer.send(ClientHello(1, ()))
        goodbye = await peer.goodbye_then_eof()
        peer.close()
        return goodbye

    assert "version" in run(raw).reason


def test_garbage_gets_goodbye_and_the_server_keeps_serving():
    async def test(url):
        peer = await RawPeer.open(url)
        peer.send(b"\xc1\xc1\xc1")
        goodbye = await peer.goodbye_then_eof()
        peer.close()
        after = await consume(url, "rstck/range/2", 2)
        return goodbye, after

    goodbye, after = run(test)
    assert goodbye.reason and after.completed


def test_a_declared_4_gib_frame_gets_goodbye_and_a_prompt_close():
    async def raw(url):
        peer = await RawPeer.open(url)
        peer.send(bytes.fromhex("920cdbffffffff"))
        async with asyncio.timeout(1.0):
            goodbye = await peer.goodbye_then_eof()
        peer.close()
        return goodbye

    assert "too-large" in run(raw).reason


@pytest.mark.parametrize("first", [Request(1, 10), ServerHello(0, ()), "second hello", "open id"])
def test_faults_of_the_handshake_and_ids_get_goodbye(first):
    async def raw(url):
        peer = await RawPeer.open(url, hello=first not in (Request(1, 10), ServerHello(0, ())))
        if first == "second hello":
            peer.send(ClientHello(0, ()))
        elif first == "open id":
            peer.send(Subscribe("rstck/infinite", 1, 0))
            peer.send(Subscribe("rstck/infinite", 1, 0))
        else:
            peer.send(first)
        goodbye = await peer.goodbye_then_eof()
        peer.close()
        return goodbye

    assert run(raw).reason


def test_request_and_cancel_for_unknown_ids_are_ignored():
    async def raw(url):
        peer = await RawPeer.open(url)
        peer.send(Request(9, 10))
        peer.send(Cancel(9))
        peer.send(Subscribe("rstck/range/1", 1, 1))
        frames = await peer.frames_until(lambda f: type(f) is OnComplete)
        peer.close()
        return frames

    assert not any(type(f) is Goodbye for f in run(raw))


def test_goodbye_from_the_client_is_answered_by_goodbye():
    async def raw(url):
        peer = await RawPeer.open(url)
        peer.send(Goodbye("done"))
        goodbye = await peer.goodbye_then_eof()
        peer.close()
        return goodbye

    assert run(raw) == Goodbye("")


def test_dropped_connections_leave_the_server_serving(caplog):
    async def test(url):
        host, port = parse_url(url)
        for _ in range(1000):
            _, writer = await asyncio.open_connection(host, port)
            writer.transport.abort()  # a reset, as often as not before the server has read anything
        quiet = await RawPeer.open(url, hello=False)
        quiet.close()
        return await consume(url, "rstck/range/3", 3)

    with caplog.at_level(logging.INFO, logger="rstck.serve"):
        after = run(test)
    assert after.completed and len(after.elements) == 3
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("connect from 127.0.0.1:" in r.getMessage() for r in caplog.records)


def test_an_id_is_reused_after_its_stream_completed():
    async def test(url):
        connection = await connect(url)
        results = []
        for name in ("rstck/range/2", "rstck/range/3"):
            subscriber = CountingSubscriber(5)
            connection.publisher(name).subscribe(subscriber)
            await subscriber.ended.wait()
            results.append(subscriber)
        await connection.close()
        return results

    first, second = run(test)
    assert first.subscription.id == second.subscription.id == 1
    assert second.elements == [range_element(i) for i in range(3)] and second.completed


def test_a_user_publisher_is_served_by_its_name():
    def factory():
        return IterablePublisher([b"a", b"bc", b""])

    subscriber = run(lambda url: consume(url, "mine", 1, 2), publishers={"mine": factory})
    assert subscriber.elements == [b"a", b"bc", b""] and subscriber.completed


def test_the_server_never_asks_a_publisher_for_more_than_the_client_requested():
    asked: list[int] = []

    class RecordingSubscription:
        def __init__(self, subscription):
            self.subscription = subscription

        def request(self, n):
            asked.append(n)
            self.subscription.request(n)

        def cancel(self):
            self.subscription.cancel()

    class RecordingPublisher:
        def subscribe(self, subscriber):
            inner = IterablePublisher(lambda: (bytes([i % 256]) for i in range(10**6)))
            outer = subscriber.on_subscribe

            class Wrapped:
                on_subscribe = staticmethod(lambda s: outer(RecordingSubscription(s)))
                on_next, on_error, on_complete = subscriber.on_next, subscriber.on_error, subscriber.on_complete

            inner.subscribe(Wrapped())

    async def test(url):
        connection = await connect(url)
        subscriber = CountingSubscriber(2, 3)
        connection.publisher("big").subscribe(subscriber)
        while len(subscriber.elements) < 5:
            await asyncio.sleep(0)
        subscriber.subscription.cancel()
        await connection.close()
        return subscriber

    subscriber = run(test, publishers={"big": RecordingPublisher})
    assert len(subscriber.elements) == 5 and not subscriber.overflowed
    assert sum(asked) <= 5 and all(n > 0 for n in asked)


def test_a_publisher_that_signals_on_other_threads_is_forwarded_in_order():
    with concurrent.futures.ThreadPoolExecutor(4) as executor:
        def factory():
            return ExecutorPublisher(lambda: (bytes([i]) for i in range(200)), executor)

        subscriber = run(lambda url: consume(url, "threaded", 7, 50, 143), publishers={"threaded": factory})
    assert subscriber.elements == [bytes([i]) for i in range(200)]
    assert subscriber.completed and not subscriber.overflowed


def test_streams_end_with_a_clear_error_when_the_server_shuts_down():
    async def main():
        server = await serve()
        port = server.sockets[0].getsockname()[1]
        connection = await connect(f"tcp://127.0.0.1:{port}")
        subscriber = CountingSubscriber(1)
        connection.publisher("rstck/infinite").subscribe(subscriber)
        async with asyncio.timeout(DEADLINE_S):
            while not subscriber.elements:
                await asyncio.sleep(0)
            await shut_down(server)
            await subscriber.ended.wait()
            await connection.wait_closed()
        return subscriber, connection

    subscriber, connection = asyncio.run(main())
    assert "goodbye" in str(subscriber.error) and connection.goodbye_reason


@pytest.mark.parametrize("url, wrong", [("http://h:1", "tcp://"), ("tcp://h", "port"), ("tcp://:5", "host"),
                                        ("tcp://h:99999", "port"), ("tcp://h:1/x", "nothing after")])
def test_a_bad_url_is_a_precise_value_error(url, wrong):
    with pytest.raises(ValueError, match=wrong):
        parse_url(url)


def test_user_names_cannot_take_reserved_ones():
    with contextlib.closing(asyncio.new_event_loop()) as loop:
        with pytest.raises(ValueError, match="reserved"):
            loop.run_until_complete(serve(publishers={"rstck/mine": lambda: None}))

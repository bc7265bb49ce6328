"""The kit's own memory and time stay bounded whatever a server sends: a declared 4 GiB frame, a million tiny
frames, random bytes, or nothing at all. Each gets a verdict on the check that met it, within its deadline."""

from __future__ import annotations

import asyncio
import random
import threading
import time
import tracemalloc

import pytest

from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.core.target import load_target
from rstck.protocols.network.wire import OnNext, Request, ServerHello, Subscribed, encode

pytestmark = pytest.mark.network

TIMEOUT_S = 3.0
# What one check may make the kit hold: its decoder's frame bound is 16 MiB, and a flood is counted, not kept.
PEAK_BOUND = 48 * 2**20


class HostileServer:
    """Answers every connection with `payload(writer)`, whatever the client says; reads and discards."""

    def __init__(self, payload):
        self.payload = payload
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._serve, "127.0.0.1", 0),
                                                       self.loop).result(5)
        self.url = f"tcp://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader, writer):
        sink = asyncio.create_task(self._discard(reader))
        talk = asyncio.create_task(self.payload(writer))
        try:
            # Until the client's EOF, then it closes too: the kit's probe of the address (load_target) waits for
            # that close, CLOSE_LINGER_S at most, and a check sends its EOF only once it is over.
            await sink
            talk.cancel()
            await asyncio.gather(talk, return_exceptions=True)
        except (ConnectionError, OSError, asyncio.CancelledError):  # the client left, or the test is over
            pass
        finally:
            talk.cancel()
            sink.cancel()
            writer.close()

    @staticmethod
    async def _discard(reader):
        while await reader.read(65536):
            pass

    def stop(self):
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    async def _close(self):
        self.server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def declared_4_gib(writer):
    writer.write(encode(ServerHello(0, ())) + encode(Subscribed(1, 0)) + b"\x93\x06\x01\xc6\xff\xff\xff\xff")
    for _ in range(64):  # 4 MiB of the declared bytes, then nothing: the kit must not wait for the rest
        writer.write(bytes(65536))
        await writer.drain()


async def a_million_tiny_frames(writer):
    chunk = encode(Request(1, 1)) * 10_000  # frames a client ignores: requests for a stream it never published
    writer.write(encode(ServerHello(0, ())))
    for _ in range(100):
        writer.write(chunk)
        await writer.drain()


async def random_bytes(writer):
    noise = random.Random(7).randbytes(8 * 2**20)
    writer.write(encode(ServerHello(0, ())) + noise)
    await writer.drain()


async def endless_elements(writer):
    element = encode(OnNext(1, bytes(1024)))
    writer.write(encode(ServerHello(0, ())) + encode(Subscribed(1, 0)))
    while True:  # more than any demand, for as long as the kit reads
        writer.write(element * 64)
        await writer.drain()


async def silence(writer):
    await asyncio.sleep(3600)


def _judge(payload, rules, timeout_s=TIMEOUT_S):
    """Run the checks of `rules` against a server sending `payload`; the rows, the time, and the kit's peak."""
    server = HostileServer(payload)
    try:
        target = load_target(server.url)
        tracemalloc.start()
        started = time.monotonic()
        rows = [run_check(p.check, p.target, timeout_s=timeout_s).row() for p in plan(target, rules=rules)]
        took = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        server.stop()
    return rows, took, peak


@pytest.mark.parametrize("payload, charged", [
    (declared_4_gib, "net.framing.4"),
    (random_bytes, "net.framing.4"),
    (endless_elements, "1.1"),
], ids=lambda v: getattr(v, "__name__", v))
def test_a_hostile_server_is_charged_and_costs_the_kit_bounded_memory(payload, charged):
    rows, took, peak = _judge(payload, "net.transport.3")
    assert [r["verdict"] for r in rows] == ["fail"], rows[0]["message"]
    assert rows[0]["violated"] == charged
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.1f} MiB"
    assert took < TIMEOUT_S + 2


def test_a_million_tiny_frames_cost_time_not_memory():
    rows, took, peak = _judge(a_million_tiny_frames, "net.transport.3")
    assert rows[0]["verdict"] == "fail" and rows[0]["timed_out"], rows[0]["message"]
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.1f} MiB"
    assert took < TIMEOUT_S + 2


def test_a_silent_server_fails_by_deadline_and_says_so():
    rows, took, _ = _judge(silence, "net.transport.3,net.rstck.5", timeout_s=1.5)
    assert [r["verdict"] for r in rows] == ["fail", "fail"]
    assert all(r["timed_out"] and "deadline" in r["message"] for r in rows)
    assert took < 2 * (1.5 + 2)

"""Elements per second from the reference server into a Python subscriber, over loopback TCP.

    python benchmarks/network_speed.py [--elements N] [--repeats R]

The server runs in a process of its own (this script, started again with --serve), as a server
a user connects to does; the subscriber runs in this one, on an asyncio loop, through the
reference client (`connect`). Elements are 8 bytes. Three figures:

- plain: a user publisher's elements, which the server sends one onNext frame each;
- packed: `rstck/range/N`, which the server declares as 8-byte elements and sends as onNextPacked;
- rsocket: rsocket-py's request-stream of the same elements, when rsocket-py is installed
  (it is not a dependency; without it this figure is skipped and said to be).

Each of the first two is printed beside its ceiling, measured in the same run: a bare asyncio
server in the same server process writes the same frames, pre-encoded with `rstck.protocols.network.wire.encode`,
as fast as it can, and a bare asyncio reader decodes them with `FrameDecoder` and counts them,
with no Reactive Streams machinery on either side; the packed ceiling puts as many elements in a
frame as the reference server did, seen on a raw socket first. Every figure is the best of R timed runs
(after one untimed warm-up), from opening the connection to the last element: noise on a shared
machine only ever slows a run down. Goals: plain >= 150,000 elements/s, packed >= 2x plain,
and plain >= 20x rsocket-py. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from rstck.protocols.network.connection import READ_SIZE, connect
from rstck.protocols.network.reserved import range_element
from rstck.reference.network.server import serve, shut_down
from rstck.reference.publishers import IterablePublisher
from rstck.protocols.network.wire import (ClientHello, FrameDecoder, Goodbye, OnNext, OnNextPacked, Subscribe, Subscribed, encode)

try:  # measured only where someone installed it; never a dependency of rstck
    import rsocket
except ImportError:
    rsocket = None

HOST = "127.0.0.1"
PLAIN = "plain"  # the user publisher's name
# Elements per timed run, a size per figure so that each run takes some 0.3-1 s at the rates seen on
# a 2-core machine (about 45k/s plain, 140k/s packed, 450k/s and 20M/s for their ceilings, 7k/s for
# rsocket-py; connecting takes a few ms, which then does not count), and the script under a minute.
PLAIN_ELEMENTS = 40_000
PACKED_ELEMENTS = 100_000
PLAIN_CEILING_ELEMENTS = 300_000
PACKED_CEILING_ELEMENTS = 10_000_000
RSOCKET_ELEMENTS = 5_000
REPEATS = 5
# The raw writer sends its elements as pre-encoded blocks of this many, again and again: the bytes of
# ten million elements are never held at once, and the elements' values repeat, which the raw reader,
# counting only, does not look at.
RAW_BLOCK = 64 * 1024
# The subscriber asks for BATCH at first, then for HALF more each time HALF have arrived: demand never
# runs out while a request is in flight, and the subscriber stays bounded, as a real one is.
BATCH = 64 * 1024
HALF = BATCH // 2
# Frames looked at by the raw check that plain really is plain, and packed packed; the packed one
# also says how many elements the server puts in one onNextPacked, which its ceiling then uses.
PROBE_ELEMENTS = 10_000

GOAL_PLAIN_PER_S = 150_000
GOAL_PACKED_RATIO = 2.0
GOAL_RSOCKET_RATIO = 20.0


# The server process

def plain_publisher(n: int):
    """A user publisher of n 8-byte elements. The server sends a user publisher's elements as one onNext
    each: `serve` wraps its factory as ReservedPublisher(factory), whose element_size is 0, and only a
    stream that declares an element size is packed. `check_frames` sees the frames to be sure."""
    return lambda: IterablePublisher(lambda: map(range_element, range(n)))


def raw_frames(n: int, per_frame: int) -> bytes:
    """n elements as onNext frames (per_frame 0) or as onNextPacked frames of per_frame elements."""
    if not per_frame:
        return b"".join(encode(OnNext(1, range_element(i))) for i in range(n))
    return b"".join(encode(OnNextPacked(1, min(per_frame, n - at),
                                        b"".join(map(range_element, range(at, min(at + per_frame, n))))))
                    for at in range(0, n, per_frame))


async def serve_all(plain_elements: int) -> None:
    """Serve the reference server, the raw writer and (if installed) rsocket-py on free ports; print the
    ports as one JSON line; stop when stdin closes."""
    encoded: dict[tuple[int, int], bytes] = {}

    def frames(n: int, per_frame: int) -> bytes:
        if (n, per_frame) not in encoded:  # built once, in the untimed warm-up run
            encoded[n, per_frame] = raw_frames(n, per_frame)
        return encoded[n, per_frame]

    async def raw_session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n, per_frame = map(int, (await reader.readline()).split())
        blocks, rest = divmod(n, RAW_BLOCK)
        for _ in range(blocks):
            writer.write(frames(RAW_BLOCK, per_frame))
            await writer.drain()
        writer.write(frames(rest, per_frame))
        await writer.drain()
        writer.close()

    reference = await serve(HOST, 0, publishers={PLAIN: plain_publisher(plain_elements)})
    raw = await asyncio.start_server(raw_session, HOST, 0)
    ports = {"reference": _port(reference), "raw": _port(raw), "rsocket": None}
    if rsocket is not None:
        ports["rsocket"] = _port(await _rsocket_server())
    print(json.dumps(ports), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    raw.close()
    await shut_down(reference)


def _port(server: asyncio.Server) -> int:
    return server.sockets[0].getsockname()[1]


async def _rsocket_server() -> asyncio.Server:
    from rsocket.payload import Payload
    from rsocket.request_handler import BaseRequestHandler
    from rsocket.rsocket_server import RSocketServer
    from rsocket.streams.stream_from_generator import StreamFromGenerator
    from rsocket.transports.tcp import TransportTCP

    class Handler(BaseRequestHandler):
        async def request_stream(self, payload: Payload):
            n = int(payload.data)  # the request says how many: no fixed N on this side
            return StreamFromGenerator(lambda: ((Payload(range_element(i)), i == n - 1) for i in range(n)))

    def session(reader, writer):
        RSocketServer(TransportTCP(reader, writer), handler_factory=Handler)

    return await asyncio.start_server(session, HOST, 0)


# The subscriber's side

class CountingSubscriber:
    """Counts elements, requesting in batches; `done` resolves when n have arrived and the stream ended."""

    def __init__(self, n: int, request_on_subscribe: bool = True):
        self.n = n
        self.request_on_subscribe = request_on_subscribe
        self.received = 0
        self.last = None
        self.subscription = None
        self.done = asyncio.get_running_loop().create_future()

    def on_subscribe(self, subscription) -> None:
        self.subscription = subscription
        if self.request_on_subscribe:
            subscription.request(BATCH)

    def on_next(self, element, is_complete=False) -> None:  # is_complete: rsocket-py's on_next has it
        self.received += 1
        self.last = element
        if self.received % HALF == 0:
            self.subscription.request(HALF)
        if is_complete:
            self.on_complete()

    def on_error(self, error) -> None:
        if not self.done.done():
            self.done.set_exception(error)

    def on_complete(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def check(self, last: bytes) -> None:
        assert self.received == self.n and self.last == last, (self.received, self.n, self.last)


async def through_reference(port: int, name: str, n: int) -> float:
    started = time.perf_counter()
    connection = await connect(f"tcp://{HOST}:{port}")
    subscriber = CountingSubscriber(n)
    connection.publisher(name).subscribe(subscriber)
    await subscriber.done
    elapsed = time.perf_counter() - started
    await connection.close()
    subscriber.check(range_element(n - 1))
    return elapsed


async def through_raw(port: int, n: int, per_frame: int) -> float:
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"{n} {per_frame}\n".encode())
    decoder = FrameDecoder()
    received = 0
    if per_frame:
        while data := await reader.read(READ_SIZE):
            for frame in decoder.feed(data):
                received += frame.count
    else:
        while data := await reader.read(READ_SIZE):
            received += len(decoder.feed(data))
    elapsed = time.perf_counter() - started
    writer.close()
    assert received == n, (received, n)
    return elapsed


async def through_rsocket(port: int, n: int) -> float:
    from rsocket.helpers import single_transport_provider
    from rsocket.payload import Payload
    from rsocket.rsocket_client import RSocketClient
    from rsocket.transports.tcp import TransportTCP

    started = time.perf_counter()
    transport = TransportTCP(*await asyncio.open_connection(HOST, port))
    async with RSocketClient(single_transport_provider(transport)) as client:
        # rsocket-py calls on_subscribe before it sends the request-stream frame, so a request made there
        # would name a stream the server does not know yet: the first batch goes with the request instead.
        subscriber = CountingSubscriber(n, request_on_subscribe=False)
        client.request_stream(Payload(str(n).encode())).initial_request_n(BATCH).subscribe(subscriber)
        await subscriber.done
        elapsed = time.perf_counter() - started
    subscriber.last = bytes(subscriber.last.data)
    subscriber.check(range_element(n - 1))
    return elapsed


async def check_frames(port: int, plain_elements: int) -> int:
    """What the server really sends, read off a raw socket: the plain publisher's elements only as onNext
    frames, after a subscribed without element size; rstck/range/N's as onNextPacked, after
    subscribed(element_size=8). Returns the median number of elements per onNextPacked frame."""
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(encode(ClientHello(0, ())) + encode(Subscribe(PLAIN, 1, min(PROBE_ELEMENTS, plain_elements)))
                 + encode(Subscribe(f"rstck/range/{PROBE_ELEMENTS}", 2, PROBE_ELEMENTS)))
    decoder = FrameDecoder()
    kinds: dict[int, set[str]] = {1: set(), 2: set()}
    counts: list[int] = []
    elements = {1: 0, 2: 0}
    subscribed = {}
    while elements[1] < min(PROBE_ELEMENTS, plain_elements) or elements[2] < PROBE_ELEMENTS:
        data = await reader.read(READ_SIZE)
        assert data, "the server closed the connection during the frame check"
        for frame in decoder.feed(data):
            if type(frame) is Subscribed:
                subscribed[frame.subscriber] = frame.element_size
            elif type(frame) in (OnNext, OnNextPacked):
                kinds[frame.subscriber].add(frame.name)
                elements[frame.subscriber] += frame.count if type(frame) is OnNextPacked else 1
                if type(frame) is OnNextPacked:
                    counts.append(frame.count)
    writer.write(encode(Goodbye("checked")))
    writer.close()
    assert subscribed == {1: 0, 2: 8} and kinds[1] == {"onNext"}, (subscribed, kinds)
    assert counts, f"rstck/range/{PROBE_ELEMENTS} came without onNextPacked: {kinds[2]}"
    return int(statistics.median(counts))


def best_rate(n: int, run, repeats: int) -> float:
    """Elements per second of the fastest of `repeats` runs, after an untimed warm-up."""
    asyncio.run(run())
    return n / min(asyncio.run(run()) for _ in range(repeats))


def row(label: str, rate: float, n: int, note: str = "") -> None:
    print(f"  {label:<28}{rate:12,.0f} elements/s  ({n:,} per run{'; ' + note if note else ''})")


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def measure(args) -> bool:
    plain_n = args.elements or PLAIN_ELEMENTS
    packed_n = args.elements or PACKED_ELEMENTS
    plain_ceiling_n = args.elements or PLAIN_CEILING_ELEMENTS
    packed_ceiling_n = args.elements or PACKED_CEILING_ELEMENTS
    rsocket_n = args.elements or RSOCKET_ELEMENTS
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--elements", str(plain_n)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ports = json.loads(server.stdout.readline())
        per_frame = asyncio.run(check_frames(ports["reference"], plain_n))
        plain = best_rate(plain_n, lambda: through_reference(ports["reference"], PLAIN, plain_n), args.repeats)
        plain_ceiling = best_rate(plain_ceiling_n, lambda: through_raw(ports["raw"], plain_ceiling_n, 0),
                                  args.repeats)
        packed = best_rate(packed_n, lambda: through_reference(ports["reference"], f"rstck/range/{packed_n}",
                                                               packed_n), args.repeats)
        packed_ceiling = best_rate(packed_ceiling_n, lambda: through_raw(ports["raw"], packed_ceiling_n, per_frame),
                                   args.repeats)
        rsocket_rate = None
        if ports["rsocket"] is not None:
            rsocket_rate = best_rate(rsocket_n, lambda: through_rsocket(ports["rsocket"], rsocket_n), args.repeats)
    finally:
        server.stdin.close()
        server.wait(10)

    print(f"8-byte elements over loopback TCP, the server in a process of its own; best of {args.repeats} runs "
          f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    print(f"  frames seen on a raw socket: {PLAIN!r} as onNext only, rstck/range/N as onNextPacked of "
          f"{per_frame} elements (median)")
    row("plain, an onNext each", plain, plain_n)
    row("  raw ceiling, onNext", plain_ceiling, plain_ceiling_n, f"plain/ceiling {plain / plain_ceiling:.2f}")
    row("packed, onNextPacked", packed, packed_n)
    row(f"  raw ceiling, {per_frame} per frame", packed_ceiling, packed_ceiling_n,
        f"packed/ceiling {packed / packed_ceiling:.3f}")
    if rsocket_rate is not None:
        row("rsocket-py request-stream", rsocket_rate, rsocket_n)
    met_plain = plain >= GOAL_PLAIN_PER_S
    met_packed = packed >= GOAL_PACKED_RATIO * plain
    print(f"  goal plain >= {GOAL_PLAIN_PER_S:,} elements/s: {plain:,.0f}, {verdict(met_plain)}")
    print(f"  goal packed >= {GOAL_PACKED_RATIO:g}x plain: {packed / plain:.1f}x, {verdict(met_packed)}")
    all_met = met_plain and met_packed
    if rsocket_rate is None:
        print(f"  goal plain >= {GOAL_RSOCKET_RATIO:g}x rsocket-py: not measured, rsocket-py is not installed")
    else:
        met_rsocket = plain >= GOAL_RSOCKET_RATIO * rsocket_rate
        print(f"  goal plain >= {GOAL_RSOCKET_RATIO:g}x rsocket-py: {plain / rsocket_rate:.1f}x, {verdict(met_rsocket)}")
        all_met &= met_rsocket
    return all_met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=None, metavar="N",
                        help="elements per run for every figure (default: a size per figure)")
    parser.add_argument("--repeats", type=int, default=REPEATS, metavar="R")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(serve_all(args.elements))
        return 0
    return 0 if measure(args) else 1


if __name__ == "__main__":
    sys.exit(main())

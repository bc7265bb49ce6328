"""A conformant client of the zoo on asyncio streams: one task reads and answers, elements are printed as they
arrive, and demand comes in batches (the next once half of the last has arrived), or unbounded.

    python tests/network/clients/asyncio_client.py [--id N] [--batch N | --unbounded] [--slow-ms MS]
        [--write-bytes N] [--no-delay] URL PUBLISHER

Written from docs/wire-format.md alone (framing.py, one_stream_session.py): no rstck import. --write-bytes
splits every frame into writes of at most N bytes, each drained before the next; --slow-ms awaits that long
before taking each element, so the server waits on the client's demand.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import urllib.parse

from framing import GOODBYE, ID_MAX, FrameReader, frame
from one_stream_session import EXIT_FAILED, Deliver, End, OneStreamSession, Send

DRAIN_S = 2.0


class AsyncioClient:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.session = OneStreamSession(args.publisher, args.id, ID_MAX if args.unbounded else 0)
        self.outstanding = ID_MAX if args.unbounded else 0
        self.writer: asyncio.StreamWriter | None = None

    async def send(self, data: bytes) -> None:
        step = self.args.write_bytes or len(data) or 1
        try:
            for at in range(0, len(data), step):
                self.writer.write(data[at:at + step])
                await self.writer.drain()
        except (ConnectionError, OSError):
            pass

    async def want_more(self) -> None:
        """Request the next batch once half of the last one has arrived."""
        if not self.args.unbounded and self.outstanding <= self.args.batch // 2:
            self.outstanding += self.args.batch
            await self.send(self.session.request(self.args.batch))

    async def run(self) -> int:
        address = urllib.parse.urlsplit(self.args.url)
        reader, self.writer = await asyncio.open_connection(address.hostname, address.port)
        if self.args.no_delay:
            self.writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await self.send(self.session.opening())
        await self.want_more()
        frames = FrameReader()
        while True:
            try:
                data = await reader.read(65536)
            except (ConnectionError, OSError):
                data = b""
            if not data:
                actions = self.session.closed()
            else:
                taken, fault = frames.feed(data)
                actions = [a for f in taken for a in self.session.take(f)]
                if fault is not None:
                    actions += self.session.fault(str(fault))
            for action in actions:
                if type(action) is Send:
                    await self.send(action.data)
                elif type(action) is Deliver:
                    if self.args.slow_ms:
                        await asyncio.sleep(self.args.slow_ms / 1000)
                    sys.stdout.write(action.element.hex() + "\n")
                    sys.stdout.flush()
                    self.outstanding -= 0 if self.args.unbounded else 1
                    await self.want_more()
                elif type(action) is End:
                    await self.close(reader, None if action.reason is None else frame(GOODBYE, action.reason))
                    if action.status == EXIT_FAILED:
                        print(f"asyncio_client: the stream ended without onComplete ({action.reason})",
                              file=sys.stderr)
                    return action.status

    async def close(self, reader: asyncio.StreamReader, goodbye: bytes | None) -> None:
        """Goodbye (if any), EOF to the server, its EOF awaited (bounded), close."""
        if goodbye:
            await self.send(goodbye)
        try:
            if self.writer.can_write_eof():
                self.writer.write_eof()
            async with asyncio.timeout(DRAIN_S):
                while await reader.read(65536):
                    pass
        except (ConnectionError, OSError, TimeoutError):
            pass
        self.writer.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--id", type=int, default=0)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--unbounded", action="store_true")
    parser.add_argument("--slow-ms", type=float, default=0.0)
    parser.add_argument("--write-bytes", type=int, default=0)
    parser.add_argument("--no-delay", action="store_true")
    parser.add_argument("url")
    parser.add_argument("publisher")
    return asyncio.run(AsyncioClient(parser.parse_args()).run())


if __name__ == "__main__":
    sys.exit(main())

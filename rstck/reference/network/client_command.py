"""The reference client as a command, for `rstck check --client` (docs/network.md, "Testing a client"):

    python -m rstck.reference.network.client_command [--batch N] URL PUBLISHER

It connects to URL with the reference client (`client.connect`), subscribes to PUBLISHER, requests N elements at
a time (the next batch once the last arrived), and writes each element as a line of lowercase hex on stdout. It
exits 0 on onComplete, 3 on onError or when the connection ended the stream first (the server's goodbye, a
faulty frame, EOF), and 2 if it cannot start (a bad URL, no connection). It closes in order: goodbye, then the
server's goodbye or EOF.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rstck.protocols.network.connection import connect

EXIT_COMPLETE, EXIT_ERROR, EXIT_CANNOT_START = 0, 3, 2


class PrintingSubscriber:
    """Requests `batch` elements at a time and prints each as it arrives; `ended` holds the exit status."""

    def __init__(self, batch: int, ended: asyncio.Future):
        self.batch = batch
        self.ended = ended
        self.due = 0  # elements of the last batch still to come
        self.subscription: Any = None

    def on_subscribe(self, subscription: Any) -> None:
        self.subscription = subscription
        self._request()

    def on_next(self, element: bytes) -> None:
        sys.stdout.write(element.hex() + "\n")
        sys.stdout.flush()
        self.due -= 1
        if self.due == 0:
            self._request()

    def on_error(self, error: BaseException) -> None:
        print(f"client_command: the stream failed: {error}", file=sys.stderr)
        self._end(EXIT_ERROR)

    def on_complete(self) -> None:
        self._end(EXIT_COMPLETE)

    def _request(self) -> None:
        self.due = self.batch
        self.subscription.request(self.batch)

    def _end(self, status: int) -> None:
        if not self.ended.done():
            self.ended.set_result(status)


async def run(url: str, publisher: str, *, batch: int, timeout_s: float) -> int:
    try:
        connection = await connect(url, timeout_s=timeout_s)
    except (ValueError, OSError, TimeoutError) as exc:
        print(f"client_command: cannot connect to {url}: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    ended: asyncio.Future = asyncio.get_running_loop().create_future()
    connection.publisher(publisher).subscribe(PrintingSubscriber(batch, ended))
    status = await ended  # the connection ends every open stream with on_error when it closes
    await connection.close("done" if status == EXIT_COMPLETE else "the stream failed")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rstck.reference.network.client_command",
                                     description="Read one publisher of a server of the network protocol and "
                                                 "print its elements as hex lines.")
    parser.add_argument("url", help="the server, tcp://HOST:PORT")
    parser.add_argument("publisher", help="the publisher's name, e.g. rstck/range/3")
    parser.add_argument("--batch", type=int, default=2, metavar="N", help="elements requested at a time (default 2)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="S",
                        help="how long to wait to connect, and for the server's goodbye (default 5)")
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error("--batch must be 1 or more")
    return asyncio.run(run(args.url, args.publisher, batch=args.batch, timeout_s=args.timeout))


if __name__ == "__main__":
    sys.exit(main())

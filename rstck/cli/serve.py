"""`rstck serve`: run the reference server until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import re
from typing import Any

from rstck.core.verdict import BadInput

# The server, asyncio and msgpack, the protocol's reserved names, even the patterns below, are imported or
# compiled when `serve` runs, not when the `rstck` parser is built: every rstck command pays for what is done here.

DEFAULT_LISTEN = "127.0.0.1:9000"
_LISTEN = r"(?:\[(?P<ipv6>[^\]]+)\]|(?P<host>[^:\[\]]+)):(?P<port>[0-9]{1,5})"
_PUBLISHER = r"(?P<name>[^=]+)=(?P<module>[\w.]+):(?P<factory>[\w.]+)"


def add_serve_command(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add `serve` to the subcommands of the `rstck` parser."""
    command = commands.add_parser("serve", help="serve the reserved publishers (and yours) over the network protocol")
    command.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                         help=f"where to listen (default {DEFAULT_LISTEN}; port 0 picks a free port)")
    command.add_argument("--publisher", action="append", default=[], metavar="NAME=MODULE:FACTORY",
                         help="serve FACTORY() under NAME; called per subscribe, it returns a Publisher of bytes "
                              "(repeatable). A NAME holding {n} (ticks/{n}) serves FACTORY(n) under ticks/5 and "
                              "the like: `rstck check tcp://HOST:PORT/ticks/{n}` checks it")
    command.add_argument("--max-frame-bytes", type=int, default=None, metavar="N",
                         help="the largest frame sent or accepted (default 16 MiB)")
    command.add_argument("--part-size", type=int, default=None, metavar="N",
                         help="elements longer than this are split into parts (default 64 KiB)")
    command.set_defaults(run=run_serve)
    return command


def parse_listen(text: str) -> tuple[str, int]:
    match = re.fullmatch(_LISTEN, text)
    if not match or int(match["port"]) > 65535:
        raise BadInput(f"--listen {text!r}: expected HOST:PORT with a port from 0 to 65535, "
                       f"e.g. 127.0.0.1:9000 or [::1]:9000")
    return match["ipv6"] or match["host"], int(match["port"])


def load_publisher(text: str) -> tuple[str, Any]:
    from rstck.core.target import import_named
    from rstck.protocols.network import RESERVED_PREFIX

    match = re.fullmatch(_PUBLISHER, text)
    if not match:
        raise BadInput(f"--publisher {text!r}: expected NAME=MODULE:FACTORY, e.g. mine=mypkg.pubs:make")
    name = match["name"]
    if name.startswith(RESERVED_PREFIX):
        raise BadInput(f"--publisher {text!r}: names starting with {RESERVED_PREFIX!r} are reserved")
    if name.count("{n}") > 1:
        raise BadInput(f"--publisher {text!r}: {{n}} stands for the number of elements, once")
    # The user's module is imported as `rstck check` imports a target's: the current directory comes first.
    target = import_named(match["module"], match["factory"], said=f"--publisher {text!r}")
    if not callable(target):
        raise BadInput(f"--publisher {text!r}: {match['factory']} is not callable")
    return name, target


def run_serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import sys

    from rstck.protocols.network.wire import DEFAULT_MAX_FRAME_BYTES
    from rstck.reference.network.server import DEFAULT_PART_SIZE, MIN_MAX_FRAME_BYTES

    host, port = parse_listen(args.listen)
    publishers = dict(load_publisher(text) for text in args.publisher)
    args.max_frame_bytes = DEFAULT_MAX_FRAME_BYTES if args.max_frame_bytes is None else args.max_frame_bytes
    args.part_size = DEFAULT_PART_SIZE if args.part_size is None else args.part_size
    if args.max_frame_bytes < MIN_MAX_FRAME_BYTES:
        raise BadInput(f"--max-frame-bytes must be at least {MIN_MAX_FRAME_BYTES}, got {args.max_frame_bytes}")
    if args.part_size < 1:
        raise BadInput(f"--part-size must be a positive integer, got {args.part_size}")
    logging.basicConfig(level=logging.INFO, format="rstck serve: %(message)s", stream=sys.stderr)
    try:
        asyncio.run(_serve_until_stopped(host, port, publishers, args.max_frame_bytes, args.part_size))
    except KeyboardInterrupt:  # a signal before the handlers were in place
        pass
    return 0


async def _serve_until_stopped(host: str, port: int, publishers: dict[str, Any], max_frame_bytes: int,
                               part_size: int) -> None:
    import asyncio
    import signal

    from rstck.reference.network.server import serve, shut_down

    try:
        server = await serve(host, port, publishers=publishers, max_frame_bytes=max_frame_bytes,
                             part_size=part_size)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    except OSError as exc:
        raise BadInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    bound_host, bound_port = server.sockets[0].getsockname()[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(f"rstck serve: listening on tcp://{shown_host}:{bound_port}", flush=True)
    await stop.wait()
    await shut_down(server)

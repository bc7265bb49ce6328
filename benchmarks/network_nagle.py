"""What Nagle's algorithm on a server costs its check: `rstck check tcp://...` against the same server with
TCP_NODELAY set and without it, in the same run.

    python benchmarks/network_nagle.py [--repeats R] [--rules SELECTION]

The servers run in a process of their own (this script, started again with --serve), as a server a user checks
does: the reference server, writing each frame with a write of its own, as a simple server does, once with
Nagle's algorithm off (TCP_NODELAY, asyncio's default) and once with it on. With Nagle on, a small write waits for
the acknowledgement of the one before; a kit that delays its acknowledgements (the kernel's default, 40 ms and
more) would then slow every exchange, and a quiet window derived from the round trip would grow with it. Each
figure is the best of R whole runs of `rstck check` (a process each, as a user runs it): noise on a shared machine
only ever slows a run down. Goal: with Nagle on, within 1.5x of the time with it off. Exits 1 when it is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time

from rstck.reference.network.server import ReferenceServer, serve, shut_down

HOST = "127.0.0.1"
REPEATS = 3
GOAL_RATIO = 1.5


# The server process

class FramePerWrite(ReferenceServer):
    """The reference server, writing each frame with a write of its own."""

    def _flush(self):
        frames, self._out = self._out, []
        for data in frames:
            if not self._writer.is_closing():
                self._writer.write(data)


class NagleOn(FramePerWrite):
    """The same, with Nagle's algorithm on (asyncio turns it off on every TCP transport)."""

    def __init__(self, reader, writer, *args, **kwargs):
        super().__init__(reader, writer, *args, **kwargs)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)


async def serve_both() -> None:
    """Serve both servers on free ports; print the ports as one JSON line; stop when stdin closes."""
    servers = {"off": await serve(HOST, 0, connection_type=FramePerWrite),
               "on": await serve(HOST, 0, connection_type=NagleOn)}
    print(json.dumps({name: s.sockets[0].getsockname()[1] for name, s in servers.items()}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for server in servers.values():
        await shut_down(server)


# The measuring process

def check_seconds(port: int, rules: str | None) -> float:
    """One `rstck check` of the server at `port`, wall clock; it must find the server conformant."""
    with tempfile.TemporaryDirectory() as results:
        command = [sys.executable, "-m", "rstck.cli", "check", f"tcp://{HOST}:{port}", "--results", results]
        if rules:
            command += ["--rules", rules]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"rstck check of the server on port {port} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return took


def measure(args: argparse.Namespace) -> bool:
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        ports = json.loads(server.stdout.readline())
        best = {"off": float("inf"), "on": float("inf")}
        for _ in range(args.repeats):
            for nagle in ("off", "on"):  # in turn, so that a burst of load weighs on both
                best[nagle] = min(best[nagle], check_seconds(ports[nagle], args.rules))
    finally:
        server.stdin.close()
        server.wait(30)
    ratio = best["on"] / best["off"]
    print(f"rstck check, best of {args.repeats}{f' (--rules {args.rules})' if args.rules else ''}:")
    print(f"  Nagle off (TCP_NODELAY): {best['off']:6.2f} s")
    print(f"  Nagle on:                {best['on']:6.2f} s")
    met = ratio <= GOAL_RATIO
    print(f"  goal Nagle on <= {GOAL_RATIO:g}x Nagle off: {ratio:.2f}x, {'met' if met else 'MISSED'}")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, metavar="R")
    parser.add_argument("--rules", default=None, metavar="SELECTION", help="the checks run (default: all)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(serve_both())
        return 0
    return 0 if measure(args) else 1


if __name__ == "__main__":
    sys.exit(main())

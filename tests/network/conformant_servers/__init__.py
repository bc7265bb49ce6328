"""Conformant servers of the network protocol, written from docs/wire-format.md alone, in the styles servers are
written: threads and blocking sockets, asyncio; slow and batching backends; Nagle's algorithm on; frames written a
byte at a time; blobs in small parts, element ids at both ends of their range. `ZOO` names each with how to start
it; every one must get no fail, warn or error from `rstck check tcp://...`."""

from __future__ import annotations

from .asyncio_server import AsyncioServer
from .threaded import ThreadedServer

# Seconds between a demand and the elements it brings, as a batching backend takes: just longer than the window
# the kit judges a quiet server by, so that a slow backend is never seen as done by the window alone. That window
# (rstck/protocols/network/peer.py, used by the network settler and the server checks' quiet()) is QUIET_ROUND_TRIPS
# (20) round trips, at least QUIET_WINDOW_MIN_S (25 ms): a loopback round trip takes well under the 1.25 ms that
# would lengthen it, so the window is 25 ms here (the checks' traces say so). 30 ms exceeds it with a margin; up to
# 50 ms so that batches do not keep in step. A slower backend only adds waiting: the same checks, passed the same way.
SLOW = (0.03, 0.05)

ZOO = {
    "threaded": lambda: ThreadedServer(),
    "threaded, slow backend": lambda: ThreadedServer(latency=SLOW),
    "threaded, Nagle on": lambda: ThreadedServer(nagle=True),
    "threaded, a byte at a time, packed, 999-byte parts": lambda: ThreadedServer(byte_writes=True, pack=True,
                                                                                  part_size=999),
    "threaded, slow, Nagle on, a byte at a time": lambda: ThreadedServer(latency=SLOW, nagle=True, byte_writes=True),
    "asyncio, batches": lambda: AsyncioServer(),
    "asyncio, slow batches, Nagle on": lambda: AsyncioServer(latency=SLOW, nagle=True),
    "threaded, subscribes to the client with ids 0 and 2**63-1": lambda: ThreadedServer(subscribes_back=True),
    "asyncio, 100-byte parts": lambda: AsyncioServer(part_size=100),
    "asyncio, small blobs only": lambda: AsyncioServer(max_blob=4096),
}

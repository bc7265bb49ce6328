"""What the kit does on a connection, kept as evidence a standalone script performs again (rstck/core/evidence.py
says what evidence is; rstck/reports/repro/network.py writes the script).

Over the wire the kit's operations are the bytes it sends and what it waits for between them. Each connection is
named in the evidence (`connection1`, ...), and each operation on it is kept in order, as data: the exact bytes of
a frame the kit sends (a fault injected on purpose says so, and a frame sent in pieces is kept piece by piece), a
wait and what it reads for (`Awaited`: a stream ended, so many elements, a frame of a kind), a quiet window, a round
trip, a reset, the read to the close after a goodbye. What the kit does on its own in answer to what arrives (its
subscribed and onError to a server that subscribes, its goodbye to a client's) is not kept: a script answers so of
itself. An operation made inside another is part of it and not kept on its own.

When the kit plays the server to a client under test, the client chooses its stream ids: a frame the kit sends for
the client's stream names the stream (its number among the client's subscribes), not the id, so that a script
sends it for whatever id the client takes next time.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

# How a violation found in a frame is observed again: a script checks every frame it reads as the kit does (the
# Ledger of rstck/protocols/network/peer.py, the ClientLedger of serving_peer.py).
WIRE = {"by": "wire"}


class Awaited:
    """What a wait reads frames for: a test of the frame just read (and of the state the peer keeps), and the
    same as data, one alternative per entry of `described` (a script reads for any of them)."""

    def __init__(self, test: Callable[[Any], bool], *described: dict[str, Any]):
        self._test = test
        self.described = list(described)

    def __call__(self, frame: Any) -> bool:
        return self._test(frame)

    def __or__(self, other: Awaited) -> Awaited:
        return Awaited(lambda frame: self(frame) or other(frame), *self.described, *other.described)


@contextlib.contextmanager
def operation(session: Any, op: dict[str, Any] | None) -> Iterator[None]:
    """An operation of the kit's on the wire, kept in the check's evidence (None: one that is not kept, nor is
    anything made inside it)."""
    evidence = session.evidence
    frame = evidence.begin(None if op is None or evidence.unsupported else op)
    try:
        yield
    finally:
        evidence.end(frame)


def connection_name(session: Any, peer: Any) -> str:
    """The name of a connection of the kit's in the evidence: connection1, connection2, ..."""
    return session.evidence.name(peer, "connection", kind="connection")


def as_data(value: Any) -> Any:
    """A value of a frame as data: a bin as {"bytes": hex}, an array item by item, a reference the caller made
    ({"stream": n}, {"unused": n}) and any other value as it is."""
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, (list, tuple)):
        return [as_data(item) for item in value]
    return value

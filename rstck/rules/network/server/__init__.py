"""Checks of a server under test (rstck check tcp://HOST:PORT): each opens fresh connections of its own, speaks
frame by frame, and ends every case that injects no fault with goodbye."""

from __future__ import annotations

from typing import Any

from ....adapters.network.peer import WirePeer
from ....verdict import RuleViolation
from ....wire import encode_raw


def connect(session: Any, *, hello: bool = True) -> WirePeer:
    """A fresh connection to the server under test (clientHello sent unless told not to)."""
    return session.target.open_peer(session, hello=hello)


def answers_fault_with_goodbye(session: Any, rule: str, bad: bytes, fault: str, *, hello: bool = True) -> None:
    """Send `bad` (labelled as the fault injected) and expect goodbye with a reason, then the close."""
    peer = connect(session, hello=hello)
    peer.send_bytes(bad, fault=fault)
    expect_goodbye(peer, rule, fault)


def expect_goodbye(peer: WirePeer, rule: str, fault: str) -> None:
    """After the fault `fault`: goodbye with a non-empty reason, then EOF."""
    expected = f"goodbye with a reason, then the connection closed, for {fault}"
    goodbye = peer.goodbye_then_close(rule=rule, expected=expected)
    if not goodbye.reason.strip():
        raise RuleViolation(rule, expected, "goodbye with an empty reason")


def raw(*values: Any) -> bytes:
    """One MessagePack array of `values`: a frame of any shape, well formed or not."""
    return encode_raw(list(values))

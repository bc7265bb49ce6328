"""Closing the connection: goodbye both ways, what it ends, and what a server does when a connection breaks."""

from __future__ import annotations

import time

from rstck.core.evidence import EXPECTATION
from rstck.protocols.network.peer import PeerClosed, Silent
from rstck.core.verdict import RuleViolation, TargetError
from rstck.protocols.network.wire import Goodbye
from rstck.core.checks import rule
from rstck.rules.network.server import connect, flowing, served_claim


@rule("net.closing.2")
def goodbye_is_answered_with_goodbye(wire):
    """net.closing.2 (SHOULD): the kit's goodbye, with a stream open, is answered by the server's goodbye; then
    the connection closes."""
    peer = connect(wire)
    flowing(peer, 5)
    peer.send(Goodbye("the check says goodbye"))
    peer.goodbye_then_close(rule="net.closing.2", expected="goodbye in answer, then the connection closed")


@rule("net.closing.3")
def goodbye_ends_every_stream(wire):
    """net.closing.3: after the kit's goodbye an unbounded stream stops: the server closes, says goodbye, or goes
    quiet for the window measured on the connection; a server still streaming at the deadline fails."""
    peer = connect(wire)
    flowing(peer)
    window = peer.quiet_window()  # measured before the goodbye: nothing can be asked after it
    peer.send(Goodbye("the check says goodbye"))
    with peer.recorded("stops_after_goodbye"):
        _stops_after_goodbye(peer, window)


def _stops_after_goodbye(peer, window: float) -> None:
    """Read until the server closes, says goodbye, or sends nothing for `window`; still sending at the deadline: a
    violation of net.closing.3."""
    while True:
        try:
            frame = peer.receive(window)
        except PeerClosed:
            return
        except Silent:
            if time.monotonic() < peer.session.deadline:
                peer.note(f"quiet for {window * 1000:.0f} ms: the stream has stopped")
                return
            raise RuleViolation("net.closing.3", "the stream to stop after goodbye",
                                "elements were still arriving at the deadline", timed_out=True,
                                claim=EXPECTATION) from None
        if type(frame) is Goodbye:
            return  # anything after it is net.rstck.13's, charged as it arrives


@rule("net.rstck.13")
def nothing_after_the_servers_goodbye(wire):
    """net.rstck.13: the server says goodbye (in answer to the kit's, with an unbounded stream flowing); nothing
    follows it before the close (every frame after a goodbye is charged as it arrives). A server that closes
    without goodbye, or never says it, leaves nothing to judge here: that is net.closing.2's finding, or
    net.closing.3's if its stream ran on, and this check is blocked by it."""
    peer = connect(wire)
    flowing(peer)
    window = peer.quiet_window()  # measured before the goodbye: nothing can be asked after it
    peer.send(Goodbye("the check says goodbye"))
    with peer.recorded("answered_goodbye"):
        _answered_goodbye(peer, window)
    peer.after_goodbye()


def _answered_goodbye(peer, window: float) -> None:
    """Read until the server's goodbye after the kit's: closed first is net.closing.2's finding, still streaming at
    the deadline (within `window` of it) net.closing.3's."""
    last_element = None
    while True:
        try:
            frame = peer.receive()
        except PeerClosed:
            raise RuleViolation("net.closing.2", "the server's goodbye in answer to the kit's, before the close",
                                "the connection closed without it", claim=EXPECTATION) from None
        except Silent:
            if last_element is not None and peer.session.deadline - last_element <= window:
                raise RuleViolation("net.closing.3", "the stream to stop after the kit's goodbye",
                                    "elements were still arriving at the deadline, and no goodbye",
                                    timed_out=True, claim=EXPECTATION) from None
            raise RuleViolation("net.closing.2", "the server's goodbye in answer to the kit's",
                                "none came before the deadline", timed_out=True, claim=EXPECTATION) from None
        if type(frame) is Goodbye:
            return
        last_element = time.monotonic()


@rule("net.closing.1")
def a_reset_connection_leaves_the_server_serving(wire):
    """net.closing.1 (SHOULD): a connection reset in the middle of an unbounded stream is a close like any other,
    and the server goes on serving. A second connection, opened before the reset, watches the server: a round
    trip on it after the reset, then a quiet window measured by that round trip, give the server the time to
    notice the reset; that connection must still be served, and so must a new one. A server that went down
    leaves the checks after this one blocked by this finding, rather than in error."""
    witness = connect(wire)
    peer = connect(wire)
    flowing(peer)
    peer.reset()
    try:
        started = time.monotonic()
        _served(witness, "the connection opened before the reset")
        witness.round_trip_s = time.monotonic() - started
        witness.quiet()
        _served(witness, "the connection opened before the reset, after a quiet window")
        try:
            fresh = connect(wire)
        except TargetError as refused:
            raise RuleViolation("net.closing.1", "a new connection to be served after a reset", str(refused)) \
                from None
        _served(fresh, "a new connection")
    except RuleViolation as violation:
        if violation.rule == "net.closing.1":
            wire.down_after("the server stopped serving after net.closing.1's check reset a connection")
        raise


def _served(peer, what: str) -> None:
    stream_id = peer.subscribe("rstck/range/3", 3)
    stream = peer.until_ended(stream_id, rule="net.closing.1", expected=f"{what} to be served after a reset")
    if not stream.terminal.startswith("onComplete"):
        raise RuleViolation("net.closing.1", f"rstck/range/3 to complete on {what}", stream.terminal,
                            claim=served_claim(peer, stream_id, "onComplete"))

"""Closing the connection: goodbye both ways, what it ends, and what a server does when a connection breaks."""

from __future__ import annotations

import time

from ....adapters.network.peer import PeerClosed, Silent
from ....verdict import RuleViolation
from ....wire import INT64_MAX, Goodbye
from ... import rule
from . import connect


def _flowing(peer, elements: int = 50) -> int:
    """Open rstck/infinite with unbounded demand and read until `elements` of it have arrived; its id."""
    stream_id = peer.subscribe("rstck/infinite", INT64_MAX)
    stream = peer.stream(stream_id)
    peer.until(lambda _: stream.received >= elements or bool(stream.terminal), rule="3.8",
               expected=f"{elements} elements of rstck/infinite, requested without bound")
    return stream_id


@rule("net.closing.1")
def a_reset_connection_leaves_the_server_serving(target):
    """net.closing.1 (SHOULD): a connection reset in the middle of an unbounded stream; a new connection is then
    served as before (a server that kept the old stream's resources would, in the end, not be)."""
    peer = connect(target)
    _flowing(peer)
    peer.reset()
    fresh = connect(target)
    stream_id = fresh.subscribe("rstck/range/3", 3)
    stream = fresh.until_ended(stream_id, rule="net.closing.1", expected="a new connection to be served after a "
                               "reset")
    if not stream.terminal.startswith("onComplete"):
        raise RuleViolation("net.closing.1", "rstck/range/3 to complete on a new connection", stream.terminal)


@rule("net.closing.2")
def goodbye_is_answered_with_goodbye(target):
    """net.closing.2 (SHOULD): the kit's goodbye, with a stream open, is answered by the server's goodbye; then
    the connection closes."""
    peer = connect(target)
    _flowing(peer, 5)
    peer.send(Goodbye("the check says goodbye"))
    peer.goodbye_then_close(rule="net.closing.2", expected="goodbye in answer, then the connection closed")


@rule("net.closing.3")
def goodbye_ends_every_stream(target):
    """net.closing.3: after the kit's goodbye an unbounded stream stops: the server closes, says goodbye, or goes
    quiet for the window measured on the connection; a server still streaming at the deadline fails."""
    peer = connect(target)
    _flowing(peer)
    window = peer.quiet_window()  # measured before the goodbye: nothing can be asked after it
    peer.send(Goodbye("the check says goodbye"))
    while True:
        try:
            frame = peer.receive(window)
        except PeerClosed:
            return
        except Silent:
            if time.monotonic() < target.deadline:
                peer.note(f"quiet for {window * 1000:.0f} ms: the stream has stopped")
                return
            raise RuleViolation("net.closing.3", "the stream to stop after goodbye",
                                "elements were still arriving at the deadline", timed_out=True) from None
        if type(frame) is Goodbye:
            return  # anything after it is net.rstck.13's, charged as it arrives


@rule("net.rstck.13")
def nothing_after_the_servers_goodbye(target):
    """net.rstck.13: the server says goodbye (in answer to the kit's, with an unbounded stream flowing); nothing
    follows it before EOF (every frame after a goodbye is charged as it arrives)."""
    peer = connect(target)
    _flowing(peer)
    peer.send(Goodbye("the check says goodbye"))
    peer.goodbye_then_close(rule="net.rstck.13", expected="the server's goodbye and then EOF")

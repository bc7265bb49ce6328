"""Checks of a server under test (rstck check tcp://HOST:PORT): each opens fresh connections of its own, speaks
frame by frame, and ends every case that injects no fault with goodbye."""

from __future__ import annotations

import time
from typing import Any

from rstck.core.evidence import EXPECTATION
from rstck.protocols.network.peer import QUIET_WINDOW_MAX_S, Silent, WirePeer
from rstck.core.verdict import RuleViolation
from rstck.protocols.network.wire import INT64_MAX, Subscribe, describe, encode, encode_raw


def connect(wire: Any, *, hello: bool = True) -> WirePeer:
    """A fresh connection to the server under test (clientHello sent unless told not to): `wire` is what the check
    is called with (the adapter's connections to the server)."""
    return wire.connect(hello=hello)


def answers_fault_with_goodbye(wire: Any, rule: str, bad: bytes, fault: str, *, hello: bool = True) -> None:
    """Send `bad` (labelled as the fault injected) and expect goodbye with a reason, then the close."""
    peer = connect(wire, hello=hello)
    peer.send_bytes(bad, fault=fault)
    expect_goodbye(peer, rule, fault)


def expect_goodbye(peer: WirePeer, rule: str, fault: str) -> None:
    """After the fault `fault`: goodbye with a non-empty reason, then EOF."""
    expected = f"goodbye with a reason, then the connection closed, for {fault}"
    goodbye = peer.goodbye_then_close(rule=rule, expected=expected)
    if not goodbye.reason.strip():
        raise RuleViolation(rule, expected, "goodbye with an empty reason",
                            claim=peer.session.evidence.claim("goodbye_reason", connection=peer))


def served_claim(peer: WirePeer, stream_id: int | None, terminal: str = "", *,
                 elements: int | None = None) -> dict | None:
    """The claim of a check that judged how `peer`'s server served stream `stream_id`: it ended with `terminal`
    ("onComplete", "onError"; "": not yet) after `elements` elements, and the server said no goodbye (None: no
    stream judged, only the goodbye)."""
    fields = {"stream": stream_id, "terminal": terminal} if stream_id is not None else {}
    return peer.session.evidence.claim("served", connection=peer, **fields,
                                       **({"elements": elements} if elements is not None else {}))


def raw(*values: Any) -> bytes:
    """One MessagePack array of `values`: a frame of any shape, well formed or not."""
    return encode_raw(list(values))


def send_in_pieces(peer: WirePeer, frame: Any, cuts: tuple[int, ...]) -> None:
    """Send a well-formed `frame` as separate writes, cut at the byte offsets `cuts`, each once the server has
    read the one before: known on this host (its receive queue is empty, rstck/protocols/network/delivery.py),
    else the connection's quiet window, which the row then names."""
    data = encode(frame)
    bounds = (0, *cuts, len(data))
    for piece, (start, end) in enumerate(zip(bounds, bounds[1:])):
        if piece:
            peer.until_read()
        peer.send_piece(data[start:end], f"-> {describe(frame)}: bytes {start}-{end - 1} of {len(data)}")
    if type(frame) is Subscribe:
        peer.ledger.subscribe(frame)


def flowing(peer: WirePeer, elements: int = 50) -> int:
    """Open rstck/infinite with unbounded demand and read until `elements` of it have arrived; its id."""
    stream_id = peer.subscribe("rstck/infinite", INT64_MAX)
    peer.until(peer.has_received(stream_id, elements) | peer.ended(stream_id), rule="3.8",
               expected=f"{elements} elements of rstck/infinite, requested without bound")
    return stream_id


def expect_stopped(peer: WirePeer, stream_id: int, rule: str) -> None:
    """After the kit's cancel of stream `stream_id`: its elements stop. Those already on their way may still
    arrive (they cross the cancel); the stream has stopped once a quiet window passes without one, then a round
    trip (a subscribe to rstck/empty: the server's loop has run again) and a second window, whatever other streams
    still send. The window is the connection's, or twice the longest gap between the stream's frames before the
    cancel if that is longer (a server that serves its streams in turns leaves each quiet while it serves the
    others), at most QUIET_WINDOW_MAX_S. Still arriving at the deadline, sent after the server had read the cancel
    as far as the kit can tell (`_quiet_for`): a violation. A deadline that cuts the kit's windows otherwise
    decides nothing: the stream is taken as stopped, and the trace says so."""
    with peer.recorded("expect_stopped", stream=stream_id, rule=rule):
        _stopped(peer, stream_id, rule)


def expect_still_stopped(peer: WirePeer, stream_id: int, after_id: int, rule: str) -> None:
    """After `expect_stopped` judged stream `stream_id` stopped while stream `after_id` still flowed, and the kit
    cancelled that one too: once it has stopped, the first stays stopped. Quiet windows alone cannot tell a stopped
    stream from one the server only put behind another that flows; with nothing else left to serve, such a server
    sends the first again now. A finding only if elements of the first come back and are still arriving at the
    deadline; a deadline that cuts the wait while nothing of the first came back leaves the verdict to
    `expect_stopped`'s (a loaded machine may take seconds to read what the second had on its way)."""
    with peer.recorded("expect_still_stopped", stream=stream_id, after=after_id, rule=rule):
        stream = peer.stream(stream_id)
        judged = stream.after_cancel
        try:
            decided = _stopped(peer, after_id, rule) and _stopped(peer, stream_id, rule)
        except RuleViolation as violation:
            if not violation.timed_out:
                raise
            decided = False
        if decided:
            return
        if stream.after_cancel == judged:
            peer.note(f"the deadline came first; nothing of stream {stream_id} arrived since it was judged "
                      "stopped")
            return
        raise RuleViolation(rule, f"stream {stream_id} to stay stopped once stream {after_id} was cancelled",
                            f"{stream.after_cancel - judged} more elements of stream {stream_id} after it had "
                            f"stopped while stream {after_id} flowed, still arriving at the deadline",
                            timed_out=True, claim=EXPECTATION)


def _stopped(peer: WirePeer, stream_id: int, rule: str) -> bool:
    """True once stream `stream_id` has stopped (`expect_stopped`); False if the deadline cut the kit's wait
    without showing it still sent after the cancel."""
    stream = peer.stream(stream_id)
    window = min(max(peer.quiet_window(), 2 * stream.longest_gap_s), QUIET_WINDOW_MAX_S)
    # Begun at once, this round trip is answered after everything the server sent before it read the cancel: what
    # of the stream comes after the answer was sent with the cancel read, what comes before may have crossed it.
    cancel_read = peer.stream(peer.subscribe("rstck/empty"))
    if not _quiet_for(peer, stream, window, cancel_read, rule):
        return False
    while True:
        before = stream.after_cancel
        barrier = peer.stream(peer.subscribe("rstck/empty"))
        # Bounded: a server busy with another unbounded stream may be slow to read the subscribe; that is no
        # finding here, and the first window then decides.
        end = min(peer.session.deadline, time.monotonic() + QUIET_WINDOW_MAX_S)
        while not barrier.terminal and time.monotonic() < end:
            try:
                peer.receive(max(0.0, end - time.monotonic()))
            except Silent:
                break
        if not barrier.terminal:
            peer.note(f"rstck/empty had not completed {QUIET_WINDOW_MAX_S:.0f} s after its subscribe: the first "
                      "quiet window decides")
            break
        if not _quiet_for(peer, stream, window, cancel_read, rule):
            return False
        if stream.after_cancel == before:
            break
    peer.note(f"no element of stream {stream_id} for {window * 1000:.0f} ms, twice, around a round trip: it has "
              f"stopped ({stream.after_cancel} arrived after the cancel)")
    return True


def _quiet_for(peer: WirePeer, stream: Any, window: float, cancel_read: Any, rule: str) -> bool:
    """Read until no element of `stream` has arrived for `window`: True. At the deadline, a violation of `rule` if
    its elements were still arriving, the last sent after the server had read the cancel as far as the kit can
    tell (after the answer to `cancel_read`, a round trip begun after the cancel, if it came); else False with a
    note: the deadline cut the kit's own window, and a silence of the kit's making decides nothing."""
    seen, changed, arrived = stream.after_cancel, time.monotonic(), False
    while time.monotonic() - changed < window:
        try:
            peer.receive(window)
        except Silent:
            if time.monotonic() < peer.session.deadline:
                continue
            if arrived and (not cancel_read.terminal or stream.last_after_cancel > cancel_read.ended_at):
                after = (f"the last after the answer to subscribe {cancel_read.id} (rstck/empty), made after the "
                         f"cancel" if cancel_read.terminal else f"subscribe {cancel_read.id} (rstck/empty), made "
                         f"after the cancel, still unanswered")
                raise RuleViolation(rule, f"stream {stream.id} to stop after its cancel",
                                    f"{stream.after_cancel} elements after the cancel, still arriving at the "
                                    f"deadline ({after})", timed_out=True, claim=EXPECTATION) from None
            peer.note(f"the deadline came {(time.monotonic() - changed) * 1000:.0f} ms into a quiet window of "
                      f"{window * 1000:.0f} ms for stream {stream.id}: "
                      + (f"its last element came before the answer to subscribe {cancel_read.id} (rstck/empty), "
                         "made after the cancel" if arrived else "no element of it came meanwhile")
                      + "; it is taken as stopped")
            return False
        if stream.after_cancel != seen:
            seen, changed, arrived = stream.after_cancel, time.monotonic(), True
    return True

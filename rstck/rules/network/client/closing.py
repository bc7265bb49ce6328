"""Closing the connection, as a client takes it: the kit's goodbye is answered, ends the client's stream as
onError would, and nothing follows the client's own goodbye."""

from __future__ import annotations

from rstck.core.evidence import EXPECTATION
from rstck.protocols.network.peer import PeerClosed, Silent
from rstck.core.verdict import RuleViolation
from rstck.protocols.network.wire import Goodbye, OnNext, Subscribe
from rstck.core.checks import rule
from rstck.rules.network.client import DELIVERY, RANGE_ELEMENTS, expect_failed, expect_printed, run_client, told


def _goodbye_mid_stream(client):
    """rstck/range/3: after the first element, the kit says goodbye, then reads until the client's goodbye or
    EOF. The case, and whether the client answered with goodbye."""
    case = run_client(client)
    peer = case.peer
    with told(case):
        stream = peer.expect_subscribe(rule="net.closing.3")
        peer.subscribed(stream)
        peer.serve(stream, RANGE_ELEMENTS[:1], rule="net.closing.3",
                   expected="the client to request elements of rstck/range/3")
        peer.send(Goodbye("the kit ends the session in the middle of the stream"))
        with peer.recorded("goodbye_or_close"):
            try:
                while peer.goodbye_received is None:
                    peer.receive()
            except PeerClosed:
                pass
            except Silent:
                raise RuleViolation("net.closing.2", "the client's goodbye, or at least the close, after the kit's "
                                    "goodbye", "the connection was still open at the deadline", timed_out=True,
                                    claim=EXPECTATION) from None
    return case, peer.goodbye_received is not None


@rule("net.closing.2")
def client_answers_the_kits_goodbye_with_goodbye(client):
    """net.closing.2 (SHOULD): the kit says goodbye after the first element of rstck/range/3: the client answers
    with its own goodbye before it closes."""
    case, answered = _goodbye_mid_stream(client)
    if not answered:
        raise RuleViolation("net.closing.2", "the client's goodbye in answer to the kit's, then the close",
                            f"the client closed the connection without goodbye; {case.summary()}",
                            claim=case.session.evidence.claim("answered_with_goodbye", connection=case.peer))


@rule("net.closing.3")
def client_takes_the_kits_goodbye_as_the_end_of_its_stream(client):
    """net.closing.3: the kit says goodbye after the first element of rstck/range/3: the client's stream ends as
    by onError, so it exits with a non-zero status (3), having printed only that element."""
    case, _ = _goodbye_mid_stream(client)
    case.wait_exit(rule="net.closing.3", expected="the client to exit after the kit's goodbye")
    expect_printed(case, RANGE_ELEMENTS[:1], rule=DELIVERY, what="the one element sent before the goodbye")
    expect_failed(case, rule="net.closing.3", why="the kit's goodbye ended its stream as onError would")


@rule("net.rstck.13")
def client_sends_nothing_after_its_goodbye(client):
    """net.rstck.13: the kit makes the client say goodbye (message type 13 after the first element: net.rstck.2),
    then sends what a client might answer (an element it requested, a subscribe to it) and its own goodbye:
    nothing may come from the client after its goodbye, not even an answer to the kit's."""
    case = run_client(client)
    peer = case.peer
    peer.hold_goodbye_answer()  # the kit sends first what the client must leave unanswered
    with told(case):
        stream = peer.expect_subscribe(rule="net.rstck.13")
        peer.subscribed(stream)
        peer.serve(stream, RANGE_ELEMENTS[:1], rule="net.rstck.13",
                   expected="the client to request elements of rstck/range/3")
        peer.await_demand(stream, rule="net.rstck.13", expected="the client to request the rest of rstck/range/3")
        peer.inject([13, stream], fault="message type 13, so that the client says goodbye")
        if peer.goodbye_received is None:
            peer.until(peer.frame_of(Goodbye), rule="net.rstck.2",
                       expected="goodbye with a reason, for message type 13")
        peer.note("the kit sends after the client's goodbye: frames the client must neither take nor answer")
        peer.send(OnNext(stream.id, RANGE_ELEMENTS[1]))
        peer.send(Subscribe("rstck/range/1", 1, 1))
        peer.send(Goodbye("the kit's goodbye, after the client's"))
        peer.read_to_close(rule="net.rstck.13", expected="the connection closed after the client's goodbye")
    case.wait_exit(rule="net.rstck.13", expected="the client to exit once it closed the connection")

"""Protocol negotiation, as a client takes it: the loose handshake, a serverHello of another version, and the
faults of rstck's decisions (a message before the serverHello, a second serverHello)."""

from __future__ import annotations

import time

from rstck.core.evidence import EXPECTATION
from rstck.protocols.network.peer import PeerClosed, Silent
from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.protocols.network.wire import ClientHello, OnComplete, OnNext, ServerHello, Subscribed
from rstck.core.checks import rule
from rstck.rules.network.client import (DELIVERY, RANGE_ELEMENTS, answers_fault_with_goodbye, expect_completed, expect_failed,
               expect_printed, run_client, serve_stream, told)

# How long the kit waits for the subscribe a client sends right after its clientHello (net.handshake.4): long
# enough for any client that sends it without waiting, since nothing else delays it.
OPTIMISTIC_WINDOW_S = 1.0


@rule("net.handshake.1")
def client_takes_a_server_hello_sent_before_its_client_hello(client):
    """net.handshake.1: the kit sends its serverHello the moment it accepts the connection, before it reads
    anything: the client still reads rstck/range/3 to the end. A client that refuses the early hello is
    `unsupported` here, as the item's level (MAY) says; wrong elements or exit status are net.core.2."""
    case = run_client(client)
    with told(case):
        serve_stream(case.peer, RANGE_ELEMENTS, rule="net.handshake.1")
    expect_completed(case, RANGE_ELEMENTS, rule=DELIVERY, what="the 3 elements of rstck/range/3, one hex line each")


@rule("net.handshake.2")
def client_answers_a_server_hello_of_version_1_with_goodbye(client):
    """net.handshake.2: the kit's first frame is serverHello(1, []): the client answers with goodbye giving a
    reason, and closes the connection. Printing an element or exiting 0 afterwards is net.handshake.5."""
    case = run_client(client, hello=False)
    with told(case):
        case.peer.hello(1, fault="serverHello of version 1, which a client of version 0 does not support")
        case.peer.goodbye_then_close(rule="net.handshake.2", expected="goodbye with a reason, then the connection "
                                     "closed, for a serverHello of version 1")
    case.wait_exit(rule="net.handshake.2", expected="the client to exit once it closed the connection")
    expect_printed(case, [], rule="net.handshake.5", what="nothing: no server of its version accepted it")
    expect_failed(case, rule="net.handshake.5", why="no server of its version accepted its subscribe")


@rule("net.handshake.5")
def client_discards_its_messages_after_a_server_hello_of_version_1(client):
    """net.handshake.5: the kit waits (at most 1 s) for the subscribe the client sends right after its
    clientHello, then answers as a server of version 1 might: serverHello(1, []) and, in the same write, frames
    that in version 0 read as subscribed, the 3 elements and onComplete for that subscribe. The client must
    consider its subscribe discarded: it prints nothing and does not exit 0. n/a for a client that sends nothing
    before the serverHello arrives (net.handshake.4 is a MAY)."""
    case = run_client(client, hello=False)
    peer = case.peer
    with told(case):
        with peer.recorded("optimistic_subscribe", within_s=OPTIMISTIC_WINDOW_S):
            stream = _optimistic_subscribe(peer)
        peer.unless_refused("net.handshake.5", "the client's subscribe, sent after its clientHello")
        if stream is None:
            raise NotApplicable(f"the client sent no subscribe within {OPTIMISTIC_WINDOW_S:.0f} s of connecting, "
                                "before any serverHello: it has no optimistic message to consider discarded")
        version_1 = "what a server of version 1 might send; read as version 0 it answers the client's subscribe"
        peer.send_together([(ServerHello(1, ()), "serverHello of version 1"),
                            (Subscribed(stream.id, 0), version_1),
                            *((OnNext(stream.id, element), version_1) for element in RANGE_ELEMENTS),
                            (OnComplete(stream.id), version_1)])
    case.wait_exit(rule="net.handshake.5", expected="the client to give up its stream and exit")
    expect_printed(case, [], rule="net.handshake.5", what="nothing: its subscribe was discarded")
    expect_failed(case, rule="net.handshake.5", why="its subscribe was discarded")


def _optimistic_subscribe(peer):
    """The client's subscribe to its publisher, sent before any serverHello came, if it comes within
    OPTIMISTIC_WINDOW_S; None if it does not."""
    stream = None
    end = time.monotonic() + OPTIMISTIC_WINDOW_S
    while stream is None and (remaining := end - time.monotonic()) > 0:
        try:
            peer.receive(remaining)
        except Silent:
            break
        except PeerClosed:
            peer.unless_refused("net.handshake.5", "the client to wait for the server's hello")
            raise RuleViolation("net.handshake.5", "the client to wait for the server's hello",
                                "it closed the connection before any serverHello", claim=EXPECTATION) from None
        stream = next((s for s in peer.ledger.streams.values() if s.publisher == peer.publisher), None)
    return stream


@rule("net.handshake.6")
def client_sends_its_hello_without_waiting_for_the_servers(client):
    """net.handshake.6: the kit withholds its serverHello until the clientHello has arrived, as a server that
    supports several versions must: the client sends its clientHello without waiting, and reads rstck/range/3
    to the end. A client that waits for the serverHello first fails by the deadline."""
    case = run_client(client, hello=False)
    with told(case):
        case.peer.until(case.peer.frame_of(ClientHello), rule="net.handshake.6",
                        expected="the clientHello, sent without waiting for a serverHello")
        case.peer.hello()
        serve_stream(case.peer, RANGE_ELEMENTS, rule="net.handshake.6")
    expect_completed(case, RANGE_ELEMENTS, rule=DELIVERY, what="the 3 elements of rstck/range/3, one hex line each")


@rule("net.rstck.5")
def client_answers_a_message_before_the_server_hello_with_goodbye(client):
    """net.rstck.5: the kit's first frame is onNext(1, element 0), before any serverHello: the client answers with
    goodbye giving a reason and closes; it prints nothing, and does not exit 0 (net.closing.3)."""
    case = run_client(client, hello=False)
    with told(case):
        case.peer.send(OnNext(1, RANGE_ELEMENTS[0]), fault="onNext before the serverHello")
        case.peer.goodbye_then_close(rule="net.rstck.5", expected="goodbye with a reason, then the connection closed, "
                                     "for an onNext before the serverHello")
    case.wait_exit(rule="net.rstck.5", expected="the client to exit once it closed the connection")
    expect_printed(case, [], rule="net.rstck.5", what="nothing: the onNext came before the serverHello")
    expect_failed(case, rule="net.closing.3", why="its goodbye ended the stream as onError would")


@rule("net.rstck.14")
def client_sends_its_hello_as_its_first_frame(client):
    """net.rstck.14: the client's first frame is its clientHello (a goodbye alone may come before it), then it reads
    rstck/range/3 to the end. Every check watches for a frame before the clientHello and charges it here, by name;
    the kit answers it with goodbye (net.rstck.5 is the receiver's duty), which keeps the check's own item from a
    verdict: that item is `blocked` by this one."""
    case = run_client(client)
    with told(case):
        case.peer.until(case.peer.frame_of(ClientHello), rule="net.rstck.14",
                        expected="the clientHello as the client's first frame")
        serve_stream(case.peer, RANGE_ELEMENTS, rule=DELIVERY)
    expect_completed(case, RANGE_ELEMENTS, rule=DELIVERY, what="the 3 elements of rstck/range/3, one hex line each")


@rule("net.rstck.6")
def client_answers_a_second_server_hello_with_goodbye(client):
    """net.rstck.6: a second serverHello(0, []) after the first element."""
    answers_fault_with_goodbye(client, "net.rstck.6", "a second serverHello",
                               lambda peer, _: peer.hello(fault="a second serverHello"))

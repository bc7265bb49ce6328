"""Protocol negotiation: the hellos, versions and extensions, seen from a client's side of the connection."""

from __future__ import annotations

import time

from rstck.protocols.network.peer import PeerClosed, Silent
from rstck.core.verdict import RuleViolation, Unsupported
from rstck.protocols.network.wire import PROTOCOL_VERSION, ClientHello, ServerHello, Subscribe
from rstck.core.checks import rule, untested
from rstck.rules.network.server import connect, expect_goodbye

# How long the kit waits for a serverHello it has not asked for. The draft permits waiting for the clientHello,
# so an answer that does not come within this bound is "not offered", never a failure.
UNPROMPTED_HELLO_S = 1.0

untested("net.handshake.3", "concerns how a transport signals a future, incompatible version; nothing to observe "
                            "in a version-0 session")
untested("net.extensions.2", "rstck defines no extension; nothing to observe unless a peer negotiates one")
untested("net.extensions.3", "rstck defines no extension; nothing to observe unless a peer negotiates one")


@rule("net.handshake.1")
def server_hello_may_come_before_the_client_hello(wire):
    """net.handshake.1 (MAY): the kit connects and says nothing; a server that does not wait sends its
    serverHello anyway (looked for during a bounded wait, UNPROMPTED_HELLO_S)."""
    peer = connect(wire, hello=False)
    waited = time.monotonic()
    with peer.recorded("read", within_s=UNPROMPTED_HELLO_S):
        try:
            peer.receive(UNPROMPTED_HELLO_S)
        except (Silent, PeerClosed):
            pass
    if peer.server_hello is None:
        raise Unsupported(f"no serverHello within {time.monotonic() - waited:.1f} s before the clientHello "
                          "(decided by that bound): the server waits for the client")
    peer.send(ClientHello(PROTOCOL_VERSION, ()))


@rule("net.handshake.2")
def an_unsupported_version_gets_goodbye(wire):
    """net.handshake.2: clientHello with version 1 (only 0 exists) is answered with goodbye and a close."""
    peer = connect(wire, hello=False)
    peer.send(ClientHello(1, ()), fault="clientHello of version 1")
    expect_goodbye(peer, "net.handshake.2", "a clientHello of version 1")


@rule("net.handshake.4")
def messages_right_after_the_client_hello_are_served(wire):
    """net.handshake.4 (MAY for the client): clientHello, subscribe and its demand go out in one write, before
    anything is read; the server serves the stream."""
    peer = connect(wire, hello=False)
    peer.send(ClientHello(PROTOCOL_VERSION, ()))
    stream_id = peer.subscribe("rstck/range/3", 3)
    try:
        peer.until_ended(stream_id, rule="net.handshake.4", expected="the stream subscribed right after the "
                         "clientHello to be served")
    except RuleViolation as violation:
        raise Unsupported(f"a subscribe sent right after the clientHello was not served: {violation.observed}") \
            from None


@rule("net.handshake.6")
def the_server_hello_matches_the_client_version(wire):
    """net.handshake.6: after clientHello(0), the serverHello says version 0."""
    peer = connect(wire)
    if peer.server_hello is None:
        peer.until(peer.frame_of(ServerHello), rule="net.handshake.6", expected="a serverHello")
    if peer.server_hello.version != PROTOCOL_VERSION:
        raise RuleViolation("net.handshake.6", f"serverHello(version={PROTOCOL_VERSION}), the client's version",
                            f"serverHello(version={peer.server_hello.version})",
                            claim=wire.session.evidence.claim("hello_version", connection=peer,
                                                              version=PROTOCOL_VERSION))


@rule("net.extensions.1")
def no_extension_message_without_negotiation(wire):
    """net.extensions.1: hellos naming no extension, then plain, packed and split streams: no frame of type 64 or
    above (every frame is checked as it arrives)."""
    peer = connect(wire)
    for name, demand in (("rstck/range/20", 20), ("rstck/blobs/1/100000", 1)):
        stream_id = peer.subscribe(name, demand)
        peer.until_ended(stream_id, rule="1.5", expected=f"{name} to complete")
    peer.quiet()


@rule("net.rstck.5")
def a_message_before_the_client_hello_gets_goodbye(wire):
    """net.rstck.5: a subscribe before any clientHello is answered with goodbye and a close."""
    peer = connect(wire, hello=False)
    peer.send(Subscribe("rstck/range/1", 1, 1), fault="subscribe before the clientHello")
    expect_goodbye(peer, "net.rstck.5", "a subscribe before the clientHello")


@rule("net.rstck.6")
def a_second_client_hello_gets_goodbye(wire):
    """net.rstck.6: a second clientHello on the same connection is answered with goodbye and a close."""
    peer = connect(wire)
    peer.send(ClientHello(PROTOCOL_VERSION, ()), fault="a second clientHello")
    expect_goodbye(peer, "net.rstck.6", "a second clientHello")

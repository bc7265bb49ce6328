"""The kit knows, rather than guesses, that a server on this host has read a piece of a frame
(rstck/protocols/network/delivery.py): net.framing.4's pieces then reach the server one read at a time, however
busy the machine."""

from __future__ import annotations

import socket
import time

from rstck.protocols.network.delivery import wait_until_read


def _pair() -> tuple[socket.socket, socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        kit = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    return kit, server


def test_bytes_the_server_has_not_read_are_waited_for_until_the_bound():
    kit, server = _pair()
    with kit, server:
        kit.sendall(b"abcd")
        assert wait_until_read(kit, time.monotonic() + 0.05) == "not read"
        assert server.recv(2) == b"ab"  # half of them: still not everything
        assert wait_until_read(kit, time.monotonic() + 0.05) == "not read"


def test_bytes_the_server_read_are_known_as_read():
    kit, server = _pair()
    with kit, server:
        kit.sendall(b"abcd")
        assert server.recv(4) == b"abcd"
        assert wait_until_read(kit, time.monotonic() + 5) == "read"


def test_a_server_that_closed_its_end_is_known_as_closed():
    kit, server = _pair()
    with kit:
        kit.sendall(b"abcd")
        server.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        server.close()  # a reset: its socket is gone at once
        assert wait_until_read(kit, time.monotonic() + 5) == "closed"


def test_a_connection_the_kernel_does_not_list_is_not_judged():
    kit, server = socket.socketpair()  # no TCP addresses: as a server on another host, nothing can be known
    with kit, server:
        kit.sendall(b"abcd")
        assert wait_until_read(kit, time.monotonic() + 5) == "not listed"


def test_an_ipv6_connection_is_found_too():
    try:
        listener = socket.create_server(("::1", 0), family=socket.AF_INET6)
    except OSError:
        import pytest

        pytest.skip("no IPv6 loopback on this machine")
    with listener:
        kit = socket.create_connection(listener.getsockname()[:2])
        server, _ = listener.accept()
    with kit, server:
        kit.sendall(b"abcd")
        assert wait_until_read(kit, time.monotonic() + 0.05) == "not read"
        assert server.recv(4) == b"abcd"
        assert wait_until_read(kit, time.monotonic() + 5) == "read"

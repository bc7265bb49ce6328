"""Whether the other end of a connection has read what the kit sent: known, not guessed, when both ends are on
this host.

A check that sends a frame in pieces (net.framing.4) tests something only if the other side reads each piece
before the next arrives; two pieces that meet in its receive queue are read as one, and the check then passes
whatever the reader does with a cut frame. A sender cannot see the other side's reads, but Linux lists every
TCP socket of the network namespace in /proc/net/tcp and /proc/net/tcp6 with its queues: once the kit's send
queue is empty (everything was acknowledged) and the other end's receive queue is empty (its program took
everything), the piece was read alone. A server on another host, or in another namespace, is not listed: the
caller then falls back to the connection's quiet window and says so.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import time

_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
POLL_S = 0.0005
POLL_MAX_S = 0.01


def _address(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """One address of a /proc/net/tcp{,6} line: the address as the kernel keeps it (32-bit words in the host's
    byte order, printed in hex), and the port; an IPv4 address mapped into IPv6 as the IPv4 one."""
    host, port = text.split(":")
    raw = b"".join(int(host[at:at + 8], 16).to_bytes(4, sys.byteorder) for at in range(0, len(host), 8))
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address, int(port, 16)


def _endpoint(pair: tuple) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    address = ipaddress.ip_address(pair[0].split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address, pair[1]


def _is_local(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether `address` is this host's: its sockets would be listed, so one that is not has been closed."""
    if address.is_loopback:
        return True
    try:
        probe = socket.socket(socket.AF_INET if address.version == 4 else socket.AF_INET6, socket.SOCK_DGRAM)
    except OSError:
        return False
    with probe:
        try:
            probe.bind((str(address), 0))
        except OSError:
            return False
    return True


def _queues(ours: tuple, theirs: tuple) -> tuple[int | None, int | None]:
    """(the kit's unacknowledged bytes, the other end's unread bytes) of the connection ours <-> theirs; None
    for an end that is not listed."""
    sent = unread = None
    for table in _TABLES:
        try:
            with open(table) as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    if len(fields) < 5 or fields[3] == "0A":  # 0A: LISTEN; any other state has queues
                        continue
                    local, remote = _address(fields[1]), _address(fields[2])
                    tx_queue, rx_queue = (int(n, 16) for n in fields[4].split(":"))
                    if local == ours and remote == theirs:
                        sent = tx_queue
                    elif local == theirs and remote == ours:
                        unread = rx_queue
        except (OSError, ValueError):
            continue
    return sent, unread


def wait_until_read(sock: socket.socket, until: float) -> str:
    """Wait (until time.monotonic() reaches `until` at most) for the other end of `sock` to have read every byte
    sent on it. "read" once it has; "closed" when its socket is gone; "not listed" when the other end is not on
    this host (nothing can be known); "not read" when the bound came first."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return "not listed"
    try:
        ours, theirs = _endpoint(sock.getsockname()), _endpoint(sock.getpeername())
    except OSError:  # no peer any more: the connection was reset
        return "closed"
    pause = POLL_S
    while True:
        sent, unread = _queues(ours, theirs)
        if unread is None:
            return "closed" if _is_local(theirs[0]) else "not listed"
        if sent is None:
            return "not listed"
        if sent == 0 and unread == 0:
            return "read"
        if time.monotonic() >= until:
            return "not read"
        time.sleep(pause)  # a poll of the kernel's tables, not a guess that something happened
        pause = min(pause * 2, POLL_MAX_S)

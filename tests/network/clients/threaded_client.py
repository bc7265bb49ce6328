"""A conformant client of the zoo: a blocking socket read on a thread of its own, elements handed to the main
thread through a queue and consumed there (slowly, if asked), demand renewed as they are consumed.

    python tests/network/clients/threaded_client.py [--id N] [--initial-demand N] [--slow-ms MS]
        [--write-bytes N] [--read-bytes N] URL PUBLISHER

Written from docs/wire-format.md alone (framing.py, one_stream_session.py): no rstck import. Nagle's algorithm
stays on (no TCP_NODELAY), as a socket's default is. --write-bytes splits every write into sends of at most N
bytes, --read-bytes reads at most N bytes at a time, so that frames go and come in pieces.
"""

from __future__ import annotations

import argparse
import queue
import socket
import sys
import threading
import time
import urllib.parse

from framing import GOODBYE, FrameReader, frame
from one_stream_session import EXIT_FAILED, Deliver, End, OneStreamSession, Send

DRAIN_S = 2.0  # after its goodbye: how long it waits for the server's EOF


class Connection:
    def __init__(self, sock: socket.socket, write_bytes: int):
        self.sock = sock
        self.write_bytes = write_bytes
        self.lock = threading.Lock()  # the reader's answers and the consumer's requests share the socket
        self.sending = True

    def send(self, data: bytes) -> None:
        with self.lock:
            if not self.sending or not data:
                return
            step = self.write_bytes or len(data)
            try:
                for at in range(0, len(data), step):
                    self.sock.sendall(data[at:at + step])
            except OSError:
                self.sending = False

    def close_after(self, goodbye: bytes) -> None:
        """Goodbye (if any), nothing sent after it, EOF to the server, its EOF awaited (bounded), close."""
        self.send(goodbye)
        with self.lock:
            self.sending = False
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.sock.settimeout(DRAIN_S)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        self.sock.close()


def read_frames(connection: Connection, session: OneStreamSession, session_lock: threading.Lock,
                read_bytes: int, handed: queue.Queue) -> None:
    """The reader thread: frames in, answers out, elements and the end handed to the consumer."""
    reader = FrameReader()
    while True:
        try:
            data = connection.sock.recv(read_bytes)
        except OSError:
            data = b""
        with session_lock:
            if not data:
                actions = session.closed()
            else:
                frames, fault = reader.feed(data)
                actions = [a for frame in frames for a in session.take(frame)]
                if fault is not None:
                    actions += session.fault(str(fault))
        for action in actions:
            if type(action) is Send:
                connection.send(action.data)
            elif type(action) is Deliver:
                handed.put(action.element)
            elif type(action) is End:
                connection.close_after(b"" if action.reason is None else frame(GOODBYE, action.reason))
                handed.put(action)
                return
        if not data:
            return


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--id", type=int, default=2**63 - 1)
    parser.add_argument("--initial-demand", type=int, default=1)
    parser.add_argument("--slow-ms", type=float, default=0.0)
    parser.add_argument("--write-bytes", type=int, default=0)
    parser.add_argument("--read-bytes", type=int, default=65536)
    parser.add_argument("url")
    parser.add_argument("publisher")
    args = parser.parse_args()
    address = urllib.parse.urlsplit(args.url)
    sock = socket.create_connection((address.hostname, address.port))
    connection = Connection(sock, args.write_bytes)
    session, session_lock = OneStreamSession(args.publisher, args.id, args.initial_demand), threading.Lock()
    handed: queue.Queue = queue.Queue()
    connection.send(session.opening())
    reader = threading.Thread(target=read_frames, args=(connection, session, session_lock, args.read_bytes, handed),
                              daemon=True)
    reader.start()
    while True:
        item = handed.get()
        if type(item) is End:
            reader.join(DRAIN_S + 1)
            if item.status == EXIT_FAILED:
                print(f"threaded_client: the stream ended without onComplete ({item.reason})", file=sys.stderr)
            return item.status
        if args.slow_ms:
            time.sleep(args.slow_ms / 1000)  # the consumer's own pace: demand follows it
        sys.stdout.write(item.hex() + "\n")
        sys.stdout.flush()
        with session_lock:
            renewal = session.request(1)  # one consumed, one more wanted: demand stays at its initial level
        connection.send(renewal)


if __name__ == "__main__":
    sys.exit(main())

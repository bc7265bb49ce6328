"""A client of the network protocol for the kit's own tests: correct by default, or with one defect that one of
the client checks must catch (--mutant NAME; MUTANTS below says which item each breaks).

    python tests/network/clients/mutant_client.py [--mutant NAME] [--batch N] [--pid-file PATH] URL PUBLISHER

It speaks the protocol by hand on a blocking socket, independently of the reference client, and keeps the client
contract (docs/network.md): hex lines on stdout, exit 0 on onComplete, 3 when the stream failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import select
import socket
import subprocess
import sys
import time
import urllib.parse

import msgpack


def _codec():
    """rstck.protocols.network.wire alone. Importing the package would run rstck/__init__.py, which loads the whole kit and doubles
    the start-up of every case; the codec needs none of it."""
    spec = importlib.util.find_spec("rstck")
    sys.modules.setdefault("rstck", importlib.util.module_from_spec(spec))  # the package, its __init__ not run
    import rstck.protocols.network.wire

    return rstck.protocols.network.wire


wire = _codec()

# Each defect, and the item whose check catches it.
MUTANTS = {
    "none": "",
    "early-hello-refused": "net.handshake.1",  # goodbye to a serverHello that came before its clientHello
    "ignores-version": "net.handshake.2",  # takes a serverHello of any version: no goodbye, reads on
    "reads-on-after-version": "net.handshake.5",  # says goodbye to version 1, then reads the frames after it
    "waits-for-server-hello": "net.handshake.6",  # sends its clientHello only once the serverHello came
    "crashes-on-fault": "net.rstck.1",  # a frame it cannot read raises: a traceback, and no goodbye
    "skips-unknown-types": "net.rstck.2",  # drops a frame of an unknown type and reads on
    "no-size-check": "net.rstck.3",  # takes an element of another size than the stream declared
    "waits-for-declared-bytes": "net.rstck.4",  # no frame size limit: waits for a declared 4 GiB
    "accepts-invalid-utf8": "net.rstck.3",  # decodes a str leniently (U+FFFD) and acts on the frame
    "takes-frames-before-hello": "net.rstck.5",  # reads on as if the hello had come
    "subscribes-before-hello": "net.rstck.14",  # its subscribe goes out before its clientHello
    "ignores-second-hello": "net.rstck.6",
    "prints-any-id": "net.rstck.10",  # prints the onNext of every id
    "no-goodbye-answer": "net.closing.2",  # closes without answering the server's goodbye
    "exit-0-on-goodbye": "net.closing.3",  # takes the server's goodbye as the stream's completion
    "sends-after-goodbye": "net.rstck.13",  # a cancel after its own goodbye
    "prints-parts": "net.split.2",  # prints every part of a split element as an element
    "reverses-parts": "net.split.4",  # joins the parts last first
    "misreads-packed": "net.core.2",  # prints the data of an onNextPacked as one element
    "exit-0-on-error": "net.core.2",  # takes onError as completion
    # Defects that every check sees, in what the client sends (the ServingPeer's checks of each frame).
    "sends-garbage": "net.framing.4",  # a byte that is not MessagePack after its subscribe
    "sends-extension": "net.extensions.1",  # a frame of type 64 after its subscribe
    "subscribes-twice": "net.core.3",  # a second subscribe with the id of its open stream
    "requests-zero": "",  # request(0) first: no fault of a client's, but the kit's onError (3.9) ends its stream
    # Not clients of the contract: for the kit's handling of a command that does not cooperate.
    "uppercase-hex": "",  # prints elements in uppercase hex, which the contract does not allow
    "never-connects": "",  # starts a child, writes both pids to --pid-file, and sleeps
    "exits-at-once": "",  # says why on stderr, exits 5
    "hangs-connected": "",  # connects, sends its hello and subscribe, then sleeps (pids to --pid-file)
}

STREAM_ID = 1
DRAIN_S = 2.0  # after its goodbye: how long it waits for the server's goodbye or EOF


class Fault(Exception):
    """A frame the client cannot take: it answers with goodbye(reason)."""


class Client:
    def __init__(self, sock: socket.socket, publisher: str, mutant: str, batch: int):
        self.sock = sock
        self.publisher = publisher
        self.mutant = mutant
        self.batch = batch
        max_frame = 2**33 if mutant == "waits-for-declared-bytes" else wire.DEFAULT_MAX_FRAME_BYTES
        self.decoder = wire.FrameDecoder(max_frame)
        self.held = b""
        self.hello_received = False
        self.hello_sent = False
        self.goodbye_sent = False
        self.subscribed = False
        self.element_size = 0
        self.due = 0
        self.parts: list[bytes] = []
        self.done = False

    # -- sending -------------------------------------------------------------------------------------------------

    def send(self, frame) -> None:
        if self.goodbye_sent and self.mutant != "sends-after-goodbye":
            return
        try:
            self.sock.sendall(wire.encode(frame))
        except OSError:
            pass

    def start(self) -> None:
        if self.mutant == "subscribes-before-hello":
            self.send(wire.Subscribe(self.publisher, STREAM_ID, 0))
            self.send(wire.ClientHello(0, ()))
        else:
            self.send(wire.ClientHello(0, ()))
            self.send(wire.Subscribe(self.publisher, STREAM_ID, 0))
        self.hello_sent = True
        if self.mutant == "sends-garbage":
            self.sock.sendall(b"\xc1")
        elif self.mutant == "sends-extension":
            self.sock.sendall(wire.encode_raw([64, STREAM_ID]))
        elif self.mutant == "subscribes-twice":
            self.send(wire.Subscribe(self.publisher, STREAM_ID, 0))

    def goodbye(self, reason: str) -> None:
        if self.goodbye_sent:
            return
        self.send(wire.Goodbye(reason))
        self.goodbye_sent = True
        if self.mutant == "sends-after-goodbye":
            self.send(wire.Cancel(STREAM_ID))
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def request(self) -> None:
        if self.mutant == "requests-zero" and not self.due:
            self.send(wire.Request(STREAM_ID, 0))
        self.due = self.batch
        self.send(wire.Request(STREAM_ID, self.batch))

    # -- the session ---------------------------------------------------------------------------------------------

    def run(self) -> int:
        if self.mutant == "early-hello-refused" and select.select([self.sock], [], [], 0.2)[0]:
            frames = self.decoder.feed(self.sock.recv(65536))
            if frames and type(frames[0]) is wire.ServerHello:
                return self.end("a serverHello before my clientHello", 3)
        if self.mutant != "waits-for-server-hello":
            self.start()
        while True:
            data = self.sock.recv(65536)
            if not data:
                print("mutant_client: the server closed the connection", file=sys.stderr)
                return 3
            frames, fault = self.decode(data)
            try:
                for frame in frames:
                    status = self.handle(frame)
                    if status is not None:
                        return self.end("done" if status == 0 else "the stream failed", status)
                if fault is not None:
                    if self.mutant == "skips-unknown-types" and fault.kind == "unknown-type":
                        self.decoder = wire.FrameDecoder()
                        continue
                    raise Fault(str(fault))
            except Fault as reason:
                if self.mutant == "crashes-on-fault":
                    raise RuntimeError(f"cannot read the server's frame: {reason}") from None
                return self.end(str(reason), 3)

    def decode(self, data: bytes) -> tuple[list, object]:
        """The frames `data` completes, and the fault that stops them, if any. The lenient mutant reads a str
        that is not UTF-8 as a decoder with unicode_errors="replace" does, and takes the frame."""
        held = self.held + data  # the bytes of frames not yet complete: the lenient reading starts there
        frames, fault = self.decoder.feed_until_fault(data)
        if fault is None or self.mutant != "accepts-invalid-utf8" or "UTF-8" not in fault.detail:
            self.held = held[len(held) - self.decoder.buffered:] if fault is None and self.decoder.buffered else b""
            return frames, fault
        lenient = msgpack.Unpacker(raw=False, unicode_errors="replace", use_list=False)
        lenient.feed(held)
        for _ in frames:
            lenient.unpack()
        self.decoder = wire.FrameDecoder()
        taken, fault = self.decoder.feed_until_fault(wire.encode_raw(lenient.unpack()))
        if fault is not None:
            return frames + taken, fault
        self.held = b""
        more, fault = self.decode(held[lenient.tell():])
        return frames + taken + more, fault

    def end(self, reason: str, status: int) -> int:
        """Goodbye, then the server's goodbye or EOF (bounded), then the close."""
        if self.mutant == "no-goodbye-answer":
            self.sock.close()
            return status
        self.goodbye(reason)
        self.sock.settimeout(DRAIN_S)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        self.sock.close()
        return status

    def handle(self, frame) -> int | None:
        """Take one frame; the exit status once the session should end."""
        kind = type(frame)
        if kind is wire.Goodbye:
            return 0 if self.mutant == "exit-0-on-goodbye" else 3
        if not self.hello_received:
            if kind is wire.ServerHello:
                if frame.version != 0 and self.mutant != "ignores-version":
                    self.goodbye(f"unsupported version {frame.version}")
                    if self.mutant != "reads-on-after-version":
                        return 3
                self.hello_received = True
                if not self.hello_sent:
                    self.start()
                return None
            if self.mutant != "takes-frames-before-hello":
                raise Fault(f"{frame.name} before the serverHello")
            self.hello_received = True
        elif kind is wire.ServerHello or kind is wire.ClientHello:
            if self.mutant == "ignores-second-hello":
                return None
            raise Fault(f"a second hello: {frame.name}")
        if kind is wire.Subscribe:  # it publishes nothing (1.9)
            self.send(wire.Subscribed(frame.subscriber, 0))
            self.send(wire.OnError(frame.subscriber, "this client publishes nothing"))
            return None
        if kind is wire.Request or kind is wire.Cancel:
            return None
        if frame.subscriber != STREAM_ID or self.done:
            if self.mutant == "prints-any-id" and kind is wire.OnNext:
                self.print(frame.element)
            return None
        if not self.subscribed:
            if kind is wire.Subscribed:
                self.subscribed, self.element_size = True, frame.element_size
                self.request()
            return None
        if kind is wire.OnNext:
            if self.element_size and len(frame.element) != self.element_size and self.mutant != "no-size-check":
                raise Fault(f"an element of {len(frame.element)} bytes in a stream of {self.element_size}-byte ones")
            self.deliver([frame.element])
        elif kind is wire.OnNextPacked:
            if self.mutant == "misreads-packed":
                self.print(frame.data)
                self.deliver([], taken=frame.count)
            else:
                try:
                    self.deliver(frame.elements(self.element_size))
                except wire.WireError as error:
                    raise Fault(error.detail) from None
        elif kind is wire.OnNextPart or kind is wire.OnNextLastPart:
            if self.mutant == "prints-parts":
                self.print(frame.data)
            self.parts.append(frame.data)
            if kind is wire.OnNextLastPart:
                parts, self.parts = self.parts, []
                if self.mutant == "prints-parts":
                    self.deliver([], taken=1)
                else:
                    self.deliver([b"".join(reversed(parts) if self.mutant == "reverses-parts" else parts)])
        elif kind is wire.OnComplete:
            self.done = True
            return 0
        elif kind is wire.OnError:
            self.done = True
            return 0 if self.mutant == "exit-0-on-error" else 3
        return None

    def deliver(self, elements: list[bytes], *, taken: int = 0) -> None:
        for element in elements:
            self.print(element)
        self.due -= taken or len(elements)
        if self.due <= 0:
            self.request()

    def print(self, element: bytes) -> None:
        line = element.hex().upper() if self.mutant == "uppercase-hex" else element.hex()
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _write_pids(path: str | None, *pids: int) -> None:
    if path:
        with open(path, "w") as out:
            out.write(" ".join(map(str, pids)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mutant", default="none", choices=sorted(MUTANTS))
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--pid-file")
    parser.add_argument("url")
    parser.add_argument("publisher")
    args = parser.parse_args()
    if args.mutant == "exits-at-once":
        print("mutant_client: cannot start, on purpose", file=sys.stderr)
        return 5
    if args.mutant == "never-connects":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        _write_pids(args.pid_file, os.getpid(), child.pid)
        time.sleep(60)
        return 0
    address = urllib.parse.urlsplit(args.url)
    sock = socket.create_connection((address.hostname, address.port))
    if args.mutant == "hangs-connected":
        sock.sendall(wire.encode(wire.ClientHello(0, ())) + wire.encode(wire.Subscribe(args.publisher, 1, 1)))
        _write_pids(args.pid_file, os.getpid())
        time.sleep(60)
        return 0
    return Client(sock, args.publisher, args.mutant, args.batch).run()

if __name__ == "__main__":
    sys.exit(main())

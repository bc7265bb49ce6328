"""One run of a client under test against a listener of the kit's (docs/network.md, "Testing a client"): the kit
listens on 127.0.0.1, on a fresh port, and runs `CMD URL PUBLISHER`; the client connects, subscribes to
PUBLISHER, prints each element it receives as a line of lowercase hex, and exits 0 on onComplete, 3 on onError or
when the connection ended its stream first. The kit serves the one connection as a server (`ServingPeer`), and
the network profile's client checks judge the client by the frames it sends, what it prints and its exit status.

A case is bounded by the check's deadline from the start of the command to its exit. The command runs in a
session of its own, so that the kit can kill it with everything it started: at the deadline, and in any case
when the check ends.
"""

from __future__ import annotations

import collections
import os
import shlex
import signal
import socket
import subprocess
import threading
import time
from typing import Any, NamedTuple

from rstck.core.evidence import EXPECTATION
from rstck.core.kit_threads import mark_kit_thread
from rstck.core.verdict import RuleViolation, TargetError
from rstck.protocols.network.peer import PeerClosed, Silent
from rstck.protocols.network.serving_peer import ServingPeer
from rstck.protocols.network.wire import PROTOCOL_VERSION, ServerHello

LISTEN_HOST = "127.0.0.1"
KEPT_OUTPUT_BYTES = 2**20  # of each of stdout (its start) and stderr (its end)
ACCEPT_TICK_S = 0.02  # how often the wait for the client's connection looks whether the command exited
EXIT_TICK_S = 0.05  # how often the wait for the exit reads the connection between looks at the process
REAP_S = 1.0  # how long a killed process may take to be reaped
# How long the kit reads the client's output after it exited (what it started may hold the pipes), at most this
# much past the deadline: the runner's grace for a check is short.
OUTPUT_AFTER_EXIT_S = 1.0
OUTPUT_PAST_DEADLINE_S = 0.2
EXIT_GRACE_S = 0.5  # how long a client that closed its connection, or whose check is over, may take to exit
STDERR_SHOWN_LINES = 6
STDERR_SHOWN_CHARS = 600


class ClientExit(NamedTuple):
    """How a client run ended: its exit status (None: it was killed at the deadline), its stdout as lines, and
    the end of its stderr."""

    code: int | None
    lines: list[str]
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.code is None


class _Output:
    """One of the client's output pipes, read on a thread of its own into a bounded buffer: stdout keeps its
    first KEPT_OUTPUT_BYTES, stderr its last."""

    def __init__(self, pipe: Any, name: str, *, keep_start: bool):
        self.keep_start = keep_start
        self.chunks: collections.deque[bytes] = collections.deque()
        self._lock = threading.Lock()
        self.kept = 0
        self.dropped = 0
        self._pipe = pipe
        self.thread = threading.Thread(target=self._read, name=f"rstck-client-{name}", daemon=True)
        mark_kit_thread(self.thread)
        self.thread.start()

    def _read(self) -> None:
        try:
            while chunk := self._pipe.read1(65536):
                with self._lock:
                    self._keep(chunk)
        except (OSError, ValueError):  # closed under it at the end of the case
            pass

    def _keep(self, chunk: bytes) -> None:
        if self.keep_start:
            room = KEPT_OUTPUT_BYTES - self.kept
            self.chunks.append(chunk[:room])
            self.kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - room)
            return
        self.chunks.append(chunk)
        self.kept += len(chunk)
        while self.kept > KEPT_OUTPUT_BYTES:
            first = self.chunks.popleft()
            excess = self.kept - KEPT_OUTPUT_BYTES
            if len(first) > excess:
                self.chunks.appendleft(first[excess:])
            self.kept -= min(len(first), excess)
            self.dropped += min(len(first), excess)

    def text(self) -> str:
        with self._lock:
            return b"".join(self.chunks).decode("utf-8", "replace")

    def join(self, until: float) -> None:
        self.thread.join(max(0.0, until - time.monotonic()))

    def close(self) -> None:
        """Close the pipe once its thread has read to the end. A pipe that something the client started outside
        its process group still holds is left to its (daemon) thread: closing it under a blocked read would
        wait for that read."""
        if not self.thread.is_alive():
            self._pipe.close()


def stdout_lines(text: str) -> list[str]:
    """The lines of the client's stdout: one per element, "\\n" ending each (the last may lack it)."""
    if not text:
        return []
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def stderr_tail(text: str) -> str:
    """The last few lines of stderr, on one line, without control characters."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()][-STDERR_SHOWN_LINES:]
    shown = " | ".join(lines)
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)
    return shown if len(shown) <= STDERR_SHOWN_CHARS else "…" + shown[-STDERR_SHOWN_CHARS:]


class ClientCase:
    """One run of the client command against the kit's listener: the process, its output, the connection."""

    def __init__(self, session: Any, command: str, argv: list[str], env: dict[str, str], publisher: str):
        self.session = session
        self.command = command
        self.env = env
        self.publisher = publisher
        self.process: subprocess.Popen | None = None
        self.peer: ServingPeer | None = None
        self.outputs: list[_Output] = []
        self.exit: ClientExit | None = None
        self.killed = False
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind((LISTEN_HOST, 0))
        self._listener.listen(1)
        self.url = f"tcp://{LISTEN_HOST}:{self._listener.getsockname()[1]}"
        self.argv = [*argv, self.url, publisher]

    # -- starting ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        self.session.trace.note(f"run: {shlex.join(self.argv)}")
        try:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, start_new_session=True,
                                            env=self.env)
        except OSError as exc:
            raise TargetError(f"cannot run the client command {self.command!r}: "
                              f"{exc.strerror or exc}") from None
        self.outputs = [_Output(self.process.stdout, "stdout", keep_start=True),
                        _Output(self.process.stderr, "stderr", keep_start=False)]

    def accept(self, *, hello: bool) -> ServingPeer:
        """The client's connection, within the deadline; the kit's serverHello sent at once unless not `hello`.
        A TargetError if the client exits first or never connects."""
        while True:
            exited = self.process.poll() is not None  # a connection it made before exiting is still accepted
            remaining = self.session.deadline - time.monotonic()
            self._listener.settimeout(0.001 if exited else max(0.001, min(ACCEPT_TICK_S, remaining)))
            try:
                sock, address = self._listener.accept()
                break
            except (TimeoutError, socket.timeout):
                pass
            if exited:
                self._collect(0.5)
                raise TargetError(f"the client exited with status {self.process.returncode} without connecting "
                                  f"to {self.url}{self._stderr_said()}")
            if remaining <= 0:
                raise TargetError(f"the client did not connect to {self.url} before the check's deadline (it was "
                                  f"still running; decided by a deadline){self._stderr_said()}")
        self._listener.close()  # one connection per run: a second one is refused
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.peer = ServingPeer(sock, self.session, publisher=self.publisher)
        self.peer.note(f"accepted the client's connection from {address[0]}:{address[1]}")
        if hello:
            self.peer.send(ServerHello(PROTOCOL_VERSION, ()))
        return self.peer

    # -- ending ------------------------------------------------------------------------------------------------

    def wait_exit(self, *, rule: str | None = None, expected: str = "the client to exit") -> ClientExit:
        """Read the connection (answering the client's goodbye) until the client closes it, then wait for the
        process to exit, within the deadline. At the deadline the client is killed: with `rule`, that is a
        violation of it (decided by a deadline); without, the exit's code is None."""
        if self.exit is None:
            with self.peer.recorded("wait_exit", rule=rule, expected=expected):
                self._pump_until_exit()
        if self.exit.timed_out and rule is not None:
            raise RuleViolation(rule, expected, f"the client was still running at the deadline, and was killed"
                                f"{self._stderr_said()}", timed_out=True, claim=EXPECTATION)
        return self.exit

    def _pump_until_exit(self) -> None:
        peer, process, end = self.peer, self.process, self.session.deadline
        while process.poll() is None and time.monotonic() < end:
            if peer is not None and not peer.eof and peer.sock.fileno() >= 0:
                try:
                    peer.receive(EXIT_TICK_S)
                except (Silent, PeerClosed, OSError):  # the loop looks at the process again
                    pass
            else:  # the client closed the connection: its process should end in a moment
                try:
                    process.wait(max(0.0, min(EXIT_TICK_S, end - time.monotonic())))
                except subprocess.TimeoutExpired:
                    pass
        if process.poll() is None:
            self._kill("it was still running at the deadline")
        self._collect(OUTPUT_AFTER_EXIT_S)
        lines = stdout_lines(self.outputs[0].text())
        self.exit = ClientExit(None if self.killed else process.returncode, lines, self.outputs[1].text())
        how = "was killed" if self.killed else f"exited with status {process.returncode}"
        kept = f" (and {self.outputs[0].dropped} bytes more, not kept)" if self.outputs[0].dropped else ""
        self.session.trace.note(f"the client {how}; it printed {len(lines)} line{'s' * (len(lines) != 1)}{kept}")

    def _collect(self, within_s: float) -> None:
        """Let the output threads read to the end of the pipes, within `within_s` and the deadline's margin."""
        until = min(time.monotonic() + within_s, self.session.deadline + OUTPUT_PAST_DEADLINE_S)
        for output in self.outputs:
            output.join(until)

    def _wait_briefly(self) -> None:
        try:
            self.process.wait(max(0.0, min(EXIT_GRACE_S, self.session.deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            return
        self._collect(EXIT_GRACE_S)

    def _kill(self, why: str) -> None:
        """Kill the command's whole process group (it runs in a session of its own) and reap it."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.killed = True
            self.session.trace.note(f"the kit kills the client: {why}")
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group has ended already
        try:
            self.process.wait(REAP_S)
        except subprocess.TimeoutExpired:
            pass

    def summary(self) -> str:
        """How the client stands, for an observation: its exit status and the end of its stderr. A client that
        closed the connection is given a moment (EXIT_GRACE_S) to exit, so that its status and last words show."""
        if self.process is None:
            return ""
        if self.peer is not None and self.peer.eof:
            self._wait_briefly()
        code = self.process.poll()
        state = "the client is still running" if code is None else f"the client exited with status {code}"
        return f"{state}{self._stderr_said()}"

    def _stderr_said(self) -> str:
        if not self.outputs:
            return ""
        tail = stderr_tail(self.outputs[1].text())
        return f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr"

    def close(self) -> None:
        """End the case: say goodbye if the connection is still open (bounded), kill whatever of the command
        still runs, and release the pipes and sockets."""
        try:
            if self.peer is not None:
                self.peer.finish()
        finally:
            self._listener.close()
            if self.process is not None:
                self._wait_briefly()  # a client that is ending anyway is let end, not killed
                if self.exit is None and self.process.poll() is not None:
                    self.session.trace.note(f"the client exited with status {self.process.returncode}")
                self._kill("the check is over")  # and whatever it started, in its group
                self._collect(0.5)
                for output in self.outputs:
                    output.close()

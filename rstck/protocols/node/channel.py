"""The channel to one driver process: its descriptors, and the newline-delimited JSON spoken over them.

Commands go to the driver's stdin, or, while JavaScript waits inside a call to one of the kit's objects (an
ask), to the nested descriptor it reads synchronously. Events and replies come back on a descriptor of their
own, written with fs.writeSync (in order, and written before a crash), so what the implementation prints never
reaches the protocol; its stdout and stderr are read beside the events, line by line, and kept in part, for
saying how the process ended. A wake-up pipe lets another thread end a wait on the channel at once (the runner
giving the check up), so that no wait has to look at a clock to notice.
"""

from __future__ import annotations

import collections
import json
import os
import select
import subprocess
import threading
from typing import Any, Callable

# The most of one stream (stdout or stderr) a channel keeps.
OUTPUT_KEPT = 4000
# How many more chunks of events are read once the process has ended (what it said last).
FINAL_CHUNKS = 64


class Channel:
    """The descriptors between the kit and one driver process. Read by one thread at a time (the one in an
    exchange with the driver); woken and closed from any."""

    def __init__(self) -> None:
        self._events, events_w = os.pipe()
        nested_r, self._nested = os.pipe()
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._events, self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        self._child_ends = [events_w, nested_r]
        self.child_env = {"RSTCK_EVENTS_FD": str(events_w), "RSTCK_NESTED_FD": str(nested_r)}
        self._closing = threading.Lock()  # closed from one thread, woken from another: never a reused descriptor
        self._streams: tuple[Any, ...] = ()
        self._stdin = -1
        self._outputs: dict[int, str] = {}
        self._poll = select.poll()
        self._buffer = b""
        self._partial: dict[str, bytes] = {"stdout": b"", "stderr": b""}
        self.messages: collections.deque[dict[str, Any]] = collections.deque()
        self.output: dict[str, str] = {"stdout": "", "stderr": ""}  # the first OUTPUT_KEPT characters of each
        self.on_output: Callable[[str, str], None] | None = None  # takes each line printed, as it is read
        self.exit: dict[str, Any] | None = None  # the driver's `exit` event (process.exit() was called), once read
        self.at_end = False  # the events descriptor reached its end: the process is gone

    @property
    def child_fds(self) -> tuple[int, ...]:
        """The descriptors the driver inherits."""
        return tuple(self._child_ends)

    def connect(self, popen: subprocess.Popen) -> None:
        """The driver started with the child's ends: the kit keeps only its own, so an ending process shows as
        the end of its events."""
        self._close_child_ends()
        self._streams = (popen.stdin, popen.stdout, popen.stderr)
        self._stdin = popen.stdin.fileno()  # type: ignore[union-attr]
        self._outputs = {popen.stdout.fileno(): "stdout", popen.stderr.fileno(): "stderr"}  # type: ignore[union-attr]
        for fd in self._outputs:
            os.set_blocking(fd, False)
        for fd in (self._events, self._wake_r, *self._outputs):
            self._poll.register(fd, select.POLLIN | select.POLLHUP)

    # -- writing -----------------------------------------------------------------------------------

    def send(self, fields: dict[str, Any], *, nested: bool) -> bool:
        """Write one command: on the nested descriptor while JavaScript waits for an answer, else on stdin.
        False if the driver is gone (what it wrote before it ended is read still)."""
        data = (json.dumps(fields, separators=(",", ":")) + "\n").encode("utf-8")
        fd = self._nested if nested else self._stdin
        try:
            while data:
                written = os.write(fd, data)
                data = data[written:]
        except OSError:
            return False
        return True

    def wake(self) -> None:
        """End the wait under way on this channel, if any, at once (from any thread)."""
        with self._closing:
            if self._wake_w >= 0:
                try:
                    os.write(self._wake_w, b"!")
                except OSError:  # full: a wake-up is pending already
                    pass

    # -- reading -----------------------------------------------------------------------------------

    def read(self, timeout_s: float | None) -> None:
        """Wait up to `timeout_s` (None: no bound) for the driver, and take in what it has written: events and
        replies queue in `messages`, printed lines go to `on_output`. A wake-up, or the end of the events
        (`at_end`), ends the wait too."""
        for fd, _ in self._poll.poll(None if timeout_s is None else timeout_s * 1000):
            if fd == self._events:
                if not self._read_events():
                    self.at_end = True
            elif fd == self._wake_r:
                self._read_wake_ups()
            else:
                self._read_output(fd)

    def _read_events(self) -> bool:
        """Take in what the events descriptor holds now; False at its end (the process has ended)."""
        try:
            chunk = os.read(self._events, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line:
                try:
                    message = json.loads(line)
                except ValueError:  # not the driver's: something in the process wrote to its descriptor
                    message = {"ev": "console", "level": "written to the event channel",
                               "text": line.decode("utf-8", "replace")}
                if message.get("ev") == "exit":  # kept as it arrives: the end says where it came from
                    self.exit = message
                self.messages.append(message)
        return True

    def _read_wake_ups(self) -> None:
        try:
            while os.read(self._wake_r, 64):
                pass
        except OSError:
            pass

    def _read_output(self, fd: int) -> None:
        stream = self._outputs[fd]
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self._poll.unregister(fd)
            return
        data = self._partial[stream] + chunk
        *lines, self._partial[stream] = data.split(b"\n")
        for line in lines:
            text = line.decode("utf-8", "replace")
            if len(self.output[stream]) < OUTPUT_KEPT:
                self.output[stream] += text[:OUTPUT_KEPT] + "\n"
            if self.on_output is not None:
                self.on_output(stream, text)

    def read_what_is_left(self) -> None:
        """The process has ended: take in what it wrote before (an exit event, notes) and what it printed
        last, which often says why."""
        if self._events >= 0:
            for _ in range(FINAL_CHUNKS):
                count = len(self.messages)
                if not self._read_events() or len(self.messages) == count:
                    break
        for fd, stream in self._outputs.items():
            try:
                while True:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    self._partial[stream] += chunk
            except OSError:
                pass
        for stream, rest in self._partial.items():
            if rest:
                self.output[stream] += rest.decode("utf-8", "replace")[:OUTPUT_KEPT]
                self._partial[stream] = b""

    def forget_what_was_read(self) -> None:
        """The process serves another check: what it printed and said so far is not that check's."""
        self.output = {"stdout": "", "stderr": ""}
        self.exit = None

    # -- closing -----------------------------------------------------------------------------------

    def close(self) -> None:
        with self._closing:
            self._close_all()

    def close_in_forked_child(self) -> None:
        """Close in a forked child, whose only thread is this one: the lock may have been held by a thread of
        the parent's at the fork."""
        self._closing = threading.Lock()
        self.close()

    def _close_all(self) -> None:
        self._close_child_ends()
        for fd in (self._events, self._nested, self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._events = self._nested = self._wake_r = self._wake_w = -1
        for stream in self._streams:
            try:
                stream.close()
            except OSError:
                pass

    def _close_child_ends(self) -> None:
        for fd in self._child_ends:
            os.close(fd)
        self._child_ends.clear()

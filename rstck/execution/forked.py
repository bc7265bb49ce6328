"""A forked worker process and the pipes to it, on plain `os.fork` and `os.pipe`: what `multiprocessing` offers a
forked worker, without its import (socket, tempfile, subprocess and the rest: a quarter of a one-check run's own
time, benchmarks/startup.py). A spawned worker still uses `multiprocessing`, whose connections and processes
offer the same methods, so the supervisor (rstck/execution/worker.py) treats both alike.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

_HEADER = struct.Struct("!Q")  # each message: its length, then its pickle
_JOIN_POLL_S = 0.01


def _fd_of(waitable: Any) -> int:
    return waitable if isinstance(waitable, int) else waitable.fileno()


def wait(waitables: Iterable[Any], timeout_s: float) -> list[Any]:
    """Those of `waitables` (fds, or objects with `fileno()`) that are ready to read (or at their end) within
    `timeout_s`: as `multiprocessing.connection.wait`."""
    waitables = list(waitables)
    poller = select.poll()
    for waitable in waitables:
        poller.register(_fd_of(waitable), select.POLLIN)
    ready = {fd for fd, _events in poller.poll(max(0, int(timeout_s * 1000)))}
    return [waitable for waitable in waitables if _fd_of(waitable) in ready]


class Channel:
    """One end of a one-way pipe that carries pickled objects: `send` at the writing end; `recv` (EOFError once
    the writer is gone) and `poll` at the reading end."""

    def __init__(self, fd: int):
        self._fd: int | None = fd

    def fileno(self) -> int:
        if self._fd is None:
            raise OSError("the channel is closed")
        return self._fd

    def send(self, obj: Any) -> None:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(self.fileno(), view):]

    def recv(self) -> Any:
        (length,) = _HEADER.unpack(self._read(_HEADER.size))
        return pickle.loads(self._read(length))

    def poll(self, timeout_s: float = 0.0) -> bool:
        return bool(wait([self], timeout_s))

    def close(self) -> None:  # idempotent
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _read(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = os.read(self.fileno(), min(left, 1 << 20))
            if not chunk:
                raise EOFError("the other end of the channel is closed")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def channel_pair() -> tuple[Channel, Channel]:
    """A one-way pipe: (the reading end, the writing end)."""
    read_fd, write_fd = os.pipe()
    return Channel(read_fd), Channel(write_fd)


class ForkedProcess:
    """A child process that runs `target(*args)` and then ends with `os._exit` (the target may end it sooner).
    `sentinel` reads as ready once the child has ended; `exitcode` is as `multiprocessing` tells it: the exit
    status, or minus the signal that killed the child."""

    def __init__(self, target: Callable[..., Any], args: tuple):
        self._target, self._args = target, args
        self.pid: int | None = None
        self.sentinel: int | None = None
        self.exitcode: int | None = None

    def start(self) -> None:
        sentinel_read, sentinel_write = os.pipe()  # its writing end is the child's alone: closed when it ends
        try:
            pid = os.fork()
        except OSError:
            os.close(sentinel_read)
            os.close(sentinel_write)
            raise
        if pid == 0:
            os.close(sentinel_read)
            self._run_child()
        os.close(sentinel_write)
        self.pid, self.sentinel = pid, sentinel_read

    def is_alive(self) -> bool:
        return self._reap() is None

    def kill(self) -> None:
        if self.is_alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # it has just ended
                pass

    def join(self, timeout_s: float | None = None) -> None:
        """Wait until the child has ended, at most `timeout_s`."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self._reap() is None:
            left = _JOIN_POLL_S if deadline is None else min(_JOIN_POLL_S, deadline - time.monotonic())
            if left <= 0:
                return
            wait([self.sentinel], left)  # a grandchild that inherited the sentinel keeps it unready: poll as well

    def _reap(self) -> int | None:
        """The exit code once the child has ended (reaping it then), else None; never waits."""
        if self.exitcode is None and self.pid is not None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler of the target's): it is gone
                pid, status = self.pid, 255 << 8
            if pid != 0:
                self.exitcode = os.waitstatus_to_exitcode(status)
        return self.exitcode

    def close(self) -> None:
        """Let go of the sentinel (the child has ended, or is let go of as well)."""
        sentinel, self.sentinel = self.sentinel, None
        if sentinel is not None:
            os.close(sentinel)

    def _run_child(self) -> None:
        code = 1
        try:
            _after_fork_in_child()
            self._target(*self._args)
            code = 0
        finally:
            os._exit(code)


def _after_fork_in_child() -> None:
    """What a child forked by `multiprocessing` also gets: no standard input (the terminal stays the
    supervisor's), and `multiprocessing`'s after-fork hooks if the parent had loaded it (a target's locks)."""
    try:
        sys.stdin.close()
        sys.stdin = open(os.devnull)  # noqa: SIM115 - the child's standard input as long as it lives
    except (OSError, ValueError, AttributeError):
        pass
    util = sys.modules.get("multiprocessing.util")
    if util is not None:
        util._run_after_forkers()  # noqa: SLF001 - as multiprocessing's own forked children do

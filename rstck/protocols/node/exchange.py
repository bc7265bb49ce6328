"""Commands to a driver and their replies: each numbered, each bounded by a deadline, and the asks that come
meanwhile answered.

An ask is JavaScript calling one of the kit's objects (a probe's onNext): the driver blocks until the kit
answers, and what the kit's object does meanwhile (a request from inside onNext) is a command nested in the
one under way, sent on the descriptor JavaScript reads while it waits. So one exchange runs at a time, under a
lock the answering thread re-enters. The check's settler is the `Handler`: it answers the asks, takes the
events, and bounds the commands the proxies make.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, Protocol

from rstck.protocols.node.channel import Channel
from rstck.protocols.node.errors import Abandoned, NoReply, ProcessEnded
from rstck.protocols.node.lifecycle import Lifecycle
from rstck.protocols.node.values import ValueCodec


class Handler(Protocol):
    """What a process asks of the check it serves (rstck.adapters.node.target.NodeSettler)."""

    def deadline(self) -> float | None:
        """The bound of a command a proxy makes (None: none)."""

    def answer(self, ask: dict[str, Any]) -> tuple[BaseException | None, bool]:
        """Make the call JavaScript asked for: what it raised (thrown back), and whether the driver's idle wait
        under way must end (the check found a violation)."""

    def event(self, message: dict[str, Any]) -> None:
        """An event of the driver's: console output, an uncaught error, process.exit(), a stream event."""

    def output(self, stream: str, text: str) -> None:
        """A line the process printed on stdout or stderr."""

    def demand_sent(self, args: tuple) -> None:
        """A request(n) is on its way to JavaScript."""

    def cancel_sent(self) -> None:
        """A cancel() is on its way to JavaScript."""


class Exchange:
    """The commands of one driver process."""

    def __init__(self, channel: Channel, life: Lifecycle, values: ValueCodec):
        self.channel = channel
        self.life = life
        self.values = values
        self.lock = threading.RLock()
        self._ids = itertools.count(1)
        self._asks: list[int] = []  # asks being answered, innermost last
        self.ready: dict[str, Any] | None = None
        self.handler: Handler | None = None
        self.early: list[dict[str, Any]] = []  # events before a handler was bound
        channel.on_output = self._output

    def handshake(self, timeout_s: float) -> dict[str, Any]:
        """The driver's `ready` event (the node version, the module's exported functions, a load error)."""
        if self.ready is not None:
            return self.ready
        with self.lock:
            if self.life.ended:
                raise ProcessEnded(self.life.end_text)
            end = time.monotonic() + timeout_s
            while self.ready is None:
                message = self._next(end)
                if message is None:
                    self.life.kill()
                    raise NoReply(f"the module did not finish loading within {timeout_s:g} s (an endless loop at load "
                                  "time?)")
                self._take(message)
            return self.ready

    def command(self, fields: dict[str, Any], *, deadline: float | None,
                numbered: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Send a command and return its reply, answering the asks that come meanwhile. NoReply if none came
        by `deadline` (None: no bound), Abandoned once the kit gave the process up, ProcessEnded if it ended.
        `numbered` learns the command's id before any event of it can arrive."""
        with self.lock:
            if self.life.ended:
                if self.life.stopped_by_kit:
                    raise Abandoned("the check is over: the kit has stopped its process")
                raise ProcessEnded(self.life.end_text)
            number = next(self._ids)
            fields["id"] = number
            if numbered is not None:
                numbered(number)
            if self.values.release:
                fields["release"], self.values.release = self.values.release, []
            sent = self._send(fields, nested=bool(self._asks))
            while True:
                try:
                    message = self._next(deadline)
                except ProcessEnded:
                    # Inside this call if it got there and the process ended in it.
                    during = sent and self.life.ended_inside(number)
                    raise ProcessEnded(self.life.end_text, during_call=during) from None
                if message is None:
                    raise NoReply(f"the Node process did not answer {fields['op']} by the deadline")
                if message.get("re") == number:
                    return message
                if "re" not in message:
                    self._take(message)

    def _send(self, fields: dict[str, Any], *, nested: bool) -> bool:
        """Write a command or an answer; False if the driver is gone."""
        if self.channel.send(fields, nested=nested):
            return True
        self.life.ended_now()
        return False

    def _next(self, deadline: float | None) -> dict[str, Any] | None:
        """The next message from the driver; None at the deadline."""
        while not self.channel.messages:
            self._unless_given_up()
            if self.life.ended:
                raise ProcessEnded(self.life.end_text)
            timeout_s = None if deadline is None else deadline - time.monotonic()
            if timeout_s is not None and timeout_s <= 0:
                return None
            self.channel.read(timeout_s)
            if self.channel.at_end:
                self.life.ended_now()
        message = self.channel.messages.popleft()
        self._unless_given_up()
        return message

    def _unless_given_up(self) -> None:
        if self.life.abandoned:
            self.life.kill()  # given up from another thread: the thread that waited lets go of it
            raise Abandoned("the check was abandoned")

    def _take(self, message: dict[str, Any]) -> None:
        kind = message.get("ev")
        if kind == "ask":
            self._answer(message)
        elif kind == "ready":
            self.ready = message
        elif self.handler is not None:
            self.handler.event(message)
        else:
            self.early.append(message)

    def _answer(self, ask: dict[str, Any]) -> None:
        self._asks.append(ask["ask"])
        try:
            thrown, abort = (None, False) if self.handler is None else self.handler.answer(ask)
        finally:
            self._asks.pop()
        answer: dict[str, Any] = {"op": "answer", "ask": ask["ask"]}
        if thrown is not None:
            answer["thrown"] = self.values.encode(thrown)
        if abort:
            answer["abort_idle"] = True
        self._send(answer, nested=True)

    def _output(self, stream: str, text: str) -> None:
        if self.handler is not None:
            self.handler.output(stream, text)

"""What a client that reads one stream does with each frame, without any I/O: the protocol logic the zoo's
clients share, written from docs/wire-format.md (its Handshake, core protocol, Closing and Faults sections).

`take(frame)` returns what to do: `Send(bytes)`, `Deliver(element)`, or `End(status, goodbye reason)`. After
`End` nothing more is taken or sent: the driver says goodbye (unless the reason is None: it answered the
server's goodbye already), shuts its sending side, reads to EOF (bounded) and closes.
"""

from __future__ import annotations

from typing import NamedTuple

import framing as f

EXIT_COMPLETE, EXIT_FAILED = 0, 3


class Send(NamedTuple):
    data: bytes


class Deliver(NamedTuple):
    element: bytes


class End(NamedTuple):
    status: int
    reason: str | None  # the goodbye to send; None when the goodbye was sent already


class OneStreamSession:
    def __init__(self, publisher: str, stream_id: int, initial_demand: int):
        self.publisher = publisher
        self.id = stream_id
        self.initial_demand = initial_demand
        self.hello = False
        self.subscribed = False
        self.element_size = 0
        self.parts: dict[int, list[bytes]] = {}
        self.over = False

    def opening(self) -> bytes:
        """The clientHello and, without waiting for the server's hello, the subscribe."""
        return f.frame(f.CLIENT_HELLO, 0, []) + f.frame(f.SUBSCRIBE, self.publisher, self.id, self.initial_demand)

    def request(self, n: int) -> bytes:
        return b"" if self.over else f.frame(f.REQUEST, self.id, n)

    def fault(self, reason: str) -> list:
        return self._end(EXIT_FAILED, reason)

    def closed(self) -> list:
        """EOF or reset before the stream ended."""
        return self._end(EXIT_FAILED, None)

    def _end(self, status: int, reason: str | None) -> list:
        if self.over:
            return []
        self.over = True
        return [End(status, reason)]

    def take(self, frame: tuple) -> list:
        if self.over:
            return []
        kind, *fields = frame
        if kind == f.GOODBYE:
            return [Send(f.frame(f.GOODBYE, "goodbye acknowledged")), *self._end(EXIT_FAILED, None)]
        if not self.hello:
            if kind != f.SERVER_HELLO:
                return self.fault(f"message type {kind} before the serverHello")
            if fields[0] != 0:  # a server of another version discarded the subscribe
                return self.fault(f"unsupported version {fields[0]}")
            self.hello = True
            return []
        if kind in (f.SERVER_HELLO, f.CLIENT_HELLO):
            return self.fault("a second hello")
        if kind == f.SUBSCRIBE:  # this client publishes nothing: 1.9's way to say no
            refusal = f.frame(f.SUBSCRIBED, fields[1], 0) + f.frame(f.ON_ERROR, fields[1], "nothing is published here")
            return [Send(refusal)]
        if kind in (f.REQUEST, f.CANCEL):
            return []  # for no stream of this client's publishing: ignored
        if fields[0] != self.id:
            return []  # for an id this client never used: ignored
        return self._signal(kind, fields)

    def _signal(self, kind: int, fields: list) -> list:
        if kind == f.SUBSCRIBED:
            if not self.subscribed:
                self.subscribed, self.element_size = True, fields[1]
            return []
        if not self.subscribed:
            return self.fault(f"message type {kind} for stream {self.id} before its subscribed")
        if kind == f.ON_COMPLETE:
            return self._end(EXIT_COMPLETE, "the stream completed")
        if kind == f.ON_ERROR:
            return self._end(EXIT_FAILED, "the stream failed")
        if kind == f.ON_NEXT:
            return self._sized([fields[1]])
        if kind == f.ON_NEXT_PACKED:
            count, data = fields[1], fields[2]
            if not self.element_size:
                return self.fault("onNextPacked in a stream without element_size")
            if len(data) != count * self.element_size:
                return self.fault(f"onNextPacked of {len(data)} bytes for {count} elements of {self.element_size}")
            size = self.element_size
            return [Deliver(data[i * size:(i + 1) * size]) for i in range(count)]
        element_id, data = fields[1], fields[2]
        self.parts.setdefault(element_id, []).append(data)
        if kind == f.ON_NEXT_PART:
            return []
        return self._sized([b"".join(self.parts.pop(element_id))])

    def _sized(self, elements: list[bytes]) -> list:
        for element in elements:
            if self.element_size and len(element) != self.element_size:
                return self.fault(f"an element of {len(element)} bytes in a stream of {self.element_size}-byte ones")
        return [Deliver(element) for element in elements]

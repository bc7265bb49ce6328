"""Servers that break one network item each: the reference server with one behaviour changed.

Each `ServerCase` names the item its mutant breaks and the verdict the kit must reach on that item; guards are
conformant servers that choose differently where the draft allows it (no packing, no splitting).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

from rstck.core.target import load_target
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reference.network.server import ReferenceServer, _Fault, serve, shut_down
from rstck.protocols.network.wire import (Goodbye, OnComplete, OnNextLastPart, OnNextPart, Request, ServerHello, Subscribe,
                                         Subscribed, encode_raw)


@dataclasses.dataclass(frozen=True)
class ServerCase:
    name: str
    server: type[ReferenceServer]
    item: str  # the item its mutant breaks, or that a guard chooses not to offer
    verdict: str  # what the kit must say on `item`: fail, warn, unsupported
    options: tuple = ()  # serve() options, as pairs
    rules: str = ""  # the checks run, when not `item`'s own


class OutOfOrder(ReferenceServer):
    """Swaps the first two elements of every write turn (transport.3)."""

    async def _write_elements(self, stream):
        pending = stream.pending
        if len(pending) >= 2 and type(pending[0]) is bytes and type(pending[1]) is bytes:
            pending[0], pending[1] = pending[1], pending[0]
        return await super()._write_elements(stream)


class MapFrames(ReferenceServer):
    """Sends onComplete as a MessagePack map, not an array (framing.4)."""

    def _write(self, frame):
        if type(frame) is OnComplete and not self._writer.is_closing():
            self._writer.write(encode_raw({"type": 7, "subscriber": frame.subscriber}))
            return
        super()._write(frame)


class _FaultHandling(ReferenceServer):
    """Handles the faults whose WireError kind is in KINDS its own way (`misbehave`)."""

    KINDS: tuple[str, ...] = ()

    def say_goodbye(self, reason):
        if reason.split(":", 1)[0] in self.KINDS:
            return self.misbehave(reason)
        super().say_goodbye(reason)

    def misbehave(self, reason):
        self._writer.transport.abort()  # as a server that crashed on the frame would


class CrashOnGarbage(_FaultHandling):
    KINDS = ("malformed", "not-an-array", "empty-array")


class CrashOnUnknownType(_FaultHandling):
    KINDS = ("unknown-type",)


class SilentGoodbyeOnBadFields(_FaultHandling):
    """Says goodbye with no reason (rstck.3)."""

    KINDS = ("bad-field",)

    def misbehave(self, reason):
        ReferenceServer.say_goodbye(self, "")


class UnboundedFrames(ReferenceServer):
    """Waits for every byte of a declared length (rstck.4: a length bomb desynchronises it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from rstck.protocols.network.wire import FrameDecoder

        self._decoder = FrameDecoder(2**33)


class NoHelloNeeded(ReferenceServer):
    """Serves a subscribe that comes before any clientHello (rstck.5)."""

    def _handle(self, frame):
        if not self._hello_received and type(frame).__name__ == "Subscribe":
            self._hello_received = True
        return super()._handle(frame)


class HelloTwiceIgnored(ReferenceServer):
    """Ignores a second clientHello (rstck.6)."""

    def _handle(self, frame):
        if self._hello_received and type(frame).__name__ == "ClientHello":
            return False
        return super()._handle(frame)


class AnyVersion(ReferenceServer):
    """Accepts a clientHello of any version (handshake.2)."""

    def _handle(self, frame):
        if type(frame).__name__ == "ClientHello" and not self._hello_received:
            self._hello_received = True
            return False
        return super()._handle(frame)


class WrongHelloVersion(ReferenceServer):
    """Says version 1 in its serverHello (handshake.6)."""

    def _write(self, frame):
        super()._write(ServerHello(1, ()) if type(frame) is ServerHello else frame)


class UnnegotiatedExtension(ReferenceServer):
    """Sends a frame of type 64 right after its serverHello (extensions.1)."""

    def _write(self, frame):
        super()._write(frame)
        if type(frame) is ServerHello:
            self._writer.write(encode_raw([64, "an extension nobody negotiated"]))


class WrongId(ReferenceServer):
    """Sends onComplete with another subscriber's id (core.3)."""

    def _write(self, frame):
        super()._write(OnComplete(frame.subscriber + 1000) if type(frame) is OnComplete else frame)


class WrongElementSize(ReferenceServer):
    """Declares 4-byte elements in streams of 8-byte ones (core.4)."""

    def _write(self, frame):
        if type(frame) is Subscribed and frame.element_size == 8:
            frame = Subscribed(frame.subscriber, 4)
        super()._write(frame)


class NoReuse(ReferenceServer):
    """Refuses an id used before on the connection (ids.1, a MAY of the subscriber's)."""

    def _subscribe(self, name, stream_id, initial_demand):
        used = self.__dict__.setdefault("used", set())
        if stream_id in used:
            raise _Fault(f"id {stream_id} was used before")
        used.add(stream_id)
        super()._subscribe(name, stream_id, initial_demand)


class DoubleDemand(ReferenceServer):
    """Serves twice the demand requested (packed.3, and 1.1 through the kit's client)."""

    def _remote_request(self, stream, n):
        super()._remote_request(stream, 2 * n if n > 0 else n)


class IgnoresRequestZero(ReferenceServer):
    """Ignores request(n <= 0) (rstck.7)."""

    def _remote_request(self, stream, n):
        if n > 0:
            super()._remote_request(stream, n)


class OverflowingDemand(ReferenceServer):
    """Fails a stream whose cumulative demand passes 2**63-1 (rstck.8)."""

    def _remote_request(self, stream, n):
        total = getattr(stream, "total", 0) + max(n, 0)
        stream.total = total
        if total > 2**63 - 1:
            return self._fail(stream, "demand overflow")
        super()._remote_request(stream, n)


class StrictIds(ReferenceServer):
    """Says goodbye to a request for an id without a stream (rstck.9)."""

    def _handle(self, frame):
        if type(frame) is Request and frame.subscriber not in self._streams and self._hello_received:
            raise _Fault(f"request for unknown id {frame.subscriber}")
        return super()._handle(frame)


class CompletesAgainOnALateRequest(ReferenceServer):
    """Answers a request for a stream that completed with onComplete again: its subscription was not taken for
    cancelled (1.6); over the wire that is a signal after the terminal one (1.7)."""

    def _handle(self, frame):
        completed = self.__dict__.setdefault("completed", set())
        if type(frame) is Request and frame.subscriber in completed:
            self._write(OnComplete(frame.subscriber))
            self._flush()
            return False
        if type(frame) is Subscribe:
            completed.discard(frame.subscriber)  # the id is reused
        return super()._handle(frame)

    def _write(self, frame):
        if type(frame) is OnComplete:
            self.__dict__.setdefault("completed", set()).add(frame.subscriber)
        super()._write(frame)


class GoodbyeForUnknownNames(ReferenceServer):
    """Says goodbye to a subscribe naming a publisher it does not serve (rstck.11)."""

    def _refuse(self, stream, message):
        if message.startswith("no publisher named"):
            raise _Fault(message)
        super()._refuse(stream, message)


class ReplacesOpenIds(ReferenceServer):
    """Replaces the open stream of an id that is subscribed again (rstck.12)."""

    def _subscribe(self, name, stream_id, initial_demand):
        if stream_id in self._streams:
            self._drop(self._streams.pop(stream_id))
        super()._subscribe(name, stream_id, initial_demand)


class TalksAfterGoodbye(ReferenceServer):
    """Sends one more frame after its goodbye (rstck.13)."""

    def _write(self, frame):
        super()._write(frame)
        if type(frame) is Goodbye:
            super()._write(OnComplete(1))


class ReversedParts(ReferenceServer):
    """Sends the parts of a split element in reverse order (split.3)."""

    def _write(self, frame):
        kind = type(frame)
        if kind is OnNextPart:
            self.__dict__.setdefault("parts", []).append(frame)
            return
        if kind is OnNextLastPart:
            parts = self.__dict__.pop("parts", [])
            datas = [p.data for p in parts] + [frame.data]
            datas.reverse()
            for data in datas[:-1]:
                super()._write(OnNextPart(frame.subscriber, frame.element_id, data))
            super()._write(OnNextLastPart(frame.subscriber, frame.element_id, datas[-1]))
            return
        super()._write(frame)


class RefusesAfterAReset(ReferenceServer):
    """Stops serving new connections once one ended in mid-stream without goodbye (closing.1, a SHOULD)."""

    reset_seen = False

    async def run(self):
        if type(self).reset_seen:
            self._writer.transport.abort()
            return
        await super().run()

    def _end_streams(self):
        if self._streams and not self._goodbye_sent:
            type(self).reset_seen = True
        super()._end_streams()


class ClosesWithoutGoodbye(ReferenceServer):
    """Answers the client's goodbye by closing, without its own goodbye (closing.2, a SHOULD)."""

    def _handle(self, frame):
        if type(frame).__name__ == "Goodbye":
            self._goodbye_sent = True
            self._end_streams()
            # Closed after the whole frames already written: an abort would drop the tail of a frame the transport
            # had sent only in part, which the kit rightly charges to net.framing.4.
            self._flush()
            self._writer.close()
            return True
        return super()._handle(frame)


class StreamsOnAfterGoodbye(ReferenceServer):
    """Goes on streaming after the client's goodbye (closing.3)."""

    def _handle(self, frame):
        if type(frame).__name__ == "Goodbye":
            return False
        return super()._handle(frame)


class IgnoresCancelOfInfinite(ReferenceServer):
    """Ignores cancel for streams of rstck/infinite, which then run on as long as demand lasts (3.12, 1.8)."""

    def _subscribe(self, name, stream_id, initial_demand):
        self.__dict__.setdefault("names", {})[stream_id] = name
        super()._subscribe(name, stream_id, initial_demand)

    def _cancel(self, stream_id):
        if self.__dict__.get("names", {}).get(stream_id) != "rstck/infinite":
            super()._cancel(stream_id)


class ParksACancelledStream(IgnoresCancelOfInfinite):
    """Takes the cancel of a stream of rstck/infinite for a lower priority, not a stop: the stream is written only
    while no stream that is not cancelled is open, so it goes quiet as long as another flows, and comes back once
    that one ends (1.8). A cancel with no other stream open is a stop."""

    def _cancel(self, stream_id):
        parked = self.__dict__.setdefault("parked", set())
        if self.names.get(stream_id) == "rstck/infinite" and self._others_open(stream_id):
            parked.add(stream_id)
        else:
            super(IgnoresCancelOfInfinite, self)._cancel(stream_id)

    def _others_open(self, stream_id):
        return any(other != stream_id and other not in self.__dict__.get("parked", ()) for other in self._streams)

    async def _write_turn(self, stream):
        if stream.id in self.__dict__.get("parked", ()) and self._others_open(stream.id):
            await asyncio.sleep(0.001)  # its turn passes; the pump comes back to it
            return
        await super()._write_turn(stream)


class AcceptsInvalidUtf8(ReferenceServer):
    """Reads a str that is not valid UTF-8 with replacement characters instead of answering the fault (rstck.3)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        import msgpack

        from rstck.protocols.network.wire import MAX_ARRAY_VALUES, _map_of

        limit = self._decoder.max_frame_bytes
        self._decoder._unpacker = msgpack.Unpacker(
            raw=False, unicode_errors="replace", use_list=False, strict_map_key=False, object_pairs_hook=_map_of,
            max_buffer_size=limit, read_size=min(limit, 64 * 1024), max_bin_len=limit, max_str_len=limit,
            max_ext_len=limit, max_array_len=MAX_ARRAY_VALUES, max_map_len=MAX_ARRAY_VALUES)


class DiesOnAReset(ReferenceServer):
    """Goes down as a whole, listener and every connection, when a connection is reset (closing.1), as a server
    process that crashes on the error would."""

    async def _read_loop(self):
        try:
            return await super()._read_loop()
        except ConnectionResetError:
            from rstck.reference.network.server import _CONNECTIONS

            for server, connections in list(_CONNECTIONS.items()):
                if self in connections:
                    server.close()
                    for connection in list(connections):
                        connection._writer.transport.abort()
            raise


class KeepsTheConnectionAfterGoodbye(ReferenceServer):
    """Says goodbye (to a fault, or in answer) and then leaves closing to the client: it reads and discards until
    EOF without half-closing (conformant: the close may come from either side)."""

    def say_goodbye(self, reason):
        if self._goodbye_sent or self._closed:
            return
        self._goodbye_sent = True
        self._end_streams()
        self._write(Goodbye(reason or "goodbye"))
        self._flush()


class PacksWithoutElementSize(ReferenceServer):
    """Declares element_size 0 in subscribed, yet sends onNextPacked (rstck.3: a frame out of range)."""

    def _write(self, frame):
        super()._write(Subscribed(frame.subscriber, 0) if type(frame) is Subscribed else frame)


class NeverPacks(ReferenceServer):
    """Conformant: declares no element size, so never packs (packed.1 and packed.2 are MAYs)."""

    def _write(self, frame):
        super()._write(Subscribed(frame.subscriber, 0) if type(frame) is Subscribed else frame)

    def _subscribe(self, name, stream_id, initial_demand):
        super()._subscribe(name, stream_id, initial_demand)
        stream = self._streams.get(stream_id)
        if stream is not None:
            stream.element_size = 0


class DoubleDemandPlain(DoubleDemand, NeverPacks):
    """Serves twice the demand, one onNext at a time (1.1 through the kit's client)."""


MUTANTS = [
    ServerCase("out of order", OutOfOrder, "net.transport.3", "fail"),
    ServerCase("map frames", MapFrames, "net.framing.4", "fail"),
    ServerCase("crashes on garbage", CrashOnGarbage, "net.rstck.1", "fail"),
    ServerCase("crashes on an unknown type", CrashOnUnknownType, "net.rstck.2", "fail"),
    ServerCase("goodbye without a reason", SilentGoodbyeOnBadFields, "net.rstck.3", "fail"),
    ServerCase("waits for a length bomb", UnboundedFrames, "net.rstck.4", "fail"),
    ServerCase("no hello needed", NoHelloNeeded, "net.rstck.5", "fail"),
    ServerCase("second hello ignored", HelloTwiceIgnored, "net.rstck.6", "fail"),
    ServerCase("any version", AnyVersion, "net.handshake.2", "fail"),
    ServerCase("wrong hello version", WrongHelloVersion, "net.handshake.6", "fail"),
    ServerCase("unnegotiated extension", UnnegotiatedExtension, "net.extensions.1", "fail"),
    ServerCase("wrong id", WrongId, "net.core.3", "fail"),
    ServerCase("wrong element size", WrongElementSize, "net.core.4", "fail"),
    ServerCase("double demand", DoubleDemand, "net.packed.3", "fail"),
    ServerCase("double demand, packed, through the client", DoubleDemand, "net.packed.3", "fail", rules="1.1"),
    ServerCase("double demand, plain, through the client", DoubleDemandPlain, "1.1", "fail"),
    ServerCase("ignores request(0)", IgnoresRequestZero, "net.rstck.7", "fail"),
    ServerCase("ignores request(0), through the client", IgnoresRequestZero, "3.9", "fail"),
    ServerCase("demand overflow", OverflowingDemand, "net.rstck.8", "fail"),
    ServerCase("strict ids", StrictIds, "net.rstck.9", "fail"),
    ServerCase("completes again on a late request", CompletesAgainOnALateRequest, "1.7", "fail", rules="net.rstck.9"),
    ServerCase("goodbye for unknown names", GoodbyeForUnknownNames, "net.rstck.11", "fail"),
    ServerCase("replaces open ids", ReplacesOpenIds, "net.rstck.12", "fail"),
    ServerCase("talks after goodbye", TalksAfterGoodbye, "net.rstck.13", "fail"),
    ServerCase("reversed parts", ReversedParts, "net.split.3", "fail"),
    ServerCase("refuses after a reset", RefusesAfterAReset, "net.closing.1", "warn"),
    ServerCase("closes without goodbye", ClosesWithoutGoodbye, "net.closing.2", "warn"),
    ServerCase("streams on after goodbye", StreamsOnAfterGoodbye, "net.closing.3", "fail"),
    ServerCase("ignores cancel of an unbounded stream", IgnoresCancelOfInfinite, "3.12", "fail"),
    ServerCase("ignores cancel of one of two unbounded streams", IgnoresCancelOfInfinite, "1.8", "fail"),
    ServerCase("parks a cancelled stream while another flows", ParksACancelledStream, "1.8", "fail"),
    ServerCase("accepts invalid UTF-8", AcceptsInvalidUtf8, "net.rstck.3", "fail"),
    ServerCase("dies on a reset", DiesOnAReset, "net.closing.1", "warn"),
    ServerCase("packs without an element size", PacksWithoutElementSize, "net.rstck.3", "fail", rules="net.packed.2"),
]

GUARDS = [
    ServerCase("never packs", NeverPacks, "net.packed.1", "unsupported"),
    ServerCase("never splits", ReferenceServer, "net.split.1", "unsupported", (("part_size", 2**23),)),
    ServerCase("no id reuse", NoReuse, "net.ids.1", "unsupported"),
]


class RunningServer:
    """A server on 127.0.0.1 with its loop on a thread of its own; `url` to test it, `stop()` to end it."""

    def __init__(self, connection_type: type[ReferenceServer] = ReferenceServer, **options: Any):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-server", daemon=True)
        self.thread.start()
        fresh = type(connection_type.__name__, (connection_type,), {})  # class attributes are this server's alone
        started = asyncio.run_coroutine_threadsafe(serve(connection_type=fresh, **options), self.loop)
        self.server = started.result(5)
        self.url = f"tcp://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(shut_down(self.server), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


# How long a mutant's check (and its reproducer, whose deadline it is) waits for what the mutant never sends: each such
# wait costs this much, twice (the check, then the script's confirming run). The wire checks (net.*) wait for single
# frames, which the reference server and these mutants send within 0.2 s (as tests/network/test_client_checks.py's
# HANG_TIMEOUT_S for the mutant clients). The core rules' checks go through the kit's client and keep the 3 s the
# reproducers always had: their settles wait for what the server owes until a quarter of the time left (0.5 s at most)
# remains, a settle cut short leaves no judgement a script can replay, and the cancel checks (1.8) need the time to see
# a parked stream come back (at 2 s ParksACancelledStream passed 3 runs of 8).
WIRE_CHECK_TIMEOUT_S = 1.5
CORE_CHECK_TIMEOUT_S = 3.0


def timeout_of(case: ServerCase) -> float:
    """The deadline of `case`'s checks."""
    return WIRE_CHECK_TIMEOUT_S if (case.rules or case.item).startswith("net.") else CORE_CHECK_TIMEOUT_S


@dataclasses.dataclass
class MutantRun:
    """The rows of a case's checks against a server of its mutant, and that server while it is still up."""

    rows: list[dict[str, Any]]
    server: RunningServer | None


# Each case's checks run once per worker: the rows tests/network/test_server_checks.py judges the verdict on are the
# rows tests/repro/test_network.py writes the reproducers of (the same checks, the same deadline). The server stays up
# for the latter, whose scripts are confirmed against it; it is stopped then, or at the end of the session.
_RUNS: dict[str, MutantRun] = {}


def _run(case: ServerCase) -> MutantRun:
    server = RunningServer(case.server, **dict(case.options))
    try:
        target = load_target(server.url)
        rows = [run_check(p.check, p.target, timeout_s=timeout_of(case)).row()
                for p in plan(target, rules=case.rules or case.item)]
    except BaseException:
        server.stop()
        raise
    return MutantRun(rows, server)


def rows_of_case(case: ServerCase) -> list[dict[str, Any]]:
    """The rows of `case`'s checks (`rules`, else its item's), run against its mutant once per worker."""
    if case.name not in _RUNS:
        _RUNS[case.name] = _run(case)
    return _RUNS[case.name].rows


def take_serving_run(case: ServerCase) -> tuple[list[dict[str, Any]], RunningServer]:
    """The rows of `case`'s checks and the server they ran against, still up and now the caller's to stop: the run
    rows_of_case made if its server is still up, else a new one."""
    run = _RUNS.get(case.name)
    if run is None or run.server is None:
        run = _RUNS[case.name] = _run(case)
    server, run.server = run.server, None
    return run.rows, server


def stop_every_run() -> None:
    """Stop the servers no test took (the end of the session)."""
    for run in _RUNS.values():
        if run.server is not None:
            run.server.stop()
            run.server = None

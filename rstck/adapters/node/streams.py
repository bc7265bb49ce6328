"""NodeStreamTarget: a JavaScript module's Node streams (and JSGI stream), checked through a Node process per check.

`rstck check node-stream:./streams.js` checks the factories the module exports: createReadable(chunks),
createWritable(options), createFilter(), createDuplex(), createStream() (the Stream base class) and
createJsgiStream(), under the items of the Node stream contract and the JSGI stream extension
(docs/node.md, "Node streams and JSGI").

A check talks to its streams through `StreamDriver` (what `open_streams` returns): it makes streams, calls
their methods (alone, or several in one burst with nothing of Node's loop between them), passes callbacks
and other streams as arguments, reads properties, adds an explicit listener where the check needs one, and
reads the events the driver observed. Every event carries the kit call it happened inside (or none) and the
turn of the driver's loop, which is how "asynchronously" and "not before nextTick" are decided.

What the driver does is also the check's evidence (rstck/core/evidence.py), the operations a reproducer makes
again (rstck/reports/repro/node_stream.py): the streams made (factory, arguments), the calls (a burst is one
operation), the properties read, the members inspected, the listeners added, the settles and the points among
the events a check counts from (`mark`). Each call, read, inspection and mark carries the name (`ref`) a check's
claim uses for it; what the implementation emits is observed afresh by the script.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from rstck.adapters.node import NODE_STREAM_PREFIX
from rstck.adapters.node.target import NodeSettler, NodeTarget
from rstck.core.evidence import HANG, Unexpressible
from rstck.core.settle import SettleTimeout
from rstck.core.signals import Label, Trace, show
from rstck.core.verdict import RuleViolation, TargetError
from rstck.protocols.node.errors import NoReply, ProcessEnded
from rstck.protocols.node.js_errors import describe_error
from rstck.protocols.node.process import NodeProcess

# The factories a node-stream module may export, and the subject each serves.
STREAM_FACTORIES = {
    "createStream": "stream",
    "createReadable": "readable",
    "createWritable": "writable",
    "createFilter": "filter",
    "createDuplex": "duplex",
    "createJsgiStream": "jsgi",
}


class NodeStreamTarget(NodeTarget):
    """The stream factories a JavaScript module exports, each check in a Node process of its own (the pool,
    the handshake and the settling of NodeTarget)."""

    may_serve = frozenset({"stream", "readable", "writable", "filter", "duplex", "jsgi"})

    factories = STREAM_FACTORIES
    prefix = NODE_STREAM_PREFIX
    fuzz_phase = False  # the fuzz state machines drive Reactive Streams roles, which this target has none of

    def offered(self, ready: dict[str, Any]) -> frozenset[str]:
        return frozenset(self.factories[name] for name in self.exports)

    def not_observable(self, rule: str) -> str | None:
        return None

    def make_settler(self, trace: Trace) -> StreamSettler:
        return StreamSettler(trace, self)

    def context(self, kind: str, session: Any, rule: str) -> Any:
        return self.open_streams(session, rule) if kind == "streams" else super().context(kind, session, rule)

    def open_streams(self, session: Any, rule: str) -> StreamDriver:
        """What a stream check is called with: its access to its Node process; `rule` is charged when a call never
        returns."""
        settler = session.settler
        assert isinstance(settler, StreamSettler)
        return StreamDriver(session, settler, rule)


@dataclasses.dataclass(frozen=True)
class Stream:
    """A JavaScript object the kit made (or was handed), by handle; `label` names it in the trace."""

    handle: str
    label: str
    factory: str = ""

    def __str__(self) -> str:
        return self.label

    @property
    def ref(self) -> str:
        """Its name in the evidence (readable#1 -> readable1)."""
        return _ref(self.label)


@dataclasses.dataclass(frozen=True)
class Callback:
    """A function the kit passes (write(chunk, cb)): JavaScript calling it is a `callback` event."""

    label: str

    def __str__(self) -> str:
        return self.label

    @property
    def ref(self) -> str:
        return _ref(self.label)


def _ref(label: str) -> str:
    return label.replace("#", "")


@dataclasses.dataclass(frozen=True)
class Read:
    """A property the kit read: its value, and the name of the read in the evidence."""

    value: Any
    ref: str


@dataclasses.dataclass(frozen=True)
class Inspection:
    """What the kit found an object offers: typeof each member, instanceof each class; `ref`: the evidence's name."""

    members: dict[str, str]
    instance_of: dict[str, bool]
    ref: str


class Mark(int):
    """A point among the check's events (the seq of the last one observed: later events have a greater seq), and
    its name in the evidence."""

    ref: str

    def __new__(cls, seq: int, ref: str) -> Mark:
        made = super().__new__(cls, seq)
        made.ref = ref
        return made


@dataclasses.dataclass(frozen=True)
class KitError:
    """An error the kit passes (emit('error', err)): made afresh in JavaScript."""

    name: str = "Error"
    message: str = "rstck: an error the kit emits on purpose"


@dataclasses.dataclass(frozen=True)
class Event:
    """Something the implementation did that the driver observed."""

    seq: int
    kind: str  # emit, callback, heard (an explicit listener was called), reaction, uncaught
    obj: str  # the label of the stream (or of the callback)
    name: str  # the event's name; the callback's label; the reaction's method
    args: tuple
    in_op: int | None  # the kit command it happened inside; None: on Node's own schedule
    call: int | None  # the call of a burst it happened inside
    turn: int
    thrown: Any = None


@dataclasses.dataclass
class Outcome:
    """What one kit call did: returned `ret`, or threw `thrown`."""

    text: str
    op: int
    call: int | None
    turn: int
    ret: Any = None
    thrown: BaseException | None = None
    seq: int = 0  # the driver's sequence number when it returned: events before it happened before
    # What came out of the call was EventEmitter's throw of an 'error' event nobody listened to (the kit adds no
    # listener): the call emitted an event, it threw nothing of its own.
    error_event: bool = False
    ref: str = ""  # the call's name in the evidence

    @property
    def raised(self) -> bool:
        """Whether the call itself threw (an unhandled 'error' event thrown by EventEmitter is not its throw)."""
        return self.thrown is not None and not self.error_event

    def inside(self, event: Event) -> bool:
        """Whether `event` happened synchronously inside this call."""
        return event.in_op == self.op and (self.call is None or event.call in (None, self.call))

    def shown(self) -> str:
        if self.error_event:
            return unhandled_error_event(self.thrown)
        return f"raised {show(self.thrown)}" if self.raised else f"returned {show(self.ret)}"


def unhandled_error_event(thrown: Any) -> str:
    return (f"threw nothing of its own: it emitted an 'error' event nobody listened to (the kit adds no listener), "
            f"which EventEmitter threw out of the call: {describe_error(thrown)}")


@dataclasses.dataclass
class DeferredCall:
    """A kit call not yet in the trace: it is recorded once the driver shows it began (the first event inside
    it, or its reply), so what happened before it, on Node's own schedule, is printed before it."""

    kind: str
    actor: str
    args: tuple
    text: str
    depth: int
    call: int | None = None  # its place in a burst (None: a command of one call)
    outcome: str | None = None
    signal: Any = None


class StreamSettler(NodeSettler):
    """NodeSettler, that also takes the stream events the driver sends and records them in the trace."""

    def __init__(self, trace: Trace, target: NodeTarget):
        super().__init__(trace, target)
        self.events: list[Event] = []
        self.labels: dict[str, str] = {}  # handle -> label
        self.calls_by_op: dict[tuple[int, int | None], str] = {}  # (op, call) -> trace text, for where events fell
        self.deferred: dict[int, list[DeferredCall]] = {}  # op -> its calls not yet recorded, in order

    def defer(self, op: int, calls: list[DeferredCall]) -> None:
        self.deferred[op] = calls

    def began(self, op: Any, call: Any = None) -> None:
        """Op `op` (its burst's calls up to `call`; all of them if None) began: record its deferred calls."""
        pending = self.deferred.get(op) if isinstance(op, int) else None
        session = self.session
        if not pending or session is None:
            return
        upto = len(pending) - 1 if call is None else int(call)
        trace = session.trace
        outer = trace.nest_under_nothing()
        try:
            for k, entry in enumerate(pending[:upto + 1]):
                if entry.signal is None:
                    trace.nest_again(entry.depth)
                    entry.signal = trace.record(entry.kind, entry.actor, entry.args, outcome=entry.outcome)
                    self.calls_by_op[(op, entry.call)] = f"#{entry.signal.seq} {entry.text}"
        finally:
            trace.nest_again(outer)
        if upto >= len(pending) - 1:
            del self.deferred[op]

    def event(self, message: dict[str, Any]) -> None:
        if message.get("in_op") in self.deferred:
            self.began(message["in_op"], message.get("call"))
        kind = message.get("ev")
        if kind not in ("emit", "callback", "heard", "reaction") and not (
                kind == "uncaught" and message.get("unhandled_error_event")):
            super().event(message)
            return
        process = self.process
        session = self.session
        if process is None or session is None:
            return
        obj = str(message.get("obj", ""))
        label = self.labels.get(obj, obj)
        args = tuple(self.value_of(process, a) for a in message.get("args", ()))
        thrown = process.thrown(message["thrown"]) if "thrown" in message else None
        if kind == "uncaught":
            thrown = process.thrown(message.get("error"))
        if kind == "emit" and message.get("symbol"):
            kind = "internal"  # a Symbol-named event: the implementation's own bookkeeping, no stream event
        event = Event(int(message.get("seq", 0)), kind, label, str(message.get("name", "")), args,
                      message.get("in_op"), message.get("call"), int(message.get("turn", 0)), thrown)
        self.events.append(event)
        self._record(session, event, message.get("listeners"))

    def value_of(self, process: NodeProcess, value: Any) -> Any:
        """A value from the driver: a stream the kit holds by its label, anything else decoded."""
        if isinstance(value, dict) and "$ref" in value:
            return Label(self.labels.get(value["$ref"], f"<{value.get('class') or 'object'}>"))
        return process.decode(value)

    def _record(self, session: Any, event: Event, listeners: Any) -> None:
        where = f"turn {event.turn}"
        if event.in_op is not None:
            inside = self.calls_by_op.get((event.in_op, event.call)) or self.calls_by_op.get((event.in_op, None))
            where += f", inside {inside}" if inside else ", inside a kit call"
        if event.kind in ("emit", "internal"):
            kind, actor, args = "emit", event.obj, (event.name, *event.args)
            if listeners == 0:
                where += ", no listener"
            if event.kind == "internal":
                where += "; a Symbol name: the implementation's own, no stream event"
        elif event.kind == "callback":
            kind, actor, args = "called", event.obj, event.args
        elif event.kind == "heard":
            kind, actor, args = f"listener('{event.name}')", event.obj, event.args
        elif event.kind == "reaction":
            kind, actor, args = event.name, event.obj, ()
            where = f"in the listener, {where}; " + (f"raised {show(event.thrown)}" if event.thrown else "returned")
        else:
            session.trace.note(f"the 'error' event had no listener (the kit adds none), so it was thrown uncaught, "
                               f"as it would be in production: {describe_error(event.thrown)}")
            return
        with session.signalling.apart() if event.in_op is None else contextlib.nullcontext():
            session.trace.record(kind, actor, args, outcome=where)


class CommandNaming:
    """Tells the settler how to name a command's id in the trace, for the events inside it (`numbered`, given to
    NodeProcess.command); with a deferred call, records that call once the command began (`began()`, called
    when the command is over in any case)."""

    def __init__(self, settler: StreamSettler, text: str, deferred: DeferredCall | None = None):
        self.settler = settler
        self.text = text
        self.deferred = deferred
        self.op: int | None = None

    def __call__(self, op: int) -> None:
        self.op = op
        if self.deferred is None:
            self.settler.calls_by_op[(op, None)] = self.text
        else:
            self.settler.defer(op, [self.deferred])

    def began(self) -> None:
        if self.op is not None:
            self.settler.began(self.op)


class StreamDriver:
    """One check's streams in its Node process, with every call and event in the check's trace."""

    def __init__(self, session: Any, settler: StreamSettler, rule: str):
        self.session = session
        self.settler = settler
        self.rule = rule

    # -- making things ---------------------------------------------------------------------------

    @property
    def process(self) -> NodeProcess:
        return self.settler.bind(self.session)

    def has(self, factory: str) -> bool:
        return factory in self.settler.target.exports

    def make(self, factory: str, *args: Any, watch: bool = True) -> Stream:
        """Call a factory; what it throws or returns instead of an object is the target's fault (an error
        verdict), not a rule's. `watch`: record what it emits (a JSGI stream is heard through addListener)."""
        process = self.process
        role = STREAM_FACTORIES.get(factory, "object")
        text = f"{factory}({', '.join(self._shown(a) for a in args)})"
        deferred = DeferredCall(factory, "module", tuple(Label(self._shown(a)) for a in args), text, self._depth())
        numbered = CommandNaming(self.settler, text, deferred)
        label = self.session.labels.fresh(role)
        try:
            with self.session.calls.underway(text, "", factory), self._operation(lambda: {
                    "op": "make", "name": _ref(label), "factory": factory, "args": self._evidence_values(args),
                    "watch": watch}):
                try:
                    reply = process.command({"op": "create", "factory": factory, "watch": watch,
                                             "args": [self._encode(a) for a in args]},
                                            deadline=self.settler.deadline(), numbered=numbered)
                finally:
                    numbered.began()
        except (ProcessEnded, NoReply) as exc:
            raise TargetError(f"{text}: {exc}") from None
        if not reply.get("ok"):
            if reply.get("missing"):
                raise TargetError(f"{text}: the module exports no {factory}")
            raise TargetError(f"{text} threw {describe_error(process.thrown(reply.get('thrown')))}")
        made = reply.get("ret")
        if not (isinstance(made, dict) and "$ref" in made):
            raise TargetError(f"{text} returned {show(process.decode(made))}: not an object")
        stream = Stream(made["$ref"], label, factory)
        self.settler.labels[stream.handle] = stream.label
        self.session.evidence.named(stream, label, kind="stream", factory=factory)
        self.session.trace.note(f"{text} made {stream.label} ({made.get('class') or 'Object'})")
        return stream

    def callback(self, name: str = "cb") -> Callback:
        callback = Callback(self.session.labels.fresh(name))
        self.session.evidence.named(callback, callback.label, kind="callback")
        return callback

    @staticmethod
    def error(message: str = "rstck: an error the kit emits on purpose") -> KitError:
        return KitError("Error", message)

    # -- calling -----------------------------------------------------------------------------------

    def call(self, stream: Stream, method: str, *args: Any) -> Outcome:
        """Call `method` on `stream`: what it returned or threw (a throw is data, not a failure)."""
        return self.burst([(stream, method, args)])[0]

    def burst(self, calls: list[tuple[Stream, str, tuple]]) -> list[Outcome]:
        """Make several calls in one command: nothing of Node's loop (no tick, no timer) runs between them."""
        process = self.process
        texts = [f"{s.label}.{m}({', '.join(self._shown(a) for a in args)})" for s, m, args in calls]
        depth = self._depth()
        deferred = [DeferredCall(m, s.label, tuple(Label(self._shown(a)) for a in args), texts[k], depth, k)
                    for k, (s, m, args) in enumerate(calls)]
        text = texts[0] if len(texts) == 1 else f"a burst of {len(texts)} calls ({texts[0]}, ...)"
        fields = {"op": "batch", "calls": [{"target": s.handle, "method": m, "args": [self._encode(a) for a in args]}
                                           for s, m, args in calls]}
        ops: list[int] = []
        refs = [self._fresh("call") for _ in calls]

        def numbered(op: int) -> None:
            ops.append(op)
            self.settler.defer(op, deferred)

        try:
            with self.session.calls.underway(text, self.rule, calls[0][1]), self._operation(lambda: {
                    "op": "call", "calls": [{"name": ref, "on": s.ref, "method": m, "args": self._evidence_values(args)}
                                            for ref, (s, m, args) in zip(refs, calls)]}):
                try:
                    reply = process.command(fields, deadline=self.settler.deadline(), numbered=numbered)
                finally:
                    if ops:
                        self.settler.began(ops[0])  # whatever became of it, the calls are in the trace
        except NoReply:
            process.kill(wait=False)
            raise RuleViolation(self.rule, f"{text} to return", "it had not returned by the deadline (synchronous "
                                "JavaScript kept running)", timed_out=True, claim=HANG) from None
        except ProcessEnded as exc:
            raise RuleViolation(self.rule, f"{text} to return", f"the Node process ended inside it: {exc}",
                                claim=HANG) from None
        outcomes = []
        for k, (result, entry) in enumerate(zip(reply.get("results", ()), deferred)):
            outcome = Outcome(texts[k], ops[0], k, int(result.get("turn", 0)), seq=int(reply.get("seq", 0)),
                              ref=refs[k])
            signal = entry.signal
            if result.get("ok"):
                outcome.ret = self.settler.value_of(process, result.get("ret"))
                signal.outcome = f"returned {show(outcome.ret)}"
            else:
                outcome.thrown = process.thrown(result.get("thrown"))
                outcome.error_event = bool(result.get("unhandled_error_event"))
                signal.outcome = (unhandled_error_event(outcome.thrown) if outcome.error_event
                                  else f"threw {describe_error(outcome.thrown)}")
            outcomes.append(outcome)
        return outcomes

    def _depth(self) -> int:
        """How deeply the trace nests what is recorded now on this thread."""
        trace = self.session.trace
        depth = trace.nest_under_nothing()
        trace.nest_again(depth)
        return depth

    def get(self, stream: Stream, prop: str) -> Any:
        """The value of `stream[prop]` (a function reads as <Function name>)."""
        return self.read(stream, prop).value

    def read(self, stream: Stream, prop: str) -> Read:
        """`stream[prop]` (get), with the read's name in the evidence."""
        ref = self._fresh("read")
        with self._operation(lambda: {"op": "read", "name": ref, "on": stream.ref, "property": prop}):
            reply = self._simple({"op": "get", "target": stream.handle, "property": prop}, f"{stream.label}.{prop}")
        if not reply.get("ok"):
            thrown = self.process.thrown(reply.get("thrown"))
            raise RuleViolation(self.rule, f"{stream.label}.{prop} to be readable", f"reading it threw "
                                f"{describe_error(thrown)}",
                                claim={"by": "check", "claim": "read", "read": {"ref": ref}})
        value = self.settler.value_of(self.process, reply.get("ret"))
        self.session.trace.note(f"{stream.label}.{prop} is {show(value)}")
        return Read(value, ref)

    def members(self, stream: Stream, names: tuple[str, ...]) -> dict[str, str]:
        """typeof stream[name], for each name."""
        return self.inspect(stream, members=names).members

    def instance_of(self, stream: Stream, classes: list[str]) -> dict[str, bool]:
        return self.inspect(stream, classes=classes).instance_of

    def inspect(self, stream: Stream, *, members: tuple[str, ...] = (), classes: list[str] = ()) -> Inspection:
        """typeof stream[name] for each of `members`, and whether `stream` is an instance of each of `classes`
        ("stream": Node's own Stream; "like:HANDLE": the class of another object; else an export's dotted path)."""
        ref = self._fresh("inspection")
        fields = {"op": "inspect", "target": stream.handle}
        if members:
            fields["members"] = list(members)
        if classes:
            fields["classes"] = list(classes)
        what = f"the members of {stream.label}" if members else f"the classes of {stream.label}"
        with self._operation(lambda: {"op": "inspect", "name": ref, "on": stream.ref, "members": list(members),
                                      "classes": [self._evidence_class(name) for name in classes]}):
            reply = self._simple(fields, what)
        found = reply.get("members", {})
        if members:
            self.session.trace.note(f"{stream.label}: " + ", ".join(f"{n} is {found.get(n)}" for n in members))
        return Inspection(found, reply.get("instance_of", {}), ref)

    def listen(self, stream: Stream, event: str, *, react: tuple[tuple[str, tuple], ...] = (), record: bool = False,
               method: str = "on") -> None:
        """Add a listener (recorded in the trace as the kit's own, semantics-changing act); its nth call makes
        the nth reaction, (method, args) called on the stream inside the listener."""
        shown = "" if not react else " reacting with " + ", ".join(f"{m}() on call {k + 1}" for k, (m, _) in
                                                                    enumerate(react) if m)
        text = f"{stream.label}.{method}({event!r})"
        deferred = DeferredCall(method, stream.label, (event, Label("<the kit's listener>")), text, self._depth(),
                                outcome=f"an explicit listener{shown}")
        reactions = [{"method": m, "args": [self._encode(a) for a in args]} if m else None for m, args in react]
        with self._operation(lambda: {"op": "listen", "on": stream.ref, "event": event, "record": record,
                                      "method": method, "react": [[m, self._evidence_values(args)] if m else None
                                                                  for m, args in react]}):
            reply = self._simple({"op": "listen", "target": stream.handle, "event": event, "react": reactions,
                                  "record": record, "method": method}, text, deferred=deferred)
        if not reply.get("ok"):
            raise TargetError(f"{stream.label}.{method}({event!r}, listener) threw "
                              f"{describe_error(self.process.thrown(reply.get('thrown')))}")

    def _simple(self, fields: dict[str, Any], text: str, deferred: DeferredCall | None = None) -> dict[str, Any]:
        process = self.process
        numbered = CommandNaming(self.settler, text, deferred)
        try:
            with self.session.calls.underway(text, self.rule, fields["op"]):
                try:
                    reply = process.command(fields, deadline=self.settler.deadline(), numbered=numbered)
                finally:
                    numbered.began()
        except NoReply:
            process.kill(wait=False)
            raise RuleViolation(self.rule, f"{text} to be read", "it had not returned by the deadline",
                                timed_out=True, claim=HANG) from None
        except ProcessEnded as exc:
            raise RuleViolation(self.rule, f"{text} to be read", f"the Node process ended: {exc}",
                                claim=HANG) from None
        return reply

    # -- waiting and reading -----------------------------------------------------------------------

    def settle(self) -> None:
        """Until the driver is idle (no event and nothing pending for a few turns), bounded by the check's
        deadline: a stream still busy then raises SettleTimeout, and the verdict says it rests on the deadline."""
        self.session.settle()

    def settle_or(self, rule: str, expected: str) -> None:
        """Settle; a stream still busy at the deadline fails `rule` (decided by the deadline)."""
        ref = self._fresh("settle")
        try:
            with self._operation(lambda: {"op": "settle", "name": ref}):
                self.session.settle()
        except SettleTimeout as exc:
            raise RuleViolation(rule, expected, f"not observed: {exc}", timed_out=True,
                                claim={"by": "check", "claim": "settled", "settle": {"ref": ref}}) from None

    def mark(self) -> Mark:
        """The point among the events reached now: what a check counts later events from."""
        ref = self._fresh("mark")
        with self._operation(lambda: {"op": "mark", "name": ref}):
            return Mark(self.last_seq, ref)

    def unless(self, condition: str, **fields: Any) -> None:
        """Tell a reproducer where the check stops short of its judgement (n/a, or a pass with a note) when
        `condition` holds of what was observed so far (`fields` as the evidence holds them; the conditions:
        rstck/reports/repro/node_stream_runtime.js): the check went on here, against another implementation it
        may not."""
        with self._operation(lambda: {"op": "unless", "if": condition, **fields}):
            pass

    def events(self, stream: Stream | Callback | None = None, name: str | None = None, *, kind: str = "emit",
               after: int = 0) -> list[Event]:
        """The events observed so far, of `stream` (or the calls of a callback), named `name`, after seq `after`."""
        label = None if stream is None else stream.label
        kinds = ("callback",) if isinstance(stream, Callback) else (kind,)
        return [e for e in self.settler.events if e.kind in kinds and (label is None or e.obj == label)
                and (name is None or e.name == name) and e.seq > after]

    def calls_of(self, callback: Callback) -> list[Event]:
        return self.events(callback)

    @property
    def last_seq(self) -> int:
        return self.settler.events[-1].seq if self.settler.events else 0

    def note(self, text: str) -> None:
        self.session.trace.note(text)

    # -- evidence ----------------------------------------------------------------------------------

    def _fresh(self, prefix: str) -> str:
        """A name for an observation of this check's (call1, read2, ...)."""
        return _ref(self.session.labels.fresh(prefix))

    @contextlib.contextmanager
    def _operation(self, describe: Any) -> Any:
        """Record the operation `describe()` gives (an argument no script can write out: no reproducer)."""
        evidence = self.session.evidence
        op = None
        if not evidence.unsupported:
            try:
                op = describe()
            except Unexpressible as exc:
                evidence.cannot(f"the kit passed {exc}, which a script cannot write out")
        frame = evidence.begin(op)
        try:
            yield
        finally:
            evidence.end(frame)

    def _evidence_values(self, args: Any) -> list[Any]:
        return [self._evidence_value(a) for a in args]

    def _evidence_value(self, value: Any) -> Any:
        if isinstance(value, (Stream, Callback)):
            return {"ref": value.ref}
        if isinstance(value, KitError):
            return {"error": value.name, "message": value.message}
        if isinstance(value, dict):
            return {"object": {str(k): self._evidence_value(v) for k, v in value.items()}}
        if isinstance(value, (list, tuple)):
            return {"list": self._evidence_values(value)}
        return self.session.evidence.value(value)

    def _evidence_class(self, name: str) -> Any:
        """A class of `inspect` as the evidence names it: "like:HANDLE" by the object's name."""
        if name.startswith("like:"):
            return {"like": _ref(self.settler.labels[name[5:]])}
        return name

    # -- values ------------------------------------------------------------------------------------

    def _encode(self, value: Any) -> Any:
        if isinstance(value, Stream):
            return {"$ref": value.handle}
        if isinstance(value, Callback):
            return {"$callback": value.label}
        if isinstance(value, KitError):
            return {"$error": value.name, "message": value.message}
        if isinstance(value, dict):
            return {k: self._encode(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._encode(v) for v in value]
        return self.process.encode(value)

    def _shown(self, value: Any) -> str:
        if isinstance(value, (Stream, Callback)):
            return value.label
        if isinstance(value, KitError):
            return f"{value.name}({value.message!r})"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {self._shown(v)}" for k, v in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(self._shown(v) for v in value) + "]"
        return show(value)

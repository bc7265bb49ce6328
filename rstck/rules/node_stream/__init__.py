"""Checks of the Node stream contract (its items: catalogue.toml), one module per section.

A check receives the check's `streams` (what the target's `open_streams` gives): it makes streams with the
module's factories, calls their methods, and reads the events the driver observed, each placed in the kit
call it happened inside (or none) and in a turn of Node's loop (docs/node.md, "Node streams and JSGI").

The factory contract the checks rely on:
  createReadable(chunks)   a readable that emits each of `chunks` (strings) as a data event, in order, then end
  createWritable(options)  a writable; options.highWaterMark is how many chunks may wait before write() says
                           false, options.written(chunk) is called once a chunk is completely written
  createFilter()           a readable and writable stream: each chunk written comes out as a data event
  createDuplex()           a readable and writable stream talking to another agent
  createStream()           an instance of the Stream base class (optional)

Each violation carries its claim (`claim`): the judgement as a reproducer makes it again on what it observed
(rstck/reports/repro/node_stream_runtime.js, JUDGEMENTS), over the calls, reads, inspections and marks the
driver names. Where a check stops short of its judgement on what it observed (n/a, a pass with a note), it says so
with `streams.unless(...)` before it goes on, so that a script does not judge a sentence the check would not have.
"""

from __future__ import annotations

from typing import Any, Callable

from rstck.core.plugins import Profile
from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import rule as _rule

# The chunks a readable is made with, and the high-water mark a writable is made with.
CHUNKS = ("a", "b", "c")
HIGH_WATER_MARK = 4

# The factory each section's checks need (their subject).
SECTION_SUBJECTS = {"base": "stream", "writable": "writable", "readable": "readable", "filter": "filter",
                    "duplex": "duplex", "guidelines": "readable"}


PROFILE = Profile(
    name="node-stream-contract",
    title="Node.js stream contract (2011 proposal)",
    package=__name__,
    checks=("base", "writable", "readable", "filter", "duplex", "guidelines"),
    subjects=("stream", "readable", "writable", "filter", "duplex"),
    marker="node_stream",
    markers={"node_stream": "checks of the Node stream contract's items (node.*)",
             "stream": "Node stream checks of the Stream base class (createStream())",
             "readable": "Node stream checks of a readable (createReadable(chunks))",
             "writable": "Node stream checks of a writable (createWritable(options))",
             "filter": "Node stream checks of a filter (createFilter())",
             "duplex": "Node stream checks of a duplex (createDuplex())",
             "base": "Node stream checks of the Stream base class's items (node.base.*)",
             "guidelines": "Node stream checks of the contract's guidelines (node.guidelines.*)"},
    section_needs={section: frozenset({subject}) for section, subject in SECTION_SUBJECTS.items()},
    context="streams",  # the check's access to its Node process (rstck/adapters/node/streams.py)
    reproduced_in=("node-stream",),
)


def rule(rule_id: str, *, needs: set[str] | None = None, role: str | None = None):
    """@rule for a stream check: registered with its section's subject as what it needs (its role: its
    section); it is called with the check's streams (a call that never returns is charged to `rule_id`)."""

    def register(func: Callable[[Any], None]) -> Callable[..., None]:
        section = func.__module__.rsplit(".", 1)[-1]
        wanted = needs if needs is not None else {SECTION_SUBJECTS.get(section, "jsgi")}
        return _rule(rule_id, needs=frozenset(wanted), role=role)(func)

    return register


# -- making streams --------------------------------------------------------------------------------

def new_writable(streams: Any, high_water_mark: int = HIGH_WATER_MARK) -> tuple[Any, Any]:
    """A writable made with the kit's options, and the callback it reports written chunks to."""
    written = streams.callback("written")
    return streams.make("createWritable", {"highWaterMark": high_water_mark, "written": written}), written


def new_readable(streams: Any, chunks: tuple[str, ...] = CHUNKS) -> Any:
    return streams.make("createReadable", list(chunks))


def pipe_destination(streams: Any) -> Any:
    """A stream to pipe into: the module's writable, else an instance of its Stream base class."""
    if streams.has("createWritable"):
        return new_writable(streams)[0]
    return streams.make("createStream")


# -- claims: how a reproducer judges a violation again ----------------------------------------------

def claim(judgement: str, /, **fields: Any) -> dict[str, Any]:
    """The claim of a violation: `judgement` over `fields` (what the driver names, by name; plain values)."""
    return {"by": "check", "claim": judgement, **{name: claimed(value) for name, value in fields.items()}}


def claimed(value: Any) -> Any:
    """A field of a claim or condition as the evidence holds it: what the driver names (a stream, a callback, a
    call's outcome, a read, an inspection, a mark) by its name, lists item by item, plain values as they are."""
    if hasattr(value, "ref"):
        return {"ref": value.ref}
    if isinstance(value, (list, tuple)):
        return [claimed(v) for v in value]
    return value


def since(after: Any) -> Any:
    """The `after` of an events query as a claim holds it: from the start (None), or a mark; ValueError for a seq
    number that is no mark (a script cannot name it)."""
    if not after:
        return None
    if not hasattr(after, "ref"):
        raise ValueError(f"a seq number ({after}) that is no mark")
    return after


def unless(streams: Any, condition: str, **fields: Any) -> None:
    """The check stops short of its judgement here when `condition` holds (StreamDriver.unless)."""
    streams.unless(condition, **{name: claimed(value) for name, value in fields.items()})


# -- what was observed -----------------------------------------------------------------------------

def text_of(value: Any) -> Any:
    """A chunk as text where it is one: Node hands a written string to the sink as a Buffer."""
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def chunks_of(events: list[Any]) -> list[Any]:
    return [text_of(e.args[0]) if e.args else None for e in events]


def written_chunks(streams: Any, written: Any) -> list[Any]:
    return chunks_of(streams.calls_of(written))


def expect_no_throw(rule: str, outcome: Any, expected: str = "") -> None:
    if outcome.raised:
        raise RuleViolation(rule, expected or f"{outcome.text} not to throw", outcome.shown(),
                            claim=claim("no_throw", call=outcome))


def expect_throw(rule: str, outcome: Any, when: str) -> None:
    if not outcome.raised:
        raise RuleViolation(rule, f"{outcome.text} to throw {when}", outcome.shown(),
                            claim=claim("throws", call=outcome))


def expect_returned(rule: str, outcome: Any, value: Any, expected: str = "") -> None:
    """The call returned `value`: a stream the kit holds (compared by identity through its handle), or true or
    false."""
    if outcome.raised or (outcome.ret is not value if isinstance(value, bool) else str(outcome.ret) != str(value)):
        raise RuleViolation(rule, expected or f"{outcome.text} to return {value}", outcome.shown(),
                            claim=claim("returns", call=outcome, value=value))


def expect_pipe_returns(streams: Any, rule: str, stream: Any, dest: Any) -> None:
    """stream.pipe(dest) returns dest; settled afterwards, so the piping runs to its end inside the check."""
    expect_returned(rule, streams.call(stream, "pipe", dest), dest)
    streams.settle()


def expect_called(streams: Any, rule: str, callback: Any, what: str) -> list[Any]:
    """Settle; `callback` must have been called (a settle that ran into the deadline says so)."""
    streams.settle_or(rule, f"{callback} to be called {what}")
    calls = streams.calls_of(callback)
    if not calls:
        raise RuleViolation(rule, f"{callback} to be called {what}", "it was never called (settled: the driver was "
                            "idle)", claim=claim("called", callback=callback))
    return calls


def expect_not_synchronous(rule: str, events: list[Any], outcome: Any, what: str, *, callback: Any = None) -> None:
    """None of `events` (the calls of `callback`) happened inside the kit call that caused it (`outcome`): not
    before nextTick."""
    early = [e for e in events if outcome.inside(e)]
    if early:
        raise RuleViolation(rule, f"{what} not before nextTick", f"#{early[0].seq} {early[0].obj} "
                            f"{'called' if early[0].kind == 'callback' else 'emitted ' + repr(early[0].name)} "
                            f"synchronously inside {outcome.text}, in turn {early[0].turn}",
                            claim=claim("not_inside", of=callback, kind="callback", calls=[outcome])
                            if callback is not None else None)


def expect_emitted(streams: Any, rule: str, stream: Any, name: str, what: str, *, after: int = 0,
                   judged: dict[str, Any] | None = None) -> list[Any]:
    """Settle; `stream` must have emitted `name` after seq `after` (a mark, or 0). `judged`: the claim, when the
    check's judgement is more than that."""
    streams.settle_or(rule, f"{stream} to emit {name!r} {what}")
    found = streams.events(stream, name, after=after)
    if not found:
        raise RuleViolation(rule, f"{stream} to emit {name!r} {what}", f"no {name!r} event (settled: the driver "
                            "was idle)", claim=judged or _emitted(stream, name, "emit", after))
    return found


def _emitted(stream: Any, name: str, kind: str, after: Any) -> dict[str, Any] | None:
    try:
        return claim("emitted", of=stream, name=name, kind=kind, after=since(after))
    except ValueError:
        return None


def expect_flag(streams: Any, rule: str, stream: Any, name: str, value: bool, when: str) -> None:
    read = streams.read(stream, name)
    if read.value is not value:
        raise RuleViolation(rule, f"{stream}.{name} to be {str(value).lower()} {when}", f"it is {read.value!r}",
                            claim=claim("flag", reads=[read], value=value))


def expect_members(streams: Any, rule: str, stream: Any, flags: tuple[str, ...], methods: tuple[str, ...],
                   expected: str = "") -> None:
    """`stream` has each of `flags` (any value but undefined) and each of `methods` (a function)."""
    inspection = streams.inspect(stream, members=flags + methods)
    found = inspection.members
    missing = [f"{name} (a flag)" for name in flags if found.get(name) in ("undefined", "throws")]
    missing += [f"{name}()" for name in methods if found.get(name) != "function"]
    if missing:
        raise RuleViolation(rule, expected or f"{stream} to have {', '.join(flags + tuple(m + '()' for m in methods))}",
                            f"it lacks {', '.join(missing)}",
                            claim=claim("members", inspection=inspection, flags=flags, methods=methods))


def require_method(streams: Any, stream: Any, method: str, why: str) -> None:
    """n/a unless `stream` has `method` (another item judges its absence)."""
    inspection = streams.inspect(stream, members=(method,))
    unless(streams, "lacks", inspection=inspection, member=method)
    if inspection.members.get(method) != "function":
        raise NotApplicable(f"{stream} has no {method}() ({why})")


def instance_of_stream(streams: Any, rule: str, stream: Any) -> None:
    """SHOULD be an instanceof the Stream base class: Node's own, the module's exported Stream, or the class of
    what createStream() returns."""
    classes = ["stream", "Stream"]
    if streams.has("createStream"):
        base = streams.make("createStream")
        classes.append(f"like:{base.handle}")
    inspection = streams.inspect(stream, classes=classes)
    if not any(inspection.instance_of.values()):
        raise RuleViolation(rule, f"{stream} to be an instance of the Stream base class (Node's Stream, the "
                            "module's Stream, or the class of createStream())", "it is an instance of none",
                            claim=claim("instance_of", inspection=inspection))


def destroyed_twice_at_once_does_nothing(streams: Any, rule: str, stream: Any) -> None:
    """destroy(); destroy(); in one go (nothing of Node's loop between them): the second throws nothing, and
    once settled no event was emitted twice (a second destroy, end or close) and no error was emitted."""
    mark = streams.mark()
    first, second = streams.burst([(stream, "destroy", ()), (stream, "destroy", ())])
    expect_no_throw(rule, first, f"{first.text} to return, then do nothing when called again")
    expect_no_throw(rule, second, "a second destroy() to do nothing")
    streams.settle_or(rule, "destroy() to complete")
    names = [e.name for e in streams.events(stream, after=mark)]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice or "error" in names:
        shown = ", ".join(f"{name!r} {names.count(name)} times" for name in twice) or "'error'"
        raise RuleViolation(rule, "a second destroy() to do nothing", f"after destroy(); destroy(); it emitted "
                            f"{shown}", claim=claim("nothing_twice", of=stream, after=mark))


def destroyed_twice_does_nothing(streams: Any, rule: str, stream: Any) -> None:
    """destroy(), settle, destroy() again: the second call throws nothing and emits nothing, then or later."""
    first = streams.call(stream, "destroy")
    expect_no_throw(rule, first, f"{first.text} to return, then do nothing when called again")
    streams.settle_or(rule, "the first destroy() to complete")
    mark = streams.mark()
    second = streams.call(stream, "destroy")
    expect_no_throw(rule, second, "a second destroy() to do nothing")
    streams.settle_or(rule, "a second destroy() to do nothing")
    again = streams.events(stream, after=mark)
    if again:
        raise RuleViolation(rule, "a second destroy() to do nothing", "it emitted " + ", ".join(
            f"#{e.seq} {e.name!r}" for e in again), claim=claim("silent", of=stream, kind="emit", after=mark))



def expect_call_emits(streams: Any, rule: str, stream: Any, method: str, name: str, what: str) -> list[Any]:
    """`method`() throws nothing, and once settled `stream` has emitted `name`."""
    expect_no_throw(rule, streams.call(stream, method))
    return expect_emitted(streams, rule, stream, name, what)


def expect_callback_called(streams: Any, rule: str, stream: Any, method: str, args: tuple, what: str) -> list[Any]:
    """`method`(*args, cb) throws nothing, and once settled cb has been called."""
    cb = streams.callback()
    expect_no_throw(rule, streams.call(stream, method, *args, cb))
    return expect_called(streams, rule, cb, what)


def expect_flag_false_once_destroyed(streams: Any, rule: str, stream: Any, name: str) -> None:
    """Once destroy() has returned, the flag `name` is false, and stays so once destroyed."""
    expect_no_throw(rule, streams.call(stream, "destroy"))
    expect_flag(streams, rule, stream, name, False, "once destroy() has returned")
    streams.settle_or(rule, "destroy() to complete")
    expect_flag(streams, rule, stream, name, False, "once destroyed")


def expect_throw_after(streams: Any, rule: str, stream: Any, closer: str, when: str) -> None:
    """`closer`(), then write('x'): the write throws (settled before judging, so nothing is left running)."""
    expect_no_throw(rule, streams.call(stream, closer))
    outcome = streams.call(stream, "write", "x")
    streams.settle()
    expect_throw(rule, outcome, when)


def expect_callback_not_synchronous(streams: Any, rule: str, stream: Any, method: str, args: tuple, what: str,
                                    cb_what: str) -> None:
    """`method`(*args, cb): cb is not called inside that call (settled first: `what` is what settling waits for)."""
    cb = streams.callback()
    outcome = streams.call(stream, method, *args, cb)
    expect_no_throw(rule, outcome)
    streams.settle_or(rule, what)
    expect_not_synchronous(rule, streams.calls_of(cb), outcome, cb_what, callback=cb)


def expect_not_before_last_data(rule: str, event: Any, data: list[Any], expected: str, *, stream: Any,
                                which: str = "first") -> None:
    """`event`, the `which` (first, last) of its name that `stream` emitted (or its handler heard), came after the
    last of the `data` events (if there were any)."""
    if data and event.seq < data[-1].seq:
        raise RuleViolation(rule, expected, f"{event.name} #{event.seq} before data #{data[-1].seq}",
                            claim=claim("after_last_data", of=stream, name=event.name, kind=event.kind, which=which))

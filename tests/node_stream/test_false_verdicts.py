"""Verdicts the kit once got wrong on streams that the contract allows (or on what it forbids), each reproduced
with a JavaScript stream that behaves so: events under private Symbol names, an 'error' event that EventEmitter
throws out of a call because nobody listens, 'drain' emitted only to its listeners, end() callbacks the kit never
asked for, and a trace printed out of the order things happened in."""

from __future__ import annotations

import pytest

from .helpers import here, node_stream_target, run
from .test_observation import streams_of

pytestmark = pytest.mark.node

EMITTER_CLASSES = here("conformant", "emitter_classes.js")
ERROR_EVENTS = here("findings", "error_event_from_calls.js")


def _verdicts(module: str, rules: str) -> dict[str, set[str]]:
    """item -> the verdicts of its checks."""
    with node_stream_target(module, isolation="reuse", spares=0) as target:
        results = run(target, rules=rules)
    found: dict[str, set[str]] = {}
    for result in results:
        found.setdefault(result.rule, set()).add(result.verdict.value)
    return found, {r.rule: r.message for r in results if r.verdict.value != "pass"}


def test_a_repeated_destroy_that_only_emits_a_private_symbol_does_nothing():
    """Observation 16: a Symbol-named event is the implementation's own bookkeeping, not a stream event."""
    found, messages = _verdicts(EMITTER_CLASSES, "node.base.11,node.readable.11,node.filter.6,node.duplex.7")
    assert found == {item: {"pass"} for item in ("node.base.11", "node.readable.11", "node.filter.6",
                                                 "node.duplex.7")}, messages


def test_a_symbol_event_is_shown_in_the_trace_but_is_no_stream_event():
    with streams_of(EMITTER_CLASSES) as (streams, session):
        stream = streams.make("createStream")
        streams.call(stream, "destroy")
        streams.settle()
        mark = streams.last_seq
        streams.call(stream, "destroy")
        streams.settle()
        assert streams.events(stream, after=mark) == []
        assert "Symbol(destroyRequested)" in session.trace.render()


def test_a_throw_of_an_unhandled_error_event_is_not_a_throw_of_the_call():
    """Observation 17: destroy(cb) that takes cb for an error and emits it at once throws nothing of its own: the
    callback-timing item passes, the callback item fails; the trace says which throw it was."""
    found, messages = _verdicts(ERROR_EVENTS, "node.writable.17,node.writable.18")
    assert found == {"node.writable.17": {"fail"}, "node.writable.18": {"pass"}}, messages
    assert "never called" in messages["node.writable.17"]


def test_an_error_event_in_place_of_a_throw_is_told_apart():
    """Observation 17, the other way: write() after end() that emits 'error' instead of throwing does not throw,
    and the failure says what was seen."""
    found, messages = _verdicts(ERROR_EVENTS, "node.base.2")
    assert found == {"node.base.2": {"fail"}}
    assert "'error' event nobody listened to" in messages["node.base.2"]


def test_drain_is_waited_for_with_a_listener_as_users_do():
    """Observation 18: a writable that emits 'drain' only while a 'drain' listener is attached."""
    found, messages = _verdicts(EMITTER_CLASSES, "node.writable.7,node.writable.15,node.writable.24,"
                                                 "node.writable.25")
    assert found == {item: {"pass"} for item in ("node.writable.7", "node.writable.15", "node.writable.24",
                                                 "node.writable.25")}, messages


def test_the_trace_is_in_the_order_things_happened():
    """Observation 20: a write completion that happened before the kit's end() call is printed before it."""
    with streams_of(EMITTER_CLASSES) as (streams, session):
        written = streams.callback("written")
        writable = streams.make("createWritable", {"highWaterMark": 4, "written": written})
        streams.call(writable, "write", "a", streams.callback())
        end = streams.call(writable, "end")
        streams.settle()
        [completion] = streams.calls_of(written)
        assert completion.seq < end.seq and not end.inside(completion)  # it happened before end() was called
        rows = [s.actor if s.kind == "called" else "end()" for s in session.trace.signals()
                if s.kind == "end" or s.actor == "written#1"]
        assert rows == ["written#1", "end()"], session.trace.render()

"""How the driver observes streams: without a listener (a Node readable stays paused until the kit listens,
and the trace says it did), an 'error' nobody listens to thrown as in production and not charged, callbacks
placed in the call they happened inside, and bursts with nothing of Node's loop between their calls."""

from __future__ import annotations

import contextlib

import pytest

from rstck.core.verdict import RuleViolation

from .helpers import here, node_stream_target

pytestmark = pytest.mark.node

RULE = "node.readable.14"  # charged if a call hangs; these tests expect none to


@contextlib.contextmanager
def streams_of(module: str = here("bridge", "observed.js")):
    with node_stream_target(module) as target:
        session = target.open_session(5.0)
        try:
            yield target.open_streams(session, RULE), session
        finally:
            session.lifecycle.close()


def test_observing_a_readable_does_not_make_it_flow():
    with streams_of() as (streams, session):
        readable = streams.make("createReadable", ["a", "b"])
        streams.settle()
        assert not streams.events(readable, "data")
        streams.listen(readable, "data")
        streams.settle()
        assert [e.args for e in streams.events(readable, "data")] == [("a",), ("b",)]
        assert "readable#1.on('data', <the kit's listener>) -> an explicit listener" in session.trace.render()


def test_an_error_event_nobody_listens_to_is_thrown_as_in_production_and_recorded():
    with streams_of() as (streams, session):
        readable = streams.make("createReadable", ["a"])
        outcome = streams.call(readable, "emit", "error", streams.error("on purpose"))
        assert type(outcome.thrown).__name__ == "Error" and str(outcome.thrown) == "on purpose"
        [error] = streams.events(readable, "error")
        assert outcome.inside(error)
        streams.settle()  # no uncaught exception of the target's: it was the kit's call that threw
        assert not session.findings.violations


def test_callbacks_are_placed_in_the_call_they_happened_inside():
    with streams_of() as (streams, _):
        caller = streams.make("createStream")
        callbacks = {method: streams.callback() for method in ("now", "onNextTick", "onImmediate")}
        outcomes = {method: streams.call(caller, method, cb) for method, cb in callbacks.items()}
        streams.settle()
        calls = {method: streams.calls_of(cb) for method, cb in callbacks.items()}
        assert {method: [outcomes[method].inside(e) for e in found] for method, found in calls.items()} == {
            "now": [True], "onNextTick": [False], "onImmediate": [False]}
        assert [found[0].args for found in calls.values()] == [("now",), ("tick",), ("immediate",)]


def test_a_burst_fills_a_write_queue_that_separate_calls_would_not():
    with streams_of() as (streams, _):
        written = streams.callback("written")
        writable = streams.make("createWritable", {"highWaterMark": 2, "written": written})
        outcomes = streams.burst([(writable, "write", (f"x{k}",)) for k in range(4)])
        assert [o.ret for o in outcomes] == [True, False, False, False]  # Node: false once 2 wait
        assert not [e for e in streams.calls_of(written) if e.in_op == outcomes[0].op]
        streams.settle()
        assert [e.args for e in streams.calls_of(written)] == [("x0",), ("x1",), ("x2",), ("x3",)]
        assert streams.events(writable, "drain")


def test_a_property_that_throws_when_read_is_charged_to_the_check_rule():
    with streams_of() as (streams, _):
        caller = streams.make("createStream")
        with pytest.raises(RuleViolation) as raised:
            streams.get(caller, "broken")
        assert raised.value.rule == RULE
        assert raised.value.observed.startswith("reading it threw Error('this getter throws')")

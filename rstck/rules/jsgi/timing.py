"""Timing (jsgi.timing.*): no handler runs inside the call that caused its event."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.rules.node_stream import claim
from rstck.rules.jsgi import EVENTS, heard, jsgi_stream, rule

HANDLED = EVENTS  # jsgi.timing.1: the handlers of every event
NOT_IMMEDIATE = ("data", "eof", "drain")  # jsgi.timing.2: the events that must not fire immediately


def _every_call(streams, rule_id):
    """write, pause, write, resume, close, one call at a time; the outcomes, once settled."""
    stream = jsgi_stream(streams)
    outcomes = [streams.call(stream, "write", "a"), streams.call(stream, "pause"), streams.call(stream, "write", "b"),
                streams.call(stream, "resume"), streams.call(stream, "close")]
    streams.settle_or(rule_id, "the stream to settle")
    return stream, outcomes


def _inside(streams, stream, outcomes, names):
    for outcome in outcomes:
        for event in streams.events(stream, kind="heard"):
            if event.name in names and outcome.inside(event):
                return event, outcome
    return None


@rule("jsgi.timing.1")
def handlers_run_after_the_current_context(streams):
    """jsgi.timing.1: write, pause, write, resume, close: no handler of any event runs inside one of these
    calls."""
    stream, outcomes = _every_call(streams, "jsgi.timing.1")
    found = _inside(streams, stream, outcomes, set(HANDLED))
    if found:
        event, outcome = found
        raise RuleViolation("jsgi.timing.1", "every handler deferred until the current context has exited",
                            f"#{event.seq} {event.name} ran inside {outcome.text}",
                            claim=claim("not_inside", of=stream, kind="heard", names=HANDLED, calls=outcomes))


@rule("jsgi.timing.2")
def data_eof_and_drain_are_not_immediate(streams):
    """jsgi.timing.2: write, pause, write, resume, close: no data, eof or drain event fires inside one of these
    calls."""
    stream, outcomes = _every_call(streams, "jsgi.timing.2")
    found = _inside(streams, stream, outcomes, set(NOT_IMMEDIATE))
    if found:
        event, outcome = found
        raise RuleViolation("jsgi.timing.2", f"no {event.name} fired immediately", f"#{event.seq} {event.name} "
                            f"inside {outcome.text}",
                            claim=claim("not_inside", of=stream, kind="heard", names=NOT_IMMEDIATE, calls=outcomes))
    if not heard(streams, stream, "eof"):
        streams.note("no eof was heard (jsgi.events.2 judges that)")

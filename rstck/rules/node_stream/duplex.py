"""Duplex streams (node.duplex.*), checked on createDuplex(): allowHalfOpen against what end() does, and a
destroy() that shuts both sides at once, calls back after nextTick and is idempotent."""

from __future__ import annotations

from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import untested
from rstck.rules.node_stream import (claim, destroyed_twice_at_once_does_nothing, destroyed_twice_does_nothing,
                                     expect_callback_called, expect_callback_not_synchronous, expect_emitted,
                                     expect_no_throw, rule, unless)

untested("node.duplex.2", "addressed to the user of a duplex stream (which method to call), not to the stream")


def _duplex(streams):
    return streams.make("createDuplex")


@rule("node.duplex.1")
def half_open_only_with_allow_half_open(streams):
    """node.duplex.1: end(), settled: a duplex that stays half open (still readable, neither destroy nor close
    emitted) has allowHalfOpen set to true."""
    stream = _duplex(streams)
    expect_no_throw("node.duplex.1", streams.call(stream, "end"))
    streams.settle_or("node.duplex.1", "end() to complete")
    gone = streams.events(stream, "destroy") + streams.events(stream, "close")
    unless(streams, "events", of=stream, kind="emit", names=["destroy", "close"], at_least=1)
    if gone:
        return
    readable = streams.read(stream, "readable")
    unless(streams, "read_is_not", read=readable, value=True)
    if readable.value is not True:
        return
    allowed = streams.read(stream, "allowHalfOpen")
    if allowed.value is not True:
        raise RuleViolation("node.duplex.1", "allowHalfOpen true on a duplex that stays half open",
                            f"still readable after end(), allowHalfOpen is {allowed.value!r}",
                            claim=claim("flag", reads=[allowed], value=True))


@rule("node.duplex.3")
def end_destroys_without_allow_half_open(streams):
    """node.duplex.3: with allowHalfOpen not true, end() leads to destroy once the queue is flushed: destroy is
    emitted and neither side stays readable or writable."""
    stream = _duplex(streams)
    allowed = streams.read(stream, "allowHalfOpen")
    unless(streams, "read_is", read=allowed, value=True)
    if allowed.value is True:
        raise NotApplicable("the duplex has allowHalfOpen true: the item concerns one without it")
    expect_no_throw("node.duplex.3", streams.call(stream, "end"))
    expect_emitted(streams, "node.duplex.3", stream, "destroy", f"after end() (allowHalfOpen is {allowed.value!r})")
    _both_sides_shut(streams, "node.duplex.3", stream, "after end()")


@rule("node.duplex.4")
def destroy_shuts_both_sides_at_once(streams):
    """node.duplex.4: destroy() emits destroy immediately (inside the call, or in the same turn), and leaves
    neither side readable or writable."""
    stream = _duplex(streams)
    outcome = streams.call(stream, "destroy")
    expect_no_throw("node.duplex.4", outcome)
    found = expect_emitted(streams, "node.duplex.4", stream, "destroy", "after destroy()")
    if not (outcome.inside(found[0]) or found[0].turn == outcome.turn):
        raise RuleViolation("node.duplex.4", "destroy emitted immediately", f"#{found[0].seq} in turn "
                            f"{found[0].turn}, destroy() returned in turn {outcome.turn}",
                            claim=claim("at_once", of=stream, name="destroy", call=outcome))
    _both_sides_shut(streams, "node.duplex.4", stream, "after destroy()")


def _both_sides_shut(streams, rule, stream, when):
    reads = {side: streams.read(stream, side) for side in ("readable", "writable")}
    open_sides = [side for side, read in reads.items() if read.value is True]
    if open_sides:
        raise RuleViolation(rule, f"both sides shut {when}", f"still {' and '.join(open_sides)}",
                            claim=claim("not_flag", reads=list(reads.values()), value=True))


@rule("node.duplex.5")
def destroy_callback_is_called(streams):
    """node.duplex.5: destroy(cb): cb is called."""
    expect_callback_called(streams, "node.duplex.5", _duplex(streams), "destroy", (),
                           "once the destruction is complete")


@rule("node.duplex.6")
def destroy_callback_not_before_next_tick(streams):
    """node.duplex.6: destroy(cb): cb is not called inside the destroy() call."""
    expect_callback_not_synchronous(streams, "node.duplex.6", _duplex(streams), "destroy", (),
                                    "destroy() to complete", "the destroy callback")


@rule("node.duplex.7")
def destroy_is_idempotent(streams):
    """node.duplex.7: destroy(), settled, then destroy() again: the second emits nothing."""
    destroyed_twice_does_nothing(streams, "node.duplex.7", _duplex(streams))


@rule("node.duplex.7")
def destroy_twice_at_once_is_idempotent(streams):
    """node.duplex.7: destroy(); destroy(); in one go: the second throws nothing, and no event is emitted twice."""
    destroyed_twice_at_once_does_nothing(streams, "node.duplex.7", _duplex(streams))

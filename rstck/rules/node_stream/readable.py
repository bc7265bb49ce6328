"""Readable streams (node.readable.*), checked on createReadable(['a', 'b', 'c']): the readable flag, data
events with their chunks in order then end, pause() and resume(), pipe(), destroy() and the events.

A readable is made to flow by the kit's explicit 'data' listener (recorded in the trace): observing alone
never changes its mode. Pausing happens inside that listener, at the first chunk, as a consumer would."""

from __future__ import annotations

from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import untested
from rstck.rules.node_stream import (CHUNKS, chunks_of, claim, destroyed_twice_at_once_does_nothing,
                                     destroyed_twice_does_nothing, expect_call_emits, expect_emitted, expect_flag,
                                     expect_flag_false_once_destroyed, expect_members, expect_no_throw,
                                     expect_not_before_last_data, expect_pipe_returns, instance_of_stream, new_readable,
                                     new_writable, rule, unless)

untested("node.readable.7", "a permission about how pipe() is written; whatever a readable does, node.readable.9 "
                            "checks what its pipe() returns")
untested("node.readable.8", "which method an overriding pipe() delegates to is inside the implementation; what "
                            "it does from outside is checked by node.readable.9 and node.base.12")
untested("node.readable.16", "a permission: it makes data after pause() a warning of node.readable.5, never a "
                             "failure")


def _flowing(streams, react=()):
    """A readable made to flow by an explicit 'data' listener, settled."""
    stream = new_readable(streams)
    streams.listen(stream, "data", react=react)
    return stream


def _paused_at_first_chunk(streams, rule):
    """A readable paused by its consumer inside the first data event; its data events after the pause."""
    stream = _flowing(streams, react=(("pause", ()),))
    streams.settle_or(rule, "the readable to settle after pause()")
    paused = streams.events(stream, "pause", kind="reaction")
    unless(streams, "events", of=stream, kind="reaction", names=["pause"], at_most=0)
    if not paused:
        raise NotApplicable("the readable emitted no data event to pause at")
    if paused[0].thrown is not None:
        raise RuleViolation("node.readable.2", "pause() to be callable in a data listener",
                            f"it threw {paused[0].thrown!r}",
                            claim=claim("reaction_returned", of=stream, method="pause"))
    return stream, paused[0]


@rule("node.readable.1")
def is_an_instance_of_the_stream_base_class(streams):
    """node.readable.1 (SHOULD): the readable is an instance of Node's Stream, the module's Stream, or the class
    of createStream()."""
    instance_of_stream(streams, "node.readable.1", new_readable(streams))


@rule("node.readable.2")
def has_the_readable_members(streams):
    """node.readable.2: the readable has the readable flag, pause(), resume(), pipe() and destroy()."""
    expect_members(streams, "node.readable.2", new_readable(streams), ("readable",), ("pause", "resume", "pipe",
                                                                                  "destroy"))


@rule("node.readable.3")
def readable_flag_is_true(streams):
    """node.readable.3: a fresh readable's readable flag is true."""
    expect_flag(streams, "node.readable.3", new_readable(streams), "readable", True, "on a fresh readable")


@rule("node.readable.4")
def readable_flag_is_false_once_ended(streams):
    """node.readable.4: once it has flowed to its end (end emitted; a readable is "ended" by its end event),
    the readable flag is false."""
    stream = _flowing(streams)
    expect_emitted(streams, "node.readable.4", stream, "end", "after its last chunk")
    expect_flag(streams, "node.readable.4", stream, "readable", False, "after end")


@rule("node.readable.4")
def readable_flag_is_false_once_destroyed(streams):
    """node.readable.4: once destroy() has returned, the readable flag is false, and stays so."""
    expect_flag_false_once_destroyed(streams, "node.readable.4", new_readable(streams), "readable")


@rule("node.readable.5")
def pause_stops_data(streams):
    """node.readable.5 (SHOULD): pause() inside the first data event: no data event follows."""
    stream, paused = _paused_at_first_chunk(streams, "node.readable.5")
    later = streams.events(stream, "data", after=paused.seq)
    if later:
        raise RuleViolation("node.readable.5", "no data event after pause()", f"#{later[0].seq} data "
                            f"{chunks_of(later)!r} after pause() (#{paused.seq})",
                            claim=claim("silent_after_reaction", of=stream, reaction="pause", name="data"))
    streams.call(stream, "resume")
    streams.settle()


@rule("node.readable.6")
def resume_restarts_data(streams):
    """node.readable.6: paused inside the first data event, then resume(): the chunks not yet emitted come as
    data events."""
    stream, paused = _paused_at_first_chunk(streams, "node.readable.6")
    emitted = chunks_of(streams.events(stream, "data"))
    mark = streams.mark()
    unless(streams, "events", of=stream, kind="emit", names=["data"], before=mark, at_least=len(CHUNKS))
    if len(emitted) >= len(CHUNKS):
        streams.note("every chunk was emitted already (node.readable.16 allows data while paused)")
        return
    expect_no_throw("node.readable.6", streams.call(stream, "resume"))
    expect_emitted(streams, "node.readable.6", stream, "data", "after resume()", after=mark)


@rule("node.readable.9", needs={"readable", "writable"})
def pipe_returns_its_destination(streams):
    """node.readable.9: readable.pipe(dest) returns dest (a writable of the module)."""
    stream = new_readable(streams)
    expect_pipe_returns(streams, "node.readable.9", stream, new_writable(streams)[0])


@rule("node.readable.9", needs={"readable", "writable"})
def pipe_returns_its_destination_while_flowing(streams):
    """node.readable.9: pipe(dest) on a readable that already flows returns dest."""
    stream = _flowing(streams)
    expect_pipe_returns(streams, "node.readable.9", stream, new_writable(streams)[0])


@rule("node.readable.10")
def destroy_emits_destroy(streams):
    """node.readable.10: destroy() on a fresh readable emits destroy."""
    expect_call_emits(streams, "node.readable.10", new_readable(streams), "destroy", "destroy", "after destroy()")


@rule("node.readable.11")
def destroy_is_idempotent(streams):
    """node.readable.11: destroy(), settled, then destroy() again: the second emits nothing."""
    destroyed_twice_does_nothing(streams, "node.readable.11", new_readable(streams))


@rule("node.readable.11")
def destroy_twice_at_once_is_idempotent(streams):
    """node.readable.11: destroy(); destroy(); in one go: the second throws nothing, and no event is emitted twice."""
    destroyed_twice_at_once_does_nothing(streams, "node.readable.11", new_readable(streams))


@rule("node.readable.12")
def destroy_twice_does_not_throw(streams):
    """node.readable.12: destroy(); destroy(); in one go (nothing of Node's loop between them): neither throws,
    and no error follows."""
    stream = new_readable(streams)
    for outcome in streams.burst([(stream, "destroy", ()), (stream, "destroy", ())]):
        expect_no_throw("node.readable.12", outcome)
    streams.settle_or("node.readable.12", "destroy() to complete")
    errors = streams.events(stream, "error")
    if errors:
        raise RuleViolation("node.readable.12", "no deleterious effect of a second destroy()", f"#{errors[0].seq} "
                            f"error {errors[0].args!r}", claim=claim("silent", of=stream, kind="emit", names=["error"]))


@rule("node.readable.13")
def implements_data_and_end(streams):
    """node.readable.13: the events of the list: a flowing readable emits data, then end."""
    stream = _flowing(streams)
    expect_emitted(streams, "node.readable.13", stream, "data", "while flowing")
    expect_emitted(streams, "node.readable.13", stream, "end", "after its last chunk")


@rule("node.readable.14")
def data_carries_each_chunk(streams):
    """node.readable.14: flowing, the readable emits 'a', 'b', 'c' as data events, in order."""
    stream = _flowing(streams)
    expect_emitted(streams, "node.readable.14", stream, "data", "while flowing")
    emitted = chunks_of(streams.events(stream, "data"))
    if emitted != list(CHUNKS):
        raise RuleViolation("node.readable.14", f"data events {list(CHUNKS)!r}", f"data events {emitted!r}",
                            claim=claim("data", of=stream, kind="emit", chunks=CHUNKS))


@rule("node.readable.15")
def data_always_has_a_chunk(streams):
    """node.readable.15: every data event has a chunk argument (not undefined or null)."""
    stream = _flowing(streams)
    streams.settle_or("node.readable.15", "the readable to flow to its end")
    for event in streams.events(stream, "data"):
        if not event.args or event.args[0] is None:
            raise RuleViolation("node.readable.15", "data events with a chunk", f"#{event.seq} data{event.args!r}",
                                claim=claim("data_has_chunk", of=stream))


@rule("node.readable.17")
def end_after_the_last_chunk(streams):
    """node.readable.17: flowing to its end, the readable emits end, after its last data event."""
    stream = _flowing(streams)
    ends = expect_emitted(streams, "node.readable.17", stream, "end", "once no more data will come")
    expect_not_before_last_data("node.readable.17", ends[0], streams.events(stream, "data"),
                                "end after the last data event", stream=stream)


@rule("node.readable.18")
def end_even_when_destroyed(streams):
    """node.readable.18: destroy() on a fresh readable: end is emitted eventually."""
    expect_call_emits(streams, "node.readable.18", new_readable(streams), "destroy", "end", "after destroy()")


@rule("node.readable.19")
def implements_close(streams):
    """node.readable.19 (SHOULD): the event of the list: close, once a readable that flowed to its end is
    cleaned up, or destroyed."""
    stream = _flowing(streams)
    streams.settle_or("node.readable.19", "the readable to flow to its end")
    if not streams.events(stream, "close"):
        expect_call_emits(streams, "node.readable.19", stream, "destroy", "close", "once cleaned up")


@rule("node.readable.20")
def close_after_destroy(streams):
    """node.readable.20 (SHOULD): after destroy() has cleaned up, the readable emits close."""
    expect_call_emits(streams, "node.readable.20", new_readable(streams), "destroy", "close",
                      "once destroy() has cleaned up")

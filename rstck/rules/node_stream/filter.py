"""Filter streams (node.filter.*), checked on createFilter(): allowHalfOpen, the pause and resume events, and a
destroy() that emits destroy and end and is idempotent."""

from __future__ import annotations

from rstck.rules.node_stream import (destroyed_twice_at_once_does_nothing, destroyed_twice_does_nothing, expect_call_emits,
               expect_emitted, expect_flag, expect_members, expect_no_throw, rule)


def _filter(streams):
    return streams.make("createFilter")


@rule("node.filter.1")
def has_the_filter_additions(streams):
    """node.filter.1 (SHOULD): the filter has the additions of the list: allowHalfOpen, pause(), resume(),
    destroy()."""
    expect_members(streams, "node.filter.1", _filter(streams), ("allowHalfOpen",), ("pause", "resume", "destroy"))


@rule("node.filter.2")
def allow_half_open_is_true(streams):
    """node.filter.2: a filter's allowHalfOpen flag is true."""
    expect_flag(streams, "node.filter.2", _filter(streams), "allowHalfOpen", True, "on a filter")


@rule("node.filter.3")
def pause_emits_pause(streams):
    """node.filter.3 (SHOULD): pause() emits pause."""
    expect_call_emits(streams, "node.filter.3", _filter(streams), "pause", "pause", "after pause()")


@rule("node.filter.4")
def resume_emits_resume(streams):
    """node.filter.4 (SHOULD): pause(), then resume(): resume is emitted."""
    stream = _filter(streams)
    expect_no_throw("node.filter.4", streams.call(stream, "pause"))
    streams.settle()
    mark = streams.mark()
    expect_no_throw("node.filter.4", streams.call(stream, "resume"))
    expect_emitted(streams, "node.filter.4", stream, "resume", "after resume()", after=mark)


@rule("node.filter.5")
def destroy_emits_destroy_and_end(streams):
    """node.filter.5: destroy() on a fresh filter emits destroy and end."""
    stream = _filter(streams)
    expect_call_emits(streams, "node.filter.5", stream, "destroy", "destroy", "after destroy()")
    expect_emitted(streams, "node.filter.5", stream, "end", "after destroy()")


@rule("node.filter.6")
def destroy_is_idempotent(streams):
    """node.filter.6: destroy(), settled, then destroy() again: the second emits nothing."""
    destroyed_twice_does_nothing(streams, "node.filter.6", _filter(streams))


@rule("node.filter.6")
def destroy_twice_at_once_is_idempotent(streams):
    """node.filter.6: destroy(); destroy(); in one go: the second throws nothing, and no event is emitted twice."""
    destroyed_twice_at_once_does_nothing(streams, "node.filter.6", _filter(streams))

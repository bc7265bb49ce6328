"""The Stream base class (node.base.*), checked on what createStream() returns: write, end and flush throw
exactly when they are called after end(), their callbacks come after nextTick, destroy() is idempotent and
pipe() returns its destination."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.core.checks import untested
from rstck.rules.node_stream import (claim, destroyed_twice_at_once_does_nothing, destroyed_twice_does_nothing,
                                     expect_called, expect_no_throw, expect_not_synchronous, expect_pipe_returns,
                                     expect_throw, pipe_destination, require_method, rule)

untested("node.base.1", "guidance to the authors of subclasses about how they write their code; what a subclass "
                        "does is checked by the items of its kind")


def _base(streams):
    return streams.make("createStream")


@rule("node.base.2")
def write_after_end_throws(streams):
    """node.base.2: end(), then write('x'): the write throws."""
    stream = _base(streams)
    expect_no_throw("node.base.6", streams.call(stream, "end"))
    expect_throw("node.base.2", streams.call(stream, "write", "x"), "after end()")


@rule("node.base.3")
def write_before_end_does_not_throw(streams):
    """node.base.3: write('a') and write('b', cb) on a fresh stream return without throwing."""
    stream = _base(streams)
    expect_no_throw("node.base.3", streams.call(stream, "write", "a"))
    expect_no_throw("node.base.3", streams.call(stream, "write", "b", streams.callback()))
    streams.settle()


@rule("node.base.4")
def write_callback_is_asynchronous(streams):
    """node.base.4: write('a', cb): cb is called, and not inside the write() call."""
    stream = _base(streams)
    cb = streams.callback()
    outcome = streams.call(stream, "write", "a", cb)
    expect_no_throw("node.base.3", outcome)
    calls = expect_called(streams, "node.base.4", cb, "after write('a', cb)")
    expect_not_synchronous("node.base.4", calls, outcome, "the write callback", callback=cb)


@rule("node.base.5")
def end_twice_throws(streams):
    """node.base.5: end() twice: the second call throws."""
    stream = _base(streams)
    expect_no_throw("node.base.6", streams.call(stream, "end"))
    expect_throw("node.base.5", streams.call(stream, "end"), "the second time")


@rule("node.base.6")
def first_end_does_not_throw(streams):
    """node.base.6: end('z') on a fresh stream returns without throwing."""
    stream = _base(streams)
    expect_no_throw("node.base.6", streams.call(stream, "end", "z"))
    streams.settle()


@rule("node.base.7")
def end_callback_is_asynchronous(streams):
    """node.base.7: end(null, cb): cb is called, and not inside the end() call."""
    stream = _base(streams)
    cb = streams.callback()
    outcome = streams.call(stream, "end", None, cb)
    expect_no_throw("node.base.6", outcome)
    calls = expect_called(streams, "node.base.7", cb, "after end(null, cb)")
    expect_not_synchronous("node.base.7", calls, outcome, "the end callback", callback=cb)


@rule("node.base.8")
def flush_after_end_throws(streams):
    """node.base.8: end(), then flush(): flush throws (a stream without flush() breaks the item: the base class
    has one)."""
    stream = _base(streams)
    expect_no_throw("node.base.6", streams.call(stream, "end"))
    inspection = streams.inspect(stream, members=("flush",))
    if inspection.members.get("flush") != "function":
        raise RuleViolation("node.base.8", f"{stream}.flush() to throw after end()", f"{stream} has no flush()",
                            claim=claim("members", inspection=inspection, flags=(), methods=("flush",)))
    expect_throw("node.base.8", streams.call(stream, "flush"), "after end()")


@rule("node.base.9")
def flush_before_end_does_not_throw(streams):
    """node.base.9: flush() and flush(cb) on a fresh stream return without throwing."""
    stream = _base(streams)
    expect_no_throw("node.base.9", streams.call(stream, "flush"))
    expect_no_throw("node.base.9", streams.call(stream, "flush", streams.callback()))
    streams.settle()


@rule("node.base.10")
def flush_callback_is_asynchronous(streams):
    """node.base.10: flush(cb): cb is called, and not inside the flush() call."""
    stream = _base(streams)
    require_method(streams, stream, "flush", "node.base.9 judges that")
    cb = streams.callback()
    outcome = streams.call(stream, "flush", cb)
    expect_no_throw("node.base.9", outcome)
    calls = expect_called(streams, "node.base.10", cb, "after flush(cb)")
    expect_not_synchronous("node.base.10", calls, outcome, "the flush callback", callback=cb)


@rule("node.base.11")
def destroy_is_idempotent(streams):
    """node.base.11: destroy(), then destroy() again once the first has settled: the second throws nothing and
    emits nothing."""
    destroyed_twice_does_nothing(streams, "node.base.11", _base(streams))


@rule("node.base.11")
def destroy_twice_at_once_is_idempotent(streams):
    """node.base.11: destroy(); destroy(); in one go: the second throws nothing, and no event is emitted twice."""
    destroyed_twice_at_once_does_nothing(streams, "node.base.11", _base(streams))


@rule("node.base.12")
def pipe_returns_its_destination(streams):
    """node.base.12: stream.pipe(dest) returns dest (the module's writable, else another base stream)."""
    stream = _base(streams)
    expect_pipe_returns(streams, "node.base.12", stream, pipe_destination(streams))


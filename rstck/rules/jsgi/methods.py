"""Methods (jsgi.methods.*): write() after close() throws and delivers nothing, a write happens after the current
scope and in order, pause() holds data back, resume() lets it through, addListener() attaches handlers."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.rules.node_stream import claim, expect_no_throw, expect_throw_after
from rstck.rules.jsgi import data_heard, expect_heard, heard, jsgi_stream, rule


def _paused_after_a_write(streams, rule):
    """A JSGI stream paused, then written 'a', settled."""
    stream = jsgi_stream(streams)
    expect_no_throw(rule, streams.call(stream, "pause"))
    expect_no_throw(rule, streams.call(stream, "write", "a"))
    streams.settle_or(rule, "the stream to settle while paused")
    return stream


@rule("jsgi.methods.1")
def write_after_close_throws(streams):
    """jsgi.methods.1: close(), then write('x'): the write throws."""
    expect_throw_after(streams, "jsgi.methods.1", jsgi_stream(streams), "close", "an Error after close()")


@rule("jsgi.methods.2")
def write_happens_after_the_current_scope(streams):
    """jsgi.methods.2: write('a'): its data event does not reach a handler inside the write() call."""
    stream = jsgi_stream(streams)
    outcome = streams.call(stream, "write", "a")
    expect_no_throw("jsgi.methods.2", outcome)
    expect_heard(streams, "jsgi.methods.2", stream, "data", "for the write")
    early = [e for e in heard(streams, stream, "data") if outcome.inside(e)]
    if early:
        raise RuleViolation("jsgi.methods.2", "the write performed after the current scope",
                            f"#{early[0].seq} data inside {outcome.text}",
                            claim=claim("not_inside", of=stream, kind="heard", names=["data"], calls=[outcome]))


@rule("jsgi.methods.3")
def writes_arrive_in_order(streams):
    """jsgi.methods.3: write('a'), write('b'), write('c') in one burst: data 'a', 'b', 'c', in that order."""
    stream = jsgi_stream(streams)
    for outcome in streams.burst([(stream, "write", (c,)) for c in "abc"]):
        expect_no_throw("jsgi.methods.3", outcome)
    expect_heard(streams, "jsgi.methods.3", stream, "data", "for the writes")
    if data_heard(streams, stream) != ["a", "b", "c"]:
        raise RuleViolation("jsgi.methods.3", "data 'a', 'b', 'c' in the order written",
                            f"data {data_heard(streams, stream)!r}",
                            claim=claim("data", of=stream, kind="heard", chunks=["a", "b", "c"]))


@rule("jsgi.methods.4")
def nothing_is_written_after_close(streams):
    """jsgi.methods.4: close(), then write('x'): no data event carries 'x'."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.methods.4", streams.call(stream, "close"))
    streams.call(stream, "write", "x")
    streams.settle_or("jsgi.methods.4", "the stream to settle")
    if "x" in data_heard(streams, stream):
        raise RuleViolation("jsgi.methods.4", "no data written after close()", "data 'x' was delivered",
                            claim=claim("data_without", of=stream, kind="heard", chunk="x"))


@rule("jsgi.methods.5")
def pause_holds_data_back(streams):
    """jsgi.methods.5: pause(), then write('a'): no data event until resume()."""
    stream = _paused_after_a_write(streams, "jsgi.methods.5")
    if heard(streams, stream, "data"):
        raise RuleViolation("jsgi.methods.5", "no data event while paused", f"data {data_heard(streams, stream)!r}",
                            claim=claim("silent", of=stream, kind="heard", names=["data"]))
    streams.call(stream, "resume")
    streams.settle()


@rule("jsgi.methods.6")
def resume_lets_data_through(streams):
    """jsgi.methods.6: pause(), write('a'), settled, then resume(): data 'a' is delivered."""
    stream = _paused_after_a_write(streams, "jsgi.methods.6")
    mark = streams.mark()
    expect_no_throw("jsgi.methods.6", streams.call(stream, "resume"))
    expect_heard(streams, "jsgi.methods.6", stream, "data", "after resume()", after=mark)


@rule("jsgi.methods.7")
def add_listener_attaches_a_handler(streams):
    """jsgi.methods.7: a handler attached with addListener('data', handler) receives the data written."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.methods.7", streams.call(stream, "write", "a"))
    expect_heard(streams, "jsgi.methods.7", stream, "data", "at the handler attached with addListener")

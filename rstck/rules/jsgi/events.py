"""Events (jsgi.events.*): data for every write with what was written, eof once closed after the last data,
drain once the buffer empties, pause and resume for pause() and resume()."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.rules.node_stream import claim, expect_no_throw, expect_not_before_last_data
from rstck.rules.jsgi import data_heard, expect_heard, heard, jsgi_stream, rule


@rule("jsgi.events.1")
def every_write_becomes_data(streams):
    """jsgi.events.1: write('a'), write('b'): data events 'a' and 'b', each with the data written."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.events.1", streams.call(stream, "write", "a"))
    expect_no_throw("jsgi.events.1", streams.call(stream, "write", "b"))
    expect_heard(streams, "jsgi.events.1", stream, "data", "for the writes")
    if sorted(map(str, data_heard(streams, stream))) != ["a", "b"]:
        raise RuleViolation("jsgi.events.1", "data 'a' and 'b'", f"data {data_heard(streams, stream)!r}",
                            claim=claim("data", of=stream, kind="heard", chunks=["a", "b"], sorted=True))


@rule("jsgi.events.2")
def eof_once_closed(streams):
    """jsgi.events.2: write('a'), close(): one eof, after the data event."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.events.2", streams.call(stream, "write", "a"))
    expect_no_throw("jsgi.events.2", streams.call(stream, "close"))
    eofs = expect_heard(streams, "jsgi.events.2", stream, "eof", "after close()")
    if len(eofs) > 1:
        raise RuleViolation("jsgi.events.2", "one eof", f"{len(eofs)} eof events",
                            claim=claim("at_most", of=stream, name="eof", kind="heard", count=1))
    expect_not_before_last_data("jsgi.events.2", eofs[0], heard(streams, stream, "data"),
                                "eof once all data has been written", stream=stream)


@rule("jsgi.events.3")
def drain_once_the_buffer_empties(streams):
    """jsgi.events.3: write('a'): once its data is delivered, drain follows."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.events.3", streams.call(stream, "write", "a"))
    drains = expect_heard(streams, "jsgi.events.3", stream, "drain", "once the buffer empties")
    data = heard(streams, stream, "data")
    if data and drains[-1].seq < data[-1].seq:
        raise RuleViolation("jsgi.events.3", "drain when the buffer empties", f"the last drain #{drains[-1].seq} "
                            f"came before data #{data[-1].seq}",
                            claim=claim("after_last_data", of=stream, name="drain", kind="heard", which="last"))


@rule("jsgi.events.4")
def pause_emits_pause(streams):
    """jsgi.events.4: pause(): a pause event."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.events.4", streams.call(stream, "pause"))
    expect_heard(streams, "jsgi.events.4", stream, "pause", "after pause()")


@rule("jsgi.events.5")
def resume_emits_resume(streams):
    """jsgi.events.5: pause(), then resume(): a resume event."""
    stream = jsgi_stream(streams)
    expect_no_throw("jsgi.events.5", streams.call(stream, "pause"))
    expect_no_throw("jsgi.events.5", streams.call(stream, "resume"))
    expect_heard(streams, "jsgi.events.5", stream, "resume", "after resume()")

"""Read/Write (jsgi.readwrite.*): every stream is both readable and writable."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.rules.node_stream import claim
from rstck.rules.jsgi import METHODS, expect_heard, jsgi_stream, rule


@rule("jsgi.readwrite.1")
def readable_and_writable(streams):
    """jsgi.readwrite.1 (SHOULD): the stream has write(), close(), pause(), resume() and addListener(), and what is
    written comes out as data."""
    stream = jsgi_stream(streams)
    inspection = streams.inspect(stream, members=METHODS)
    missing = [m for m in METHODS if inspection.members.get(m) != "function"]
    if missing:
        raise RuleViolation("jsgi.readwrite.1", "a readable and writable stream", f"no {', '.join(missing)}",
                            claim=claim("members", inspection=inspection, flags=(), methods=METHODS))
    outcome = streams.call(stream, "write", "a")
    if outcome.raised:
        raise RuleViolation("jsgi.readwrite.1", "a writable stream", f"{outcome.text} {outcome.shown()}",
                            claim=claim("no_throw", call=outcome))
    expect_heard(streams, "jsgi.readwrite.1", stream, "data", "for what was written")

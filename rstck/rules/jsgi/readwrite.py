"""Read/Write (jsgi.readwrite.*): every stream is both readable and writable."""

from __future__ import annotations

from rstck.core.verdict import RuleViolation
from rstck.rules.jsgi import METHODS, expect_heard, jsgi_stream, rule


@rule("jsgi.readwrite.1")
def readable_and_writable(streams):
    """jsgi.readwrite.1 (SHOULD): the stream has write(), close(), pause(), resume() and addListener(), and what is
    written comes out as data."""
    stream = jsgi_stream(streams)
    kinds = streams.members(stream, METHODS)
    missing = [m for m in METHODS if kinds.get(m) != "function"]
    if missing:
        raise RuleViolation("jsgi.readwrite.1", "a readable and writable stream", f"no {', '.join(missing)}")
    outcome = streams.call(stream, "write", "a")
    if outcome.raised:
        raise RuleViolation("jsgi.readwrite.1", "a writable stream", f"{outcome.text} {outcome.shown()}")
    expect_heard(streams, "jsgi.readwrite.1", stream, "data", "for what was written")

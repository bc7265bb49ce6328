"""Checks of the JSGI evented-stream extension (its items: catalogue.toml), one module per section, on
the object createJsgiStream() returns.

Its events are heard as the extension says: through handlers attached with its addListener() (recorded in
the trace as the kit's listeners); a JSGI stream has no mode a listener could change."""

from __future__ import annotations

from typing import Any

from rstck.core.plugins import Profile
from rstck.core.verdict import RuleViolation
from rstck.rules.node_stream import chunks_of, claim, since, rule as stream_rule

EVENTS = ("data", "eof", "drain", "pause", "resume")
METHODS = ("write", "close", "pause", "resume", "addListener")


PROFILE = Profile(
    name="jsgi-stream",
    title="JSGI evented stream extension",
    package=__name__,
    checks=("spec", "methods", "events", "timing", "readwrite"),
    subjects=("jsgi",),
    marker="jsgi",
    markers={"jsgi": "checks of the JSGI stream extension's items (jsgi.*), on createJsgiStream()"},
    context="streams",  # the check's access to its Node process (rstck/adapters/node/streams.py)
    reproduced_in=("node-stream",),
)


def rule(rule_id: str):
    return stream_rule(rule_id, needs={"jsgi"}, role="jsgi")


def jsgi_stream(streams: Any) -> Any:
    """A JSGI stream with the kit's handler on each of its events (addListener must exist: jsgi.methods.7)."""
    stream = streams.make("createJsgiStream", watch=False)
    inspection = streams.inspect(stream, members=("addListener",))
    if inspection.members.get("addListener") != "function":
        raise RuleViolation("jsgi.methods.7", f"{stream}.addListener(name, handler)", f"addListener is "
                            f"{inspection.members.get('addListener')}",
                            claim=claim("members", inspection=inspection, flags=(), methods=("addListener",)))
    for event in EVENTS:
        streams.listen(stream, event, record=True, method="addListener")
    return stream


def heard(streams: Any, stream: Any, name: str, after: int = 0) -> list[Any]:
    return streams.events(stream, name, kind="heard", after=after)


def data_heard(streams: Any, stream: Any) -> list[Any]:
    return chunks_of(heard(streams, stream, "data"))


def expect_heard(streams: Any, rule: str, stream: Any, name: str, what: str, *, after: int = 0) -> list[Any]:
    streams.settle_or(rule, f"{name} {what}")
    found = heard(streams, stream, name, after)
    if not found:
        raise RuleViolation(rule, f"{name} {what}", f"no {name} event reached the handler (settled: the driver was "
                            "idle)", claim=claim("emitted", of=stream, name=name, kind="heard", after=since(after)))
    return found

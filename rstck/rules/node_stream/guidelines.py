"""The guidelines (node.guidelines.*): end is emitted at some point, even by a readable destroyed while it
flows."""

from __future__ import annotations

from rstck.rules.node_stream import expect_emitted, new_readable, rule


@rule("node.guidelines.1")
def end_even_when_destroyed_while_flowing(streams):
    """node.guidelines.1: a flowing readable destroyed by its consumer at the first data event still emits end."""
    stream = new_readable(streams)
    streams.listen(stream, "data", react=(("destroy", ()),))
    expect_emitted(streams, "node.guidelines.1", stream, "end", "after being destroyed while flowing")

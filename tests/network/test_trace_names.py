"""What the names of a `tcp://` trace stand for: the `where` block under a failure names the server's publisher and
the stream the kit's client got for a probe as the implementation's (the objects the kit holds only stand in for
them), as an in-process run names a publisher's own objects; the kit's probe as the kit's."""

from __future__ import annotations

import pytest

from ..trace_names import where_block
from .mutant_servers import DoubleDemand, RunningServer

pytestmark = pytest.mark.network


def test_a_servers_publisher_and_stream_are_named_as_the_implementations(capsys):
    """The server's stream was called "a subscription of the kit's, which a source handed the implementation", and
    the publisher had no line."""
    server = RunningServer(DoubleDemand)
    try:
        where = where_block(capsys, server.url)
    finally:
        server.stop()
    assert set(where) == {"publisher", "probe#1", "sub#1"}, where
    assert where["publisher"].startswith("the publisher under test") and "the server's publisher 'rstck/range/" in \
        where["publisher"], where
    assert where["sub#1"].startswith("the implementation's subscription") and "the server's stream" in \
        where["sub#1"], where
    assert "of the kit's" in where["probe#1"] and "of the kit's" not in where["sub#1"]

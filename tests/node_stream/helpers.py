"""Running node-stream targets the way tests/node/helpers.py runs Reactive Streams ones."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

from rstck.core.target import load_target

from ..node.helpers import run  # noqa: F401  (one way to run a target, for both; the tests import it from here)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(ROOT, "rstck", "reference", "js", "streams.js")


def here(*parts: str) -> str:
    return os.path.join(HERE, *parts)


@contextlib.contextmanager
def node_stream_target(module: str, **options: Any) -> Iterator[Any]:
    """The node-stream target of `module` (a path), closed afterwards (its spare processes stopped)."""
    if options:
        from rstck.adapters.node.streams import NodeStreamTarget

        target = NodeStreamTarget(module, **options)
    else:
        target = load_target(f"node-stream:{module}")
    try:
        yield target
    finally:
        target.close()


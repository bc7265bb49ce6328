"""The node-stream tests: skipped, with the reason, where there is no `node`; each test must leave no driver
process of its own running (the fixture of tests/node/conftest.py)."""

from __future__ import annotations

from tests.node.conftest import _node_and_no_leftover_process  # noqa: F401 - an autouse fixture, here too

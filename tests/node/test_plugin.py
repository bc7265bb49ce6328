"""`pytest --rstck-target node:PATH`: the plugin loads the Node target like any other; the JavaScript reference
passes, a JavaScript mutant fails its item."""

from __future__ import annotations

import pytest

from rstck.adapters.node import driver

from .helpers import REFERENCE, here

pytestmark = pytest.mark.node


@pytest.fixture(autouse=True)
def _close_the_inner_sessions_pools():
    """pytest keeps the inner session's targets alive; their processes started ahead would stop only when this
    process ends."""
    before = set(map(id, driver.pools()))
    yield
    for pool in driver.pools():
        if id(pool) not in before:
            pool.close()


def test_the_reference_passes_under_pytest(pytester):
    result = pytester.runpytest("--rstck-target", f"node:{REFERENCE}", "--rstck-rules", "1.9,3.9,3.17",
                                "-m", "not fuzz")
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()
    assert outcomes["passed"] >= 10 and not outcomes.get("failed")


def test_a_mutant_fails_its_item_under_pytest(pytester):
    result = pytester.runpytest("--rstck-target", f"node:{here('mutants', 'request_zero_accepted.js')}",
                                "--rstck-rules", "3.9", "-m", "not fuzz")
    result.stdout.fnmatch_lines(["*3.9 MUST: While the Subscription is not cancelled*"])
    assert result.parseoutcomes()["failed"] == 2

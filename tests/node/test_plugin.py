"""`pytest --rstck-target node:PATH`: the plugin loads the Node target like any other; the JavaScript reference
passes, a JavaScript mutant fails its item."""

from __future__ import annotations

import pytest

from rstck.protocols.node.pool import pools

from .helpers import REFERENCE, assert_pytest_passes, here

pytestmark = pytest.mark.node


@pytest.fixture(autouse=True)
def _the_inner_session_closes_its_targets():
    """The plugin closes the targets it loaded when its session ends: no pool keeps processes started ahead."""
    before = set(map(id, pools()))
    yield
    assert [pool.closed for pool in pools() if id(pool) not in before] in ([], [True])


def test_the_reference_passes_under_pytest(pytester):
    assert_pytest_passes(pytester, "--rstck-target", f"node:{REFERENCE}", "--rstck-rules", "1.9,3.9,3.17",
                         "-m", "not fuzz", at_least=10)


def test_a_mutant_fails_its_item_under_pytest(pytester):
    result = pytester.runpytest("--rstck-target", f"node:{here('mutants', 'request_zero_accepted.js')}",
                                "--rstck-rules", "3.9", "-m", "not fuzz", "--rstck-strict")  # every item a finding touched
    result.stdout.fnmatch_lines(["*3.9 MUST: While the Subscription is not cancelled*"])
    # request(0), request(-1), and request(0) once the demand is unbounded: each is accepted in silence
    result.stdout.fnmatch_lines(["FAILED*3.9-request_zero_signals_on_error*"])
    assert result.parseoutcomes()["failed"] == 3

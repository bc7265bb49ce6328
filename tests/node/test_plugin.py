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
    reprec = pytester.inline_run("--rstck-target", f"node:{here('mutants', 'request_zero_accepted.js')}",
                                 "--rstck-rules", "3.9", "-m", "not fuzz", "-p", "no:randomly", "--rstck-strict")
    reports = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
    failed = [r for r in reports if r.failed]
    assert [r.nodeid.rpartition("::")[2] for r in failed] == ["3.9-request_zero_signals_on_error"]
    assert "3.9 MUST: While the Subscription is not cancelled" in failed[0].longreprtext
    # request(0), request(-1), and request(0) once the demand is unbounded: each is accepted in silence; the item
    # fails once, strict or not, and the other two checks are skipped as the same finding
    same = [r for r in reports if r.skipped and "the same finding: 3.9 failed already in " in r.longrepr[2]]
    assert len(same) == 2, [(r.nodeid, r.outcome) for r in reports]

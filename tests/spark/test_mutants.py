"""The conformant implementations the Spark mutants (mutants.py) were made from pass every check: what their
mutants fail (tests/repro/test_spark.py) is the one defect each adds."""

from __future__ import annotations

import pytest

from rstck.core.target import load_target
from rstck.execution.plan import plan
from rstck.execution.runner import run_check

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.mark.parametrize("fixed", ["rows_publisher", "table_sink"])
def test_the_fixed_version_passes_every_check(spark, fixed):
    target = load_target(f"tests.spark.mutant_targets:{fixed}")
    results = [run_check(p.check, p.target) for p in plan(target)]
    assert results
    charged = [(r.verdict.value, r.rule, r.check, r.reason) for r in results
               if r.verdict.value in ("fail", "warn", "error")]
    assert not charged, charged

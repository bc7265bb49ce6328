"""The fuzzer reports nothing against any shipped reference implementation.

The suite runs EXAMPLES examples per reference and role; set $RSTCK_FUZZ_REFERENCE_EXAMPLES
for a long run (the release check is `rstck fuzz <reference> --examples 10000` per reference).
"""

from __future__ import annotations

import math
import os

import pytest

import rstck.reference.targets
from rstck.fuzz.budgets import ROLES
from rstck.fuzz.campaign import Shard, run_shard_on
from rstck.core.target import Target

EXAMPLES = int(os.environ.get("RSTCK_FUZZ_REFERENCE_EXAMPLES", "150"))
PER_RUN = 75

CASES = [(name, role) for name, target in sorted(vars(rstck.reference.targets).items()) if isinstance(target, Target)
         for role in ROLES if role in target.capabilities]


@pytest.mark.parametrize("name,role", CASES, ids=[f"{name}-{role}" for name, role in CASES])
def test_a_reference_has_no_finding(name, role):
    target = getattr(rstck.reference.targets, name)
    shard = Shard(target=f"rstck.reference.targets:{name}", role=role, first_seed=0,
                  runs=math.ceil(EXAMPLES / PER_RUN), examples_per_run=PER_RUN, steps=30)
    outcome = run_shard_on(target, shard)
    assert outcome.examples >= EXAMPLES
    assert not outcome.findings, "\n\n".join(f"{f.rule or f.kind}: {f.observed}\n{f.trace}" for f in outcome.findings)

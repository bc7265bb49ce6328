"""Every failing finding of the JavaScript Reactive Streams mutants (tests/node/mutants) gets a standalone reproducer,
a JavaScript file run with `node`, that exits 1 against the mutant and 0 against a fixed version (the shipped
reference, rstck/reference/js/reactive_streams.js, which exports every factory)."""

from __future__ import annotations

import pathlib

import pytest

from ..node.conftest import NODE_MISSING, node_available
from ..node.helpers import here, node_target
from .helpers import assert_every_finding_reproduces, rows_of

pytestmark = [pytest.mark.node, pytest.mark.skipif(not node_available(), reason=NODE_MISSING)]

MUTANTS = sorted(path.stem for path in pathlib.Path(here("mutants")).glob("*.js"))
FIXED = "rstck/reference/js/reactive_streams.js"
TIMEOUT_S = 2.0  # as tests/node's: the references never come near it


@pytest.mark.parametrize("module", MUTANTS)
def test_every_finding_has_a_reproducer_that_fails_the_mutant_and_passes_the_reference(module, tmp_path):
    with node_target(f"tests/node/mutants/{module}.js", isolation="reuse") as target:
        rows = rows_of(target, TIMEOUT_S)
    assert_every_finding_reproduces(rows, tmp_path, FIXED)

"""Every failing finding of the Node stream mutants (tests/node_stream/mutants, node-stream and jsgi items) gets a
standalone reproducer, a JavaScript file run with `node`, that exits 1 against the mutant and 0 against a fixed
version (the shipped reference, rstck/reference/js/streams.js, which exports every factory). So does every finding of
the module whose streams report trouble by an 'error' event nobody listens to (tests/node_stream/findings)."""

from __future__ import annotations

import pathlib
import re

import pytest

from rstck.reports.repro import write_reproducers

from ..node.conftest import NODE_MISSING, node_available
from ..node_stream.helpers import here, node_stream_target
from .helpers import assert_every_finding_reproduces, rows_of, run_script

pytestmark = [pytest.mark.node, pytest.mark.skipif(not node_available(), reason=NODE_MISSING)]

MODULES = [*sorted(f"mutants/{path.stem}" for path in pathlib.Path(here("mutants")).glob("*.js")),
           "findings/error_event_from_calls"]


def _first_of_each_kind(modules: list[str]) -> set[str]:
    """The first mutant of each kind of stream (the name's first word: base, duplex, readable, writable, jsgi...):
    each kind's scenarios go through the writer's own paths. The rest, a sweep of every mutant, is the soak's."""
    kinds: dict[str, str] = {}
    for module in modules:
        kinds.setdefault(module.split("/")[-1].split("_")[0], module)
    return set(kinds.values())


REPRESENTATIVE = _first_of_each_kind(MODULES)
FIXED = "rstck/reference/js/streams.js"
NODE_MODULES = {f"'{name}'" for name in ("child_process", "events", "fs", "path", "stream", "url")}
TIMEOUT_S = 2.0  # as tests/node_stream's: the reference never comes near it


@pytest.mark.parametrize("module", [module if module in REPRESENTATIVE else pytest.param(module, marks=pytest.mark.soak)
                                    for module in MODULES])
def test_every_finding_has_a_reproducer_that_fails_the_mutant_and_passes_the_reference(module, tmp_path):
    with node_stream_target(here(f"{module}.js"), isolation="reuse", spares=0) as target:
        rows = rows_of(target, TIMEOUT_S)
    assert_every_finding_reproduces(rows, tmp_path, FIXED)


@pytest.mark.parametrize("module, item, observed", [
    # write() loops for ever: the script's watching process names the call that had not returned by the deadline.
    ("loop_in_write", "node.writable.5", "had not returned after 0.5 s"),
    # A timer that never stops: the streams never settle, judged at the check's deadline.
    ("busy_forever", "node.readable.13", "they were still busy at the deadline"),
])
def test_what_the_deadline_decides_is_reproduced_at_the_deadline(module, item, observed, tmp_path):
    with node_stream_target(here("bad", f"{module}.js"), isolation="reuse", spares=0) as target:
        rows = rows_of(target, 0.5, rules=item)
    # Unconfirmed: the run below is the one the kit's confirmation would make, and it is read for what it observed.
    (found,) = write_reproducers(rows, tmp_path, confirm=False)
    assert found.path is not None, found.reason
    broken = run_script(found)
    assert broken.returncode == 1 and f"BROKEN {item}:" in broken.stdout and observed in broken.stdout, broken.stdout
    assert run_script(found, FIXED).returncode == 0


def test_a_script_needs_only_node_and_the_module_it_requires_by_its_path(tmp_path):
    with node_stream_target(here("mutants", "writable_write_never_false.js"), isolation="reuse", spares=0) as target:
        rows = rows_of(target, TIMEOUT_S, rules="node.writable.6")
    (found,) = write_reproducers(rows, tmp_path)
    text = found.path.read_text()
    assert found.command == f"node {found.path}"
    assert f"Run from the project's root:  node {found.path.name} [PATH]" in text
    assert set(re.findall(r"require\(([^)]*)\)", text)) <= {*NODE_MODULES, "file"}  # file: the target's module
    assert "await burst(" in text and 'judge("node.writable.6", "false_once_full"' in text
    assert run_script(found, FIXED).returncode == 0

"""Conformant streams written independently of the kit's references, in styles users have (tests/node_stream/
conformant/): each gets no fail, warn or error from `rstck check node-stream:...`, and the same verdicts run after
run. `emitter_classes.js`: classes on EventEmitter, private Symbol events, 'drain' only to listeners, a sink that
completes on a later turn. `prototype_streams.js`: constructor functions, queueMicrotask, a sink that completes
synchronously, a second end(cb) answered as Node answers it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..stability import stability_runs
from .helpers import ROOT, here, node_stream_target, run

pytestmark = pytest.mark.node

ZOO = ["emitter_classes", "prototype_streams"]


def _verdicts(module: str) -> dict[str, str]:
    """check id -> verdict, one fresh run of every check."""
    with node_stream_target(here("conformant", f"{module}.js")) as target:
        return {f"{r.rule} {r.check}": r.verdict.value for r in run(target)}


def _bad(verdicts: dict[str, str]) -> dict[str, str]:
    return {check: verdict for check, verdict in verdicts.items() if verdict in ("fail", "warn", "error")}


@pytest.mark.parametrize("module", ZOO)
def test_no_fail_warn_or_error(module):
    with node_stream_target(here("conformant", f"{module}.js")) as target:
        results = run(target)
    bad = [r.message for r in results if r.verdict.value in ("fail", "warn", "error")]
    assert not bad, "\n\n".join(bad)
    assert sum(r.verdict.value == "pass" for r in results) >= 60


@pytest.mark.parametrize("module", ZOO)
def test_rstck_check_passes(module):
    """The command a user runs: exit status 0, nothing failed or warned."""
    done = subprocess.run([sys.executable, "-m", "rstck", "check", f"node-stream:{here('conformant', module)}.js"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("module", ZOO)
def test_the_verdicts_are_the_same_in_every_run(module):
    runs = [_verdicts(module) for _ in range(stability_runs())]
    for number, verdicts in enumerate(runs, start=1):
        assert _bad(verdicts) == {}, f"run {number}"
        assert verdicts == runs[0], f"run {number} differs from run 1"

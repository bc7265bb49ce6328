"""The JavaScript references pass every check: `rstck check node:...` says conformant; an asynchronous
publisher on timers and a subscriber that calls on turns of its own pass too, whichever way processes are
used and demand is passed."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from rstck.protocols.node.driver import DRIVER

from .conftest import still_found
from .helpers import REFERENCE, ROOT, here, node_target, run

pytestmark = pytest.mark.node


def _drivers_started_by(run_mark: str) -> set[int]:
    """Driver processes whose environment carries `run_mark`: those one run started, whatever other tests, in other
    workers, run at the same time (the drivers inherit the kit's environment); a pid the system has given to
    another process since does not carry it."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline, open(f"/proc/{entry}/environ", "rb") as environ:
                    argv, env = cmdline.read().split(b"\0"), environ.read().split(b"\0")
            except OSError:
                continue
            if DRIVER.encode() in argv and run_mark.encode() in env:
                found.add(int(entry))
    return found


def test_rstck_check_says_the_reference_is_conformant():
    run_mark = f"RSTCK_TEST_RUN={uuid.uuid4().hex}"
    name, value = run_mark.split("=")
    completed = subprocess.run([sys.executable, "-m", "rstck", "check", f"node:{REFERENCE}", "--no-fuzz"],
                               capture_output=True, text=True, cwd=ROOT, timeout=120, env={**os.environ, name: value})
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.rstrip().endswith("conformant"), completed.stdout
    assert "fail" not in completed.stdout.split("rstck:")[-1]
    assert not still_found(lambda: _drivers_started_by(run_mark)), "rstck check left driver processes behind"


@pytest.mark.parametrize("module, options", [
    (here("guards", "timer_publisher.js"), {"isolation": "reuse"}),
    (here("guards", "async_subscriber.js"), {}),  # its calls come on turns of its own, while the kit waits
    (here("guards", "requests_after_error.js"), {"isolation": "reuse"}),
    (REFERENCE, {"demand": "bigint", "isolation": "reuse"}),
], ids=["timer-publisher-reused-processes", "async-subscriber", "subscriber-requesting-after-error",
        "reference-bigint-demand-reused-processes"])
def test_guards_pass_every_check(module, options):
    with node_target(module, **options) as target:
        results = run(target)
    errors = [r.message for r in results if r.verdict.value in ("fail", "warn", "error")]
    assert not errors, "\n\n".join(errors)
    reasons = {r.reason for r in results if r.verdict.value == "n/a"}
    assert all(_explained(reason) for reason in reasons), reasons


def _explained(reason: str) -> bool:
    """An n/a the reference may get: a factory the module does not export, the single thread, or a
    subscriber that never cancels of its own accord (2.8)."""
    return reason.startswith(("the target offers no", "not observable through this target: a Node process runs")) or (
        "did not cancel" in reason)


def test_single_thread_rules_are_not_observable_with_the_specs_reason():
    with node_target(REFERENCE, isolation="reuse") as target:
        results = run(target, rules="1.3,2.7")
    assert {(r.rule, r.verdict.value) for r in results} == {("1.3", "n/a"), ("2.7", "n/a")}
    assert all("one thread" in r.reason for r in results)

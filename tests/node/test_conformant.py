"""The conformant JavaScript zoo (tests/node/conformant/): Reactive Streams implementations written from the
JavaScript spec the way JavaScript libraries are written, none of them taking anything from the kit or its
reference: closures delivering on microtasks, classes delivering on setImmediate, a publisher on timers with
a white-box subscriber, and a processor that hands itself to its subscriber as the subscription. `rstck check`
and `rstck fuzz` find nothing wrong with any of them, and the verdicts are the same in every run, with the
cores idle or both kept busy."""

from __future__ import annotations

import contextlib
import json
import pathlib
import subprocess
import sys
from typing import Iterator

import pytest

from ..stability import stability_runs
from .helpers import ROOT, here, node_target, run

pytestmark = pytest.mark.node

ZOO = ["closure_microtask", "class_immediate", "timer_publisher", "self_subscribed_processor"]
# A per-check deadline as generous as a user's default: a loaded machine must not change a verdict.
TIMEOUT_S = 5.0
BAD = ("fail", "warn", "error")
FUZZ_SEED = ("--seed", "20261129")


def module(name: str) -> str:
    return here("conformant", f"{name}.js")


@pytest.mark.parametrize("name", ZOO)
def test_rstck_check_finds_nothing_in_the_checks_or_its_fuzz_phase(name, tmp_path):
    done = subprocess.run([sys.executable, "-m", "rstck", "check", f"node:{module(name)}", "--fuzz-examples", "10",
                           "--results", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    rows = [json.loads(line) for path in pathlib.Path(tmp_path).glob("*.jsonl") for line in path.read_text().splitlines()]
    bad = [f"{row['rule']} {row['check']}: {row['verdict']}: {row['reason']}" for row in rows if row["verdict"] in BAD]
    assert bad == [], "\n".join(bad)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith("conformant"), done.stdout[-2000:]


@pytest.mark.parametrize("name", ZOO)
def test_rstck_fuzz_finds_nothing(name):
    """Seeded: the suite's verdict must not depend on the seed a run draws (soak draws its own)."""
    done = subprocess.run([sys.executable, "-m", "rstck", "fuzz", f"node:{module(name)}", "--examples", "20",
                           *FUZZ_SEED], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "no violation" in done.stdout + done.stderr, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.soak
@pytest.mark.parametrize("name", ZOO)
def test_rstck_fuzz_finds_nothing_from_a_seed_of_its_own(name):
    done = subprocess.run([sys.executable, "-m", "rstck", "fuzz", f"node:{module(name)}", "--examples", "50"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


# A run that drew this seed found a false 3.9 in class_immediate.js: the kit's request(-2**63), made right after
# subscribe, reached JavaScript after the publisher had delivered its 16 elements (its on_next reactions asking for
# more) and on_complete, all on its own schedule; a NOP on a stream already over. It replays so.
FALSE_3_9 = ("628054232:AXicTZAxDsIwDEXtpiUVoogBJAYkJlZG9p+dndtwCSTEBbgFd+N/JxVIURvb79vOt2IPdAbjcSwcI39XnMEbkinDbyckilb"
             "shRMTLglTC5WIZMcgMM2NGC0V8bgYanHHAb3EwYd6cDdzja/ivq5wwx6ZQrcId5gIDG0NaoklKU11XMh2LKegi32wZmsTzjU2bSkPZdI4tSX3J"
             "JXrXI99elHsmRCW5F9yznqg7LoKY6zZwMSo2t9ri73ljlShqaxWaW5HX93D3jorzG6PPmI7j1Q40QWv3cI5CoxraYJ/AbedMKg=")


def test_a_non_positive_request_that_meets_a_stream_already_over_is_no_3_9_violation():
    done = subprocess.run([sys.executable, "-m", "rstck", "fuzz", f"node:{module('class_immediate')}", "--role",
                           "publisher", "--steps", "30", "--replay", FALSE_3_9],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "did not fail this time" in done.stdout + done.stderr, done.stdout[-2000:]


def verdicts_of(name: str) -> tuple[list[tuple[str, str, str, str]], list[str]]:
    """Every check against the module: (target, rule, check, verdict) per check, and what was wrong."""
    with node_target(module(name)) as target:
        results = run(target, timeout_s=TIMEOUT_S)
    bad = [f"{r.rule} {r.check}: {r.verdict.value}: {r.reason}" for r in results if r.verdict.value in BAD]
    return [(r.target, r.rule, r.check, r.verdict.value) for r in results], bad


@contextlib.contextmanager
def both_cores_busy() -> Iterator[None]:
    """Two processes that spin for as long as the block runs (each stopped by its own pid afterwards)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait(10)


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("name", ZOO)
def test_the_verdicts_are_the_same_in_every_run(name):
    first, bad = verdicts_of(name)
    assert bad == [], "\n".join(bad)
    for number in range(2, stability_runs() + 1):
        again, bad = verdicts_of(name)
        assert bad == [], f"run {number}:\n" + "\n".join(bad)
        assert again == first, f"run {number} differs from run 1"


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("name", ZOO)
def test_the_verdicts_are_the_same_while_both_cores_are_busy(name):
    quiet, _ = verdicts_of(name)
    with both_cores_busy():
        loaded, bad = verdicts_of(name)
    assert bad == [], "\n".join(bad)
    assert loaded == quiet

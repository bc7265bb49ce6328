"""Every server of the zoo is conformant: `rstck check tcp://...`, run as a user runs it, finds no fail, warn or
error, and the verdicts are the same from run to run and while both cores are busy. (How fast a server with
Nagle's algorithm on is checked, against the same server with it off, is benchmarks/network_nagle.py's figure.)"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest

from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.core.target import load_target

from ...stability import stability_runs
from . import ZOO

pytestmark = pytest.mark.network

NOT_CONFORMANT = ("fail", "warn", "error")


@contextlib.contextmanager
def running(name: str):
    server = ZOO[name]()
    try:
        yield server.url
    finally:
        server.stop()


def check(url: str, rules: str | None = None) -> list[dict]:
    """The rows of every check, as the Verification API's runs make them."""
    target = load_target(url)
    return [run_check(p.check, p.target, timeout_s=5.0).row() for p in plan(target, rules=rules)]


def offending(rows: list[dict]) -> list[str]:
    return [f"{r['rule']} {r['check']}: {r['verdict']} {r['message'][:3000]}" for r in rows
            if r["verdict"] in NOT_CONFORMANT]


@pytest.mark.parametrize("name", ZOO)
def test_rstck_check_finds_the_server_conformant(name, tmp_path):
    with running(name) as url:
        done = subprocess.run([sys.executable, "-m", "rstck.cli", "check", url, "--results", str(tmp_path)],
                              capture_output=True, text=True, timeout=600)
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert rows and offending(rows) == [], done.stdout[-3000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.parametrize("name", ["threaded, slow backend", "asyncio, slow batches, Nagle on"])
def test_rstck_fuzz_finds_nothing(name):
    with running(name) as url:
        done = subprocess.run([sys.executable, "-m", "rstck.cli", "fuzz", url, "--examples", "20", "--seed", "0"],
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("name", ZOO)
def test_the_verdicts_are_the_same_in_every_run(name):
    runs = []
    with running(name) as url:
        for _ in range(stability_runs()):
            rows = check(url)
            assert offending(rows) == []
            runs.append([(r["rule"], r["check"], r["verdict"]) for r in rows])
    assert all(run == runs[0] for run in runs)


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("name", ["threaded, slow, Nagle on, a byte at a time", "asyncio, slow batches, Nagle on"])
def test_the_verdicts_hold_while_both_cores_are_busy(name):
    with running(name) as url:
        calm = [(r["rule"], r["check"], r["verdict"]) for r in check(url)]
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            rows = check(url)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
    assert offending(rows) == []
    assert [(r["rule"], r["check"], r["verdict"]) for r in rows] == calm

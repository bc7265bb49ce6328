"""One standalone reproducer per finding, whichever way a user runs the checks: `rstck check --repro`, `pytest
--rstck-target … --rstck-repro`, or a test class that subclasses rstck.PublisherVerification.

A user's project of its own in a temporary folder: an implementation that imports nothing of rstck (a range publisher
whose first request gets one element more than it asks for: 1.1), a module that builds its target with a lambda, as
the README does, and a test module with a factory method. Everything runs as the user runs it, in fresh processes
from the project's root; a script runs once more where rstck cannot be imported at all."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from rstck.core.target import load_target
from rstck.reports.repro import write_reproducers

from .helpers import ROOT, RUN_TIMEOUT_S, rows_of, run_script

STREAMS = '''
"""A range publisher whose first request gets one element more than it asks for (1.1)."""


class _Subscription:
    def __init__(self, subscriber, n, extra):
        self.subscriber, self.next, self.n, self.extra, self.demand, self.draining = subscriber, 0, n, extra, 0, False

    def request(self, k):
        if self.subscriber is None:
            return
        if k <= 0:
            subscriber, self.subscriber = self.subscriber, None
            subscriber.on_error(ValueError(f"request({k}): the demand must be positive"))
            return
        self.demand, self.extra = min(self.demand + k + self.extra, 2**63 - 1), 0
        self.drain()

    def drain(self):
        if self.draining:
            return
        self.draining = True
        try:
            while self.subscriber is not None and self.demand > 0 and self.next < self.n:
                self.demand, self.next = self.demand - 1, self.next + 1
                try:
                    self.subscriber.on_next(self.next - 1)
                except Exception:
                    self.subscriber = None
                    return
            if self.subscriber is not None and self.next == self.n:
                subscriber, self.subscriber = self.subscriber, None
                subscriber.on_complete()
        finally:
            self.draining = False

    def cancel(self):
        self.subscriber = None


class GreedyPublisher:
    def __init__(self, n, extra=1):
        self.n, self.extra = n, extra

    def subscribe(self, subscriber):
        if subscriber is None:
            raise TypeError("subscribe(None)")
        subscription = _Subscription(subscriber, self.n, self.extra)
        subscriber.on_subscribe(subscription)
        subscription.drain()
'''

TCK = '''
import rstck

from mypkg.streams import GreedyPublisher

target = rstck.InProcessTarget(create_publisher=lambda n: GreedyPublisher(n))
fixed = rstck.InProcessTarget(create_publisher=lambda n: GreedyPublisher(n, extra=0))


def _closing_over(extra):
    return lambda n: GreedyPublisher(n, extra)


closure = rstck.InProcessTarget(create_publisher=_closing_over(1))
'''

TEST_MODULE = '''
import rstck

from mypkg.streams import GreedyPublisher


class TestGreedy(rstck.PublisherVerification):
    @staticmethod
    def create_publisher(n):
        return GreedyPublisher(n)

    target = rstck.InProcessTarget(create_publisher=create_publisher)
'''


@pytest.fixture
def project(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "project"
    for name, text in {"mypkg/__init__.py": "", "mypkg/streams.py": STREAMS, "mypkg/tck.py": TCK,
                       "tests/test_conformance.py": TEST_MODULE,
                       "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n'}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def run(project: pathlib.Path, *command: str) -> subprocess.CompletedProcess:
    """A command of the user's, from the project's root, with rstck installed (as it is in this environment)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), ROOT])}
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, cwd=project,
                          timeout=RUN_TIMEOUT_S, env=environment)


def run_without_rstck(project: pathlib.Path, script: pathlib.Path) -> subprocess.CompletedProcess:
    """A script run where only the user's project is importable: no site-packages (-S -s), the project alone on the
    path."""
    environment = {**{name: value for name, value in os.environ.items() if name != "PYTHONPATH"},
                   "PYTHONPATH": str(project)}
    return subprocess.run([sys.executable, "-S", "-s", str(script)], capture_output=True, text=True, cwd=project,
                          timeout=RUN_TIMEOUT_S, env=environment)


def test_pytest_with_a_target_writes_one_script_per_finding_as_rstck_check_does(project, tmp_path):
    """Observed: pytest wrote a script for each check that saw the one 1.1 finding (21 in a whole run), rstck check
    one. Two checks see it under --rstck-rules 1.1."""
    checked = run(project, "-m", "rstck", "check", "mypkg.tck:target", "--rules", "1.1", "--repro",
                  str(tmp_path / "cli"))
    assert checked.returncode == 1 and "reproducers: 1 of 1 finding written" in checked.stdout, checked.stdout
    tested = run(project, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-m", "not fuzz",
                 "--rstck-target", "mypkg.tck:target", "--rstck-rules", "1.1", "--rstck-repro", str(tmp_path / "pt"),
                 "-o", "testpaths=mypkg")  # the target's items alone, not the test module's
    assert tested.returncode == 1, tested.stdout[-3000:]
    assert len(list((tmp_path / "cli").glob("*.py"))) == 1
    (script,) = (tmp_path / "pt").glob("*.py")
    failures = tested.stdout.split("short test summary info")[0]  # the summary repeats the message under CI=true
    assert failures.count(f"reproducer: python {script}") == 1, tested.stdout[-3000:]
    assert "skipped" in tested.stdout  # the other check of the finding, skipped as the same finding


def test_the_subclass_style_gets_a_script_that_makes_the_factory_methods_product_without_rstck(project, tmp_path):
    """Observed: a Verification subclass's findings got no script ("the target was not loaded by a name a script can
    load again"). Its factory method, one expression over the implementation's class, is written out in the script."""
    tested = run(project, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-m", "not fuzz",
                 "tests/test_conformance.py", "--rstck-rules", "1.1", "--rstck-repro", str(tmp_path))
    assert tested.returncode == 1, tested.stdout[-3000:]
    (script,) = tmp_path.glob("*.py")
    assert f"reproducer: python {script}" in tested.stdout and "not standalone" not in tested.stdout
    broken = run_without_rstck(project, script)
    assert broken.returncode == 1 and "BROKEN 1.1:" in broken.stdout, broken.stdout[-3000:] + broken.stderr[-2000:]
    assert "reproducing 1.1 against lambda n: GreedyPublisher(n)" in broken.stdout
    assert run(project, str(script), "mypkg.tck:fixed").returncode == 0


def test_a_lambda_targets_script_runs_where_rstck_cannot_be_imported(project, tmp_path):
    """Observed: with the README's lambda factory the script imported the target's module, which imports rstck."""
    checked = run(project, "-m", "rstck", "check", "mypkg.tck:target", "--rules", "1.1", "--repro", str(tmp_path))
    (script,) = tmp_path.glob("*.py")
    assert f"1.1 (on_next_within_demand_signalled_from_on_next): python {script}" in checked.stdout, checked.stdout
    assert "not standalone" not in checked.stdout
    nothing = subprocess.run([sys.executable, "-S", "-s", "-c", "import rstck"], capture_output=True, text=True,
                             cwd=project, env={"PYTHONPATH": str(project), "PATH": os.environ.get("PATH", "")})
    assert "No module named 'rstck'" in nothing.stderr, "the clean environment must not reach rstck"
    broken = run_without_rstck(project, script)
    assert broken.returncode == 1 and broken.stdout.count("BROKEN") == 1, broken.stdout[-3000:] + broken.stderr[-2000:]
    assert "BROKEN 1.1: expected at most" in broken.stdout


def test_a_factory_no_script_can_write_out_says_why_the_script_is_not_standalone(project, tmp_path):
    """A closure cannot be written out: the script imports the target's module, and the kit says so where it names
    the script, with how to make it standalone."""
    checked = run(project, "-m", "rstck", "check", "mypkg.tck:closure", "--rules", "1.1", "--repro", str(tmp_path))
    (script,) = tmp_path.glob("*.py")
    assert f"python {script}\n    not standalone: loading mypkg.tck:closure imported rstck; keep the implementation" \
        in checked.stdout, checked.stdout
    assert "factories={" not in script.read_text()


def test_a_script_says_broken_once_and_the_other_violations_after_it(tmp_path):
    """Observed: a publisher that goes on after an on_error gave a script that printed BROKEN ten times (1.7, one per
    signal after the terminal one)."""
    rows = rows_of(load_target("tests.repro.zoo_targets:delivery_ignores_cancel"), 2.0, rules="3.9")
    made = [found for found in write_reproducers(rows, tmp_path, confirm=False) if found.row["violated"] == "1.7"]
    assert made and made[0].path is not None, [found.reason for found in made]
    broken = run_script(made[0])
    assert broken.returncode == 1, broken.stdout[-3000:]
    assert [line for line in broken.stdout.splitlines() if "BROKEN" in line] == [
        line for line in broken.stdout.splitlines() if line.startswith("BROKEN 1.7: expected no signal after")]
    assert broken.stdout.count("BROKEN") == 1 and "more violations in this run:" in broken.stdout, broken.stdout

"""A user's project in a folder of its own, as a new user has one: a package `mypkg` whose range publisher has one
planted bug (each request delivers one element more than asked for: 1.1), the target module `mypkg.tck`, and a test
module in the subclass style (`class TestTicks(rstck.PublisherVerification)`), run as the user runs them: real
commands in that folder, found on PATH."""

from __future__ import annotations

import os
import pathlib
import shlex
import subprocess
import sys
import textwrap

BIN = pathlib.Path(sys.executable).parent  # where `rstck`, `pytest` and `python` of this environment are
COMMAND_TIMEOUT_S = 120.0

PUBLISHER = '''
"""A range publisher with one planted bug: each request delivers one element more than requested (1.1)."""
import logging


class TickSubscription:
    def __init__(self, subscriber, n):
        self.subscriber, self.n, self.sent, self.demand, self.busy = subscriber, n, 0, 0, False

    def request(self, k):
        if self.subscriber is None:
            return
        if k <= 0:
            self._end(lambda s: s.on_error(ValueError(f"request({k}): must be positive")))
            return
        self.demand += k + 1  # the bug: one more than asked for
        if self.busy:
            return
        self.busy = True
        try:
            while self.demand > 0 and self.subscriber is not None and self.sent < self.n:
                self.demand -= 1
                self.sent += 1
                try:
                    self.subscriber.on_next(self.sent)
                except Exception:
                    logging.getLogger(__name__).exception("on_next raised")
                    self.cancel()
            if self.sent == self.n:
                self._end(lambda s: s.on_complete())
        finally:
            self.busy = False

    def cancel(self):
        self.subscriber = None

    def _end(self, signal):
        subscriber, self.subscriber = self.subscriber, None
        if subscriber is not None:
            signal(subscriber)


class Ticks:
    def __init__(self, n):
        self.n = n

    def subscribe(self, subscriber):
        if subscriber is None:
            raise TypeError("subscribe(None)")
        subscription = TickSubscription(subscriber, self.n)
        subscriber.on_subscribe(subscription)
        if self.n == 0:
            subscription._end(lambda s: s.on_complete())
'''

FILES = {
    "mypkg/__init__.py": "",
    "mypkg/pubs.py": PUBLISHER,
    "mypkg/tck.py": "import rstck\nfrom mypkg.pubs import Ticks\n\n"
                    "target = rstck.InProcessTarget(create_publisher=Ticks)\n",
    "tests/test_ticks.py": textwrap.dedent("""\
        import rstck
        from mypkg.tck import target


        class TestTicks(rstck.PublisherVerification):
            target = target
        """),
}


def make_project(root: pathlib.Path, files: dict[str, str] = FILES) -> pathlib.Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def run(command: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    """`command` as a user's shell runs it in `cwd`, with this environment's commands first on PATH; nothing of
    the kit's own checkout on sys.path but what is installed."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S)


def printed_commands(output: str) -> dict[str, str]:
    """The commands printed under the first failed item: {"re-run": ..., "write reproducer": ...}."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        label, sep, command = line.strip().partition(": ")
        if sep and label in ("re-run", "write reproducer") and label not in found:
            found[label] = command.strip()
    return found


def words(command: str) -> list[str]:
    return shlex.split(command)

"""The user's side of the packaging tests: venvs that hold only what a user installs, commands run as a user runs
them (nothing of the clone on the path, the working directory outside the repository), and what the sample user
project (sample_project/) holds."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SAMPLE_PROJECT = REPOSITORY / "tests/packaging/sample_project"
CONFORMANT, PLANTED_BUG = "mypkg.tck:target", "mypkg.planted_bug:target"
PLANTED_ITEM = "3.9"  # the item the planted bug breaks (sample_project/mypkg/planted_bug.py)


@dataclass
class Venv:
    path: Path
    wheelhouse: Path  # where its pip installs from, instead of a package index

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    def environment(self, **extra: str) -> dict[str, str]:
        """A user's shell with this venv activated: nothing of the kit's own test run (its PYTHONPATH, pytest's or
        xdist's variables, the kit's settings) leaks in."""
        inherited = {name: value for name, value in os.environ.items()
                     if not name.startswith(("PYTHON", "PYTEST_", "RSTCK_", "VIRTUAL_ENV"))}
        path = [self.bin, *(entry for entry in os.environ["PATH"].split(os.pathsep)
                            if not entry.startswith(sys.prefix))]  # the kit's venv, if the run put it on PATH
        return {**inherited, "PATH": os.pathsep.join(map(str, path)), "VIRTUAL_ENV": str(self.path),
                "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(self.wheelhouse), **extra}

    def run(self, *command: str | Path, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(part) for part in command], cwd=cwd, env=self.environment(**extra),
                              capture_output=True, text=True, timeout=300)


def new_venv(path: Path, wheelhouse: Path) -> Venv:
    """A venv as `python -m venv` makes it: pip and what the interpreter bundles, nothing of the kit's venv."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=120)
    return Venv(path, wheelhouse)


def completed(done: subprocess.CompletedProcess) -> str:
    """A finished command's output, for an assertion's message."""
    return f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


def failed_items(junit_xml: Path) -> set[str]:
    """The catalogue items a JUnit XML file of `rstck check` fails (its `rule` property)."""
    cases = list(ElementTree.parse(junit_xml).iter("testcase"))
    assert cases, f"{junit_xml} holds no test case"
    failed = set()
    for case in cases:
        if case.find("failure") is not None:
            failed |= {prop.get("value") for prop in case.iter("property") if prop.get("name") == "rule"}
    return failed

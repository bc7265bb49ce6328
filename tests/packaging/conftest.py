"""The packaging tests' fixtures: the kit built as a user gets it (`make dist` in a copy of this tree), a venv with
the wheel installed and nothing else of the kit, and a copy of the sample user project (sample_project/, which is
never collected as the kit's own tests)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.packaging.user_side import REPOSITORY, SAMPLE_PROJECT, Venv, completed, new_venv

collect_ignore = ["sample_project"]  # a user's tests, run by the packaging tests against the installed wheel

# What a user's project builds with, besides the kit's own requirements: the sample project's [build-system].
BUILD_REQUIREMENTS = ["setuptools>=64"]


@dataclass
class Distribution:
    wheel: Path
    sdist: Path
    build_output: str  # what `make dist` printed


def copy_of_the_tree(destination: Path) -> Path:
    """The files a clone of this tree has (the work in progress included), without anything built or installed."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPOSITORY,
                            check=True, capture_output=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPOSITORY / name
        if source.is_file():  # a tracked file deleted in the work tree is listed too
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.fixture(scope="session")
def distribution(tmp_path_factory) -> Distribution:
    """The wheel and sdist `make dist` builds, in a copy of the tree (builds leave files beside the sources, and other
    runs may build at the same time), with the tools of the venv running these tests."""
    source = copy_of_the_tree(tmp_path_factory.mktemp("source"))
    done = subprocess.run(["make", "--no-print-directory", "dist", f"VENV={sys.prefix}"], cwd=source,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, completed(done)
    [wheel], [sdist] = sorted((source / "dist").glob("*.whl")), sorted((source / "dist").glob("*.tar.gz"))
    return Distribution(wheel, sdist, done.stdout + done.stderr)


@pytest.fixture(scope="session")
def wheelhouse(distribution, tmp_path_factory) -> Path:
    """The folder of wheels every venv of these tests installs from, filled once per session (from pip's cache where
    it can) with the kit's wheel, what it requires and what the sample project builds with: the several fresh venvs
    then install without asking a package index again, as a CI runner with a package mirror would."""
    wheels = tmp_path_factory.mktemp("wheelhouse")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(wheels),
                           str(distribution.wheel), *BUILD_REQUIREMENTS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, completed(done)
    return wheels


@pytest.fixture(scope="session")
def installed_kit(distribution, wheelhouse, tmp_path_factory) -> Venv:
    """A fresh venv with the wheel installed as a user installs it: `pip install rstck-….whl`, no extras."""
    venv = new_venv(tmp_path_factory.mktemp("user") / "venv", wheelhouse)
    done = venv.run("python", "-m", "pip", "install", "--quiet", distribution.wheel, cwd=venv.path)
    assert done.returncode == 0, completed(done)
    return venv


@pytest.fixture
def user_project(tmp_path) -> Path:
    """A copy of the sample user project, outside the repository."""
    return Path(shutil.copytree(SAMPLE_PROJECT, tmp_path / "mypkg-project"))

"""What to do when the user's package cannot be imported under pytest.

Plain `pytest` puts on sys.path the directory of each test file's package root (its "prepend" import mode), not
the current directory; `python -m pytest` puts the current directory there too. So in a project whose tests import
its package (`from mypkg.tck import target`), `python -m pytest tests` finds the package from the project's root
and `pytest tests` does not. A test module that fails to import for that reason, and a `--rstck-target` module the
kit cannot import, get a note saying where the package is and how to make it importable (docs/pytest.md).
"""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

_MISSING = re.compile(r"No module named '([\w.]+)'")


class ImportHint:
    """A collection error of a test module that could not import a package lying in or above the current
    directory ends with what to do about it."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        report = yield
        if report.failed and isinstance(collector, pytest.Module):
            missing = _MISSING.search(str(report.longrepr))
            hint = import_hint(self.config, missing.group(1)) if missing else ""
            if hint:
                report.longrepr = f"{report.longrepr}\n{hint}"
        return report


def import_hint(config: pytest.Config, module: str, *, from_test_module: bool = True) -> str:
    """How to make `module` importable under pytest, if its top-level package lies in the current directory, an
    ancestor of it, or a `src` directory of either, which is not on sys.path ("" otherwise). A test module imports
    it through sys.path alone; a --rstck-target (`from_test_module=False`) with the current directory first on it,
    as `rstck check` does (rstck/core/target.py import_named)."""
    top = module.partition(".")[0]
    here = pathlib.Path(config.invocation_params.dir)
    found = _directory_holding(top, here)
    if found is None:
        return ""
    if not from_test_module:
        run = f"run pytest from {found}"
    elif found == here:
        run = "run `python -m pytest` instead of `pytest` (it puts the current directory on sys.path)"
    else:
        run = f"run `python -m pytest` from {found}"
    rootdir = config.rootpath
    relative = _relative(found, rootdir)
    inipath = config.inipath
    if relative is None:
        where = f"install the package (pip install -e {found})"
    elif inipath is None:
        where = (f"write a pytest.ini in {rootdir} with a [pytest] section holding `pythonpath = {relative}`, or "
                 "install the package (pip install -e .)")
    else:
        section = {"pyproject.toml": "[tool.pytest.ini_options]", "setup.cfg": "[tool:pytest]"}.get(
            inipath.name, "[pytest]")
        where = (f"add `pythonpath = {relative}` to the {section} section of {inipath}, or install the package "
                 "(pip install -e .)")
    why = "plain `pytest` does not put the current directory there" if from_test_module else "pytest ran elsewhere"
    return f"rstck: {top} is in {found}, which is not on sys.path: {why}. {run[0].upper()}{run[1:]}; or {where}."


def _directory_holding(top: str, start: pathlib.Path) -> pathlib.Path | None:
    on_path = {pathlib.Path(entry or ".").resolve() for entry in sys.path}
    for directory in (start, *start.parents):
        for candidate in (directory, directory / "src"):
            if ((candidate / top).is_dir() or (candidate / f"{top}.py").is_file()) and \
                    candidate.resolve() not in on_path:
                return candidate
    return None


def _relative(directory: pathlib.Path, rootdir: pathlib.Path) -> str | None:
    """`directory` as pytest's `pythonpath` ini option takes it (relative to the rootdir), or None if outside."""
    try:
        return directory.resolve().relative_to(rootdir.resolve()).as_posix() or "."
    except ValueError:
        return None

"""The layers of docs/architecture.md hold: the import-linter contracts of pyproject.toml are kept (every layer
imports only from the layers below it, nothing in the kit names a profile or an adapter, the references use the
public API only, no import cycle between siblings, even behind imports inside functions)."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def test_the_import_contracts_are_kept():
    lint_imports = shutil.which("lint-imports", path=str(pathlib.Path(sys.executable).parent)) or "lint-imports"
    done = subprocess.run([lint_imports, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout

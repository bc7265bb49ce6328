"""Why a test that needs Debian packages the project's `.ci/install-*` scripts install must skip, if it must."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable


def why_missing(files: list[str], *, needs: str, what: str, installer: str, note: pathlib.Path,
                present: Callable[[str], bool] = os.path.isfile) -> str | None:
    """None when every one of `files` is `present`; else the reason to skip: which are missing, and what the
    installer said when it could not install them (its note), or that `make test` runs it."""
    missing = [name for name in files if not present(name)]
    if not missing:
        return None
    try:
        said = note.read_text(encoding="utf-8").strip()
    except OSError:
        said = ""
    how = f"{installer} could not install them: {said}" if said else f"`make test` installs them with {installer}"
    return f"{needs} needs {what} (missing: {', '.join(missing)}); {how}"

"""Paths as the project names them: a report shows `.venv/bin/python`, never the machine's `/home/ci/src/.venv/...`.

Rows keep what the run saw (an absolute client command, a traceback's files); a page written from them is read on
other machines and kept as a CI artifact, where the directory of one checkout means nothing and tells more than it
should. The project is the current working directory of the process writing the page (`make check` and CI run from
the project's root), under the name the operating system gives it and the one the shell gave it ($PWD), which differ
when the path goes through a symbolic link.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

_NAME_CHAR = r"[\w.~-]"  # what may continue a path's name: the project's directory must end where its name does
_PATH_CHAR = r"[\w.~/-]"


def project_relative(text: str, project: str | None = None) -> str:
    """`text` with every path under `project` (default: the current working directory) made relative to it, and the
    directory itself shown as `.`; paths elsewhere are left as they are."""
    return relative_to_project(project)(text)


def relative_to_project(project: str | None = None) -> Callable[[str], str]:
    """project_relative for many texts: the project's names are looked up once."""
    pattern = _pattern(project)
    if pattern is None:
        return lambda text: text
    return lambda text: pattern.sub(_shown, text)


def _shown(found: re.Match[str]) -> str:
    return "" if found.group("under") else "."


def _pattern(project: str | None) -> re.Pattern[str] | None:
    names = {project} if project else _project_names()
    names = {name.rstrip("/") for name in names if name and name.rstrip("/")}  # "/" is no project
    if not names:
        return None
    either = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    # The directory where a path starts: then a slash that starts a name under it (dropped with the directory), or
    # the end of the directory's own name (shown as `.`).
    return re.compile(rf"(?<!{_PATH_CHAR})(?:{either})(?:(?P<under>/)(?={_NAME_CHAR})|(?!{_NAME_CHAR}))")


def _project_names() -> set[str]:
    names = {os.getcwd()}
    shell = os.environ.get("PWD", "")
    if shell and os.path.isabs(shell):
        try:
            if os.path.samefile(shell, names.copy().pop()):
                names.add(shell)
        except OSError:
            pass
    return names

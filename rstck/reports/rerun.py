"""How a failed item is run again: the words that name a target to `rstck check` as the user named it, quoted for a
POSIX shell, and the command that started this process (`rstck` or `python -m rstck`; `pytest` or `python -m
pytest`), so that the commands each face prints under a failed item run as printed, from the directory the user
ran it in."""

from __future__ import annotations

import pathlib
import shlex
import sys

from rstck.core.plugins import adapter_for

REPRO_DIRECTORY = "rstck-repro"  # where a printed reproducer command writes, unless the run named a directory


def target_arguments(loaded_as: str) -> list[str]:
    """The `rstck check` arguments that name the target `loaded_as` again (MODULE:ATTR, tcp://HOST:PORT,
    node:PATH, --client CMD, ...), as its adapter says (rstck/core/plugins.py Adapter.rerun)."""
    adapter = adapter_for(loaded_as)
    return adapter.command_arguments(loaded_as) if adapter is not None else [loaded_as]


def shell_words(words: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def launcher(program: str, argv0: str | None = None) -> str:
    """How the user started `program` (rstck, pytest), from the process's sys.argv[0] (`argv0`): `python -m
    PROGRAM` when it ran as a module (its package's __main__.py), which also decides what is importable (the
    current directory is on sys.path only then), else the plain command."""
    path = pathlib.PurePath(sys.argv[0] if argv0 is None else argv0)
    if path.name == "__main__.py" and program in path.parts[-3:-1]:  # rstck/__main__.py, rstck/cli/__main__.py
        return f"python -m {path.parts[-2] if path.parts[-2] == program else program + '.' + path.parts[-2]}"
    return program

"""What the kit reads of its installation, kept between runs: the plug-ins' entry points and the parsed
catalogues. Reading them afresh costs a run more than its checks do (importlib.metadata reads every installed
distribution; tomllib parses some 1,800 lines), and a one-check `rstck check` should cost little more than the
interpreter's start (benchmarks/startup.py).

An entry is keyed by what it was read from: the entry points by the directories on sys.path, with their
modification times (pip adds, replaces or removes a distribution's metadata directory there), a catalogue by its file's path, size and
modification time; an install, an upgrade or an edit changes the key, and the entry is read afresh and
replaces the old one (one file per interpreter and import path, and per catalogue). The cache
lives in $RSTCK_CACHE_DIR, else $XDG_CACHE_HOME/rstck, else ~/.cache/rstck; where it cannot be read or written,
every run reads afresh.
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from collections.abc import Callable
from typing import Any

_FORMAT = 2  # bumped when what is kept changes shape


def cache_directory() -> str:
    """The kit's cache directory: $RSTCK_CACHE_DIR, else rstck under $XDG_CACHE_HOME or ~/.cache."""
    explicit = os.environ.get("RSTCK_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rstck")


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns


def installed_distributions_stamp() -> list[tuple]:
    """What changes when a distribution on sys.path is installed, upgraded or removed: each directory's
    modification time (an install or removal adds or removes its metadata directory there)."""
    return [(entry, _stamp(entry or ".")) for entry in sys.path]


def cached(kind: str, slot: Any, key: Any, compute: Callable[[], Any]) -> Any:
    """`compute()`, kept under `kind` for what `slot` names (plain data: a file's path, the interpreter's path)
    for as long as `key` (plain data) stays the same; a new key replaces the slot's entry."""
    # The file is named by a checksum of the slot and holds the key itself: another key, or another slot of the
    # same checksum, is a miss, never another's value (a cryptographic digest would cost a run more than the
    # lookup saves). One file per slot: the cache does not grow with every install or edit.
    full_key = repr((_FORMAT, sys.version, slot, key))
    named = repr((sys.version, slot)).encode()
    path = os.path.join(cache_directory(), f"{kind}-{zlib.crc32(named):08x}.pickle")
    try:
        with open(path, "rb") as kept:
            kept_key, value = pickle.load(kept)
        if kept_key == full_key:
            return value
    except Exception:  # noqa: BLE001 - absent, unreadable or from another version: read afresh
        pass
    value = compute()
    import tempfile  # only when the cache is written

    try:
        os.makedirs(cache_directory(), exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=cache_directory(), prefix=f".{kind}-")
        with os.fdopen(handle, "wb") as out:
            pickle.dump((full_key, value), out)
        os.replace(temporary, path)  # whole or not at all, whoever reads it meanwhile
    except OSError:
        pass
    return value


def file_stamp(path: str) -> tuple[int, int] | None:
    """What changes when the file at `path` is edited or replaced: its size and modification time."""
    return _stamp(path)

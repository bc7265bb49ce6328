"""A seed means the same run whatever else the process has imported.

Hypothesis mixes into what it draws the literal constants of every local module loaded in the process
(`hypothesis.internal.conjecture.providers._get_local_constants`: every module outside the standard
library and site-packages, the kit's own and the user's included). The same seed would then draw
differently depending on what happened to be imported: under pytest, on which tests ran before in
the same worker; for a replay, on what the replaying command imports. The kit's runs draw with
Hypothesis' global constants only. Hypothesis' internals are touched only if they are the ones known;
otherwise nothing changes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_original = None


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Within: Hypothesis draws no constants taken from loaded modules (nests, and runs on several threads)."""
    global _depth, _original
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a Hypothesis without this machinery
        yield
        return
    known = callable(getattr(providers, "_get_local_constants", None)) and hasattr(providers, "Constants") and \
        hasattr(getattr(providers, "CONSTANTS_CACHE", None), "cache")
    if not known:
        yield
        return
    with _lock:
        if _depth == 0:
            _original = providers._get_local_constants
            none = providers.Constants()
            providers._get_local_constants = lambda: none
            providers.CONSTANTS_CACHE.cache.clear()  # entries drawn from the local constants before
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                providers._get_local_constants = _original
                providers.CONSTANTS_CACHE.cache.clear()

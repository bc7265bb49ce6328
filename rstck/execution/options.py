"""Checks of numeric command-line options, shared by `rstck check`, `rstck fuzz` and the plugin:
a bad value is bad input with a one-line message, never a traceback later on."""

from __future__ import annotations

import math

from rstck.core.verdict import BadInput

MAX_TIMEOUT_S = 3600.0


def seconds(option: str, value: float, *, maximum: float = MAX_TIMEOUT_S) -> float:
    """A number of seconds above 0 and at most `maximum` (nan, inf and 1e308 are not)."""
    if not (math.isfinite(value) and 0 < value <= maximum):
        raise BadInput(f"{option} must be a number of seconds above 0 and at most {maximum:g}, got {value:g}")
    return value


def count(option: str, value: int | None, *, minimum: int, maximum: int) -> int | None:
    """A whole number from `minimum` to `maximum` (None: not given)."""
    if value is not None and not minimum <= value <= maximum:
        raise BadInput(f"{option} must be between {minimum:,} and {maximum:,}, got {value:,}")
    return value

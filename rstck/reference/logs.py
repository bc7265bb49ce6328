"""The reference implementations' warnings, each on its module's logger. `logging` is loaded only when there is a
warning to give: a run that gives none is spared its import (benchmarks/startup.py)."""

from __future__ import annotations

from typing import Any


def warn(module: str, message: str, *args: Any, **options: Any) -> None:
    import logging

    logging.getLogger(module).warning(message, *args, **options)

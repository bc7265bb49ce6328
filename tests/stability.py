"""How many times the repeated tests run.

A test marked `stability` repeats a verdict `stability_runs()` times: the suite's share (`SUITE_RUNS`, or the
count the test names) in `make test`, the bar of twenty in `make soak`, which sets `RSTCK_STABILITY_RUNS=20`.
A test marked `soak` runs only in `make soak` (`pytest --soak`, tests/conftest.py): repetition or deliberate load
whose single run the suite already makes elsewhere (docs/testing.md lists each and why).
"""

from __future__ import annotations

import os

SUITE_RUNS = 2
SOAK_RUNS = 20


def stability_runs(suite: int = SUITE_RUNS) -> int:
    return int(os.environ.get("RSTCK_STABILITY_RUNS", suite))

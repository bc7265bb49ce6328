"""How many times the suite's stability tests repeat a run of a zoo.

The bar is twenty identical runs: `RSTCK_STABILITY_RUNS=20` gives it. The suite's share is two, which with
the command-line run each zoo member also gets makes three observations per member within the suite's time
budget; the full suite is also run while two busy processes load both cores before anything lands.
"""

from __future__ import annotations

import os

SUITE_RUNS = 2


def stability_runs() -> int:
    return int(os.environ.get("RSTCK_STABILITY_RUNS", SUITE_RUNS))

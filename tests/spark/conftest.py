"""One embedded Spark session per test process, shared by every Spark test (the tests are grouped on one
xdist worker: `--dist loadgroup` and the xdist_group mark in each module)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")
    from .helpers import shared_session

    return shared_session()

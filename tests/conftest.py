"""Fixtures shared by the kit's own tests."""

# In-process pytester runs drop every module they import when they end; imported once
# here, the plugins and the kit stay loaded, which keeps each inner run fast.
import _hypothesis_pytestplugin  # noqa: F401
import hypothesis  # noqa: F401
import xdist.looponfail  # noqa: F401
import xdist.plugin  # noqa: F401

import rstck.cli  # noqa: F401
import rstck.plugin  # noqa: F401
import rstck.reference.targets  # noqa: F401
from rstck.core.checks import all_checks

all_checks()  # imports every rule module

pytest_plugins = ["pytester", "tests.time_budget"]


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="run the soak tests instead of the suite: those marked soak or stability, the latter "
                          "$RSTCK_STABILITY_RUNS times (`make soak`: 20)")


def pytest_collection_modifyitems(config, items):
    """`make test` leaves the soak tests out; `make soak` (--soak) runs them and the stability tests alone."""
    soak = config.getoption("--soak")
    keep, drop = [], []
    for item in items:
        wanted = item.get_closest_marker("soak") is not None or (soak and item.get_closest_marker("stability"))
        (keep if bool(wanted) == soak else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

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

pytest_plugins = ["pytester"]

"""The pytest plugin (entry point `rstck = rstck.plugin`): every check becomes a tagged pytest item.

Two ways in: `pytest --rstck-target mypkg.tck:target`, or a test class that subclasses
rstck.PublisherVerification (or Subscriber/Processor) and sets `target`. Items carry
`rstck(rule=..., spec=..., level=...)`, a role marker and a level marker. The checks run in one
supervised worker process per pytest process (rstck/execution/supervise.py), as `rstck check`'s do.

The plugin's rooms: options.py (options, markers), collection.py (targets into collectors and items),
check_items.py (check items and the worker they run in), fuzz_items.py, reporting.py (rows into the results
file, the HTML report and JUnit; the summary), rerun.py (how a failed item is run again; `rstck[T]::ITEM`
arguments), imports.py (what to do when the user's package cannot be imported). pytest finds every hook through this module: the module-level hooks are
imported here, and each pytest process's own parts are registered as it is configured.
"""

from __future__ import annotations

import pytest

from rstck.plugin.check_items import CheckRunner, RstckNote, RstckWarning
from rstck.plugin.collection import pytest_make_collect_report, pytest_pycollect_makeitem
from rstck.plugin.imports import ImportHint
from rstck.plugin.options import configure, pytest_addoption
from rstck.plugin.reporting import Reporting, pytest_runtest_makereport
from rstck.plugin.rerun import deselect_unnamed, take_node_ids

__all__ = ["RstckNote", "RstckWarning", "pytest_addoption", "pytest_collection_modifyitems", "pytest_configure",
           "pytest_make_collect_report", "pytest_pycollect_makeitem", "pytest_runtest_makereport"]


def pytest_configure(config: pytest.Config) -> None:
    take_node_ids(config)  # `pytest 'rstck[T]::ITEM'`: before the options naming targets are read
    configure(config)
    config.pluginmanager.register(Reporting(config), "rstck-reporting")
    config.pluginmanager.register(ImportHint(config), "rstck-import-hint")
    config.pluginmanager.register(CheckRunner(config), "rstck-check-runner")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselect_unnamed(config, items)  # of a target named by node id, only the items named

"""The plugin's configuration: its command-line options, the markers its items carry, and what an item reads
from them (a check's deadline, the profile, whether checks run in pytest's own process)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from rstck.execution.options import seconds
from rstck.core.plugins import profiles
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.core.verdict import BadInput
from rstck.execution.verification import Verification
from rstck.reports.allowlist import Allowlist, load_allowlist
from rstck.reports.allure import ALLURE_MARKERS

# The kit's own markers; each installed profile adds its own between them (rstck/core/plugins.py).
ITEM_MARKER = {"rstck(rule, spec, level)": "a check of a catalogue item, e.g. -m \"rstck(rule='3.9')\""}
KIT_MARKERS = {
    "must": "checks of MUST / MUST NOT / REQUIRED items",
    "should": "checks of SHOULD / RECOMMENDED items",
    "may": "checks of MAY items",
    "fuzz": "Hypothesis state machines fuzzing signal orderings",
}


def markers() -> dict[str, str]:
    """Every marker an rstck item may carry, with its help: the item's, each profile's, then the levels'."""
    found = dict(ITEM_MARKER)
    for profile in profiles():
        for name, text in profile.item_markers().items():
            found.setdefault(name, text)
    return {**found, **KIT_MARKERS}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rstck", "Reactive Streams conformance (rstck)")
    group.addoption("--rstck-target", action="append", default=[], metavar="MODULE:ATTR",
                    help="run every check against this target (repeatable)")
    group.addoption("--rstck-rules", metavar="GLOBS", help='only these rule ids or globs: "1.*,3.9"')
    group.addoption("--rstck-profile", metavar="NAME", default=None,
                    help="which checks run: default, an opt-in profile (spi-draft: the early SPI draft; see the rstck "
                         "documentation, page 'The SPI draft' (docs/spi-draft.md)), or all")
    group.addoption("--rstck-results", metavar="DIR", help="write JSON Lines result rows into DIR")
    group.addoption("--rstck-html", metavar="FILE", help="write the HTML conformance report of the run to FILE")
    group.addoption("--rstck-timeout", type=float, default=None, metavar="S",
                    help=f"deadline per check in seconds (default {DEFAULT_DEADLINE_S:g})")
    group.addoption("--rstck-strict", action="store_true",
                    help="a SHOULD item not met (warn) is a failed item, as `rstck check --strict` counts it: the "
                         "first item to find it fails, and each failed item is still counted once")
    group.addoption("--rstck-repro", metavar="DIR",
                    help="write a standalone reproducer script per failing check into DIR; the failure names it")
    group.addoption("--rstck-allow", metavar="FILE",
                    help="an allowlist of known deviations (TOML, as rstck check --allow): their failures are "
                         "expected (xfail) until the entry expires; an expired entry fails the run")
    group.addoption("--rstck-stream-length", type=int, default=0, metavar="N",
                    help="the stress mode: the checks that stream (1.1, 3.8, 3.17) deliver N elements")
    group.addoption("--rstck-in-process", action="store_true",
                    help="run the checks in the pytest process, not a supervised worker (for a debugger); a "
                         "target that ends the process then ends the run")


def configure(config: pytest.Config) -> None:
    """Register the markers and check the options that pytest cannot check itself."""
    for marker, text in {**markers(), **ALLURE_MARKERS}.items():
        config.addinivalue_line("markers", f"{marker}: {text}")
    if not config.pluginmanager.hasplugin("xdist"):  # the items' xdist groups (counting.same_worker) stay valid
        config.addinivalue_line("markers", "xdist_group(name): the xdist worker group (pytest-xdist)")
    timeout = config.getoption("rstck_timeout", None)
    try:
        if timeout is not None:
            seconds("--rstck-timeout", timeout)
        allow = config.getoption("rstck_allow", None)
        config.stash[ALLOWLIST] = Allowlist(load_allowlist(allow), names=set(config.getoption("rstck_target"))) \
            if allow else None
    except BadInput as exc:
        raise pytest.UsageError(str(exc).replace("--allow ", "--rstck-allow ", 1)) from None


def judged(config: pytest.Config, row: dict[str, Any]) -> dict[str, Any]:
    """The row as the allowlist (--rstck-allow) judges it: a failure a live entry covers is `allowed`."""
    allowlist = config.stash.get(ALLOWLIST, None)
    return allowlist.judge(row) if allowlist is not None else row


ALLOWLIST = pytest.StashKey["Allowlist | None"]()


def timeout_of(config: pytest.Config, verification: Any) -> float:
    """A check's (and a fuzz step's) deadline: --rstck-timeout, else the Verification's own, else the kit's."""
    return config.getoption("rstck_timeout", None) or getattr(verification, "timeout_s", None) or DEFAULT_DEADLINE_S


def profile_of(config: pytest.Config, verification: type[Verification]) -> str:
    """--rstck-profile, else the Verification's own, else the default profile."""
    return config.getoption("rstck_profile", None) or verification.profile


def in_process(config: pytest.Config) -> bool:
    """Whether checks and fuzz shards run in pytest's own process: when asked to (for a debugger), or where no
    worker can be forked to share the collected targets' memory (outside Linux)."""
    return config.getoption("rstck_in_process", False) or not sys.platform.startswith("linux")

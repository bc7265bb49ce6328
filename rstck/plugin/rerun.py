"""How a failed item is run again under pytest: the two commands its failure ends with, and the node ids of
`--rstck-target` items as command-line arguments.

An item of a test class has a node id pytest takes as it is (`tests/test_x.py::TestX::1.1-...`). An item of
`--rstck-target T` has `rstck[T]::1.1-...`, which names no file: pytest takes no such argument itself, so the
plugin takes it out of the arguments, loads the target T it names (as `--rstck-target T` would) and deselects that
target's other items. `pytest 'rstck[T]::1.1-...'` then runs that item alone, as the commands printed here, in the
HTML report and in a fuzz item's replay line say.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.reports.rerun import REPRO_DIRECTORY, launcher, shell_words

_PREFIX = "rstck["


def take_node_ids(config: pytest.Config) -> None:
    """Take the `rstck[T]` and `rstck[T]::ITEM` arguments out of pytest's file arguments: each T becomes a
    --rstck-target, and the items named are all of its that run."""
    named = [arg for arg in config.args if _target_of(arg) is not None]
    for arg in named:
        config.args.remove(arg)
        spec = _target_of(arg)
        if spec not in config.option.rstck_target:
            config.option.rstck_target.append(spec)
    config.stash[_NAMED] = named


def deselect_unnamed(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Of a target named by node id, only the items named run; an item named that was not collected is an error,
    as pytest's own `not found`."""
    named = config.stash.get(_NAMED, [])
    if not named:
        return
    scopes = {_scope_of(arg) for arg in named}
    chosen = [item for item in items if _scope_of(item.nodeid) not in scopes
              or any(item.nodeid == arg or item.nodeid.startswith(arg + "::") for arg in named)]
    missing = [arg for arg in named if arg not in scopes and not any(item.nodeid == arg for item in chosen)]
    if missing:
        raise pytest.UsageError(f"not found: {', '.join(missing)} (`pytest --collect-only -q --rstck-target "
                                f"{shell_words([_target_of(missing[0]) or ''])}` lists the target's items)")
    if len(chosen) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = chosen


def next_steps(item: Any, row: dict[str, Any]) -> list[str]:
    """The two lines a failed check item's report ends with: the command that runs it alone again, and the one
    that writes its reproducer (--rstck-repro; or why none can be written), both to run where pytest ran."""
    from rstck.reports.repro import reason_against  # only when an item failed

    command = runnable_command(item)
    written_to = item.config.getoption("rstck_repro", None)
    if written_to:  # this run writes the reproducers: the report names the item's script above
        return [f"re-run:           {command}"]
    directory = REPRO_DIRECTORY
    why_not = reason_against(row)
    return [f"re-run:           {command}",
            f"no reproducer: {why_not}" if why_not else
            f"write reproducer: {command} --rstck-repro {shell_words([directory])}"]


def pytest_launcher(config: pytest.Config) -> str:
    """`pytest` or `python -m pytest`, as this run was started (an xdist worker knows its controller's argv)."""
    workerinput = getattr(config, "workerinput", None)
    return launcher("pytest", workerinput["mainargv"][0] if workerinput else None)


def runnable_command(item: Any) -> str:
    """`pytest NODE` for `item`, to run where pytest ran (a fuzz item's replay line)."""
    return f"{pytest_launcher(item.config)} {shell_words([_runnable_node_id(item), *_plan_options(item.config)])}"


def _runnable_node_id(item: Any) -> str:
    """The node id as an argument from where pytest ran: a file's is relative to the rootdir, so made relative to
    the current directory; an `rstck[T]` one names no file and stays."""
    if item.nodeid.startswith(_PREFIX):
        return item.nodeid
    return item.config.cwd_relative_nodeid(item.nodeid)


def _plan_options(config: pytest.Config) -> list[str]:
    """The options of this run that change which checks an item runs or what they see."""
    words = []
    for option, dest in (("--rstck-profile", "rstck_profile"), ("--rstck-stream-length", "rstck_stream_length")):
        if config.getoption(dest, None):
            words += [option, str(config.getoption(dest))]
    timeout = config.getoption("rstck_timeout", None)
    if timeout and timeout != DEFAULT_DEADLINE_S:
        words += ["--rstck-timeout", f"{timeout:g}"]
    if config.getoption("rstck_strict", False):
        words.append("--rstck-strict")
    return words


def _target_of(arg: str) -> str | None:
    """The target an `rstck[T]` or `rstck[T]::ITEM` argument names (T may hold `]` and `::`: tcp://[::1]:9000),
    or None for any other argument (a file that happens to be named so included)."""
    if not arg.startswith(_PREFIX) or os.path.exists(arg.split("::")[0]):
        return None
    scope = _scope_of(arg)
    return scope[len(_PREFIX):-1] if scope.endswith("]") and len(scope) > len(_PREFIX) + 1 else None


def _scope_of(node_id: str) -> str:
    """The collector part of an rstck node id (`rstck[T]`); an item name holds no `]::`."""
    head, sep, _ = node_id.rpartition("]::")
    return head + "]" if sep else node_id


_NAMED = pytest.StashKey[list]()

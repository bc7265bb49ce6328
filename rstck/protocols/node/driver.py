"""The driver script, and how a process of it is started.

`driver.js` (CommonJS, no npm dependency) loads the implementation's module and speaks the bridge's protocol
(docs/node.md, "How it works"). A driver runs with the kit's environment less what no in-memory stream needs,
and is tied to the kit's life where Linux allows it.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import sys
import threading
from typing import Any

from rstck.protocols.node.errors import NodeMissing

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "driver.js")

# The environment a driver does not inherit: NODE_EXTRA_CA_CERTS makes every Node start parse the
# certificate bundle before V8 starts (about 130 ms on a 2-core machine), and no in-memory stream needs it.
DROPPED_ENV = ("NODE_EXTRA_CA_CERTS",)


def node_executable() -> str:
    """The `node` to run: $RSTCK_NODE, else the first on PATH; NodeMissing says what to do."""
    if sys.platform == "win32":
        raise NodeMissing("the Node adapter needs a POSIX system: it hands the driver descriptors of its own")
    chosen = os.environ.get("RSTCK_NODE") or shutil.which("node")
    if not chosen:
        raise NodeMissing("node: not found on PATH; install Node.js 16.14 or later, or set RSTCK_NODE to its path")
    return chosen


def driver_env(base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    for name in DROPPED_ENV:
        env.pop(name, None)
    return env


# A driver stuck in an endless loop never reads the EOF its stdin shows when the kit dies, so each driver gets
# a parent-death signal (`setpriv --pdeathsig KILL`): a kit killed with SIGKILL takes its drivers with it.
# Linux sends that signal when the *thread* that forked the child ends, so every driver is started from one
# thread that lives as long as the kit.
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None
_spawner: concurrent.futures.ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _spawner_thread() -> concurrent.futures.ThreadPoolExecutor:
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            from rstck.core.kit_threads import mark_kit_thread

            _spawner = concurrent.futures.ThreadPoolExecutor(1, "rstck-node-spawner", initializer=mark_kit_thread)
        return _spawner


def start_process(argv: list[str], **popen_options: Any) -> subprocess.Popen:
    """`subprocess.Popen(argv)`, tied to the kit's life where Linux allows it."""
    if _SETPRIV is None:
        return subprocess.Popen(argv, **popen_options)
    if shutil.which(argv[0]) is None:  # said as Popen would, not by setpriv's exit status
        raise FileNotFoundError(2, "No such file or directory", argv[0])
    return _spawner_thread().submit(subprocess.Popen, [_SETPRIV, "--pdeathsig", "KILL", *argv],
                                    **popen_options).result()


def _after_fork_in_child() -> None:
    global _spawner, _spawner_lock
    _spawner, _spawner_lock = None, threading.Lock()  # its thread is the parent's


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

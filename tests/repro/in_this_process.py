"""Running a Spark target's reproducer in the test process, on the Spark session the process already has.

Such a script starts a Spark session as the user's code would (SparkSession.builder...getOrCreate()): in a process of
its own that is a JVM's start, most of the script's run. In this process getOrCreate() hands it the session the tests
share (one JVM per test process), and the script runs as its program would: `__name__ == "__main__"`, its argv, its
output captured. It ends itself with os._exit (sys.exit when it cannot run): here the `os` it imports is this
process's but for `_exit`, which ends the script's run instead, from whichever of its threads calls it (its watchdog
does, for a call that hangs). A script that would run itself again in a fresh process (os.execve: a race) cannot run
here. tests/repro/test_spark.py still runs one script in a process of its own, with pyspark alone.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import subprocess
import sys
import threading
from typing import Any


class _Ended(BaseException):
    """Raised in the thread that ended the script; the run's status is already recorded."""


class _OsOfTheScript:
    """The `os` a script imports: this process's, but for the calls that would end or replace the process."""

    def __init__(self, ended: threading.Event, status: list[int]) -> None:
        self._ended, self._status = ended, status

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def _exit(self, code: int) -> None:
        self.end(code)
        raise _Ended

    def end(self, code: int) -> None:
        if not self._ended.is_set():
            self._status.append(code)
            self._ended.set()

    def execve(self, *_args: Any) -> None:
        raise AssertionError("a script that runs itself again in a fresh process (a race) cannot run in this one")


class _TimeOfTheScript:
    """The `time` of a script whose run has ended: a thread of it left behind (its watchdog, which polls for ever)
    sleeps for good at its next sleep (a daemon: it holds nothing, and the process's end does not wait for it)."""

    def __getattr__(self, name: str) -> Any:
        import time

        return getattr(time, name)

    @staticmethod
    def sleep(_seconds: float) -> None:
        threading.Event().wait()


def run_here(path: Any, *target: str, timeout: float) -> subprocess.CompletedProcess:
    """`python path *target`, run in this process (as subprocess.run(..., capture_output=True, text=True) answers)."""
    path = str(path)
    ended, status = threading.Event(), []
    script_os = _OsOfTheScript(ended, status)

    def importing(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - __import__'s own names
        return script_os if name == "os" and level == 0 else builtins.__import__(name, globals, locals, fromlist, level)

    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": {**vars(builtins), "__import__": importing}}
    code = compile(open(path, encoding="utf-8").read(), path, "exec")

    def main() -> None:
        try:
            exec(code, namespace)  # noqa: S102 - the script, as `python path` runs it
            script_os.end(0)
        except SystemExit as exc:
            script_os.end(exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1))
        except _Ended:
            pass
        except BaseException:  # noqa: BLE001 - as the interpreter reports an uncaught exception: exit 1
            import traceback

            traceback.print_exc()
            script_os.end(1)

    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_hook = sys.argv, threading.excepthook
    sys.argv = [path, *target]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            threading.Thread(target=main, name=f"script {os.path.basename(path)}", daemon=True).start()
            finished = ended.wait(timeout)
    finally:
        sys.argv, threading.excepthook = saved_argv, saved_hook
        namespace["time"] = _TimeOfTheScript()
    command = [sys.executable, path, *target]
    if not finished:
        raise subprocess.TimeoutExpired(command, timeout, out.getvalue(), err.getvalue())
    return subprocess.CompletedProcess(command, status[0], out.getvalue(), err.getvalue())

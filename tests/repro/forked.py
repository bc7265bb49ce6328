"""Running a Python reproducer as `python SCRIPT [TARGET]` does, without paying for a fresh interpreter each time.

A generated script is a standalone program: it imports the target's module, plays its scenario, and ends the process
itself (os._exit; a race script may os.execve itself again, in a fresh process). Most of a short script's run is the
interpreter's start and its imports, so the tests run each script in a child forked from a warm interpreter: one
process per test process (started on first use, `serve` below) that has imported what the scripts import, and has no
thread of its own when it forks. The child then becomes the script's process: its environment, working directory,
argv and sys.path as the command line would give them, stdin from /dev/null, stdout and stderr to files; whatever the
script does to end itself (os._exit, sys.exit, os.execve) it does to that child alone.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What the scripts of the tests import: the zoo's targets (and what they import: rstck, pytest), the examples, and
# the standard modules of the scripts' runtime (rstck/reports/repro/python_runtime.py).
WARM = ("tests.repro.zoo_targets", "tests.zoo.cli_targets", "docs.examples.lenient_range", "asyncio", "collections",
        "gc", "importlib", "threading", "traceback", "weakref", "runpy")


def serve() -> None:
    """The warm interpreter: per request (a JSON line on stdin), fork a child that runs the script, wait for it
    within the request's timeout, and answer its exit status (a JSON line on stdout)."""
    import importlib

    for name in WARM:
        importlib.import_module(name)
    assert threading.active_count() == 1, "a process that forks must have no other thread"
    # The path the interpreter started with, less what `-c` put first (a script's own directory goes there).
    base_path = [entry for entry in sys.path[1:] if entry != ROOT]
    answers = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _become_the_script(request, base_path)
        answers.write(json.dumps(_wait(pid, request["timeout"])) + "\n")
        answers.flush()


def _become_the_script(request: dict[str, Any], base_path: list[str]) -> None:
    """In the forked child: what `python SCRIPT ARGS` would be, run until the script ends the process."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_TRUNC), fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        script = request["path"]
        python_path = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
        sys.path[:] = [os.path.dirname(os.path.abspath(script)), *python_path, *base_path]
        sys.argv[:] = [script, *request["args"]]
        import runpy

        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
        threading._shutdown()  # noqa: SLF001 - as the interpreter's exit waits for the threads that are not daemons
    except BaseException:  # noqa: BLE001 - as the interpreter reports an uncaught exception: exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001, S110 - the child ends whatever its streams say
                pass
        os._exit(code)


def _wait(pid: int, timeout: float) -> dict[str, Any]:
    watched = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([watched], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(watched)
    return {"returncode": os.waitstatus_to_exitcode(status), "timed_out": not ready}


class WarmInterpreter:
    """The client: one warm interpreter per test process, started on first use, ended with the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: subprocess.Popen | None = None

    def run(self, script: str, args: list[str], *, env: dict[str, str], cwd: str,
            timeout: float) -> subprocess.CompletedProcess:
        """`python script *args` (as subprocess.run(..., capture_output=True, text=True) answers it)."""
        command = [sys.executable, script, *args]
        with self._lock, tempfile.TemporaryDirectory(prefix="rstck-forked-") as outputs:
            out, err = os.path.join(outputs, "stdout"), os.path.join(outputs, "stderr")
            for path in (out, err):
                open(path, "w").close()
            server = self._started()
            request = {"path": script, "args": args, "env": env, "cwd": cwd, "stdout": out, "stderr": err,
                       "timeout": timeout}
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            answer = server.stdout.readline()
            if not answer:
                self._server = None
                raise RuntimeError(f"the warm interpreter ended: {server.stderr.read()[-2000:]}")
            done = json.loads(answer)
            with open(out, errors="replace") as stdout, open(err, errors="replace") as stderr:
                output, errors = stdout.read(), stderr.read()
        if done["timed_out"]:
            raise subprocess.TimeoutExpired(command, timeout, output, errors)
        return subprocess.CompletedProcess(command, done["returncode"], output, errors)

    def _started(self) -> subprocess.Popen:
        if self._server is None or self._server.poll() is not None:
            self._server = subprocess.Popen(
                [sys.executable, "-c", "from tests.repro.forked import serve; serve()"], cwd=ROOT, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": ROOT})
            atexit.register(self._server.kill)
        return self._server


WARM_INTERPRETER = WarmInterpreter()

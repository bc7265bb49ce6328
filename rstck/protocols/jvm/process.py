"""One JVM per process of the kit: started with the user's classpath plus py4j's jar, running the kit's bridge
class (RstckJvmBridge.java, compiled with `javac` at first use into the kit's cache directory), connected through
py4j's pinned-thread ClientServer."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
import socket
import subprocess
import threading
from typing import Any

from rstck.core.install_cache import cache_directory
from rstck.core.verdict import BadInput

BRIDGE_SOURCE = os.path.join(os.path.dirname(__file__), "RstckJvmBridge.java")
BRIDGE_CLASS = "RstckJvmBridge"
START_TIMEOUT_S = 30.0


def py4j_jar() -> str:
    """The jar py4j's Python package ships (in the environment's share/py4j), or BadInput."""
    try:
        from py4j.java_gateway import find_jar_path
    except ImportError:
        raise BadInput("the jvm adapter needs py4j: pip install 'rstck[jvm]'") from None
    path = find_jar_path()
    if not path or not os.path.isfile(path):
        raise BadInput("py4j's jar was not found beside its Python package: reinstall py4j")
    return path


def java_tool(name: str) -> str:
    """`java` or `javac`: from $JAVA_HOME/bin, else on PATH; BadInput when missing."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", name) if home and os.path.isfile(os.path.join(home, "bin", name)) else (
        shutil.which(name))
    if not found:
        raise BadInput(f"the jvm adapter needs a JDK: `{name}` is not on PATH and $JAVA_HOME is not set")
    return found


def compiled_bridge() -> str:
    """The directory holding the compiled bridge class, compiled once per source and py4j jar."""
    jar = py4j_jar()
    with open(BRIDGE_SOURCE, "rb") as source:
        digest = hashlib.sha256(source.read() + jar.encode()).hexdigest()[:16]
    directory = os.path.join(cache_directory(), "jvm-bridge", digest)
    if os.path.isfile(os.path.join(directory, BRIDGE_CLASS + ".class")):
        return directory
    staging = f"{directory}.{os.getpid()}.tmp"
    os.makedirs(staging, exist_ok=True)
    compiled = subprocess.run([java_tool("javac"), "-nowarn", "-cp", jar, "-d", staging, BRIDGE_SOURCE],
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise BadInput(f"javac could not compile the kit's JVM bridge: {compiled.stderr.strip()[:500]}")
    try:
        os.replace(staging, directory)  # whole or not at all; another process may have won the race
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


class JvmProcess:
    """A JVM started for the kit and the py4j ClientServer talking to it. `bridge` is the kit's Java object
    there; `jvm` the py4j view of its packages. Ends when `stop()` is called or when this process ends (the
    JVM exits when its stdin closes)."""

    def __init__(self, classpath: list[str]):
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters

        # py4j logs every exception a Python proxy raises: the kit raises some on purpose (2.13), and a log line
        # of py4j's would read as the implementation surfacing the error.
        logging.getLogger("py4j").setLevel(logging.CRITICAL)

        self.classpath = classpath
        python_port = _free_port()
        token = secrets.token_hex(16)
        path = os.pathsep.join([compiled_bridge(), py4j_jar(), *classpath])
        self.child = subprocess.Popen([java_tool("java"), "-cp", path, BRIDGE_CLASS, str(python_port)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env={**os.environ, "RSTCK_JVM_TOKEN": token}, text=True)
        java_port = self._announced_port()
        self.gateway = ClientServer(
            java_parameters=JavaParameters(port=java_port, auth_token=token, auto_convert=True),
            python_parameters=PythonParameters(port=python_port, auth_token=token, daemonize=True,
                                               daemonize_connections=True,
                                               propagate_java_exceptions=True))
        self.jvm = self.gateway.jvm
        self.bridge = self.gateway.entry_point
        self.pid = os.getpid()
        self.stopped = False
        self._classes: dict[str, Any] = {}

    def _announced_port(self) -> int:
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(self.child.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        line = answer[0] if answer else ""
        if not line.startswith("rstck-jvm-port "):
            self.child.kill()
            error = self.child.stderr.read() if self.child.poll() is not None else "no answer"
            raise BadInput(f"the JVM did not start: {error.strip()[:500]}")
        return int(line.split()[1])

    def java_class(self, name: str) -> Any:
        """A class handle by its full name (cached: an uncached lookup costs up to milliseconds)."""
        found = self._classes.get(name)
        if found is None:
            found = self._classes[name] = self.jvm
            for part in name.split("."):
                found = getattr(found, part)
        return found

    @property
    def alive(self) -> bool:
        return not self.stopped and self.child.poll() is None and self.pid == os.getpid()

    def stop(self) -> None:
        """End the JVM now: a call stuck in it returns with an error, and nothing it started outlives it."""
        if self.stopped or self.pid != os.getpid():
            return
        self.stopped = True
        self.child.kill()
        self.child.wait()
        try:
            self.gateway.shutdown()
        except Exception:  # noqa: BLE001 - the JVM is gone already
            pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_running: dict[tuple[str, ...], JvmProcess] = {}
_running_lock = threading.Lock()


def shared_jvm(classpath: list[str]) -> JvmProcess:
    """The JVM of this process for `classpath`, started on first use and again after it was stopped or died (a
    forked process starts its own: the parent's sockets are not its to use)."""
    key = tuple(classpath)
    with _running_lock:
        running = _running.get(key)
        if running is None or not running.alive:
            running = _running[key] = JvmProcess(list(classpath))
        return running

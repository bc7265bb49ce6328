"""The JVM the kit drives, one per process of the kit and classpath: the running Spark session's when this process
started one (SparkJvm: the user's classpath and the kit's bridge class loaded into it), else a JVM of the kit's own
(JvmProcess: started with the user's classpath plus py4j's jar). Either runs the kit's bridge class
(RstckJvmBridge.java, compiled with `javac` at first use into the kit's cache directory) and is driven through
py4j's pinned-thread ClientServer."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from typing import Any

from rstck.core.install_cache import cache_directory
from rstck.core.verdict import BadInput

BRIDGE_SOURCE = os.path.join(os.path.dirname(__file__), "RstckJvmBridge.java")
BRIDGE_CLASS = "RstckJvmBridge"
START_TIMEOUT_S = 30.0
# The name of the kit's class loaders on Spark's JVM (the bridge's, and the user's classpath's: RstckJvmBridge's
# Classpath): the bridge tells the implementation's threads from Spark's by the loaders of the classes they run.
KIT_LOADER_NAME = "rstck"


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
    return compiled_once(BRIDGE_SOURCE, BRIDGE_CLASS, [jar], "jvm-bridge", "javac could not compile the kit's JVM bridge")


def compiled_once(source_path: str, class_name: str, classpath: list[str], cache_name: str, failure: str) -> str:
    """The directory of the kit's cache holding `source_path` compiled against `classpath`, compiled once per
    source and classpath; BadInput, starting with `failure`, when javac cannot compile it."""
    with open(source_path, "rb") as source:
        digest = hashlib.sha256(source.read() + os.pathsep.join(classpath).encode()).hexdigest()[:16]
    directory = os.path.join(cache_directory(), cache_name, digest)
    if os.path.isfile(os.path.join(directory, class_name + ".class")):
        return directory
    staging = f"{directory}.{os.getpid()}.tmp"
    os.makedirs(staging, exist_ok=True)
    compiled = subprocess.run([java_tool("javac"), "-nowarn", "-cp", os.pathsep.join(classpath), "-d", staging,
                               source_path], capture_output=True, text=True)
    if compiled.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise BadInput(f"{failure}: {compiled.stderr.strip()[:500]}")
    try:
        os.replace(staging, directory)  # whole or not at all; another process may have won the race
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


class _ClassHandles:
    """Class handles by full name, cached: an uncached lookup through py4j costs up to milliseconds (on Spark's JVM,
    py4j finds the user's classes through the kit's loader)."""

    jvm: Any
    _classes: dict[str, Any]

    def java_class(self, name: str) -> Any:
        found = self._classes.get(name)
        if found is None:
            found = self._classes[name] = self.jvm
            for part in name.split("."):
                found = getattr(found, part)
        return found


class JvmProcess(_ClassHandles):
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


class SparkJvm(_ClassHandles):
    """The JVM of the Spark session this process started, lent to the kit, one per JVM: the kit's bridge is loaded
    there by a class loader whose parent is Spark's (py4j's classes come from Spark's jars), and each classpath the
    kit is given joins one loader of the user's classes over it (RstckJvmBridge.addClasspath), through which py4j
    then resolves classes (so its proxies can implement the user's interfaces). Spark's threads, those running when
    the JVM is lent and those that run only Spark's code later, are not the implementation's
    (RstckJvmBridge.threadStates). `stop()` cannot end a call stuck in Spark's JVM: it leaves the threads running
    then out of what the next checks read."""

    def __init__(self, gateway: Any):
        logging.getLogger("py4j").setLevel(logging.CRITICAL)  # as JvmProcess: the kit's errors are on purpose
        self.gateway = gateway
        self.jvm = gateway.jvm
        _serve_pinned_callbacks(gateway)
        # PySpark leaves this off: without it a Java exception the kit raises in a probe reaches Java as a
        # py4j.Py4JException instead of itself.
        gateway.python_parameters.propagate_java_exceptions = True
        urls = gateway.new_array(self.jvm.java.net.URL, 1)
        urls[0] = self.jvm.java.io.File(compiled_bridge()).toURI().toURL()
        spark_loader = self.jvm.java.lang.Thread.currentThread().getContextClassLoader()
        loader = self.jvm.java.net.URLClassLoader(KIT_LOADER_NAME, urls, spark_loader)
        bridge_class = self.jvm.java.lang.Class.forName(BRIDGE_CLASS, True, loader)
        self.bridge = bridge_class.getDeclaredConstructor(gateway.new_array(self.jvm.java.lang.Class, 0)).newInstance(
            gateway.new_array(self.jvm.java.lang.Object, 0))
        self.bridge.leaveOutThreadsRunningNow()
        self.bridge.lendLoaderToPy4j()
        self.classpath: list[str] = []  # every entry given so far, in order
        self.pid = os.getpid()
        self._classes: dict[str, Any] = {}

    def add_classpath(self, classpath: list[str]) -> None:
        added = [entry for entry in map(os.path.abspath, classpath) if entry not in self.classpath]
        if added:
            self.bridge.addClasspath(os.pathsep.join(added))
            self.classpath += added

    @property
    def alive(self) -> bool:
        """While the process that started the session runs it (a new session of PySpark's keeps its JVM)."""
        if self.pid != os.getpid():
            return False
        context = spark_context()
        return context is not None and context._gateway is self.gateway

    def stop(self) -> None:
        self.bridge.leaveOutThreadsRunningNow()


class NotPinned(Exception):
    """Spark's gateway would not keep a call made inside a callback on the Java thread that made the callback."""


def _serve_pinned_callbacks(gateway: Any) -> None:
    """Start the Python server of Spark's gateway, for calls into the kit from Java's own threads, keeping py4j's
    pinned threads. PySpark's own way (pyspark.java_gateway.ensure_callback_server_started) replaces the Java side's
    callback client with a copy that knows no thread's connection, after which a callback from a thread serving
    Python arrives on another Python thread; so the port is set on the client in place."""
    from py4j.java_gateway import JavaObject

    client = JavaObject("GATEWAY_SERVER", gateway._gateway_client).getCallbackClient()
    if client.getPerThreadConnection() is None:
        raise NotPinned("its callback client was replaced (PySpark starts it so for its own callbacks), so a call "
                        "made inside onNext would reach Java on another thread than the one that delivered onNext")
    if gateway.__dict__.get("_callback_server") is not None:
        return  # started here before, the client kept
    parameters = gateway.python_parameters
    parameters.port, parameters.daemonize, parameters.daemonize_connections = 0, True, True
    parameters.auth_token = gateway.java_parameters.auth_token  # the Java side's client sends the session's token
    gateway.start_callback_server(parameters)
    port = gateway._callback_server.server_socket.getsockname()[1]
    gateway._callback_server.port = gateway._python_proxy_port = port
    field = gateway.jvm.java.lang.Class.forName("py4j.CallbackClient").getDeclaredField("port")
    field.setAccessible(True)
    field.setInt(client, port)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_running: dict[tuple[str, ...], JvmProcess] = {}
_on_spark: list[SparkJvm] = []  # the Spark session's JVM once lent
_running_lock = threading.Lock()
_said_why_not_spark = False
_unfit: set[int] = set()  # the py4j gateways of Spark found unfit (by id), not tried again


def shared_jvm(classpath: list[str]) -> JvmProcess | SparkJvm:
    """The JVM of this process for `classpath`: the running Spark session's (spark_context), else one of the kit's
    own, started on first use and again after it was stopped or died (a forked process starts its own: the
    parent's sockets are not its to use)."""
    with _running_lock:
        context = spark_context()
        if context is not None:
            if not (_on_spark and _on_spark[0].alive):
                try:
                    _on_spark[:] = [SparkJvm(context._gateway)]
                except NotPinned as reason:
                    _say_why_not_spark(str(reason))
                    _unfit.add(id(context._gateway))
            if _on_spark and _on_spark[0].alive:
                _on_spark[0].add_classpath(classpath)
                return _on_spark[0]
        key = tuple(classpath)
        running = _running.get(key)
        if running is None or not running.alive:
            running = _running[key] = JvmProcess(list(classpath))
        return running


def spark_context() -> Any:
    """The SparkContext this process started, when its JVM can serve the kit, else None. Its py4j gateway must pin
    threads (PySpark's default): with PYSPARK_PIN_THREAD=false a request made inside onNext would reach Java on
    another thread than the one delivering onNext, and recursion (3.3) would read as concurrency; the kit then
    starts its own JVM and says why, once."""
    if "pyspark" not in sys.modules:
        return None
    from py4j.clientserver import ClientServer
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None or id(context._gateway) in _unfit:
        return None
    if not _started_here(context._gateway):
        _say_why_not_spark("this process was forked from the one that started the session, whose py4j connections "
                           "are not this process's to use (the pytest plugin's checks run in a forked worker unless "
                           "--rstck-in-process)")
        return None
    if not isinstance(context._gateway, ClientServer):
        _say_why_not_spark("PYSPARK_PIN_THREAD=false, so a call made inside onNext would reach Java on another "
                           "thread than the one that delivered onNext")
        return None
    return context


def _say_why_not_spark(reason: str) -> None:
    global _said_why_not_spark
    if not _said_why_not_spark:
        _said_why_not_spark = True
        sys.stderr.write(f"rstck: the jvm adapter starts a JVM of its own instead of using the Spark session's: "
                         f"{reason}\n")


_started_here_answers: dict[tuple[int, int], bool] = {}  # (the gateway's id, this process's id) -> the answer


def _started_here(gateway: Any) -> bool:
    """Whether Spark's JVM is this process's child (a forked process of the kit's shares its parent's session but
    not its sockets). A JVM PySpark was handed (no process of its own) is taken as this process's."""
    key = (id(gateway), os.getpid())
    answer = _started_here_answers.get(key)
    if answer is None:
        answer = _started_here_answers[key] = _is_child(getattr(gateway, "proc", None))
    return answer


def _is_child(process: Any) -> bool:
    if process is None or not sys.platform.startswith("linux"):
        return True
    try:
        with open(f"/proc/{process.pid}/stat") as stat:
            return int(stat.read().rpartition(")")[2].split()[1]) == os.getpid()
    except (OSError, ValueError, IndexError):
        return False

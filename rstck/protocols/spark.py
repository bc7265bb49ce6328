"""The one way rstck starts and uses a Spark session: the Spark adapter, the fuzzer's Spark engine and the reports'
Spark aggregation all get theirs here.

Every Spark call is bounded: the session starts within `start_timeout_s` or not at all, and every job runs under a
watchdog that cancels its job group when its time is up (`run_bounded`). This module imports pyspark only when a
session is asked for.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from rstck.core.verdict import BadInput

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MASTER_ENV = "RSTCK_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
# A local session takes 8-30 s to start on a loaded 2-core machine (the JVM, then the first job's
# code being loaded); a cluster adds registering with its master.
START_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 5.0  # a master's port must accept a connection within this
JOB_TIMEOUT_S = 120.0  # one fetch or one batch write
SHUFFLE_PARTITIONS_LOCAL = "4"


class SparkUnavailable(BadInput):
    """No Spark session could be had (no Java, a master that does not answer, a start past its deadline):
    one line that says what to fix."""


class SparkJobFailed(RuntimeError):
    """A Spark job failed, was cancelled, or outlived its time: the innermost cause, in one line."""


# -- the session --------------------------------------------------------------------------------

_session_lock = threading.Lock()


def spark_session(master: str | None = None, *, start_timeout_s: float = START_TIMEOUT_S) -> SparkSession:
    """The process's Spark session, started on first use: `master`, else $RSTCK_SPARK_MASTER, else
    `local[*]` (embedded: nothing needs a cluster). A session already running in this process (one per
    JVM) is reused as it is.

    Executors run this interpreter unless $PYSPARK_PYTHON says otherwise (a cluster whose machines
    keep Python elsewhere); logs are quiet (errors only, and task failures not at all: they reach the
    user as on_error or as an error row); the web UI is off. Raises SparkUnavailable, with one line
    saying why, when there is no Java, when a `spark://` master does not accept a connection, or when
    the session has not started within `start_timeout_s`.
    """
    with _session_lock:
        running = _running_session()
        if running is not None:
            return running
        master = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
        _require_java()
        _require_master_answers(master)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        return _start_within(lambda: _start(master), master, start_timeout_s)


def _running_session() -> SparkSession | None:
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = SparkContext._active_spark_context
    if context is None:
        return None
    return SparkSession.builder.getOrCreate()


def _require_java() -> None:
    home = os.environ.get("JAVA_HOME")
    if home:
        if not os.access(os.path.join(home, "bin", "java"), os.X_OK):
            raise SparkUnavailable(f"Spark needs Java 17 or later: JAVA_HOME is {home}, which has no bin/java; "
                                   "point JAVA_HOME at a JDK or unset it")
    elif shutil.which("java") is None:
        raise SparkUnavailable("Spark needs Java 17 or later: no java on PATH and JAVA_HOME is not set; "
                               "install a JDK (e.g. apt-get install openjdk-17-jre-headless)")


def _require_master_answers(master: str) -> None:
    """A `spark://` master whose port accepts no connection would cost minutes of retries: said at once."""
    if not master.startswith("spark://"):
        return
    problems = []
    for address in master[len("spark://"):].split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
                return
        except ValueError:
            raise SparkUnavailable(f"Spark master {master}: write it as spark://HOST:PORT") from None
        except OSError as exc:
            problems.append(f"{address}: {exc.strerror or exc}")
    raise SparkUnavailable(f"Spark master {master} does not answer ({'; '.join(problems)})")


def _start_within(start: Callable[[], SparkSession], master: str, timeout_s: float) -> SparkSession:
    """Run `start` on a thread of its own and wait at most `timeout_s` for it."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["session"] = start()
        except BaseException as exc:  # noqa: BLE001 - reported to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="rstck-spark-start", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise SparkUnavailable(f"the Spark session ({master}) did not start within {timeout_s:g} s")
    if "error" in outcome:
        raise SparkUnavailable(f"the Spark session ({master}) did not start: {one_line(outcome['error'])}") \
            from outcome["error"]
    return outcome["session"]


def _start(master: str) -> SparkSession:
    from pyspark.sql import SparkSession

    local = master.startswith("local")
    logs = resources.files("rstck.protocols").joinpath("spark-log4j2.properties")
    builder = (SparkSession.builder.master(master).appName("rstck")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{logs}"))
    if local:  # an embedded session talks to nobody: no need to guess a network interface
        builder = (builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.sql.shuffle.partitions", SHUFFLE_PARTITIONS_LOCAL))
    session = builder.getOrCreate()
    session.range(1).collect()  # the first job loads most of Spark's code: paid here, not in a check's deadline
    return session


def one_line(exc: BaseException) -> str:
    """The innermost cause of a Spark or Py4J error, as one line."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            chain = [java]
            while chain[-1].getCause() is not None and len(chain) < 20:
                chain.append(chain[-1].getCause())
            # The innermost cause that says something (an EOFException often says nothing at all).
            text = next((str(c.getMessage()) for c in reversed(chain) if c.getMessage()), str(chain[-1].toString()))
        except Exception:  # noqa: BLE001 - the JVM is gone: the Python side's text will do
            text = str(exc)
    else:
        text = str(exc)
        if "JAVA_GATEWAY_EXITED" in text:
            return "Java exited before Spark started (JAVA_GATEWAY_EXITED): is a Java 17 or later installed?"
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    # A Python UDF's failure ends with its exception's own line; a JVM error starts with it.
    python_error = [line for line in lines if _looks_like_python_error(line)]
    return python_error[-1] if python_error else lines[0].split(". Consider ")[0]  # less Spark's config tips


def _looks_like_python_error(line: str) -> bool:
    name, sep, _ = line.partition(": ")
    return bool(sep) and name.isidentifier() and (name.endswith("Error") or name.endswith("Exception"))


def warm_up_parquet(spark: SparkSession) -> None:
    """Write and drop a one-row Parquet dataset: the first write in a JVM loads seconds' worth of code."""
    import tempfile

    scratch = tempfile.mkdtemp(prefix="rstck-spark-warm-")
    try:
        run_bounded(spark, new_group("warm-up"), JOB_TIMEOUT_S,
                    lambda: spark.range(1).write.parquet(os.path.join(scratch, "warm-up")), "a first Parquet write")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# -- bounded jobs --------------------------------------------------------------------------------

_groups = itertools.count(1)


def new_group(kind: str) -> str:
    return f"rstck-{kind}-{os.getpid()}-{next(_groups)}-{uuid.uuid4().hex[:8]}"


def run_bounded(spark: SparkSession, group: str, timeout_s: float, call: Callable[[], Any], what: str) -> Any:
    """Run `call` (which starts Spark jobs) on this thread in job group `group`; a watchdog cancels the
    group after `timeout_s`. Whatever fails becomes SparkJobFailed with the innermost cause."""
    context = spark.sparkContext
    expired = threading.Event()

    def cancel() -> None:
        expired.set()
        context.cancelJobGroup(group)

    watchdog = threading.Timer(timeout_s, cancel)
    watchdog.daemon = True
    context.setJobGroup(group, what, interruptOnCancel=True)
    watchdog.start()
    try:
        return call()
    except Exception as exc:
        if expired.is_set():
            raise SparkJobFailed(f"{what} did not finish within {timeout_s:g} s; its jobs were cancelled") from exc
        raise SparkJobFailed(f"{what} failed: {one_line(exc)}") from exc
    finally:
        watchdog.cancel()
        try:
            context._jsc.clearJobGroup()
        except Exception:  # noqa: BLE001 - the session is gone: nothing left to clear
            pass

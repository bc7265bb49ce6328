"""With a Spark session running in the process, the jvm adapter checks Java classes in Spark's JVM (the user's
classpath and the kit's bridge loaded there) instead of starting a JVM of its own: the references pass, a mutant is
caught on its item, a request made inside onNext stays on the Java thread that delivered it, an error the kit raises
in a callback reaches Java as a real Java exception, and Spark's own threads are not read as the implementation's.
The session is the one every Spark test shares (tests/spark/helpers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from rstck.adapters.jvm.target import JvmTarget
from rstck.execution.plan import plan
from rstck.execution.runner import run_check

from .checking import assert_a_request_inside_on_next_runs_nested

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.fixture(scope="module")
def spark_jvm(java_classes):
    """Spark's JVM as the adapter gets it, once the shared session runs."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")
    from pyspark import SparkContext

    from rstck.protocols.jvm.process import SparkJvm, shared_jvm

    from ..spark.helpers import shared_session

    shared_session()
    jvm = shared_jvm([java_classes])
    assert isinstance(jvm, SparkJvm) and jvm.gateway is SparkContext._active_spark_context._gateway
    return jvm


def java_children() -> set[int]:
    """The process ids of this process's child processes that run java."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                name, _, rest = stat.read().partition("(")[2].rpartition(")")
        except (OSError, ValueError):
            continue
        if name == "java" and int(rest.split()[1]) == os.getpid():
            found.add(int(entry))
    return found


def charged(classpath: str | list[str], class_name: str, rules: str) -> list[tuple[str, str, str, str]]:
    """The fail, warn and error results of the checks of `rules`, run in this process."""
    classpath = [classpath] if isinstance(classpath, str) else classpath
    results = [run_check(p.check, p.target) for p in plan(JvmTarget(class_name, classpath=classpath), rules=rules)]
    assert results
    return [(r.verdict.value, r.rule, r.check, r.reason) for r in results
            if r.verdict.value in ("fail", "warn", "error")]


def test_the_references_pass_and_a_mutant_is_caught_in_sparks_jvm_with_no_second_jvm(spark_jvm, java_classes):
    before = java_children()
    assert before, "Spark's JVM is not a child of this process"
    assert charged(java_classes, "Publishers$Range", "1.1,1.9,2.13,3.3,3.9,3.13,3.16,3.17") == []
    assert charged(java_classes, "Subscribers$Batched", "2.1,2.5,2.8,2.9,3.1") == []
    assert [(verdict, rule) for verdict, rule, *_ in charged(java_classes, "Publishers$RequestThrows", "3.16")] == [
        ("fail", "3.16")]
    assert java_children() == before


def test_a_request_inside_on_next_runs_nested_on_the_java_thread_that_delivered_it(spark_jvm):
    assert_a_request_inside_on_next_runs_nested(spark_jvm)


def test_sparks_threads_are_not_the_implementations_while_a_job_runs(spark_jvm, java_classes):
    """A Spark job runs meanwhile: its task and pool threads, which run Spark's code, are not read as the
    implementation's (a thread at the very start of its life, running only the JDK's code, is), and a check run
    then passes."""
    from rstck.protocols.jvm.threads import java_threads

    from ..spark.helpers import shared_session

    spark = shared_session()
    done, jobs = threading.Event(), []
    read_as_implementations: set[str] = set()

    def run_jobs() -> None:
        while not done.is_set():
            jobs.append(spark.range(0, 200_000, numPartitions=4).selectExpr("sum(id % 7)").collect()[0][0])

    runner = threading.Thread(target=run_jobs, daemon=True)
    runner.start()
    try:
        while not jobs and runner.is_alive():  # read the threads throughout the first job
            read_as_implementations.update(f"{t.name} ({t.kind} at {t.where})" for t in java_threads(spark_jvm.bridge)
                                           if t.where and not t.where.startswith("java.base"))
        assert charged(java_classes, "Publishers$Range", "1.1,3.9") == []
    finally:
        done.set()
        runner.join()
    assert jobs and not read_as_implementations, read_as_implementations


def test_an_error_the_kit_raises_in_a_callback_crosses_as_a_real_java_exception(spark_jvm):
    """PySpark's gateway leaves propagate_java_exceptions off, which would make it a py4j.Py4JException."""
    from rstck.protocols.jvm.errors import thrown_in_java

    class Failing:
        def call(self) -> None:
            raise thrown_in_java(spark_jvm.bridge, TypeError("on purpose"))

        class Java:
            implements = ["java.util.concurrent.Callable"]

    task = spark_jvm.jvm.java.util.concurrent.FutureTask(Failing())
    task.run()
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError) as raised:
        task.get()
    assert raised.value.java_exception.getCause().getClass().getName() == "java.lang.NullPointerException"


def test_classes_spark_also_has_and_the_reactive_streams_interfaces_work_from_the_users_classpath(
        spark_jvm, java_classes, tmp_path):
    """Netty's classes, which Spark's jars have too (Spark's copies run: the kit's loader asks Spark's first), are
    the user's library's all the same, so the event loop threads the library starts are the implementation's; and
    the kit's proxies implement org.reactivestreams interfaces that only the user's classpath has."""
    from rstck.protocols.jvm.threads import java_threads

    from .real.conftest import DEBIAN_JARS, HERE, why_no_debian_jars

    reason = why_no_debian_jars()
    if reason:
        pytest.skip(reason)
    classpath = [java_classes, *DEBIAN_JARS]
    sources = [str(HERE / name) for name in ("AdaptedPublishers.java", "NettyPublishers.java")]
    subprocess.run(["javac", "-nowarn", "-d", str(tmp_path), "-cp", os.pathsep.join(classpath), *sources],
                   check=True, capture_output=True)
    classpath.insert(0, str(tmp_path))
    assert charged(classpath, "NettyPublishers$Handler", "1.9,3.9") == []
    loops = [t.name for t in java_threads(spark_jvm.bridge) if t.name.startswith("netty-loop-")]
    assert len(loops) == 2, loops  # the library's DefaultEventLoopGroup(2), NettyPublishers.java
    assert charged(classpath, "AdaptedPublishers$ToReactive", "1.1,1.9") == []


UNPINNED_SESSION = """
import sys
from rstck.protocols.spark import spark_session
from rstck.protocols.jvm.process import JvmProcess, shared_jvm
from rstck.adapters.jvm.target import JvmTarget
from rstck.execution.plan import plan
from rstck.execution.runner import run_check

spark_session("local[1]")
assert all(isinstance(shared_jvm([sys.argv[1]]), JvmProcess) for _ in range(2))
results = [run_check(p.check, p.target) for p in plan(JvmTarget("Publishers$Range", classpath=[sys.argv[1]]),
                                                       rules="3.3")]
assert results and all(r.verdict.value == "pass" for r in results), [(r.verdict.value, r.reason) for r in results]
"""


@pytest.mark.soak  # a Spark session of its own, in a process of its own: about 10 s
def test_without_pinned_threads_the_kit_starts_its_own_jvm_and_says_why_once(java_classes):
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")
    run = subprocess.run([sys.executable, "-c", UNPINNED_SESSION, java_classes], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYSPARK_PIN_THREAD": "false"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr.count("rstck: the jvm adapter starts a JVM of its own") == 1, run.stderr[-3000:]
    assert "PYSPARK_PIN_THREAD=false" in run.stderr

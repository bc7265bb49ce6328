"""No Java, a master that does not answer, a session that does not start in time: one clear line, at
once, never a hang. These start no JVM (the checks come first), so they run in subprocesses of their own."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from rstck.protocols.spark import SparkUnavailable, _start_within

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

BOUND_S = 30  # each command must be done well within this
TARGET = "rstck.reference.spark_targets:spark_publisher"
RSTCK = "import sys; from rstck.cli import main; sys.exit(main())"


def rstck(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RSTCK, *args], capture_output=True, text=True, timeout=BOUND_S,
                          env={**os.environ, **(env or {})})


def test_a_missing_java_is_one_line_for_every_spark_command(tmp_path):
    no_java = {"JAVA_HOME": str(tmp_path / "nowhere"),
               "PATH": os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                                       if not os.path.exists(os.path.join(d, "java")))}
    for command in (["check", TARGET], ["fuzz", "tests.zoo.cli_targets:excess_on_next", "--engine", "spark"],
                    ["report", "--engine", "spark", str(tmp_path)]):
        (tmp_path / "rows.jsonl").write_text("")
        done = rstck(*command, env=no_java)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.strip().splitlines() == [
            f"rstck: Spark needs Java 17 or later: JAVA_HOME is {tmp_path / 'nowhere'}, which has no bin/java; "
            "point JAVA_HOME at a JDK or unset it"]


def test_a_master_that_does_not_answer_is_one_line_at_once():
    started = time.monotonic()
    done = rstck("check", TARGET, "--spark-master", "spark://127.0.0.1:9")
    assert time.monotonic() - started < 15
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith(
        "rstck: Spark master spark://127.0.0.1:9 does not answer (127.0.0.1:9: Connection refused")


def test_a_session_that_does_not_start_in_time_is_given_up():
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(SparkUnavailable, match=r"the Spark session \(spark://h:7077\) did not start within 0.2 s"):
        _start_within(lambda: release.wait(30), "spark://h:7077", 0.2)
    assert time.monotonic() - started < 5
    release.set()

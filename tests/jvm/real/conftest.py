"""Real JVM libraries' factories (tests/jvm/real/*.java), compiled once per session against Debian's jars."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from ...debian_packages import why_missing

HERE = pathlib.Path(__file__).resolve().parent
UNAVAILABLE_NOTE = HERE.parents[2] / ".rstck" / "java-packages-unavailable"
DEBIAN_JARS = [f"/usr/share/java/{name}.jar" for name in (
    "reactive-streams", "netty-reactive-streams", "netty-transport", "netty-buffer", "netty-common", "netty-resolver")]


def why_no_debian_jars() -> str | None:
    return why_missing(DEBIAN_JARS, needs="the real JVM libraries' tests", what="Debian's jars",
                       installer=".ci/install-java-packages", note=UNAVAILABLE_NOTE)


@pytest.fixture(scope="session")
def real_classpath(java_classes, tmp_path_factory) -> str:
    """The compiled factories, the project's Java references they wrap, and the Debian jars, as a classpath."""
    reason = why_no_debian_jars()
    if reason:
        pytest.skip(reason)
    out = str(tmp_path_factory.mktemp("real-java-classes"))
    classpath = os.pathsep.join([java_classes, *DEBIAN_JARS])
    sources = sorted(str(path) for path in HERE.glob("*.java"))
    subprocess.run(["javac", "-nowarn", "-d", out, "-cp", classpath, *sources], check=True, capture_output=True)
    return os.pathsep.join([out, classpath])

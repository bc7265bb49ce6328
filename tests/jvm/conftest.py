"""The JVM adapter's tests: Java sources compiled once per session with javac; skipped where no JDK is."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

JAVA_SOURCES = os.path.join(os.path.dirname(__file__), "java")


def pytest_configure(config):
    config.addinivalue_line("markers",
                            "jvm: checks Java implementations through a JVM (skipped where a JDK is missing)")


def pytest_collection_modifyitems(items):
    for item in items:
        if str(item.fspath).startswith(os.path.dirname(__file__)):
            item.add_marker(pytest.mark.jvm)
            if item.get_closest_marker("xdist_group") is None:  # Spark's tests keep to the worker with the session
                item.add_marker(pytest.mark.xdist_group("jvm"))  # the JVM tests share one worker's JVM and classes


@pytest.fixture(scope="session")
def java_classes(tmp_path_factory) -> str:
    if not (shutil.which("java") and shutil.which("javac")):
        pytest.skip("java and javac are not on PATH")
    pytest.importorskip("py4j")
    out = str(tmp_path_factory.mktemp("java-classes"))
    sources = [os.path.join(JAVA_SOURCES, name) for name in os.listdir(JAVA_SOURCES) if name.endswith(".java")]
    subprocess.run(["javac", "-nowarn", "-d", out, *sources], check=True, capture_output=True)
    return out

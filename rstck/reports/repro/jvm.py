"""A reproducer for a jvm: target: the Python script an in-process target gets (python.py: the scenario, the kit's
recording subscriber, source, observer and verdict, python_runtime.py), whose factories are the Java class's, called
through py4j in a JVM the script starts itself (jvm_runtime.py). It drives a Java publisher, subscriber (black or
white box) or processor; it needs the user's classes or jars, a JDK and py4j; no rstck."""

from __future__ import annotations

import os
import pathlib
from typing import Any

from rstck.reports.repro.python import INDENT, RUNTIME, Python, _races, runtime_for
from rstck.reports.repro.scenario import CannotWrite, body

JVM_RUNTIME = pathlib.Path(__file__).with_name("jvm_runtime.py")
# What jvm_runtime.py's JvmFactories makes (the keys of JVM_FACTORIES there): the factory names rstck's JVM adapter
# calls, as a trace shows them.
SCRIPTED_FACTORIES = frozenset({
    "createFlowPublisher", "createPublisher", "createFailedFlowPublisher", "createFailedPublisher",
    "createFlowSubscriber", "createSubscriber", "createWhiteboxFlowSubscriber", "createWhiteboxSubscriber",
    "createIdentityFlowProcessor", "createIdentityProcessor"})
CLASSPATH_ENV = "RSTCK_CLASSPATH"  # where the run that found it had its classpath (the jvm adapter's --classpath)


def render(evidence: dict[str, Any], *, header: str, target: str, rule: str) -> str:
    """The whole script; the classpath is the run's, as absolute paths (the script may be run from anywhere)."""
    unscripted = sorted({op["factory"] for op in evidence["ops"] if op["op"] == "make"} - SCRIPTED_FACTORIES)
    if unscripted:
        raise CannotWrite(f"a call of {unscripted[0]}, which the scripts of jvm: targets do not make")
    lines = body(evidence, Python())
    scenario = "def scenario(target):\n" + "\n".join(INDENT + line if line else "" for line in lines)
    classpath = [os.path.abspath(entry) for entry in os.environ.get(CLASSPATH_ENV, "").split(os.pathsep) if entry]
    config = (f"target={target!r}, rule={rule!r}, deadline_s={evidence['deadline_s']!r}, "
              f"responsiveness_bound_s={evidence['responsiveness_bound_s']!r}, load=jvm_target, "
              f"classpath={classpath!r}" + (", attempts=3" if _races(scenario, rule) else ""))
    jvm_side = JVM_RUNTIME.read_text()
    python_side = runtime_for(f"{scenario}\n{jvm_side}\nmain(scenario, {config})", RUNTIME)
    header += (f"\nThe classpath is the one rstck ran with (below, in main's call), unless ${CLASSPATH_ENV} names "
               "another.\n")
    return (f'#!/usr/bin/env python3\n"""{header}"""\n\n\n{scenario}\n\n\n{python_side}\n\n{jvm_side}\n\n'
            f'if __name__ == "__main__":\n    main(scenario, {config})\n')

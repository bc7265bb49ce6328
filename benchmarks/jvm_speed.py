"""What a full verification of a JVM publisher costs, against baselines measured in the same run.

    python benchmarks/jvm_speed.py [--runs N]

Compiles the kit's JVM reference publisher (rstck/reference/jvm/RangePublishers.java) with javac, then for each of its
two styles (Range: a drain loop on the caller's thread; Async: an executor per subscription):

- `rstck check jvm:RangePublishers$STYLE --no-fuzz`: the wall time of the command a user runs (the process, the
  JVM's start, every check, the report);
- the same checks in this process, settled as shipped (settling reads the Java threads' states);
- the same checks with a fixed 100 ms wait in place of every settle, which is how the JVM TCK decides that nothing
  more arrives (its `noSignalsTimeout`): the JVM TCK is not available here, so this stands for its waiting;

and, as a second baseline, `rstck check` of the Python reference publishers (sync and threaded) on the same machine.
Prints each time (the median of --runs for the commands) and the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_speed import FIXED_DELAY_DEADLINE_S, FIXED_DELAY_S, _shown, fixed_delay, run_verification  # noqa: E402

from rstck.core.target import load_target  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "rstck", "reference", "jvm", "RangePublishers.java")
STYLES = ("Range", "Async")
PYTHON_REFERENCES = ("rstck.reference.targets:sync_publisher", "rstck.reference.targets:threaded_publisher")
RSTCK = os.path.join(os.path.dirname(sys.executable), "rstck")


def command_wall_s(arguments: list[str], runs: int) -> float:
    """The median wall time of `rstck check ARGUMENTS --no-fuzz` (it must pass: the verification completed)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([RSTCK, "check", *arguments, "--no-fuzz"], capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"rstck check {' '.join(arguments)} did not pass:\n{done.stdout[-2000:]}")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each command, the median shown (default 3)")
    args = parser.parse_args(argv)
    classes = tempfile.mkdtemp(prefix="rstck-jvm-speed-")
    subprocess.run(["javac", "-nowarn", "-d", classes, SOURCE], check=True)
    os.environ["RSTCK_CLASSPATH"] = classes  # what --classpath sets, for the checks run in this process
    python_s = {spec: command_wall_s([spec], args.runs) for spec in PYTHON_REFERENCES}
    for style in STYLES:
        spec = f"jvm:RangePublishers${style}"
        command_s = command_wall_s([spec, "--classpath", classes], args.runs)
        target = load_target(spec)
        target.prepare()  # the JVM started outside the timed runs, as a check's deadline leaves it out
        settled_s, settled_verdicts = run_verification(target)
        with fixed_delay(target, FIXED_DELAY_S):
            fixed_s, fixed_verdicts = run_verification(target, FIXED_DELAY_DEADLINE_S)
        print(f"{spec}: {sum(settled_verdicts.values())} checks")
        print(f"  rstck check (the command):  {command_s:8.3f} s  (median of {args.runs})")
        print(f"  settled, in process:        {settled_s:8.3f} s  {_shown(settled_verdicts)}")
        print(f"  fixed {FIXED_DELAY_S * 1000:.0f} ms quiet, in process: {fixed_s:6.3f} s  {_shown(fixed_verdicts)}")
        if fixed_verdicts != settled_verdicts:
            print("  note: the verdicts differ, so the two runs did not do the same work")
        print(f"  ratio fixed / settled:      {fixed_s / settled_s:8.1f}x")
        print(f"  ratio fixed / the command:  {fixed_s / command_s:8.1f}x")
        for reference, seconds in python_s.items():
            print(f"  the command / rstck check {reference.split(':')[1]} (Python): {command_s / seconds:5.1f}x "
                  f"({seconds:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

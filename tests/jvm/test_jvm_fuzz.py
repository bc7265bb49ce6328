"""`rstck fuzz jvm:CLASS --classpath DIR`: the fuzzer finds a Java mutant's fault, replays it with the command it
prints, passes the Java references, and leaves no JVM of its worker processes running once it returned."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

import pytest

RSTCK = os.path.join(os.path.dirname(sys.executable), "rstck")
# How long a JVM may take to see its parent gone (its stdin closed) and halt: a bound, not a wait.
JVM_END_BOUND_S = 10.0


def fuzz(classes: str, factory: str, *options: str, cwd) -> subprocess.CompletedProcess:
    command = [RSTCK, "fuzz", f"jvm:Publishers${factory}", "--classpath", classes, "--database", "none", *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=cwd)


def jvms_naming(marker: str) -> list[int]:
    """The processes whose command line holds `marker` (an entry of the classpath only this test uses)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(pid))
        except OSError:  # ended while listed
            pass
    return found


def test_the_fuzzer_finds_a_mutants_fault_and_its_replay_command_shows_it_again(java_classes, tmp_path):
    done = fuzz(java_classes, "SignalAfterTerminal", "--seed", "1", "--examples", "30", "--results",
                str(tmp_path / "results"), cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    rows = [json.loads(line) for path in (tmp_path / "results").glob("*.jsonl") for line in path.read_text().splitlines()]
    assert {row["rule"] for row in rows if row.get("verdict") == "fail"} == {"1.7"}
    printed = done.stdout + done.stderr
    replay = next(line.split("replay: ", 1)[1] for line in printed.splitlines() if "replay: " in line)
    assert f"--classpath {java_classes}" in replay  # the command names the classpath, as `rstck check`'s do
    again = subprocess.run([RSTCK, *shlex.split(replay)[1:], "--database", "none"], capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)
    assert again.returncode == 1 and "violation: 1.7" in again.stdout + again.stderr, again.stderr[-2000:]


@pytest.mark.parametrize("factory", ["Range", "Async"])
def test_a_reference_passes_a_seeded_run_on_two_workers_and_no_jvm_outlives_it(java_classes, tmp_path, factory):
    marker = str(tmp_path / "marks-this-tests-jvms")  # an absent directory: the JVM ignores it
    done = fuzz(f"{java_classes}{os.pathsep}{marker}", factory, "--seed", "0", "--examples", "40", "--jobs", "2",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no violation" in done.stdout + done.stderr
    deadline = time.monotonic() + JVM_END_BOUND_S
    while jvms_naming(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not jvms_naming(marker), "a JVM of the run outlived it"


def test_rstck_check_runs_the_fuzz_phase_and_it_finds_the_mutants_fault(java_classes, tmp_path):
    """Fuzz rows carry their replay command: the fuzz phase ran after the checks and found 1.1 on its own."""
    command = [RSTCK, "check", "jvm:Publishers$OverDelivery", "--classpath", java_classes, "--fuzz-examples", "30",
               "--results", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    fuzzed = [row for row in rows if row.get("verdict") == "fail" and row.get("replay")]
    assert done.returncode == 1 and {row["rule"] for row in fuzzed} == {"1.1"}, done.stdout[-2000:]

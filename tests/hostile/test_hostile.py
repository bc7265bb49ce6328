"""Every run ends, with a verdict per check, in bounded time and memory, the fault charged to the target.

Each case runs `rstck check` (or pytest) against one hostile target in a process of its own, through
a small wrapper that reports the peak memory of the whole process tree. Deadlines are short (the
cases are about the kit's behaviour, not the target's speed); the bounds asserted on wall time are
generous upper limits, never what decides a verdict.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from rstck.execution.plan import plan

from .targets import CASES

pytestmark = pytest.mark.hostile

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
TRACEBACK = "Traceback (most recent call last)"
MiB = 2**20

# Runs a command, then prints the largest resident set of any process in its tree (ru_maxrss, KiB).
_MEASURED = ("import resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[1:])\n"
             "print(f'\\nPEAK-RSS-KiB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr)\n"
             "sys.exit(done.returncode)\n")


class Run:
    def __init__(self, done: subprocess.CompletedProcess, elapsed: float, results: pathlib.Path | None):
        self.code = done.returncode
        self.out, err = done.stdout, done.stderr
        self.err, _, peak = err.rpartition("\nPEAK-RSS-KiB ")
        self.peak_bytes = int(peak.strip() or 0) * 1024
        self.elapsed = elapsed
        self.rows = [json.loads(line) for path in sorted(results.glob("*.jsonl"))
                     for line in path.read_text(encoding="utf-8").splitlines()] if results else []

    def verdicts(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for row in self.rows:
            found.setdefault(row["verdict"], set()).add(row["violated"] or row["rule"])
        return found

    @property
    def text(self) -> str:
        return self.out + self.err


def rstck_check(tmp_path: pathlib.Path, case: str, *options: str, limit_s: float = 60) -> Run:
    results = tmp_path / "results"
    command = [sys.executable, "-c", _MEASURED, sys.executable, "-m", "rstck.cli", "check",
               f"tests.hostile.targets:{case}", "--no-fuzz", "--results", str(results), *options]
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=limit_s,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return Run(done, time.monotonic() - started, results)


def planned_checks(case: str, rules: str | None = None) -> int:
    """How many checks `rstck check` plans for the case: each must get its row."""
    return len(plan(CASES[case](), rules=rules))


def assert_no_kit_failure(run: Run) -> None:
    assert TRACEBACK not in run.text, run.text[-3000:]
    assert "the kit broke" not in run.text, run.text[-3000:]


def test_every_case_is_covered_here():
    tested = {name for name in globals() if name.startswith("test_")}
    covered = set(BASE_EXCEPTIONS) | set(TAMPERING) | {case for case in CASES if any(case in name for name in tested)}
    assert set(CASES) - covered == set()


# -- runs that never end --------------------------------------------------------------------------


def test_deadlock_between_request_and_on_next(tmp_path):
    run = rstck_check(tmp_path, "deadlock_between_request_and_on_next", "--rules", "1.1,3.16", "--timeout", "1")
    assert run.code == 1
    assert run.verdicts()["fail"] & {"3.16", "3.2", "1.1"}
    assert_no_kit_failure(run)


def test_deadlock_under_pytest_ends_after_the_summary_and_names_the_threads(tmp_path):
    # Run from an empty directory so that pytest collects only the plugin's checks, not this suite.
    command = [sys.executable, "-m", "pytest", str(tmp_path), "--rootdir", str(tmp_path), "-c", os.devnull,
               "--rstck-target", "tests.hostile.targets:deadlock_between_request_and_on_next",
               "--rstck-rules", "1.1", "--rstck-timeout", "1", "-p", "no:cacheprovider", "-q", "-m", "not fuzz"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=90,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stdout[-2000:]
    assert "failed" in done.stdout
    assert "left behind by the implementations under test" in done.stderr and "hostile-deadlock" in done.stderr


@pytest.mark.parametrize("case", ["deadlock_between_request_and_on_next", "delivers_forever_after_cancel"])
def test_fuzz_campaign_ends_despite_threads_stuck_in_its_worker(case):
    # The worker process would join the target's stuck non-daemon threads for ever, and the
    # campaign would wait for the worker.
    command = [sys.executable, "-m", "rstck.cli", "fuzz", f"tests.hostile.targets:{case}", "--examples", "5",
               "--jobs", "1", "--timeout", "1", "--database", "none", "--seed", "1"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=90,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode in (0, 1), done.stderr[-2000:]  # a verdict: violated or not in 5 examples
    assert "its worker process was ended" in done.stderr and "hostile-" in done.stderr
    assert TRACEBACK not in done.stdout + done.stderr


def test_delivers_forever_after_cancel(tmp_path):
    run = rstck_check(tmp_path, "delivers_forever_after_cancel", "--rules", "1.1,1.8,3.12", "--timeout", "1")
    assert run.code == 1
    assert run.verdicts()["fail"] & {"1.1", "1.8"}
    assert run.peak_bytes < 300 * MiB
    assert_no_kit_failure(run)


# -- a hang costs once --------------------------------------------------------------------------


# Ten checks of four rules, every one of which calls request: after the first, each hang costs the kit's
# KNOWN_HANG_S (0.25 s) whatever the plan, so the whole plan (57 checks, 48 of them hang, 13 s) shows nothing more
# than the suite's run; `make soak` runs the whole plan too.
HANGING_RULES = "1.1,3.9,3.16,3.17"


@pytest.mark.parametrize("rules", [HANGING_RULES, pytest.param(None, marks=pytest.mark.soak, id="the whole plan")])
def test_request_never_returns_costs_its_deadline_once(tmp_path, rules):
    run = rstck_check(tmp_path, "request_never_returns", *(["--rules", rules] if rules else []), "--timeout", "1")
    assert run.code == 1
    planned = json.loads(json.dumps(run.rows))
    assert len(planned) == planned_checks("request_never_returns", rules)
    assert all(row["verdict"] for row in planned)
    hangs = [row for row in run.rows if row["timed_out"]]
    assert len(hangs) > 5 and all("request" in row["reason"] for row in hangs)
    # the first costs its deadline; the later ones recognised it
    assert sum("never returned in" not in row["reason"] for row in hangs) == 1
    assert run.elapsed < 40
    assert_no_kit_failure(run)


def test_infinite_synchronous(tmp_path):
    run = rstck_check(tmp_path, "infinite_synchronous", "--rules", "1.1,3.16,3.17", "--timeout", "1")
    assert run.code == 1
    assert run.verdicts()["fail"] & {"1.1", "3.16", "3.17"}
    assert run.peak_bytes < 300 * MiB
    assert_no_kit_failure(run)


# -- long streams and huge elements -----------------------------------------------------------------


def test_million_elements_conformant_in_the_stress_mode(tmp_path):
    run = rstck_check(tmp_path, "million_elements_conformant", "--rules", "1.1", "--stream-length", "1000000",
                      limit_s=120)
    assert run.code == 0, run.out[-3000:]
    assert run.peak_bytes < 300 * MiB
    assert_no_kit_failure(run)


def test_huge_elements(tmp_path):
    run = rstck_check(tmp_path, "huge_elements", "--rules", "1.1,1.3,3.5,3.16,3.17")
    assert run.code == 0, run.out[-3000:]
    assert run.peak_bytes < 600 * MiB  # one 100 MB element, never copied nor rendered in full
    assert_no_kit_failure(run)


# -- every fault charged to its author --------------------------------------------------------------

BASE_EXCEPTIONS = {
    "keyboard_interrupt_in_request": ({"3.16", "3.2"}, 1),
    "system_exit_in_subscribe": ({"1.9"}, 1),
    "generator_exit_in_cancel": ({"3.15", "3.5"}, 1),
    "keyboard_interrupt_in_on_subscribe": ({"2.13"}, 1),
}


@pytest.mark.parametrize("case", BASE_EXCEPTIONS)
def test_base_exceptions_from_target_code_are_the_targets(tmp_path, case):
    rules, code = BASE_EXCEPTIONS[case]
    run = rstck_check(tmp_path, case, "--timeout", "1")
    assert run.code == code
    assert run.verdicts()["fail"] & rules
    assert_no_kit_failure(run)


def test_system_exit_in_factory_is_a_target_error(tmp_path):
    run = rstck_check(tmp_path, "system_exit_in_factory", "--rules", "1.1")
    assert run.code == 2
    assert all(row["verdict"] == "error" and "create_publisher" in row["reason"] for row in run.rows)
    assert_no_kit_failure(run)


def test_keyboard_interrupt_in_element_repr_is_never_run(tmp_path):
    run = rstck_check(tmp_path, "keyboard_interrupt_in_element_repr", "--rules", "1.*,3.9")
    assert run.code == 0
    assert_no_kit_failure(run)


def test_exception_whose_str_raises(tmp_path):
    run = rstck_check(tmp_path, "exception_whose_str_raises", "--rules", "3.9*,3.16,3.17", "--timeout", "1")
    assert run.code == 1
    assert_no_kit_failure(run)


def test_factory_returns_42(tmp_path):
    run = rstck_check(tmp_path, "factory_returns_42", "--rules", "1.1,1.9")
    assert run.code == 2
    ran = [row for row in run.rows if row["verdict"] != "n/a"]
    assert ran and all(row["verdict"] == "error" and "create_publisher" in row["reason"] and "returned 42" in row["reason"]
                       for row in ran)


def test_factory_blocks(tmp_path):
    run = rstck_check(tmp_path, "factory_blocks", "--rules", "1.1,1.9", "--timeout", "0.5")
    assert run.code == 2
    ran = [row for row in run.rows if row["verdict"] != "n/a"]
    assert ran and all(row["verdict"] == "error" and "create_publisher" in row["reason"] for row in ran)
    assert_no_kit_failure(run)


def test_over_delivers_then_hangs_shows_the_violation_first(tmp_path):
    run = rstck_check(tmp_path, "over_delivers_then_hangs", "--rules", "1.1", "--timeout", "1")
    assert run.code == 1
    shown = [row for row in run.rows if row["violated"] == "1.1" and "then:" in row["message"]]
    assert shown, run.out[-3000:]
    violation, hang = shown[0]["message"].split("then:")
    assert "on_next number 2" in violation and "request" in hang and "deadline" in hang
    assert_no_kit_failure(run)


# -- the process survives its target ----------------------------------------------------------------


def test_exits_the_process_in_request(tmp_path):
    run = rstck_check(tmp_path, "exits_the_process_in_request", "--rules", "1.1,1.2,1.3,3.16,3.17")
    assert run.code == 2
    died = [row for row in run.rows if "ended the process (exit 3)" in row["reason"]]
    assert died and all("request" in row["reason"] for row in died)
    assert len(run.rows) == planned_checks("exits_the_process_in_request", "1.1,1.2,1.3,3.16,3.17")  # every check got its row
    assert_no_kit_failure(run)


def test_ctrl_c_stops_the_run_cleanly_with_the_rows_so_far(tmp_path):
    results = tmp_path / "results"
    process = subprocess.Popen([sys.executable, "-m", "rstck.cli", "check", "tests.hostile.targets:request_never_returns",
                                "--no-fuzz", "--timeout", "1", "--results", str(results)], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while not list(results.glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)  # waiting for the first row, not deciding anything
    os.killpg(process.pid, signal.SIGINT)  # the terminal's Ctrl-C reaches the whole group
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, (out[-2000:], err[-2000:])
    assert "interrupted" in out
    assert list(results.glob("*.jsonl"))[0].read_text(encoding="utf-8").strip()
    assert TRACEBACK not in out + err


# -- output ---------------------------------------------------------------------------------------


def test_escape_sequences_never_reach_the_terminal(tmp_path):
    run = rstck_check(tmp_path, "escape_sequences", "--timeout", "1")
    assert run.code == 1
    assert "\x1b" not in run.out and "\x1b" not in run.err and "\x07" not in run.out
    assert "\\x1b" in run.out  # shown, escaped


def test_uncaught_exception_in_its_thread_goes_into_the_trace(tmp_path):
    run = rstck_check(tmp_path, "uncaught_exception_in_its_thread", "--rules", "1.1,1.5,3.17")
    assert run.code == 0, run.out[-2000:]
    assert TRACEBACK not in run.err


# -- a target that tampers with the process --------------------------------------------------------


TAMPERING = ["closes_stdout", "changes_working_directory", "installs_its_own_hooks", "monkeypatches_threading"]


@pytest.mark.parametrize("case", TAMPERING)
def test_a_target_that_tampers_with_the_process(tmp_path, case):
    run = rstck_check(tmp_path, case, "--rules", "1.*,3.5,3.9")
    assert run.code == 0, run.text[-3000:]
    assert "conformant" in run.out
    assert_no_kit_failure(run)

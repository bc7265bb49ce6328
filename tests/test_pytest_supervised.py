"""The pytest route runs its checks in a supervised worker process, as `rstck check` does: a target that ends
the process gets an `error` item naming the call it was in, and pytest goes on and prints its summary."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

from rstck.execution.plan import plan, planned_info
from rstck.execution.supervise import CheckWorker
from rstck.core.target import load_target

REPO = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = "rstck.reference.targets:sync_publisher"
ENDER = "tests.zoo.process_enders:exits_on_request_zero"
RULES = "3.9,1.1,3.17"  # 3.9's checks call request(0), which ends the process; 1.1's and 3.17's do not

VERIFICATION_MODULE = """
import rstck
from tests.zoo.process_enders import exits_on_request_zero


class TestEndsTheProcess(rstck.PublisherVerification):
    target = exits_on_request_zero
    rules = "3.9,1.1,3.17"
"""


def run_pytest(directory: pathlib.Path, *args: str, markers: str = "not fuzz", **env: str) -> subprocess.CompletedProcess:
    """pytest in a process of its own (the target may end it), from an empty directory so that it collects
    only what it is given, not this suite; prints `pytest pid N` first."""
    command = [sys.executable, "-c", PYTEST_SAYING_ITS_PID, "--rootdir", str(directory), "-c", os.devnull,
               "-p", "no:randomly", "-p", "no:cacheprovider", *(["-m", markers] if markers else []), "-rA", *args]
    return subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env})


PYTEST_SAYING_ITS_PID = "import os, sys, pytest; print('pytest pid', os.getpid(), flush=True); sys.exit(pytest.main())"


def outcome_lines(stdout: str, word: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(f"{word} ")]


def assert_supervised(done: subprocess.CompletedProcess, prefix: str) -> None:
    shown = f"exit {done.returncode}\nstdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-2000:]}"
    assert done.returncode == 1, shown  # failures and errors, not the target's own exit status 3
    assert re.search(r"=+ .*\b2 errors?\b.* in [\d.]+s", done.stdout), shown  # the summary line
    errors = outcome_lines(done.stdout, "ERROR")
    assert len(errors) == 2, shown
    assert all(f"{prefix}3.9-request_zero" in line for line in errors), shown
    # each of them ran in a worker that the target ended, and says so naming the call it was in
    # (the lines of the ERRORS section: the short summary repeats them, in full where pytest sees CI=true)
    died = "error: the target ended the process (exit 3) during sub#1.request(0)"
    assert sum(line == died for line in done.stdout.splitlines()) == 2, shown
    passed = outcome_lines(done.stdout, "PASSED")
    assert any(f"{prefix}1.1-" in line for line in passed), shown  # checks after a death ran in a fresh worker
    assert any(f"{prefix}3.17-" in line for line in passed), shown
    assert not outcome_lines(done.stdout, "FAILED"), shown


def test_a_target_that_ends_the_process_under_rstck_target_is_an_error_and_pytest_goes_on(tmp_path):
    done = run_pytest(tmp_path, "--rstck-target", ENDER, "--rstck-rules", RULES, "--rstck-results", "rows")
    assert_supervised(done, f"rstck[{ENDER}]::")
    (written,) = (tmp_path / "rows").glob("*.jsonl")  # named by the xdist worker running this test, if any
    rows = [json.loads(line) for line in written.read_text("utf-8").splitlines()]
    errors = [row for row in rows if row["verdict"] == "error"]  # the rows `rstck check` writes for them
    assert [(row["rule"], row["reason"]) for row in errors] == [
        ("3.9", "the target ended the process (exit 3) during sub#1.request(0)")] * 2
    assert len(rows) == 9 and all(row["node_id"].startswith(f"rstck[{ENDER}]::") for row in rows)


def test_the_fuzz_item_of_a_target_that_ends_the_process_is_an_error_and_pytest_goes_on(tmp_path):
    # The plain command, checks and fuzz item alike: the fuzzer's request(0) ends the process its shard runs in.
    done = run_pytest(tmp_path, "--rstck-target", ENDER, markers="")
    shown = f"exit {done.returncode}\nstdout:\n{done.stdout[-6000:]}\nstderr:\n{done.stderr[-2000:]}"
    assert done.returncode == 1 and re.search(r"=+ .* in [\d.]+s", done.stdout), shown  # pytest's summary
    (fuzz_line,) = [line for line in done.stdout.splitlines() if re.match(r"(ERROR|FAILED|PASSED) .*fuzz-publisher", line)]
    assert fuzz_line.startswith("ERROR"), shown
    assert "died (exit code 3) while fuzzing the publisher" in done.stdout, shown
    assert "(the process died here)" in done.stdout, shown  # the flight recorder's trace up to the death


def test_a_target_that_ends_the_process_in_a_verification_class_is_an_error_and_pytest_goes_on(tmp_path):
    (tmp_path / "test_ender.py").write_text(VERIFICATION_MODULE, encoding="utf-8")
    done = run_pytest(tmp_path, "test_ender.py")
    assert_supervised(done, "test_ender.py::TestEndsTheProcess::")


def test_under_xdist_each_worker_supervises_its_own_checks(tmp_path):
    done = run_pytest(tmp_path, "--rstck-target", ENDER, "--rstck-rules", RULES, "-n", "2")
    assert_supervised(done, f"rstck[{ENDER}]::")


def test_one_worker_process_outlives_the_checks_and_pytest_runs_none_itself(tmp_path):
    pids = tmp_path / "pids"
    done = run_pytest(tmp_path, "--rstck-target", "tests.zoo.process_enders:records_its_process", "--rstck-rules",
                      "1.*,3.9", RSTCK_TEST_PIDS=str(pids))
    assert done.returncode == 0, done.stdout[-3000:]
    pytest_pid = re.search(r"^pytest pid (\d+)$", done.stdout, re.M).group(1)
    made_in = pids.read_text(encoding="utf-8").split()
    assert len(made_in) > 10  # the publishers of many checks
    assert set(made_in) != {pytest_pid} and len(set(made_in)) == 1, (pytest_pid, sorted(set(made_in)))


def test_rstck_in_process_runs_the_checks_in_pytest_itself_for_a_debugger(tmp_path):
    # So a target that ends the process ends pytest, as `rstck check --in-process` ends the command.
    done = run_pytest(tmp_path, "--rstck-target", ENDER, "--rstck-rules", "3.9", "--rstck-in-process")
    assert done.returncode == 3, done.stdout[-3000:]
    assert " passed" not in done.stdout and " error" not in done.stdout


def test_a_worker_that_stops_answering_is_stopped_at_the_watchdog_and_pytest_goes_on(tmp_path):
    # With the interpreter held, the check's own deadline cannot fire: the supervisor's watchdog (2 x 0.5 s + 10 s;
    # a short deadline, so that little more than the kit's own margin is waited out) stops the worker; the next
    # item runs in a fresh one.
    target = "tests.zoo.process_enders:holds_the_interpreter_on_request_zero"
    done = run_pytest(tmp_path, "--rstck-target", target, "--rstck-rules", "3.9,1.1", "--rstck-timeout", "0.5",
                      "-k", "request_zero_signals_on_error or 1.1-")
    shown = f"exit {done.returncode}\nstdout:\n{done.stdout[-4000:]}"
    assert done.returncode == 1, shown
    assert [line.split()[1] for line in outcome_lines(done.stdout, "ERROR")] == [
        f"rstck[{target}]::3.9-request_zero_signals_on_error"], shown
    stopped = "error: the worker process stopped answering for 11 s and was stopped during sub#1.request(0)"
    assert stopped in done.stdout, shown
    assert len(outcome_lines(done.stdout, "PASSED")) == 2, shown


def test_a_worker_that_died_before_its_check_began_is_replaced_and_the_check_asked_again(tmp_path):
    flag = tmp_path / "died once"
    planned = plan(load_target(REFERENCE), rules="3.9")[0]

    def resolve(key):
        if not flag.exists():  # the first worker dies as it is asked (no check of its had begun)
            flag.write_text("", encoding="utf-8")
            os._exit(5)
        return planned.check, planned.target

    worker = CheckWorker(resolve)
    try:
        row, _known_hangs = worker.run(0, planned_info(planned), 5.0)
    finally:
        worker.close()
    assert flag.exists()
    assert (row["rule"], row["check"], row["verdict"]) == ("3.9", planned.check.name, "pass")
    assert worker.notes == [f"the worker process ended (exit 5) while no check was running; 3.9 {planned.check.name} "
                            "ran in a fresh one"]


def test_a_supervisor_killed_outright_leaves_no_file_of_its_workers_behind(tmp_path):
    # The worker keeps the call it is in where the supervisor can read it after the target killed the worker; a
    # forked worker shares that memory anonymously, so a supervisor that is itself killed leaves nothing in /tmp.
    code = ("import os, signal\n"
            "from rstck.execution.worker import Worker\n"
            "worker = Worker(lambda job, tell: (None, []), method='fork')\n"
            "worker.run('job', label='a job', watchdog_s=None)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**os.environ, "TMPDIR": str(tmp_path)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == []

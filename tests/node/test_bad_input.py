"""What a broken or hostile JavaScript module gets: a one-line error (with where its stack points) or a
verdict, never a hung kit; and no driver process is left running (tests/node/conftest.py checks that)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from rstck.adapters.node.target import NodeTarget
from rstck.core.verdict import BadInput

from .helpers import ROOT, here, node_target, run, verdicts

pytestmark = pytest.mark.node


def bad(name: str) -> str:
    return here("bad", f"{name}.js")


@pytest.mark.parametrize("name, text", [
    ("syntax_error", "loading the module threw SyntaxError(\"Unexpected token ';'\") at "),
    ("exports_nothing", "the module exports none of createPublisher, "),
    ("missing", "no such file "),
])
def test_a_module_that_cannot_be_used_is_bad_input_in_one_line(name, text):
    with pytest.raises(BadInput) as raised:
        NodeTarget(bad(name))
    message = str(raised.value)
    assert text in message and "\n" not in message
    if name == "syntax_error":
        assert message.endswith("syntax_error.js:4")


def test_a_module_that_never_finishes_loading_is_bad_input_at_its_bound():
    started = time.monotonic()
    with pytest.raises(BadInput, match="did not finish loading within 1 s"):
        NodeTarget(bad("endless_load"), load_timeout_s=1.0)
    assert time.monotonic() - started < 5


def test_rstck_check_says_why_a_module_does_not_load_and_exits_2():
    completed = subprocess.run([sys.executable, "-m", "rstck", "check", "node:tests/node/bad/syntax_error.js",
                                "--no-fuzz"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        "rstck: target node:tests/node/bad/syntax_error.js: loading the module threw "
        "SyntaxError(\"Unexpected token ';'\") at tests/node/bad/syntax_error.js:4"]


def _one(name: str, rules: str, timeout_s: float = 2.0):
    with node_target(bad(name)) as target:
        return run(target, rules=rules, timeout_s=timeout_s)


def test_a_factory_that_throws_errors_its_checks_with_the_node_stack():
    results = _one("factory_throws", "3.9")
    assert {r.verdict.value for r in results} == {"error"}
    assert results[0].reason == ("createPublisher(10) threw Error('no publisher today') at "
                                 "tests/node/bad/factory_throws.js:4:9")


def test_a_factory_that_returns_nothing_errors_its_checks():
    results = _one("returns_undefined", "1.5")
    assert {r.reason for r in results} == {"createPublisher(3) returned undefined: not a publisher",
                                           "createPublisher(0) returned undefined: not a publisher",
                                           "createPublisher(300) returned undefined: not a publisher"}


def test_a_publisher_that_never_calls_back_fails_1_9():
    found = verdicts(_one("never_calls_back", "1.5,1.9,3.9"))
    assert found["fail"] == {"1.9"} and not found["error"]


def test_a_listener_that_throws_is_an_error_naming_the_exception_and_where():
    results = _one("listener_throws", "1.5")
    errors = [r for r in results if r.verdict.value == "error"]
    assert errors and all(r.reason == "the implementation threw outside any call of the kit's: an uncaught exception: "
                          "Error('a listener broke') at tests/node/bad/listener_throws.js:10:40" for r in errors)


def test_an_unhandled_rejection_is_an_error_naming_it():
    results = _one("unhandled_rejection", "1.5")
    assert {r.verdict.value for r in results} == {"error"}
    assert "an unhandled rejection: TypeError('nobody handles this rejection') at " \
           "tests/node/bad/unhandled_rejection.js:9:22" in results[0].reason


def test_process_exit_inside_request_fails_3_16_and_the_trace_says_where():
    results = _one("exits", "3.16")
    assert [(r.verdict.value, r.violated) for r in results] == [("fail", "3.16")]
    assert "raised ProcessEnded('process.exit(3) at " in results[0].message
    assert "(process.exit(3) called at tests/node/bad/exits.js:6:52)" in results[0].trace


def test_process_exit_outside_any_call_is_an_error_naming_it():
    results = _one("exits_later", "1.5")
    assert {r.verdict.value for r in results} == {"error"}
    assert {r.reason for r in results} == {"the Node process ended before publisher.subscribe(probe#1) was made: "
                                           "process.exit(0) at tests/node/bad/exits_later.js:7:32"}


def test_an_endless_loop_in_request_fails_3_16_by_its_deadline_and_the_process_is_stopped():
    started = time.monotonic()
    results = _one("endless_loop", "3.16,1.5", timeout_s=1.0)
    assert {(r.verdict.value, r.violated, r.timed_out) for r in results} == {("fail", "3.16", True)}
    assert all(r.reason.startswith("3.16: expected sub#1.request(") for r in results)
    assert time.monotonic() - started < 2 * (1.0 + 0.25) + 1.0 + 2  # the first hang costs its deadline, the
    # next ones are recognised as the same hang


def test_an_endless_loop_outside_any_call_ends_the_settle_at_its_deadline():
    results = _one("spins_later", "1.5", timeout_s=1.0)
    assert {(r.verdict.value, r.timed_out) for r in results} == {("fail", True)}
    assert "synchronous JavaScript kept running" in results[0].message


def test_a_process_that_never_goes_idle_times_out_naming_what_is_pending():
    results = _one("busy_forever", "1.5", timeout_s=0.5)
    assert {(r.verdict.value, r.timed_out) for r in results} == {("fail", True)}
    assert "still busy at the deadline (pending: Timeout" in results[0].message


def _running(pid: int) -> bool:
    """Whether `pid` is a process that still runs (a zombie nobody reaps has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[11])  # utime


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_kit_killed_with_sigkill_takes_a_driver_spinning_in_an_endless_loop_with_it():
    kit = subprocess.Popen(
        [sys.executable, "-c", "import sys\n"
         "from rstck.protocols.node.driver import driver_env, node_executable\n"
         "from rstck.protocols.node.process import NodeProcess\n"
         f"process = NodeProcess({bad('endless_load')!r}, node=node_executable(), env=driver_env())\n"
         "print(process.pid, flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    pid = int(kit.stdout.readline())
    deadline = time.monotonic() + 10.0
    while _cpu_ticks(pid) < 20 and time.monotonic() < deadline:  # until it spins in the module's loop
        time.sleep(0.01)
    kit.kill()
    kit.wait()
    deadline = time.monotonic() + 10.0  # a bound: the signal arrives as the kit dies
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    if _running(pid):
        subprocess.run(["kill", "-9", str(pid)], check=False)
        pytest.fail(f"node (pid {pid}) outlived the kill of its kit")

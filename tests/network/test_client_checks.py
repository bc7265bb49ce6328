"""`rstck check --client CMD`: the reference client command, a correct client written independently of it, and
the conformant zoo pass every client check (the zoo run after run, and under load); each mutant client is charged
on its item; a command that does not cooperate gets a verdict or one clear error, never a hang, and leaves no
process behind."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shlex
import subprocess
import sys
import time

import pytest

from rstck.adapters.network.client_target import NetworkClientTarget
from rstck.execution.plan import plan
from rstck.reports.items import item_verdicts
from rstck.execution.runner import run_check
from rstck.core.verdict import BadInput

from ..stability import stability_runs

pytestmark = pytest.mark.network

CLIENTS = pathlib.Path(__file__).parent / "clients"
MUTANT_CLIENT = CLIENTS / "mutant_client.py"
REFERENCE = f"{shlex.quote(sys.executable)} -m rstck.reference.network.client_command"
# A correct client needs well under a second per case; a mutant that makes a check wait for its deadline costs
# HANG_TIMEOUT_S.
TIMEOUT_S = 3.0
HANG_TIMEOUT_S = 1.5
GONE_WITHIN_S = 10.0  # a bound on how long a killed process takes to be gone, not a wait for anything to happen


def mutant(name: str, *options: str) -> str:
    return shlex.join([sys.executable, str(MUTANT_CLIENT), "--mutant", name, *options])


def zoo(script: str, *options: str) -> str:
    interpreter = "node" if script.endswith(".js") else sys.executable
    return shlex.join([interpreter, str(CLIENTS / script), *options])


def run(command: str, rules: str | None = None, *, checks: tuple[str, ...] = (),
        timeout_s: float = TIMEOUT_S) -> tuple[dict, list[dict]]:
    target = NetworkClientTarget(command)
    planned = [p for p in plan(target, rules=rules) if not checks or p.check.name in checks]
    assert planned, (rules, checks)
    rows = [run_check(p.check, p.target, timeout_s=timeout_s).row() for p in planned]
    return item_verdicts(rows), rows


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a killed orphan waits there for init to reap it)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def still_alive(pids: list[int], within_s: float = GONE_WITHIN_S) -> list[int]:
    """Those of `pids` still alive once `within_s` has passed, or none as soon as all are gone. A killed process
    is gone when the kernel has torn it down and its parent (init, for an orphan) has reaped it; on a loaded
    machine that takes a moment after the kill, so the test waits for it, bounded."""
    end = time.monotonic() + within_s
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < end:
        time.sleep(0.02)
    return left


def test_the_reference_client_passes_every_client_check_through_rstck_check(tmp_path):
    done = subprocess.run([sys.executable, "-m", "rstck", "check", "--client", REFERENCE, "--no-fuzz",
                           "--results", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "— conformant" in done.stdout and "not run (n/a)" not in done.stdout  # a client hears of no server checks
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(rows) == len(plan(NetworkClientTarget(REFERENCE)))
    assert not {r["check"]: r["message"] for r in rows if r["verdict"] != "pass"}
    assert {r["role"] for r in rows} == {"client"} and rows[0]["target"] == f"client: {REFERENCE}"
    trace = next(r["trace"] for r in rows if r["rule"] == "net.rstck.10")  # the wire log, faults labelled
    assert "accepted the client's connection from 127.0.0.1:" in trace
    assert "-> serverHello(version=0, extensions=[])" in trace and "<- clientHello(version=0" in trace
    assert "[fault injected: a signal for id 2, which the client never subscribed with]" in trace
    assert "(the client exited with status 0; it printed 3 lines)" in trace


# The conformant zoo: clients written from docs/wire-format.md alone (framing.py and one_stream_session.py for the
# Python ones; node_client.js its own), no import from the kit, in the styles clients have. Each gets no fail, warn
# or error, run after run, and under load.
ZOO_CLIENTS = {
    "threads, the largest id, Nagle on": ("threaded_client.py",),
    "threads, id 0, one-byte writes, five-byte reads, a slow consumer": (
        "threaded_client.py", "--id", "0", "--write-bytes", "1", "--read-bytes", "5", "--slow-ms", "25",
        "--initial-demand", "2"),
    "asyncio, id 0, batches of 4": ("asyncio_client.py",),
    "asyncio, the largest id, unbounded demand, one-byte writes": (
        "asyncio_client.py", "--unbounded", "--id", str(2**63 - 1), "--write-bytes", "1"),
    "asyncio, a slow consumer taking one at a time, no Nagle": (
        "asyncio_client.py", "--batch", "1", "--slow-ms", "20", "--no-delay"),
    "Node, 'data' events, batches of 3": ("node_client.js",),
    "Node, the largest id, one element at a time": ("node_client.js", "--id", str(2**63 - 1), "--batch", "1"),
}
BUSY_PROCESSES = 2  # one per core of the machines the suite runs on


def zoo_verdicts(name: str) -> dict[str, str]:
    """check -> verdict (with the item charged when another than the check's), one run of every client check."""
    _, rows = run(zoo(*ZOO_CLIENTS[name]), timeout_s=5.0)
    return {r["check"]: r["verdict"] + (f" ({r['violated']})" if r["violated"] else "") for r in rows}


def not_clean(verdicts: dict[str, str]) -> dict[str, str]:
    return {check: verdict for check, verdict in verdicts.items() if verdict.split()[0] in ("fail", "warn", "error")}


@pytest.mark.parametrize("name", ZOO_CLIENTS)
def test_each_client_of_the_zoo_is_conformant_to_rstck_check(name, tmp_path):
    command = zoo(*ZOO_CLIENTS[name])
    done = subprocess.run([sys.executable, "-m", "rstck", "check", "--client", command, "--results", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "— conformant" in done.stdout
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(rows) == len(plan(NetworkClientTarget(command)))
    assert not {r["check"]: r["message"] for r in rows if r["verdict"] in ("fail", "warn", "error")}


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("name", ZOO_CLIENTS)
def test_the_zoos_verdicts_are_the_same_in_every_run(name):
    runs = [zoo_verdicts(name) for _ in range(stability_runs())]
    for number, verdicts in enumerate(runs, start=1):
        assert not_clean(verdicts) == {}, f"run {number}"
        assert verdicts == runs[0], f"run {number} differs from run 1"


@pytest.mark.stability
@pytest.mark.soak
def test_the_zoos_verdicts_are_the_same_while_both_cores_are_busy():
    """Every check passes for every client of the zoo when run alone (the tests above); so it must with two
    processes spinning, one per core, besides whatever else the machine runs."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BUSY_PROCESSES)]
    try:
        loaded = {name: zoo_verdicts(name) for name in ZOO_CLIENTS}
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert {name: {check: verdict for check, verdict in verdicts.items() if verdict != "pass"}
            for name, verdicts in loaded.items()} == {name: {} for name in ZOO_CLIENTS}


def test_a_correct_client_written_apart_from_the_reference_passes_every_client_check():
    """The mutants' own baseline: each differs from it by its defect only."""
    verdicts, rows = run(mutant("none"))
    assert not {r["check"]: r["message"] for r in rows if r["verdict"] != "pass"}
    assert verdicts["net.split.2"].verdict == verdicts["net.rstck.10"].verdict == "pass"
    assert verdicts["net.ids.2"].verdict == "untested"


@dataclasses.dataclass(frozen=True)
class Case:
    mutant: str
    charged: dict[str, str]  # item -> verdict: exactly the items that do not pass
    rules: str = ""  # the checks run: these items' (default: the charged ones), or only `checks` of them
    checks: tuple[str, ...] = ()
    hangs: bool = False  # the client never answers: the verdict is decided by the deadline, and says so


CASES = [
    Case("early-hello-refused", {"net.handshake.1": "unsupported"}),
    Case("ignores-version", {"net.handshake.2": "fail", "net.handshake.5": "fail"}, hangs=True),
    Case("reads-on-after-version", {"net.handshake.5": "fail"}, rules="net.handshake.2,net.handshake.5"),
    Case("waits-for-server-hello", {"net.handshake.6": "fail"}, hangs=True),
    Case("crashes-on-fault", {"net.rstck.1": "fail"}),
    Case("skips-unknown-types", {"net.rstck.2": "fail"}, checks=("client_answers_an_undefined_message_type_with_goodbye",),
         hangs=True),
    Case("no-size-check", {"net.rstck.3": "fail"},
         checks=("client_answers_an_element_of_another_size_than_declared_with_goodbye",), hangs=True),
    Case("waits-for-declared-bytes", {"net.rstck.4": "fail"}, hangs=True),
    Case("accepts-invalid-utf8", {"net.rstck.3": "fail"}, rules="net.*"),  # every other check passes it
    Case("takes-frames-before-hello", {"net.rstck.5": "fail"}, hangs=True),
    # One fault, charged once, by name: every other item it kept from a verdict is blocked, naming it.
    Case("subscribes-before-hello", {"net.rstck.14": "fail"}, rules="net.*"),
    Case("ignores-second-hello", {"net.rstck.6": "fail"}, hangs=True),
    Case("prints-any-id", {"net.rstck.10": "fail"}),
    Case("no-goodbye-answer", {"net.closing.2": "warn"}, rules="net.closing.*"),
    Case("exit-0-on-goodbye", {"net.closing.3": "fail"}, rules="net.closing.*"),
    Case("sends-after-goodbye", {"net.rstck.13": "fail"}),
    Case("prints-parts", {"net.split.2": "fail"}, rules="net.split.2"),
    Case("reverses-parts", {"net.split.4": "fail"}, rules="net.split.*"),  # equal parts: net.split.2 passes
    Case("misreads-packed", {"net.core.2": "fail"}, rules="net.packed.2"),
    Case("exit-0-on-error", {"net.core.2": "fail"}),
    # What the kit checks in every frame the client sends, whatever the check.
    Case("sends-garbage", {"net.framing.4": "fail"}, rules="net.split.4"),
    Case("sends-extension", {"net.extensions.1": "fail"}, rules="net.split.4"),
    Case("subscribes-twice", {"net.core.3": "fail"}, rules="net.split.4"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.mutant)
def test_each_mutant_client_is_caught_on_its_item(case: Case):
    verdicts, rows = run(mutant(case.mutant), case.rules or ",".join(case.charged), checks=case.checks,
                         timeout_s=HANG_TIMEOUT_S if case.hangs else TIMEOUT_S)
    assert not [r["message"] for r in rows if r["verdict"] == "error"]
    not_passing = {item: v.verdict for item, v in verdicts.items() if v.verdict not in ("pass", "untested", "blocked")}
    assert not_passing == case.charged, [r["reason"] for r in rows]
    if case.hangs:
        assert any(r["timed_out"] and "decided by a deadline" in r["reason"] for r in rows), [r["reason"] for r in rows]


def test_a_client_that_takes_a_str_that_is_not_utf8_is_caught_at_once_by_its_answer():
    _, rows = run(mutant("accepts-invalid-utf8"), checks=("client_answers_a_str_that_is_not_utf8_with_goodbye",))
    assert rows[0]["verdict"] == "fail" and rows[0]["violated"] == "net.rstck.3" and not rows[0]["timed_out"]
    reason = rows[0]["reason"]
    assert "the client answered it with subscribed(sub=1" in reason and "it took the frame" in reason
    assert "[fault injected: a subscribe whose publisher name is a str that is not UTF-8 (c3 28)]" in rows[0]["trace"]


def test_a_message_before_the_clients_hello_is_charged_once_and_blocks_the_rest_by_name():
    verdicts, rows = run(mutant("subscribes-before-hello"), "net.*")
    assert verdicts["net.rstck.14"].verdict == "fail"
    reason = verdicts["net.rstck.14"].reason
    assert "subscribe(" in reason and "before its clientHello" in reason
    blocked = {item: v.reason for item, v in verdicts.items() if v.verdict == "blocked"}
    assert blocked and all("stopped by a net.rstck.14 fail" in reason for reason in blocked.values()), blocked


def test_the_kit_that_withholds_its_hello_sends_nothing_after_the_goodbye_a_bad_first_frame_earned():
    """net.handshake.6: the client's subscribe comes before its clientHello; the kit answers it with goodbye and
    must not then send the serverHello it withheld, nor answer the subscribe."""
    _, rows = run(mutant("subscribes-before-hello"), "net.handshake.6")
    assert [r["verdict"] for r in rows] == ["fail"], [r["message"] for r in rows]
    assert rows[0]["violated"] == "net.rstck.14"
    trace = rows[0]["trace"]
    assert "-> serverHello" not in trace and "-> subscribed" not in trace and "the kit's own fault" not in trace


def test_a_client_whose_subscriber_id_is_the_largest_passes_the_check_of_ignored_ids():
    """net.rstck.10 makes up ids the client never used: within 0..2**63-1, whatever id the client took."""
    for stream_id in (2**63 - 1, 2**63 - 2, 0):
        verdicts, rows = run(zoo("threaded_client.py", "--id", str(stream_id)), "net.rstck.10")
        assert [r["verdict"] for r in rows] == ["pass"], [r["message"] for r in rows]


def test_a_client_that_crashes_is_shown_with_its_traceback():
    _, rows = run(mutant("crashes-on-fault"), checks=("client_answers_an_empty_array_with_goodbye",))
    assert "the connection closed first" in rows[0]["reason"]
    assert "the client exited with status 1; its stderr ends:" in rows[0]["message"]
    assert "RuntimeError: cannot read the server's frame" in rows[0]["message"]


def test_a_request_of_zero_is_answered_with_on_error_and_fails_the_check_not_the_client_for_it():
    _, rows = run(mutant("requests-zero"), "net.split.4")
    assert rows[0]["verdict"] == "fail" and rows[0]["violated"] == "net.split.4"
    assert "the client's request of 0 or below ended stream 1: the kit answered onError(sub=1, " in rows[0]["reason"]
    assert "<- request(sub=1, demand=0)" in rows[0]["trace"]


def test_a_command_that_cannot_run_is_one_clear_error():
    _, rows = run("rstck-no-such-client-command --flag", "net.handshake.1")
    assert rows[0]["verdict"] == "error"
    assert rows[0]["reason"] == ("cannot run the client command 'rstck-no-such-client-command --flag': "
                                 "No such file or directory")


def test_a_command_that_exits_at_once_is_one_clear_error_with_its_stderr():
    _, rows = run(mutant("exits-at-once"), "net.handshake.1")
    assert rows[0]["verdict"] == "error"
    assert "the client exited with status 5 without connecting to tcp://127.0.0.1:" in rows[0]["reason"]
    assert rows[0]["reason"].endswith("its stderr ends: mutant_client: cannot start, on purpose")
    assert "\n" not in rows[0]["reason"]


def test_a_command_that_never_connects_is_an_error_at_the_deadline_and_is_killed_with_its_children(tmp_path):
    pids = tmp_path / "pids"
    started = time.monotonic()
    _, rows = run(mutant("never-connects", "--pid-file", str(pids)), "net.handshake.1", timeout_s=1.0)
    assert time.monotonic() - started < 20.0  # the command sleeps 60 s: well under that, the deadline ended it
    assert rows[0]["verdict"] == "error"
    assert "did not connect to tcp://127.0.0.1:" in rows[0]["reason"] and "decided by a deadline" in rows[0]["reason"]
    owned = [int(pid) for pid in pids.read_text().split()]
    assert len(owned) == 2 and still_alive(owned) == []


def test_a_client_that_hangs_once_connected_fails_by_the_deadline_and_is_killed(tmp_path):
    pids = tmp_path / "pids"
    _, rows = run(mutant("hangs-connected", "--pid-file", str(pids)), "net.split.4", timeout_s=HANG_TIMEOUT_S)
    assert rows[0]["verdict"] == "fail" and rows[0]["timed_out"]
    assert "no request came before the deadline" in rows[0]["reason"]
    assert "the kit kills the client" in rows[0]["trace"]
    assert still_alive([int(pids.read_text())]) == []


def test_stdout_that_breaks_the_contract_is_one_clear_error():
    _, rows = run(mutant("uppercase-hex"), "net.split.4")
    assert rows[0]["verdict"] == "error"
    assert rows[0]["reason"] == ("the client's stdout breaks the client contract (docs/network.md, the client "
                                 "contract): line 1 is '000102030405060708090A0B', not an element in lowercase hex")


def test_a_command_line_that_cannot_be_split_is_bad_input():
    with pytest.raises(BadInput, match="No closing quotation"):
        NetworkClientTarget("client 'unclosed")

"""`rstck check tcp://...`: the reference server passes every network item and every core rule observable over
the wire; each mutant server is charged on its item; every check ends, whatever the server does."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rstck.adapters.network.server_target import NOT_OBSERVABLE
from rstck.protocols.network import peer
from rstck.execution.plan import plan
from rstck.reports.items import item_verdicts
from rstck.execution.runner import run_check
from rstck.core.target import load_target
from rstck.core.verdict import BadInput

from .mutant_servers import (GUARDS, MUTANTS, ClosesWithoutGoodbye, DiesOnAReset, KeepsTheConnectionAfterGoodbye,
                             PacksWithoutElementSize, RunningServer, ServerCase, StreamsOnAfterGoodbye, rows_of_case,
                             stop_every_run)

pytestmark = pytest.mark.network

# Short deadlines: a mutant that makes a check wait costs this much; the reference never comes near it.
TIMEOUT_S = 2.0


def run(url: str, rules: str | None = None) -> tuple[dict, list]:
    target = load_target(url)
    rows = [run_check(p.check, p.target, timeout_s=TIMEOUT_S).row() for p in plan(target, rules=rules)]
    return item_verdicts(rows), rows


@pytest.fixture
def reference():
    server = RunningServer()
    yield server.url
    server.stop()


def test_the_reference_server_passes_every_item(reference):
    verdicts, rows = run(reference)
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    offending = {item: v.verdict for item, v in verdicts.items() if v.verdict not in ("pass", "n/a", "untested")}
    assert offending == {"3.14": "unsupported"}  # it serves a new subscriber after a cancel: the MAY's other side
    assert {item for item, v in verdicts.items() if v.verdict == "n/a"} >= set(NOT_OBSERVABLE)
    assert all(verdicts[item].verdict == "pass" for item in verdicts if item.startswith("net.")
               and verdicts[item].verdict != "untested" and item != "net.core.2")
    assert verdicts["net.core.2"].verdict == "n/a"  # its only check is for a server that subscribes to the kit


def test_a_network_row_carries_the_wire_log(reference):
    _, rows = run(reference, "net.rstck.12")
    trace = rows[0]["trace"]
    assert "-> subscribe(\"rstck/infinite\"" in trace
    assert "[fault injected: subscribe with id" in trace
    assert "<- goodbye(" in trace and " ms  " in trace


@pytest.fixture(scope="session")
def mutant_runs():
    """The mutants' runs are shared with their reproducers' test (mutant_servers.rows_of_case): the servers left up
    for it are stopped at the end of the session."""
    yield
    stop_every_run()


# With the reproducers' test on one worker: each mutant's checks run once for both.
@pytest.mark.xdist_group("network-mutant-servers")
@pytest.mark.parametrize("case", MUTANTS + GUARDS, ids=lambda c: c.name)
def test_each_mutant_is_caught_on_its_item(case: ServerCase, mutant_runs):
    rows = rows_of_case(case)
    verdicts = item_verdicts(rows)
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    assert verdicts[case.item].verdict == case.verdict, verdicts[case.item].reason


def test_a_server_that_is_not_there_is_one_clear_error_before_any_check():
    with pytest.raises(BadInput, match=r"tcp://127.0.0.1:9: cannot connect \(Connection refused\); is the server"):
        load_target("tcp://127.0.0.1:9")


def test_a_server_that_goes_away_is_an_error_per_check_not_a_hang():
    server = RunningServer()
    target = load_target(server.url)
    server.stop()
    rows = [run_check(p.check, p.target, timeout_s=TIMEOUT_S).row() for p in plan(target, rules="net.core.*,1.1")]
    assert rows and {r["verdict"] for r in rows} == {"error"}
    assert all("cannot connect to 127.0.0.1:" in r["reason"] for r in rows)


def test_rstck_check_tcp_end_to_end_writes_rows_with_wire_logs(reference, tmp_path):
    done = subprocess.run([sys.executable, "-m", "rstck.cli", "check", reference, "--rules", "net.*,1.1,3.9",
                           "--results", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "— conformant" in done.stdout
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    network = [r for r in rows if r["spec"] == "network-protocol"]
    assert network and all(r["verdict"] in ("pass", "unsupported") or (r["rule"], r["verdict"]) == ("net.core.2", "n/a")
                           for r in network)
    assert all("connected to 127.0.0.1:" in r["trace"] and " ms  -> " in r["trace"] for r in network)
    assert {r["role"] for r in network} == {"server"}
    core = [r for r in rows if r["rule"] == "3.9" and r["verdict"] == "pass"]
    assert core and "<- onError(" in core[0]["trace"]
    page = tmp_path / "report.html"
    reported = subprocess.run([sys.executable, "-m", "rstck.cli", "report", str(tmp_path), "-o", str(page)],
                              capture_output=True, text=True, timeout=120)
    assert reported.returncode == 0, reported.stderr
    assert f"rstck check {reference} --rules net.rstck.12" in page.read_text()  # how to run a check again


def test_rstck_check_needs_a_target_or_a_client_not_both():
    for argv in (["check"], ["check", "x:y", "--client", "cmd"]):
        done = subprocess.run([sys.executable, "-m", "rstck.cli", *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.startswith("rstck: rstck check: name a target"), done.stderr


# Servers that break a SHOULD, or another item, around goodbye: none of it is net.rstck.13's (nothing follows a
# goodbye that never came), and a goodbye followed by an open connection breaks nothing.
AROUND_GOODBYE = [
    (ClosesWithoutGoodbye, "net.rstck.13", {"net.rstck.13": "blocked", "net.closing.2": "warn"}),
    (StreamsOnAfterGoodbye, "net.rstck.13", {"net.rstck.13": "blocked", "net.closing.3": "fail"}),
    (KeepsTheConnectionAfterGoodbye, "net.rstck.*,net.closing.*,net.handshake.2",
     {"net.rstck.1": "pass", "net.rstck.3": "pass", "net.rstck.13": "pass", "net.closing.2": "pass",
      "net.handshake.2": "pass"}),
]


# How long the kit waits for a close that never comes (peer.CLOSE_LINGER_S, 1 s for users).
KEPT_OPEN_LINGER_S = 0.2


@pytest.mark.parametrize("server_type,rules,expected", AROUND_GOODBYE, ids=lambda v: getattr(v, "__name__", ""))
def test_goodbye_findings_are_charged_to_their_own_items(server_type, rules, expected, monkeypatch):
    if server_type is KeepsTheConnectionAfterGoodbye:
        # It never closes and sends nothing after its goodbye: each of its 19 checks waits out the kit's linger, then
        # the kit closes, which is what is tested here; how long the kit lingers decides nothing of that.
        monkeypatch.setattr(peer, "CLOSE_LINGER_S", KEPT_OPEN_LINGER_S)
    server = RunningServer(server_type)
    try:
        verdicts, rows = run(server.url, rules)
    finally:
        server.stop()
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    assert {item: verdicts[item].verdict for item in expected} == expected, \
        {item: verdicts[item].reason for item in expected}
    assert not [item for item, v in verdicts.items() if v.verdict == "fail" and item not in expected]


def test_a_server_that_dies_on_a_reset_gets_one_verdict_on_its_item():
    """The reset check waits until the server has seen the reset: a server that dies of it is net.closing.1's
    finding, and every check after it that cannot connect is blocked by that finding, not in error."""
    server = RunningServer(DiesOnAReset)
    try:
        verdicts, rows = run(server.url, "net.closing.*,net.rstck.13,net.rstck.1")
    finally:
        server.stop()
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    assert verdicts["net.closing.1"].verdict == "warn", verdicts["net.closing.1"].reason
    assert {item for item, v in verdicts.items()
            if v.verdict not in ("pass", "blocked", "untested")} == {"net.closing.1"}
    assert all("net.closing.1" in v.reason for v in verdicts.values() if v.verdict == "blocked")


def test_packed_frames_without_an_element_size_are_charged_once_to_the_fault_item():
    server = RunningServer(PacksWithoutElementSize)
    try:
        verdicts, rows = run(server.url, "net.packed.2")
    finally:
        server.stop()
    assert verdicts["net.rstck.3"].verdict == "fail"
    assert "net.packed.2" not in {r["violated"] for r in rows}
    # once per stream (its elements cannot be told apart), not once per frame
    assert all("further ones are counted" not in r["trace"] for r in rows), [r["trace"] for r in rows]

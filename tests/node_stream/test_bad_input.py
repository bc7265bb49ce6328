"""What a broken or hostile stream module gets: a one-line error with where its stack points, or a verdict
charged to the target, never a hung kit; and no driver process is left running (conftest.py checks that)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rstck.core.target import load_target
from rstck.core.verdict import BadInput

from .helpers import ROOT, here, node_stream_target, run

pytestmark = pytest.mark.node


def bad(name: str) -> str:
    return here("bad", f"{name}.js")


def _one(name: str, rules: str):
    with node_stream_target(bad(name)) as target:
        return run(target, rules=rules)


def test_a_module_that_does_not_load_is_one_line_with_the_node_stack():
    with pytest.raises(BadInput) as raised:
        load_target("node-stream:tests/node_stream/bad/does_not_load.js")
    assert str(raised.value) == ("target node-stream:tests/node_stream/bad/does_not_load.js: loading the module "
                                 "threw Error('this module does not load') at "
                                 "tests/node_stream/bad/does_not_load.js:4:7")


def test_rstck_check_says_why_a_stream_module_does_not_load_and_exits_2():
    completed = subprocess.run([sys.executable, "-m", "rstck", "check",
                                "node-stream:tests/node_stream/bad/does_not_load.js"],
                               capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert "Error('this module does not load') at tests/node_stream/bad/does_not_load.js:4:7" in completed.stderr


def test_a_module_without_stream_factories_is_bad_input():
    with pytest.raises(BadInput, match="exports none of createStream, createReadable"):
        load_target(f"node-stream:{ROOT}/rstck/reference/js/reactive_streams.js")


def test_a_factory_that_throws_is_an_error_charged_to_the_target():
    results = _one("factory_throws", "node.writable.3,node.readable.3")
    by_rule = {r.rule: r for r in results}
    assert by_rule["node.readable.3"].verdict.value == "pass"
    assert by_rule["node.writable.3"].verdict.value == "error"
    assert by_rule["node.writable.3"].reason == ("createWritable({highWaterMark: 4, written: written#1}) threw "
                                                 "Error('no writable today') at "
                                                 "tests/node_stream/bad/factory_throws.js:7:33")


def test_process_exit_inside_write_fails_the_check_with_where_it_was_called():
    [result] = _one("exit_in_write", "node.writable.8")
    assert result.verdict.value == "fail" and not result.timed_out
    assert result.reason == ("node.writable.8: expected writable#1.write('a', cb#1) to return; observed the Node "
                             "process ended inside it: process.exit(3) at tests/node_stream/bad/exit_in_write.js:8:36")


def test_an_endless_loop_inside_write_fails_the_check_by_its_deadline():
    [result] = _one("loop_in_write", "node.writable.8")
    assert result.verdict.value == "fail" and result.timed_out
    assert result.reason.startswith("node.writable.8: expected writable#1.write('a', cb#1) to return; observed it had "
                                    "not returned after ")


def test_a_stream_that_never_goes_idle_gets_a_verdict_decided_by_the_deadline():
    with node_stream_target(bad("busy_forever")) as target:
        [result] = run(target, rules="node.readable.17", timeout_s=0.5)
    assert result.verdict.value == "fail" and result.timed_out
    assert "still busy at the deadline (pending: Timeout" in result.reason
    assert result.reason.endswith("(decided by a deadline)")

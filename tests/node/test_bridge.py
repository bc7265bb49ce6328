"""The bridge itself: tagged values both ways, errors by name with their stack, the event record (sequence,
command, depth), console and stdout in the trace, settling on timers and its deadline, processes per check."""

from __future__ import annotations

import math
import time

import pytest

from rstck.protocols.node.driver import driver_env, node_executable
from rstck.protocols.node.js_errors import JavaScriptError, JavaScriptThrow
from rstck.protocols.node.process import NodeProcess
from rstck.execution.plan import plan
from rstck.core.settle import SettleTimeout

from .helpers import REFERENCE, here, node_target, run

pytestmark = pytest.mark.node


class Recorder:
    """A stand-in for a check's settler: keeps the events, answers asks by calling the kit object."""

    def __init__(self, process: NodeProcess):
        self.process = process
        self.events: list[dict] = []

    def deadline(self):
        return time.monotonic() + 10

    def answer(self, ask):
        target = self.process.kit_object(ask["obj"])
        try:
            getattr(target, {"onNext": "on_next"}[ask["name"]])(*[self.process.decode(a) for a in ask["args"]])
        except BaseException as exc:  # noqa: BLE001 - thrown back into JavaScript
            return exc, False
        return None, False

    def event(self, message):
        self.events.append(message)

    def output(self, stream, text):
        self.events.append({"ev": stream, "text": text})

    def demand_sent(self, args):
        pass

    def cancel_sent(self):
        pass


@pytest.fixture
def values():
    process = NodeProcess(here("bridge", "values.js"), node=node_executable(), env=driver_env())
    try:
        process.wait_ready(10)
        process.handler = Recorder(process)
        made = process.command({"op": "create", "factory": "createPublisher", "args": []},
                               deadline=time.monotonic() + 10)
        yield process, process.proxy(made["ret"])
    finally:
        process.kill()


def call(pair, method, *args, demand=False):
    process, proxy = pair
    return process.call(proxy._js_handle, method, args, demand=demand)


@pytest.mark.parametrize("value, seen", [
    (2**70, "bigint:1180591620717411303424"),
    (-(2**60), "bigint:-1152921504606846976"),
    (2**53 - 1, "number:9007199254740991"),
    (1.5, "number:1.5"),
    (math.nan, "number:NaN"),
    (-math.inf, "number:-Infinity"),
    (None, "object:null"),
    ("text", "string:text"),
    (b"hi", "object:hi"),
])
def test_python_values_reach_javascript_tagged(values, value, seen):
    assert call(values, "describe", value) == seen


def test_values_come_back_as_they_went(values):
    for value in (2**70, -(2**60), 1.5, "text", b"bytes", [1, "a", None], {"a": 1, "b": [2.5]}):
        assert call(values, "echo", value) == value
    assert math.isnan(call(values, "echo", math.nan))
    assert call(values, "isBuffer", b"x") is True


def test_javascript_values_come_back_tagged(values):
    got = call(values, "fromJavaScript")
    assert got["big"] == 2**70 and got["undef"] is None and math.isnan(got["nan"]) and got["inf"] == -math.inf
    assert got["buf"] == b"hi" and got["arr"] == [1, "a", None] and got["date"] == 1.5
    assert repr(got["obj"]) == "<Map>"


def test_a_demand_beyond_max_safe_integer_is_a_number_unless_asked_for_a_bigint(values):
    process, _ = values
    assert call(values, "describe", 2**63 - 1, demand=True) == "number:9223372036854776000"  # 2**63, printed short
    process.demand_as = "bigint"
    assert call(values, "describe", 2**63 - 1, demand=True) == "bigint:9223372036854775807"


def test_errors_keep_their_name_their_class_chain_and_their_stack(values):
    with pytest.raises(JavaScriptError) as raised:
        call(values, "throwRange")
    assert type(raised.value).__name__ == "RangeError" and str(raised.value) == "out of range"
    assert [c.__name__ for c in type(raised.value).__mro__][:3] == ["RangeError", "Error", "JavaScriptError"]
    assert "values.js" in raised.value.js_stack
    with pytest.raises(JavaScriptError) as raised:
        call(values, "throwOwn")
    assert [c.__name__ for c in type(raised.value).__mro__][:4] == ["TypeError", "Oops", "Error", "JavaScriptError"]
    with pytest.raises(JavaScriptThrow, match="just text"):
        call(values, "throwText")


class Subscriber:
    def __init__(self, pair, nested: bool):
        self.pair, self.nested, self.got = pair, nested, []

    def on_subscribe(self, subscription):
        pass

    def on_next(self, item):
        self.got.append(item)
        if self.nested:
            call(self.pair, "log", "from inside onNext")  # a command made while JavaScript waits in onNext
        else:
            raise TypeError("thrown back")


def test_events_carry_their_sequence_their_command_and_their_depth(values):
    process, _ = values
    subscriber = Subscriber(values, nested=True)
    call(values, "log", "at the top")
    call(values, "callNext", subscriber, 7)
    logs = [e for e in process.handler.events if e.get("ev") == "console"]
    assert [e["text"] for e in logs] == ["logged: at the top", "logged: from inside onNext"]
    top, nested = logs
    assert top["seq"] < nested["seq"] and top["depth"] == 0 and nested["depth"] == 1
    assert nested["in_op"] > top["in_op"]  # the nested command, not the callNext it runs inside
    assert subscriber.got == [7]
    assert {"ev": "stdout", "text": "raw at the top"} in process.handler.events  # raw output, read beside


def test_what_the_kit_raises_is_thrown_into_javascript(values):
    assert call(values, "callAndCatch", Subscriber(values, nested=False)) == "caught TypeError: thrown back"


def test_console_and_stdout_are_in_the_trace():
    with node_target(here("bridge", "chatty.js")) as target:
        results = run(target, rules="1.5")
    trace = results[0].trace
    assert "(console.log: chatty loaded)" in trace  # printed as the module loaded, before the check
    assert "(console.warn: making a publisher of 3)" in trace
    assert "(stdout: raw output)" in trace


def test_settling_waits_for_a_timer_and_then_reports_idle():
    with node_target(here("bridge", "late_timer.js")) as target:
        results = run(target, rules="1.5,3.8")
    # The checks that call from a second thread of the kit have nothing to call into a Node process with.
    judged = [r for r in results if r.reason != "the target offers no threads"]
    assert {r.verdict.value for r in judged} == {"pass"} and len(judged) < len(results)
    assert {r.settled_by for r in judged} == {"idle"}


def test_each_check_has_a_process_of_its_own_unless_processes_are_reused():
    for isolation, expected in (("check", 2), ("reuse", 1)):
        with node_target(REFERENCE, isolation=isolation) as target:
            pids = set()
            for planned in plan(target, rules="1.5")[:2]:
                session = target.open_session(5.0)
                session.check_thread = __import__("threading").current_thread()
                planned.check.func(session)
                pids.add(session.settler.process.pid)
                session.lifecycle.finish()
                session.lifecycle.close()
        assert len(pids) == expected, isolation


def test_a_reused_process_is_retired_once_the_implementation_threw_uncaught():
    with node_target(here("bad", "listener_throws.js"), isolation="reuse") as target:
        pids = set()
        for planned in plan(target, rules="1.5")[:1] * 2:
            session = target.open_session(5.0)
            session.check_thread = __import__("threading").current_thread()
            with pytest.raises(Exception, match="a listener broke"):
                planned.check.func(session)
            pids.add(session.settler.process.pid)
            session.lifecycle.close()
        assert len(pids) == 2


def test_a_settle_that_reaches_its_deadline_names_what_is_pending():
    with node_target(here("bad", "busy_forever.js")) as target:
        # Long enough for the driver to answer on a loaded machine, whose idle report names the timer; at 0.3 s a
        # busy machine's driver once had not answered at all ("the Node process did not answer by the deadline").
        session = target.open_session(1.5)
        try:
            session.subscribe(session.create_publisher(1))
            with pytest.raises(SettleTimeout, match=r"pending: Timeout"):
                session.settle()
        finally:
            session.lifecycle.close()

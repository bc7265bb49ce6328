"""Settling: the kit waits for exactly the work it can see, says so when it had to wait for a quiet
period, and turns a target that never settles or never returns into a deadline verdict."""

from __future__ import annotations

import asyncio
import threading
import time

from rstck import InProcessTarget
from rstck.execution.plan import plan
from rstck.reference.publishers import IterablePublisher
from rstck.execution.runner import run_check
from rstck.core.executor import InstrumentedExecutor
from rstck.core.settle import Settler, SettleTimeout
from rstck.core.signals import Trace
from rstck.core.verdict import Verdict


def settler_with(**resources) -> Settler:
    settler = Settler(Trace())
    for name, value in resources.items():
        setattr(settler, name, value)
    return settler


def test_settle_runs_asyncio_callbacks_and_timers_due_within_the_horizon():
    loop = asyncio.new_event_loop()
    done = []
    loop.call_soon(lambda: loop.call_later(0.02, lambda: done.append("timer")))
    outcome = settler_with(loop=loop).settle(time.monotonic() + 5)
    assert done == ["timer"]
    assert outcome.method == "idle"
    loop.close()


def test_settle_does_not_wait_for_a_timer_beyond_the_horizon():
    loop = asyncio.new_event_loop()
    far = loop.call_later(30, lambda: None)
    outcome = settler_with(loop=loop).settle(time.monotonic() + 5)
    assert outcome.waited_s < 1.0  # the 30 s heartbeat is not pending work
    far.cancel()
    loop.close()


def test_settle_waits_for_executor_tasks_that_submit_more_tasks():
    executor = InstrumentedExecutor()
    done = []

    def chain(n: int) -> None:
        done.append(n)
        if n < 5:
            executor.submit(chain, n + 1)

    executor.submit(chain, 1)
    settler_with(executor=executor).settle(time.monotonic() + 5)
    assert done == [1, 2, 3, 4, 5]
    executor.shutdown()


def test_settle_follows_work_that_moves_between_executor_and_loop():
    executor, loop = InstrumentedExecutor(), asyncio.new_event_loop()
    done = []
    executor.submit(lambda: loop.call_soon_threadsafe(lambda: executor.submit(done.append, "back")))
    settler_with(executor=executor, loop=loop).settle(time.monotonic() + 5)
    assert done == ["back"]
    executor.shutdown()
    loop.close()


def test_settle_gives_up_at_the_deadline():
    executor = InstrumentedExecutor()
    release = threading.Event()
    executor.submit(release.wait, 10)
    try:
        settler_with(executor=executor).settle(time.monotonic() + 0.2)
    except SettleTimeout:
        pass
    else:
        raise AssertionError("settle returned although a task was still running")
    finally:
        release.set()
        executor.shutdown()


class ThreadPerRequestPublisher(IterablePublisher):
    """Correct, but each request is served on a thread of its own, which the kit cannot see."""

    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscriber must not be None")
        super().subscribe(_OwnThreadRequests(subscriber))


class _OwnThreadRequests:
    def __init__(self, subscriber):
        self.subscriber = subscriber

    def on_subscribe(self, subscription):
        self.subscriber.on_subscribe(_RequestOnAThread(subscription))

    def __getattr__(self, name):
        return getattr(self.subscriber, name)


class _RequestOnAThread:
    def __init__(self, subscription):
        self.subscription = subscription
        self.lock = threading.Lock()  # keeps request/cancel serial (2.7) across the threads it starts

    def request(self, n):
        threading.Thread(target=self._locked, args=(self.subscription.request, n)).start()

    def cancel(self):
        self._locked(self.subscription.cancel)

    def _locked(self, call, *args):
        with self.lock:
            call(*args)


def test_unseen_threads_are_settled_by_a_quiet_period_and_the_row_says_so():
    target = InProcessTarget(create_publisher=lambda n: ThreadPerRequestPublisher(range(n)), quiet_period_s=0.05)
    check = next(p.check for p in plan(target, rules="3.8"))
    result = run_check(check, target, timeout_s=5)
    assert result.verdict is Verdict.PASS, result.message
    assert result.settled_by == "quiet-period"


def test_threads_the_implementation_starts_are_watched_without_configuration():
    target = InProcessTarget(create_publisher=lambda n: ThreadPerRequestPublisher(range(n)))
    check = next(p.check for p in plan(target, rules="3.8"))
    result = run_check(check, target, timeout_s=5)
    assert result.verdict is Verdict.PASS, result.message
    assert "threads-joined" in result.settled_by.split(",")


class NeverIdlePublisher(IterablePublisher):
    """Keeps a task running on the target's executor for as long as it is subscribed."""

    def __init__(self, n, executor):
        super().__init__(range(n))
        self.executor = executor

    def subscribe(self, subscriber) -> None:
        super().subscribe(subscriber)
        self.executor.submit(threading.Event().wait, 10)


def test_a_target_that_never_settles_fails_by_deadline_and_says_so():
    target = InProcessTarget(create_publisher=lambda n: NeverIdlePublisher(n, target.executor))
    check = next(p.check for p in plan(target, rules="1.9"))
    result = run_check(check, target, timeout_s=0.3)
    assert result.verdict is Verdict.FAIL
    assert result.timed_out
    assert "decided by a deadline" in result.message


class SubscribeNeverReturns(IterablePublisher):
    def subscribe(self, subscriber) -> None:
        threading.Event().wait(10)


def test_a_call_that_never_returns_is_charged_to_its_rule_by_deadline():
    target = InProcessTarget(create_publisher=lambda n: SubscribeNeverReturns(range(n)))
    check = next(p.check for p in plan(target, rules="1.5"))
    started = time.monotonic()
    result = run_check(check, target, timeout_s=0.3)
    assert time.monotonic() - started < 2
    assert (result.verdict, result.violated, result.timed_out) == (Verdict.FAIL, "1.9", True)


def test_a_thread_busy_before_the_check_that_computes_no_more_leaves_no_mark_on_its_trace():
    """A thread that computed just before a check began is watched while it may take the check's work; once it is
    seen asleep it was no part of the check, and the trace says "(settled)" as it would without it: a fuzz
    finding's replay compares traces exactly (observed: "(settled: threads-joined)" in a replay only)."""
    asleep = threading.Event()

    def computes_then_sleeps():
        until = time.monotonic() + 0.05
        while time.monotonic() < until:
            pass
        asleep.set()
        time.sleep(30)

    threading.Thread(target=computes_then_sleeps, daemon=True).start()
    asleep.wait()
    target = InProcessTarget(create_publisher=lambda n: IterablePublisher(range(n)))
    [planned] = [p for p in plan(target, rules="3.9") if p.check.name == "request_zero_signals_on_error"]
    row = run_check(planned.check, planned.target, timeout_s=5.0).row()
    assert row["verdict"] == "pass" and "threads-joined" not in row["trace"], row["trace"]

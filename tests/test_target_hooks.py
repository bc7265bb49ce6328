"""The adapter's hooks for what only it can tell: a call that never reached the implementation
(`Target.call_not_made`) is charged to the target or the adapter, never to the call's rule; a check the
runner gives up at its deadline is handed to `Target.session_abandoned`, once, sealed, so that the adapter
can free the call its thread is stuck in."""

from __future__ import annotations

import threading

from rstck import InProcessTarget
from rstck.core.verdict import TargetError, Verdict
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reference.publishers import IterablePublisher


class Unreachable(Exception):
    """What an adapter's means of delivery raises when the implementation cannot be reached."""


class UnreachablePublisher(IterablePublisher):
    def subscribe(self, subscriber) -> None:
        raise Unreachable("the line to the implementation is down")


class UnreachableTarget(InProcessTarget):
    """Says a subscribe that raised Unreachable was never made, blaming `blame` (the target or the adapter)."""

    def __init__(self, blame: str | None):
        super().__init__(create_publisher=lambda n: UnreachablePublisher(range(n)))
        self.blame = blame

    def call_not_made(self, exc: BaseException, call: str) -> Exception | None:
        if not isinstance(exc, Unreachable) or self.blame is None:
            return None
        if self.blame == "target":
            return TargetError(f"{call} never reached the implementation: it hung up")
        return ConnectionError(f"{call} could not be delivered: {exc}")


def _run(target, rules: str, timeout_s: float = 5.0):
    return run_check(next(p.check for p in plan(target, rules=rules)), target, timeout_s=timeout_s)


def test_a_call_the_target_made_impossible_is_the_targets_error_not_the_rules_fail():
    result = _run(UnreachableTarget("target"), "1.5")
    assert result.verdict is Verdict.ERROR and not result.violated, result.message
    assert result.reason == "publisher.subscribe(probe#1) never reached the implementation: it hung up"


def test_a_call_the_adapter_could_not_deliver_is_the_kits_error():
    result = _run(UnreachableTarget("adapter"), "1.5")
    assert result.verdict is Verdict.ERROR and not result.violated, result.message
    assert result.reason.startswith("the kit broke: ConnectionError")


def test_without_the_hook_what_the_call_raised_is_the_implementations_answer():
    result = _run(UnreachableTarget(None), "1.5")
    assert result.verdict is Verdict.FAIL and result.violated == "1.9", result.message


class StuckPublisher(IterablePublisher):
    """subscribe() waits until the adapter lets it go, then serves as usual."""

    def __init__(self, n: int, released: threading.Event):
        super().__init__(range(n))
        self.released = released

    def subscribe(self, subscriber) -> None:
        if self.released.wait(30):
            super().subscribe(subscriber)


class ReleasingTarget(InProcessTarget):
    """Lets the stuck call go when the runner gives the check up, as an adapter stops a process."""

    def __init__(self):
        self.released = threading.Event()
        super().__init__(create_publisher=lambda n: StuckPublisher(n, self.released))
        self.abandoned: list[tuple[object, bool]] = []  # (session, whether it was sealed by then)

    def session_abandoned(self, session) -> None:
        self.abandoned.append((session, session.lifecycle.sealed))
        self.released.set()


def test_a_check_given_up_at_its_deadline_is_handed_to_the_target_sealed_once():
    target = ReleasingTarget()
    result = _run(target, "1.5", timeout_s=0.3)
    assert (result.verdict, result.violated, result.timed_out) == (Verdict.FAIL, "1.9", True)
    assert [sealed for _, sealed in target.abandoned] == [True]
    assert target.released.is_set()


def test_a_check_that_ends_in_time_is_never_abandoned():
    target = ReleasingTarget()
    target.released.set()
    result = _run(target, "1.5")
    assert result.verdict is Verdict.PASS, result.message
    assert target.abandoned == []


def test_outside_a_check_target_executor_and_loop_are_plain_ones_so_the_same_factories_work():
    """A reproducer calls the user's factories with no check running: target.executor is then a plain thread pool
    and target.loop the loop running on the calling thread."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    target = InProcessTarget(create_publisher=lambda n: IterablePublisher(range(n)))
    assert isinstance(target.executor, ThreadPoolExecutor)
    assert target.executor.submit(lambda: 42).result(timeout=10) == 42

    async def inside():
        return target.loop is asyncio.get_running_loop()

    assert asyncio.run(inside())
    try:
        target.loop
    except RuntimeError as exc:
        assert "none runs on this thread" in str(exc)
    else:
        raise AssertionError("target.loop with no loop running must say so")

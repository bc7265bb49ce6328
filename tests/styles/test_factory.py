"""The factory makes what a style's name says: each delivery signals where it claims to, on_subscribe comes where
its choice puts it, and a request drains on its own thread or on the delivery's as its choice says. Driven by hand
with a plain recording subscriber, without the kit, so that a style that passed the kit's checks for the wrong
reason (every style collapsing into one) would show here."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from .choices import DELIVERIES, Style, allowed_styles, exclusion
from .targets import fresh

# A bound for a stream of three to end, far above what any delivery takes (the timer's is 2 ms); never a decision
# that nothing more comes.
ENDED_WITHIN_S = 10.0

# Where each delivery's scheduled drains run: the name its thread carries (None: the thread that called).
THREAD_NAMES = {"caller": None, "thread_per_request": "styles-thread-per-request", "timer": "styles-timer",
                "shared_pool": "styles-shared-pool", "loop_thread": "styles-loop-thread", "asyncio_loop": None}


class Recorder:
    """Requests `first` from inside on_subscribe and notes, for every signal, the thread it came on."""

    def __init__(self, first: int):
        self.first = first
        self.signals: list[tuple[str, str]] = []
        self.ended = threading.Event()
        self.subscription = None

    def on_subscribe(self, subscription) -> None:
        self.signals.append(("on_subscribe", threading.current_thread().name))
        self.subscription = subscription
        if self.first:
            subscription.request(self.first)

    def on_next(self, item) -> None:
        self.signals.append(("on_next", threading.current_thread().name))

    def on_error(self, error) -> None:
        self.signals.append(("on_error", threading.current_thread().name))
        self.ended.set()

    def on_complete(self) -> None:
        self.signals.append(("on_complete", threading.current_thread().name))
        self.ended.set()

    def threads_of(self, kind: str) -> set[str]:
        return {thread for signal, thread in self.signals if signal == kind}


def publisher_style(delivery: str, on_subscribe: str = "on_worker", request: str = "records_and_schedules") -> Style:
    guard = "no_lock" if exclusion(Style("publisher", delivery, "no_lock", on_subscribe, request)) is None \
        else "bookkeeping_lock"
    return Style("publisher", delivery, guard, on_subscribe, request)


def run_in_a_loop_thread(work):
    """`work()` on a thread of its own whose asyncio loop runs meanwhile (the asyncio_loop delivery's loop, as
    `target.loop` is outside a check): the thread's name, and what `work` returned."""
    outcome: dict = {}

    def main() -> None:
        async def inside() -> None:
            outcome["value"] = work()
            while not outcome["value"].ended.is_set():
                await asyncio.sleep(0.001)  # the loop must run for the work it scheduled

        asyncio.run(asyncio.wait_for(inside(), ENDED_WITHIN_S))

    thread = threading.Thread(target=main, name="styles-test-loop")
    thread.start()
    thread.join()
    return thread.name, outcome["value"]


def subscribe(style: Style, n: int, first: int) -> tuple[str, Recorder]:
    """A recorder subscribed to a publisher of `n` in `style`, on the calling thread (a loop thread of its own for
    asyncio_loop): that thread's name and the recorder, once the stream has ended."""
    target = fresh(style)

    def work() -> Recorder:
        recorder = Recorder(first)
        target.create_publisher(n).subscribe(recorder)
        return recorder

    if style.delivery == "asyncio_loop":
        caller, recorder = run_in_a_loop_thread(work)
    else:
        caller, recorder = threading.current_thread().name, work()
    assert recorder.ended.wait(ENDED_WITHIN_S), recorder.signals
    return caller, recorder


def where(delivery: str, caller: str) -> str | None:
    return caller if delivery in ("caller", "asyncio_loop") else THREAD_NAMES[delivery]


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_scheduled_drains_run_where_the_delivery_says(delivery):
    caller, recorder = subscribe(publisher_style(delivery), n=3, first=3)
    assert [s for s, _ in recorder.signals] == ["on_subscribe", "on_next", "on_next", "on_next", "on_complete"]
    expected = where(delivery, caller)
    assert {t.rsplit("_", 1)[0] for t in recorder.threads_of("on_next")} == {expected}


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_on_subscribe_comes_in_subscribe_or_on_the_worker(delivery):
    caller, inside = subscribe(publisher_style(delivery, on_subscribe="in_subscribe"), n=0, first=0)
    assert inside.threads_of("on_subscribe") == {caller}
    caller, on_worker = subscribe(publisher_style(delivery, on_subscribe="on_worker"), n=0, first=0)
    assert {t.rsplit("_", 1)[0] for t in on_worker.threads_of("on_subscribe")} == {where(delivery, caller)}


@pytest.mark.parametrize("delivery", ["thread_per_request", "timer", "shared_pool"])
def test_a_request_drains_on_its_own_thread_only_when_it_drains_inline(delivery):
    for request, drains_here in (("drains_inline", True), ("records_and_schedules", False)):
        recorder = Recorder(first=0)
        fresh(publisher_style(delivery, request=request)).create_publisher(2).subscribe(recorder)
        # the first drain, which finds no demand, has let go of the right to drain
        assert wait_until(lambda: recorder.subscription is not None and recorder.subscription.wip == 0)
        subscription = recorder.subscription
        requester = threading.Thread(target=subscription.request, args=(2,), name="styles-test-requester")
        requester.start()
        requester.join()
        assert recorder.ended.wait(ENDED_WITHIN_S), recorder.signals
        assert (recorder.threads_of("on_next") == {"styles-test-requester"}) == drains_here, request


def wait_until(condition) -> bool:
    """Whether `condition()` came true within ENDED_WITHIN_S (looked at every millisecond)."""
    deadline = time.monotonic() + ENDED_WITHIN_S
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_every_allowed_style_has_a_target_and_no_excluded_one_does():
    for style in allowed_styles():
        assert fresh(style).name == style.name
    with pytest.raises(ValueError, match="not in the matrix: without a lock"):
        fresh(Style("publisher", "timer", "no_lock", "in_subscribe", "drains_inline"))
    with pytest.raises(ValueError, match="2.7 is a subscriber's rule"):
        fresh(Style("publisher", "timer", "queue_drain", "in_subscribe", "drains_inline", "unserialised_top_up"))

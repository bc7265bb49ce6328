"""The processor checks that wire both sides at once (a long stream under unbounded demand, a raising subscriber,
signals caused on one side while the other side signals) never fail a processor for a style the conformant zoo
lacks: one that greets a subscriber only once it has an upstream (the checks that subscribe downstream first
cannot go on with it, and say so; the others pass, and no check of the rest fails it), one whose every signal downstream comes from a worker thread
of its own, and one that asks its upstream for `inf`, as a JavaScript processor's `request(Infinity)` arrives."""

from __future__ import annotations

import logging
import queue
import threading

import pytest

from rstck.api import MAX_DEMAND
from rstck.execution.plan import plan
from rstck.reference.processors import MapProcessor
from rstck.reference.publishers import FailedPublisher
from rstck.execution.runner import run_check
from rstck.core.verdict import Verdict

from .test_zoo import verdicts
from .zoo.subscriber_mutants import processor_case

# A bound only: in-process checks here take milliseconds, a Node process round trips.
TIMEOUT_S = 10.0
LONG_STREAM_CHECKS = {"unbounded_demand_carries_a_long_stream_through",
                      "unbounded_demand_made_before_the_upstream_carries_a_long_stream_through"}
BOTH_SIDES_CHECKS = {
    "unbounded_demand_carries_a_long_stream_through",
    "unbounded_demand_made_before_the_upstream_carries_a_long_stream_through",
    "processor_returns_normally_when_its_subscriber_raises",
    "upstream_cancelled_when_the_only_subscriber_raises",
    "on_error_for_a_second_threads_request_waits_for_the_on_next_in_flight",
    "elements_from_an_upstream_arriving_meanwhile_wait_for_on_subscribe",
}


class GreetsOnceItHasAnUpstream(MapProcessor):
    """Correct: a subscriber that comes before the upstream waits for it; its on_subscribe follows the upstream's
    (1.9 sets no time for it). A second subscriber meanwhile is rejected."""

    _waiting = None

    def subscribe(self, subscriber) -> None:
        with self._lock:
            early = subscriber is not None and self._upstream_state == "new" and self._downstream_state == "new"
            rejected = early and self._waiting is not None
            if early and not rejected:
                self._waiting = subscriber
        if rejected:
            FailedPublisher(RuntimeError("it serves a single subscriber")).subscribe(subscriber)
        elif not early:
            super().subscribe(subscriber)

    def on_subscribe(self, subscription) -> None:
        super().on_subscribe(subscription)
        with self._lock:
            waiting, self._waiting = self._waiting, None
        if waiting is not None:
            super().subscribe(waiting)


_log = logging.getLogger(__name__)
_STOP = object()  # wakes the worker so that it ends


class WorkerThreadIdentity:
    """Correct: every signal downstream is made by one worker thread of its own, which takes them from a queue in
    order, so they never overlap; requests and cancels go upstream from the thread that makes them, under a lock
    that keeps them serial (2.7). A second subscriber is rejected."""

    def __init__(self):
        self._lock = threading.Lock()
        self._upstream_calls = threading.Lock()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        self._upstream = None  # live upstream subscription
        self._upstream_seen = False
        self._owed = 0  # demand asked before the upstream came
        self._pending_end: tuple | None = None  # the upstream's end, before any subscriber
        self._subscriber = None
        self._had_subscriber = False
        self._done = False  # downstream cancelled, failed or ended: nothing more goes to it

    # -- the publisher side
    def subscribe(self, subscriber) -> None:
        if subscriber is None:
            raise TypeError("subscribe(None) (rule 1.9)")
        with self._lock:
            first, self._had_subscriber = not self._had_subscriber, True
            if first:
                self._subscriber = subscriber
                self._outbox.put(("on_subscribe", _WorkerSubscription(self)))
                if self._pending_end is not None:
                    self._outbox.put(self._pending_end)
        if not first:
            FailedPublisher(RuntimeError("it serves a single subscriber")).subscribe(subscriber)
            return
        threading.Thread(target=self._work, name="processor-worker", daemon=True).start()

    def _request(self, n) -> None:
        with self._lock:
            if self._done:
                return
            legal = isinstance(n, int) and n > 0
            if not legal:  # 3.9: on_error after what is queued, and the upstream is of no use any more
                self._done = True
                self._outbox.put(("on_error", ValueError(f"request({n!r}): non-positive (rule 3.9)")))
                upstream, self._upstream = self._upstream, None
            else:
                upstream = self._upstream
                if upstream is None and not self._upstream_seen:
                    self._owed = min(self._owed + n, MAX_DEMAND)
        if upstream is not None and legal:
            self._call_upstream(upstream, "request", n)
        elif upstream is not None:
            self._call_upstream(upstream, "cancel")

    def _cancel(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done, self._subscriber = True, None  # 3.13
            upstream, self._upstream = self._upstream, None
        self._outbox.put(_STOP)
        if upstream is not None:
            self._call_upstream(upstream, "cancel")

    def _call_upstream(self, upstream, method: str, *args) -> None:
        with self._upstream_calls:
            if method == "cancel":
                upstream.cancel()
            else:
                upstream.request(*args)

    # -- the subscriber side
    def on_subscribe(self, subscription) -> None:
        if subscription is None:
            raise TypeError("on_subscribe(None) (rule 2.13)")
        with self._lock:
            duplicate, self._upstream_seen = self._upstream_seen, True
            if not duplicate and not self._done:
                self._upstream = subscription
            owed, self._owed = self._owed, 0
        if duplicate or self._done:
            self._call_upstream(subscription, "cancel")
        elif owed:
            self._call_upstream(subscription, "request", owed)

    def on_next(self, item) -> None:
        if item is None:
            raise TypeError("on_next(None) (rule 2.13)")
        self._outbox.put(("on_next", item))

    def on_error(self, error) -> None:
        if error is None:
            raise TypeError("on_error(None) (rule 2.13)")
        self._upstream_ended(("on_error", error))

    def on_complete(self) -> None:
        self._upstream_ended(("on_complete",))

    def _upstream_ended(self, end: tuple) -> None:
        with self._lock:
            self._upstream = None
            if not self._had_subscriber:
                self._pending_end = end
                return
        self._outbox.put(end)

    # -- the worker
    def _work(self) -> None:
        while True:
            signal = self._outbox.get()
            subscriber = self._subscriber
            if signal is _STOP or subscriber is None:
                return
            method, *args = signal
            if method in ("on_error", "on_complete"):
                with self._lock:
                    self._done, self._subscriber = True, None
            try:
                getattr(subscriber, method)(*args)
            except Exception:
                _log.warning("the subscriber's %s raised; its subscription counts as cancelled (rule 2.13)", method,
                             exc_info=True)
                self._cancel()
                return
            if method in ("on_error", "on_complete"):
                return


class _WorkerSubscription:
    def __init__(self, processor: WorkerThreadIdentity):
        self._processor = processor

    def request(self, n) -> None:
        self._processor._request(n)

    def cancel(self) -> None:
        self._processor._cancel()

CASE = processor_case("greets_once_it_has_an_upstream", GreetsOnceItHasAnUpstream)


def test_checks_that_need_a_greeting_before_the_upstream_are_not_applicable_without_one():
    """The checks that subscribe downstream first say why they cannot go on, and the others pass."""
    planned = [p for p in plan(CASE.target) if p.check.name in BOTH_SIDES_CHECKS]
    assert {p.check.name for p in planned} == BOTH_SIDES_CHECKS
    verdicts_by_check = {p.check.name: run_check(p.check, p.target, timeout_s=TIMEOUT_S) for p in planned}
    first = {"unbounded_demand_made_before_the_upstream_carries_a_long_stream_through",
             "elements_from_an_upstream_arriving_meanwhile_wait_for_on_subscribe"}
    for name, result in verdicts_by_check.items():
        expected = Verdict.NOT_APPLICABLE if name in first else Verdict.PASS
        assert result.verdict is expected, f"{name}: {result.message}\n{result.trace}"


class AsksUpstreamForInfinity(MapProcessor):
    """Correct: unbounded downstream demand goes upstream as `request(inf)`, the Python spelling of a JavaScript
    processor's `request(Infinity)` as the Node bridge delivers it ("effectively unbounded", 3.17)."""

    def _call_upstream(self, subscription, method: str, *args) -> None:
        if method == "request" and args[0] >= MAX_DEMAND:
            args = (float("inf"),)
        super()._call_upstream(subscription, method, *args)


def test_the_kits_source_takes_request_infinity_as_unbounded_demand():
    """Before the kit's source took it for a non-positive request and failed the processor with on_error (3.9),
    and the processor its own downstream: a false 3.17 on a correct JavaScript processor."""
    case = processor_case("asks_upstream_for_infinity", AsksUpstreamForInfinity)
    planned = [p for p in plan(case.target) if p.check.name in LONG_STREAM_CHECKS]
    assert len(planned) == 2
    for p in planned:
        result = run_check(p.check, p.target, timeout_s=TIMEOUT_S)
        assert result.verdict is Verdict.PASS, f"{p.check.name}: {result.message}\n{result.trace}"


@pytest.mark.node
def test_a_javascript_processor_passes_the_both_sides_checks():
    """Through a real node process: the conformant JavaScript processor, which asks its upstream for `Infinity`."""
    from .node.conftest import NODE_MISSING, node_available
    from .node.helpers import here, node_target, run

    if not node_available():
        pytest.skip(NODE_MISSING)

    with node_target(here("conformant", "self_subscribed_processor.js")) as target:
        results = [r for r in run(target, rules="1.3,2.6,2.13,3.17", timeout_s=TIMEOUT_S)
                   if r.check in BOTH_SIDES_CHECKS]
    assert {r.check for r in results} == BOTH_SIDES_CHECKS
    bad = [f"{r.check}: {r.verdict.value}: {r.message}" for r in results
           if r.verdict not in (Verdict.PASS, Verdict.NOT_APPLICABLE)]
    assert bad == [], "\n\n".join(bad)


def test_a_processor_that_signals_from_a_worker_thread_of_its_own_passes_everything():
    found = verdicts(processor_case("worker_thread_identity", WorkerThreadIdentity))
    assert found[Verdict.FAIL] == set()
    assert found[Verdict.WARN] == set()


def test_a_processor_that_greets_once_it_has_an_upstream_is_failed_by_no_check():
    """1.9 sets no time for on_subscribe: seen as a subscriber (4.1's view), such a processor was failed 1.9 when the
    kit's downstream probe asked for its demand before the greeting came."""
    results = [run_check(p.check, p.target, timeout_s=TIMEOUT_S) for p in plan(CASE.target)]
    bad = [f"{r.rule} {r.check}: {r.verdict.value}: {r.message}" for r in results
           if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN)]
    assert bad == [], "\n\n".join(bad)

"""A call that hangs inside another that hangs with it: the script charges the innermost, the one the others wait for,
as the kit does, however long after the outer call it began (observed: a script of reentrant_request_deadlocks said
3.16 for the kit's 3.2 when its watchdog looked between the two calls' deadlines, so the finding lost its script)."""

from __future__ import annotations

import time

from rstck.core.target import load_target
from rstck.reports.repro import write_reproducers

from ..zoo import publishers as p
from ..zoo.publisher_mutants import publisher_target
from .helpers import rows_of


class SlowToDeliverAndNotReentrant(p.ReentrantRequestDeadlocks):
    """3.2: a request from inside on_next deadlocks; each request takes 0.1 s before it delivers, so the outer call
    has been outstanding that much longer than the inner one when both hang (a script's watchdog looks every 20 ms)."""

    def request(self, n: int) -> None:
        with self.request_lock:
            time.sleep(0.1)
            p.Subscription.request(self, n)


slow_and_not_reentrant = publisher_target("slow_and_not_reentrant", subscription=SlowToDeliverAndNotReentrant)


def test_the_script_of_a_nested_hang_names_the_innermost_call_as_the_kit_does(tmp_path):
    rows = [row for row in rows_of(load_target("tests.repro.test_hang_judgement:slow_and_not_reentrant"), 1.0,
                                   rules="1.1") if row["check"] == "on_next_within_demand_signalled_from_on_next"]
    assert [(row["verdict"], row["violated"]) for row in rows] == [("fail", "3.2")], rows
    [found] = write_reproducers(rows, tmp_path)
    assert found.path is not None, found.reason

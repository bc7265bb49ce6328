"""The subscriber machine: the kit as publisher against a subscriber under test (rules 2.x, 3.1).

Steps: attach another subscriber under test (at most MAX_SUBSCRIBERS, so that one can be
caught calling another's subscription, 3.1), send on_next against its demand, on_complete,
on_error, a second on_subscribe, a None argument, settle. upstream.py says what each step
may send and which rule each observation is charged to.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from rstck.fuzz.machine import FuzzMachine, RunContext, step
from rstck.fuzz.strategies import NONE_ARGUMENTS, options
from rstck.fuzz.upstream import Upstream

MAX_SUBSCRIBERS = 2
subscriber_index = st.integers(0, MAX_SUBSCRIBERS - 1)


class SubscriberMachine(FuzzMachine):
    role = "subscriber"

    def __init__(self, context: RunContext):
        super().__init__(context)
        self.upstreams: list[Upstream] = []
        self.capabilities = context.target.capabilities

    @initialize(dwell=st.booleans())
    @step
    def attach(self, dwell: bool) -> None:
        self._attach(dwell)

    # No preconditions (see publisher.py): a step that does not apply does nothing.

    @rule(dwell=st.booleans())
    @step
    def attach_another(self, dwell: bool) -> None:
        if len(self.upstreams) < MAX_SUBSCRIBERS:
            self._attach(dwell)

    def _attach(self, dwell: bool) -> None:
        session = self.session
        if "observer" in self.capabilities:
            observer = session.observer()
            subscriber = session.create_whitebox_subscriber(observer)
        else:
            observer, subscriber = None, session.create_subscriber()
        upstream = Upstream(session, subscriber, observer=observer, dwell=dwell)
        self.upstreams.append(upstream)
        upstream.attach()

    def _upstream(self, which: int) -> Upstream:
        return self.upstreams[which % len(self.upstreams)]

    @rule(which=subscriber_index, count=st.integers(1, 4))
    @step
    def send_next(self, which: int, count: int) -> None:
        self._upstream(which).send(count)

    @rule(which=subscriber_index)
    @step
    def send_complete(self, which: int) -> None:
        self._upstream(which).complete()

    @rule(which=subscriber_index)
    @step
    def send_error(self, which: int) -> None:
        self._upstream(which).fail()

    @rule(which=subscriber_index)
    @step
    def subscribe_again(self, which: int) -> None:
        self._upstream(which).subscribe_again()

    @rule(which=subscriber_index, method=options(NONE_ARGUMENTS))
    @step
    def send_none(self, which: int, method: str) -> None:
        if "null_arguments" in self.capabilities:
            self._upstream(which).send_none(method)

    @rule()
    @step
    def settle(self) -> None:
        self.settle_target()
        self.check_settled()

    def finish(self) -> None:
        self.settle_target()
        self.check_settled()

    def check_settled(self) -> None:
        for upstream in self.upstreams:
            upstream.check_settled()

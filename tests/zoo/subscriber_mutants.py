"""The subscriber and processor mutants as targets, with the verdicts the kit must reach on each."""

from __future__ import annotations

from rstck import InProcessTarget
from rstck.reference.processors import MapProcessor

from . import processors as proc
from . import subscribers as s
from .publisher_mutants import ZOO_RESPONSIVENESS_BOUND_S, Case


def subscriber_case(name: str, cls, *, uses: tuple[str, ...] = (), fails=(), warns=(), unsupported=(),
                    passes=()) -> Case:
    def make() -> InProcessTarget:
        shared = s.Shared()  # one per target: what a mutant remembers across its instances

        def create(observer):
            return cls(observer, shared=shared, **{resource: getattr(target, resource) for resource in uses})

        target = InProcessTarget(create_whitebox_subscriber=create, name=name,
                                 responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)
        return target

    return Case(name, make, frozenset(fails), frozenset(warns), frozenset(unsupported), frozenset(passes))


def processor_case(name: str, create, *, fails=(), warns=(), unsupported=(), passes=()) -> Case:
    def make() -> InProcessTarget:
        return InProcessTarget(create_processor=create, name=name, responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)

    return Case(name, make, frozenset(fails), frozenset(warns), frozenset(unsupported), frozenset(passes))


SUBSCRIBER_MUTANTS = [
    subscriber_case("never_requests", s.NeverRequests, fails={"2.1"}),
    subscriber_case("one_at_a_time", s.OneAtATime, warns={"2.1.batch-demand"}),
    subscriber_case("slow_first_element", s.SlowFirstElement, warns={"2.2"}),
    subscriber_case("blocks_once", s.BlocksOnce, fails={"async.non-blocking"}),
    subscriber_case("cancels_in_on_complete", s.CancelsInOnComplete, fails={"2.3"}),
    subscriber_case("keeps_two_subscriptions", s.KeepsTwoSubscriptions, fails={"2.5"}),
    subscriber_case("concurrent_requests", s.ConcurrentRequests, uses=("executor",), fails={"2.7"}),
    subscriber_case("raises_after_cancel", s.RaisesAfterCancel, fails={"2.8"}),
    subscriber_case("raises_on_early_complete", s.RaisesOnEarlyComplete, fails={"2.9"}),
    subscriber_case("raises_on_early_error", s.RaisesOnEarlyError, fails={"2.10"}),
    subscriber_case("latest_slot", s.LatestSlot, uses=("loop",), fails={"2.11"}),
    subscriber_case("accepts_none", s.AcceptsNone, fails={"2.13"}),
    subscriber_case("raises_on_third", s.RaisesOnThird, fails={"2.13"}),
    subscriber_case("shared_subscription", s.SharedSubscription, fails={"3.1"}),
]

SUBSCRIBER_GUARDS = [
    subscriber_case("baseline_subscriber", s.Subscriber),
    subscriber_case("cancels_after_three", s.CancelsAfterThree, passes={"2.8"}),
    subscriber_case("asynchronous_requests", s.AsynchronousRequests, uses=("executor",)),
    # a request after the end is a NOP it may make (1.6, 3.6): 2.4 asks it only to consider the subscription
    # cancelled, and the kit does not charge it
    subscriber_case("requests_after_complete", s.RequestsAfterComplete, uses=("loop",)),
]

PROCESSOR_MUTANTS = [
    # seen as a failed publisher (4.1's view), it never passes the failure on (1.4)
    processor_case("swallows_error", proc.SwallowsError, fails={"4.2", "1.4"}),
    processor_case("over_delivers", proc.OverDelivers, fails={"1.1"}),
    # a single-use processor whose only subscriber cancelled has no use for its upstream: 2.6's MUST as well
    processor_case("keeps_upstream_open", proc.KeepsUpstreamOpen, fails={"2.6"}, warns={"4.2.cancel-upstream"}),
    processor_case("maps_instead_of_passing_through", lambda: MapProcessor(lambda x: x + 1), fails={"4.1"}),
]

PROCESSOR_GUARDS = [
    processor_case("reference_identity_processor", MapProcessor),
    # forwarding demand upstream after the upstream completed is a NOP call it may make (1.6, 3.6), not 2.4's
    processor_case("requests_after_upstream_completed", proc.RequestsAfterUpstreamCompleted),
]

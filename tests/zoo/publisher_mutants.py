"""The publisher mutants as targets, each with the verdicts the kit must reach on it."""

from __future__ import annotations

import dataclasses

from rstck import InProcessTarget

from . import publishers as p


@dataclasses.dataclass(frozen=True)
class Case:
    """A target and what running every check against it must give.

    fails: exactly the items charged with a fail. warns: exactly the items charged with a
    warn. unsupported: items that must be among the unsupported ones. passes: items that
    must pass (for MAY items that are offered).
    """

    name: str
    target: InProcessTarget
    fails: frozenset[str] = frozenset()
    warns: frozenset[str] = frozenset()
    unsupported: frozenset[str] = frozenset()
    passes: frozenset[str] = frozenset()
    timeout_s: float = 1.5  # short enough that a hanging mutant costs little, long enough for a loaded CI


# The zoo's "slow" mutants are slower than this, and everything else is far quicker: a low bound
# keeps their runs short.
ZOO_RESPONSIVENESS_BOUND_S = 0.05


def publisher_target(name: str, subscription=p.Subscription, publisher=p.Publisher, *,
                     failed=p.FailedPublisher, uses: tuple[str, ...] = ()) -> InProcessTarget:
    def create(n: int):
        made = publisher(n, **{resource: getattr(target, resource) for resource in uses})
        if subscription is not p.Subscription or publisher.subscription is p.Subscription:
            made.subscription = subscription
        return made

    target = InProcessTarget(create_publisher=create, create_failed_publisher=failed, name=name,
                             responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S)
    return target


def case(name: str, *, fails=(), warns=(), unsupported=(), passes=(), timeout_s: float = 1.5,
         **target_options) -> Case:
    return Case(name, publisher_target(name, **target_options), frozenset(fails), frozenset(warns),
                frozenset(unsupported), frozenset(passes), timeout_s)


# Items whose obligation a check covers -> the mutant that must be caught on it.
MUTANTS = [
    case("excess_on_next", subscription=p.ExcessOnNext, fails={"1.1"}),
    case("unserialized_executor_delivery", subscription=p.UnserializedSubscription, uses=("executor",),
         fails={"1.3"}, unsupported={"3.10", "3.11"}),
    case("failed_publisher_completes", failed=p.FailedPublisherCompletes, fails={"1.4"}),
    case("never_completes", subscription=p.NeverCompletes, fails={"1.5"}, unsupported={"1.2", "3.11"}),
    case("errors_when_requested_after_end", subscription=p.ErrorsWhenRequestedAfterEnd, fails={"1.6"}),
    case("completes_twice", subscription=p.CompletesTwice, fails={"1.7"}),
    case("pumps_cancelled_subscribers", publisher=p.PumpsCancelledSubscribers,
         subscription=p.PumpsCancelledSubscribers.subscription, fails={"1.8", "3.13"}),
    case("subscribe_raises", publisher=p.SubscribeRaises, fails={"1.9"}),
    case("no_on_subscribe", publisher=p.NoOnSubscribe, fails={"1.9"}),
    case("accepts_none_subscriber", publisher=p.AcceptsNoneSubscriber, fails={"1.9"}),
    case("shared_iterator", publisher=p.SharedIterator, fails={"1.10"}),
    case("rejects_second_subscriber", publisher=p.RejectsSecondSubscriber, unsupported={"1.11"}),
    case("reentrant_request_raises", subscription=p.ReentrantRequestRaises, fails={"3.2"}),
    case("reentrant_request_deadlocks", subscription=p.ReentrantRequestDeadlocks, fails={"3.2"}, timeout_s=0.5),
    case("recursive_delivery", subscription=p.RecursiveDelivery, fails={"3.3"}, warns={"3.3.depth-one"}),
    case("depth_three_delivery", subscription=p.DepthThreeDelivery, warns={"3.3.depth-one"}),
    case("slow_first_request", subscription=p.SlowFirstRequest, warns={"3.4"}),
    case("slow_cancel", subscription=p.SlowCancel, fails={"3.5"}),
    case("cancel_not_thread_safe", subscription=p.CancelNotThreadSafe, fails={"3.5"}),
    case("request_after_cancel_delivers", subscription=p.RequestAfterCancelDelivers, fails={"3.6", "3.13"}),  # reviving it needs the subscriber
    case("second_cancel_completes", subscription=p.SecondCancelCompletes, fails={"3.7", "3.13"}),  # completing it needs the subscriber
    case("request_replaces_demand", subscription=p.RequestReplacesDemand, fails={"3.8"}),
    case("ignores_non_positive_request", subscription=p.IgnoresNonPositiveRequest, fails={"3.9"}),
    case("unhelpful_request_error", subscription=p.UnhelpfulRequestError, warns={"3.9.message"}),
    # ignoring cancellation, it also goes on after its subscriber raised (the publisher's half of 2.13)
    case("delivery_ignores_cancel", subscription=p.DeliveryIgnoresCancel, fails={"3.12", "2.13"}),
    case("keeps_subscribers", publisher=p.KeepsSubscribers, fails={"3.13"}),
    case("cancel_raises", subscription=p.CancelRaises, fails={"3.15"}),
    case("request_raises_beyond_remaining", subscription=p.RequestRaisesBeyondRemaining, fails={"3.16"}),
    case("int64_demand", subscription=p.Int64Demand, fails={"3.17"}),
    case("rejects_demand_beyond_max", subscription=p.RejectsDemandBeyondMax, unsupported={"3.17.unbounded"}),
]

# Correct publishers that must pass every check: guards against false positives.
GUARDS = [
    case("baseline", passes={"1.2", "1.11", "3.10", "3.11", "3.17.unbounded"}),
    case("lazy_completion", subscription=p.LazyCompletion),
    case("subscription_keeps_subscriber", subscription=p.SubscriptionKeepsSubscriber),
    case("slow_timer_delivery", subscription=p.TimerSubscription, uses=("loop",)),
    case("executor_delivery", subscription=p.ExecutorSubscription, uses=("executor",)),
    case("shuts_down_after_cancel", publisher=p.ShutsDownAfterCancel, subscription=p.ShutDownSubscription,
         passes={"3.14"}),
]

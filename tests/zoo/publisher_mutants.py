"""The publisher mutants as targets, each with the verdicts the kit must reach on it."""

from __future__ import annotations

import dataclasses
from typing import Callable

from rstck import InProcessTarget

from . import publishers as p


@dataclasses.dataclass(frozen=True)
class Case:
    """A target and what running every check against it must give.

    `target` builds a fresh target (and so fresh state) on every use: no test depends on what
    another did with it. fails: exactly the items charged with a fail. warns: exactly the items
    charged with a warn. unsupported: items that must be among the unsupported ones. passes:
    items that must pass (for MAY items that are offered).
    """

    name: str
    make: Callable[[], InProcessTarget]
    fails: frozenset[str] = frozenset()
    warns: frozenset[str] = frozenset()
    unsupported: frozenset[str] = frozenset()
    passes: frozenset[str] = frozenset()
    timeout_s: float = 1.5  # short enough that a hanging mutant costs little, long enough for a loaded CI

    @property
    def target(self) -> InProcessTarget:
        return self.make()


# The zoo's "slow" mutants are slower than this, and everything else is far quicker: a low bound
# keeps their runs short.
ZOO_RESPONSIVENESS_BOUND_S = 0.05


def publisher_target(name: str, subscription=p.Subscription, publisher=p.Publisher, *,
                     failed=p.FailedPublisher, uses: tuple[str, ...] = (),
                     max_elements: int | None = None) -> InProcessTarget:
    def create(n: int):
        made = publisher(n, **{resource: getattr(target, resource) for resource in uses})
        if subscription is not p.Subscription or publisher.subscription is p.Subscription:
            made.subscription = subscription
        return made

    target = InProcessTarget(create_publisher=create, create_failed_publisher=failed, name=name,
                             responsiveness_bound_s=ZOO_RESPONSIVENESS_BOUND_S, max_elements=max_elements)
    return target


def paced(elements: int, pace_s: float) -> float:
    """A deadline for a subject that delivers one element every `pace_s`: four times what `elements`
    take at that pace, and a second more, so that a loaded machine does not decide the verdict."""
    return elements * pace_s * 4 + 1.0


def case(name: str, *, fails=(), warns=(), unsupported=(), passes=(), timeout_s: float = 1.5,
         **target_options) -> Case:
    return Case(name, lambda: publisher_target(name, **target_options), frozenset(fails), frozenset(warns),
                frozenset(unsupported), frozenset(passes), timeout_s)


# Items whose obligation a check covers -> the mutant that must be caught on it.
MUTANTS = [
    case("excess_on_next", subscription=p.ExcessOnNext, fails={"1.1"}),
    case("unserialized_executor_delivery", subscription=p.UnserializedSubscription, uses=("executor",),
         fails={"1.3"}, unsupported={"3.10", "3.11"}),
    # it builds a subscription for subscribe(None) too, which raises AttributeError, not TypeError (1.9)
    case("failed_publisher_completes", failed=p.FailedPublisherCompletes, fails={"1.4", "1.9"}),
    case("never_completes", subscription=p.NeverCompletes, fails={"1.5"}, unsupported={"1.2", "3.11"}),
    case("errors_when_cancelled_after_end", subscription=p.ErrorsWhenCancelledAfterEnd, fails={"1.6"}),
    case("completes_twice", subscription=p.CompletesTwice, fails={"1.7"}),
    case("pumps_cancelled_subscribers", publisher=p.PumpsCancelledSubscribers,
         subscription=p.PumpsCancelledSubscribers.subscription, fails={"1.8", "3.13"}),
    case("subscribe_raises", publisher=p.SubscribeRaises, fails={"1.9"}),
    case("no_on_subscribe", publisher=p.NoOnSubscribe, fails={"1.9"}),
    case("accepts_none_subscriber", publisher=p.AcceptsNoneSubscriber, fails={"1.9"}),
    case("shared_iterator", publisher=p.SharedIterator, fails={"1.10"}),
    case("rejects_second_subscriber", publisher=p.RejectsSecondSubscriber, unsupported={"1.11"}),
    # 3.16 as well: 3.17's check asks for 2**63-1 from inside on_next, a value a publisher may refuse wherever it
    # is asked, so a raise (or a hang) there is 3.16's, not 3.2's
    case("reentrant_request_raises", subscription=p.ReentrantRequestRaises, fails={"3.2", "3.16"}),
    case("reentrant_request_deadlocks", subscription=p.ReentrantRequestDeadlocks, fails={"3.2", "3.16"}),
    case("recursive_delivery", subscription=p.RecursiveDelivery, fails={"3.3"}, warns={"3.3.depth-one"}),
    case("depth_three_delivery", subscription=p.DepthThreeDelivery, warns={"3.3.depth-one"}),
    case("slow_first_request", subscription=p.SlowFirstRequest, warns={"3.4"}),
    case("slow_cancel", subscription=p.SlowCancel, fails={"3.5"}),
    case("thread_affine_cancel", subscription=p.ThreadAffineCancel, fails={"3.5"}),
    case("request_after_cancel_delivers", subscription=p.RequestAfterCancelDelivers, fails={"3.6", "3.13"}),  # reviving it needs the subscriber
    case("second_cancel_completes", subscription=p.SecondCancelCompletes, fails={"3.7", "3.13"}),  # completing it needs the subscriber
    case("request_replaces_demand", subscription=p.RequestReplacesDemand, fails={"3.8"}),
    case("ignores_non_positive_request", subscription=p.IgnoresNonPositiveRequest, fails={"3.9"}),
    case("unhelpful_request_error", subscription=p.UnhelpfulRequestError, warns={"3.9.message"}),
    # ignoring cancellation, it also goes on after its subscriber raised (the publisher's half of 2.13)
    # and the on_error of a request(0) made inside its loop (1.7)
    case("delivery_ignores_cancel", subscription=p.DeliveryIgnoresCancel, fails={"3.12", "2.13", "1.7"}),
    case("keeps_subscribers", publisher=p.KeepsSubscribers, fails={"3.13"}),
    case("cancel_raises", subscription=p.CancelRaises, fails={"3.15"}),
    # a request from inside on_subscribe is re-entrant: raising there is 3.2
    case("request_raises_beyond_remaining", subscription=p.RequestRaisesBeyondRemaining, fails={"3.16", "3.2"}),
    case("int64_demand", subscription=p.Int64Demand, fails={"3.17"}),
    case("rejects_demand_beyond_max", subscription=p.RejectsDemandBeyondMax, unsupported={"3.17.unbounded"}),
    # The classes of false verdict the kit learned to avoid still catch the defect they could hide.
    case("swallows_subscriber_error", subscription=p.SwallowsSubscriberError, warns={"2.13.surfaced"}),
    case("signals_on_subscribe_twice", publisher=p.SignalsOnSubscribeTwice, fails={"2.12"}),
    case("ignores_second_subscriber", publisher=p.IgnoresSecondSubscriber, fails={"1.9"}),
    # lost demand is 3.8, and the checks of 1.5, 3.2 and 3.17 that expect all the elements see it as theirs
    case("thread_per_request_loses_demand", publisher=p.ThreadPerRequestPublisher,
         subscription=p.ThreadPerRequestLosesDemand, fails={"3.8", "3.17", "3.2", "1.5"}),
    case("asyncio_excess_on_next", publisher=p.AsyncioPublisher, subscription=p.AsyncioExcessOnNext, fails={"1.1"}),
    # a request after the end (1.6), and after the kit's cancel as well (3.6), draws on_complete again
    case("empty_completes_on_every_request", publisher=p.EmptyCompletesOnEveryRequest, max_elements=0,
         fails={"1.7", "1.6", "3.6"}),
]

# Correct publishers that must pass every check: guards against false positives.
GUARDS = [
    case("baseline", passes={"1.2", "1.11", "3.10", "3.11", "3.17.unbounded"}),
    case("lazy_completion", subscription=p.LazyCompletion),
    case("subscription_keeps_subscriber", subscription=p.SubscriptionKeepsSubscriber),
    # 256 elements at its pace take 1.3 s: its deadline comes from that pace, not from a fixed guess
    case("slow_timer_delivery", subscription=p.TimerSubscription, uses=("loop",),
         timeout_s=paced(256, p.TIMER_PACE_S)),
    case("executor_delivery", subscription=p.ExecutorSubscription, uses=("executor",)),
    case("shuts_down_after_cancel", publisher=p.ShutsDownAfterCancel, subscription=p.ShutDownSubscription,
         passes={"3.14"}),
    case("asyncio_delivery", publisher=p.AsyncioPublisher, subscription=p.AsyncioSubscription),
]

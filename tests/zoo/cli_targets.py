"""Targets named by MODULE:ATTR strings (`tests.zoo.cli_targets:excess_on_next`), for tests
of the command line and the pytest plugin."""

from __future__ import annotations

from rstck import InProcessTarget

from . import publishers as p
from .publisher_mutants import MUTANTS

_MUTANT_TARGETS = {case.name: case.target for case in MUTANTS}

excess_on_next = _MUTANT_TARGETS["excess_on_next"]  # fails 1.1
subscribe_raises = _MUTANT_TARGETS["subscribe_raises"]  # fails 1.9
no_on_subscribe = _MUTANT_TARGETS["no_on_subscribe"]  # fails 1.9
pumps_cancelled_subscribers = _MUTANT_TARGETS["pumps_cancelled_subscribers"]  # signals after cancel: 1.8, 3.13
unhelpful_request_error = _MUTANT_TARGETS["unhelpful_request_error"]  # warns 3.9.message only
unserialized_executor_delivery = _MUTANT_TARGETS["unserialized_executor_delivery"]  # fails 1.3


def _broken_factory(n: int):
    raise RuntimeError("this factory is broken on purpose")


factory_raises = InProcessTarget(create_publisher=_broken_factory, name="factory raises")

not_a_target = _broken_factory

# Counts the publishers it makes: a run that only lists must make none.
publishers_made: list[int] = []


def _counted_publisher(n: int):
    publishers_made.append(n)
    return p.Publisher(n)


counting = InProcessTarget(create_publisher=_counted_publisher, name="counting")

cancel_raises = _MUTANT_TARGETS["cancel_raises"]  # fails 3.15, also while checking 3.5


class _ClampsDemandAskedInOnSubscribe(p.Subscription):
    """3.8: a fast path for demand signalled from inside on_subscribe keeps only one element of it."""

    def request(self, n: int) -> None:
        if getattr(self, "in_on_subscribe", False) and n > 1:
            n = 1
        super().request(n)


class _ClampingPublisher(p.Publisher):
    subscription = _ClampsDemandAskedInOnSubscribe

    def accept(self, subscriber):
        subscription = self.subscription(self, subscriber, self.source())
        subscription.in_on_subscribe = True
        subscriber.on_subscribe(subscription)
        subscription.in_on_subscribe = False
        subscription.started()
        return subscription


# Passes every rule check; only fuzzing (request(n > 1) from inside on_subscribe) finds it.
clamps_demand_asked_in_on_subscribe = InProcessTarget(create_publisher=_ClampingPublisher,
                                                      name="clamps demand asked in on_subscribe")


class _RecursesAndIgnoresZero(p.RecursiveDelivery, p.IgnoresNonPositiveRequest):
    """Two sentences broken: request -> on_next recursion grows (3.3), request(0) is ignored (3.9)."""


class _TwoRulesBroken(p.Publisher):
    subscription = _RecursesAndIgnoresZero


# Fails 3.3 and 3.9; the 3.9 finding also stops 3.9.message's check (blocked), and fuzzing finds both again.
breaks_3_3_and_3_9 = InProcessTarget(create_publisher=_TwoRulesBroken, name="breaks 3.3 and 3.9")


class _FastPathForTheKitsProbes(p.Publisher):
    """Serves subscribers of rstck's own classes through a "fast path" that sends one element more than asked for
    (1.1), and any other subscriber right: a script's recorder, a class of the script's own, never takes that
    path, so no replay shows the finding."""

    def accept(self, subscriber):
        self.subscription = p.ExcessOnNext if type(subscriber).__module__.startswith("rstck.") else p.Subscription
        return super().accept(subscriber)


fast_path_for_the_kits_probes = InProcessTarget(create_publisher=_FastPathForTheKitsProbes,
                                                name="fast path for the kit's probes")  # fails 1.1, unscripted

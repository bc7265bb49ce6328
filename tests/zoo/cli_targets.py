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

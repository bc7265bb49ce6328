"""The core profile: Reactive Streams 1.1-4.2 (the rules as catalogue.toml quotes them), one check module per
section of the spec."""

from __future__ import annotations

from typing import Any

from rstck.core.plugins import Profile

# A long stream, for the checks whose defects show only past some length: CPython shares one int object for each
# of -5..256, so a count compared with `is` instead of `==` stops matching only beyond 256; and a demand capped at
# a small fixed number stalls only past that number.
SMALL_INT_CACHE_END = 256
LONG_STREAM = 300


def _processor_in_both_roles(target: Any, subjects: set[str]) -> dict[str, Any]:
    """4.1: a processor obeys both contracts, so every publisher check runs against it as a publisher and every
    subscriber check as a subscriber."""
    if "processor" not in subjects:
        return {}
    from rstck.rules.reactive_streams.views import ProcessorAsPublisher, ProcessorAsSubscriber

    return {"publisher": ProcessorAsPublisher(target), "subscriber": ProcessorAsSubscriber(target)}


PROFILE = Profile(
    name="reactive-streams",
    title="Reactive Streams (core profile)",
    package=__name__,
    checks=("publisher", "subscriber", "subscription", "processor"),
    subjects=("processor", "subscriber", "publisher"),
    markers={"publisher": "checks of Publisher rules (1.x)",
             "subscription": "checks of Subscription rules (3.x)",
             "subscriber": "checks of Subscriber rules (2.x)",
             "processor": "checks of Processor rules (4.x) and checks run against a processor"},
    section_needs={"publisher": frozenset({"publisher"}), "subscription": frozenset({"publisher"}),
                   "subscriber": frozenset({"subscriber"}), "processor": frozenset({"processor"})},
    order=0,
    checked_as=_processor_in_both_roles,
    fuzzed_roles=("publisher", "subscriber", "processor"),
    reproduced_in=("python", "javascript", "network", "jvm"),  # their runtimes judge every signal by the core rules
)

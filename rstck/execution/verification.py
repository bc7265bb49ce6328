"""Base classes to subclass in a test module: pytest then runs every check as an item.

    class TestMyPublisher(rstck.PublisherVerification):
        target = rstck.InProcessTarget(create_publisher=lambda n: MyPublisher(range(n)))
"""

from __future__ import annotations

from rstck.core.catalog import DEFAULT_PROFILE
from rstck.core.target import Target


class Verification:
    """Runs the checks whose subject is in `subjects` (None: every subject) against `target` (set by the
    subclass)."""

    target: Target | None = None
    subjects: frozenset[str] | None = None
    rules: str | None = None  # an optional selection, "1.*,3.9"
    profile: str = DEFAULT_PROFILE  # which catalogues' checks run: "default", an opt-in profile ("spi-draft"), "all"
    timeout_s: float | None = None


class PublisherVerification(Verification):
    """Publisher (1.x) and Subscription (3.x) checks."""

    subjects = frozenset({"publisher"})


class SubscriberVerification(Verification):
    """Subscriber (2.x) checks, and the subscriber's side of 1.10 and 3.1."""

    subjects = frozenset({"subscriber"})


class ProcessorVerification(Verification):
    """Processor (4.x) checks, and every publisher and subscriber check applied to the processor."""

    subjects = frozenset({"processor"})

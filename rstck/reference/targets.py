"""Ready-made targets for the reference implementations: `rstck check rstck.reference.targets:sync_publisher`."""

from __future__ import annotations

from ..target import InProcessTarget
from .publishers import AsyncioPublisher, ExecutorPublisher, FailedPublisher, IterablePublisher


def _failure() -> BaseException:
    return RuntimeError("the reference failed publisher fails on purpose")


sync_publisher = InProcessTarget(
    create_publisher=lambda n: IterablePublisher(range(n)),
    create_failed_publisher=lambda: FailedPublisher(_failure),
    name="reference sync publisher",
)

threaded_publisher = InProcessTarget(
    create_publisher=lambda n: ExecutorPublisher(range(n), threaded_publisher.executor),
    create_failed_publisher=lambda: FailedPublisher(_failure),
    name="reference threaded publisher",
)

asyncio_publisher = InProcessTarget(
    create_publisher=lambda n: AsyncioPublisher(range(n), asyncio_publisher.loop),
    create_failed_publisher=lambda: FailedPublisher(_failure),
    name="reference asyncio publisher",
)

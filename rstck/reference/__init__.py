"""Reference implementations that conform to every rule: the kit's own known-good targets.

Publishers over iterables (synchronous, executor-driven, asyncio-driven, and always
failing), subscribers with subscriber-controlled demand, and a mapping processor.
"""

from __future__ import annotations

from rstck.reference.processors import MapProcessor
from rstck.reference.publishers import AsyncioPublisher, ExecutorPublisher, FailedPublisher, IterablePublisher
from rstck.reference.subscribers import BufferedSubscriber, SyncSubscriber

__all__ = [
    "AsyncioPublisher",
    "BufferedSubscriber",
    "ExecutorPublisher",
    "FailedPublisher",
    "IterablePublisher",
    "MapProcessor",
    "SyncSubscriber",
]

"""Reference implementations that conform to every rule: the kit's own known-good targets.

Publishers over iterables (synchronous, executor-driven, asyncio-driven, and always
failing), subscribers with subscriber-controlled demand, and a mapping processor.
"""

from __future__ import annotations

from .processors import MapProcessor
from .publishers import AsyncioPublisher, ExecutorPublisher, FailedPublisher, IterablePublisher
from .subscribers import BufferedSubscriber, SyncSubscriber

__all__ = [
    "AsyncioPublisher",
    "BufferedSubscriber",
    "ExecutorPublisher",
    "FailedPublisher",
    "IterablePublisher",
    "MapProcessor",
    "SyncSubscriber",
]

"""The Reactive Streams interfaces in Python (snake_case), as structural protocols.

Any object with these methods is a publisher, subscriber, subscription or processor;
nothing has to inherit from rstck. The Python profile maps the spec's JavaScript
errors: a None argument raises TypeError (1.9, 2.13), and request(n <= 0) signals
on_error with a ValueError where JavaScript uses RangeError (3.9).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")
R = TypeVar("R")

# 3.17: demand up to this value MUST be supported; at or beyond it a publisher MAY
# treat demand as unbounded.
MAX_DEMAND = 2**63 - 1


@runtime_checkable
class Subscription(Protocol):
    def request(self, n: int) -> None: ...
    def cancel(self) -> None: ...


@runtime_checkable
class Subscriber(Protocol[T]):
    def on_subscribe(self, subscription: Subscription) -> None: ...
    def on_next(self, item: T) -> None: ...
    def on_error(self, error: BaseException) -> None: ...
    def on_complete(self) -> None: ...


@runtime_checkable
class Publisher(Protocol[T]):
    def subscribe(self, subscriber: Subscriber[Any]) -> None: ...


@runtime_checkable
class Processor(Subscriber[T], Publisher[R], Protocol[T, R]):
    """Both a Subscriber and a Publisher; bound by both contracts (4.1)."""

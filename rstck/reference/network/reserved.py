"""Publishers for the reserved names every server under test serves (rstck/protocols/network/reserved.py).

Each name makes a fresh in-process publisher of bytes per subscribe. They are the reference iterable
publishers, so demand, 3.9, 3.17 and cancellation behave exactly as the core profile checks them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from rstck.api import Publisher
from rstck.protocols.network.reserved import (ERROR_MESSAGE, RANGE_ELEMENT_SIZE, blob_element, parse_reserved,
                                              range_element)
from rstck.reference.publishers import FailedPublisher, IterablePublisher


@dataclass(frozen=True)
class ReservedPublisher:
    """How to make one reserved publisher, and the element size its streams declare (0: any size)."""

    make: Callable[[], Publisher]
    element_size: int = 0
    held_bytes: int = 0  # what a stream of it holds from its subscribe on (a blob read ahead); 0: unknown


def reserved_publisher(name: str) -> ReservedPublisher | None:
    """The reserved publisher `name` names, or None: a name that is not reserved, or a malformed reserved one."""
    reserved = parse_reserved(name)
    if reserved is None:
        return None
    if reserved.kind == "empty":
        return ReservedPublisher(lambda: IterablePublisher(()))
    if reserved.kind == "error":
        return ReservedPublisher(lambda: FailedPublisher(lambda: RuntimeError(ERROR_MESSAGE)))
    if reserved.kind == "infinite":
        return ReservedPublisher(lambda: IterablePublisher(lambda: map(range_element, itertools.count())),
                                 RANGE_ELEMENT_SIZE)
    count, size = reserved.count, reserved.size
    if reserved.kind == "range":
        return ReservedPublisher(lambda: IterablePublisher(lambda: map(range_element, range(count))),
                                 RANGE_ELEMENT_SIZE)
    return ReservedPublisher(lambda: IterablePublisher(lambda: (blob_element(i, size) for i in range(count))),
                             held_bytes=size if count else 0)

"""The reserved publisher names every server under test serves (docs/wire-format.md, "Reserved publisher names").

Each name makes a fresh in-process publisher of bytes per subscribe. They are the reference iterable
publishers, so demand, 3.9, 3.17 and cancellation behave exactly as the core profile checks them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from ...api import MAX_DEMAND, Publisher
from ..publishers import FailedPublisher, IterablePublisher

RANGE_ELEMENT_SIZE = 8
# A blob element is built whole before it is sent, and the reference publishers read one element ahead, at the
# subscribe: this bounds what one subscribe can make the server allocate (the server bounds their sum).
MAX_BLOB_SIZE = 16 * 2**20
ERROR_MESSAGE = "rstck/error fails every subscription, as it is meant to"

_DECIMAL = r"[0-9]{1,19}"  # long enough for any int64, short enough that int() is cheap
_RANGE = re.compile(rf"rstck/range/({_DECIMAL})")
_BLOBS = re.compile(rf"rstck/blobs/({_DECIMAL})/({_DECIMAL})")
_BLOB_CYCLE = bytes(range(251))


def range_element(i: int) -> bytes:
    return i.to_bytes(RANGE_ELEMENT_SIZE, "big")


def blob_element(i: int, size: int) -> bytes:
    """Byte j is (i*31 + j) % 251: the pattern repeats every 251 bytes, so slice it from a repeated cycle."""
    start = i * 31 % 251
    repeats = (start + size) // len(_BLOB_CYCLE) + 1
    return (_BLOB_CYCLE * repeats)[start:start + size]


@dataclass(frozen=True)
class ReservedPublisher:
    """How to make one reserved publisher, and the element size its streams declare (0: any size)."""

    make: Callable[[], Publisher]
    element_size: int = 0
    held_bytes: int = 0  # what a stream of it holds from its subscribe on (a blob read ahead); 0: unknown


def reserved_publisher(name: str) -> ReservedPublisher | None:
    """The reserved publisher `name` names, or None: a name that is not reserved, or a malformed reserved one."""
    if name == "rstck/empty":
        return ReservedPublisher(lambda: IterablePublisher(()))
    if name == "rstck/error":
        return ReservedPublisher(lambda: FailedPublisher(lambda: RuntimeError(ERROR_MESSAGE)))
    if name == "rstck/infinite":
        return ReservedPublisher(lambda: IterablePublisher(lambda: map(range_element, itertools.count())),
                                 RANGE_ELEMENT_SIZE)
    if match := _RANGE.fullmatch(name):
        count = int(match[1])
        if count > MAX_DEMAND:
            return None
        return ReservedPublisher(lambda: IterablePublisher(lambda: map(range_element, range(count))),
                                 RANGE_ELEMENT_SIZE)
    if match := _BLOBS.fullmatch(name):
        count, size = int(match[1]), int(match[2])
        if count > MAX_DEMAND or size > MAX_BLOB_SIZE:
            return None
        return ReservedPublisher(lambda: IterablePublisher(lambda: (blob_element(i, size) for i in range(count))),
                                 held_bytes=size if count else 0)
    return None

"""The reserved publisher names every server under test serves (docs/wire-format.md, "Reserved publisher names"):
what each name means and what its elements are. The reference server makes publishers of them
(rstck/reference/network/reserved.py); the checks know from here what a stream of each must bring."""

from __future__ import annotations

import dataclasses
import re

RANGE_ELEMENT_SIZE = 8
# A blob element is built whole before it is sent, and the reference publishers read one element ahead, at the
# subscribe: this bounds what one subscribe can make the server allocate (the server bounds their sum).
MAX_BLOB_SIZE = 16 * 2**20
ERROR_MESSAGE = "rstck/error fails every subscription, as it is meant to"
MAX_COUNT = 2**63 - 1

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


@dataclasses.dataclass(frozen=True)
class ReservedName:
    """One reserved name, read: `kind` is empty, error, infinite, range or blobs; `count` elements (range, blobs)
    of `size` bytes (blobs)."""

    kind: str
    count: int = 0
    size: int = 0


def parse_reserved(name: str) -> ReservedName | None:
    """What the reserved name `name` means, or None: a name that is not reserved, or a malformed reserved one."""
    if name in ("rstck/empty", "rstck/error", "rstck/infinite"):
        return ReservedName(name.rsplit("/", 1)[1])
    if match := _RANGE.fullmatch(name):
        count = int(match[1])
        return ReservedName("range", count) if count <= MAX_COUNT else None
    if match := _BLOBS.fullmatch(name):
        count, size = int(match[1]), int(match[2])
        return ReservedName("blobs", count, size) if count <= MAX_COUNT and size <= MAX_BLOB_SIZE else None
    return None
